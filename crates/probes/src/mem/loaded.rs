//! `mem.loaded`: what a load that misses to main memory costs while the other CPUs stream
//! through memory, and the peak bandwidth of every CPU together by mix of reads and writes.
//!
//! One thread, pinned to the first CPU the run may use, chases a `pagegroups` ring in main
//! memory as `mem.latency` measures its `DRAM` level (random lines within 64-page groups,
//! one per 256 bytes, 16 dependent loads a call, the empty loop subtracted), over eight
//! times the last cache the latency curve found (twice the kernel's last-level cache where
//! it found none), at most 128 MiB. Every other CPU the run may use runs a loader: passes
//! over a buffer of its own (the loaders' buffers together four times the larger of the
//! kernel's last-level cache and the curve's, at most 256 MiB) in one of four mixes:
//! `read` (a sum), `copy` (1:1 reads to writes, `b[i] = a[i]`), `triad` (2:1,
//! `a[i] = b[i] + 3·c[i]`) and `write` (a value stored). After every two cache lines of each
//! array a loader counts `delay` turns of an empty loop, the injection delay of Intel's
//! Memory Latency Checker and multichase's `multiload`. The delays are swept from none to
//! idle (no loader at all), giving points of (load bandwidth, chase latency): the curve
//! that bends upward as the load nears the peak. A point's result is `mem.loaded/MIX/N`, N
//! from 0 (no delay, the heaviest load) to the idle point; its median is the chase's
//! latency, and its `load_bytes_per_second` what the loaders moved while the chase was
//! measured, reads plus writes as STREAM counts them (a store's fetch of its line is not
//! counted).
//!
//! Then every CPU, the chaser's too, runs each mix with no delay, in windows of at least
//! 10 ms: the peak bandwidth by mix, `mem.loaded/peak/MIX`, with a fifth mix, `3to1`
//! (`a[i] = b[i] + c[i] + d[i]`), as the time per 64-byte line moved (and so bytes per
//! second).
//!
//! The quick suite takes the read mix at three delays and idle, and the peak of reads; the
//! full suite every mix at ten delays and idle, and every peak.

use super::chase::{Chase, Layout, walk};
use super::latency::{LOADS_PER_CALL, PREFETCH_PROOF_STRIDE, TLB_GROUP_PAGES};
use super::sizes::size_label;
use super::{headline_point, sweep_point};
use crate::helper::spawn_pinned;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical, keeping_measured};
use latlab_engine::host::AffinityGuard;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::{BenchResult, Runner, SharedHost};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const LOAD_BYTES_PER_SECOND: Key = Key::new("load_bytes_per_second");
const DELAY_TURNS: Key = Key::new("delay_turns");
const LOADERS: Key = Key::new("loaders");
const UNPINNED_THREADS: Key = Key::new("unpinned_threads");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "mem.loaded/read/{n}",
    "mem.loaded/copy/{n}",
    "mem.loaded/triad/{n}",
    "mem.loaded/write/{n}",
    "mem.loaded/peak/read",
    "mem.loaded/peak/3to1",
    "mem.loaded/peak/triad",
    "mem.loaded/peak/copy",
    "mem.loaded/peak/write",
];

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.loaded",
    method: "a main-memory chase on one CPU while the others stream read, copy, triad or write loads, their injection delay swept from none to idle; and every CPU's peak bandwidth by mix",
    timing: crate::Timing::LessEmptyLoop,
    timing_note: Some(
        "the chase as mem.latency times it; the loads' bandwidth and the peaks from byte counts over clock-timed windows",
    ),
    results: RESULTS,
    typical: Typical {
        quick_s: 0.4,
        full_s: 7.5,
    },
    process: crate::Process::Shared,
    rounds: crate::Rounds::Once {
        why: "each point starts the loaders and waits for their traffic to settle, which \
              costs more than its samples; and the curve is read from all its points",
    },
    presentation: latlab_engine::presentation::Presentation {
        headline: &[crate::headline_row(
            61,
            "Main memory reference under full load",
            None,
            "mem.loaded/read/0",
            "every other CPU reading",
        )],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::MemoryChases,
            results: RESULTS,
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// What a loader does to each element it visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mix {
    /// Sum `a`.
    Read,
    /// `a[i] = b[i] + c[i] + d[i]`: three reads to a write.
    ThreeToOne,
    /// `a[i] = b[i] + 3·c[i]`: two reads to a write.
    Triad,
    /// `b[i] = a[i]`: a read to a write.
    Copy,
    /// Store a value in `a`.
    Write,
}

