//! A stand-in for the CUDA driver, `libcuda.so.1`, for testing latlab's GPU family on a
//! machine without a GPU: it exports the driver calls latlab makes, keeps "device" memory in
//! host memory and runs latlab's own kernels on the CPU (`kernels.rs`). It measures nothing
//! of any GPU; the figures latlab reports under it are the CPU's.
//!
//! What it is for: the GPU probes' control flow end to end (open, allocate, copy, load the
//! PTX, launch with the PTX's parameters, capture graphs, free), the checks a GPU would make
//! (every address a kernel touches and every copy's range inside a live allocation), and
//! the ledger of what is still alive (`LATLAB_FAKE_CUDA_LEDGER`), which must be empty after
//! a run, a failed probe or Ctrl-C. `LATLAB_FAKE_CUDA_OOM_ABOVE` makes allocations above a
//! size fail as a full GPU's would.
//!
//! Work is queued on streams and run by a worker thread with the ordering the CUDA
//! documentation promises and no more (`work.rs`): `cuMemsetD8` returns before the memory is
//! set, a copy from pageable memory returns before its data lands, and a kernel on a
//! non-blocking stream does not wait for either. A kernel that reads memory such work is
//! still to write reads what was there before, and a pointer chase then leaves its
//! buffer: `CUDA_ERROR_ILLEGAL_ADDRESS`, sticky for the rest of the process, as on a GPU.
//! `LATLAB_FAKE_CUDA_FAULT_KERNEL=NAME` makes every launch of kernel NAME end so.

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]
mod kernels;
mod queue;
mod state;
mod work;

use queue::{LEGACY, Launch, Op, StreamKind};
use state::{
    INVALID_CONTEXT, INVALID_HANDLE, INVALID_VALUE, L2_BYTES, MAX_THREADS_PER_BLOCK, NOT_FOUND,
    NOT_INITIALIZED, OUT_OF_MEMORY, Param, SM_COUNT, SUCCESS, State, Status, TOTAL_MEMORY,
};
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::{Mutex, MutexGuard, PoisonError};
use work::wait_until;

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The lock on the driver's state.
pub(crate) type Guard = MutexGuard<'static, Option<State>>;

/// The driver's state, created on first use.
pub(crate) fn state() -> Guard {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on the state once the driver is initialised.
fn with(f: impl FnOnce(&mut State) -> Status) -> Status {
    let mut guard = state();
    match guard.as_mut() {
        Some(state) if state.initialised => f(state),
        _ => NOT_INITIALIZED,
    }
}

/// The state, once the driver is initialised and a context retained.
fn retained(guard: &mut Guard) -> Result<&mut State, Status> {
    match guard.as_mut() {
        Some(state) if state.initialised && state.contexts > 0 => Ok(state),
        Some(state) if state.initialised => Err(INVALID_CONTEXT),
        _ => Err(NOT_INITIALIZED),
    }
}

/// The state with a usable context: one retained, and no sticky error.
fn usable(guard: &mut Guard) -> Result<&mut State, Status> {
    let state = retained(guard)?;
    match state.sticky {
        Some(error) => Err(error),
        None => Ok(state),
    }
}

/// Runs `f` on the state with a usable context.
fn in_context(f: impl FnOnce(&mut State) -> Status) -> Status {
    usable(&mut state()).map_or_else(|error| error, f)
}

/// Runs `f`, which makes something, with a usable context, and writes the ledger after.
fn creating(f: impl FnOnce(&mut State) -> Status) -> Status {
    in_context(|state| {
        let status = f(state);
        state.write_ledger();
        status
    })
}

/// Runs `f`, which destroys something, once the work queued so far has run (or a fault
/// dropped it), and writes the ledger after. After a fault it still destroys, so that a
/// probe that drops everything leaves nothing in the ledger, but returns the sticky error,
/// as the real driver does.
fn releasing(f: impl FnOnce(&mut State) -> Status) -> Status {
    let mut guard = state();
    match retained(&mut guard) {
        Ok(state) => state.work.demand_all(),
        Err(error) => return error,
    }
    let (mut guard, _) = wait_until(guard, |state| state.work.is_idle());
    let state = guard.as_mut().expect("checked above");
    let status = f(state);
    state.write_ledger();
    state.sticky.unwrap_or(status)
}

/// Queues what `f` returns (a stream and its work) with a usable context, and returns at
/// once.
fn queued(f: impl FnOnce(&mut State) -> Result<(usize, Op), Status>) -> Status {
    in_context(|state| match f(state) {
        Ok((stream, op)) => {
            state.enqueue(stream, op);
            SUCCESS
        }
        Err(status) => status,
    })
}

/// Queues what `f` returns, as [`queued`], and waits until it has run.
fn queued_and_waited(f: impl FnOnce(&mut State) -> Result<(usize, Op), Status>) -> Status {
    waiting_for(|state| {
        let (stream, op) = f(state)?;
        Ok(Some(state.enqueue(stream, op)))
    })
}

/// Waits, with a usable context, until the work `f` names (by its sequence number) has run:
/// at once where it names none.
fn waiting_for(f: impl FnOnce(&mut State) -> Result<Option<u64>, Status>) -> Status {
    let mut guard = state();
    let sequence = match usable(&mut guard).and_then(f) {
        Ok(Some(sequence)) => sequence,
        Ok(None) => return SUCCESS,
        Err(error) => return error,
    };
    if let Some(state) = guard.as_mut() {
        state.work.demand(sequence);
    }
    wait_until(guard, |state| state.work.is_done(sequence)).1
}

/// Writes `value` where the caller asked for it.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, value: T) -> Status {
    if out.is_null() {
        return INVALID_VALUE;
    }
    // SAFETY: not null, and valid for a write by the caller's promise.
    unsafe { out.write(value) };
    SUCCESS
}

