//! The work the stand-in queues on its streams and the worker thread that runs it, with the
//! ordering the CUDA documentation promises and no more:
//!
//! - Work on one stream runs in the order it was queued.
//! - The legacy default stream (the null stream, where `cuMemsetD8` and `cuMemcpyHtoD`
//!   run) waits for the work queued before it on every *blocking* stream, and a blocking
//!   stream's work waits for the legacy stream's queued before it. A stream created
//!   `CU_STREAM_NON_BLOCKING` waits for neither: its kernels may run before a copy queued
//!   earlier on the legacy stream has landed.
//! - Of what the documentation lets run late, the stand-in runs it as late as it may: work on
//!   the legacy stream runs only once something waits for it (a synchronising call, or work
//!   on a blocking stream queued after it). A kernel on a non-blocking stream that reads
//!   memory a legacy-stream copy or memset is still to write reads what was there before
//!   (zeros, for fresh memory), every time, where a real GPU would do so some of the time.
//!
//! A kernel that touches memory outside every live allocation ends in
//! `CUDA_ERROR_ILLEGAL_ADDRESS`, which is sticky: the queued work is dropped and every later
//! call that needs the context returns it.

use crate::queue::{LEGACY, Op, Queued, StreamKind};
use crate::state::{ILLEGAL_ADDRESS, SUCCESS, State, Status};
use std::sync::{Condvar, PoisonError};

impl Op {
    /// Runs the work on the state's memory; a range no longer inside a live allocation is
    /// an illegal address, as on a GPU.
    fn run(&self, state: &State) -> Status {
        match self {
            Op::Kernel(launch) => crate::kernels::run(state, launch),
            Op::Graph(launches) => (launches.iter())
                .map(|launch| crate::kernels::run(state, launch))
                .find(|&status| status != SUCCESS)
                .unwrap_or(SUCCESS),
            Op::Memset {
                address,
                value,
                bytes,
            } => on_device(state, *address, *bytes, || {
                // SAFETY: the range lies in a live allocation (checked by `on_device`).
                unsafe { std::ptr::write_bytes(*address as *mut u8, *value, *bytes) }
            }),
            Op::Staged { address, data } => on_device(state, *address, data.len(), || {
                // SAFETY: the destination lies in a live allocation (checked by `on_device`).
                unsafe { std::ptr::copy(data.as_ptr(), *address as *mut u8, data.len()) }
            }),
            Op::FromHost {
                address,
                source,
                bytes,
            } => on_device(state, *address, *bytes, || {
                // SAFETY: the destination lies in a live allocation (checked by `on_device`);
                // the source is kept by the caller until the copy is waited for.
                unsafe { std::ptr::copy(*source as *const u8, *address as *mut u8, *bytes) }
            }),
            Op::ToHost {
                destination,
                source,
                bytes,
            } => on_device(state, *source, *bytes, || {
                // SAFETY: the source lies in a live allocation (checked by `on_device`); the
                // destination is kept by the caller until the copy is waited for.
                unsafe { std::ptr::copy(*source as *const u8, *destination as *mut u8, *bytes) }
            }),
            Op::Marker => SUCCESS,
        }
    }
}

/// Runs `touch` once `bytes` bytes at `address` are found inside a live device allocation;
/// an illegal address otherwise, as a GPU faults on memory freed under queued work.
fn on_device(state: &State, address: u64, bytes: usize, touch: impl FnOnce()) -> Status {
    if !state.is_device(address, bytes) {
        return ILLEGAL_ADDRESS;
    }
    touch();
    SUCCESS
}

impl State {
    /// Queues `op` on `stream` and returns its sequence number.
    pub fn enqueue(&mut self, stream: usize, op: Op) -> u64 {
        let mut after: Vec<u64> = self.work.last_on(stream).into_iter().collect();
        match self.stream_kind(stream) {
            None => {
                // The legacy stream waits for every blocking stream's queued work.
                for (&other, &kind) in &self.streams {
                    if kind == StreamKind::Blocking {
                        after.extend(self.work.last_on(other));
                    }
                }
            }
            Some(StreamKind::Blocking) => after.extend(self.work.last_on(LEGACY)),
            Some(StreamKind::NonBlocking) => {}
        }
        after.retain(|&s| !self.work.is_done(s));
        let work = &mut self.work;
        work.last_sequence += 1;
        let sequence = work.last_sequence;
        work.last_of.insert(stream, sequence);
        work.pending.push_back(Queued {
            sequence,
            stream,
            after,
            op,
        });
        if !work.worker_started {
            work.worker_started = true;
            std::thread::Builder::new()
                .name("fake-cuda-worker".into())
                .spawn(run_queued_work)
                .expect("the stand-in's worker thread starts");
        }
        WAKE.notify_all();
        sequence
    }

    /// How `stream` orders itself: `None` for the legacy stream.
    fn stream_kind(&self, stream: usize) -> Option<StreamKind> {
        if stream == LEGACY {
            None
        } else {
            Some(
                self.streams
                    .get(&stream)
                    .copied()
                    .unwrap_or(StreamKind::Blocking),
            )
        }
    }
}

/// Wakes the worker when work is queued or demanded, and the waiting callers when work has
/// run.
pub(crate) static WAKE: Condvar = Condvar::new();

/// Waits, with the state's lock held by `guard`, until `done` holds or a fault made the
/// context's error sticky; returns that error or success.
pub(crate) fn wait_until(
    mut guard: crate::Guard,
    done: impl Fn(&State) -> bool,
) -> (crate::Guard, Status) {
    WAKE.notify_all();
    loop {
        let state = guard.as_ref().expect("the driver was initialised");
        if let Some(error) = state.sticky {
            return (guard, error);
        }
        if done(state) {
            return (guard, SUCCESS);
        }
        guard = WAKE.wait(guard).unwrap_or_else(PoisonError::into_inner);
    }
}

/// The worker: runs the queued work as it becomes ready, one piece at a time, the state's
/// lock held while it runs (but not during the test delay of a chase).
fn run_queued_work() {
    let mut guard = crate::state();
    loop {
        let Some(queued) = guard.as_mut().and_then(|s| s.work.take_ready()) else {
            guard = WAKE.wait(guard).unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let delay = queued
            .op
            .kernel()
            .map_or(std::time::Duration::ZERO, crate::kernels::delay_of);
        if !delay.is_zero() {
            drop(guard);
            std::thread::sleep(delay);
            guard = crate::state();
        }
        let state = guard.as_mut().expect("work is queued after initialisation");
        let status = match state.sticky {
            Some(_) => SUCCESS,
            None => queued.op.run(state),
        };
        state.work.running = None;
        if status != SUCCESS {
            state.sticky = Some(status);
            state.work.pending.clear();
        }
        WAKE.notify_all();
    }
}
