//! `sched.priority`: a fixed CPU-bound job at different priorities, alone and under
//! contention.
//!
//! The job is a chain of dependent multiply-adds calibrated to take 10 ms (50 ms in the full
//! suite) alone at nice 0. It runs on a thread of its own in each class ([`Class`]: nice 0,
//! nice 19 and SCHED_IDLE; the full suite adds SCHED_BATCH and a utilisation clamp where the
//! kernel has uclamp), six times after a cold run,
//! under each condition ([`Condition`]): alone on one CPU, against a nice-0 spinning thread on
//! that CPU, and with such a thread on every CPU while the job may run anywhere.
//!
//! Each result's samples are the job's completion times; its parameters give the job's
//! share of the CPU (its thread CPU time over its wall time), the CPUs it ran on (sampled
//! with `sched_getcpu` every 64 Ki steps), and under contention its slowdown against the
//! same class alone. Nothing here decides what priority should do: if classes differ alone,
//! or do not differ under contention, the figures say so. A job starved past the time cap
//! (0.1 s quick, 5 s full) is stopped, and its completion time is extrapolated from the chunks
//! it had done by then, which the result says. The cap is kept by the measuring thread, not by
//! the job: a starved job may wait a whole scheduling period for its next slice (hundreds of
//! milliseconds at SCHED_IDLE), so at the cap the measuring thread takes the job's count and
//! CPU time, and pauses the hogs so that the job can see it has to stop.

