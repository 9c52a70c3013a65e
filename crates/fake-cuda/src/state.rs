//! What the stand-in driver holds: memory, handles, the work queued on its streams, the
//! sticky error of a faulted kernel and the ledger of what is still alive.

use crate::queue::{Launch, StreamKind, Work};
use std::alloc::Layout;
use std::collections::{BTreeMap, HashMap};

/// Chase kernels run so far in this process: the ledger's `chases_run`, by which a test
/// knows that the GPU family is in its measured launches.
pub(crate) static CHASES_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A CUDA result code, as the driver returns it.
pub(crate) type Status = u32;
pub(crate) const SUCCESS: Status = 0;
pub(crate) const INVALID_VALUE: Status = 1;
pub(crate) const OUT_OF_MEMORY: Status = 2;
pub(crate) const NOT_INITIALIZED: Status = 3;
pub(crate) const INVALID_CONTEXT: Status = 201;
pub(crate) const INVALID_HANDLE: Status = 400;
pub(crate) const NOT_FOUND: Status = 500;
pub(crate) const ILLEGAL_ADDRESS: Status = 700;

/// The stand-in GPU's figures.
pub(crate) const SM_COUNT: i32 = 4;
pub(crate) const L2_BYTES: i32 = 1 << 20;
pub(crate) const MAX_THREADS_PER_BLOCK: i32 = 1024;
pub(crate) const TOTAL_MEMORY: usize = 1 << 30;
/// Device memory free unless `LATLAB_FAKE_CUDA_FREE_BYTES` says otherwise.
const DEFAULT_FREE: usize = 64 << 20;

/// One kernel parameter's width, as the PTX declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    U32,
    U64,
}

/// A loaded module: its kernels and their parameters.
#[derive(Debug, Clone, Default)]
pub(crate) struct Module {
    pub kernels: HashMap<String, Vec<Param>>,
}

/// An allocation of host memory standing for device or page-locked memory.
pub(crate) struct Block {
    pub pointer: *mut u8,
    pub layout: Layout,
}

impl Block {
    pub fn new(bytes: usize) -> Option<Block> {
        let layout = Layout::from_size_align(bytes.max(1), 256).ok()?;
        // SAFETY: the layout has a non-zero size; the block is freed in `drop`.
        let pointer = unsafe { std::alloc::alloc_zeroed(layout) };
        (!pointer.is_null()).then_some(Block { pointer, layout })
    }

    pub fn contains(&self, address: u64, bytes: usize) -> bool {
        let start = self.pointer as u64;
        address >= start
            && address.saturating_add(bytes as u64) <= start + self.layout.size() as u64
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.pointer, self.layout) };
    }
}

// SAFETY: the block is plain memory owned by the state, which a mutex guards.
unsafe impl Send for Block {}

/// Everything the stand-in driver holds.
#[derive(Default)]
pub(crate) struct State {
    pub initialised: bool,
    pub contexts: u32,
    pub device_memory: BTreeMap<u64, Block>,
    pub pinned_memory: BTreeMap<u64, Block>,
    /// The streams made with `cuStreamCreate`, and how each orders itself against the
    /// legacy default stream (the null stream, which is always there).
    pub streams: HashMap<usize, StreamKind>,
    pub capturing: HashMap<usize, Vec<Launch>>,
    /// Each event, and the queued work its last `cuEventRecord` stands for.
    pub events: HashMap<usize, Option<u64>>,
    pub modules: HashMap<usize, Module>,
    pub functions: HashMap<usize, (usize, String)>,
    pub graphs: HashMap<usize, Vec<Launch>>,
    pub graph_execs: HashMap<usize, Vec<Launch>>,
    pub next_handle: usize,
    /// What earlier contexts still held when they were destroyed, by kind.
    pub leaked: BTreeMap<&'static str, usize>,
    /// The work queued on the streams, run by the worker thread in stream order.
    pub work: Work,
    /// The error a faulted kernel left: every later call that needs the context returns it,
    /// for the rest of the process, as the real driver's sticky errors (an illegal address)
    /// do: "the process must be terminated and relaunched".
    pub sticky: Option<Status>,
}

