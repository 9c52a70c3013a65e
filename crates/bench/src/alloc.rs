//! Allocations per call, counted by a global allocator the user installs:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: latlab_bench::CountingAllocator = latlab_bench::CountingAllocator::system();
//! ```
//!
//! While benchmarks are timed it only passes calls on (one relaxed load each); after a
//! benchmark is measured, its loop runs once more with counting on inside the timed region
//! alone, so inputs made by a setup are not counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Whether an allocation has gone through a [`CountingAllocator`]: it is installed.
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Whether a counting pass is under way; the timed region turns counting on only then.
static PASS: AtomicBool = AtomicBool::new(false);
/// Whether allocations are being counted now.
static COUNTING: AtomicBool = AtomicBool::new(false);
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
    if COUNTING.load(Relaxed) {
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

/// Runs a timed region; during a counting pass, counts the allocations made in it.
#[inline(always)]
pub(crate) fn timed_region<T>(f: impl FnOnce() -> T) -> T {
    let pass = PASS.load(Relaxed);
    if pass {
        COUNTING.store(true, Relaxed);
    }
    let value = f();
    if pass {
        COUNTING.store(false, Relaxed);
    }
    value
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
