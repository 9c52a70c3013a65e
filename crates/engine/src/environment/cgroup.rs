//! What a container lets this process use. Memory: control groups limit it below what the
//! machine has free, and a process that allocates past the limit is killed without a word
//! (the OOM killer), so every large allocation is sized against the lesser of the two. CPU
//! time: a quota (`cpu.max`) stops the whole group for the rest of a period once it is used
//! up, which no other program on the machine explains.

use std::path::{Path, PathBuf};

/// v1 writes "no limit" as a page-rounded `i64::MAX`; anything this large is none.
const UNLIMITED: u64 = 1 << 60;

/// The memory this process's control groups still allow: over its cgroup and each
/// ancestor that has a limit, the least of the limit less the usage, in v2 (`memory.max`,
/// `memory.current`) and v1 (`memory.limit_in_bytes`, `memory.usage_in_bytes`). `None`
/// where no limit applies or the files cannot be read.
pub(crate) fn memory_headroom_bytes() -> Option<u64> {
    let mountinfo = latlab_doors::input::system_text("/proc/self/mountinfo")?;
    let membership = latlab_doors::input::system_text("/proc/self/cgroup")?;
    headroom(&mountinfo, &membership, &|path: &Path| {
        latlab_doors::input::system_text(path)
    })
}

/// [`memory_headroom_bytes`] from the two /proc files' text, reading cgroup files with
/// `read`.
fn headroom(
    mountinfo: &str,
    membership: &str,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Option<u64> {
    least_over_levels(mountinfo, membership, "memory", &|dir| {
        level_headroom(dir, read)
    })
}

/// The CPU time this process's control groups allow, in CPUs' worth (a quota of 10 ms per
/// 100 ms period is 0.1): the least over its cgroup and each ancestor, in v2 (`cpu.max`)
/// and v1 (`cpu.cfs_quota_us` over `cpu.cfs_period_us`). `None` where no quota applies or
/// the files cannot be read.
pub(crate) fn cpu_quota() -> Option<f64> {
    let mountinfo = latlab_doors::input::system_text("/proc/self/mountinfo")?;
    let membership = latlab_doors::input::system_text("/proc/self/cgroup")?;
    quota(&mountinfo, &membership, &|path: &Path| {
        latlab_doors::input::system_text(path)
    })
}

/// [`cpu_quota`] from the two /proc files' text, reading cgroup files with `read`.
fn quota(mountinfo: &str, membership: &str, read: &dyn Fn(&Path) -> Option<String>) -> Option<f64> {
    least_over_levels(mountinfo, membership, "cpu", &|dir| level_quota(dir, read))
}

/// The least of `at_level` over this process's cgroup and each ancestor, in every hierarchy
/// of `controller`.
fn least_over_levels<T: PartialOrd + Copy>(
    mountinfo: &str,
    membership: &str,
    controller: &str,
    at_level: &dyn Fn(&Path) -> Option<T>,
) -> Option<T> {
    let mut least: Option<T> = None;
    for (mount, group) in cgroups(mountinfo, membership, controller) {
        let mut dir = mount.join(group.trim_start_matches('/'));
        loop {
            if let Some(value) = at_level(&dir) {
                least = Some(match least {
                    Some(l) if l <= value => l,
                    _ => value,
                });
            }
            if dir == mount || !dir.pop() || !dir.starts_with(&mount) {
                break;
            }
        }
    }
    least
}

/// The quota at one level of the hierarchy, where it has one.
fn level_quota(dir: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Option<f64> {
    let number = |name: &str| read(&dir.join(name))?.trim().parse::<f64>().ok();
    let (quota, period) = match read(&dir.join("cpu.max")) {
        // v2: "QUOTA PERIOD" in microseconds, or "max PERIOD".
        Some(text) => {
            let mut fields = text.split_whitespace();
            let quota = fields.next()?.parse::<f64>().ok()?;
            (quota, fields.next()?.parse::<f64>().ok()?)
        }
        // v1: -1 when there is none.
        None => (number("cpu.cfs_quota_us")?, number("cpu.cfs_period_us")?),
    };
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

/// The limit less the usage at one level of the hierarchy, where it has a limit.
fn level_headroom(dir: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Option<u64> {
    let number = |name: &str| read(&dir.join(name))?.trim().parse::<u64>().ok();
    let (limit, usage) = match number("memory.max") {
        Some(limit) => (limit, number("memory.current")?),
        None => (
            number("memory.limit_in_bytes")?,
            number("memory.usage_in_bytes")?,
        ),
    };
    (limit < UNLIMITED).then(|| limit.saturating_sub(usage))
}

/// Each hierarchy of `controller` this process belongs to (every v2 hierarchy, the v1 ones
/// with the controller): the directory its cgroup is found under (the mount point, less the
/// mount's own root within the hierarchy) and its path in it.
fn cgroups(mountinfo: &str, membership: &str, controller: &str) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    for line in mountinfo.lines() {
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = before.split(' ').collect();
        let later: Vec<&str> = after.split(' ').collect();
        let (Some(root), Some(mount_point), Some(fs_type)) =
            (fields.get(3), fields.get(4), later.first())
        else {
            continue;
        };
        let options = later.get(2).copied().unwrap_or("");
        let entry = match *fs_type {
            "cgroup2" => membership
                .lines()
                .find_map(|l| l.strip_prefix("0::").map(str::to_string)),
            "cgroup" if options.split(',').any(|o| o == controller) => {
                membership.lines().find_map(|l| {
                    let mut parts = l.splitn(3, ':');
                    let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                    controllers
                        .split(',')
                        .any(|c| c == controller)
                        .then(|| path.to_string())
                })
            }
            _ => None,
        };
        if let Some(path) = entry {
            // A mount of a sub-tree (a container's) shows the cgroups below its root.
            let inside = path.strip_prefix(root).unwrap_or(&path).to_string();
            found.push((PathBuf::from(mount_point), inside));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn reader(files: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let files: HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        move |path: &Path| files.get(path).cloned()
    }

    const V2_MOUNT: &str = "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";

    #[test]
    fn v2_takes_the_least_headroom_of_the_group_and_its_ancestors() {
        let read = reader(&[
            ("/sys/fs/cgroup/box/job/memory.max", "max\n"),
            ("/sys/fs/cgroup/box/job/memory.current", "1000\n"),
            ("/sys/fs/cgroup/box/memory.max", "209715200\n"),
            ("/sys/fs/cgroup/box/memory.current", "9715200\n"),
        ]);
        let room = headroom(V2_MOUNT, "0::/box/job\n", &read);
        assert_eq!(room, Some(200_000_000));
        // No limit anywhere: none.
        let free = reader(&[("/sys/fs/cgroup/box/job/memory.max", "max\n")]);
        assert_eq!(headroom(V2_MOUNT, "0::/box/job\n", &free), None);
    }

    #[test]
    fn v1_reads_its_memory_hierarchy_and_ignores_the_unlimited_value() {
        let mountinfo = "40 30 0:35 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                         41 30 0:36 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
        let membership = "4:memory:/jobs/7\n1:cpu:/\n";
        let read = reader(&[
            (
                "/sys/fs/cgroup/memory/jobs/7/memory.limit_in_bytes",
                "104857600\n",
            ),
            (
                "/sys/fs/cgroup/memory/jobs/7/memory.usage_in_bytes",
                "4857600\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                "5000000000\n",
            ),
        ]);
        assert_eq!(headroom(mountinfo, membership, &read), Some(100_000_000));
    }

    #[test]
    fn a_cpu_quota_is_the_least_of_the_group_and_its_ancestors_in_cpus() {
        let read = reader(&[
            ("/sys/fs/cgroup/box/job/cpu.max", "max 100000\n"),
            ("/sys/fs/cgroup/box/cpu.max", "10000 100000\n"),
            ("/sys/fs/cgroup/cpu.max", "150000 100000\n"),
        ]);
        assert_eq!(quota(V2_MOUNT, "0::/box/job\n", &read), Some(0.1));
        let unlimited = reader(&[("/sys/fs/cgroup/box/job/cpu.max", "max 100000\n")]);
        assert_eq!(quota(V2_MOUNT, "0::/box/job\n", &unlimited), None);
        // v1, in the cpu,cpuacct hierarchy; -1 is no quota.
        let mountinfo =
            "41 30 0:36 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        let read = reader(&[
            (
                "/sys/fs/cgroup/cpu,cpuacct/jobs/cpu.cfs_quota_us",
                "50000\n",
            ),
            (
                "/sys/fs/cgroup/cpu,cpuacct/jobs/cpu.cfs_period_us",
                "100000\n",
            ),
            ("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"),
            ("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"),
        ]);
        assert_eq!(quota(mountinfo, "3:cpu,cpuacct:/jobs\n", &read), Some(0.5));
    }

    #[test]
    fn a_container_sees_its_own_group_at_the_mount_root() {
        // In a cgroup namespace the membership is "/" and the mount's root is the group.
        let mountinfo = "30 25 0:26 /pod/c1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        let read = reader(&[
            ("/sys/fs/cgroup/memory.max", "268435456\n"),
            ("/sys/fs/cgroup/memory.current", "0\n"),
        ]);
        assert_eq!(headroom(mountinfo, "0::/\n", &read), Some(256 << 20));
    }
}
