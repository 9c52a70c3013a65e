//! `thread.core_to_core`: how long a cache line takes to pass from one CPU to another, for
//! every pair.
//!
//! Two threads pinned to CPUs `a` and `b` bounce one cache line (alone on its 128 bytes, so
//! no neighbour shares it), both spinning, neither ever sleeping:
//!
//! * `cas`: `a` waits until a compare-and-swap from 0 to 1 succeeds; `b` swaps it back from
//!   1 to 0 as soon as it can. One timed call of `a` is one round trip of the line.
//! * `rw`: `a` stores an odd sequence number and spins reading until `b`, spinning on reads,
//!   has stored the next even one: plain loads and stores, no read-modify-write.
//!
//! The engine times batches of round trips (thousands per sample, no clock read inside a
//! batch); a figure is **one-way**, half a round trip, as the established core-to-core
//! tools report it, and each pair also carries its `round_trip_ns`. The spins have no
//! `pause` instruction: on current Intel cores it stalls for about 140 cycles, which the
//! waiting side would add to every hand-over it notices late.
//!
//! Every pair of CPUs is measured (at most 16 CPUs, evenly spread over the online ones, so a
//! large machine stays within seconds), each pair with a third of the suite's samples. The
//! `one-way/…/all-pairs` and `round-trip/…/all-pairs` results summarise the pairs' medians.
//!
//! Under a hypervisor the guest sees neither where its vCPUs run nor when they move, so the
//! probe looks for what that does to the figures: a pair whose samples fall in two modes, a
//! pair far faster than the median pair (SMT siblings on the host, which the guest's
//! topology does not show), and the first pair measured again at the end, which should agree
//! with its first measurement. A pair whose one-way figure is under twice an L2 hit, timed
//! on the measuring core just before, behaved as SMT siblings: no line crosses between cores
//! that fast. It says so, and is left out of the all-pairs summaries.

use crate::helper::spawn_pinned;
use crate::mem::sweep_point;
use crate::peer::{Failure, time_limit};
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::Host;
use latlab_engine::analysis::SHARED_CORE_L2_HITS;
use latlab_engine::analysis::{moved_between, two_modes};
use latlab_engine::host::AffinityGuard;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{PairMatrix, Presentation, Template};
use latlab_engine::{BenchResult, Runner, Warning};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const PAIRS: Key = Key::new("pairs");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "thread.core_to_core/one-way/cas/{cpu}-{cpu}",
    "thread.core_to_core/one-way/rw/{cpu}-{cpu}",
    "thread.core_to_core/one-way/cas/all-pairs",
    "thread.core_to_core/one-way/rw/all-pairs",
    "thread.core_to_core/round-trip/cas/all-pairs",
    "thread.core_to_core/round-trip/rw/all-pairs",
];

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "thread.core_to_core",
    method: "one-way: half the round trip of a cache line bounced between threads pinned to two CPUs (CAS and read/write), batch-timed, every pair",
    timing: crate::Timing::LessEmptyLoop,
    results: RESULTS,
    typical: Typical::quick_full(0.08, 0.50),
    extras: crate::Extras {
        timing_note: Some(
            "batches of round trips timed as one (a round trip is hundreds of cycles), halved for one way",
        ),
        ..crate::Extras::NONE
    },
    presentation: Presentation {
        matrices: &[
            pair_matrix(
                "core-to-core-cas",
                "thread.core_to_core/one-way/cas/{cpu}-{cpu}",
                "cas",
                "thread.core_to_core (cas): one-way latency of a cache line between two CPUs \
                 (half a round trip)",
            ),
            pair_matrix(
                "core-to-core-rw",
                "thread.core_to_core/one-way/rw/{cpu}-{cpu}",
                "rw",
                "thread.core_to_core (rw): one-way latency of a cache line between two CPUs \
                 (half a round trip)",
            ),
        ],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::CoreToCore,
            results: RESULTS,
        }],
        ..Presentation::NONE
    },
    run,
};

