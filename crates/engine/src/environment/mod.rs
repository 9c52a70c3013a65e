//! The machine a run happened on: a result without its context is not a result.
//!
//! Everything is read from places an unprivileged process can read (/proc, sysfs, CPUID,
//! `uname`, `getrlimit`), and every field is optional where the source can be missing, so that
//! a VM or container that hides something yields "unknown", not a failure.

mod caches;
mod cgroup;
mod cores;
mod cpu;
pub mod emulation;
mod memory_modules;
mod nodes;
mod privileges;
mod sysfs;

pub use caches::{
    CLAIM_LAST_CACHE_VARIABLE, CacheInfo, claimed_last_cache, claimed_last_cache_bytes,
    data_cache_sizes,
};
pub(crate) use cores::core_classes;
pub use cores::{CoreClass, cpu_ranges, describe_core_class, describe_core_classes, name_class_of};
pub use cpu::CpuInfo;
pub(crate) use memory_modules::memory_modules;
pub use memory_modules::{MemoryModule, parse_memory_devices, peak_bandwidth_bytes_per_s};
pub(crate) use nodes::memory_nodes;
pub use nodes::{MemoryNode, describe_memory_nodes};
pub use privileges::{PerfCounters, Privileges};
pub use sysfs::{kib_field, parse_cpu_list};

/// The machine, its kernel and the build that measured it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Environment {
    pub host_name: String,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpu: CpuInfo,
    /// The caches of CPU 0, as the kernel reports them.
    pub caches: Vec<CacheInfo>,
    /// The online CPUs grouped by what the kernel says of them (capacity, hybrid core type,
    /// maximum frequency); one class on a homogeneous machine.
    #[cfg_attr(feature = "serde", serde(default))]
    pub core_classes: Vec<CoreClass>,
    /// The memory nodes (NUMA nodes), each with its CPUs and memory; one on most
    /// single-socket machines, none where the kernel does not say.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub memory_nodes: Vec<MemoryNode>,
    /// The hypervisor, when the CPU says it runs under one.
    pub virtualization: Option<String>,
    /// Why the run is emulated (a build for another architecture, translated by qemu-user
    /// or the like), when it is: its timings are then the emulator's, not this machine's.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub emulated: Option<String>,
    /// The kernel's clock source (`tsc`, `kvm-clock`, `hpet`...).
    pub clocksource: Option<String>,
    /// Transparent huge pages mode: `always`, `madvise` or `never`.
    pub transparent_hugepages: Option<String>,
    pub privileges: Privileges,
    /// Whether perf counters can be opened, found by opening them ([`crate::Host`]'s
    /// `perf_counters`);
    /// absent until a run has measured, since opening a counter of a task switches on the
    /// kernel's context-switch hooks for every task of the machine for the next second
    /// (measured in the book's methods, "Threads and processes"): a run probes them after
    /// its units.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub perf_counters: Option<PerfCounters>,
    /// Load average over 1, 5 and 15 minutes when the run started.
    pub load_avg: Option<[f64; 3]>,
    /// The CPU time the control groups allow this process, in CPUs' worth (`cpu.max` 10000
    /// 100000 is 0.1); absent when no quota applies.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub cpu_quota: Option<f64>,
    /// The CPUs the process was allowed when the run began (`taskset`, a cgroup's
    /// cpuset), before `--pin`: an unpinned figure measured on one CPU is not one measured
    /// across two. Absent in runs of versions that did not record it.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub allowed_cpus: Option<Vec<usize>>,
    /// `release` when the measuring code was optimised, else `debug`.
    pub build_profile: String,
    /// The optimisation level the measuring code was compiled at.
    pub opt_level: String,
    pub latlab_version: String,
}

