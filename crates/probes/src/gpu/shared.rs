//! `gpu.shared`: the load-to-use latency of shared memory, one thread following a ring of
//! shared-memory addresses (`kernels/shared.ptx`) timed on the device's clocks.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "gpu.shared",
    method: "one GPU thread's dependent loads over a ring in shared memory",
    timing: crate::Timing::OnDevice,
    results: &["gpu.shared/load"],
    typical: Typical::quick_full(0.3, 0.5),
    extras: super::own_process_noting("%globaltimer ns and %clock64 cycles around the timed loads"),
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

/// Words of the ring (4 KiB), and the step between consecutive entries (coprime with it).
const WORDS: u32 = 1024;
const STRIDE: u32 = 33;
/// Timed loads per launch.
const TIMED_LOADS: u32 = 8192;

super::entry!(measure);

#[cfg(feature = "gpu")]
fn measure(ctx: &mut ProbeContext, gpu: &super::Gpu) -> Result<Vec<BenchResult>, ProbeError> {
    use super::cuda_failure;
    use super::driver::{Arg, DeviceMemory, Launch};
    use super::session::DeviceTime;

    let module = gpu.module(super::kernels::SHARED)?;
    let kernel = module.kernel("shared_chase").map_err(cuda_failure)?;
    let out = DeviceMemory::zeroed(&gpu.stream, 24).map_err(cuda_failure)?;
    let mut launch = Launch::new(
        kernel,
        1,
        1,
        &[
            Arg::U32(WORDS),
            Arg::U32(STRIDE),
            Arg::U32(WORDS),
            Arg::U32(TIMED_LOADS),
            Arg::U64(out.address()),
        ],
    );
    let stream = &gpu.stream;
    // One launch per sample of the run (30 in the quick suite), after the cold one.
    let launches = ctx.runner.config().samples;
    let result = super::device_timed(
        ctx.runner,
        "gpu.shared/load",
        &format!(
            "one thread's dependent 32-bit loads over a ring of {WORDS} shared-memory words, {TIMED_LOADS} per launch"
        ),
        launches,
        u64::from(TIMED_LOADS),
        || {
            launch.enqueue(stream)?;
            stream.synchronize()?;
            let mut words = [0u64; 3];
            out.read(&mut words, stream)?;
            Ok(DeviceTime {
                cycles: words[0],
                ns: words[1],
            })
        },
    )?;
    Ok(vec![result])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ring the kernel builds, entry i pointing to (i + STRIDE) mod WORDS, is one cycle
    /// through every word, and fits the static array the PTX declares.
    #[test]
    fn the_shared_ring_is_one_cycle() {
        let mut seen = vec![false; WORDS as usize];
        let mut i = 0u32;
        for _ in 0..WORDS {
            assert!(!seen[i as usize]);
            seen[i as usize] = true;
            i = (i + STRIDE) % WORDS;
        }
        assert_eq!(i, 0);
        assert!(super::super::kernels::SHARED.contains(".b32 ring[4096]"));
        const { assert!(WORDS <= 4096) };
        const {
            assert!(
                TIMED_LOADS.is_multiple_of(8),
                "the kernel's loop loads eight at a time"
            )
        };
    }
}
