//! `thread.core_to_core`: the round trip of a cache line between two CPUs, for every pair.
//!
//! Two threads pinned to CPUs `a` and `b` bounce one cache line (alone on its 128 bytes, so
//! no neighbour shares it), both spinning, neither ever sleeping:
//!
//! * `cas`: `a` waits until a compare-and-swap from 0 to 1 succeeds; `b` swaps it back from
//!   1 to 0 as soon as it can. One timed call of `a` is one round trip of the line.
//! * `rw`: `a` stores an odd sequence number and spins reading until `b`, spinning on reads,
//!   has stored the next even one: plain loads and stores, no read-modify-write.
//!
//! Every pair of CPUs is measured (at most 16 CPUs, evenly spread over the online ones, so a
//! large machine stays within seconds), each pair with a third of the suite's samples; the
//! `all-pairs` result summarises the pairs' medians (median and spread over pairs), and each
//! pair's own result carries its CPUs. Where CPUs sit on different sockets or core complexes,
//! the matrix shows it.

use crate::helper::spawn_pinned;
use crate::mem::sweep_point;
use crate::peer::{Failure, time_limit};
use crate::{ProbeContext, ProbeError, ProbeSpec};
use latlab_engine::Host;
use latlab_engine::host::AffinityGuard;
use latlab_engine::names::{key, result as name};
use latlab_engine::{BenchResult, Runner};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "thread.core_to_core",
    method: "a cache line bounced between threads pinned to two CPUs (CAS and read/write), every pair",
    run,
};

/// The most CPUs whose pairs are all measured.
const MAX_CPUS: usize = 16;
/// A pair's results are folded in the terminal table when there are more pairs than this.
const FOLD_PAIRS_ABOVE: usize = 6;

/// The line the two threads bounce, alone on two cache lines (adjacent-line prefetchers
/// fetch 128-byte pairs).
#[repr(align(128))]
#[derive(Default)]
struct Line {
    word: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
enum Bounce {
    Cas,
    ReadWrite,
}

impl Bounce {
    fn label(self) -> &'static str {
        match self {
            Bounce::Cas => "cas",
            Bounce::ReadWrite => "rw",
        }
    }
}

/// Spins until `done` holds, giving up (false) after `limit`.
#[inline(always)]
fn spin_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let mut spins = 0u32;
    let mut deadline = None;
    while !done() {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins % (1 << 16) == 0 {
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + limit);
            if Instant::now() > deadline {
                return false;
            }
        }
    }
    true
}

/// The CPUs whose pairs are measured: the online ones, or at most [`MAX_CPUS`] of them
/// evenly spread.
fn chosen_cpus(host: &dyn Host) -> Vec<usize> {
    let cpus = host.every_cpu();
    if cpus.len() <= MAX_CPUS {
        return cpus;
    }
    (0..MAX_CPUS)
        .map(|i| cpus[i * cpus.len() / MAX_CPUS])
        .collect()
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let cpus = chosen_cpus(ctx.host().as_ref());
    let pairs: Vec<(usize, usize)> = cpus
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| cpus[i + 1..].iter().map(move |&b| (a, b)))
        .collect();
    if pairs.is_empty() {
        return Err(ProbeError::Failed(
            "this machine has one CPU: there is no pair of CPUs to bounce a line between".into(),
        ));
    }
    let _affinity = AffinityGuard::save(ctx.host());
    let mut results = Vec::new();
    for bounce in [Bounce::Cas, Bounce::ReadWrite] {
        let per_pair = ctx.runner.scoped(sweep_point, |runner| {
            pairs
                .iter()
                .map(|&(a, b)| measure_pair(runner, bounce, a, b))
                .collect::<Result<Vec<_>, _>>()
        })?;
        let medians: Vec<f64> = per_pair.iter().map(|r| r.summary.median).collect();
        let names = per_pair.iter().map(|r| r.name.clone()).collect();
        let summary = BenchResult::derived(
            &format!(
                "{}{}/{}",
                name::CORE_TO_CORE_PREFIX,
                bounce.label(),
                name::ALL_PAIRS
            ),
            &format!(
                "the medians of {} CPU pairs: their median and spread",
                pairs.len()
            ),
            medians,
            Vec::new(),
            names,
        )
        .map(|r| {
            r.with_parameter("pairs", pairs.len())
                .with_parameter(key::CPUS, cpus.as_slice())
        });
        let fold = pairs.len() > FOLD_PAIRS_ABOVE;
        results.extend(per_pair.into_iter().map(|r| r.as_sweep_detail(fold)));
        results.extend(summary);
    }
    Ok(results)
}