/// The matrix of the one-way figures of one bounce (`label`) between every two CPUs.
const fn pair_matrix(
    id: &'static str,
    results: &'static str,
    label: &'static str,
    caption: &'static str,
) -> PairMatrix {
    PairMatrix {
        id,
        results: Template(results),
        row: key::CPU_A,
        column: key::CPU_B,
        axis: "CPU",
        label,
        directed: false,
        unit: latlab_engine::presentation::Unit::Nanoseconds,
        caption,
    }
}

/// The probe's results: this prefix, the direction ([`ONE_WAY`], or [`ROUND_TRIP`] for the
/// summaries), the bounce (`cas`, `rw`), then the pair `a-b` or the summary [`ALL_PAIRS`].
const PREFIX: &str = "thread.core_to_core/";
/// Half a round trip: how the established core-to-core tools report a pair.
const ONE_WAY: &str = "one-way";
const ROUND_TRIP: &str = "round-trip";
const ALL_PAIRS: &str = "all-pairs";

/// The most CPUs whose pairs are all measured.
const MAX_CPUS: usize = 16;
/// A pair's results are folded in the terminal table when there are more pairs than this.
const FOLD_PAIRS_ABOVE: usize = 6;
/// A pair this many times faster than the median pair runs on one host core's SMT
/// siblings: a line between siblings stays in their shared L1, a few times faster than any
/// other path.
const SIBLING_RATIO: f64 = 2.0;
/// Pages per group of the L2 reference chase: well within any first-level data TLB.
const REFERENCE_GROUP_PAGES: usize = 16;
/// A core-to-core figure under a hypervisor wanders by a fifth from second to second
/// without the placement changing; a move between core complexes doubles it or more. A
/// pair measured again counts as moved beyond this share (and its noise).
pub(crate) const MOVED_SHARE: f64 = 0.25;

/// The line the two threads bounce, alone on two cache lines (adjacent-line prefetchers
/// fetch 128-byte pairs).
#[repr(align(128))]
#[derive(Default)]
struct Line {
    word: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Bounce {
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

/// Spins until `done` holds, giving up (false) after `limit`. No `pause` (see the module
/// documentation): the line is looked at again as soon as the last look ends.
#[inline(always)]
fn spin_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let mut spins = 0u32;
    let mut deadline = None;
    while !done() {
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(1 << 16) {
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
    let host = Arc::clone(ctx.host());
    let cpus = chosen_cpus(host.as_ref());
    let pairs: Vec<(usize, usize)> = cpus
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| cpus[i + 1..].iter().map(move |&b| (a, b)))
        .collect();
    if pairs.is_empty() {
        return Err(ProbeError::Skipped(
            "this run may use one CPU (the machine has one, or taskset allows one): there is \
             no pair of CPUs to bounce a line between"
                .into(),
        ));
    }
    let _affinity = AffinityGuard::save(&host);
    let l2_hit_ns = l2_hit(ctx)?;
    let mut results = Vec::new();
    let mut first_cas = None;
    for bounce in [Bounce::Cas, Bounce::ReadWrite] {
        let mut per_pair = ctx.runner.scoped(sweep_point, |runner| {
            pairs
                .iter()
                .map(|&(a, b)| measure_pair(runner, bounce, a, b))
                .collect::<Result<Vec<_>, _>>()
        })?;
        flag_placement(&mut per_pair, &pairs, host.as_ref(), l2_hit_ns);
        if let Bounce::Cas = bounce {
            first_cas = Some(per_pair[0].summary.clone());
        }
        // Pairs that behaved as one core's siblings are not core-to-core figures.
        let across: Vec<BenchResult> = per_pair
            .iter()
            .filter(|r| !behaved_as_siblings(r))
            .cloned()
            .collect();
        let summaries = summarise(&across, bounce, &cpus);
        let fold = pairs.len() > FOLD_PAIRS_ABOVE;
        results.extend(per_pair.into_iter().map(|r| r.as_sweep_detail(fold)));
        results.extend(summaries);
    }
    // The first pair again, after every other: under a hypervisor that moves vCPUs, the
    // run's cross-CPU figures depend on when they were taken.
    let (a, b) = pairs[0];
    let again = ctx.runner.scoped(sweep_point, |runner| {
        measure_pair(runner, Bounce::Cas, a, b)
    })?;
    let moved = first_cas.and_then(|first| moved_between(&first, &again.summary, MOVED_SHARE));
    if let Some(moved) = moved {
        // The figures it states are one-way: it goes on the one-way summary, and on the
        // pair that moved, which a reader would otherwise take as steady.
        let summary = format!(
            "{}{}/{}/{}",
            PREFIX,
            ONE_WAY,
            Bounce::Cas.label(),
            ALL_PAIRS
        );
        let pair = format!("{}{}/{}/{a}-{b}", PREFIX, ONE_WAY, Bounce::Cas.label());
        for r in results
            .iter_mut()
            .filter(|r| r.name == summary || r.name == pair)
        {
            r.warnings.push(moved.clone());
        }
    }
    Ok(results)
}

/// An L2 hit on the measuring core now, in ns: a dependent-load chase over half the L2
/// the kernel reports, timed by slope, as `mem.latency` times it, its lines taken in groups
/// of [`REFERENCE_GROUP_PAGES`] pages so that the first-level TLB holds every page in use
/// (a miss there would add its cost to the hit and raise the bar).
fn l2_hit(ctx: &mut ProbeContext) -> Result<f64, ProbeError> {
    use crate::mem::latency::levels::reported_size;
    use crate::mem::latency::{PREFETCH_PROOF_STRIDE, Ring, measure};
    use crate::mem::sizes::{FALLBACK_PRIVATE_CACHE, line_bytes};
    let caches = ctx.host().caches();
    let l2 = reported_size("L2", &caches).unwrap_or(FALLBACK_PRIVATE_CACHE);
    let ring = Ring {
        name: format!("{}l2-reference", PREFIX),
        label: "pagegroups",
        layout: crate::mem::latency::chase::Layout::PageGroups {
            group_bytes: REFERENCE_GROUP_PAGES * crate::mem::pages::mapped::page_size(),
        },
        size: l2 / 2,
        stride: PREFETCH_PROOF_STRIDE,
        line: line_bytes(&caches),
        huge_pages: false,
        slope: true,
    };
    // The suite's full samples, not a sweep point's: noise only ever raises the figure.
    Ok(measure(ctx.runner, ring, None)?.summary.median)
}

fn behaved_as_siblings(result: &BenchResult) -> bool {
    result
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::BehavedAsSiblings { .. }))
}

