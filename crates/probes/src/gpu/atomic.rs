//! `gpu.atomic`: `atomicAdd` on one address and on distinct addresses, by one warp, by the
//! threads of one block and by a whole grid (one full block per SM).
//!
//! Each thread adds `iterations` times, each add waiting for the previous one's answer
//! (`kernels/atomic.ptx`), so a round of the loop is one atomic round trip as contended as
//! the configuration makes it. A launch is timed on the host, launched and waited for, at
//! 16 and 32 iterations; the slope per iteration cancels the launch. The figure is the time
//! per round; the parameters add the atomics per second the whole configuration achieved.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::parameters::Key;

const ATOMICS_PER_S: Key = Key::new("atomics_per_s");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "gpu.atomic",
    method: "dependent atomicAdd rounds by a warp, a block and a grid, on one address and on one per thread",
    timing: crate::Timing::Slope,
    results: &[
        "gpu.atomic/same/warp",
        "gpu.atomic/same/block",
        "gpu.atomic/same/grid",
        "gpu.atomic/distinct/warp",
        "gpu.atomic/distinct/block",
        "gpu.atomic/distinct/grid",
    ],
    typical: Typical::quick_full(1.5, 3.0),
    extras: super::own_process_noting(
        "between launches of 16 and 32 rounds, each launched and waited for, calibrated loops",
    ),
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

/// Rounds per launch: the slope's two counts.
const ROUNDS: (u32, u32) = (16, 32);

/// The threads of each configuration: `(name, blocks, threads per block)` for a GPU with
/// `sms` SMs and blocks of at most `block` threads.
pub(crate) fn configurations(sms: u32, block: u32) -> [(&'static str, u32, u32); 3] {
    [("warp", 1, 32), ("block", 1, block), ("grid", sms, block)]
}

super::entry!(measure);

#[cfg(feature = "gpu")]
fn measure(ctx: &mut ProbeContext, gpu: &super::Gpu) -> Result<Vec<BenchResult>, ProbeError> {
    use super::cuda_failure;
    use super::driver::{Arg, DeviceMemory, Launch};
    use cudarc::driver::sys::CUdevice_attribute as A;

    let module = gpu.module(super::kernels::ATOMIC)?;
    let kernel = module.kernel("atomic_add").map_err(cuda_failure)?;
    let block = gpu
        .device
        .attribute(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        .map_or(1024, |t| t.clamp(32, 1024) as u32);
    let configurations = configurations(gpu.sm_count(), block);
    let most_threads = configurations
        .iter()
        .map(|&(_, blocks, threads)| blocks as usize * threads as usize)
        .max()
        .unwrap_or(1);
    let counters = DeviceMemory::zeroed(&gpu.stream, 4 * most_threads).map_err(cuda_failure)?;
    let stream = &gpu.stream;
    let failed = super::FirstError::default();
    let note = |result| failed.note(result);
    let mut results = Vec::new();
    for (addresses, distinct) in [("same", 0u32), ("distinct", 1)] {
        for &(who, blocks, threads) in &configurations {
            let launch_of = |rounds: u32| {
                let mut launch = Launch::new(
                    kernel,
                    blocks,
                    threads,
                    &[
                        Arg::U64(counters.address()),
                        Arg::U32(rounds),
                        Arg::U32(distinct),
                    ],
                );
                move || {
                    note(launch.enqueue(stream));
                    note(stream.synchronize());
                }
            };
            let total = blocks * threads;
            let name = format!("gpu.atomic/{addresses}/{who}");
            let target = if distinct == 0 {
                "one 32-bit counter".to_string()
            } else {
                "a 32-bit counter of its own".to_string()
            };
            let result = ctx.runner.bench_slope(
                &name,
                &format!(
                    "{total} threads ({blocks} × {threads}) each adding to {target}, every add waiting for the one before: launches of {} and {} rounds, the slope per round",
                    ROUNDS.0, ROUNDS.1
                ),
                (u64::from(ROUNDS.0), launch_of(ROUNDS.0)),
                (u64::from(ROUNDS.1), launch_of(ROUNDS.1)),
            )?;
            failed.check()?;
            let per_second = f64::from(total) / result.summary.median * 1e9;
            results.push(
                result
                    .with_parameter(latlab_engine::names::key::THREADS, total)
                    .with_parameter(ATOMICS_PER_S, per_second),
            );
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_one_full_block_per_sm() {
        assert_eq!(
            configurations(132, 1024),
            [("warp", 1, 32), ("block", 1, 1024), ("grid", 132, 1024)]
        );
    }
}
