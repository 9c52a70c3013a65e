//! Threads that load memory: one pinned to each CPU of a crew, each passing over a buffer
//! of its own in a mix of reads and writes, with an injection delay between lines, counting
//! the bytes they move. `mem.loaded` times a chase beside them and takes their peaks;
//! `mem.numa` binds their buffers to one node and takes the bandwidth of a node's CPUs.

use super::buffer::MappedBuffer;
use super::page_nodes::made_on_node;
use super::sizes::size_label;
use crate::ProbeError;
use crate::helper::spawn_pinned;
use latlab_engine::{BenchResult, SharedHost};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
    pub(crate) const CURVE: [Mix; 4] = [Mix::Read, Mix::Copy, Mix::Triad, Mix::Write];
    /// The mixes of the peaks, from reads only to writes only.
    pub(crate) const PEAK: [Mix; 5] = [
        Mix::Read,
        Mix::ThreeToOne,
        Mix::Triad,
        Mix::Copy,
        Mix::Write,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Mix::Read => "read",
            Mix::ThreeToOne => "3to1",
            Mix::Triad => "triad",
            Mix::Copy => "copy",
            Mix::Write => "write",
        }
    }

    /// The mix in words, for a result's method.
    pub(crate) fn describe(self) -> &'static str {
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
pub(crate) const BLOCK: usize = 16;
/// Elements of each array between two looks at the loader's controls (8 KiB of an array):
/// the loaders' byte count grows by this much at a time.
pub(crate) const CHUNK: usize = 1024;
/// What the write mix stores: not a repeated byte, so that it cannot become a memset.
pub(crate) const WRITE_VALUE: u64 = 0x0123_4567_89AB_CDEF;