/// The median and spread over the pairs' medians, one-way and as round trips. A machine of
/// one pair summarises that pair itself: its samples, read as the pair's are, not one
/// median a round, which read far from the pair (the book's methods, "Threads and
/// processes").
fn summarise(per_pair: &[BenchResult], bounce: Bounce, cpus: &[usize]) -> Vec<BenchResult> {
    let one_way: Vec<f64> = match per_pair {
        [only] => only.samples_ns.clone(),
        _ => per_pair.iter().map(|r| r.summary.median).collect(),
    };
    let names: Vec<String> = per_pair.iter().map(|r| r.name.clone()).collect();
    [(ONE_WAY, 1.0), (ROUND_TRIP, 2.0)]
        .into_iter()
        .filter_map(|(direction, scale)| {
            BenchResult::derived(
                &format!("{}{direction}/{}/{}", PREFIX, bounce.label(), ALL_PAIRS),
                &format!(
                    "{direction} ({}): the medians of {} CPU pairs, their median and spread",
                    bounce.label(),
                    per_pair.len()
                ),
                one_way.iter().map(|ns| scale * ns).collect(),
                Vec::new(),
                names.clone(),
            )
        })
        .map(|r| {
            r.with_parameter(PAIRS, per_pair.len())
                .with_parameter(key::CPUS, cpus)
        })
        .collect()
}

