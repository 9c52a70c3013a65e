//! Whether this process runs under an emulator: a build for one architecture run on a CPU
//! of another (qemu-user, FEX, box64). Its timings are the emulator's translation of the
//! code, not this machine's (the book's methods, "The figures behind the rules").
//!
//! Two signs, either enough:
//! - the kernel's machine (`uname -m`) is not one this build runs on natively (an x86-64
//!   build on an aarch64 kernel, as FEX and box64 leave it);
//! - `/proc/cpuinfo` describes a CPU of another family than the build's. qemu-user makes
//!   `uname -m` agree with the build, but passes the host's `/proc/cpuinfo` through: an
//!   aarch64 build reads `vendor_id : AuthenticAMD`.

/// The family of an architecture: builds of one family run natively on its kernels (a
/// 32-bit build on a 64-bit kernel of the family too, never the other way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    X86,
    Arm,
    RiscV,
    Power,
    S390,
    LoongArch,
}

/// An architecture as Rust (`std::env::consts::ARCH`) or the kernel (`uname -m`) names
/// it: its family and whether it is 64-bit. `None` for a name not known here.
fn architecture(name: &str) -> Option<(Family, bool)> {
    Some(match name {
        "x86_64" | "amd64" => (Family::X86, true),
        "x86" | "i386" | "i486" | "i586" | "i686" => (Family::X86, false),
        "aarch64" | "arm64" | "aarch64_be" | "armv8b" | "armv8l" => {
            (Family::Arm, name.starts_with("aarch64") || name == "arm64")
        }
        name if name.starts_with("arm") => (Family::Arm, false),
        "riscv64" => (Family::RiscV, true),
        "riscv32" => (Family::RiscV, false),
        "powerpc64" | "ppc64" | "ppc64le" => (Family::Power, true),
        "powerpc" | "ppc" | "ppcle" => (Family::Power, false),
        "s390x" => (Family::S390, true),
        "loongarch64" => (Family::LoongArch, true),
        _ => return None,
    })
}

/// The CPU family `/proc/cpuinfo` describes, by the fields only it has; `None` when its
/// text says nothing this knows.
fn cpuinfo_family(cpuinfo: &str) -> Option<Family> {
    let has = |field: &str| {
        (cpuinfo.lines()).any(|line| {
            line.split(':')
                .next()
                .is_some_and(|key| key.trim() == field)
        })
    };
    if has("vendor_id") && has("flags") {
        Some(Family::X86)
    } else if has("CPU implementer") {
        Some(Family::Arm)
    } else if has("isa") && cpuinfo.contains("rv") {
        Some(Family::RiscV)
    } else {
        None
    }
}

/// Why a build for `build` (Rust's name) run on a kernel whose `uname -m` is `machine`,
/// with this `/proc/cpuinfo`, is emulated; `None` when nothing says it is.
pub(crate) fn judge(build: &str, machine: &str, cpuinfo: &str) -> Option<String> {
    let (family, wide) = architecture(build)?;
    if let Some((kernel_family, kernel_wide)) = architecture(machine)
        && (kernel_family != family || (wide && !kernel_wide))
    {
        return Some(format!(
            "this {build} build runs on a {machine} kernel (uname -m): an emulator \
             translates it"
        ));
    }
    let described = cpuinfo_family(cpuinfo)?;
    (described != family).then(|| {
        format!(
            "this {build} build runs on a CPU that /proc/cpuinfo describes as {}: an \
             emulator (such as qemu-user) translates it",
            match described {
                Family::X86 => "x86",
                Family::Arm => "Arm",
                Family::RiscV => "RISC-V",
                Family::Power => "POWER",
                Family::S390 => "s390",
                Family::LoongArch => "LoongArch",
            }
        )
    })
}

/// Why this process is emulated, read from this machine; `None` when nothing says it is.
#[cfg(unix)]
pub fn detect() -> Option<String> {
    let machine = crate::sys::system_name().machine;
    let cpuinfo = latlab_doors::input::system_text("/proc/cpuinfo").unwrap_or_default();
    judge(std::env::consts::ARCH, &machine, &cpuinfo).or_else(rosetta)
}

/// Windows tells a process the system's architecture in `PROCESSOR_ARCHITEW6432` (a 32-bit
/// process on a 64-bit system) or `PROCESSOR_ARCHITECTURE`. Windows on Arm tells an x86-64
/// process it emulates `AMD64`, so that emulation is not detected here.
#[cfg(not(unix))]
pub fn detect() -> Option<String> {
    let reported = std::env::var("PROCESSOR_ARCHITEW6432")
        .or_else(|_| std::env::var("PROCESSOR_ARCHITECTURE"))
        .ok()?;
    let machine = match reported.to_ascii_uppercase().as_str() {
        "AMD64" => "x86_64",
        "ARM64" => "aarch64",
        "X86" => "i686",
        _ => return None,
    };
    judge(std::env::consts::ARCH, machine, "")
}

/// macOS's Rosetta 2 translates x86-64 code on Apple silicon, and says so to the process
/// it translates in `sysctl.proc_translated`.
#[cfg(target_os = "macos")]
fn rosetta() -> Option<String> {
    let mut translated: libc::c_int = 0;
    let mut size = std::mem::size_of::<libc::c_int>();
    // SAFETY: the name is a zero-terminated string; `translated` and `size` are an int and
    // its size, which the call writes no further than; no new value is given.
    let read = unsafe {
        libc::sysctlbyname(
            c"sysctl.proc_translated".as_ptr(),
            (&raw mut translated).cast(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    (read == 0 && translated == 1)
        .then(|| "this x86_64 build runs under Rosetta 2, which translates it".to_string())
}

#[cfg(all(unix, not(target_os = "macos")))]
fn rosetta() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86_CPUINFO: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD \
                               EPYC\nflags\t\t: fpu vme de pse\n";
    const ARM_CPUINFO: &str = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU \
                               implementer\t: 0x41\nCPU part\t: 0xd0c\n";

    /// qemu-user: uname agrees with the build, /proc/cpuinfo is the host's.
    #[test]
    fn an_aarch64_build_on_an_x86_cpu_is_emulated() {
        let why = judge("aarch64", "aarch64", X86_CPUINFO).unwrap();
        assert!(why.contains("describes as x86"), "{why}");
        assert_eq!(judge("aarch64", "aarch64", ARM_CPUINFO), None);
    }

    /// FEX or box64: the kernel is another architecture's.
    #[test]
    fn an_x86_build_on_an_arm_kernel_is_emulated() {
        let why = judge("x86_64", "aarch64", ARM_CPUINFO).unwrap();
        assert!(why.contains("on a aarch64 kernel"), "{why}");
        assert_eq!(judge("x86_64", "x86_64", X86_CPUINFO), None);
    }

    /// 32-bit builds run natively on their family's 64-bit kernels; a 64-bit build on a
    /// 32-bit kernel cannot, and unknown names or an unreadable cpuinfo say nothing.
    #[test]
    fn compatible_builds_and_unknowns_are_native() {
        assert_eq!(judge("x86", "x86_64", X86_CPUINFO), None);
        assert_eq!(judge("arm", "aarch64", ARM_CPUINFO), None);
        assert!(judge("aarch64", "armv7l", ARM_CPUINFO).is_some());
        assert_eq!(judge("x86_64", "x86_64", ""), None);
        assert_eq!(judge("mips", "mips", X86_CPUINFO), None);
        assert_eq!(judge("x86_64", "sparc64", X86_CPUINFO), None);
    }
}
