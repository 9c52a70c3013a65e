//! The few CUDA driver calls the GPU probes make, each resource freed when its owner drops.
//!
//! A thin layer over cudarc's `result` functions rather than its safe layer: the safe layer
//! records events around every use of a buffer and binds the context before every call,
//! work that would land inside the timed loops. Here a timed launch is one `cuLaunchKernel`
//! and a timed synchronisation one `cuStreamSynchronize`, nothing else.
//!
//! Everything runs on the thread that opened the [`Device`] (the probes run on the main
//! thread): the driver binds a context to a thread, and the drops below assume it is bound.
//!
//! Every memset and copy runs on the probe's own [`Stream`], never on the legacy default
//! stream, and is waited for there. The probe's stream is created non-blocking, so it does
//! not wait for the legacy stream: `cuMemsetD8` returns before the memory is set and
//! `cuMemcpyHtoD` from pageable memory before its data lands, and a kernel queued on the
//! probe's stream after either could chase a ring that was not there yet. That is how
//! `gpu.memory` faulted with `CUDA_ERROR_ILLEGAL_ADDRESS` on an H200 while the stand-in
//! driver, which then ran every call at once, passed.
//! Every allocation, stream, event, module and graph is freed when dropped, on success,
//! error or interruption alike; the primary context is released when the last owner of the
//! [`Device`] drops, which leaves nothing of latlab's on the GPU.

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;
use std::ffi::{CString, c_void};
use std::sync::Arc;

/// A failed driver call: which call, and the driver's name and text for the error.
#[derive(Debug, Clone)]
pub(crate) struct CudaError {
    pub call: &'static str,
    pub code: sys::CUresult,
}

impl std::fmt::Display for CudaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let error = DriverError(self.code);
        let name = error
            .error_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{:?}", self.code));
        match error.error_string() {
            Ok(text) => write!(f, "{}: {name} ({})", self.call, text.to_string_lossy()),
            Err(_) => write!(f, "{}: {name}", self.call),
        }
    }
}

impl CudaError {
    /// The device has no memory left for the allocation.
    pub fn is_out_of_memory(&self) -> bool {
        self.code == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY
    }
}

pub(crate) type Cuda<T> = Result<T, CudaError>;

/// Names the call a driver error came from.
trait Call<T> {
    fn call(self, call: &'static str) -> Cuda<T>;
}

impl<T> Call<T> for Result<T, DriverError> {
    fn call(self, call: &'static str) -> Cuda<T> {
        self.map_err(|e| CudaError { call, code: e.0 })
    }
}

/// Why the driver cannot be used at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// No `libcuda.so.1` (or any name cudarc looks for) could be loaded.
    NoDriver,
    /// The driver loaded but `cuInit` failed, or reports no device.
    NoDevice(String),
}

/// Whether the driver library can be loaded. This is the only call that is safe without it:
/// cudarc's first driver call panics when the library is missing.
pub(crate) fn driver_present() -> bool {
    // SAFETY: only tries to load the library (dlopen) under the names cudarc knows.
    unsafe { sys::is_culib_present() }
}

/// The first GPU, its primary context bound to this thread.
pub(crate) struct Device {
    device: sys::CUdevice,
}

impl Device {
    /// Loads the driver, initialises it and retains the first device's primary context.
    pub fn open() -> Result<Arc<Device>, Unavailable> {
        if !driver_present() {
            return Err(Unavailable::NoDriver);
        }
        let no_device = |e: CudaError| Unavailable::NoDevice(e.to_string());
        result::init().call("cuInit").map_err(no_device)?;
        let count = result::device::get_count()
            .call("cuDeviceGetCount")
            .map_err(no_device)?;
        if count < 1 {
            return Err(Unavailable::NoDevice(
                "the driver reports no device".to_string(),
            ));
        }
        let device = result::device::get(0)
            .call("cuDeviceGet")
            .map_err(no_device)?;
        // SAFETY: `device` came from cuDeviceGet; the context is released in `drop`.
        let context = unsafe { result::primary_ctx::retain(device) }
            .call("cuDevicePrimaryCtxRetain")
            .map_err(no_device)?;
        let opened = Device { device };
        // SAFETY: the context was just retained and lives as long as `opened`.
        unsafe { result::ctx::set_current(context) }
            .call("cuCtxSetCurrent")
            .map_err(no_device)?;
        Ok(Arc::new(opened))
    }

    /// A device attribute, `None` where this driver does not report it.
    pub fn attribute(&self, attribute: sys::CUdevice_attribute) -> Option<i32> {
        // SAFETY: `self.device` came from cuDeviceGet.
        unsafe { result::device::get_attribute(self.device, attribute) }.ok()
    }

