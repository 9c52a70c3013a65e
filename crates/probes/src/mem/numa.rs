//! `mem.numa`: what main memory costs from each memory node's CPUs to each node's memory,
//! as two node × node matrices (Intel's Memory Latency Checker's `--latency_matrix` and
//! `--bandwidth_matrix`).
//!
//! The nodes are the kernel's (`/sys/devices/system/node`): a node's CPUs are those of its
//! `cpulist` the run may use, and a node without memory is read from but never read. For
//! each node J with memory, one `pagegroups` ring in main memory is built as `mem.loaded`
//! builds its chase (eight times the last cache found, at most 96 MiB), its pages bound to
//! J (`set_mempolicy(MPOL_BIND)` while the ring is first written); then a thread pinned to
//! the first CPU of each node I chases it: `mem.numa/latency/I-J`, dependent loads less the
//! empty loop. For the bandwidth, every CPU of node I runs a read loader over a buffer of
//! its own bound to node J, in windows of 10 ms: `mem.numa/bandwidth/I-J`, the time per
//! 64-byte line read (and so bytes per second).
//!
//! A machine of one node has nothing to cross: the probe measures its one `I-I` point of
//! each kind, with nothing bound (the kernel may have no NUMA support at all), and its
//! results say so.

use super::UNPINNED_THREADS;
use super::latency::PREFETCH_PROOF_STRIDE;
use super::latency::chase::{Chase, main_memory_ring, time_ring};
use super::loaded::{loader_bytes, main_memory_chase_bytes};
use super::pages::nodes::made_on_node;
use super::stream::{Crew, Kernel, Memory, Mix, Per};
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical, keeping_measured};
use latlab_engine::environment::MemoryNode;
use latlab_engine::host::AffinityGuard;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{PairMatrix, Presentation, Template, Unit};
use latlab_engine::{BenchResult, Runner, SharedHost};

const CHASER_CPU: Key = Key::new("cpu");
const CPU_NODE: Key = Key::new("cpu_node");
const MEMORY_NODE: Key = Key::new("memory_node");
const MEMORY_NODES: Key = Key::new("memory_nodes");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "mem.numa/latency/{node}-{node}",
    "mem.numa/bandwidth/{node}-{node}",
];

/// Windows of a bandwidth point, after its cold one.
const BANDWIDTH_WINDOWS: usize = 8;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.numa",
    method: "a main-memory chase from the first CPU of each memory node over a ring bound to each node, and every CPU of each node reading memory bound to each node",
    timing: crate::Timing::LessEmptyLoop,
    results: RESULTS,
    typical: Typical::quick_full(0.5, 0.5),
    extras: crate::Extras {
        timing_note: Some(
            "the chase as mem.latency times it; the bandwidth from byte counts over clock-timed windows",
        ),
        rounds: crate::Rounds::Once {
            why: "each memory node's ring is built once and chased from every node's CPUs",
        },
        options: &[&crate::mem::MAX_SIZE_OPTION],
        ..crate::Extras::NONE
    },
    presentation: Presentation {
        matrices: &[
            PairMatrix {
                id: "numa-latency",
                results: Template("mem.numa/latency/{node}-{node}"),
                row: CPU_NODE,
                column: MEMORY_NODE,
                axis: "node",
                label: "latency",
                directed: true,
                unit: Unit::Nanoseconds,
                caption: "mem.numa latency: a load that misses to main memory, from a CPU of \
                          the row's node to memory of the column's node",
            },
            PairMatrix {
                id: "numa-bandwidth",
                results: Template("mem.numa/bandwidth/{node}-{node}"),
                row: CPU_NODE,
                column: MEMORY_NODE,
                axis: "node",
                label: "bandwidth",
                directed: true,
                unit: Unit::BytesPerSecond,
                caption: "mem.numa bandwidth: every CPU of the row's node reading memory of \
                          the column's node",
            },
        ],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::MemoryChases,
            results: RESULTS,
        }],
        ..Presentation::NONE
    },
    run,
};

/// The nodes a run crosses: those whose CPUs it may use (the readers), each with those
/// CPUs, and those with memory (the read). One node standing for the whole machine where
/// the kernel names none.
struct Nodes {
    readers: Vec<(usize, Vec<usize>)>,
    read: Vec<usize>,
}

impl Nodes {
    fn of(nodes: &[MemoryNode], allowed: &[usize]) -> Nodes {
        if nodes.is_empty() {
            return Nodes {
                readers: vec![(0, allowed.to_vec())],
                read: vec![0],
            };
        }
        let readers = (nodes.iter())
            .map(|n| {
                let cpus = (n.cpus.iter()).filter(|c| allowed.contains(c)).copied();
                (n.node, cpus.collect::<Vec<_>>())
            })
            .filter(|(_, cpus)| !cpus.is_empty())
            .collect();
        let read = (nodes.iter())
            .filter(|n| n.memory_bytes != Some(0))
            .map(|n| n.node)
            .collect();
        Nodes { readers, read }
    }

