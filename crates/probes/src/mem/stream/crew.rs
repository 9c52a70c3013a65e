//! The crew: one pinned thread per CPU, each passing over memory of its own with one
//! [`Kernel`], driven in one of two ways.
//!
//! - [`Crew::measure`] times synchronised samples: the crew waits at a barrier, each thread
//!   makes the same number of passes over its memory, reading the clock before its first
//!   and after its last; the sample is the window from the earliest start to the latest
//!   end, so a thread that wakes late makes the figure slower, never faster. A window lasts
//!   at least [`WINDOW`], so that waking the crew is a small part of it.
//! - [`Crew::loading`] lets the crew run freely while the caller measures something else
//!   beside it, each thread resting `delay` turns of an empty loop after every two cache
//!   lines of each array (the injection delay of Intel's Memory Latency Checker and
//!   multichase's `multiload`) and counting the bytes it moves; the caller reads the count
//!   over a window of at least [`WINDOW`].
//!
//! A thread's memory is a share of one buffer the caller holds ([`Memory::Shares`]) or a
//! buffer of its own, mapped afresh and first touched by it, on a given memory node where
//! one is named ([`Memory::Own`]).

use super::mixes::Kernel;
use crate::ProbeError;
use crate::helper::{StartGate, settle, spawn_in};
use crate::mem::pages::mapped::MappedBuffer;
use crate::mem::pages::nodes::made_on_node;
use crate::mem::sizes::size_label;
use latlab_engine::parameters::Key;
use latlab_engine::{BenchResult, Clock, Runner, SharedHost};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The shortest window: a sample of the whole crew, or of its byte count.
pub(crate) const WINDOW: Duration = Duration::from_millis(10);
/// How long a loading crew runs at a new delay before anything is counted.
pub(crate) const SETTLE: Duration = Duration::from_millis(5);
/// Element indices between two rests of a loading crew: two 64-byte lines of each array.
const BLOCK: usize = 16;
/// Element indices between two looks at the controls of a loading crew (8 KiB of an
/// array): its byte count grows by this much at a time (less for a shorter array).
const CHUNK: usize = 1024;
/// How long the crew may take to have its memory.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// Where each thread of a crew passes over.
pub(crate) enum Memory<'d> {
    /// Contiguous shares of one buffer, starting on cache-line boundaries.
    Shares(&'d mut [u64]),
    /// A buffer of `bytes` for each thread, bound to `node` where it names one.
    Own { bytes: usize, node: Option<usize> },
}

/// One pinned thread on each of `cpus`, each over its part of `memory`.
pub(crate) struct Crew<'a, 'd> {
    pub(crate) host: &'a SharedHost,
    pub(crate) cpus: &'a [usize],
    pub(crate) memory: Memory<'d>,
}

/// How many threads ran a result's crew beside it.
pub(crate) const LOADERS: Key = Key::new("loaders");
/// The bytes of each crew thread's buffer of its own.
pub(crate) const LOADER_BUFFER_BYTES: Key = Key::new("loader_buffer_bytes");

/// How a measured crew's time is counted.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Per {
    /// Per element index visited, over all threads.
    Index,
    /// Per 64-byte line moved (bytes read plus bytes written over 64), over all threads.
    Line,
}

/// What a crew's measurement ran on.
pub(crate) struct Measured {
    pub result: BenchResult,
    pub threads: usize,
    /// Threads that could not be pinned to their CPU and ran where the kernel put them.
    pub unpinned: usize,
}

/// A loading crew, as its caller sees it.
pub(crate) struct Load<'s> {
    shared: &'s Shared,
}

impl Load<'_> {
    pub(crate) fn set_delay(&self, delay: u32) {
        self.shared.delay.store(delay, Ordering::Relaxed);
    }

    /// Bytes moved so far, and when this was read.
    pub(crate) fn moved(&self) -> (u64, Instant) {
        (self.shared.moved.load(Ordering::Relaxed), Instant::now())
    }

    pub(crate) fn unpinned(&self) -> usize {
        self.shared.unpinned.load(Ordering::Relaxed)
    }
}