    pub fn name(&self) -> Cuda<String> {
        result::device::get_name(self.device).call("cuDeviceGetName")
    }

    pub fn total_memory_bytes(&self) -> Cuda<u64> {
        // SAFETY: `self.device` came from cuDeviceGet.
        unsafe { result::device::total_mem(self.device) }
            .call("cuDeviceTotalMem")
            .map(|b| b as u64)
    }

    /// Free device memory now, in bytes.
    pub fn free_memory_bytes(&self) -> Cuda<u64> {
        result::mem_get_info()
            .call("cuMemGetInfo")
            .map(|(free, _)| free as u64)
    }

    /// The CUDA version the driver implements, as the driver encodes it (12080 for 12.8).
    pub fn driver_cuda_version(&self) -> Cuda<i32> {
        let mut version = 0;
        // SAFETY: writes one int.
        unsafe { sys::cuDriverGetVersion(&mut version) }
            .result()
            .call("cuDriverGetVersion")?;
        Ok(version)
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: the device's primary context was retained once, in `open`. Errors cannot be
        // reported from a drop; a context the driver cannot release is gone with the process.
        unsafe {
            let _ = result::ctx::set_current(std::ptr::null_mut());
            let _ = result::primary_ctx::release(self.device);
        }
    }
}

/// A stream of its own (non-blocking: no implicit synchronisation with the null stream).
pub(crate) struct Stream {
    raw: sys::CUstream,
    _device: Arc<Device>,
}

impl Stream {
    pub fn new(device: &Arc<Device>) -> Cuda<Stream> {
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking)
            .call("cuStreamCreate")?;
        Ok(Stream {
            raw,
            _device: Arc::clone(device),
        })
    }

    /// Blocks until everything queued on the stream has finished.
    #[inline]
    pub fn synchronize(&self) -> Cuda<()> {
        // SAFETY: the stream lives until `self` drops.
        unsafe { result::stream::synchronize(self.raw) }.call("cuStreamSynchronize")
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once; pending work is waited for first.
        unsafe {
            let _ = result::stream::synchronize(self.raw);
            let _ = result::stream::destroy(self.raw);
        }
    }
}

/// An event for synchronising with, not timing (`CU_EVENT_DISABLE_TIMING`); blocking when
/// asked (the waiting thread sleeps instead of spinning).
pub(crate) struct Event {
    raw: sys::CUevent,
    _device: Arc<Device>,
}

impl Event {
    pub fn new(device: &Arc<Device>, blocking: bool) -> Cuda<Event> {
        let flags = if blocking {
            // The two flags are distinct bits; the enum has no variant for both.
            sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32
                | sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32
        } else {
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32
        };
        let mut raw = std::ptr::null_mut();
        // SAFETY: writes one event handle.
        unsafe { sys::cuEventCreate(&mut raw, flags) }
            .result()
            .call("cuEventCreate")?;
        Ok(Event {
            raw,
            _device: Arc::clone(device),
        })
    }

    #[inline]
    pub fn record(&self, stream: &Stream) -> Cuda<()> {
        // SAFETY: both live until their owners drop.
        unsafe { result::event::record(self.raw, stream.raw) }.call("cuEventRecord")
    }

    #[inline]
    pub fn synchronize(&self) -> Cuda<()> {
        // SAFETY: the event lives until `self` drops.
        unsafe { result::event::synchronize(self.raw) }.call("cuEventSynchronize")
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once.
        unsafe {
            let _ = result::event::destroy(self.raw);
        }
    }
}

/// Device memory.
pub(crate) struct DeviceMemory {
    address: sys::CUdeviceptr,
    bytes: usize,
    _device: Arc<Device>,
}

impl DeviceMemory {
    /// `bytes` of device memory, zeroed on `stream` and waited for.
    pub fn zeroed(stream: &Stream, bytes: usize) -> Cuda<DeviceMemory> {
        // SAFETY: the allocation is freed in `drop`.
        let address = unsafe { result::malloc_sync(bytes.max(1)) }.call("cuMemAlloc")?;
        let memory = DeviceMemory {
            address,
            bytes,
            _device: Arc::clone(&stream._device),
        };
        // SAFETY: the range is the allocation just made.
        unsafe { result::memset_d8_async(address, 0, bytes.max(1), stream.raw) }
            .call("cuMemsetD8Async")?;
        stream.synchronize()?;
        Ok(memory)
    }