fn handle_ptr(handle: usize) -> *mut c_void {
    handle as *mut c_void
}

/// # Safety
/// `flags` is any value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuInit(_flags: c_uint) -> Status {
    state().get_or_insert_with(State::default).initialised = true;
    SUCCESS
}

/// # Safety
/// `count` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> Status {
    // SAFETY: the caller's promise.
    with(|_| unsafe { put(count, 1) })
}

/// # Safety
/// `device` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGet(device: *mut c_int, ordinal: c_int) -> Status {
    if ordinal != 0 {
        return INVALID_VALUE;
    }
    // SAFETY: the caller's promise.
    with(|_| unsafe { put(device, 0) })
}

/// # Safety
/// `value` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    value: *mut c_int,
    attribute: c_int,
    _device: c_int,
) -> Status {
    // The attribute numbers of the CUDA headers.
    let answer = match attribute {
        1 => MAX_THREADS_PER_BLOCK,
        13 => 1_500_000,
        16 => SM_COUNT,
        33 => 0x17,
        34 | 50 => 0,
        36 => 2_619_000,
        37 => 5120,
        38 => L2_BYTES,
        75 => 9,
        76 => 0,
        _ => return INVALID_VALUE,
    };
    // SAFETY: the caller's promise.
    with(|_| unsafe { put(value, answer) })
}

/// # Safety
/// `name` is valid for `length` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetName(
    name: *mut c_char,
    length: c_int,
    _device: c_int,
) -> Status {
    let text = b"latlab fake CUDA device (runs on the CPU)\0";
    if name.is_null() || (length as usize) < text.len() {
        return INVALID_VALUE;
    }
    // SAFETY: `name` holds at least `text.len()` bytes (checked above).
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr().cast(), name, text.len()) };
    SUCCESS
}

/// # Safety
/// `bytes` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, _device: c_int) -> Status {
    // SAFETY: the caller's promise.
    with(|_| unsafe { put(bytes, TOTAL_MEMORY) })
}

/// # Safety
/// `version` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> Status {
    // SAFETY: the caller's promise.
    unsafe { put(version, 13000) }
}

/// # Safety
/// `context` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(
    context: *mut *mut c_void,
    _device: c_int,
) -> Status {
    with(|state| {
        if let Some(error) = state.sticky {
            return error;
        }
        state.contexts += 1;
        state.write_ledger();
        // SAFETY: the caller's promise.
        unsafe { put(context, handle_ptr(1)) }
    })
}

