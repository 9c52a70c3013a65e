//! Heterogeneous cores: which CPUs are alike, from what the kernel says of each.
//!
//! Three sources, each optional: the scheduler's capacity of each CPU
//! (`/sys/devices/system/cpu/cpuN/cpu_capacity`, on Arm big.LITTLE and similar), the core
//! type of x86 hybrid parts (`/sys/devices/cpu_core/cpus` and `/sys/devices/cpu_atom/cpus`),
//! and each CPU's maximum frequency (`cpufreq/cpuinfo_max_freq`). CPUs that agree on all
//! three form one class; one class means the machine is homogeneous as far as the kernel
//! can tell.

use super::sysfs::{parse_cpu_list, read_trimmed};

/// CPUs that the kernel describes alike.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CoreClass {
    pub cpus: Vec<usize>,
    /// `performance` or `efficiency` on x86 hybrid parts.
    pub core_type: Option<String>,
    /// The scheduler's capacity (1024 for the biggest core).
    pub capacity: Option<u64>,
    pub max_frequency_khz: Option<u64>,
}

/// What the kernel says of one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CpuDescription {
    pub cpu: usize,
    pub core_type: Option<String>,
    pub capacity: Option<u64>,
    pub max_frequency_khz: Option<u64>,
}

/// The classes of this machine's online CPUs, biggest first.
pub(crate) fn core_classes() -> Vec<CoreClass> {
    let performance = read_trimmed("/sys/devices/cpu_core/cpus").and_then(|l| parse_cpu_list(&l));
    let efficiency = read_trimmed("/sys/devices/cpu_atom/cpus").and_then(|l| parse_cpu_list(&l));
    let described = super::online_cpus()
        .into_iter()
        .map(|cpu| {
            let number = |name: &str| {
                read_trimmed(format!("/sys/devices/system/cpu/cpu{cpu}/{name}"))
                    .and_then(|v| v.parse().ok())
            };
            let core_type = if performance.as_ref().is_some_and(|l| l.contains(&cpu)) {
                Some("performance".to_string())
            } else if efficiency.as_ref().is_some_and(|l| l.contains(&cpu)) {
                Some("efficiency".to_string())
            } else {
                None
            };
            CpuDescription {
                cpu,
                core_type,
                capacity: number("cpu_capacity"),
                max_frequency_khz: number("cpufreq/cpuinfo_max_freq"),
            }
        })
        .collect();
    group(described)
}

/// Groups CPUs that agree on type, capacity and maximum frequency; the biggest class
/// (capacity, then frequency) first.
pub(crate) fn group(cpus: Vec<CpuDescription>) -> Vec<CoreClass> {
    let mut classes: Vec<CoreClass> = Vec::new();
    for cpu in cpus {
        match classes.iter_mut().find(|c| {
            c.core_type == cpu.core_type
                && c.capacity == cpu.capacity
                && c.max_frequency_khz == cpu.max_frequency_khz
        }) {
            Some(class) => class.cpus.push(cpu.cpu),
            None => classes.push(CoreClass {
                cpus: vec![cpu.cpu],
                core_type: cpu.core_type,
                capacity: cpu.capacity,
                max_frequency_khz: cpu.max_frequency_khz,
            }),
        }
    }
    classes.sort_by_key(|c| std::cmp::Reverse((c.capacity, c.max_frequency_khz)));
    classes
}

/// One class: `CPUs 4-7, efficiency, capacity 446, max 1.80 GHz`.
pub fn describe_core_class(class: &CoreClass) -> String {
    let mut parts = vec![format!("CPUs {}", cpu_ranges(&class.cpus))];
    if let Some(kind) = &class.core_type {
        parts.push(kind.clone());
    }
    if let Some(capacity) = class.capacity {
        parts.push(format!("capacity {capacity}"));
    }
    if let Some(khz) = class.max_frequency_khz {
        parts.push(format!("max {:.2} GHz", khz as f64 / 1e6));
    }
    parts.join(", ")
}

/// Where the machine has cores of more than one class, the class `cpu` belongs to, named
/// with its rank (`class 2 of 2 (the smallest): CPUs 4-7, capacity 446`); `None` on a
/// machine of one class, or for a CPU no class lists.
pub fn name_class_of(classes: &[CoreClass], cpu: usize) -> Option<String> {
    if classes.len() < 2 {
        return None;
    }
    let rank = classes.iter().position(|c| c.cpus.contains(&cpu))?;
    let size = match rank {
        0 => " (the biggest)",
        r if r + 1 == classes.len() => " (the smallest)",
        _ => "",
    };
    Some(format!(
        "class {} of {}{size}: {}",
        rank + 1,
        classes.len(),
        describe_core_class(&classes[rank])
    ))
}

/// One line: `homogeneous: CPUs 0-7, max 3.20 GHz` or the classes.
pub fn describe_core_classes(classes: &[CoreClass]) -> String {
    let one = describe_core_class;
    match classes {
        [] => "unknown (sysfs lists no online CPU)".into(),
        [only] => format!("homogeneous: {}", one(only)),
        many => format!(
            "{} classes: {}",
            many.len(),
            many.iter().map(one).collect::<Vec<_>>().join("; ")
        ),
    }
}

/// `0-3,8,10-11` from a sorted list.
pub fn cpu_ranges(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(
        cpu: usize,
        kind: Option<&str>,
        capacity: Option<u64>,
        khz: Option<u64>,
    ) -> CpuDescription {
        CpuDescription {
            cpu,
            core_type: kind.map(str::to_string),
            capacity,
            max_frequency_khz: khz,
        }
    }

    #[test]
    fn alike_cpus_form_one_class() {
        let classes = group(
            (0..4)
                .map(|c| cpu(c, None, None, Some(3_200_000)))
                .collect(),
        );
        assert_eq!(classes.len(), 1);
        assert_eq!(
            describe_core_classes(&classes),
            "homogeneous: CPUs 0-3, max 3.20 GHz"
        );
    }

    #[test]
    fn big_and_little_cores_are_told_apart_biggest_first() {
        let classes = group(vec![
            cpu(0, None, Some(446), Some(1_800_000)),
            cpu(1, None, Some(446), Some(1_800_000)),
            cpu(2, None, Some(1024), Some(2_800_000)),
            cpu(3, None, Some(1024), Some(2_800_000)),
        ]);
        assert_eq!(classes.len(), 2);
        assert_eq!(classes[0].cpus, [2, 3]);
        assert_eq!(classes[1].capacity, Some(446));
        assert_eq!(
            name_class_of(&classes, 1).as_deref(),
            Some("class 2 of 2 (the smallest): CPUs 0-1, capacity 446, max 1.80 GHz")
        );
        assert_eq!(
            name_class_of(&classes, 3).as_deref(),
            Some("class 1 of 2 (the biggest): CPUs 2-3, capacity 1024, max 2.80 GHz")
        );
        assert_eq!(
            name_class_of(&classes[..1], 3),
            None,
            "one class names none"
        );
        let hybrid = group(vec![
            cpu(0, Some("performance"), None, Some(5_000_000)),
            cpu(8, Some("efficiency"), None, Some(3_800_000)),
            cpu(9, Some("efficiency"), None, Some(3_800_000)),
        ]);
        assert_eq!(
            describe_core_classes(&hybrid),
            "2 classes: CPUs 0, performance, max 5.00 GHz; CPUs 8-9, efficiency, max 3.80 GHz"
        );
    }
}