impl Mix {
    /// The mixes of the loaded-latency curve.
    const CURVE: [Mix; 4] = [Mix::Read, Mix::Copy, Mix::Triad, Mix::Write];
    /// The mixes of the peaks, from reads only to writes only.
    const PEAK: [Mix; 5] = [
        Mix::Read,
        Mix::ThreeToOne,
        Mix::Triad,
        Mix::Copy,
        Mix::Write,
    ];

    fn label(self) -> &'static str {
        match self {
            Mix::Read => "read",
            Mix::ThreeToOne => "3to1",
            Mix::Triad => "triad",
            Mix::Copy => "copy",
            Mix::Write => "write",
        }
    }

    /// The mix in words, for a result's method.
    fn describe(self) -> &'static str {
        match self {
            Mix::Read => "reads only (a sum)",
            Mix::ThreeToOne => "3:1 reads to writes (a[i] = b[i] + c[i] + d[i])",
            Mix::Triad => "2:1 reads to writes (triad, a[i] = b[i] + 3·c[i])",
            Mix::Copy => "1:1 reads to writes (copy, b[i] = a[i])",
            Mix::Write => "writes only (a value stored)",
        }
    }

    /// The arrays it passes over together.
    fn arrays(self) -> usize {
        match self {
            Mix::Read | Mix::Write => 1,
            Mix::Copy => 2,
            Mix::Triad => 3,
            Mix::ThreeToOne => 4,
        }
    }

    /// Bytes read plus bytes written per element index, as STREAM counts them.
    fn bytes_per_index(self) -> u64 {
        8 * self.arrays() as u64
    }
}

/// Elements of each array between two delays: two 64-byte lines.
const BLOCK: usize = 16;
/// Elements of each array between two looks at the loader's controls (8 KiB of an array):
/// the loaders' byte count grows by this much at a time.
const CHUNK: usize = 1024;
/// What the write mix stores: not a repeated byte, so that it cannot become a memset.
const WRITE_VALUE: u64 = 0x0123_4567_89AB_CDEF;

/// One chunk of `mix` from element `start` of each of the `arrays` (each `n` elements long,
/// one after another in `words`), `delay` turns of an empty loop after each block.
#[inline(never)]
fn chunk(mix: Mix, words: &mut [u64], n: usize, start: usize, delay: u32) {
    let spin = |delay: u32| {
        for turn in 0..delay {
            black_box(turn);
        }
    };
    let (first, rest) = words.split_at_mut(n);
    let blocks = (start..start + CHUNK).step_by(BLOCK);
    match mix {
        Mix::Read => {
            let mut sum = 0u64;
            for i in blocks {
                sum = first[i..i + BLOCK]
                    .iter()
                    .fold(sum, |s, &x| s.wrapping_add(x));
                spin(delay);
            }
            black_box(sum);
        }
        Mix::Write => {
            for i in blocks {
                first[i..i + BLOCK].fill(WRITE_VALUE);
                spin(delay);
            }
        }
        Mix::Copy => {
            let b = &mut rest[..n];
            for i in blocks {
                b[i..i + BLOCK].copy_from_slice(&first[i..i + BLOCK]);
                spin(delay);
            }
        }
        Mix::Triad => {
            let (b, c) = rest.split_at(n);
            for i in blocks {
                for j in i..i + BLOCK {
                    first[j] = b[j].wrapping_add(c[j].wrapping_mul(3));
                }
                spin(delay);
            }
        }
        Mix::ThreeToOne => {
            let (b, rest) = rest.split_at(n);
            let (c, d) = rest.split_at(n);
            for i in blocks {
                for j in i..i + BLOCK {
                    first[j] = b[j].wrapping_add(c[j]).wrapping_add(d[j]);
                }
                spin(delay);
            }
        }
    }
}

/// What the loaders are told, and what they report.
#[derive(Debug, Default)]
struct Controls {
    stop: AtomicBool,
    delay: AtomicU32,
    /// Bytes moved by every loader so far.
    moved: AtomicU64,
    /// Loaders that could not be pinned to their CPU.
    unpinned: AtomicU64,
}

/// Passes of `mix` over `words` until told to stop, adding what it moves to `controls`.
fn load(mix: Mix, words: &mut [u64], controls: &Controls) {
    let n = words.len() / mix.arrays() / CHUNK * CHUNK;
    let chunk_bytes = CHUNK as u64 * mix.bytes_per_index();
    loop {
        for start in (0..n).step_by(CHUNK) {
            if controls.stop.load(Ordering::Relaxed) {
                return;
            }
            chunk(mix, words, n, start, controls.delay.load(Ordering::Relaxed));
            controls.moved.fetch_add(chunk_bytes, Ordering::Relaxed);
        }
    }
}