/// One chunk of `mix` from element `start` of each of the `arrays` (each `n` elements long,
/// one after another in `words`), `delay` turns of an empty loop after each block.
#[inline(never)]
pub(crate) fn chunk(mix: Mix, words: &mut [u64], n: usize, start: usize, delay: u32) {
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
    /// Loaders that have their buffer.
    ready: AtomicUsize,
    /// Why a loader could not have its buffer (mapped, and on the crew's memory node where
    /// it names one): it then loads nothing, and the crew does not start.
    failed: std::sync::Mutex<Option<String>>,
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

/// A loader's buffer of `bytes`, each word 1: pages mapped afresh and touched by the
/// calling thread (a block from the heap could be pages another thread touched, on another
/// node), bound to `node` where it names one and checked to be there.
fn loader_buffer(
    host: &SharedHost,
    bytes: usize,
    node: Option<usize>,
) -> Result<MappedBuffer, String> {
    let map = || {
        MappedBuffer::new(bytes, false).map_err(|e| {
            format!(
                "could not map a loader's {} buffer: {e}",
                size_label(bytes as u64)
            )
        })
    };
    let span = |buffer: &MappedBuffer| (buffer.as_mut_ptr().cast_const(), buffer.len());
    let mut buffer =
        made_on_node(host, node, map, span).map_err(|why| format!("a loader's buffer: {why}"))?;
    buffer.as_words_mut().fill(1);
    Ok(buffer)
}

/// Loaders running one mix, one pinned thread per CPU, each on a buffer of its own.
pub(crate) struct Loaders {
    controls: Arc<Controls>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Loaders {
    /// Starts a loader of `mix` with `delay` on each of `crew`'s CPUs, each on a buffer of
    /// its own (touched before it counts, on the crew's memory node where it names one),
    /// and waits until every one has moved something.
    fn start(crew: &Crew, mix: Mix, delay: u32) -> Result<Loaders, ProbeError> {
        let controls = Arc::new(Controls::default());
        controls.delay.store(delay, Ordering::Relaxed);
        let mut loaders = Loaders {
            controls: Arc::clone(&controls),
            threads: Vec::with_capacity(crew.cpus.len()),
        };
        for &cpu in crew.cpus {
            let controls = Arc::clone(&controls);
            let host = Arc::clone(crew.host);
            let (bytes, node) = (crew.bytes, crew.memory_node);
            let thread = spawn_pinned(crew.host, "latlab-loader", cpu, move |pinned| {
                if pinned.is_err() {
                    controls.unpinned.fetch_add(1, Ordering::Relaxed);
                }
                match loader_buffer(&host, bytes, node) {
                    Ok(mut buffer) => {
                        controls.ready.fetch_add(1, Ordering::Relaxed);
                        load(mix, buffer.as_words_mut(), &controls);
                    }
                    Err(why) => {
                        *controls.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                    }
                }
            })?;
            loaders.threads.push(thread);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let failed = controls.failed.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(why) = failed.clone() {
                return Err(ProbeError::Failed(why));
            }
            drop(failed);
            let ready = controls.ready.load(Ordering::Relaxed) == crew.cpus.len();
            if ready && controls.moved.load(Ordering::Relaxed) > 0 {
                break;
            }
            if Instant::now() > deadline {
                return Err(ProbeError::Failed(
                    "the loaders were not all loading within 10 s".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(loaders)
    }

    pub(crate) fn set_delay(&self, delay: u32) {
        self.controls.delay.store(delay, Ordering::Relaxed);
    }

    /// Bytes moved so far, and when this was read.
    pub(crate) fn moved(&self) -> (u64, Instant) {
        (self.controls.moved.load(Ordering::Relaxed), Instant::now())
    }

    pub(crate) fn unpinned(&self) -> u64 {
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

/// Where loaders run: one on each of `cpus`, each over `bytes` of its own.
pub(crate) struct Crew<'a> {
    pub(crate) host: &'a SharedHost,
    pub(crate) cpus: &'a [usize],
    pub(crate) bytes: usize,
    /// The node every buffer is bound to; `None` leaves each beside its loader's CPU.
    pub(crate) memory_node: Option<usize>,
}

impl Crew<'_> {
    /// Its loaders running `mix` with `delay`.
    pub(crate) fn start(&self, mix: Mix, delay: u32) -> Result<Loaders, ProbeError> {
        Loaders::start(self, mix, delay)
    }

    /// `result` with the loaders that ran beside it and the buffer each passed over: what
    /// another program's loaders must match for their figures to compare (a buffer the
    /// size of a chase can sit partly in a host's larger cache).
    pub(crate) fn describe(&self, result: BenchResult) -> BenchResult {
        result
            .with_parameter(LOADERS, self.cpus.len())
            .with_parameter(LOADER_BUFFER_BYTES, self.bytes)
    }
}

/// How many loaders ran beside a result.
pub(crate) const LOADERS: latlab_engine::parameters::Key =
    latlab_engine::parameters::Key::new("loaders");
/// The bytes of each loader's buffer.
pub(crate) const LOADER_BUFFER_BYTES: latlab_engine::parameters::Key =
    latlab_engine::parameters::Key::new("loader_buffer_bytes");

/// How long the loaders run at a new delay before anything is counted.
pub(crate) const SETTLE: Duration = Duration::from_millis(5);
/// A window of the loaders' byte count lasts at least this long.
pub(crate) const WINDOW: Duration = Duration::from_millis(10);

/// `windows` windows of at least [`WINDOW`] of `crew`'s loaders running `mix` with no
/// delay, each the time per 64-byte line moved, after one cold window (the first of the
/// list, which the runner reports apart).
pub(crate) fn line_times(
    crew: &Crew,
    mix: Mix,
    windows: usize,
    cancel: &AtomicBool,
) -> Result<(Vec<f64>, u64), ProbeError> {
    let loaders = crew.start(mix, 0)?;
    std::thread::sleep(SETTLE);
    let mut samples = Vec::with_capacity(windows + 1);
    for _ in 0..=windows {
        crate::sched::check_cancel(cancel)?;
        let before = loaders.moved();
        std::thread::sleep(WINDOW);
        let after = loaders.moved();
        let lines = (after.0 - before.0) as f64 / 64.0;
        samples.push(after.1.duration_since(before.1).as_nanos() as f64 / lines);
    }
    Ok((samples, loaders.unpinned()))
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
}
