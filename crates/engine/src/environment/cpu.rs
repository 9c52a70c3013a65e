//! The processor: model, core counts, SMT, frequency and its governor, microcode, and the
//! hypervisor.

use super::sysfs::read_trimmed;
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CpuInfo {
    pub model: String,
    /// Online logical CPUs.
    pub logical_cpus: usize,
    /// Distinct (package, core) pairs among the online CPUs.
    pub physical_cores: Option<usize>,
    /// Whether simultaneous multithreading is active.
    pub smt_active: Option<bool>,
    /// The frequency /proc/cpuinfo reports for CPU 0 now.
    pub mhz: Option<f64>,
    /// The highest frequency cpufreq allows CPU 0.
    pub max_mhz: Option<f64>,
    /// The cpufreq governor of CPU 0; absent when the kernel exposes no cpufreq (often a VM).
    pub governor: Option<String>,
    /// The microcode revision of CPU 0 as /proc/cpuinfo gives it (`0x2b000603`); absent
    /// where the system does not say (most ARM kernels, macOS, Windows) and in files written
    /// before it was recorded.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub microcode: Option<String>,
}

impl CpuInfo {
    pub(crate) fn collect() -> CpuInfo {
        let cpuinfo = latlab_doors::input::system_text("/proc/cpuinfo").unwrap_or_default();
        let online = super::online_cpus();
        let logical_cpus = if online.is_empty() {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            online.len()
        };
        let physical_cores = physical_cores(&online);
        let smt_active = read_trimmed("/sys/devices/system/cpu/smt/active")
            .map(|s| s == "1")
            .or_else(|| physical_cores.map(|cores| cores < logical_cpus));
        CpuInfo {
            model: cpuinfo_field(&cpuinfo, "model name")
                .or_else(|| cpuinfo_field(&cpuinfo, "Hardware"))
                .or_else(brand_string)
                .unwrap_or_else(|| format!("unknown {} CPU", std::env::consts::ARCH)),
            logical_cpus,
            physical_cores,
            smt_active,
            mhz: cpuinfo_field(&cpuinfo, "cpu MHz").and_then(|s| s.parse().ok()),
            max_mhz: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
                .and_then(|khz| khz.parse::<f64>().ok())
                .map(|khz| khz / 1000.0),
            governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            microcode: cpuinfo_field(&cpuinfo, "microcode"),
        }
    }
}

/// The processor's name for itself, asked of the processor or the system where there is no
/// /proc/cpuinfo (Windows, macOS): on x86-64 the brand string of CPUID leaves
/// 0x8000_0002-0x8000_0004 (what Linux's "model name" is read from), on macOS sysctl's
/// `machdep.cpu.brand_string` (the name Apple silicon gives, "Apple M2").
fn brand_string() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        if __cpuid(0x8000_0000).eax < 0x8000_0004 {
            return None;
        }
        let mut bytes = Vec::with_capacity(48);
        for leaf in 0x8000_0002..=0x8000_0004 {
            let registers = __cpuid(leaf);
            for register in [registers.eax, registers.ebx, registers.ecx, registers.edx] {
                bytes.extend_from_slice(&register.to_le_bytes());
            }
        }
        named(&bytes)
    }
    #[cfg(all(target_os = "macos", not(target_arch = "x86_64")))]
    {
        let mut bytes = [0u8; 128];
        let mut size = bytes.len();
        // SAFETY: the name is a zero-terminated string; the call writes at most `size`
        // bytes into `bytes` and the length it wrote into `size`; no new value is given.
        let read = unsafe {
            libc::sysctlbyname(
                c"machdep.cpu.brand_string".as_ptr(),
                bytes.as_mut_ptr().cast(),
                &mut size,
                std::ptr::null_mut(),
                0,
            )
        };
        if read != 0 {
            return None;
        }
        named(&bytes[..size.min(bytes.len())])
    }
    #[cfg(not(any(target_arch = "x86_64", target_os = "macos")))]
    {
        None
    }
}

/// A name from its zero-padded bytes, trimmed; `None` when nothing is left.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_os = "macos")),
    allow(dead_code)
)]
fn named(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let name = text.trim_matches(char::from(0)).trim();
    (!name.is_empty()).then(|| name.to_string())
}

fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == key).then(|| value.trim().to_string())
    })
}

fn physical_cores(online: &[usize]) -> Option<usize> {
    let cores: BTreeSet<(String, String)> = online
        .iter()
        .filter_map(|cpu| {
            let topology = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
            Some((
                read_trimmed(format!("{topology}/physical_package_id"))?,
                read_trimmed(format!("{topology}/core_id"))?,
            ))
        })
        .collect();
    (!cores.is_empty()).then_some(cores.len())
}

/// The hypervisor's name when the CPU reports running under one.
pub(crate) fn hypervisor() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // Leaf 1 always exists; the hypervisor leaf is defined whenever leaf 1 sets the
        // hypervisor bit.
        let present = __cpuid(1).ecx & (1 << 31) != 0;
        if !present {
            return None;
        }
        let leaf = __cpuid(0x4000_0000);
        let mut signature = Vec::with_capacity(12);
        for register in [leaf.ebx, leaf.ecx, leaf.edx] {
            signature.extend_from_slice(&register.to_le_bytes());
        }
        let signature = String::from_utf8_lossy(&signature)
            .trim_matches(char::from(0))
            .trim()
            .to_string();
        Some(hypervisor_name(&signature))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        read_trimmed("/sys/hypervisor/type")
    }
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn hypervisor_name(signature: &str) -> String {
    match signature {
        "KVMKVMKVM" => "KVM",
        "Microsoft Hv" => "Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU (TCG emulation)",
        "VBoxVBoxVBox" => "VirtualBox",
        "bhyve bhyve" => "bhyve",
        "ACRNACRNACRN" => "ACRN",
        "" => "an unnamed hypervisor",
        other => other,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_fields_are_found_by_exact_key() {
        let text = "processor\t: 0\nmodel name\t: Some CPU @ 2.0GHz\nmicrocode\t: 0x2b000603\n\
                    cpu MHz\t\t: 1999.9\n";
        assert_eq!(
            cpuinfo_field(text, "model name").as_deref(),
            Some("Some CPU @ 2.0GHz")
        );
        assert_eq!(cpuinfo_field(text, "cpu MHz").as_deref(), Some("1999.9"));
        assert_eq!(cpuinfo_field(text, "model"), None);
        assert_eq!(
            cpuinfo_field(text, "microcode").as_deref(),
            Some("0x2b000603")
        );
    }

    /// Where Linux gives a model name, the processor's own brand string agrees with it: the
    /// name Windows and macOS runs show comes from the same source.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_brand_string_is_the_model_name_linux_gives() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let (Some(linux), Some(brand)) = (cpuinfo_field(&cpuinfo, "model name"), brand_string())
        else {
            return; // No /proc, or a processor without a brand string.
        };
        assert_eq!(brand, linux);
    }

    #[test]
    fn a_padded_name_is_trimmed_and_an_empty_one_is_none() {
        assert_eq!(
            named(b"  Intel(R) Xeon(R) CPU\0\0\0").as_deref(),
            Some("Intel(R) Xeon(R) CPU")
        );
        assert_eq!(named(b"\0\0 \0"), None);
    }

    #[test]
    fn hypervisor_signatures_have_names() {
        assert_eq!(hypervisor_name("KVMKVMKVM"), "KVM");
        assert_eq!(hypervisor_name("SomethingNew"), "SomethingNew");
    }
}