/// Marks the pairs whose figures depend on where the host runs the vCPUs: two modes in
/// one pair's samples; a pair under [`SHARED_CORE_L2_HITS`] L2 hits (`l2_hit_ns`) one way,
/// which behaved as one core's SMT siblings; and (with three pairs or more) a pair far
/// faster than the median pair. Pairs the machine reports as threads of one core are
/// expected to be fast, and are not marked for it.
fn flag_placement(
    per_pair: &mut [BenchResult],
    pairs: &[(usize, usize)],
    host: &dyn Host,
    l2_hit_ns: f64,
) {
    let mut medians: Vec<f64> = per_pair.iter().map(|r| r.summary.median).collect();
    let typical = latlab_engine::stats::median_in_place(&mut medians);
    let enough_pairs = per_pair.len() >= 3;
    for (result, &(a, b)) in per_pair.iter_mut().zip(pairs) {
        result.warnings.extend(two_modes(&result.samples_ns));
        let ratio = typical / result.summary.median;
        let siblings = host.thread_siblings(a).contains(&b);
        let one_way_ns = result.summary.median;
        if !siblings && one_way_ns < SHARED_CORE_L2_HITS * l2_hit_ns {
            result.warnings.push(Warning::BehavedAsSiblings {
                one_way_ns,
                l2_hit_ns,
            });
        } else if enough_pairs && ratio >= SIBLING_RATIO && !siblings {
            result
                .warnings
                .push(Warning::FasterThanOtherPairs { ratio });
        }
        result
            .parameters
            .insert(key::L2_HIT_NS.to_string(), l2_hit_ns.into());
    }
}

/// The peer's side: answers each round trip on `line` until `stop` or the `deadline`.
fn answer(bounce: Bounce, line: &Line, stop: &AtomicBool, deadline: Instant) {
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
}

