//! `ipc.latency`: request/reply latency against a deadline, modelled on Android's binder
//! latency test.
//!
//! `--pairs` client/server pairs run at once. Each pair has two arms, each a caller thread in
//! latlab and a forked server process joined by a Unix stream socket pair: the `other` arm's
//! caller and server run at normal priority (`SCHED_OTHER`), the `fifo` arm's at real-time
//! priority (`SCHED_FIFO` 10) when this process may use it, bounded by `RLIMIT_RTTIME`;
//! otherwise that arm is reported as skipped with the reason. A caller makes `--iterations`
//! round trips of an 8-byte request; the server answers with the CPU it ran on. Each round
//! trip is timed on its own and compared with `--deadline`.
//!
//! Per pair and arm: every round trip as a sample (so median and percentiles), and as
//! parameters the average, best, worst, p50/p90/p99/p99.9, the misses and the meet rate, a
//! histogram in power-of-two microsecond buckets, and how many round trips the server ran on
//! the caller's CPU (a wake-up that stays on one CPU is a switch; one that crosses CPUs waits
//! for the other CPU to wake). As everywhere in latlab, the first round trip is reported
//! apart as the cold one; the figures are over the others.
//!
//! Priority inheritance: a real-time thread blocks on a `PTHREAD_PRIO_INHERIT` mutex held by
//! a normal thread, which watches its own priority (`/proc/thread-self/stat`) while holding
//! it. PASS when the holder is boosted to real time, FAIL (a warning) when not; skipped with
//! the reason when real-time priority is not permitted.
//!
//! `--trace-on-miss`: at the first missed deadline, a marker is written to ftrace's
//! `trace_marker` and tracing is stopped (`tracing_on` = 0), so the trace ends at the miss;
//! when tracefs cannot be written, the results say why.
//!
//! The parts: `arm.rs` (the servers and the callers' timed round trips), `tracer.rs` (the
//! ftrace hook), `inheritance.rs` (the priority-inheritance check); this file runs the pairs
//! and describes each arm's distribution as the binder test does.

mod arm;
mod inheritance;
mod tracer;

use crate::helper::spawn_in;
use crate::options::{Kind, OptionSpec};
use crate::peer::{FIFO_PRIORITY, Failure, Watchdog, time_limit};
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical};
use arm::{Arm, Shared, Stop, Trips, call, enter, realtime_permitted, start_server};
use inheritance::priority_inheritance;
use latlab_engine::model::distribution::with_distribution;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::{BenchResult, Warning};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;
use tracer::Tracer;

