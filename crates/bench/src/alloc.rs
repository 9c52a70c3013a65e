//! Allocations per call, counted by a global allocator the user installs:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: latlab_bench::CountingAllocator = latlab_bench::CountingAllocator::system();
//! ```
//!
//! While benchmarks are timed it only passes calls on (one relaxed load each); after a
//! benchmark is measured, its loop runs once more with counting on inside the timed region
//! alone, so inputs made by a setup are not counted. A slow benchmark's calls (timed one
//! a sample) are counted as they are timed instead. Only the benchmark's thread is
//! counted, not the watchdog's allocations nor those of threads the body starts.

use latlab_engine::Clock;
use latlab_engine::host::LoopBody;
use latlab_engine::model::Allocations;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Whether an allocation has gone through a [`CountingAllocator`]: it is installed.
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Whether a counting pass is under way; the timed region turns counting on only then.
static PASS: AtomicBool = AtomicBool::new(false);
/// Whether allocations are being counted now, on some thread.
static COUNTING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Whether this thread's allocations are the ones counted: those of the benchmark's
    /// thread alone, not of a watchdog or an output thread allocating while a long call runs.
    /// Constant-initialised and without a destructor, so the allocator may read it at any
    /// time without allocating.
    static COUNTED_HERE: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// A global allocator that counts the allocations of a benchmark's calls and passes every
/// call on to another allocator (the system's by default). Install it with
/// `#[global_allocator]` in the bench target; the harness then reports allocations and
/// bytes per call for every benchmark.
pub struct CountingAllocator<A = System> {
    inner: A,
}

impl CountingAllocator<System> {
    /// Counting in front of the system allocator.
    pub const fn system() -> CountingAllocator<System> {
        CountingAllocator { inner: System }
    }
}

impl<A> CountingAllocator<A> {
    /// Counting in front of another allocator (jemalloc, mimalloc …).
    pub const fn new(inner: A) -> CountingAllocator<A> {
        CountingAllocator { inner }
    }
}

#[inline(always)]
fn note(bytes: usize) {
    if !INSTALLED.load(Relaxed) {
        INSTALLED.store(true, Relaxed);
    }
    if COUNTING.load(Relaxed) && COUNTED_HERE.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Relaxed);
        BYTES.fetch_add(bytes as u64, Relaxed);
    }
}

// SAFETY: every call is passed on unchanged to an allocator that upholds GlobalAlloc's
// contract; counting touches only atomics and never allocates.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's guarantees for `layout` are passed on.
        unsafe { self.inner.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { self.inner.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: the caller's guarantees for `ptr`, `layout` and `new_size` are passed on.
        unsafe { self.inner.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's guarantees for `ptr` and `layout` are passed on.
        unsafe { self.inner.dealloc(ptr, layout) }
    }
}

/// Whether a counting allocator is installed in this binary.
pub(crate) fn installed() -> bool {
    INSTALLED.load(Relaxed)
}

/// Runs a timed region; during a counting pass, counts the allocations made in it, and
/// while its instructions are counted (`--count`), counts them in it alone.
#[inline(always)]
pub(crate) fn timed_region<T>(f: impl FnOnce() -> T) -> T {
    let pass = PASS.load(Relaxed);
    if pass {
        COUNTED_HERE.set(true);
        COUNTING.store(true, Relaxed);
    }
    let value = crate::count::counted_region(f);
    if pass {
        COUNTING.store(false, Relaxed);
        COUNTED_HERE.set(false);
    }
    value
}

/// A body whose allocations are counted in every call timed, for a slow benchmark: its
/// samples are few and long, so counting (a few atomic adds an allocation) costs nothing
/// that shows, and spares the extra call a counting pass would make. The empty loop is
/// passed on uncounted.
pub(crate) struct Counted<'b> {
    body: &'b mut dyn LoopBody,
    allocations: u64,
    bytes: u64,
    calls: u64,
}

impl<'b> Counted<'b> {
    pub fn new(body: &'b mut dyn LoopBody) -> Counted<'b> {
        Counted {
            body,
            allocations: 0,
            bytes: 0,
            calls: 0,
        }
    }

    /// The allocations and bytes per call over the calls timed so far, with their number;
    /// `None` before the first.
    pub fn per_call(&self) -> Option<Allocations> {
        (self.calls > 0).then(|| Allocations {
            count: self.allocations as f64 / self.calls as f64,
            bytes: self.bytes as f64 / self.calls as f64,
            calls: self.calls,
        })
    }
}

impl LoopBody for Counted<'_> {
    fn time(&mut self, clock: &Clock, iterations: u64) -> u64 {
        let mut ticks = 0;
        let (allocations, bytes) = count_in_timed_regions(|| {
            ticks = self.body.time(clock, iterations);
        });
        self.allocations += allocations;
        self.bytes += bytes;
        self.calls += iterations;
        ticks
    }

    fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64 {
        self.body.time_empty(clock, iterations)
    }

    fn operations(&self) -> u64 {
        self.body.operations()
    }

    fn untimed_cpu_ns(&self) -> u64 {
        self.body.untimed_cpu_ns()
    }
}

/// Allocations and bytes asked for in the timed regions `f` runs.
pub(crate) fn count_in_timed_regions(f: impl FnOnce()) -> (u64, u64) {
    ALLOCATIONS.store(0, Relaxed);
    BYTES.store(0, Relaxed);
    PASS.store(true, Relaxed);
    f();
    PASS.store(false, Relaxed);
    (ALLOCATIONS.load(Relaxed), BYTES.load(Relaxed))
}