impl Environment {
    /// Reads the environment of this machine now, all but the perf counters (see
    /// [`Environment::perf_counters`]).
    pub fn collect() -> Environment {
        let uname = sysfs::uname();
        Environment {
            host_name: uname.node_name,
            os: uname.system,
            kernel: format!("{} {}", uname.release, uname.version),
            arch: std::env::consts::ARCH.to_string(),
            cpu: CpuInfo::collect(),
            caches: cache_hierarchy(),
            core_classes: core_classes(),
            memory_nodes: memory_nodes(),
            virtualization: cpu::hypervisor(),
            emulated: emulation::detect(),
            clocksource: clocksource(),
            transparent_hugepages: sysfs::read_trimmed(
                "/sys/kernel/mm/transparent_hugepage/enabled",
            )
            .and_then(|modes| sysfs::bracketed_choice(&modes)),
            privileges: Privileges::collect(),
            perf_counters: None,
            load_avg: load_average(),
            cpu_quota: cgroup::cpu_quota(),
            allowed_cpus: Some(crate::isolation::allowed_cpus()),
            build_profile: build_profile().to_string(),
            opt_level: env!("LATLAB_OPT_LEVEL").to_string(),
            latlab_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// The synthetic host's environment: fixed, identical on every machine.
    pub fn synthetic() -> Environment {
        Environment {
            host_name: "test-host".into(),
            os: "Linux".into(),
            kernel: "6.0.0 synthetic".into(),
            arch: "x86_64".into(),
            cpu: CpuInfo {
                model: "Synthetic CPU".into(),
                logical_cpus: 4,
                physical_cores: Some(4),
                smt_active: Some(false),
                mhz: Some(3000.0),
                max_mhz: None,
                governor: Some("performance".into()),
                microcode: None,
            },
            caches: vec![
                CacheInfo::synthetic(1, "Data", 32 * 1024, 1),
                CacheInfo::synthetic(2, "Unified", 1024 * 1024, 1),
                CacheInfo::synthetic(3, "Unified", 32 * 1024 * 1024, 4),
            ],
            core_classes: vec![CoreClass {
                cpus: vec![0, 1, 2, 3],
                core_type: None,
                capacity: None,
                max_frequency_khz: Some(3_000_000),
            }],
            memory_nodes: vec![MemoryNode {
                node: 0,
                cpus: vec![0, 1, 2, 3],
                memory_bytes: Some(16 << 30),
            }],
            virtualization: None,
            emulated: None,
            clocksource: Some("tsc".into()),
            transparent_hugepages: Some("madvise".into()),
            privileges: Privileges::synthetic(),
            perf_counters: None,
            load_avg: Some([0.0, 0.0, 0.0]),
            cpu_quota: None,
            allowed_cpus: None,
            build_profile: "release".into(),
            opt_level: "3".into(),
            latlab_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// What about this environment makes figures less trustworthy, as facts; the front
    /// ends phrase them with what to do.
    pub fn concerns(&self) -> Vec<Concern> {
        let mut concerns = Vec::new();
        if let Some(why) = &self.emulated {
            concerns.push(Concern::Emulated { why: why.clone() });
        }
        if self.build_profile != "release" {
            concerns.push(Concern::DebugBuild);
        }
        if let Some(governor) = self.cpu.governor.as_deref().filter(|g| *g != "performance") {
            concerns.push(Concern::Governor {
                governor: governor.to_string(),
            });
        }
        if let Some(hypervisor) = &self.virtualization {
            concerns.push(Concern::Virtualised {
                hypervisor: hypervisor.clone(),
            });
        }
        if let Some(quota) = self.cpu_quota.filter(|&q| q < self.cpu.logical_cpus as f64) {
            concerns.push(Concern::CpuQuota {
                cpus: quota,
                of: self.cpu.logical_cpus,
            });
        }
        if let Some([one_minute, ..]) = self.load_avg
            && one_minute > 0.5 * self.cpu.logical_cpus as f64
        {
            concerns.push(Concern::Loaded {
                load_average: one_minute,
                cpus: self.cpu.logical_cpus,
            });
        }
        concerns
    }
}

/// Something about the machine that makes its figures less trustworthy.
#[derive(Debug, Clone, PartialEq)]
pub enum Concern {
    /// The run is emulated, and why it is known to be.
    Emulated { why: String },
    /// The measuring code was not optimised.
    DebugBuild,
    /// The frequency governor is not `performance`.
    Governor { governor: String },
    /// A hypervisor runs beneath.
    Virtualised { hypervisor: String },
    /// The one-minute load average was above half the CPUs at the start.
    Loaded { load_average: f64, cpus: usize },
    /// A control group's CPU quota allows less than every CPU (`cpus` CPUs' worth of `of`).
    CpuQuota { cpus: f64, of: usize },
}

/// The kernel's clock source (`tsc`, `kvm-clock`, `hpet` …).
pub(crate) fn clocksource() -> Option<String> {
    sysfs::read_trimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource")
}

/// The cache hierarchy of CPU 0 as the kernel reports it, smallest level first.
pub(crate) fn cache_hierarchy() -> Vec<CacheInfo> {
    caches::collect()
}

/// The CPUs the kernel has online (all of them, whatever this process's affinity); empty
/// when sysfs does not say.
pub(crate) fn online_cpus() -> Vec<usize> {
    sysfs::read_trimmed("/sys/devices/system/cpu/online")
        .and_then(|list| parse_cpu_list(&list))
        .unwrap_or_default()
}

/// The hardware threads that share `cpu`'s core (itself included); empty when sysfs does
/// not say.
pub(crate) fn thread_siblings(cpu: usize) -> Vec<usize> {
    sysfs::read_trimmed(format!(
        "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
    ))
    .and_then(|list| parse_cpu_list(&list))
    .unwrap_or_default()
}

/// Memory available for new allocations: the machine's (`MemAvailable` in /proc/meminfo,
/// what can be had without swapping), what this process's memory control groups still
/// allow, or what its address-space limit still allows it to map, whichever is least.
pub(crate) fn available_memory_bytes() -> Option<u64> {
    let machine = kib_field(
        &latlab_doors::input::system_text("/proc/meminfo")?,
        "MemAvailable",
    );
    [
        machine,
        cgroup::memory_headroom_bytes(),
        address_space_headroom_bytes(),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// What the address-space limit (`ulimit -v`, RLIMIT_AS) still allows this process to map:
/// the limit less what it has mapped now; `None` when there is no limit.
#[cfg(unix)]
fn address_space_headroom_bytes() -> Option<u64> {
    let limit = crate::sys::address_space_limit()?.soft?;
    let mapped = kib_field(
        &latlab_doors::input::system_text("/proc/self/status")?,
        "VmSize",
    )?;
    Some(limit.saturating_sub(mapped))
}

/// Windows has no address-space limit of that kind.
#[cfg(not(unix))]
fn address_space_headroom_bytes() -> Option<u64> {
    None
}

/// The load average over 1, 5 and 15 minutes, as the kernel writes it in /proc/loadavg
/// (and `uptime` prints it).
pub(crate) fn load_average() -> Option<[f64; 3]> {
    parse_load_average(&latlab_doors::input::system_text("/proc/loadavg")?)
}

/// The three loads of /proc/loadavg's text (`0.52 0.58 0.59 1/467 12345`).
fn parse_load_average(text: &str) -> Option<[f64; 3]> {
    let mut fields = text
        .split_whitespace()
        .map(|field| field.parse::<f64>().ok());
    let mut next = || {
        fields
            .next()
            .flatten()
            .filter(|load| load.is_finite() && *load >= 0.0)
    };
    Some([next()?, next()?, next()?])
}

fn build_profile() -> &'static str {
    if env!("LATLAB_OPT_LEVEL") == "0" {
        "debug"
    } else {
        "release"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's text reads as the three loads; anything else is none.
    #[test]
    fn the_load_average_is_read_from_the_kernels_text() {
        assert_eq!(
            parse_load_average("0.52 0.58 1.50 1/467 12345\n"),
            Some([0.52, 0.58, 1.5])
        );
        assert_eq!(parse_load_average("0.52 0.58"), None);
        assert_eq!(parse_load_average("0.52 x 0.1 1/2 3"), None);
        assert_eq!(parse_load_average("0.5 -1 0.1 1/2 3"), None);
        assert!(load_average().is_some(), "Linux has /proc/loadavg");
    }

    #[test]
    fn available_memory_is_plausible() {
        let available = available_memory_bytes().expect("Linux reports MemAvailable");
        assert!(available > 16 << 20, "{available}");
    }

    #[test]
    fn this_machine_has_a_cpu_and_a_kernel() {
        let env = Environment::collect();
        assert!(env.cpu.logical_cpus >= 1);
        assert!(!env.kernel.trim().is_empty());
        assert_eq!(env.build_profile, build_profile());
    }

    #[test]
    fn a_debug_build_is_called_out() {
        let mut env = Environment::synthetic();
        assert!(env.concerns().is_empty(), "{:?}", env.concerns());
        env.build_profile = "debug".into();
        env.cpu.governor = Some("powersave".into());
        let concerns = env.concerns();
        assert!(concerns.contains(&Concern::DebugBuild));
        assert!(concerns.contains(&Concern::Governor {
            governor: "powersave".into()
        }));
    }
}
