//! What the GPU is: name, versions, SMs, clocks, memory and PCIe link, recorded in every
//! result of the GPU family so that a figure is never read without its device.
//!
//! The device's figures come from the driver's attributes; the driver's own version from
//! `/proc/driver/nvidia/version` and the PCIe link from the device's sysfs directory, which
//! the driver API does not report.

use latlab_engine::BenchResult;
use latlab_engine::parameters::Key;
use std::path::Path;

const GPU: Key = Key::new("gpu");

/// One GPU, as recorded with its results.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GpuInfo {
    pub name: String,
    /// `9.0` for Hopper.
    pub compute_capability: Option<String>,
    pub sm_count: Option<u32>,
    /// The SM clock the driver reports as the maximum, in MHz.
    pub sm_clock_max_mhz: Option<f64>,
    pub memory_clock_max_mhz: Option<f64>,
    pub memory_bus_bits: Option<u32>,
    pub memory_bytes: Option<u64>,
    pub l2_bytes: Option<u64>,
    /// The kernel module's version (`570.124.06`).
    pub driver_version: Option<String>,
    /// The CUDA version the driver implements (`12.8`).
    pub cuda_version: Option<String>,
    /// `domain:bus:device.function`, as sysfs names it.
    pub pci_address: Option<String>,
    pub pcie_link: Option<PcieLink>,
}

/// A PCIe link: what it runs at now and the most it can.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PcieLink {
    pub generation: Option<u8>,
    pub width: Option<u8>,
    pub max_generation: Option<u8>,
    pub max_width: Option<u8>,
}

impl PcieLink {
    /// `Gen5 x16 (of Gen5 x16)`.
    pub fn describe(&self) -> String {
        let part = |generation: Option<u8>, width: Option<u8>| {
            format!(
                "{} {}",
                generation.map_or("Gen?".to_string(), |g| format!("Gen{g}")),
                width.map_or("x?".to_string(), |w| format!("x{w}"))
            )
        };
        format!(
            "{} (of {})",
            part(self.generation, self.width),
            part(self.max_generation, self.max_width)
        )
    }

    /// Reads the link of the PCI device at `dir` (`/sys/bus/pci/devices/0000:17:00.0`).
    pub fn read(dir: &Path) -> Option<PcieLink> {
        let read = |name: &str| latlab_doors::input::system_text(dir.join(name));
        let link = PcieLink {
            generation: read("current_link_speed").and_then(|s| pcie_generation(&s)),
            width: read("current_link_width").and_then(|s| s.trim().parse().ok()),
            max_generation: read("max_link_speed").and_then(|s| pcie_generation(&s)),
            max_width: read("max_link_width").and_then(|s| s.trim().parse().ok()),
        };
        (link.generation.is_some() || link.width.is_some()).then_some(link)
    }
}

/// The PCIe generation of a sysfs link speed (`32.0 GT/s PCIe` is generation 5).
pub(crate) fn pcie_generation(speed: &str) -> Option<u8> {
    let rate: f64 = speed.split_whitespace().next()?.parse().ok()?;
    // Transfer rates per lane of generations 1 to 7.
    const RATES: [f64; 7] = [2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0];
    RATES
        .iter()
        .position(|&r| (rate - r).abs() < 0.01)
        .map(|i| i as u8 + 1)
}

/// The kernel module's version from `/proc/driver/nvidia/version`'s first line
/// (`NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Thu …`).
pub(crate) fn driver_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    line.split_whitespace()
        .find(|word| word.contains('.') && word.split('.').all(|part| part.parse::<u32>().is_ok()))
        .map(str::to_string)
}

/// The driver's CUDA version number (12080) as people write it (`12.8`).
pub(crate) fn cuda_version(encoded: i32) -> String {
    format!("{}.{}", encoded / 1000, (encoded % 1000) / 10)
}

/// The sysfs name of a PCI device (`0000:17:00.0`).
pub(crate) fn pci_address(domain: u32, bus: u32, device: u32) -> String {
    format!("{domain:04x}:{bus:02x}:{device:02x}.0")
}

