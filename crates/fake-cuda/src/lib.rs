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
//! Work is done when it is queued; streams, events and synchronisation only check their
//! handles.

mod kernels;
mod state;

use state::{
    INVALID_CONTEXT, INVALID_HANDLE, INVALID_VALUE, L2_BYTES, Launch, MAX_THREADS_PER_BLOCK,
    NOT_FOUND, NOT_INITIALIZED, OUT_OF_MEMORY, Param, SM_COUNT, SUCCESS, State, Status,
    TOTAL_MEMORY,
};
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::{Mutex, MutexGuard, PoisonError};

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The driver's state, created on first use.
fn state() -> MutexGuard<'static, Option<State>> {
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

/// Runs `f` on the state with a context retained.
fn in_context(f: impl FnOnce(&mut State) -> Status) -> Status {
    with(|state| {
        if state.contexts == 0 {
            return INVALID_CONTEXT;
        }
        f(state)
    })
}

/// Runs `f`, which makes or destroys something, with a context retained, and writes the
/// ledger after.
fn changing(f: impl FnOnce(&mut State) -> Status) -> Status {
    in_context(|state| {
        let status = f(state);
        state.write_ledger();
        status
    })
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
    with(|state| {
        if state.contexts == 0 {
            return INVALID_CONTEXT;
        }
        state.contexts -= 1;
        if state.contexts == 0 {
            state.destroy_context();
        }
        state.write_ledger();
        SUCCESS
    })
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
    changing(|state| {
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
    changing(|state| match state.device_memory.remove(&address) {
        Some(_) => SUCCESS,
        None => INVALID_VALUE,
    })
}

/// # Safety
/// Any range; it is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemsetD8_v2(address: u64, value: u8, bytes: usize) -> Status {
    in_context(|state| {
        if !state.is_device(address, bytes) {
            return INVALID_VALUE;
        }
        // SAFETY: the range lies in a live allocation (checked above).
        unsafe { std::ptr::write_bytes(address as *mut u8, value, bytes) };
        SUCCESS
    })
}

/// # Safety
/// `pointer` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostAlloc(
    pointer: *mut *mut c_void,
    bytes: usize,
    _flags: c_uint,
) -> Status {
    changing(|state| {
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
    changing(
        |state| match state.pinned_memory.remove(&(pointer as u64)) {
            Some(_) => SUCCESS,
            None => INVALID_VALUE,
        },
    )
}

/// Copies host memory to device memory, the device range checked.
///
/// # Safety
/// `source` is valid for `bytes` bytes.
unsafe fn to_device(destination: u64, source: *const c_void, bytes: usize) -> Status {
    in_context(|state| {
        if !state.is_device(destination, bytes) || source.is_null() {
            return INVALID_VALUE;
        }
        // SAFETY: the destination lies in a live allocation; the source is the caller's.
        unsafe { std::ptr::copy(source.cast::<u8>(), destination as *mut u8, bytes) };
        SUCCESS
    })
}

/// Copies device memory to host memory, the device range checked.
///
/// # Safety
/// `destination` is valid for `bytes` bytes.
unsafe fn to_host(destination: *mut c_void, source: u64, bytes: usize) -> Status {
    in_context(|state| {
        if !state.is_device(source, bytes) || destination.is_null() {
            return INVALID_VALUE;
        }
        // SAFETY: the source lies in a live allocation; the destination is the caller's.
        unsafe { std::ptr::copy(source as *const u8, destination.cast::<u8>(), bytes) };
        SUCCESS
    })
}

/// # Safety
/// `source` is valid for `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    destination: u64,
    source: *const c_void,
    bytes: usize,
) -> Status {
    // SAFETY: the caller's promise.
    unsafe { to_device(destination, source, bytes) }
}

/// # Safety
/// `destination` is valid for `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    destination: *mut c_void,
    source: u64,
    bytes: usize,
) -> Status {
    // SAFETY: the caller's promise.
    unsafe { to_host(destination, source, bytes) }
}