    /// Whether there is anything to cross: more than one node reads or is read.
    fn crossed(&self) -> bool {
        self.readers.len() > 1 || self.read.len() > 1
    }

    /// The node memory is bound to for reading node `node`: none on a machine of one
    /// node.
    fn binding(&self, node: usize) -> Option<usize> {
        self.crossed().then_some(node)
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let host = std::sync::Arc::clone(ctx.host());
    let nodes = Nodes::of(&host.memory_nodes(), &host.allowed_cpus());
    if nodes.readers.is_empty() || nodes.read.is_empty() {
        return Err(ProbeError::Skipped(
            "no memory node has both CPUs this run may use and memory".into(),
        ));
    }
    let chase_bytes = main_memory_chase_bytes(ctx);
    let widest = (nodes.readers.iter()).map(|(_, cpus)| cpus.len()).max();
    let each_loader = loader_bytes(ctx, widest.unwrap_or(1));
    let _affinity = AffinityGuard::save(&host);
    keeping_measured(|results| {
        for &memory in &nodes.read {
            latency_row(ctx.runner, &host, &nodes, memory, chase_bytes, results)?;
        }
        for (reader, cpus) in &nodes.readers {
            for &memory in &nodes.read {
                let mut crew = Crew {
                    host: &host,
                    cpus,
                    memory: Memory::Own {
                        bytes: each_loader as usize,
                        node: nodes.binding(memory),
                    },
                };
                results.push(bandwidth(ctx.runner, &mut crew, &nodes, (*reader, memory))?);
            }
        }
        results.sort_by_key(|r| {
            let node = |k| r.parameter(k).and_then(|v| v.as_u64());
            (
                r.name.contains("/bandwidth/"),
                node(CPU_NODE),
                node(MEMORY_NODE),
            )
        });
        Ok(())
    })
}

/// The chase over a ring bound to node `memory`, from the first CPU of every reading node.
fn latency_row(
    runner: &mut Runner,
    host: &SharedHost,
    nodes: &Nodes,
    memory: usize,
    bytes: u64,
    results: &mut Vec<BenchResult>,
) -> Result<(), ProbeError> {
    let [(_, first_cpus), ..] = &nodes.readers[..] else {
        return Ok(());
    };
    host.pin_to_cpu(first_cpus[0]).map_err(ProbeError::Failed)?;
    let build = || main_memory_ring(bytes).map_err(|why| format!("on node {memory}: {why}"));
    let span = |chase: &Chase| (chase.start(), chase.lines() * PREFETCH_PROOF_STRIDE);
    // The ring's pages are placed as it is written: the binding is needed for that only.
    let chase = made_on_node(host, nodes.binding(memory), build, span)
        .map_err(|why| ProbeError::Failed(format!("the chase's ring: {why}")))?;
    for (reader, cpus) in &nodes.readers {
        host.pin_to_cpu(cpus[0]).map_err(ProbeError::Failed)?;
        chase.warm();
        let name = format!("mem.numa/latency/{reader}-{memory}");
        let method = format!(
            "dependent loads from CPU {} (node {reader}) over a pagegroups ring of {} lines, \
             one per {PREFETCH_PROOF_STRIDE} bytes, in memory of node {memory}{}",
            cpus[0],
            chase.lines(),
            one_node_note(nodes)
        );
        let result = time_ring(runner, &chase, (&name, &method), super::sweep_point)?;
        results.push(
            result
                .with_parameter(CHASER_CPU, cpus[0])
                .with_parameter(CPU_NODE, *reader)
                .with_parameter(MEMORY_NODE, memory)
                .with_parameter(MEMORY_NODES, nodes.read.len()),
        );
    }
    Ok(())
}

/// Every CPU of `crew` reading memory of its node, as node pair `(reader, memory)`.
fn bandwidth(
    runner: &mut Runner,
    crew: &mut Crew,
    nodes: &Nodes,
    (reader, memory): (usize, usize),
) -> Result<BenchResult, ProbeError> {
    let name = format!("mem.numa/bandwidth/{reader}-{memory}");
    let method = format!(
        "the {} CPUs of node {reader} each reading a buffer of its own in memory of node \
         {memory}, no delay: the time per 64-byte line read, each sample timed from the \
         first start to the last end and at least {} ms{}",
        crew.cpus.len(),
        super::stream::crew::WINDOW.as_millis(),
        one_node_note(nodes)
    );
    let kernel = Kernel::new(Mix::Read, 1);
    let read = crew.measure(
        runner,
        (&name, &method),
        kernel,
        (BANDWIDTH_WINDOWS, Per::Line),
    )?;
    Ok(crew
        .describe(read.result, kernel)
        .with_bytes_per_operation(64)
        .with_parameter(CPU_NODE, reader)
        .with_parameter(MEMORY_NODE, memory)
        .with_parameter(MEMORY_NODES, nodes.read.len())
        .with_parameter(UNPINNED_THREADS, read.unpinned))
}

/// What a method adds on a machine of one node.
fn one_node_note(nodes: &Nodes) -> &'static str {
    if nodes.crossed() {
        ""
    } else {
        " (one memory node: nothing to cross, and nothing bound)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::stream::LOADERS;

    fn run_on(nodes: usize) -> Vec<BenchResult> {
        let mut runner = latlab_engine::Runner::on(
            std::sync::Arc::new(latlab_engine::SyntheticHost::with_memory_nodes(nodes)),
            latlab_engine::Config::quick(),
        );
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.set_max_size(8 << 20);
        run(&mut ctx).unwrap()
    }

    /// One node needs no binding, so a kernel that binds nothing (built without NUMA
    /// support, or an emulator without the call) still gets its one point of each kind.
    #[test]
    fn one_node_needs_no_memory_policy() {
        let host = latlab_engine::SyntheticHost::with_memory_nodes(1).without_memory_policy();
        let mut runner =
            latlab_engine::Runner::on(std::sync::Arc::new(host), latlab_engine::Config::quick());
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.set_max_size(8 << 20);
        let results = run(&mut ctx).unwrap();
        let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["mem.numa/latency/0-0", "mem.numa/bandwidth/0-0"]);
    }