/// The one-way latency between CPUs `a` and `b`, half of a timed round trip.
pub(crate) fn measure_pair(
    runner: &mut Runner,
    bounce: Bounce,
    a: usize,
    b: usize,
) -> Result<BenchResult, ProbeError> {
    let limit = time_limit(runner);
    let failure = Failure::default();
    let line = Arc::new(Line::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (started, running) = std::sync::mpsc::channel::<()>();
    let host = runner.host().clone();
    host.pin_to_cpu(a).map_err(ProbeError::Failed)?;
    let peer = {
        let (line, stop, failure) = (Arc::clone(&line), Arc::clone(&stop), failure.clone());
        spawn_pinned(&host, "latlab-core-to-core", b, move |pinned| {
            // A refused pinning is recorded first, then the measuring thread's wait ends
            // either way.
            let pinned = pinned.map_err(|e| failure.fail(e)).is_ok();
            let _ = started.send(());
            if !pinned {
                return;
            }
            answer(bounce, &line, &stop, Instant::now() + limit);
        })?
    };
    let name = format!("{}{}/{}/{a}-{b}", PREFIX, ONE_WAY, bounce.label());
    // Calibrate only once the peer answers, or the first, slow call sets the sample size.
    // The wait blocks rather than spins: the peer starts on this thread's CPU (it inherits
    // the affinity) and, under --rt, its real-time class, so a spinning wait at SCHED_FIFO
    // would keep it from ever running there and leaving for its own CPU.
    if running.recv_timeout(limit).is_err() {
        failure.fail(format!("{name}: the thread for CPU {b} never started"));
    }
    let mut sequence = 0u64;
    let outcome = failure.guard(runner, |runner| {
        Ok(runner.bench(
            &name,
            &format!(
                "one-way ({}): half a round trip of a cache line between CPUs {a} and {b}, \
                 batches of round trips timed as one",
                bounce.label()
            ),
            || {
                // Once the peer has stopped, each call would wait out the limit again: the
                // rest of the sample returns at once, and the runner stops at its end.
                if failure.has_failed() {
                    return;
                }
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
    let one_way = outcome?.per_operation(2);
    let round_trip_ns = 2.0 * one_way.summary.median;
    Ok(one_way
        .with_parameter(key::CPU_A, a)
        .with_parameter(key::CPU_B, b)
        .with_parameter(key::ROUND_TRIP_NS, round_trip_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair under twice an L2 hit one way behaved as one core's siblings, and says so; a
    /// pair at a cross-core figure does not (the book's "Threads and processes").
    #[test]
    fn a_pair_faster_than_two_l2_hits_behaved_as_siblings() {
        let host = latlab_engine::SyntheticHost::default();
        let pair =
            |ns: f64| BenchResult::derived("p", "m", vec![ns; 10], Vec::new(), Vec::new()).unwrap();
        let mut per_pair = vec![pair(7.63), pair(51.0)];
        flag_placement(&mut per_pair, &[(0, 1), (0, 2)], &host, 5.4);
        assert!(behaved_as_siblings(&per_pair[0]));
        assert!(!behaved_as_siblings(&per_pair[1]));
        assert_eq!(
            per_pair[1].parameter(key::L2_HIT_NS).unwrap().as_f64(),
            Some(5.4)
        );
        // Above two L2 hits but far faster than the median pair: the other mark.
        let mut per_pair = vec![pair(20.0), pair(60.0), pair(62.0)];
        flag_placement(&mut per_pair, &[(0, 1), (0, 2), (1, 2)], &host, 5.4);
        assert!(matches!(
            per_pair[0].warnings[..],
            [Warning::FasterThanOtherPairs { ratio }] if ratio == 3.0
        ));
        assert!(per_pair[1].warnings.is_empty() && per_pair[2].warnings.is_empty());
    }

    /// Taking a line back from another CPU costs more than incrementing one's own.
    #[test]
    fn a_line_between_cpus_is_slower_than_a_line_at_home() {
        if crate::skipped_under_emulation() {
            return;
        }
        let mut runner = crate::test_runner(7, std::time::Duration::from_micros(500));
        let host = runner.host().clone();
        let Some((a, b)) = crate::thread::cpu_pair(host.as_ref(), crate::thread::Pair::TwoCpus)
        else {
            latlab_test_support::skip!("one CPU: nothing to bounce a line between");
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
            let round_trip = pair
                .parameter(key::ROUND_TRIP_NS)
                .unwrap()
                .as_f64()
                .unwrap();
            assert_eq!(round_trip, 2.0 * pair.summary.median, "{}", pair.name);
            assert!(pair.name.contains("/one-way/"), "{}", pair.name);
        }
    }

    /// On a synthetic machine of four CPUs, every pair has a one-way result, the summaries
    /// come one-way and as round trips (twice the one-way figures), and the first pair is
    /// measured again at the end.
    #[test]
    fn every_pair_one_way_and_the_summaries_both_ways() {
        let mut runner = crate::synthetic_runner();
        let results = run(&mut ProbeContext::for_test(&mut runner)).unwrap();
        let named = |n: &str| crate::named(&results, &format!("thread.core_to_core/{n}"));
        let mut summaries = 0;
        for bounce in ["cas", "rw"] {
            let across = ["0-1", "0-2", "0-3", "1-2", "1-3", "2-3"]
                .iter()
                .filter(|pair| !behaved_as_siblings(named(&format!("one-way/{bounce}/{pair}"))))
                .count();
            // The summaries are over the pairs that crossed between cores (the synthetic
            // host's figures are made up, so which did is the host's to say).
            if across > 0 {
                let one_way = named(&format!("one-way/{bounce}/all-pairs"));
                let round_trip = named(&format!("round-trip/{bounce}/all-pairs"));
                assert_eq!(round_trip.summary.median, 2.0 * one_way.summary.median);
                assert_eq!(one_way.samples_ns.len(), across);
                summaries += 2;
            }
        }
        assert_eq!(results.len(), 2 * 6 + summaries);
    }

    /// A machine of one pair summarises that pair itself: the summary reads what the pair
    /// reads, one way and as a round trip, rounds merged alike.
    #[test]
    fn one_pair_is_its_own_summary() {
        let samples: Vec<f64> = (0..30).map(|i| 80.0 + (i % 7) as f64 * 10.0).collect();
        let pair = BenchResult::derived(
            "thread.core_to_core/one-way/cas/0-1",
            "test",
            samples,
            Vec::new(),
            Vec::new(),
        )
        .unwrap();
        let summaries = summarise(std::slice::from_ref(&pair), Bounce::Cas, &[0, 1]);
        assert_eq!(summaries[0].summary.median, pair.summary.median);
        assert_eq!(summaries[1].summary.median, 2.0 * pair.summary.median);
        assert_eq!(summaries[0].samples_ns, pair.samples_ns);
    }
}
