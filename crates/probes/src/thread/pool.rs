//! `thread.pool`: an oversubscribed pool, where the kernel must switch between more runnable
//! threads than there are CPUs.
//!
//! Each worker waits on its own semaphore, runs its share of the round's jobs (a job is a
//! chain of dependent multiply-adds, about a microsecond) and counts down a shared futex
//! word; the main thread posts every worker's semaphore and sleeps until the count reaches
//! zero. One timed call is one round of 16 jobs (`--workers`), and the figure is per job.
//! Measured with 16 workers (one job each) and with as many workers as this run has CPUs (16
//! ÷ CPUs jobs each, rounded up), beside the job run inline on one thread. Both pools do the
//! same jobs per round and wake the main thread once, so what the 16-worker pool adds is the
//! waking of, and switching between, more threads than CPUs.

use super::semaphore::{Semaphore, futex_wait, futex_wake};
use crate::helper::spawn_named;
use crate::options::{Kind, OptionSpec};
use crate::peer::{Failure, leave_realtime, time_limit};
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::parameters::Key;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

const CPU_COUNT: Key = Key::new("cpu_count");
const JOB_STEPS_KEY: Key = Key::new("job_steps");
const JOBS_PER_WORKER: Key = Key::new("jobs_per_worker");
const WORKERS: Key = Key::new("workers");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "thread.pool",
    method: "16 jobs a round on 16 workers (and on one worker per CPU) woken by semaphores: time per job",
    timing: crate::Timing::LessEmptyLoop,
    results: &["thread.pool/job-alone", "thread.pool/workers-{n}"],
    typical: Typical::quick_full(0.34, 2.6),
    extras: crate::Extras {
        options: &[&WORKERS_OPTION],
        ..crate::Extras::NONE
    },
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

/// `--workers`: the pool's workers, and its jobs per round (16 unless it says otherwise).
pub(crate) const WORKERS_OPTION: OptionSpec = OptionSpec {
    name: "workers",
    kind: Kind::Count {
        min: 1,
        max: Some(1024),
        unit: "threads",
    },
    default: Some("16"),
    help: "Workers of the oversubscribed thread pool (thread.pool), and its jobs per round.",
    heading: "Thread and IPC probes",
};
/// Multiply-adds of one job.
const JOB_STEPS: u64 = 1000;

/// The fixed job: a chain of dependent multiply-adds the compiler cannot shorten.
fn job(seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..JOB_STEPS {
        x = black_box(x)
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
    }
    x
}

/// What the main thread and the workers share.
#[derive(Default)]
struct Round {
    go: Vec<Semaphore>,
    jobs_per_worker: usize,
    remaining: AtomicU32,
    stop: AtomicBool,
    sink: AtomicU64,
}

impl Round {
    /// Releases every worker and sleeps until all have run their job.
    fn run_all(&self, limit: Duration) -> Result<(), String> {
        self.remaining
            .store(self.go.len() as u32, Ordering::Release);
        for go in &self.go {
            go.post();
        }
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = self.remaining.load(Ordering::Acquire);
            if left == 0 {
                return Ok(());
            }
            let time_left = deadline.saturating_duration_since(std::time::Instant::now());
            if time_left.is_zero() {
                return Err(format!("{left} pool workers did not finish their job"));
            }
            futex_wait(&self.remaining, left, time_left);
        }
    }

    fn worker(&self, index: usize, limit: Duration) {
        loop {
            if self.go[index].wait(limit).is_err() || self.stop.load(Ordering::Acquire) {
                return;
            }
            for j in 0..self.jobs_per_worker {
                self.sink
                    .fetch_add(job((index + j) as u64), Ordering::Relaxed);
            }
            if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                futex_wake(&self.remaining, 1);
            }
        }
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let cpus = ctx.host().allowed_cpus().len().max(1);
    let mut seed = 1;
    let mut results = vec![
        ctx.runner
            .bench(
                "thread.pool/job-alone",
                "the job, run inline on the measuring thread",
                || {
                    seed += 1;
                    job(seed)
                },
            )?
            .with_parameter(JOB_STEPS_KEY, JOB_STEPS),
    ];
    // The declared default always parses (a test of the declarations says so): the floor
    // is never reached.
    let jobs = ctx.options.count(&WORKERS_OPTION).unwrap_or(1);
    let mut sizes = vec![jobs];
    if cpus != jobs {
        sizes.push(cpus);
    }
    for workers in sizes {
        results.push(measure_pool(ctx, workers, jobs, cpus)?);
    }
    Ok(results)
}

fn measure_pool(
    ctx: &mut ProbeContext,
    workers: usize,
    jobs: usize,
    cpus: usize,
) -> Result<BenchResult, ProbeError> {
    let limit = time_limit(ctx.runner);
    let jobs_per_worker = jobs.div_ceil(workers);
    let round = Arc::new(Round {
        go: (0..workers).map(|_| Semaphore::default()).collect(),
        jobs_per_worker,
        ..Round::default()
    });
    let mut threads = Vec::with_capacity(workers);
    let failure = Failure::default();
    for index in 0..workers {
        let round = Arc::clone(&round);
        match spawn_named(&format!("latlab-pool-{index}"), move || {
            leave_realtime();
            round.worker(index, limit)
        }) {
            Ok(thread) => threads.push(thread),
            Err(refused) => {
                failure.fail(refused);
                break;
            }
        }
    }
    let name = format!("thread.pool/workers-{workers}");
    let outcome = if failure.has_failed() {
        Err(ProbeError::Failed(failure.reason().unwrap_or_default()))
    } else {
        failure.guard(ctx.runner, |runner| {
            Ok(runner.bench(
                &name,
                &format!(
                    "{workers} workers × {jobs_per_worker} jobs on {cpus} CPUs: post all, sleep until all are done"
                ),
                || {
                    if let Err(e) = round.run_all(limit) {
                        failure.fail(format!("{name}: {e}"));
                    }
                },
            )?)
        })
    };
    round.stop.store(true, Ordering::Release);
    for go in &round.go {
        go.post();
    }
    for thread in threads {
        let _ = thread.join();
    }
    Ok(outcome?
        .per_operation((workers * jobs_per_worker) as u64)
        .with_parameter(WORKERS, workers)
        .with_parameter(JOBS_PER_WORKER, jobs_per_worker)
        .with_parameter(CPU_COUNT, cpus)
        .with_parameter(JOB_STEPS_KEY, JOB_STEPS))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No pool runs a job faster than its CPUs could all at once, and each reports its
    /// shape.
    #[test]
    fn a_pool_is_never_faster_than_its_cpus() {
        let (results, runner) =
            crate::run_for_test(&SPEC, 7, std::time::Duration::from_micros(500));
        let alone = results[0].summary.median;
        let cpus = runner.host().allowed_cpus().len().max(1) as f64;
        for pool in &results[1..] {
            assert!(
                pool.summary.median > 0.8 * alone / cpus,
                "{}: {} ns a job, alone {alone} ns",
                pool.name,
                pool.summary.median
            );
            let workers = pool.parameter(WORKERS).unwrap().as_u64().unwrap() as usize;
            let jobs = pool.parameter(JOBS_PER_WORKER).unwrap().as_u64().unwrap() as usize;
            let default = crate::OptionValues::default()
                .count(&WORKERS_OPTION)
                .unwrap();
            assert!(workers * jobs >= default, "{}", pool.name);
        }
    }
}