    pub fn address(&self) -> u64 {
        self.address
    }

    /// Copies `data` to the start of this memory on `stream`, after the work queued there
    /// before, and waits for the copy.
    pub fn write<T: Copy>(&self, data: &[T], stream: &Stream) -> Cuda<()> {
        assert!(std::mem::size_of_val(data) <= self.bytes.max(1));
        // SAFETY: the destination holds at least `data`'s bytes (checked above); `data` is
        // borrowed until the stream is synchronised below.
        unsafe { result::memcpy_htod_async(self.address, data, stream.raw) }
            .call("cuMemcpyHtoDAsync")?;
        stream.synchronize()
    }

    /// Copies the start of this memory into `out` on `stream`, after the work queued there
    /// before (the kernel that wrote it), and waits for the copy.
    pub fn read<T: Copy>(&self, out: &mut [T], stream: &Stream) -> Cuda<()> {
        assert!(std::mem::size_of_val(out) <= self.bytes.max(1));
        // SAFETY: the source holds at least `out`'s bytes (checked above); `out` is borrowed
        // until the stream is synchronised below.
        unsafe { result::memcpy_dtoh_async(out, self.address, stream.raw) }
            .call("cuMemcpyDtoHAsync")?;
        stream.synchronize()
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed`, freed once.
        unsafe {
            let _ = result::free_sync(self.address);
        }
    }
}

/// Page-locked host memory (`cuMemHostAlloc` without write combining: what `cudaMallocHost`
/// gives), which the GPU's copy engines reach directly.
pub(crate) struct PinnedMemory {
    pointer: *mut u8,
    bytes: usize,
    _device: Arc<Device>,
}

impl PinnedMemory {
    /// `bytes` of page-locked memory, every byte written once so that its pages exist.
    pub fn new(device: &Arc<Device>, bytes: usize) -> Cuda<PinnedMemory> {
        // SAFETY: the allocation is freed in `drop`; it is written before any read.
        let pointer = unsafe { result::malloc_host(bytes.max(1), 0) }.call("cuMemHostAlloc")?;
        let memory = PinnedMemory {
            pointer: pointer.cast(),
            bytes,
            _device: Arc::clone(device),
        };
        // SAFETY: the allocation holds `bytes.max(1)` bytes.
        unsafe { std::ptr::write_bytes(memory.pointer, 1, bytes.max(1)) };
        Ok(memory)
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `bytes` bytes, initialised in `new`, owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.pointer, self.bytes) }
    }
}

impl Drop for PinnedMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, freed once.
        unsafe {
            let _ = result::free_host(self.pointer.cast());
        }
    }
}

/// Copies `source` to device memory at `destination` on `stream` and waits for it: what a
/// program's `cudaMemcpy` costs. The caller keeps `source` alive and unmoved meanwhile
/// (it is borrowed until the wait returns).
#[inline]
pub(crate) fn copy_to_device(
    destination: &DeviceMemory,
    source: &[u8],
    stream: &Stream,
) -> Cuda<()> {
    assert!(source.len() <= destination.bytes);
    // SAFETY: the destination holds the bytes; the source is borrowed until the stream is
    // synchronised below.
    unsafe { result::memcpy_htod_async(destination.address, source, stream.raw) }
        .call("cuMemcpyHtoDAsync")?;
    stream.synchronize()
}

/// Copies device memory at `source` into `destination` on `stream` and waits for it.
#[inline]
pub(crate) fn copy_to_host(
    destination: &mut [u8],
    source: &DeviceMemory,
    stream: &Stream,
) -> Cuda<()> {
    assert!(destination.len() <= source.bytes);
    // SAFETY: the source holds the bytes; the destination is borrowed until the stream is
    // synchronised below.
    unsafe { result::memcpy_dtoh_async(destination, source.address, stream.raw) }
        .call("cuMemcpyDtoHAsync")?;
    stream.synchronize()
}

/// A module loaded from PTX text (compiled by the driver for this GPU).
pub(crate) struct Module {
    raw: sys::CUmodule,
    _device: Arc<Device>,
}

impl Module {
    pub fn load(device: &Arc<Device>, ptx: &str) -> Cuda<Module> {
        let text = CString::new(ptx).expect("PTX text holds no NUL");
        // SAFETY: a NUL-terminated PTX image; unloaded in `drop`.
        let raw =
            unsafe { result::module::load_data(text.as_ptr().cast()) }.call("cuModuleLoadData")?;
        Ok(Module {
            raw,
            _device: Arc::clone(device),
        })
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Cuda<Kernel<'_>> {
        let name = CString::new(name).expect("kernel names hold no NUL");
        // SAFETY: the module is loaded until `self` drops; the kernel borrows it.
        let raw =
            unsafe { result::module::get_function(self.raw, name) }.call("cuModuleGetFunction")?;
        Ok(Kernel {
            raw,
            _module: std::marker::PhantomData,
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded in `load`, unloaded once.
        unsafe {
            let _ = result::module::unload(self.raw);
        }
    }
}

/// A kernel of a loaded module.
#[derive(Clone, Copy)]
pub(crate) struct Kernel<'m> {
    raw: sys::CUfunction,
    _module: std::marker::PhantomData<&'m Module>,
}

/// One kernel argument: a 64-bit or 32-bit value, as the PTX declares it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg {
    U64(u64),
    U32(u32),
}

/// Arguments held where `cuLaunchKernel` reads them.
struct Args {
    values: Vec<Arg>,
}

impl Args {
    fn pointers(&mut self) -> Vec<*mut c_void> {
        self.values
            .iter_mut()
            .map(|arg| match arg {
                Arg::U64(v) => (v as *mut u64).cast(),
                Arg::U32(v) => (v as *mut u32).cast(),
            })
            .collect()
    }
}

/// A kernel with its grid, block and arguments, ready to launch again and again.
pub(crate) struct Launch<'m> {
    kernel: Kernel<'m>,
    grid: u32,
    block: u32,
    _args: Args,
    pointers: Vec<*mut c_void>,
}

impl<'m> Launch<'m> {
    /// `grid` blocks of `block` threads (one dimension each). The kernel reads device
    /// memory only through the addresses in `args`, which the caller keeps allocated while
    /// the launch is used.
    pub fn new(kernel: Kernel<'m>, grid: u32, block: u32, args: &[Arg]) -> Launch<'m> {
        let mut held = Args {
            values: args.to_vec(),
        };
        let pointers = held.pointers();
        Launch {
            kernel,
            grid,
            block,
            _args: held,
            pointers,
        }
    }

    /// Queues the kernel on `stream`; returns as soon as it is queued.
    #[inline]
    pub fn enqueue(&mut self, stream: &Stream) -> Cuda<()> {
        // SAFETY: the argument pointers point into `self._args`, which is neither moved
        // (a Vec's heap buffer) nor dropped while `self` lives; the kernel's module is
        // borrowed for `'m`; the device memory the arguments name is kept by the caller.
        unsafe {
            result::launch_kernel(
                self.kernel.raw,
                (self.grid, 1, 1),
                (self.block, 1, 1),
                0,
                stream.raw,
                &mut self.pointers,
            )
        }
        .call("cuLaunchKernel")
    }
}