/// # Safety
/// Any device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(_device: c_int) -> Status {
    let status = releasing(|state| {
        state.contexts -= 1;
        if state.contexts == 0 {
            state.destroy_context();
        }
        SUCCESS
    });
    // Releasing is allowed after a fault; the error stays for the calls that need a context.
    if status == INVALID_CONTEXT || status == NOT_INITIALIZED {
        status
    } else {
        SUCCESS
    }
}

/// # Safety
/// Any context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSetCurrent(_context: *mut c_void) -> Status {
    with(|_| SUCCESS)
}

/// # Safety
/// `free` and `total` are valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> Status {
    in_context(|state| {
        // SAFETY: the caller's promise.
        unsafe {
            put(free, state.free_device_bytes());
            put(total, TOTAL_MEMORY)
        }
    })
}

/// # Safety
/// `address` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(address: *mut u64, bytes: usize) -> Status {
    creating(|state| {
        let limit = std::env::var("LATLAB_FAKE_CUDA_OOM_ABOVE")
            .ok()
            .and_then(|v| v.parse::<usize>().ok());
        if bytes == 0 || limit.is_some_and(|l| bytes > l) || bytes > state.free_device_bytes() {
            return OUT_OF_MEMORY;
        }
        let Some(block) = state::Block::new(bytes) else {
            return OUT_OF_MEMORY;
        };
        let at = block.pointer as u64;
        state.device_memory.insert(at, block);
        // SAFETY: the caller's promise.
        unsafe { put(address, at) }
    })
}

/// # Safety
/// Any address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFree_v2(address: u64) -> Status {
    releasing(|state| match state.device_memory.remove(&address) {
        Some(_) => SUCCESS,
        None => INVALID_VALUE,
    })
}

/// Sets device memory on the legacy default stream, returning before it is set: the
/// documentation's "asynchronous with respect to the host" for device memory.
///
/// # Safety
/// Any range; it is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD8_v2(address: u64, value: u8, bytes: usize) -> Status {
    queued(|state| memset(state, LEGACY, address, value, bytes))
}

/// Sets device memory in `stream`'s order.
///
/// # Safety
/// Any range; it is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD8Async(
    address: u64,
    value: u8,
    bytes: usize,
    stream: *mut c_void,
) -> Status {
    queued(|state| {
        let stream = known_stream(state, stream)?;
        memset(state, stream, address, value, bytes)
    })
}

fn memset(
    state: &State,
    stream: usize,
    address: u64,
    value: u8,
    bytes: usize,
) -> Result<(usize, Op), Status> {
    if !state.is_device(address, bytes) {
        return Err(INVALID_VALUE);
    }
    Ok((
        stream,
        Op::Memset {
            address,
            value,
            bytes,
        },
    ))
}

/// # Safety
/// `pointer` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostAlloc(
    pointer: *mut *mut c_void,
    bytes: usize,
    _flags: c_uint,
) -> Status {
    creating(|state| {
        let Some(block) = state::Block::new(bytes) else {
            return OUT_OF_MEMORY;
        };
        let at = block.pointer;
        state.pinned_memory.insert(at as u64, block);
        // SAFETY: the caller's promise.
        unsafe { put(pointer, at.cast()) }
    })
}

/// # Safety
/// Any pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFreeHost(pointer: *mut c_void) -> Status {
    releasing(
        |state| match state.pinned_memory.remove(&(pointer as u64)) {
            Some(_) => SUCCESS,
            None => INVALID_VALUE,
        },
    )
}

/// A copy of `bytes` bytes from host memory at `source` to device memory at `destination`
/// on `stream`: read when it runs from page-locked memory (its DMA), staged now from
/// pageable memory (which the caller may reuse once the call returns).
///
/// # Safety
/// `source` is valid for `bytes` bytes.
unsafe fn to_device(
    state: &State,
    stream: usize,
    destination: u64,
    source: *const c_void,
    bytes: usize,
) -> Result<(usize, Op), Status> {
    if !state.is_device(destination, bytes) || source.is_null() {
        return Err(INVALID_VALUE);
    }
    if state.is_pinned(source as u64, bytes) {
        return Ok((
            stream,
            Op::FromHost {
                address: destination,
                source: source as usize,
                bytes,
            },
        ));
    }
    // SAFETY: the caller's promise.
    let data = unsafe { std::slice::from_raw_parts(source.cast::<u8>(), bytes) }.to_vec();
    Ok((
        stream,
        Op::Staged {
            address: destination,
            data,
        },
    ))
}

