//! The GPU family: kernel launch and synchronisation, host↔device copies, the device's
//! memory hierarchy, the spread across SMs, atomics and shared memory, on the first NVIDIA
//! GPU.
//!
//! The CUDA driver is loaded at run time (cudarc with dynamic loading), so latlab builds
//! without a CUDA toolkit and the same binary runs with or without a GPU; without one every
//! probe of the family is skipped with the reason, which the terminal prints once for the
//! family. The kernels are hand-written PTX (`kernels/`), compiled by the driver for the
//! GPU at hand. Device-side times come from the SM's cycle counter (`%clock64`) and the
//! global nanosecond timer (`%globaltimer`), read by the kernel around its timed loop; the
//! ratio of the two is the SM clock the run actually had. Host-side times come from
//! latlab's own clock, as for every other probe.
//!
//! Each probe opens the device, allocates what it needs and frees all of it when it
//! returns, whether it finished, failed or was interrupted; a driver error fails that probe
//! with the call and the driver's message, and the run goes on. Every result carries the
//! GPU's description (name, driver and CUDA versions, SMs, clocks, memory, PCIe link).
//!
//! Built without the `gpu` feature, the family keeps its registry entries (each probe is
//! skipped, saying why) and its pure parts (sizes, rings, the copy model, level names) with
//! their tests, which nothing else then uses.

#![cfg_attr(not(feature = "gpu"), allow(dead_code, unused_imports))]

pub(crate) mod atomic;
pub(crate) mod copy;
mod copy_model;
#[cfg(feature = "gpu")]
mod driver;
mod info;
pub(crate) mod kernels;
pub(crate) mod launch;
pub(crate) mod memory;
mod ring;
pub(crate) mod shared;
mod sizes;
pub(crate) mod spread;

#[cfg(feature = "gpu")]
pub(crate) use session::{FirstError, Gpu, cuda_failure, device_timed, on_gpu};

use latlab_engine::parameters::Key;

const OPERATIONS_PER_LAUNCH: Key = Key::new("operations_per_launch");
const SM_CLOCK_MHZ: Key = Key::new("sm_clock_mhz");

/// A kernel's time per operation in SM clock cycles.
pub(crate) const CYCLES_PER_OPERATION: Key = Key::new("cycles_per_operation");

/// The family runs each probe's round in a process of its own: a kernel that faults leaves
/// a sticky error that lasts as long as the process (the driver's documentation: "the
/// process must be terminated and relaunched"), and in latlab's own process it took every
/// later GPU probe with it.
const OWN_PROCESS: crate::Process = crate::Process::Own { ready };

/// The extras of a GPU probe: a process of its own, and how its timing is read.
pub(crate) const fn own_process_noting(timing_note: &'static str) -> crate::Extras {
    crate::Extras {
        timing_note: Some(timing_note),
        process: OWN_PROCESS,
        ..crate::Extras::NONE
    }
}

/// Whether the family can run here, asked without loading more than the driver's library:
/// a machine without a driver skips it without starting a process.
#[cfg(feature = "gpu")]
fn ready() -> Result<(), crate::ProbeError> {
    if driver::driver_present() {
        Ok(())
    } else {
        Err(crate::ProbeError::Skipped(session::NO_DRIVER.to_string()))
    }
}

#[cfg(not(feature = "gpu"))]
fn ready() -> Result<(), crate::ProbeError> {
    run_without_driver_reason()
}

/// A GPU probe's entry, `run`: its `measure` on the device opened for it (`on_gpu`), or,
/// in a build without the `gpu` feature, the family's skip (`run_without_driver`).
macro_rules! entry {
    ($measure:ident) => {
        #[cfg(not(feature = "gpu"))]
        use super::run_without_driver as run;

        #[cfg(feature = "gpu")]
        fn run(
            ctx: &mut $crate::ProbeContext,
        ) -> Result<Vec<latlab_engine::BenchResult>, $crate::ProbeError> {
            super::on_gpu(ctx, $measure)
        }
    };
}
pub(crate) use entry;

/// Why the family is skipped when latlab was built without it.
#[cfg(not(feature = "gpu"))]
pub(crate) fn run_without_driver(
    _: &mut crate::ProbeContext,
) -> Result<Vec<latlab_engine::BenchResult>, crate::ProbeError> {
    run_without_driver_reason().map(|()| Vec::new())
}

#[cfg(not(feature = "gpu"))]
fn run_without_driver_reason() -> Result<(), crate::ProbeError> {
    Err(crate::ProbeError::Skipped(
        "this latlab was built without its `gpu` feature".to_string(),
    ))
}

#[cfg(feature = "gpu")]
mod session {
    use super::driver::{CudaError, Device, Module, Stream, Unavailable};
    use super::info::GpuInfo;
    use crate::ProbeError;
    use latlab_engine::{BenchResult, Interrupted, Runner};
    use std::sync::Arc;

    /// The skip reason when the driver library is missing.
    pub(crate) const NO_DRIVER: &str = "no CUDA driver (libcuda.so.1 not found)";

    /// An open GPU: the device, a stream of the probe's own and the device's description.
    pub(crate) struct Gpu {
        pub device: Arc<Device>,
        pub stream: Stream,
        pub info: GpuInfo,
    }