impl Crew<'_, '_> {
    /// `result` with the crew that ran `kernel` beside it, the buffer of each of its threads
    /// and the loop's instruction set: what another program's loaders must match for their
    /// figures to compare (a buffer the size of a chase can sit partly in a host's larger
    /// cache; a loop of 256-bit loads moves more than one of 128-bit loads).
    pub(crate) fn describe(&self, result: BenchResult, kernel: Kernel) -> BenchResult {
        let result = (result.with_parameter(LOADERS, self.cpus.len()))
            .with_parameter(super::mixes::VECTOR_ISA, kernel.vector_isa());
        match self.memory {
            Memory::Own { bytes, .. } => result.with_parameter(LOADER_BUFFER_BYTES, bytes),
            Memory::Shares(_) => result,
        }
    }

    /// `count` samples of every thread making passes of `kernel` at once, as
    /// `(name, method)`.
    pub(crate) fn measure(
        &mut self,
        runner: &mut Runner,
        (name, method): (&str, &str),
        kernel: Kernel,
        (count, per): (usize, Per),
    ) -> Result<Measured, ProbeError> {
        let clock = runner.clock().clone();
        self.run(kernel, Some(clock), |shared, parts| {
            let passes = shared.passes_per_sample(runner.config().target_sample_time);
            shared.passes.store(passes, Ordering::Relaxed);
            let per_pass: u64 = match per {
                Per::Index => parts
                    .iter()
                    .map(|&w| kernel.indices_visited(w) as u64)
                    .sum(),
                Per::Line => parts.iter().map(|&w| kernel.bytes_per_pass(w)).sum::<u64>() / 64,
            };
            let operations = (passes * per_pass).max(1);
            let result = runner.observe_operations(name, method, count, operations, |_| {
                shared.start.wait();
                shared.end.wait();
                let windows = &shared.windows;
                let first = windows.iter().map(|w| w.0.load(Ordering::Relaxed)).min();
                let last = windows.iter().map(|w| w.1.load(Ordering::Relaxed)).max();
                last.unwrap_or(0).saturating_sub(first.unwrap_or(0))
            });
            shared.stop.store(true, Ordering::Release);
            shared.start.wait();
            Ok(Measured {
                result: result?,
                threads: parts.len(),
                unpinned: shared.unpinned.load(Ordering::Relaxed),
            })
        })
    }

    /// Runs `beside` while every thread passes over its memory with `kernel`, resting
    /// `delay` turns after each block, from the moment every one has moved something.
    pub(crate) fn loading<T>(
        &mut self,
        kernel: Kernel,
        delay: u32,
        beside: impl FnOnce(&Load) -> Result<T, ProbeError>,
    ) -> Result<T, ProbeError> {
        self.run(kernel, None, |shared, _| {
            shared.delay.store(delay, Ordering::Relaxed);
            let outcome = shared.wait_moving().and_then(|()| beside(&Load { shared }));
            shared.stop.store(true, Ordering::Release);
            outcome
        })
    }

    /// Starts the crew in a scope, waits until every thread has its memory, then runs
    /// `drive` with the words of each thread's memory; every thread has returned when it
    /// returns. With a clock the threads make timed samples, without one they load freely.
    fn run<T>(
        &mut self,
        kernel: Kernel,
        clock: Option<Clock>,
        drive: impl FnOnce(&Shared, &[usize]) -> Result<T, ProbeError>,
    ) -> Result<T, ProbeError> {
        let (host, cpus) = (self.host, self.cpus);
        let parts = self.parts();
        let sizes: Vec<usize> = parts.iter().map(Part::words).collect();
        let shared = &Shared::new(sizes.len());
        let clock = clock.as_ref();
        std::thread::scope(|scope| {
            let mut refused = None;
            for (index, (part, &cpu)) in parts.into_iter().zip(cpus.iter().cycle()).enumerate() {
                let thread = spawn_in(scope, "latlab-mem-crew", move || {
                    shared.work(host, cpu, part, kernel, clock.map(|clock| (clock, index)))
                });
                if let Err(reason) = thread {
                    refused = Some(reason);
                    break;
                }
            }
            let ready = match refused {
                Some(reason) => Err(ProbeError::Failed(reason)),
                None => shared.wait_ready(sizes.len()),
            };
            shared.go.open(ready.is_ok());
            ready?;
            drive(shared, &sizes)
        })
    }