const DEADLINE_US: Key = Key::new("deadline_us");
const ITERATIONS: Key = Key::new("iterations");
const MEET_RATE: Key = Key::new("meet_rate");
const SAME_CPU_ROUND_TRIPS: Key = Key::summed("same_cpu_round_trips");
const SAME_CPU_SHARE: Key = Key::new("same_cpu_share");
const TRACE_ON_MISS: Key = Key::new("trace_on_miss");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "ipc.latency/pair{n}/other",
    "ipc.latency/pair{n}/fifo",
    "ipc.latency/priority-inheritance",
];

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "ipc.latency",
    method: "request/reply round trips per client/server pair, normal and SCHED_FIFO, against a deadline",
    timing: crate::Timing::Events,
    results: RESULTS,
    typical: Typical::quick_full(0.07, 0.63),
    extras: crate::Extras {
        options: &[
            &PAIRS_OPTION,
            &ITERATIONS_OPTION,
            &DEADLINE_OPTION,
            &TRACE_ON_MISS_OPTION,
        ],
        ..crate::Extras::NONE
    },
    presentation: latlab_engine::presentation::Presentation {
        distributions: &[
            latlab_engine::presentation::Template("ipc.latency/pair{n}/other"),
            latlab_engine::presentation::Template("ipc.latency/pair{n}/fifo"),
        ],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::CoreToCore,
            results: RESULTS,
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// `--pairs`: client/server pairs (at most one per CPU, which the run checks).
pub const PAIRS_OPTION: OptionSpec = OptionSpec {
    name: "pairs",
    kind: Kind::Count {
        min: 1,
        max: None,
        unit: "pairs",
    },
    default: Some("1"),
    help: "Client/server pairs of the IPC latency test (at most one per CPU).",
    heading: "Thread and IPC probes",
};

/// `--iterations`: round trips per pair and arm.
pub(crate) const ITERATIONS_OPTION: OptionSpec = OptionSpec {
    name: "iterations",
    kind: Kind::Count {
        min: 10,
        max: Some(10_000_000),
        unit: "",
    },
    default: None,
    help: "Round trips per pair and arm of the IPC latency test [default: 1000 quick, 10000 \
           full].",
    heading: "Thread and IPC probes",
};

/// `--deadline`: a round trip slower than this is a missed deadline; the default is the
/// binder latency test's.
pub(crate) const DEADLINE_OPTION: OptionSpec = OptionSpec {
    name: "deadline",
    kind: Kind::Duration {
        min: Duration::from_micros(1),
        max: Duration::from_secs(10),
    },
    default: Some("2.5ms"),
    help: "Deadline of one IPC latency round trip, e.g. 2.5ms, 500us.",
    heading: "Thread and IPC probes",
};

/// `--trace-on-miss`: at the first missed deadline, an ftrace marker and tracing stopped.
pub(crate) const TRACE_ON_MISS_OPTION: OptionSpec = OptionSpec {
    name: "trace-on-miss",
    kind: Kind::Flag,
    default: None,
    help: "At the first missed IPC deadline, write an ftrace marker and stop tracing.",
    heading: "Thread and IPC probes",
};
/// The test's options, as the run gave them (each declared default always parses: a test
/// of the declarations says so).
struct Options {
    pairs: usize,
    iterations: usize,
    deadline: Duration,
    trace_on_miss: bool,
}

impl Options {
    fn of(ctx: &ProbeContext) -> Options {
        let given = &ctx.options;
        Options {
            pairs: given.count(&PAIRS_OPTION).unwrap_or(1),
            iterations: (given.count(&ITERATIONS_OPTION))
                .unwrap_or_else(|| default_iterations(ctx.suite)),
            deadline: given
                .duration(&DEADLINE_OPTION)
                .unwrap_or(Duration::from_secs(10)),
            trace_on_miss: given.flag(&TRACE_ON_MISS_OPTION),
        }
    }
}

/// Round trips per pair and arm by default.
fn default_iterations(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 1000,
        Suite::Full => 10_000,
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let options = Options::of(ctx);
    let iterations = options.iterations;
    let realtime = realtime_permitted();
    let arms: &[Arm] = if realtime.is_ok() {
        &[Arm::Other, Arm::Fifo]
    } else {
        &[Arm::Other]
    };
    let tracer = options.trace_on_miss.then(Tracer::open);
    let mut servers = Vec::new();
    for pair in 0..options.pairs {
        for &arm in arms {
            let server = start_server(arm).map_err(ProbeError::Failed)?;
            servers.push((pair, arm, server));
        }
    }
    let cancel = Arc::clone(&ctx.runner.config().cancel);
    let shared = Shared {
        clock: ctx.runner.clock(),
        deadline_ns: options.deadline.as_nanos() as f64,
        iterations,
        tracer: tracer.as_ref().and_then(|t| t.as_ref().ok()),
        stopped_at: std::sync::Mutex::new(None),
        cancel: &cancel,
    };
    let limit = time_limit(ctx.runner) + options.deadline * 2 * iterations as u32;
    let all_trips = round_trips(&servers, &shared, limit)?;
    let stopped_at = (shared.stopped_at)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let mut results = Vec::new();
    for ((pair, arm, _), trips) in servers.iter().zip(all_trips) {
        let name = format!("ipc.latency/pair{pair}/{}", arm.label());
        let method = format!(
            "8-byte request, 4-byte reply over a Unix stream socket; caller and server at {}",
            match arm {
                Arm::Other => "SCHED_OTHER".to_string(),
                Arm::Fifo => format!("SCHED_FIFO {FIFO_PRIORITY}"),
            }
        );
        let same_cpu = trips.same_cpu;
        if let Some(result) = (ctx.runner).record_observations(&name, &method, trips.samples_ns) {
            results.push(describe(result, options.deadline, same_cpu, iterations));
        }
    }
    drop(servers);
    let first = results
        .first_mut()
        .ok_or_else(|| ProbeError::Failed("no round trip was recorded".into()))?;
    match &tracer {
        Some(Ok(_)) => {
            let said = stopped_at.unwrap_or_else(|| "armed; no deadline was missed".into());
            *first = first.clone().with_parameter(TRACE_ON_MISS, said);
        }
        Some(Err(reason)) => first
            .warnings
            .push(Warning::part_skipped("--trace-on-miss", reason)),
        None => {}
    }
    match realtime {
        Err(reason) => {
            first
                .warnings
                .push(Warning::part_skipped("the SCHED_FIFO arm", &reason));
            first.warnings.push(Warning::part_skipped(
                "the priority-inheritance check",
                &reason,
            ));
        }
        Ok(()) => results.push(priority_inheritance(ctx)?),
    }
    Ok(results)
}

/// Every server's round trips, each made by a caller thread of its own in the server's
/// scheduling class, all at once, under a watchdog that kills the servers past `limit`.
fn round_trips(
    servers: &[(usize, Arm, arm::Server)],
    shared: &Shared,
    limit: Duration,
) -> Result<Vec<Trips>, ProbeError> {
    let failure = Failure::default();
    let watchdog = Watchdog::arm(
        servers.iter().map(|(_, _, s)| s.child.pid()).collect(),
        Vec::new(),
        limit,
        "ipc.latency",
        &failure,
    )?;
    let outcomes: Vec<Result<Trips, Stop>> = std::thread::scope(|scope| {
        let callers: Vec<_> = servers
            .iter()
            .map(|(pair, arm, server)| {
                let socket = server.socket.as_raw_fd();
                let what = format!("pair {pair}, {} arm", arm.label());
                // A caller the system refuses is that pair's failure; the callers already
                // started are still joined.
                spawn_in(scope, "latlab-ipc-caller", move || {
                    enter(*arm).map_err(|errno| {
                        Stop::Failed(format!(
                            "{what}: could not enter its scheduling class: {}",
                            std::io::Error::from_raw_os_error(errno)
                        ))
                    })?;
                    call(socket, shared, &what)
                })
            })
            .collect();
        callers
            .into_iter()
            .map(|caller| match caller {
                Ok(caller) => caller
                    .join()
                    .unwrap_or_else(|_| Err(Stop::Failed("a caller thread panicked".into()))),
                Err(refused) => Err(Stop::Failed(refused)),
            })
            .collect()
    });
    drop(watchdog);
    outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Ok(trips) => Ok(trips),
            Err(Stop::Interrupted) => Err(ProbeError::Interrupted(latlab_engine::Interrupted)),
            Err(Stop::Failed(reason)) => {
                Err(ProbeError::Failed(failure.reason().unwrap_or(reason)))
            }
        })
        .collect()
}

