//! `proc.pipe`: the pipe ping-pong context-switch test, printing three numbers.
//!
//! * `write-read`: one byte written to a pipe and read back by the same process, the system
//!   calls without any switch.
//! * `round-trip`: one byte to a child process through one pipe and back through another;
//!   each side blocks in `read` until the other answers, so a round trip is two writes, two
//!   reads and two context switches. This is what `perf bench sched pipe` reports per op.
//! * `switch`: (round trip − 2 × write-read) ÷ 2, sample by sample: one context switch with
//!   the pipe's own cost taken out, as lmbench's `lat_ctx` does.
//!
//! Each comes `pinned` (parent and child on one CPU: the switch is a switch on that CPU) and
//! `unpinned` (any online CPU: each answer may wake the other CPU, which on a VM costs far
//! more than a switch).

use super::{Pipe, read_byte, write_byte};
use crate::peer::{Child, Failure, Watchdog, time_limit};
use crate::thread::{Pair, cpu_pair};
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::Host;
use latlab_engine::host::AffinityGuard;
use latlab_engine::names::key;
use latlab_engine::{BenchResult, Runner};
use std::os::fd::AsRawFd;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "proc.pipe",
    method: "one byte through a pipe within a process, and back and forth between two: the context switch",
    timing: crate::Timing::LessEmptyLoop,
    results: &[
        "proc.pipe/pinned/write-read",
        "proc.pipe/pinned/round-trip",
        "proc.pipe/pinned/switch",
        "proc.pipe/unpinned/write-read",
        "proc.pipe/unpinned/round-trip",
        "proc.pipe/unpinned/switch",
    ],
    typical: Typical::quick_full(0.69, 4.2),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        headline: &[
            crate::headline_row(
                140,
                "Context switch",
                None,
                "proc.pipe/pinned/switch",
                "one CPU",
            ),
            crate::headline_row(
                150,
                "Pipe round trip between processes",
                None,
                "proc.pipe/pinned/round-trip",
                "one CPU",
            ),
        ],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::CoreToCore,
            results: &[
                "proc.pipe/unpinned/write-read",
                "proc.pipe/unpinned/round-trip",
                "proc.pipe/unpinned/switch",
            ],
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

#[derive(Clone, Copy)]
enum Placement {
    Pinned,
    Unpinned,
}

impl Placement {
    fn label(self) -> &'static str {
        match self {
            Placement::Pinned => "pinned",
            Placement::Unpinned => "unpinned",
        }
    }

    /// The CPUs both processes may run on.
    fn cpus(self, host: &dyn Host) -> Vec<usize> {
        match self {
            Placement::Pinned => {
                let (cpu, _) = cpu_pair(host, Pair::SameCpu).unwrap_or((0, 0));
                vec![cpu]
            }
            Placement::Unpinned => host.every_cpu(),
        }
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let mut results = Vec::new();
    for placement in [Placement::Pinned, Placement::Unpinned] {
        results.extend(measure(ctx.runner, placement)?);
    }
    Ok(results)
}

fn io_failure(what: &str, e: std::io::Error) -> ProbeError {
    ProbeError::Failed(format!("{what}: {e}"))
}

fn measure(runner: &mut Runner, placement: Placement) -> Result<Vec<BenchResult>, ProbeError> {
    let host = runner.host().clone();
    let cpus = placement.cpus(host.as_ref());
    let label = placement.label();
    let _affinity = AffinityGuard::save(&host);
    host.set_allowed_cpus(&cpus).map_err(ProbeError::Failed)?;
    let write_read = write_read(runner, label)?;
    let round_trip = round_trip(runner, label)?;
    let switch = BenchResult::derived(
        &format!("proc.pipe/{label}/switch"),
        "(round trip − 2 × write-read) ÷ 2, sample by sample: one context switch",
        round_trip
            .samples_ns
            .iter()
            .zip(&write_read.samples_ns)
            .map(|(rt, wr)| (rt - 2.0 * wr) / 2.0)
            .collect(),
        Vec::new(),
        vec![round_trip.name.clone(), write_read.name.clone()],
    );
    let write_read_name = write_read.name.clone();
    let mut results = vec![write_read, round_trip];
    results.extend(switch);
    // Pinned to one CPU, a round trip between the processes is two switches: being switched
    // out is what it measures, not a disturbance.
    let switching = |r: BenchResult| match placement {
        Placement::Pinned if r.name != write_read_name => r.measuring_switches(),
        _ => r,
    };
    Ok(results
        .into_iter()
        .map(switching)
        .map(|r| r.with_parameter(key::CPUS, cpus.as_slice()))
        .collect())
}

