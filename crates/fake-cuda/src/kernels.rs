//! latlab's kernels, run on the CPU by the stand-in's worker thread (`work.rs`): the same
//! work on the same memory, every address the kernel would touch checked against the live
//! device allocations first, so that a ring
//! pointing outside its buffer or an output word out of bounds is an error here as it would
//! be a fault on a GPU. Times come from the host's clock; "cycles" are its nanoseconds at a
//! nominal 1.5 GHz.

use crate::queue::Launch;
use crate::state::{CHASES_RUN, ILLEGAL_ADDRESS, INVALID_HANDLE, SM_COUNT, SUCCESS, State, Status};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Cycles per nanosecond of the stand-in SM clock.
const GHZ: f64 = 1.5;

/// The delay the worker adds before running `kernel`: `LATLAB_FAKE_CUDA_KERNEL_DELAY_MS`
/// before every chase, so that a test can interrupt a run while the GPU family is under
/// way.
pub(crate) fn delay_of(kernel: &str) -> Duration {
    if !kernel.starts_with("chase") {
        return Duration::ZERO;
    }
    std::env::var("LATLAB_FAKE_CUDA_KERNEL_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::ZERO, Duration::from_millis)
}

/// Whether `LATLAB_FAKE_CUDA_FAULT_KERNEL` names `kernel`: every launch of it then ends in
/// an illegal address, as a kernel that chased a stray pointer would on a GPU.
fn faults(kernel: &str) -> bool {
    std::env::var("LATLAB_FAKE_CUDA_FAULT_KERNEL").is_ok_and(|name| name == kernel)
}

/// Runs one launch.
pub(crate) fn run(state: &State, launch: &Launch) -> Status {
    if faults(&launch.kernel) {
        return ILLEGAL_ADDRESS;
    }
    if launch.kernel.starts_with("chase") {
        CHASES_RUN.fetch_add(1, Ordering::Relaxed);
        state.write_ledger();
    }
    let a = &launch.args;
    match launch.kernel.as_str() {
        "empty" => SUCCESS,
        "chase_ca" | "chase_cg" => chase(state, a[0], a[1], a[2], a[3], 0),
        "chase_cg_on_sm" => {
            let sm = a[4] as u32;
            let lands = (0..launch.grid).any(|block| block % SM_COUNT as u32 == sm);
            if !lands {
                return SUCCESS;
            }
            let claim = a[5];
            if !state.is_device(claim, 4) {
                return ILLEGAL_ADDRESS;
            }
            // SAFETY: checked above to lie in a live allocation.
            let claimed = unsafe { (claim as *mut u32).read() };
            if claimed != 0 {
                return SUCCESS;
            }
            // SAFETY: as above.
            unsafe { (claim as *mut u32).write(1) };
            chase(state, a[0], a[1], a[2], a[3], u64::from(sm))
        }
        "shared_chase" => shared_chase(
            state,
            a[0] as u32,
            a[1] as u32,
            a[2] as u32,
            a[3] as u32,
            a[4],
        ),
        "atomic_add" => atomic_add(
            state,
            a[0],
            a[1] as u32,
            a[2] != 0,
            launch.grid * launch.block,
        ),
        _ => INVALID_HANDLE,
    }
}

/// Follows the ring from `start`: `warm` loads, then `steps` timed; writes cycles,
/// nanoseconds, the last pointer and the SM to `out`.
fn chase(state: &State, start: u64, warm: u64, steps: u64, out: u64, sm: u64) -> Status {
    if !state.is_device(out, 32) || !steps.is_multiple_of(8) {
        return ILLEGAL_ADDRESS;
    }
    let mut p = start;
    let load = |p: u64| -> Option<u64> {
        // SAFETY: `p` is checked to lie in a live device allocation first.
        state
            .is_device(p, 8)
            .then(|| unsafe { (p as *const u64).read() })
    };
    for _ in 0..warm {
        let Some(next) = load(p) else {
            return ILLEGAL_ADDRESS;
        };
        p = next;
    }
    let started = Instant::now();
    for _ in 0..steps {
        let Some(next) = load(p) else {
            return ILLEGAL_ADDRESS;
        };
        p = next;
    }
    let ns = started.elapsed().as_nanos() as u64;
    write_words(out, &[(ns as f64 * GHZ) as u64, ns, p, sm]);
    SUCCESS
}

/// The ring of `words` shared-memory words, entry i naming entry (i + stride) mod words,
/// followed as `shared.ptx` does; writes cycles, nanoseconds and the last index to `out`.
fn shared_chase(state: &State, words: u32, stride: u32, warm: u32, steps: u32, out: u64) -> Status {
    if !state.is_device(out, 24) || words == 0 || words > 4096 || !steps.is_multiple_of(8) {
        return ILLEGAL_ADDRESS;
    }
    let ring: Vec<u32> = (0..words).map(|i| (i + stride) % words).collect();
    let mut p = 0u32;
    for _ in 0..warm {
        p = ring[p as usize];
    }
    let started = Instant::now();
    for _ in 0..steps {
        p = std::hint::black_box(ring[p as usize]);
    }
    let ns = started.elapsed().as_nanos() as u64;
    write_words(out, &[(ns as f64 * GHZ) as u64, ns, u64::from(p)]);
    SUCCESS
}

/// Every thread adds `iterations` times to its counter (its own, or the first).
fn atomic_add(
    state: &State,
    counters: u64,
    iterations: u32,
    distinct: bool,
    threads: u32,
) -> Status {
    let bytes = if distinct { 4 * threads as usize } else { 4 };
    if !state.is_device(counters, bytes) {
        return ILLEGAL_ADDRESS;
    }
    for thread in 0..threads {
        let counter = (counters + if distinct { 4 * u64::from(thread) } else { 0 }) as *mut u32;
        let mut value = 1u32;
        for _ in 0..iterations {
            // SAFETY: the counters were checked to lie in a live allocation.
            let old = unsafe { counter.read() };
            // SAFETY: as above.
            unsafe { counter.write(old.wrapping_add(value)) };
            value = if old & 1 != 0 { 2 } else { 1 };
        }
    }
    SUCCESS
}

/// Writes 64-bit words at `out`, which the caller checked.
fn write_words(out: u64, words: &[u64]) {
    for (i, &word) in words.iter().enumerate() {
        // SAFETY: the caller checked that `out` holds `words.len()` words.
        unsafe { (out as *mut u64).add(i).write(word) };
    }
}