/// The binder test's figures for one arm, as parameters.
fn describe(
    result: BenchResult,
    deadline: Duration,
    same_cpu: usize,
    iterations: usize,
) -> BenchResult {
    let deadline_ns = deadline.as_nanos() as f64;
    let n = result.samples_ns.len().max(1) as f64;
    let misses = result
        .samples_ns
        .iter()
        .filter(|&&ns| ns > deadline_ns)
        .count();
    with_distribution(result)
        .with_parameter(ITERATIONS, iterations)
        .with_parameter(DEADLINE_US, deadline_ns / 1e3)
        .with_parameter(key::MISSES, misses)
        .with_parameter(MEET_RATE, 1.0 - misses as f64 / n)
        .with_parameter(SAME_CPU_ROUND_TRIPS, same_cpu)
        .with_parameter(SAME_CPU_SHARE, same_cpu as f64 / iterations.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_and_the_meet_rate_follow_the_deadline() {
        let samples = vec![100.0, 200.0, 5_000.0, 300.0];
        let result = BenchResult::derived("t", "t", samples, Vec::new(), Vec::new()).unwrap();
        let result = describe(result, Duration::from_micros(1), 2, 4);
        assert_eq!(
            *result.parameter(latlab_engine::names::key::MISSES).unwrap(),
            1u64.into()
        );
        assert_eq!(*result.parameter(MEET_RATE).unwrap(), 0.75.into());
        assert_eq!(
            *result
                .parameter(latlab_engine::names::key::WORST_US)
                .unwrap(),
            5.0.into()
        );
        assert_eq!(*result.parameter(SAME_CPU_SHARE).unwrap(), 0.5.into());
    }

    /// Each arm makes its round trips; an impossible deadline is missed; where real time is
    /// permitted, its arm runs and the holder of a priority-inheritance mutex is boosted.
    #[test]
    fn arms_run_deadlines_are_judged_and_inheritance_boosts() {
        let mut runner = crate::test_runner(5, Duration::from_micros(200));
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.options
            .set(&ITERATIONS_OPTION, crate::options::Value::Count(50));
        ctx.options.set(
            &DEADLINE_OPTION,
            crate::options::Value::Duration(Duration::from_nanos(1)),
        );
        let results = run(&mut ctx).unwrap();
        let other = crate::named(&results, "ipc.latency/pair0/other");
        assert_eq!(*other.parameter(ITERATIONS).unwrap(), 50u64.into());
        assert_eq!(
            *other.parameter(latlab_engine::names::key::MISSES).unwrap(),
            49u64.into()
        );
        let fifo = results.iter().find(|r| r.name == "ipc.latency/pair0/fifo");
        match realtime_permitted() {
            Ok(()) => {
                assert!(fifo.is_some());
                let check = crate::named(&results, "ipc.latency/priority-inheritance");
                assert_eq!(
                    *check.parameter(inheritance::VERDICT).unwrap(),
                    "PASS".into(),
                    "{:?}",
                    check.parameters
                );
            }
            Err(_) => {
                assert!(fifo.is_none());
                assert!(other.warnings.iter().any(|w| matches!(
                    w,
                    Warning::PartSkipped { part, .. } if part == "the SCHED_FIFO arm"
                )));
            }
        }
    }
}