/// A copy of `bytes` bytes from device memory at `source` to host memory at `destination`
/// on `stream`, written when it runs.
fn to_host(
    state: &State,
    stream: usize,
    destination: *mut c_void,
    source: u64,
    bytes: usize,
) -> Result<(usize, Op), Status> {
    if !state.is_device(source, bytes) || destination.is_null() {
        return Err(INVALID_VALUE);
    }
    Ok((
        stream,
        Op::ToHost {
            destination: destination as usize,
            source,
            bytes,
        },
    ))
}

/// Copies host memory to device memory on the legacy default stream, as the documentation
/// says: from page-locked memory, synchronously; from pageable memory, after the legacy
/// stream's earlier work, returning once the data is staged, before it lands.
///
/// # Safety
/// `source` is valid for `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    destination: u64,
    source: *const c_void,
    bytes: usize,
) -> Status {
    let pinned = {
        let guard = state();
        (guard.as_ref()).is_some_and(|state| state.is_pinned(source as u64, bytes))
    };
    if pinned {
        // SAFETY: the caller's promise.
        return queued_and_waited(|state| unsafe {
            to_device(state, LEGACY, destination, source, bytes)
        });
    }
    match queued_and_waited(|_| Ok((LEGACY, Op::Marker))) {
        // SAFETY: the caller's promise.
        SUCCESS => queued(|state| unsafe { to_device(state, LEGACY, destination, source, bytes) }),
        error => error,
    }
}

/// Copies device memory to host memory on the legacy default stream and returns once the
/// copy has landed.
///
/// # Safety
/// `destination` is valid for `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    destination: *mut c_void,
    source: u64,
    bytes: usize,
) -> Status {
    queued_and_waited(|state| to_host(state, LEGACY, destination, source, bytes))
}

/// # Safety
/// `source` is valid for `bytes` bytes, and stays so until the copy is waited for when it
/// is page-locked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    destination: u64,
    source: *const c_void,
    bytes: usize,
    stream: *mut c_void,
) -> Status {
    queued(|state| {
        let stream = known_stream(state, stream)?;
        // SAFETY: the caller's promise.
        unsafe { to_device(state, stream, destination, source, bytes) }
    })
}

/// Copies device memory to host memory on `stream`: returning at once into page-locked
/// memory, once the copy has landed into pageable memory.
///
/// # Safety
/// `destination` is valid for `bytes` bytes, and stays so until the copy is waited for.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    destination: *mut c_void,
    source: u64,
    bytes: usize,
    stream: *mut c_void,
) -> Status {
    let copy = |state: &mut State| {
        let stream = known_stream(state, stream)?;
        to_host(state, stream, destination, source, bytes)
    };
    let pinned = {
        let guard = state();
        (guard.as_ref()).is_some_and(|state| state.is_pinned(destination as u64, bytes))
    };
    if pinned {
        queued(copy)
    } else {
        queued_and_waited(copy)
    }
}

/// The stream a handle names: the legacy stream for null, else one made and not destroyed.
fn known_stream(state: &State, stream: *mut c_void) -> Result<usize, Status> {
    let handle = stream as usize;
    if handle == LEGACY || state.streams.contains_key(&handle) {
        Ok(handle)
    } else {
        Err(INVALID_HANDLE)
    }
}

/// # Safety
/// `stream` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut *mut c_void, flags: c_uint) -> Status {
    creating(|state| {
        let handle = state.handle();
        state.streams.insert(handle, StreamKind::from_flags(flags));
        // SAFETY: the caller's promise.
        unsafe { put(stream, handle_ptr(handle)) }
    })
}

/// Waits for the work queued on `stream` so far: on the legacy stream, with the blocking
/// streams' work queued before.
///
/// # Safety
/// Any stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamSynchronize(stream: *mut c_void) -> Status {
    queued_and_waited(|state| Ok((known_stream(state, stream)?, Op::Marker)))
}

/// # Safety
/// Any stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: *mut c_void) -> Status {
    releasing(|state| {
        if state.streams.remove(&(stream as usize)).is_some() {
            SUCCESS
        } else {
            INVALID_HANDLE
        }
    })
}

