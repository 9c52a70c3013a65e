//! The memory modules the firmware describes (SMBIOS type 17, "Memory Device"), and the peak
//! bandwidth they could deliver at most.
//!
//! The table is read from /sys/firmware/dmi/tables/DMI (root only on most systems). VMs often
//! describe no speed at all; then the peak is unknown and callers say so.

use std::path::Path;

const DMI_TABLE: &str = "/sys/firmware/dmi/tables/DMI";
const MEMORY_DEVICE: u8 = 17;
const END_OF_TABLE: u8 = 127;

/// One installed memory module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryModule {
    /// DDR4, DDR5, LPDDR5 ... or `other (0xNN)`.
    pub memory_type: String,
    /// Bits of data per transfer, without ECC bits.
    pub data_width_bits: u16,
    /// Transfers per second in millions: the configured speed where given, else the rated one.
    pub speed_mts: u32,
}

/// The installed memory modules, or why they are not known.
pub fn memory_modules() -> Result<Vec<MemoryModule>, String> {
    let path = Path::new(DMI_TABLE);
    let table = latlab_doors::input::system_file(path)
        .map_err(|e| format!("cannot read {DMI_TABLE}: {e}"))?;
    parse_memory_devices(&table)
}

/// The most bytes per second the modules can transfer: each module's width times its speed,
/// summed, which assumes every module sits on a channel of its own (two modules sharing a
/// channel would halve it). `None` when no installed module states a width and a speed.
pub fn peak_bandwidth_bytes_per_s(modules: &[MemoryModule]) -> Option<f64> {
    let peak: f64 = modules
        .iter()
        .map(|m| f64::from(m.data_width_bits) / 8.0 * f64::from(m.speed_mts) * 1e6)
        .sum();
    (peak > 0.0).then_some(peak)
}

/// The installed memory devices of a raw SMBIOS structure table. Devices with no module
/// installed, or with unknown width or speed, are left out.
pub fn parse_memory_devices(table: &[u8]) -> Result<Vec<MemoryModule>, String> {
    let mut modules = Vec::new();
    let mut offset = 0;
    while offset + 4 <= table.len() {
        let kind = table[offset];
        let length = usize::from(table[offset + 1]);
        if length < 4 || offset + length > table.len() {
            return Err(format!(
                "malformed SMBIOS table: structure at byte {offset} claims {length} bytes"
            ));
        }
        if kind == END_OF_TABLE {
            return Ok(modules);
        }
        if kind == MEMORY_DEVICE {
            modules.extend(memory_device(&table[offset..offset + length]));
        }
        // The formatted area is followed by its strings, ended by two NUL bytes.
        let strings = offset + length;
        let end = table[strings..]
            .windows(2)
            .position(|w| w == [0, 0])
            .ok_or_else(|| {
                format!("malformed SMBIOS table: strings at byte {strings} never end")
            })?;
        offset = strings + end + 2;
    }
    Ok(modules)
}

/// One type-17 structure's formatted area; `None` when no module is installed or its width or
/// speed is unknown.
fn memory_device(area: &[u8]) -> Option<MemoryModule> {
    let u16_at = |at: usize| {
        area.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        area.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let size = u16_at(0x0C)?;
    if size == 0 || size == 0xFFFF {
        return None;
    }
    let data_width_bits = u16_at(0x0A).filter(|&w| w != 0 && w != 0xFFFF)?;
    let speed = |short: usize, extended: usize| match u16_at(short) {
        Some(0xFFFF) => u32_at(extended).filter(|&s| s != 0),
        Some(0) | None => None,
        Some(s) => Some(u32::from(s)),
    };
    let speed_mts = speed(0x20, 0x58).or_else(|| speed(0x15, 0x54))?;
    Some(MemoryModule {
        memory_type: memory_type_name(*area.get(0x12)?),
        data_width_bits,
        speed_mts,
    })
}

fn memory_type_name(code: u8) -> String {
    match code {
        0x12 => "DDR".into(),
        0x13 => "DDR2".into(),
        0x18 => "DDR3".into(),
        0x1A => "DDR4".into(),
        0x1B => "LPDDR".into(),
        0x1C => "LPDDR2".into(),
        0x1D => "LPDDR3".into(),
        0x1E => "LPDDR4".into(),
        0x20 => "HBM".into(),
        0x21 => "HBM2".into(),
        0x22 => "DDR5".into(),
        0x23 => "LPDDR5".into(),
        0x24 => "HBM3".into(),
        other => format!("other (0x{other:02X})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A type-17 structure: `size` in MB, DDR5, 64 data bits, rated and configured speeds.
    fn memory_device(size: u16, rated: u16, configured: u16) -> Vec<u8> {
        let mut area = vec![0u8; 0x28];
        area[0] = MEMORY_DEVICE;
        area[1] = area.len() as u8;
        area[0x08..0x0A].copy_from_slice(&72u16.to_le_bytes());
        area[0x0A..0x0C].copy_from_slice(&64u16.to_le_bytes());
        area[0x0C..0x0E].copy_from_slice(&size.to_le_bytes());
        area[0x10] = 1; // device locator: string 1
        area[0x12] = 0x22;
        area[0x15..0x17].copy_from_slice(&rated.to_le_bytes());
        area[0x20..0x22].copy_from_slice(&configured.to_le_bytes());
        area.extend_from_slice(b"DIMM A1\0\0");
        area
    }

    fn end_of_table() -> Vec<u8> {
        vec![END_OF_TABLE, 4, 0, 0, 0, 0]
    }

    #[test]
    fn reads_installed_modules_and_their_peak() {
        let mut table = Vec::new();
        // A BIOS structure (type 0) with no strings, to be skipped.
        table.extend_from_slice(&[0, 4, 0, 0, 0, 0]);
        table.extend(memory_device(16384, 5600, 4800));
        table.extend(memory_device(0, 0, 0)); // an empty slot
        table.extend(memory_device(16384, 5600, 0)); // no configured speed: the rated one
        table.extend(end_of_table());
        let modules = parse_memory_devices(&table).unwrap();
        assert_eq!(modules.len(), 2);
        assert_eq!(modules[0].memory_type, "DDR5");
        assert_eq!(modules[0].speed_mts, 4800);
        assert_eq!(modules[1].speed_mts, 5600);
        let peak = peak_bandwidth_bytes_per_s(&modules).unwrap();
        assert_eq!(peak, 8.0 * 4800e6 + 8.0 * 5600e6);
    }

    #[test]
    fn modules_without_speed_give_no_peak() {
        let mut table = memory_device(16384, 0, 0);
        table.extend(end_of_table());
        let modules = parse_memory_devices(&table).unwrap();
        assert!(modules.is_empty());
        assert_eq!(peak_bandwidth_bytes_per_s(&modules), None);
    }

    #[test]
    fn malformed_tables_are_refused() {
        let mut truncated = memory_device(16384, 5600, 4800);
        truncated.truncate(20);
        assert!(parse_memory_devices(&truncated).is_err());
        let mut unterminated = memory_device(16384, 5600, 4800);
        unterminated.truncate(0x28 + 3);
        assert!(parse_memory_devices(&unterminated).is_err());
        assert!(parse_memory_devices(&[MEMORY_DEVICE, 2, 0, 0]).is_err());
    }
}