    /// Each thread's part of the memory.
    fn parts(&mut self) -> Vec<Part<'_>> {
        let threads = self.cpus.len().max(1);
        match &mut self.memory {
            Memory::Shares(data) => {
                // Shares start on cache-line boundaries (8 words of a 64-byte line).
                let share_len = data.len().div_ceil(threads).next_multiple_of(8).max(8);
                data.chunks_mut(share_len).map(Part::Share).collect()
            }
            &mut Memory::Own { bytes, node } => {
                (0..threads).map(|_| Part::Own { bytes, node }).collect()
            }
        }
    }
}

/// One thread's part of a crew's memory.
enum Part<'d> {
    Share(&'d mut [u64]),
    Own { bytes: usize, node: Option<usize> },
}

impl Part<'_> {
    fn words(&self) -> usize {
        match self {
            Part::Share(share) => share.len(),
            Part::Own { bytes, .. } => bytes / size_of::<u64>(),
        }
    }
}

/// What the crew's threads share with the thread that drives them.
struct Shared {
    /// Until every thread has its memory: one that could have none, or was never started,
    /// would leave the others waiting at a barrier sized for all of them.
    go: StartGate,
    ready: AtomicUsize,
    failed: Mutex<Option<String>>,
    /// Threads that could not be pinned to their CPU.
    unpinned: AtomicUsize,
    /// The slowest first pass, in nanoseconds.
    slowest_pass_ns: AtomicU64,
    start: Barrier,
    end: Barrier,
    /// Each thread's last timed window, in clock ticks.
    windows: Vec<(AtomicU64, AtomicU64)>,
    passes: AtomicU64,
    stop: AtomicBool,
    delay: AtomicU32,
    /// Bytes moved by a loading crew so far.
    moved: AtomicU64,
}

impl Shared {
    fn new(threads: usize) -> Shared {
        Shared {
            go: StartGate::default(),
            ready: AtomicUsize::new(0),
            failed: Mutex::new(None),
            unpinned: AtomicUsize::new(0),
            slowest_pass_ns: AtomicU64::new(0),
            start: Barrier::new(threads + 1),
            end: Barrier::new(threads + 1),
            windows: (0..threads)
                .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
                .collect(),
            passes: AtomicU64::new(1),
            stop: AtomicBool::new(false),
            delay: AtomicU32::new(0),
            moved: AtomicU64::new(0),
        }
    }