impl GpuInfo {
    /// Adds the description to a result's parameters.
    pub fn describe(&self, mut result: BenchResult) -> BenchResult {
        result = result.with_parameter(GPU, self.name.as_str());
        let mut add = |key: &str, value: Option<latlab_engine::parameters::Value>| {
            if let Some(value) = value {
                result.parameters.insert(key.to_string(), value);
            }
        };
        add(
            "gpu_compute_capability",
            self.compute_capability.clone().map(Into::into),
        );
        add("gpu_sm_count", self.sm_count.map(Into::into));
        add(
            "gpu_sm_clock_max_mhz",
            self.sm_clock_max_mhz.map(Into::into),
        );
        add(
            "gpu_memory_clock_max_mhz",
            self.memory_clock_max_mhz.map(Into::into),
        );
        add("gpu_memory_bus_bits", self.memory_bus_bits.map(Into::into));
        add("gpu_memory_bytes", self.memory_bytes.map(Into::into));
        add("gpu_l2_bytes", self.l2_bytes.map(Into::into));
        add("gpu_driver", self.driver_version.clone().map(Into::into));
        add("gpu_cuda", self.cuda_version.clone().map(Into::into));
        add("gpu_pci_address", self.pci_address.clone().map(Into::into));
        add(
            "gpu_pcie_link",
            self.pcie_link.as_ref().map(|l| l.describe().into()),
        );
        result
    }
}

#[cfg(feature = "gpu")]
impl GpuInfo {
    /// Collects the description of `device`.
    pub fn collect(device: &super::driver::Device) -> GpuInfo {
        use cudarc::driver::sys::CUdevice_attribute as A;
        let attribute = |a: A| device.attribute(a).filter(|&v| v >= 0);
        let major = attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        let minor = attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        let pci_address = match (
            attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
            attribute(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
            attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
        ) {
            (Some(domain), Some(bus), Some(dev)) => {
                Some(pci_address(domain as u32, bus as u32, dev as u32))
            }
            _ => None,
        };
        let khz_to_mhz = |khz: i32| f64::from(khz) / 1000.0;
        GpuInfo {
            name: device
                .name()
                .unwrap_or_else(|e| format!("unnamed GPU ({e})")),
            compute_capability: major.zip(minor).map(|(a, b)| format!("{a}.{b}")),
            sm_count: attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map(|v| v as u32),
            sm_clock_max_mhz: attribute(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
                .filter(|&v| v > 0)
                .map(khz_to_mhz),
            memory_clock_max_mhz: attribute(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
                .filter(|&v| v > 0)
                .map(khz_to_mhz),
            memory_bus_bits: attribute(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
                .filter(|&v| v > 0)
                .map(|v| v as u32),
            memory_bytes: device.total_memory_bytes().ok(),
            l2_bytes: attribute(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
                .filter(|&v| v > 0)
                .map(|v| v as u64),
            driver_version: latlab_doors::input::system_text("/proc/driver/nvidia/version")
                .and_then(|text| driver_version(&text)),
            cuda_version: device.driver_cuda_version().ok().map(cuda_version),
            pcie_link: pci_address
                .as_ref()
                .and_then(|a| PcieLink::read(&Path::new("/sys/bus/pci/devices").join(a))),
            pci_address,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_name_their_generation() {
        assert_eq!(pcie_generation("32.0 GT/s PCIe\n"), Some(5));
        assert_eq!(pcie_generation("16.0 GT/s PCIe"), Some(4));
        assert_eq!(pcie_generation("2.5 GT/s"), Some(1));
        assert_eq!(pcie_generation("Unknown"), None);
        assert_eq!(pcie_generation("3.0 GT/s"), None);
    }

    #[test]
    fn a_pci_device_directory_gives_its_link() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("current_link_speed", "16.0 GT/s PCIe\n"),
            ("current_link_width", "8\n"),
            ("max_link_speed", "32.0 GT/s PCIe\n"),
            ("max_link_width", "16\n"),
        ] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let link = PcieLink::read(dir.path()).unwrap();
        assert_eq!(link.describe(), "Gen4 x8 (of Gen5 x16)");
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(PcieLink::read(empty.path()), None);
    }

    #[test]
    fn the_driver_version_is_read_from_either_module_banner() {
        let proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Thu Mar  6 \
                           20:51:32 UTC 2025\nGCC version:  gcc version 12.2.0\n";
        assert_eq!(driver_version(proprietary).as_deref(), Some("570.124.06"));
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release \
                    Build  (dvs-builder@U16-I3-B07-4-2)  Fri May 23 2025\n";
        assert_eq!(driver_version(open).as_deref(), Some("575.57.08"));
        assert_eq!(driver_version("garbage\n"), None);
    }

    #[test]
    fn versions_and_addresses_are_written_as_tools_write_them() {
        assert_eq!(cuda_version(12080), "12.8");
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(pci_address(0, 0x17, 0), "0000:17:00.0");
    }
}