    impl Gpu {
        /// Opens the first GPU, or says why the family cannot run here.
        pub fn open() -> Result<Gpu, ProbeError> {
            let device = Device::open().map_err(|why| match why {
                Unavailable::NoDriver => ProbeError::Skipped(NO_DRIVER.to_string()),
                Unavailable::NoDevice(detail) => {
                    ProbeError::Skipped(format!("no usable CUDA device ({detail})"))
                }
            })?;
            let stream = Stream::new(&device).map_err(cuda_failure)?;
            let info = GpuInfo::collect(&device);
            Ok(Gpu {
                device,
                stream,
                info,
            })
        }

        /// Loads one of the family's PTX modules.
        pub fn module(&self, ptx: &str) -> Result<Module, ProbeError> {
            Module::load(&self.device, ptx).map_err(cuda_failure)
        }

        /// The device's description added to each result.
        pub fn describe(&self, results: Vec<BenchResult>) -> Vec<BenchResult> {
            results.into_iter().map(|r| self.info.describe(r)).collect()
        }

        /// The SMs, or one when the driver does not say.
        pub fn sm_count(&self) -> u32 {
            self.info.sm_count.unwrap_or(1).max(1)
        }
    }

    /// Opens the GPU, runs `measure` on it and adds the device's description to every
    /// result: the whole of a probe that measures in a function of its own. The work it
    /// times runs on the device, not on the calling thread, whose CPU time then says nothing
    /// of it ([`Runner::set_work_elsewhere`]).
    pub(crate) fn on_gpu(
        ctx: &mut crate::ProbeContext,
        measure: fn(&mut crate::ProbeContext, &Gpu) -> Result<Vec<BenchResult>, ProbeError>,
    ) -> Result<Vec<BenchResult>, ProbeError> {
        let gpu = Gpu::open()?;
        let was = ctx.runner.set_work_elsewhere(true);
        let results = measure(ctx, &gpu);
        ctx.runner.set_work_elsewhere(was);
        Ok(gpu.describe(results?))
    }

    /// A driver error as the probe's failure: the call and the driver's message.
    pub(crate) fn cuda_failure(error: CudaError) -> ProbeError {
        let advice = if error.is_out_of_memory() {
            "; another process may hold the GPU's memory (nvidia-smi lists them)"
        } else {
            ""
        };
        ProbeError::Failed(format!("CUDA error in {error}{advice}"))
    }

    /// The first driver error met by closures the engine times, which return nothing the
    /// engine would look at: they note their errors here, and the probe checks after each
    /// measurement.
    #[derive(Default)]
    pub(crate) struct FirstError(std::cell::RefCell<Option<CudaError>>);

    impl FirstError {
        /// Keeps `result`'s error unless one is kept already. Costs nothing on success.
        #[inline]
        pub fn note(&self, result: Result<(), CudaError>) {
            if let Err(e) = result {
                self.0.borrow_mut().get_or_insert(e);
            }
        }

        /// `result`, or the error kept since the last check as the probe's failure.
        pub fn checked(&self, result: BenchResult) -> Result<BenchResult, ProbeError> {
            self.check().map(|()| result)
        }

        /// The error kept since the last check, as the probe's failure.
        pub fn check(&self) -> Result<(), ProbeError> {
            match self.0.borrow_mut().take() {
                Some(e) => Err(cuda_failure(e)),
                None => Ok(()),
            }
        }
    }

    /// One launch's reading of the device's clocks around a timed loop.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct DeviceTime {
        pub cycles: u64,
        pub ns: u64,
    }

    /// A result from device-timed launches: `launch` runs the kernel once and returns its
    /// clocks for `operations` operations; the first launch is the cold one and `count`
    /// follow. The samples are nanoseconds per operation (from `%globaltimer`); the
    /// parameters add the median cycles per operation and the SM clock (cycles over
    /// nanoseconds) the launches ran at.
    pub(crate) fn device_timed(
        runner: &mut Runner,
        name: &str,
        method: &str,
        count: usize,
        operations: u64,
        mut launch: impl FnMut() -> Result<DeviceTime, CudaError>,
    ) -> Result<BenchResult, ProbeError> {
        let mut ns = Vec::with_capacity(count + 1);
        let mut cycles = Vec::with_capacity(count + 1);
        for _ in 0..=count {
            if runner
                .config()
                .cancel
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                return Err(Interrupted.into());
            }
            let time = launch().map_err(cuda_failure)?;
            ns.push(time.ns as f64 / operations as f64);
            cycles.push(time.cycles as f64 / operations as f64);
        }
        let clock_mhz: Vec<f64> = cycles
            .iter()
            .zip(&ns)
            .skip(1)
            .filter(|&(_, &n)| n > 0.0)
            .map(|(c, n)| 1000.0 * c / n)
            .collect();
        let result = runner
            .record_observations(name, method, ns)
            .ok_or_else(|| ProbeError::Failed(format!("{name}: no launch beyond the cold one")))?;
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        let mut result = result.with_parameter(super::OPERATIONS_PER_LAUNCH, operations);
        if let Some(c) = median(cycles[1..].to_vec()) {
            result = result.with_parameter(crate::gpu::CYCLES_PER_OPERATION, c);
        }
        if let Some(mhz) = median(clock_mhz) {
            result = result.with_parameter(super::SM_CLOCK_MHZ, mhz);
        }
        Ok(result)
    }
}
