//! The machine's memory nodes (NUMA nodes): which CPUs sit beside which memory, as
//! `/sys/devices/system/node` tells it.

use super::sysfs::{kib_field, parse_cpu_list, read_trimmed};
use std::path::Path;

/// One memory node: the CPUs closest to it and the memory it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemoryNode {
    /// The kernel's number for it (`node1` is 1).
    pub node: usize,
    /// Its online CPUs; empty for a node of memory alone (a CXL expander, say).
    pub cpus: Vec<usize>,
    /// The memory it holds (`MemTotal` of its `meminfo`), when the kernel says.
    pub memory_bytes: Option<u64>,
}

/// The memory nodes under `root` (`/sys/devices/system/node` on a real machine), by
/// number; empty where the kernel has no such directory (no NUMA support, another OS).
pub(crate) fn memory_nodes_under(root: &Path) -> Vec<MemoryNode> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut nodes: Vec<MemoryNode> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let node = name.to_str()?.strip_prefix("node")?.parse().ok()?;
            let dir = entry.path();
            Some(MemoryNode {
                node,
                cpus: read_trimmed(dir.join("cpulist"))
                    .and_then(|list| parse_cpu_list(&list))
                    .unwrap_or_default(),
                memory_bytes: latlab_doors::input::system_text(dir.join("meminfo"))
                    .and_then(|text| node_mem_total(&text)),
            })
        })
        .collect();
    nodes.sort_by_key(|n| n.node);
    nodes
}

/// This machine's memory nodes.
pub(crate) fn memory_nodes() -> Vec<MemoryNode> {
    memory_nodes_under(Path::new("/sys/devices/system/node"))
}

/// One line for `latlab env`: `2: node 0 CPUs 0-7 with 125.8 GiB; node 1 CPUs 8-15 with
/// 126.0 GiB`, or that the kernel names none.
pub fn describe_memory_nodes(nodes: &[MemoryNode]) -> String {
    if nodes.is_empty() {
        return "unknown (the kernel lists no memory node)".into();
    }
    let one = |n: &MemoryNode| {
        let cpus = match &n.cpus[..] {
            [] => "no CPU".to_string(),
            cpus => format!("CPUs {}", super::cores::cpu_ranges(cpus)),
        };
        let memory = n.memory_bytes.map_or_else(
            || "memory unknown".to_string(),
            |bytes| format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30)),
        );
        format!("node {} {cpus} with {memory}", n.node)
    };
    let described: Vec<String> = nodes.iter().map(one).collect();
    format!("{}: {}", nodes.len(), described.join("; "))
}

/// `MemTotal` of a node's `meminfo`, whose lines read `Node 1 MemTotal:  131072 kB`.
fn node_mem_total(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (_, field) = line.split_once("MemTotal")?;
        kib_field(&format!("MemTotal{field}"), "MemTotal")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes as a two-socket machine's sysfs lays them out, beside the directories that
    /// are not nodes; a node of memory without CPUs keeps its memory and no CPUs.
    #[test]
    fn nodes_are_read_with_their_cpus_and_memory() {
        let root = tempfile::tempdir().unwrap();
        let node = |n: usize, cpus: &str, kib: u64| {
            let dir = root.path().join(format!("node{n}"));
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("cpulist"), format!("{cpus}\n")).unwrap();
            std::fs::write(
                dir.join("meminfo"),
                format!("Node {n} MemTotal:       {kib} kB\nNode {n} MemFree: 1 kB\n"),
            )
            .unwrap();
        };
        node(1, "8-15,24-31", 65_536);
        node(0, "0-7,16-23", 131_072);
        node(2, "", 1024);
        std::fs::create_dir(root.path().join("power")).unwrap();
        std::fs::write(root.path().join("online"), "0-2\n").unwrap();
        let nodes = memory_nodes_under(root.path());
        assert_eq!(nodes.len(), 3);
        assert_eq!(nodes[0].node, 0);
        assert_eq!(nodes[0].cpus.len(), 16);
        assert_eq!(nodes[0].memory_bytes, Some(128 << 20));
        assert_eq!(nodes[1].cpus[8], 24);
        assert!(nodes[2].cpus.is_empty());
        assert_eq!(nodes[2].memory_bytes, Some(1 << 20));
        assert!(memory_nodes_under(&root.path().join("missing")).is_empty());
        assert_eq!(
            describe_memory_nodes(&nodes),
            "3: node 0 CPUs 0-7,16-23 with 0.1 GiB; node 1 CPUs 8-15,24-31 with 0.1 GiB; \
             node 2 no CPU with 0.0 GiB"
        );
    }
}