/// Loaders running one mix, one pinned thread per CPU, each on a buffer of its own.
struct Loaders {
    controls: Arc<Controls>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Loaders {
    /// Starts a loader of `mix` with `delay` on each of `cpus`, each on `bytes` of its own
    /// (touched before it counts), and waits until every one has moved something.
    fn start(
        host: &SharedHost,
        cpus: &[usize],
        mix: Mix,
        bytes: usize,
        delay: u32,
    ) -> Result<Loaders, ProbeError> {
        let controls = Arc::new(Controls::default());
        controls.delay.store(delay, Ordering::Relaxed);
        let mut loaders = Loaders {
            controls: Arc::clone(&controls),
            threads: Vec::with_capacity(cpus.len()),
        };
        for &cpu in cpus {
            let controls = Arc::clone(&controls);
            let thread = spawn_pinned(host, "latlab-loader", cpu, move |pinned| {
                if pinned.is_err() {
                    controls.unpinned.fetch_add(1, Ordering::Relaxed);
                }
                let mut words = vec![1u64; bytes / 8];
                load(mix, &mut words, &controls);
            })?;
            loaders.threads.push(thread);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while controls.moved.load(Ordering::Relaxed) == 0 {
            if Instant::now() > deadline {
                return Err(ProbeError::Failed(
                    "the loaders moved nothing within 10 s".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(loaders)
    }

    fn set_delay(&self, delay: u32) {
        self.controls.delay.store(delay, Ordering::Relaxed);
    }

    /// Bytes moved so far, and when this was read.
    fn moved(&self) -> (u64, Instant) {
        (self.controls.moved.load(Ordering::Relaxed), Instant::now())
    }

    fn unpinned(&self) -> u64 {
        self.controls.unpinned.load(Ordering::Relaxed)
    }
}

impl Drop for Loaders {
    fn drop(&mut self) {
        self.controls.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The delays of the curve, in turns of the empty loop between two lines of each array,
/// heaviest load first; the idle point follows the last.
fn delays(suite: Suite) -> &'static [u32] {
    match suite {
        Suite::Quick => &[0, 20, 100],
        Suite::Full => &[0, 5, 10, 20, 50, 100, 200, 500, 1000, 5000],
    }
}

/// How long the loaders run at a new delay before the chase is timed.
const SETTLE: Duration = Duration::from_millis(5);
/// The most the loaders' buffers take together, and the most the chase spans.
const LOADERS_CEILING: u64 = 256 << 20;
const CHASE_CEILING: u64 = 128 << 20;
/// A loader's buffer is at least this large, so that it passes over memory, not a cache.
const LOADER_FLOOR: u64 = 8 << 20;
/// A window of the loaders' byte count lasts at least this long.
const WINDOW: Duration = Duration::from_millis(10);
/// Windows per peak.
const PEAK_WINDOWS: usize = 12;

/// The sizes of the chase and of each of `loaders` buffers: see the module documentation.
fn sizes(ctx: &ProbeContext, loaders: usize) -> (u64, u64) {
    let kernel_last = ctx.host().caches().iter().map(|c| c.size_bytes).max();
    let found = ctx.findings.last_cache_bytes();
    let allowed = ctx.max_working_set();
    let chase = match (found, kernel_last) {
        (Some(found), _) => 8 * found,
        (None, Some(last)) => 2 * last,
        (None, None) => 64 << 20,
    };
    let chase = chase.min(CHASE_CEILING).min(allowed);
    let largest_cache = found.max(kernel_last).unwrap_or(32 << 20);
    let together = (4 * largest_cache).min(LOADERS_CEILING);
    let each = (together / loaders.max(1) as u64)
        .max(LOADER_FLOOR)
        .min(allowed);
    (chase, each)
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let host = Arc::clone(ctx.host());
    let cpus = host.allowed_cpus();
    let [chaser, others @ ..] = &cpus[..] else {
        return Err(ProbeError::Skipped("no CPU is allowed".into()));
    };
    if others.is_empty() {
        return Err(ProbeError::Skipped(
            "this run may use one CPU: there is no other CPU to load the memory from".into(),
        ));
    }
    let (chase_bytes, loader_bytes) = sizes(ctx, others.len());
    let _affinity = AffinityGuard::save(&host);
    host.pin_to_cpu(*chaser).map_err(ProbeError::Failed)?;
    let chase = Chase::build(
        chase_bytes as usize,
        PREFETCH_PROOF_STRIDE,
        Layout::PageGroups {
            group_bytes: TLB_GROUP_PAGES * super::buffer::page_size(),
        },
        false,
    )
    .map_err(|e| {
        ProbeError::Failed(format!(
            "could not map a {} chase: {e}",
            size_label(chase_bytes)
        ))
    })?;
    chase.warm();
    let mixes: &[Mix] = match ctx.suite {
        Suite::Quick => &[Mix::Read],
        Suite::Full => &Mix::CURVE,
    };
    let peaks: &[Mix] = match ctx.suite {
        Suite::Quick => &[Mix::Read],
        Suite::Full => &Mix::PEAK,
    };
    let suite = ctx.suite;
    keeping_measured(|results| {
        let others = Crew {
            host: &host,
            cpus: others,
            bytes: loader_bytes as usize,
        };
        for &mix in mixes {
            curve(ctx.runner, &others, &chase, mix, delays(suite), results)?;
        }
        drop(chase);
        let everyone = Crew {
            host: &host,
            cpus: &cpus,
            bytes: sizes(ctx, cpus.len()).1 as usize,
        };
        for &mix in peaks {
            results.push(peak(ctx.runner, &everyone, mix)?);
        }
        Ok(())
    })
}

/// Where loaders run: one on each of `cpus`, each over `bytes` of its own.
struct Crew<'a> {
    host: &'a SharedHost,
    cpus: &'a [usize],
    bytes: usize,
}

impl Crew<'_> {
    fn start(&self, mix: Mix, delay: u32) -> Result<Loaders, ProbeError> {
        Loaders::start(self.host, self.cpus, mix, self.bytes, delay)
    }
}

/// The points of the curve of `mix`: the chase timed while `crew`'s loaders run at each of
/// `delays`, then alone.
fn curve(
    runner: &mut Runner,
    crew: &Crew,
    chase: &Chase,
    mix: Mix,
    delays: &[u32],
    results: &mut Vec<BenchResult>,
) -> Result<(), ProbeError> {
    let loaders = crew.start(mix, delays[0])?;
    for (point, &delay) in delays.iter().enumerate() {
        loaders.set_delay(delay);
        std::thread::sleep(SETTLE);
        let before = loaders.moved();
        let timed = time_chase(runner, chase, mix, point)?;
        // The loaders' count grows a chunk at a time: a window shorter than a peak's (a
        // chase timed in an instant, as on the synthetic machine) would count nothing.
        std::thread::sleep(WINDOW.saturating_sub(before.1.elapsed()));
        let after = loaders.moved();
        let seconds = after.1.duration_since(before.1).as_secs_f64();
        let bandwidth = (after.0 - before.0) as f64 / seconds;
        results.push(
            timed
                .with_parameter(LOAD_BYTES_PER_SECOND, bandwidth)
                .with_parameter(DELAY_TURNS, delay)
                .with_parameter(LOADERS, crew.cpus.len())
                .with_parameter(UNPINNED_THREADS, loaders.unpinned()),
        );
    }
    drop(loaders);
    let idle = time_chase(runner, chase, mix, delays.len())?;
    results.push(
        idle.with_parameter(LOAD_BYTES_PER_SECOND, 0.0)
            .with_parameter(LOADERS, 0),
    );
    Ok(())
}

/// The chase timed as point `point` of `mix`'s curve.
fn time_chase(
    runner: &mut Runner,
    chase: &Chase,
    mix: Mix,
    point: usize,
) -> Result<BenchResult, ProbeError> {
    let name = format!("mem.loaded/{}/{point}", mix.label());
    let method = format!(
        "dependent loads over a pagegroups ring of {} lines, one per {PREFETCH_PROOF_STRIDE} \
         bytes, while the other CPUs load memory with {}",
        chase.lines(),
        mix.describe()
    );
    let mut p = chase.start();
    // The heaviest point of reads is the headline's: samples enough for its percentiles.
    let sampling: fn(&mut latlab_engine::Config) = match (mix, point) {
        (Mix::Read, 0) => |config| headline_point(true)(config),
        _ => sweep_point,
    };
    let result = runner.scoped(sampling, |runner| {
        runner.bench(&name, &method, move || {
            // SAFETY: `p` is in the ring, which the caller keeps alive past the benchmark.
            p = unsafe { walk::<LOADS_PER_CALL>(p) };
            p
        })
    })?;
    Ok(result
        .per_operation(LOADS_PER_CALL as u64)
        .with_parameter(
            key::WORKING_SET_BYTES,
            chase.lines() * PREFETCH_PROOF_STRIDE,
        )
        .with_parameter(key::LAYOUT, "pagegroups"))
}

/// The peak of `mix` on every CPU of `crew` at once: windows of at least [`WINDOW`],
/// each the time per 64-byte line moved.
fn peak(runner: &mut Runner, crew: &Crew, mix: Mix) -> Result<BenchResult, ProbeError> {
    let name = format!("mem.loaded/peak/{}", mix.label());
    let method = format!(
        "every CPU at once passing over memory of its own with {}, no delay: the time per \
         64-byte line moved (reads plus writes) in windows of {} ms",
        mix.describe(),
        WINDOW.as_millis()
    );
    let loaders = crew.start(mix, 0)?;
    std::thread::sleep(SETTLE);
    let mut samples = Vec::with_capacity(PEAK_WINDOWS + 1);
    // The first window is the cold one, reported apart.
    for _ in 0..=PEAK_WINDOWS {
        crate::sched::check_cancel(&runner.config().cancel)?;
        let before = loaders.moved();
        std::thread::sleep(WINDOW);
        let after = loaders.moved();
        let lines = (after.0 - before.0) as f64 / 64.0;
        samples.push(after.1.duration_since(before.1).as_nanos() as f64 / lines);
    }
    let unpinned = loaders.unpinned();
    drop(loaders);
    let result = runner
        .record_observations(&name, &method, samples)
        .ok_or_else(|| ProbeError::Failed(format!("{name}: no window was timed")))?;
    Ok(result
        .with_bytes_per_operation(64)
        .with_parameter(LOADERS, crew.cpus.len())
        .with_parameter(UNPINNED_THREADS, unpinned))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four arrays of `n` elements: `a` 1, 2, 3 …, `b` ten times that, `c` a hundred times,
    /// `d` a thousand times.
    fn arrays(n: usize) -> Vec<u64> {
        (0..4)
            .flat_map(|k| (1..=n as u64).map(move |i| i * 10u64.pow(k)))
            .collect()
    }

    /// Each mix does to every element of a chunk what its name says, and nothing past it.
    #[test]
    fn each_mix_does_what_it_says_to_a_chunk() {
        let n = 2 * CHUNK;
        let done = |mix: Mix| {
            let mut words = arrays(n);
            chunk(mix, &mut words, n, 0, 3);
            words
        };
        let original = arrays(n);
        assert_eq!(done(Mix::Read), original);
        let written = done(Mix::Write);
        assert!(written[..CHUNK].iter().all(|&x| x == WRITE_VALUE));
        assert_eq!(written[CHUNK..], original[CHUNK..]);
        let copied = done(Mix::Copy);
        assert_eq!(copied[n..n + CHUNK], original[..CHUNK]);
        assert_eq!(copied[n + CHUNK..], original[n + CHUNK..]);
        let triad = done(Mix::Triad);
        let three = done(Mix::ThreeToOne);
        for i in 0..CHUNK {
            let (b, c, d) = (original[n + i], original[2 * n + i], original[3 * n + i]);
            assert_eq!(triad[i], b + 3 * c);
            assert_eq!(three[i], b + c + d);
        }
        assert_eq!(triad[CHUNK], original[CHUNK]);
        assert_eq!(Mix::Triad.bytes_per_index(), 24);
    }

    /// On the synthetic machine (its figures made up, its loaders real): the read curve's
    /// points from the heaviest load to idle, the loaders' bandwidth falling as their delay
    /// grows and none at the idle point, then the peak of reads in bytes per second.
    #[test]
    fn the_curve_runs_from_the_heaviest_load_to_idle() {
        let mut runner = crate::synthetic_runner();
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.memory.max_size_bytes = Some(8 << 20);
        let results = run(&mut ctx).unwrap();
        let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "mem.loaded/read/0",
                "mem.loaded/read/1",
                "mem.loaded/read/2",
                "mem.loaded/read/3",
                "mem.loaded/peak/read"
            ]
        );
        let load = |r: &BenchResult| r.parameter(LOAD_BYTES_PER_SECOND).unwrap().as_f64();
        let loads: Vec<f64> = results[..4].iter().map(|r| load(r).unwrap()).collect();
        assert!(loads[0] > 2.0 * loads[2] && loads[2] > 0.0, "{loads:?}");
        assert_eq!(loads[3], 0.0);
        assert_eq!(results[4].bytes_per_operation, Some(64));
    }
}