/// One byte written to a pipe and read back, in this process.
fn write_read(runner: &mut Runner, label: &str) -> Result<BenchResult, ProbeError> {
    let alone = Pipe::new().map_err(|e| io_failure("pipe", e))?;
    let (alone_read, alone_write) = (alone.read.as_raw_fd(), alone.write.as_raw_fd());
    let failure = Failure::default();
    let write_read = failure.guard(runner, |runner| {
        Ok(runner.bench(
            &format!("proc.pipe/{label}/write-read"),
            "write one byte to a pipe and read it back, in one process",
            || {
                if !write_byte(alone_write, 1) || read_byte(alone_read).is_none() {
                    failure.fail("a pipe within one process failed");
                }
            },
        )?)
    })?;
    drop(alone);
    Ok(write_read)
}

/// One byte to a forked child through a pipe and back through another, under a watchdog.
fn round_trip(runner: &mut Runner, label: &str) -> Result<BenchResult, ProbeError> {
    let failure = Failure::default();
    let there = Pipe::new().map_err(|e| io_failure("pipe", e))?;
    let back = Pipe::new().map_err(|e| io_failure("pipe", e))?;
    let (child_read, child_write) = (there.read.as_raw_fd(), back.write.as_raw_fd());
    let (parent_write, parent_read) = (there.write.as_raw_fd(), back.read.as_raw_fd());
    let echo = move || {
        // SAFETY: closing the parent's ends of the pipes in the child.
        unsafe {
            libc::close(parent_write);
            libc::close(parent_read);
        }
        while let Some(byte) = read_byte(child_read) {
            if !write_byte(child_write, byte) {
                break;
            }
        }
        0
    };
    // SAFETY: `echo` makes raw read, write and close calls on the pipes made before the
    // fork, into a one-byte buffer on its stack.
    let child = unsafe { Child::fork(echo) }.map_err(|e| io_failure("fork", e))?;
    drop(there.read);
    drop(back.write);
    let name = format!("proc.pipe/{label}/round-trip");
    let watchdog = Watchdog::arm(
        vec![child.pid()],
        Vec::new(),
        time_limit(runner),
        &name,
        &failure,
    )?;
    let round_trip = failure.guard(runner, |runner| {
        Ok(runner.bench(
            &name,
            "one byte to a child process through a pipe and back through another",
            || {
                if !write_byte(parent_write, 1) || read_byte(parent_read).is_none() {
                    failure.fail(format!("{name}: the child process stopped answering"));
                }
            },
        )?)
    });
    drop(watchdog);
    drop(there.write);
    drop(back.read);
    drop(child);
    round_trip
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On one CPU a round trip between two processes costs more than two write+read pairs
    /// in one: the switches are not free.
    #[test]
    fn a_round_trip_between_processes_costs_more_than_within_one() {
        let mut runner = crate::test_runner(9, std::time::Duration::from_micros(500));
        let results = measure(&mut runner, Placement::Pinned).unwrap();
        let median = |suffix: &str| {
            let name = format!("proc.pipe/pinned/{suffix}");
            crate::named(&results, &name).summary.median
        };
        assert!(
            median("round-trip") > 2.0 * median("write-read"),
            "round trip {} ns, write-read {} ns",
            median("round-trip"),
            median("write-read")
        );
        assert!(median("switch") > 0.0);
    }
}