    /// Waits until a loading crew has moved something.
    fn wait_moving(&self) -> Result<(), ProbeError> {
        let deadline = Instant::now() + READY_WITHIN;
        while self.moved.load(Ordering::Relaxed) == 0 {
            if Instant::now() > deadline {
                return Err(ProbeError::Failed(format!(
                    "the loaders moved nothing within {} s",
                    READY_WITHIN.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Waits until each of `threads` has its memory and has passed over it once.
    fn wait_ready(&self, threads: usize) -> Result<(), ProbeError> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Some(why) = self
                .failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
            {
                return Err(ProbeError::Failed(why));
            }
            if self.ready.load(Ordering::Acquire) == threads {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(ProbeError::Failed(format!(
                    "the crew did not have its memory within {} s",
                    READY_WITHIN.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The passes each thread makes in a sample: enough that the slowest first pass, made
    /// by every thread at once, fills the longer of `target` and [`WINDOW`].
    fn passes_per_sample(&self, target: Duration) -> u64 {
        let target_ns = target.max(WINDOW).as_nanos() as f64;
        let pass_ns = self.slowest_pass_ns.load(Ordering::Relaxed).max(1) as f64;
        (target_ns / pass_ns).ceil().max(1.0) as u64
    }

    /// One thread on `cpu`: its memory, one pass timed, then timed samples into window
    /// `index` on `clock` where it is given, else loading freely, until `stop`.
    fn work(
        &self,
        host: &SharedHost,
        cpu: usize,
        part: Part,
        kernel: Kernel,
        timed: Option<(&Clock, usize)>,
    ) {
        if settle(host.as_ref(), cpu).is_err() {
            self.unpinned.fetch_add(1, Ordering::Relaxed);
        }
        let mut own = None;
        let words = match part {
            Part::Share(share) => share,
            Part::Own { bytes, node } => match own_buffer(host, bytes, node) {
                Ok(buffer) => own.insert(buffer).as_words_mut(),
                Err(why) => {
                    *self.failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(why);
                    return;
                }
            },
        };
        if kernel.array_len(words.len()) == 0 {
            let why = format!(
                "a buffer of {} bytes holds no element of each of the {} arrays of {}",
                size_of_val(words),
                kernel.mix.arrays(),
                kernel.mix.label()
            );
            *self.failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(why);
            return;
        }
        let first_pass = Instant::now();
        black_box(kernel.pass(black_box(&mut *words)));
        let pass_ns = first_pass.elapsed().as_nanos() as u64;
        self.slowest_pass_ns.fetch_max(pass_ns, Ordering::Relaxed);
        self.ready.fetch_add(1, Ordering::Release);
        if !self.go.wait() {
            return;
        }
        match timed {
            Some((clock, index)) => self.timed(kernel, words, clock, &self.windows[index]),
            None => self.free(kernel, words),
        }
    }

    /// Synchronised samples: each window into `window`, until `stop`.
    fn timed(
        &self,
        kernel: Kernel,
        words: &mut [u64],
        clock: &Clock,
        window: &(AtomicU64, AtomicU64),
    ) {
        loop {
            self.start.wait();
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            // Copied out before timing: nothing is read through `self` between the clock reads.
            let passes = self.passes.load(Ordering::Relaxed);
            let t0 = clock.start();
            for _ in 0..passes {
                black_box(kernel.pass(words));
            }
            let t1 = clock.end();
            window.0.store(t0, Ordering::Relaxed);
            window.1.store(t1, Ordering::Relaxed);
            self.end.wait();
        }
    }

    /// Passes in chunks until `stop`, resting the delay of the moment after each block and
    /// counting what each chunk moved; a buffer shorter than a chunk is passed over whole.
    fn free(&self, kernel: Kernel, words: &mut [u64]) {
        let len = kernel.array_len(words.len());
        while !self.stop.load(Ordering::Relaxed) {
            for start in (0..len).step_by(CHUNK) {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                let end = (start + CHUNK).min(len);
                match self.delay.load(Ordering::Relaxed) {
                    0 => {
                        black_box(kernel.part(words, start..end));
                    }
                    delay => {
                        for block in (start..end).step_by(BLOCK) {
                            black_box(kernel.part(words, block..(block + BLOCK).min(end)));
                            for turn in 0..delay {
                                black_box(turn);
                            }
                        }
                    }
                }
                let visited = (end - start).div_ceil(kernel.step) as u64;
                (self.moved).fetch_add(visited * kernel.mix.bytes_per_index(), Ordering::Relaxed);
            }
        }
    }
}

/// A thread's buffer of `bytes`, each word 1: pages mapped afresh and touched by the
/// calling thread (a block from the heap could be pages another thread touched, on another
/// node), bound to `node` where it names one and checked to be there.
fn own_buffer(
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