/// # Safety
/// `event` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventCreate(event: *mut *mut c_void, _flags: c_uint) -> Status {
    creating(|state| {
        let handle = state.handle();
        state.events.insert(handle, None);
        // SAFETY: the caller's promise.
        unsafe { put(event, handle_ptr(handle)) }
    })
}

/// Marks the event at the work queued on `stream` so far.
///
/// # Safety
/// Any event and stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventRecord(event: *mut c_void, stream: *mut c_void) -> Status {
    in_context(|state| {
        let stream = match known_stream(state, stream) {
            Ok(stream) => stream,
            Err(status) => return status,
        };
        if !state.events.contains_key(&(event as usize)) {
            return INVALID_HANDLE;
        }
        let sequence = state.enqueue(stream, Op::Marker);
        state.events.insert(event as usize, Some(sequence));
        SUCCESS
    })
}

/// Waits for the work the event's last record marked (at once for an event never
/// recorded).
///
/// # Safety
/// Any event.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventSynchronize(event: *mut c_void) -> Status {
    waiting_for(|state| (state.events.get(&(event as usize)).copied()).ok_or(INVALID_HANDLE))
}

/// # Safety
/// Any event.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventDestroy_v2(event: *mut c_void) -> Status {
    releasing(|state| {
        if state.events.remove(&(event as usize)).is_some() {
            SUCCESS
        } else {
            INVALID_HANDLE
        }
    })
}

/// # Safety
/// `module` is valid for a write; `image` is a NUL-terminated PTX text.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadData(
    module: *mut *mut c_void,
    image: *const c_void,
) -> Status {
    if image.is_null() {
        return INVALID_VALUE;
    }
    // SAFETY: the caller's promise: a NUL-terminated text.
    let text = unsafe { CStr::from_ptr(image.cast()) }
        .to_string_lossy()
        .into_owned();
    creating(|state| {
        let Some(parsed) = state::parse_module(&text) else {
            // CUDA_ERROR_INVALID_PTX.
            return 218;
        };
        let handle = state.handle();
        state.modules.insert(handle, parsed);
        // SAFETY: the caller's promise.
        unsafe { put(module, handle_ptr(handle)) }
    })
}

/// # Safety
/// `function` is valid for a write; `name` is NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetFunction(
    function: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
) -> Status {
    if name.is_null() {
        return INVALID_VALUE;
    }
    // SAFETY: the caller's promise.
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    in_context(|state| {
        let Some(loaded) = state.modules.get(&(module as usize)) else {
            return INVALID_HANDLE;
        };
        if !loaded.kernels.contains_key(&name) {
            return NOT_FOUND;
        }
        let handle = state.handle();
        state.functions.insert(handle, (module as usize, name));
        // SAFETY: the caller's promise.
        unsafe { put(function, handle_ptr(handle)) }
    })
}

/// # Safety
/// Any module.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleUnload(module: *mut c_void) -> Status {
    releasing(|state| match state.modules.remove(&(module as usize)) {
        Some(_) => {
            state.functions.retain(|_, (m, _)| *m != module as usize);
            SUCCESS
        }
        None => INVALID_HANDLE,
    })
}

/// # Safety
/// `params` holds one pointer per parameter the kernel's PTX declares, each to a value of
/// the declared width.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchKernel(
    function: *mut c_void,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    _shared_bytes: c_uint,
    stream: *mut c_void,
    params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> Status {
    in_context(|state| {
        let stream = match known_stream(state, stream) {
            Ok(stream) => stream,
            Err(status) => return status,
        };
        let Some((module, name)) = state.functions.get(&(function as usize)).cloned() else {
            return INVALID_HANDLE;
        };
        let declared = state.modules[&module].kernels[&name].clone();
        if !declared.is_empty() && params.is_null() {
            return INVALID_VALUE;
        }
        let block = block_x * block_y * block_z;
        if block == 0 || block > MAX_THREADS_PER_BLOCK as u32 || grid_x * grid_y * grid_z == 0 {
            return INVALID_VALUE;
        }
        let args = declared
            .iter()
            .enumerate()
            .map(|(i, param)| {
                // SAFETY: the caller's promise: a pointer per declared parameter, each to a
                // value of its width.
                unsafe {
                    let value = params.add(i).read();
                    match param {
                        Param::U64 => value.cast::<u64>().read(),
                        Param::U32 => u64::from(value.cast::<u32>().read()),
                    }
                }
            })
            .collect();
        let launch = Launch {
            kernel: name,
            grid: grid_x * grid_y * grid_z,
            block,
            args,
        };
        match state.capturing.get_mut(&stream) {
            Some(captured) => captured.push(launch),
            None => {
                state.enqueue(stream, Op::Kernel(launch));
            }
        }
        SUCCESS
    })
}