/// # Safety
/// `source` is valid for `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    destination: u64,
    source: *const c_void,
    bytes: usize,
    stream: *mut c_void,
) -> Status {
    if stream_status(stream) != SUCCESS {
        return INVALID_HANDLE;
    }
    // SAFETY: the caller's promise.
    unsafe { to_device(destination, source, bytes) }
}

/// # Safety
/// `destination` is valid for `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    destination: *mut c_void,
    source: u64,
    bytes: usize,
    stream: *mut c_void,
) -> Status {
    if stream_status(stream) != SUCCESS {
        return INVALID_HANDLE;
    }
    // SAFETY: the caller's promise.
    unsafe { to_host(destination, source, bytes) }
}

fn stream_status(stream: *mut c_void) -> Status {
    in_context(|state| {
        if state.streams.contains(&(stream as usize)) {
            SUCCESS
        } else {
            INVALID_HANDLE
        }
    })
}

/// # Safety
/// `stream` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut *mut c_void, _flags: c_uint) -> Status {
    changing(|state| {
        let handle = state.handle();
        state.streams.insert(handle);
        // SAFETY: the caller's promise.
        unsafe { put(stream, handle_ptr(handle)) }
    })
}

/// # Safety
/// Any stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamSynchronize(stream: *mut c_void) -> Status {
    stream_status(stream)
}

/// # Safety
/// Any stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: *mut c_void) -> Status {
    changing(|state| {
        if state.streams.remove(&(stream as usize)) {
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
    changing(|state| {
        let handle = state.handle();
        state.events.insert(handle);
        // SAFETY: the caller's promise.
        unsafe { put(event, handle_ptr(handle)) }
    })
}

fn event_status(event: *mut c_void) -> Status {
    in_context(|state| {
        if state.events.contains(&(event as usize)) {
            SUCCESS
        } else {
            INVALID_HANDLE
        }
    })
}

/// # Safety
/// Any event and stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventRecord(event: *mut c_void, stream: *mut c_void) -> Status {
    match stream_status(stream) {
        SUCCESS => event_status(event),
        other => other,
    }
}

/// # Safety
/// Any event.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventSynchronize(event: *mut c_void) -> Status {
    event_status(event)
}

/// # Safety
/// Any event.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventDestroy_v2(event: *mut c_void) -> Status {
    changing(|state| {
        if state.events.remove(&(event as usize)) {
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
    changing(|state| {
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
    changing(|state| match state.modules.remove(&(module as usize)) {
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
    if stream_status(stream) != SUCCESS {
        return INVALID_HANDLE;
    }
    in_context(|state| {
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
        match state.capturing.get_mut(&(stream as usize)) {
            Some(captured) => {
                captured.push(launch);
                SUCCESS
            }
            None => kernels::run(state, &launch),
        }
    })
}

/// # Safety
/// Any stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamBeginCapture_v2(stream: *mut c_void, _mode: c_int) -> Status {
    if stream_status(stream) != SUCCESS {
        return INVALID_HANDLE;
    }
    in_context(|state| {
        state.capturing.insert(stream as usize, Vec::new());
        SUCCESS
    })
}

/// # Safety
/// `graph` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamEndCapture(
    stream: *mut c_void,
    graph: *mut *mut c_void,
) -> Status {
    changing(|state| {
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
    changing(|state| {
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
    if stream_status(stream) != SUCCESS {
        return INVALID_HANDLE;
    }
    in_context(|state| {
        let Some(launches) = state.graph_execs.get(&(exec as usize)).cloned() else {
            return INVALID_HANDLE;
        };
        launches
            .iter()
            .map(|launch| kernels::run(state, launch))
            .find(|&status| status != SUCCESS)
            .unwrap_or(SUCCESS)
    })
}

/// # Safety
/// Any graph.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphDestroy(graph: *mut c_void) -> Status {
    changing(|state| match state.graphs.remove(&(graph as usize)) {
        Some(_) => SUCCESS,
        None => INVALID_HANDLE,
    })
}

/// # Safety
/// Any graph.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphExecDestroy(exec: *mut c_void) -> Status {
    changing(|state| match state.graph_execs.remove(&(exec as usize)) {
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