/// A CUDA graph captured from a stream, instantiated, ready to launch.
pub(crate) struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Graph {
    /// Captures what `queue` puts on `stream` into a graph and instantiates it.
    pub fn capture(stream: &Stream, queue: impl FnOnce() -> Cuda<()>) -> Cuda<Graph> {
        // SAFETY: the stream lives while capturing; capture ends below on every path.
        unsafe {
            result::stream::begin_capture(
                stream.raw,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }
        .call("cuStreamBeginCapture")?;
        let queued = queue();
        // SAFETY: ends the capture begun above.
        let graph = unsafe { result::stream::end_capture(stream.raw) }.call("cuStreamEndCapture");
        let graph = match (queued, graph) {
            (Ok(()), Ok(graph)) => graph,
            (Err(e), Ok(graph)) => {
                // SAFETY: the graph was just made and is destroyed once.
                unsafe {
                    let _ = result::graph::destroy(graph);
                }
                return Err(e);
            }
            (_, Err(e)) => return Err(e),
        };
        // SAFETY: `graph` is valid; on failure it is destroyed once.
        match unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) } {
            Ok(exec) => Ok(Graph { graph, exec }),
            Err(e) => {
                // SAFETY: as above.
                unsafe {
                    let _ = result::graph::destroy(graph);
                }
                Err(CudaError {
                    call: "cuGraphInstantiate",
                    code: e.0,
                })
            }
        }
    }

    #[inline]
    pub fn launch(&self, stream: &Stream) -> Cuda<()> {
        // SAFETY: both live until their owners drop.
        unsafe { result::graph::launch(self.exec, stream.raw) }.call("cuGraphLaunch")
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: made in `capture`, each destroyed once.
        unsafe {
            let _ = result::graph::exec_destroy(self.exec);
            let _ = result::graph::destroy(self.graph);
        }
    }
}