/// # Safety
/// Any stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamBeginCapture_v2(stream: *mut c_void, _mode: c_int) -> Status {
    in_context(|state| match known_stream(state, stream) {
        Ok(stream) => {
            state.capturing.insert(stream, Vec::new());
            SUCCESS
        }
        Err(status) => status,
    })
}

/// # Safety
/// `graph` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamEndCapture(
    stream: *mut c_void,
    graph: *mut *mut c_void,
) -> Status {
    creating(|state| {
        let Some(launches) = state.capturing.remove(&(stream as usize)) else {
            return INVALID_HANDLE;
        };
        let handle = state.handle();
        state.graphs.insert(handle, launches);
        // SAFETY: the caller's promise.
        unsafe { put(graph, handle_ptr(handle)) }
    })
}

/// # Safety
/// `exec` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphInstantiateWithFlags(
    exec: *mut *mut c_void,
    graph: *mut c_void,
    _flags: u64,
) -> Status {
    creating(|state| {
        let Some(launches) = state.graphs.get(&(graph as usize)).cloned() else {
            return INVALID_HANDLE;
        };
        let handle = state.handle();
        state.graph_execs.insert(handle, launches);
        // SAFETY: the caller's promise.
        unsafe { put(exec, handle_ptr(handle)) }
    })
}

/// # Safety
/// Any graph and stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphLaunch(exec: *mut c_void, stream: *mut c_void) -> Status {
    queued(|state| {
        let stream = known_stream(state, stream)?;
        let launches = (state.graph_execs.get(&(exec as usize)).cloned()).ok_or(INVALID_HANDLE)?;
        Ok((stream, Op::Graph(launches)))
    })
}

/// # Safety
/// Any graph.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphDestroy(graph: *mut c_void) -> Status {
    releasing(|state| match state.graphs.remove(&(graph as usize)) {
        Some(_) => SUCCESS,
        None => INVALID_HANDLE,
    })
}

/// # Safety
/// Any graph.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphExecDestroy(exec: *mut c_void) -> Status {
    releasing(|state| match state.graph_execs.remove(&(exec as usize)) {
        Some(_) => SUCCESS,
        None => INVALID_HANDLE,
    })
}

/// The CUDA name of a result code.
fn error_name(code: Status) -> &'static CStr {
    match code {
        0 => c"CUDA_SUCCESS",
        1 => c"CUDA_ERROR_INVALID_VALUE",
        2 => c"CUDA_ERROR_OUT_OF_MEMORY",
        3 => c"CUDA_ERROR_NOT_INITIALIZED",
        201 => c"CUDA_ERROR_INVALID_CONTEXT",
        218 => c"CUDA_ERROR_INVALID_PTX",
        400 => c"CUDA_ERROR_INVALID_HANDLE",
        500 => c"CUDA_ERROR_NOT_FOUND",
        700 => c"CUDA_ERROR_ILLEGAL_ADDRESS",
        _ => c"CUDA_ERROR_UNKNOWN",
    }
}

/// # Safety
/// `name` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(code: Status, name: *mut *const c_char) -> Status {
    // SAFETY: the caller's promise.
    unsafe { put(name, error_name(code).as_ptr()) }
}

/// # Safety
/// `text` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorString(code: Status, text: *mut *const c_char) -> Status {
    let sentence = match code {
        2 => c"out of memory",
        700 => c"an illegal memory access was encountered",
        _ => error_name(code),
    };
    // SAFETY: the caller's promise.
    unsafe { put(text, sentence.as_ptr()) }
}
