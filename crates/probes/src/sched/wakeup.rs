//! `sched.wakeup`: how late a sleeping thread wakes, per scheduling class, alone and under
//! contention, as cyclictest measures it.
//!
//! A thread in each class ([`Class`]: nice 0, nice 19, SCHED_BATCH (full suite only),
//! SCHED_IDLE, and SCHED_FIFO where permitted) sleeps until absolute times 1 ms apart
//! (`clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`), reads the clock when it wakes, and
//! records how late it is. Alone on its CPU, and against a nice-0 thread spinning on that
//! CPU. Samples are the latencies; parameters give p50/p90/p99/p99.9, the worst and a
//! histogram in power-of-two microsecond buckets. A class starved under contention takes
//! longer per wake-up: each condition stops after its time budget, with the count it got.

use super::{Class, Classes, Condition, check_cancel, on_thread};
use crate::monotonic::{monotonic_now, sleep_until};
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical};
use latlab_engine::BenchResult;
use latlab_engine::model::distribution::with_distribution;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{Presentation, Template};
use std::time::{Duration, Instant};

const WAKE_UPS: Key = Key::summed("wake_ups");
const WAKE_UPS_WANTED: Key = Key::summed("wake_ups_wanted");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "sched.wakeup",
    method: "clock_nanosleep to absolute times 1 ms apart, lateness per class, alone and against a hog",
    timing: crate::Timing::Events,
    results: &[
        "sched.wakeup/alone/nice0",
        "sched.wakeup/alone/nice19",
        "sched.wakeup/alone/batch",
        "sched.wakeup/alone/idle",
        "sched.wakeup/alone/fifo",
        "sched.wakeup/contended/nice0",
        "sched.wakeup/contended/nice19",
        "sched.wakeup/contended/batch",
        "sched.wakeup/contended/idle",
        "sched.wakeup/contended/fifo",
    ],
    typical: Typical::quick_full(2.1, 25.0),
    extras: crate::Extras::NONE,
    presentation: Presentation {
        // Every event is a sample; the tails are the point of measuring them one by one.
        distributions: &[
            Template("sched.wakeup/alone/nice0"),
            Template("sched.wakeup/alone/nice19"),
            Template("sched.wakeup/alone/batch"),
            Template("sched.wakeup/alone/idle"),
            Template("sched.wakeup/alone/fifo"),
            Template("sched.wakeup/contended/nice0"),
            Template("sched.wakeup/contended/nice19"),
            Template("sched.wakeup/contended/batch"),
            Template("sched.wakeup/contended/idle"),
            Template("sched.wakeup/contended/fifo"),
        ],
        ..Presentation::NONE
    },
    run,
};

const INTERVAL: Duration = Duration::from_millis(1);

/// Wake-ups per class and condition, and the time allowed for them.
fn shape(suite: Suite) -> (usize, Duration) {
    match suite {
        Suite::Quick => (200, Duration::from_millis(400)),
        Suite::Full => (2000, Duration::from_secs(4)),
    }
}

/// The classes a suite compares: the quick one leaves out SCHED_BATCH, as `sched.priority`'s
/// quick suite keeps only the extremes (and SCHED_FIFO, the class made for wake-ups).
fn classes(suite: Suite) -> &'static [Class] {
    match suite {
        Suite::Quick => &[Class::Nice0, Class::Nice19, Class::SchedIdle, Class::Fifo],
        Suite::Full => &[
            Class::Nice0,
            Class::Nice19,
            Class::SchedBatch,
            Class::SchedIdle,
            Class::Fifo,
        ],
    }
}

/// Sleeps until each of `count` absolute times `INTERVAL` apart (at most `budget` in all);
/// returns how late each wake-up was, in ns.
fn wake_ups(count: usize, budget: Duration) -> Vec<f64> {
    let started = Instant::now();
    let mut next = monotonic_now() + INTERVAL;
    let mut late = Vec::with_capacity(count);
    while late.len() < count && started.elapsed() < budget {
        sleep_until(next);
        let now = monotonic_now();
        late.push(now.saturating_sub(next).as_nanos() as f64);
        // The next period after now, as cyclictest does when a wake-up overruns.
        while next <= now {
            next += INTERVAL;
        }
    }
    late
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let (count, budget) = shape(ctx.suite);
    let config = ctx.runner.config();
    let (count, budget) = (
        config.samples_per_round(count),
        config.time_per_round(budget),
    );
    let host = ctx.host().clone();
    let cpu = host.first_allowed_cpu();
    let classes = Classes::check(classes(ctx.suite))?;
    let cancel = std::sync::Arc::clone(&ctx.runner.config().cancel);
    let mut results = Vec::new();
    for condition in [Condition::Alone, Condition::Contended] {
        for &class in &classes.available {
            check_cancel(&cancel)?;
            let hogs = condition.hogs(&host, cpu, budget * 2);
            let late = on_thread(host.as_ref(), &[cpu], class, || wake_ups(count, budget))
                .map_err(ProbeError::Failed)?;
            drop(hogs);
            let got = late.len();
            let name = format!("sched.wakeup/{}/{}", condition.label(), class.label());
            let method = format!(
                "lateness of a clock_nanosleep(TIMER_ABSTIME) wake-up every 1 ms at {}, {}",
                class.describe(),
                condition.describe(cpu)
            );
            if let Some(result) = ctx.runner.record_observations(&name, &method, late) {
                results.push(describe(result, got, count));
            }
        }
    }
    classes.note_skipped(&mut results);
    Ok(results)
}

fn describe(result: BenchResult, got: usize, wanted: usize) -> BenchResult {
    with_distribution(result)
        .with_parameter(WAKE_UPS, got)
        .with_parameter(WAKE_UPS_WANTED, wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wake-up is never early, and a thread that sleeps wakes within the interval it slept
    /// most of the time on an idle CPU.
    #[test]
    fn wake_ups_are_late_never_early() {
        let _quiet = crate::quiet_cpus();
        let late = wake_ups(50, Duration::from_secs(2));
        assert_eq!(late.len(), 50);
        assert!(late.iter().all(|&ns| ns >= 0.0), "{late:?}");
        let mut sorted = late.clone();
        let median = latlab_engine::stats::median_in_place(&mut sorted);
        assert!(median < INTERVAL.as_nanos() as f64 * 10.0);
    }
}