impl State {
    /// A fresh handle (never null).
    pub fn handle(&mut self) -> usize {
        self.next_handle += 1;
        self.next_handle
    }

    /// Whether `bytes` bytes at `address` lie inside one live page-locked host allocation.
    pub fn is_pinned(&self, address: u64, bytes: usize) -> bool {
        self.pinned_memory
            .range(..=address)
            .next_back()
            .is_some_and(|(_, block)| block.contains(address, bytes))
    }

    /// Whether `bytes` bytes at `address` lie inside one live device allocation.
    pub fn is_device(&self, address: u64, bytes: usize) -> bool {
        self.device_memory
            .range(..=address)
            .next_back()
            .is_some_and(|(_, block)| block.contains(address, bytes))
    }

    pub fn free_device_bytes(&self) -> usize {
        let free = std::env::var("LATLAB_FAKE_CUDA_FREE_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_FREE);
        let used: usize = self.device_memory.values().map(|b| b.layout.size()).sum();
        free.saturating_sub(used)
    }

    /// What is alive now, by kind.
    fn live(&self) -> [(&'static str, usize); 8] {
        [
            ("contexts", self.contexts as usize),
            ("device_allocations", self.device_memory.len()),
            ("pinned_allocations", self.pinned_memory.len()),
            ("streams", self.streams.len()),
            ("events", self.events.len()),
            ("modules", self.modules.len()),
            ("graphs", self.graphs.len()),
            ("graph_execs", self.graph_execs.len()),
        ]
    }

    /// Destroys the context and everything in it, as the driver does when the last
    /// reference to a primary context is released; what was still alive is added to the
    /// leaks.
    pub fn destroy_context(&mut self) {
        let mut leaked = std::mem::take(&mut self.leaked);
        for (kind, count) in self.live() {
            *leaked.entry(kind).or_default() += count;
        }
        *self = State {
            initialised: true,
            next_handle: self.next_handle,
            leaked,
            work: std::mem::take(&mut self.work),
            sticky: self.sticky,
            ..State::default()
        };
    }

    /// Writes what is alive now and what earlier contexts leaked to the file
    /// `LATLAB_FAKE_CUDA_LEDGER` names, if any: `name=count` per line, the leaks as
    /// `leaked_name=count`, then the chase kernels run so far as `chases_run=count`.
    pub fn write_ledger(&self) {
        let Some(path) = std::env::var_os("LATLAB_FAKE_CUDA_LEDGER") else {
            return;
        };
        let mut text = String::new();
        for (kind, count) in self.live() {
            text.push_str(&format!("{kind}={count}\n"));
        }
        for (kind, count) in &self.leaked {
            text.push_str(&format!("leaked_{kind}={count}\n"));
        }
        let chases = CHASES_RUN.load(std::sync::atomic::Ordering::Relaxed);
        text.push_str(&format!("chases_run={chases}\n"));
        let _ = std::fs::write(path, text);
    }
}

/// The kernels of a PTX text and their parameters: each `.visible .entry NAME(` up to its
/// closing parenthesis, each `.param .u64` or `.param .u32` in it.
pub(crate) fn parse_module(ptx: &str) -> Option<Module> {
    let mut module = Module::default();
    let mut rest = ptx;
    while let Some(at) = rest.find(".visible .entry ") {
        let after = &rest[at + ".visible .entry ".len()..];
        let open = after.find('(')?;
        let close = after.find(')')?;
        let name = after[..open].trim().to_string();
        let params = after[open + 1..close]
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| match p.split_whitespace().nth(1) {
                Some(".u64") => Some(Param::U64),
                Some(".u32") => Some(Param::U32),
                _ => None,
            })
            .collect::<Option<Vec<Param>>>()?;
        module.kernels.insert(name, params);
        rest = &after[close..];
    }
    (!module.kernels.is_empty()).then_some(module)
}