    fn node_of(result: &BenchResult, key: Key) -> u64 {
        result.parameter(key).unwrap().as_u64().unwrap()
    }

    /// On the synthetic machine split into two and four nodes: every node's CPUs against
    /// every node's memory, once for latency and once for bandwidth, in row order; each
    /// chase from a CPU of its row's node, each bandwidth from all that node's CPUs.
    #[test]
    fn every_node_is_read_from_every_node() {
        for nodes in [2u64, 4] {
            let results = run_on(nodes as usize);
            let mut expected = Vec::new();
            for kind in ["latency", "bandwidth"] {
                for i in 0..nodes {
                    for j in 0..nodes {
                        expected.push(format!("mem.numa/{kind}/{i}-{j}"));
                    }
                }
            }
            let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, expected);
            let cpus_per_node = 4 / nodes;
            for result in &results {
                let (row, column) = (node_of(result, CPU_NODE), node_of(result, MEMORY_NODE));
                assert!(result.name.ends_with(&format!("/{row}-{column}")));
                assert!(!result.method.contains("nothing to cross"));
                if result.name.contains("/latency/") {
                    assert_eq!(node_of(result, CHASER_CPU) / cpus_per_node, row);
                } else {
                    assert_eq!(node_of(result, LOADERS), cpus_per_node);
                    assert_eq!(result.bytes_per_operation, Some(64));
                }
            }
        }
    }

    /// One node: a single point of each kind, which says there is nothing to cross.
    #[test]
    fn one_node_has_nothing_to_cross() {
        let results = run_on(1);
        let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["mem.numa/latency/0-0", "mem.numa/bandwidth/0-0"]);
        assert!(
            results
                .iter()
                .all(|r| r.method.contains("nothing to cross")),
            "{:?}",
            results.iter().map(|r| &r.method).collect::<Vec<_>>()
        );
    }

    /// Nodes as the kernel may list them: one of memory alone (read, never reading), one
    /// whose CPUs the run may not use (neither), none at all (the machine as one node).
    #[test]
    fn nodes_without_cpus_are_read_but_never_read_from() {
        let node = |node, cpus: &[usize], memory| MemoryNode {
            node,
            cpus: cpus.to_vec(),
            memory_bytes: memory,
        };
        let nodes = Nodes::of(
            &[
                node(0, &[0, 1], Some(1 << 30)),
                node(1, &[2, 3], Some(1 << 30)),
                node(2, &[], Some(1 << 30)),
                node(3, &[4], Some(0)),
            ],
            &[0, 1, 3],
        );
        let readers: Vec<usize> = nodes.readers.iter().map(|r| r.0).collect();
        assert_eq!(readers, [0, 1]);
        assert_eq!(nodes.readers[1].1, [3]);
        assert_eq!(nodes.read, [0, 1, 2]);
        assert_eq!(nodes.binding(2), Some(2));
        let whole = Nodes::of(&[], &[0, 1]);
        assert_eq!(whole.readers, [(0, vec![0, 1])]);
        assert_eq!(whole.binding(0), None);
    }
}