use super::{Class, Classes, Condition, Hogs, check_cancel, on_thread};
use crate::helper::spawn_in;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical};
use latlab_engine::Host;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::parameters::Value;
use latlab_engine::{BenchResult, thread_cpu_ns};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const COMPLETED: Key = Key::summed("completed");
const CPUS_RUN_ON: Key = Key::new("cpus_run_on");
const EXTRAPOLATED_AFTER_S: Key = Key::new("extrapolated_after_s");
const JOBS: Key = Key::summed("jobs");
const SHARE_OF_TIME_PER_CPU: Key = Key::new("share_of_time_per_cpu");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "sched.priority",
    method: "a fixed CPU-bound job at nice 0/19, SCHED_IDLE (full suite: also SCHED_BATCH, uclamp): alone, against a hog, all CPUs loaded",
    timing: crate::Timing::Events,
    results: &[
        "sched.priority/alone/nice0",
        "sched.priority/alone/nice19",
        "sched.priority/alone/batch",
        "sched.priority/alone/idle",
        "sched.priority/alone/uclamp-max-25",
        "sched.priority/contended/nice0",
        "sched.priority/contended/nice19",
        "sched.priority/contended/batch",
        "sched.priority/contended/idle",
        "sched.priority/contended/uclamp-max-25",
        "sched.priority/loaded/nice0",
        "sched.priority/loaded/nice19",
        "sched.priority/loaded/batch",
        "sched.priority/loaded/idle",
        "sched.priority/loaded/uclamp-max-25",
    ],
    typical: Typical::quick_full(3.6, 15.0),
    extras: crate::Extras {
        rounds: crate::Rounds::Once {
            why: "a starved job runs to its 100 ms cap, and each round's cold job per class and \
                  condition added 3 s to the main job on a 2-vCPU VM",
        },
        ..crate::Extras::NONE
    },
    presentation: latlab_engine::presentation::Presentation {
        grids: &[latlab_engine::presentation::Grid {
            id: "priority",
            title: "Priority under contention",
            prefix: "sched.priority/",
            rows: "condition",
            ratio: Some(key::SLOWDOWN_VS_ALONE),
            detail: Some(("CPU share", key::CPU_SHARE)),
            note: "The completion time of one fixed job (median), its slowdown against the \
                   same class alone, and its share of the CPU.",
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// What the hogs' time limit allows beyond the jobs' caps.
const HOG_SLACK: Duration = Duration::from_secs(1);
/// Steps between two looks at the clock and the CPU.
const CHUNK: u64 = 1 << 16;
/// How often the measuring thread looks whether a job has finished or reached its cap.
const LOOK_EVERY: Duration = Duration::from_millis(1);
const MIN_LOOK: Duration = Duration::from_micros(100);

/// How long the job takes alone, how many times each is run (the first is the cold one),
/// and when a starved job stops. The quick suite runs fewer classes rather than fewer jobs:
/// each result needs the engine's minimum of samples and six for an interval.
fn shape(suite: Suite) -> (Duration, usize, Duration) {
    match suite {
        Suite::Quick => (Duration::from_millis(10), 7, Duration::from_millis(100)),
        Suite::Full => (Duration::from_millis(50), 7, Duration::from_secs(5)),
    }
}

/// The classes a suite compares: the quick one keeps the default, the lowest nice level and
/// the idle policy, the extremes that show whether priority works at all.
fn classes(suite: Suite) -> &'static [Class] {
    match suite {
        Suite::Quick => &[Class::Nice0, Class::Nice19, Class::SchedIdle],
        Suite::Full => &[
            Class::Nice0,
            Class::Nice19,
            Class::SchedBatch,
            Class::SchedIdle,
            Class::UclampMax,
        ],
    }
}

/// `CHUNK` dependent multiply-adds.
#[inline(never)]
fn chunk(mut x: u64) -> u64 {
    for _ in 0..CHUNK {
        x = black_box(x)
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
    }
    x
}

/// One run of the job.
struct JobRun {
    /// The completion time, or its extrapolation when stopped at the cap.
    completion_ns: f64,
    cpu_share: f64,
    finished: bool,
    /// Chunks run on each CPU.
    cpus: BTreeMap<i32, u64>,
}

/// What a running job shares with the thread that keeps its cap.
#[derive(Default)]
struct JobProgress {
    /// Chunks done so far.
    done: AtomicU64,
    /// Set by the measuring thread at the cap: stop after the current chunk.
    stop: AtomicBool,
}

/// A job as the job's own thread saw it.
struct JobOwn {
    wall: Duration,
    cpu: Duration,
    done: u64,
    /// Chunks run on each CPU (sampled with `sched_getcpu` after each chunk).
    cpus: BTreeMap<i32, u64>,
}

/// Runs the job's chunks on the calling thread until they are done or it is told to stop.
fn job(chunks: u64, progress: &JobProgress) -> JobOwn {
    let started = Instant::now();
    let cpu_before = thread_cpu_ns();
    let mut cpus = BTreeMap::new();
    let mut x = 1;
    let mut done = 0;
    while done < chunks && !progress.stop.load(Ordering::Acquire) {
        x = chunk(x);
        done += 1;
        progress.done.store(done, Ordering::Release);
        // SAFETY: sched_getcpu has no preconditions.
        *cpus.entry(unsafe { libc::sched_getcpu() }).or_insert(0) += 1;
    }
    black_box(x);
    JobOwn {
        wall: started.elapsed(),
        cpu: Duration::from_nanos(thread_cpu_ns().saturating_sub(cpu_before)),
        done,
        cpus,
    }
}

/// The CPU time so far of a live thread of this process.
fn thread_cpu_time(thread: libc::pthread_t) -> Option<Duration> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `thread` has not been joined, so its handle is valid, and `clock` is writable.
    if unsafe { libc::pthread_getcpuclockid(thread, &mut clock) } != 0 {
        return None;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a clock id the kernel just gave and a writable timespec.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0)
        .then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// Runs the job once on a new thread confined to `allowed` and put in `class`, and keeps its
/// cap: at `cap` after the job started (or at its first chunk after that, if it has done
/// none), its completion time is extrapolated from the chunks done and its CPU share taken
/// from its CPU time so far; then it is told to stop and the hogs are paused until it has.
fn run_job(
    host: &dyn Host,
    allowed: &[usize],
    class: Class,
    (chunks, cap): (u64, Duration),
    hogs: &Hogs,
) -> Result<JobRun, String> {
    let progress = JobProgress::default();
    std::thread::scope(|scope| {
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let shared = &progress;
        let thread = spawn_in(scope, "latlab-job", move || {
            host.set_allowed_cpus(allowed)?;
            class.enter()?;
            // SAFETY: pthread_self has no preconditions.
            let _ = started_tx.send((Instant::now(), unsafe { libc::pthread_self() }));
            Ok::<_, String>(job(chunks, shared))
        })?;
        let panicked = |_| "the job thread panicked".to_string();
        let Ok((started, pthread)) = started_rx.recv() else {
            // The thread ended without starting the job: it could not enter its class.
            return Err(thread
                .join()
                .map_err(panicked)?
                .err()
                .unwrap_or_else(|| "the job did not start".into()));
        };
        let at_cap = loop {
            let elapsed = started.elapsed();
            if thread.is_finished() {
                break None;
            }
            let done = progress.done.load(Ordering::Acquire);
            if elapsed >= cap && done > 0 {
                break Some((elapsed, thread_cpu_time(pthread), done));
            }
            std::thread::sleep(LOOK_EVERY.min(cap.saturating_sub(elapsed)).max(MIN_LOOK));
        };
        progress.stop.store(true, Ordering::Release);
        let paused = at_cap.is_some().then(|| hogs.pause());
        let own = thread.join().map_err(panicked)??;
        drop(paused);
        let (wall, cpu, done) = match at_cap {
            Some((wall, cpu, done)) if own.done < chunks => (wall, cpu.unwrap_or(own.cpu), done),
            _ => (own.wall, own.cpu, own.done),
        };
        let wall_ns = wall.as_nanos() as f64;
        Ok(JobRun {
            completion_ns: wall_ns * chunks as f64 / done as f64,
            cpu_share: if wall_ns > 0.0 {
                cpu.as_nanos() as f64 / wall_ns
            } else {
                0.0
            },
            finished: own.done == chunks,
            cpus: own.cpus,
        })
    })
}

/// Chunks that take `target` alone at nice 0 on `cpu`.
fn calibrate(host: &dyn Host, cpu: usize, target: Duration) -> Result<u64, String> {
    on_thread(host, &[cpu], Class::Nice0, || {
        let mut x = 1;
        let started = Instant::now();
        let mut chunks = 0u64;
        while started.elapsed() < Duration::from_millis(5) {
            x = chunk(x);
            chunks += 1;
        }
        black_box(x);
        let per_chunk = started.elapsed().as_nanos() as f64 / chunks as f64;
        ((target.as_nanos() as f64 / per_chunk).ceil() as u64).max(1)
    })
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let (target, runs, cap) = budgeted(shape(ctx.suite), ctx.runner.config());
    let host = ctx.host().clone();
    let cpu = host.first_allowed_cpu();
    let chunks = calibrate(host.as_ref(), cpu, target).map_err(ProbeError::Failed)?;
    let classes = Classes::check(classes(ctx.suite))?;
    let cancel = std::sync::Arc::clone(&ctx.runner.config().cancel);
    let mut results = Vec::new();
    let mut alone_medians: BTreeMap<&str, f64> = BTreeMap::new();
    let mut clock = crate::sweep_time::PointClock::start();
    let mut out_of_time = Vec::new();
    for condition in [Condition::Alone, Condition::Contended, Condition::Loaded] {
        for &class in &classes.available {
            check_cancel(&cancel)?;
            let name = format!("sched.priority/{}/{}", condition.label(), class.label());
            if !results.is_empty() && !ctx.runner.config().has_time_for(clock.last) {
                out_of_time.push(name);
                continue;
            }
            clock.point_begins();
            // A safety net only (the hogs stop when dropped).
            let hogs = condition.hogs(&host, cpu, 2 * cap * (runs as u32 + 1) + HOG_SLACK);
            let allowed = condition.cpus(host.as_ref(), cpu);
            let jobs: Vec<JobRun> = (0..runs)
                .map(|_| run_job(host.as_ref(), &allowed, class, (chunks, cap), &hogs))
                .collect::<Result<_, _>>()
                .map_err(ProbeError::Failed)?;
            drop(hogs);
            clock.point_ended();
            let method = format!(
                "a {} ms job at {}, {}",
                target.as_millis(),
                class.describe(),
                condition.describe(cpu)
            );
            let Some(result) = ctx.runner.record_observations(
                &name,
                &method,
                jobs.iter().map(|j| j.completion_ns).collect(),
            ) else {
                continue;
            };
            let result = describe(result, &jobs, cap);
            let result = match condition {
                Condition::Alone => {
                    alone_medians.insert(class.label(), result.summary.median);
                    result
                }
                _ => match alone_medians.get(class.label()) {
                    Some(alone) => {
                        let slowdown = result.summary.median / alone;
                        result.with_parameter(key::SLOWDOWN_VS_ALONE, slowdown)
                    }
                    None => result,
                },
            };
            results.push(result);
        }
    }
    classes.note_skipped(&mut results);
    crate::sweep_time::note_left_out(&mut results, "", &out_of_time);
    Ok(results)
}

/// The suite's shape within the budget's share of it ([`latlab_engine::Config::share`]):
/// fewer runs of each job (never fewer than the engine's minimum of samples and the cold
/// one), and an earlier cap on a starved job (never below three times the job's length,
/// where the extrapolation from the chunks done still reads a starved job as starved).
fn budgeted(
    (target, runs, cap): (Duration, usize, Duration),
    config: &latlab_engine::Config,
) -> (Duration, usize, Duration) {
    let share = config.budget_share();
    let runs = ((runs as f64 * share).ceil() as usize).clamp(latlab_engine::MIN_SAMPLES + 1, runs);
    let cap = cap.mul_f64(share).clamp(3 * target, cap);
    (target, runs, cap)
}

/// The share, the CPUs and whether every run finished, as parameters.
fn describe(result: BenchResult, jobs: &[JobRun], cap: Duration) -> BenchResult {
    let mut shares: Vec<f64> = jobs.iter().map(|j| j.cpu_share).collect();
    shares.sort_by(f64::total_cmp);
    let mut cpus: BTreeMap<i32, u64> = BTreeMap::new();
    for job in jobs {
        for (&cpu, &n) in &job.cpus {
            *cpus.entry(cpu).or_insert(0) += n;
        }
    }
    let total: u64 = cpus.values().sum::<u64>().max(1);
    let run_on: Vec<i64> = cpus.keys().map(|&cpu| i64::from(cpu)).collect();
    let shares_of_time: Vec<f64> = cpus.values().map(|&n| n as f64 / total as f64).collect();
    let finished = jobs.iter().filter(|j| j.finished).count();
    let result = result
        .with_parameter(key::CPU_SHARE, shares[shares.len() / 2])
        .with_parameter(CPUS_RUN_ON, Value::Integers(run_on))
        .with_parameter(SHARE_OF_TIME_PER_CPU, Value::Numbers(shares_of_time))
        .with_parameter(COMPLETED, finished)
        .with_parameter(JOBS, jobs.len());
    if finished == jobs.len() {
        result
    } else {
        // The others were stopped at the cap; their completion time is extrapolated from the
        // share of the job they did: the figure is an estimate, and says so.
        let mut result = result.with_parameter(EXTRAPOLATED_AFTER_S, cap.as_secs_f64());
        result.kind = latlab_engine::model::ResultKind::Extrapolated;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stopped job's completion time is extrapolated from what it did, and says so.
    /// Every suite runs each class often enough for an interval of the median (the first
    /// run is the cold one), and the quick suite does it with fewer classes.
    #[test]
    fn each_class_gets_enough_runs_for_an_interval() {
        use latlab_engine::stats::MIN_SAMPLES_FOR_INTERVAL;
        for suite in [Suite::Quick, Suite::Full] {
            let (_, runs, _) = shape(suite);
            assert!(runs > MIN_SAMPLES_FOR_INTERVAL, "{suite:?}: {runs} runs");
        }
        assert!(classes(Suite::Quick).len() < classes(Suite::Full).len());
    }

    #[test]
    fn a_figure_from_a_stopped_job_is_marked_extrapolated() {
        use latlab_engine::model::ResultKind;
        let job = |finished| JobRun {
            completion_ns: 2.7e8,
            cpu_share: 0.5,
            finished,
            cpus: BTreeMap::from([(0, 10)]),
        };
        let result = || {
            BenchResult::derived(
                "sched.priority/loaded/idle",
                "m",
                vec![2.7e8; 6],
                vec![],
                vec![],
            )
            .unwrap()
        };
        let cap = Duration::from_millis(100);
        let finished = describe(result(), &[job(true), job(true)], cap);
        assert_ne!(finished.kind, ResultKind::Extrapolated);
        let stopped = describe(result(), &[job(true), job(false)], cap);
        assert_eq!(stopped.kind, ResultKind::Extrapolated);
        assert_eq!(stopped.parameter(COMPLETED).unwrap().as_u64(), Some(1));
    }

    #[test]
    fn a_capped_job_is_extrapolated() {
        let host: latlab_engine::SharedHost =
            std::sync::Arc::new(latlab_engine::RealHost::default());
        let cpu = host.first_allowed_cpu();
        let no_hogs = Condition::Alone.hogs(&host, cpu, Duration::from_secs(5));
        let run = |chunks, cap| {
            run_job(host.as_ref(), &[cpu], Class::Nice0, (chunks, cap), &no_hogs).unwrap()
        };
        let started = Instant::now();
        let job = run(1 << 40, Duration::from_millis(20));
        assert!(!job.finished);
        assert!(job.completion_ns > 1e9, "{} ns", job.completion_ns);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the cap was kept"
        );
        let whole = run(10, Duration::from_secs(10));
        assert!(whole.finished);
        assert!(whole.cpu_share > 0.0 && whole.cpu_share <= 1.2);
    }

    /// A SCHED_IDLE job against a hog on its CPU is stopped near its cap, though it may wait
    /// far longer than the cap for a slice: the measuring thread keeps the cap. The job's
    /// work takes 200 ms alone, so uncapped it would take many seconds at SCHED_IDLE's share;
    /// the bound leaves room for other tests that load this CPU while the job exits.
    #[test]
    fn a_starved_job_is_stopped_at_its_cap() {
        let _alone = crate::load_cpus();
        let host: latlab_engine::SharedHost =
            std::sync::Arc::new(latlab_engine::RealHost::default());
        let cpu = host.first_allowed_cpu();
        let chunks = calibrate(host.as_ref(), cpu, Duration::from_millis(200)).unwrap();
        let hogs = Condition::Contended.hogs(&host, cpu, Duration::from_secs(10));
        let cap = Duration::from_millis(30);
        for _ in 0..3 {
            let started = Instant::now();
            let job = run_job(
                host.as_ref(),
                &[cpu],
                Class::SchedIdle,
                (chunks, cap),
                &hogs,
            )
            .unwrap();
            let took = started.elapsed();
            assert!(!job.finished || job.completion_ns < 1e9);
            assert!(took < Duration::from_secs(2), "took {took:?}");
        }
    }

    /// Against a nice-0 hog on its CPU, a nice-19 job is much slower than the same job at
    /// nice 0; alone on its CPU, its nice matters far less (its slowdown against nice 0 is
    /// under half the contended one). The orderings are the kernel's; the test only reads
    /// them.
    #[test]
    fn nice_matters_under_contention_only() {
        let _alone = crate::load_cpus();
        let host: latlab_engine::SharedHost =
            std::sync::Arc::new(latlab_engine::RealHost::default());
        let cpu = host.first_allowed_cpu();
        // Several scheduler slices long (EEVDF's base slice is a few milliseconds): a job
        // shorter than one slice can finish before the hog is ever picked, whatever its nice.
        let chunks = calibrate(host.as_ref(), cpu, Duration::from_millis(30)).unwrap();
        let cap = Duration::from_millis(300);
        let time = |class: Class, condition: Condition| {
            let hogs = condition.hogs(&host, cpu, Duration::from_secs(5));
            let mut runs: Vec<f64> = (0..3)
                .map(|_| {
                    run_job(host.as_ref(), &[cpu], class, (chunks, cap), &hogs)
                        .unwrap()
                        .completion_ns
                })
                .collect();
            runs.sort_by(f64::total_cmp);
            runs[1]
        };
        let contended_nice = time(Class::Nice19, Condition::Contended);
        let contended_normal = time(Class::Nice0, Condition::Contended);
        assert!(
            contended_nice > 2.0 * contended_normal,
            "contended: nice 19 {contended_nice} ns, nice 0 {contended_normal} ns"
        );
        let alone_nice = time(Class::Nice19, Condition::Alone);
        let alone_normal = time(Class::Nice0, Condition::Alone);
        let (alone, contended) = (alone_nice / alone_normal, contended_nice / contended_normal);
        assert!(
            2.0 * alone < contended,
            "nice 19 against nice 0: {alone:.2}x alone, {contended:.2}x contended"
        );
    }
}
