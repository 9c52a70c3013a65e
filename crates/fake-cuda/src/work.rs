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

use crate::state::{ILLEGAL_ADDRESS, Launch, SUCCESS, State, Status};
use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, PoisonError};

/// The legacy default stream's handle: the null stream.
pub(crate) const LEGACY: usize = 0;

/// How a stream orders itself against the legacy default stream (`cuStreamCreate`'s flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// `CU_STREAM_DEFAULT`: waits for, and is waited for by, the legacy stream.
    Blocking,
    /// `CU_STREAM_NON_BLOCKING`: no implicit ordering with the legacy stream.
    NonBlocking,
}

impl StreamKind {
    pub fn from_flags(flags: u32) -> StreamKind {
        // CU_STREAM_NON_BLOCKING.
        if flags & 1 != 0 {
            StreamKind::NonBlocking
        } else {
            StreamKind::Blocking
        }
    }
}

/// One piece of queued work. Host addresses are kept as numbers: the caller of the call
/// that queued them keeps them alive until the work is waited for, as with the real driver.
#[derive(Debug)]
pub(crate) enum Op {
    Kernel(Launch),
    Graph(Vec<Launch>),
    Memset {
        address: u64,
        value: u8,
        bytes: usize,
    },
    /// A copy from pageable memory, staged when it was queued.
    Staged {
        address: u64,
        data: Vec<u8>,
    },
    /// A copy from host memory read when it runs (page-locked memory's DMA).
    FromHost {
        address: u64,
        source: usize,
        bytes: usize,
    },
    ToHost {
        destination: usize,
        source: u64,
        bytes: usize,
    },
    /// Nothing to do: what an event record or a synchronisation waits for.
    Marker,
}

impl Op {
    /// The kernel a launch runs, for the test delay.
    pub fn kernel(&self) -> Option<&str> {
        match self {
            Op::Kernel(launch) => Some(&launch.kernel),
            _ => None,
        }
    }

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

/// Work queued and not yet run, with what it waits for.
#[derive(Debug)]
struct Queued {
    sequence: u64,
    stream: usize,
    /// The work that must have run first: the stream's previous work, and the legacy
    /// stream's or the blocking streams' (see the module's rules).
    after: Vec<u64>,
    op: Op,
}

/// The queues of every stream, as one list in the order the work was queued.
#[derive(Debug, Default)]
pub(crate) struct Work {
    /// The number of the last work queued (work is numbered from 1).
    last_sequence: u64,
    pending: VecDeque<Queued>,
    /// The work the worker is running now.
    running: Option<u64>,
    /// The last work queued on each stream.
    last_of: HashMap<usize, u64>,
    /// Legacy-stream work up to this sequence number has been waited for and may run.
    demanded: u64,
    worker_started: bool,
}

impl Work {
    /// Whether the work numbered `sequence` has run (or was dropped by a fault).
    pub fn is_done(&self, sequence: u64) -> bool {
        sequence <= self.last_sequence
            && self.running != Some(sequence)
            && !self.pending.iter().any(|q| q.sequence == sequence)
    }

    /// Whether every piece of work queued so far has run.
    pub fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.running.is_none()
    }

    /// The last work queued so far on `stream`, if any.
    pub fn last_on(&self, stream: usize) -> Option<u64> {
        self.last_of.get(&stream).copied()
    }

    /// Lets every piece of work queued so far run, the legacy stream's included.
    pub fn demand_all(&mut self) {
        self.demanded = self.demanded.max(self.last_sequence);
    }

    /// Lets the work up to `sequence` run, the legacy stream's included.
    pub fn demand(&mut self, sequence: u64) {
        self.demanded = self.demanded.max(sequence);
    }

    /// The next work that may run, taken from the queue: the first whose predecessors have
    /// run, legacy-stream work only once it is demanded.
    fn take_ready(&mut self) -> Option<Queued> {
        // Legacy-stream work that another stream's queued work waits for is demanded too
        // (and with it the legacy work before it, which runs first).
        let is_legacy = |sequence: u64| {
            (self.pending.iter()).any(|q| q.sequence == sequence && q.stream == LEGACY)
        };
        let awaited = (self.pending.iter())
            .filter(|q| q.stream != LEGACY)
            .flat_map(|q| q.after.iter().copied())
            .filter(|&s| is_legacy(s))
            .max()
            .unwrap_or(0);
        let demanded = self.demanded.max(awaited);
        let index = (0..self.pending.len()).find(|&i| {
            let queued = &self.pending[i];
            (queued.stream != LEGACY || queued.sequence <= demanded)
                && queued.after.iter().all(|&s| self.is_done(s))
        })?;
        let queued = self.pending.remove(index)?;
        self.running = Some(queued.sequence);
        Some(queued)
    }
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