fn measure_pair(
    runner: &mut Runner,
    bounce: Bounce,
    a: usize,
    b: usize,
) -> Result<BenchResult, ProbeError> {
    let limit = time_limit(runner);
    let failure = Failure::default();
    let line = Arc::new(Line::default());
    let stop = Arc::new(AtomicBool::new(false));
    let running = Arc::new(AtomicBool::new(false));
    let host = runner.host().clone();
    host.pin_to_cpu(a).map_err(ProbeError::Failed)?;
    let peer = {
        let (line, stop, running, failure) = (
            Arc::clone(&line),
            Arc::clone(&stop),
            Arc::clone(&running),
            failure.clone(),
        );
        spawn_pinned(&host, "latlab-core-to-core", b, move |pinned| {
            if let Err(e) = pinned {
                failure.fail(e);
                return;
            }
            running.store(true, Ordering::Release);
            let deadline = Instant::now() + limit;
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                // Answer a burst of round trips between looks at the stop flag.
                for _ in 0..64 {
                    let answered = match bounce {
                        Bounce::Cas => spin_until(Duration::from_millis(1), || {
                            line.word
                                .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Relaxed)
                                .is_ok()
                        }),
                        Bounce::ReadWrite => spin_until(Duration::from_millis(1), || {
                            let seen = line.word.load(Ordering::Acquire);
                            if seen % 2 == 1 {
                                line.word.store(seen + 1, Ordering::Release);
                                true
                            } else {
                                false
                            }
                        }),
                    };
                    if !answered {
                        break;
                    }
                }
            }
        })?
    };
    let name = format!("{}{}/{a}-{b}", name::CORE_TO_CORE_PREFIX, bounce.label());
    // Calibrate only once the peer answers, or the first, slow call sets the sample size.
    if !spin_until(limit, || {
        running.load(Ordering::Acquire) || failure.has_failed()
    }) {
        failure.fail(format!("{name}: the thread for CPU {b} never started"));
    }
    let mut sequence = 0u64;
    let outcome = failure.guard(runner, |runner| {
        Ok(runner.bench(
            &name,
            &format!(
                "{} round trip of a cache line between CPUs {a} and {b}",
                bounce.label()
            ),
            || {
                let answered = match bounce {
                    Bounce::Cas => spin_until(limit, || {
                        line.word
                            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed)
                            .is_ok()
                    }),
                    Bounce::ReadWrite => {
                        sequence += 2;
                        line.word.store(sequence - 1, Ordering::Release);
                        spin_until(limit, || line.word.load(Ordering::Acquire) == sequence)
                    }
                };
                if !answered {
                    failure.fail(format!("{name}: the thread on CPU {b} stopped answering"));
                }
            },
        )?)
    });
    stop.store(true, Ordering::Relaxed);
    let _ = peer.join();
    Ok(outcome?
        .with_parameter(key::CPU_A, a)
        .with_parameter(key::CPU_B, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Taking a line back from another CPU costs more than incrementing one's own.
    #[test]
    fn a_line_between_cpus_is_slower_than_a_line_at_home() {
        let mut runner = crate::test_runner(7, std::time::Duration::from_micros(500));
        let host = runner.host().clone();
        let Some((a, b)) = crate::thread::cpu_pair(host.as_ref(), crate::thread::Pair::TwoCpus)
        else {
            return; // One CPU: nothing to bounce between.
        };
        let _affinity = AffinityGuard::save(&host);
        let home = AtomicU64::new(0);
        let local = runner
            .bench("local", "fetch_add", || {
                home.fetch_add(1, Ordering::Relaxed)
            })
            .unwrap()
            .summary
            .median;
        for bounce in [Bounce::Cas, Bounce::ReadWrite] {
            let pair = measure_pair(&mut runner, bounce, a, b).unwrap();
            assert!(
                pair.summary.median > local,
                "{}: {} ns vs a local increment {local} ns",
                pair.name,
                pair.summary.median
            );
        }
    }
}
