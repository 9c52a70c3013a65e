//! The work queued on the stand-in's streams, as data: each stream's kind, each piece of
//! work (a kernel launch, a copy, a memset, a marker) and the one list they are queued in,
//! with the rule of what may run next. The worker that runs it is `work.rs`'s.

use std::collections::{HashMap, VecDeque};

/// A kernel launch with its arguments read: what runs now or what a graph replays.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub kernel: String,
    pub grid: u32,
    pub block: u32,
    pub args: Vec<u64>,
}

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
}

/// Work queued and not yet run, with what it waits for.
#[derive(Debug)]
pub(crate) struct Queued {
    pub sequence: u64,
    pub stream: usize,
    /// The work that must have run first: the stream's previous work, and the legacy
    /// stream's or the blocking streams' (see the module's rules).
    pub after: Vec<u64>,
    pub op: Op,
}

/// The queues of every stream, as one list in the order the work was queued.
#[derive(Debug, Default)]
pub(crate) struct Work {
    /// The number of the last work queued (work is numbered from 1).
    pub last_sequence: u64,
    pub pending: VecDeque<Queued>,
    /// The work the worker is running now.
    pub running: Option<u64>,
    /// The last work queued on each stream.
    pub last_of: HashMap<usize, u64>,
    /// Legacy-stream work up to this sequence number has been waited for and may run.
    pub demanded: u64,
    pub worker_started: bool,
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
    pub fn take_ready(&mut self) -> Option<Queued> {
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
