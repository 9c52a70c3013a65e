//! `gpu.spread`: the same device chase as `gpu.memory`, at one L2-resident and one
//! device-memory working set, run on one SM at a time: how much the latency depends on
//! which SM asks (its distance to the L2 slice and the memory controller that serve it).
//!
//! A launch of twice as many one-thread blocks as there are SMs carries the SM wanted; the
//! first block to arrive there (it reads `%smid`) claims the run with a compare-and-swap and
//! chases, bypassing L1; the other blocks return at once. The L2-resident ring (a quarter of
//! the L2) is walked once beforehand by an ordinary launch; the device-memory ring (four
//! times the L2) is not. Each launch continues where the last one stopped, so that the
//! device-memory ring never loads a line a recent launch brought into the L2. The quick suite visits every fourth SM, the full suite every SM.
//! Each SM's figure is the median of its launches; the result's samples are those figures,
//! one per SM, and its parameters name the SMs with their figures.

use super::ring::LINE_BYTES;
use super::sizes::FALLBACK_L2;
use crate::mem::sizes::size_label;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical};
use latlab_engine::BenchResult;
use latlab_engine::parameters::Key;

const FASTEST_SM: Key = Key::new("fastest_sm");
const PER_SM_NS: Key = Key::new("per_sm_ns");
const SLOWEST_SM: Key = Key::new("slowest_sm");
const SMS: Key = Key::new("sms");
const SPREAD: Key = Key::new("spread");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "gpu.spread",
    method: "the device chase at an L2-resident and a device-memory working set, on one SM at a time",
    timing: crate::Timing::OnDevice,
    results: &["gpu.spread/l2", "gpu.spread/dram"],
    typical: Typical::quick_full(1.5, 6.0),
    extras: super::own_process_noting("%globaltimer ns around the timed loads; per SM the median"),
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

/// Launches per SM.
const LAUNCHES_PER_SM: usize = 3;
/// Tries to land a block on an SM before it is counted as missed.
const TRIES: usize = 3;

/// The SMs visited: every fourth in the quick suite, every one in the full suite.
pub(crate) fn sms_visited(suite: Suite, sm_count: u32) -> Vec<u32> {
    let step = match suite {
        Suite::Quick => 4,
        Suite::Full => 1,
    };
    (0..sm_count).step_by(step).collect()
}

/// The spread result: `(sm, ns per load)` for each SM reached, as the samples in SM order.
fn spread_result(name: &str, method: &str, per_sm: &[(u32, f64)]) -> Option<BenchResult> {
    let samples: Vec<f64> = per_sm.iter().map(|&(_, ns)| ns).collect();
    let result = BenchResult::derived(name, method, samples.clone(), Vec::new(), Vec::new())?;
    let (low, high) = samples
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    let slowest = per_sm
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|&(sm, _)| sm);
    let fastest = per_sm
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|&(sm, _)| sm);
    let median = result.summary.median;
    let mut result = result
        .with_parameter(
            SMS,
            per_sm
                .iter()
                .map(|&(sm, _)| sm as usize)
                .collect::<Vec<_>>(),
        )
        .with_parameter(PER_SM_NS, samples)
        .with_parameter(SPREAD, (high - low) / median);
    if let (Some(fast), Some(slow)) = (fastest, slowest) {
        result = result
            .with_parameter(FASTEST_SM, fast)
            .with_parameter(SLOWEST_SM, slow);
    }
    Some(result)
}

super::entry!(measure);

#[cfg(feature = "gpu")]
fn measure(ctx: &mut ProbeContext, gpu: &super::Gpu) -> Result<Vec<BenchResult>, ProbeError> {
    use super::cuda_failure;
    use super::driver::DeviceMemory;
    use super::memory::{DeviceRing, TIMED_LOADS};
    use latlab_engine::Warning;

    let module = gpu.module(super::kernels::CHASE)?;
    let chase = OnSm {
        gpu,
        kernel: module.kernel("chase_cg_on_sm").map_err(cuda_failure)?,
        out: DeviceMemory::zeroed(&gpu.stream, 32).map_err(cuda_failure)?,
        claim: DeviceMemory::zeroed(&gpu.stream, 4).map_err(cuda_failure)?,
    };
    let walk = module.kernel("chase_cg").map_err(cuda_failure)?;
    let l2 = gpu.info.l2_bytes.unwrap_or(FALLBACK_L2);
    let sms = sms_visited(ctx.suite, gpu.sm_count());
    let mut results = Vec::new();
    for (label, what, size, warm) in [
        ("l2", "an L2-resident", l2 / 4, true),
        ("dram", "a device-memory", 4 * l2, false),
    ] {
        let ring = DeviceRing::build(gpu, size)?;
        if warm {
            chase.walk_once(walk, &ring)?;
        }
        // Every launch continues where the last one stopped, whichever SM ran it: the
        // device-memory ring is then loads of lines no recent launch touched.
        let mut position = ring.memory.address();
        let mut per_sm = Vec::new();
        let mut missed = Vec::new();
        for &sm in &sms {
            let mut figures = chase.figures(ctx.runner, sm, &mut position)?;
            if figures.is_empty() {
                missed.push(sm);
                continue;
            }
            figures.sort_by(f64::total_cmp);
            per_sm.push((sm, figures[figures.len() / 2]));
        }
        let method = format!(
            "one thread's dependent loads bypassing L1 over {what} random ring of {} ({TIMED_LOADS} per launch), on one SM at a time: each SM's median of {LAUNCHES_PER_SM} launches",
            size_label(size)
        );
        let Some(mut result) = spread_result(&format!("gpu.spread/{label}"), &method, &per_sm)
        else {
            return Err(ProbeError::Failed(format!(
                "no block of the {label} chase landed on any of the {} SMs asked for",
                sms.len()
            )));
        };
        result = result
            .with_parameter(latlab_engine::names::key::WORKING_SET_BYTES, size)
            .with_parameter(latlab_engine::names::key::LINE_BYTES, LINE_BYTES);
        if !missed.is_empty() {
            result.warnings.push(Warning::part_skipped(
                &format!("{} of {} SMs", missed.len(), sms.len()),
                "no block of the launch landed on them",
            ));
        }
        results.push(result);
    }
    Ok(results)
}

/// The chase on one SM at a time: a launch of twice as many one-thread blocks as SMs, each
/// told the SM wanted; the first to land there claims the run (`claim`) and chases, writing
/// to `out`.
#[cfg(feature = "gpu")]
struct OnSm<'a, 'm> {
    gpu: &'a super::Gpu,
    kernel: super::driver::Kernel<'m>,
    out: super::driver::DeviceMemory,
    claim: super::driver::DeviceMemory,
}

#[cfg(feature = "gpu")]
impl OnSm<'_, '_> {
    /// Walks the ring once with one thread (`walk`), loading every line, untimed.
    fn walk_once(
        &self,
        walk: super::driver::Kernel<'_>,
        ring: &super::memory::DeviceRing,
    ) -> Result<(), ProbeError> {
        use super::driver::{Arg, Launch};
        let stream = &self.gpu.stream;
        let args = [
            Arg::U64(ring.memory.address()),
            Arg::U64(ring.lines),
            Arg::U64(8),
            Arg::U64(self.out.address()),
        ];
        Launch::new(walk, 1, 1, &args)
            .enqueue(stream)
            .and_then(|()| stream.synchronize())
            .map_err(super::cuda_failure)
    }

    /// Nanoseconds per load of up to [`LAUNCHES_PER_SM`] launches that ran on `sm`, each
    /// continuing from `position`, in at most [`TRIES`] times as many launches.
    fn figures(
        &self,
        runner: &latlab_engine::Runner,
        sm: u32,
        position: &mut u64,
    ) -> Result<Vec<f64>, ProbeError> {
        use super::cuda_failure;
        use super::driver::{Arg, Launch};
        use super::memory::{TIMED_LOADS, read_chase_output};
        use latlab_engine::Interrupted;

        let stream = &self.gpu.stream;
        let mut figures = Vec::new();
        let mut tries = 0;
        while figures.len() < LAUNCHES_PER_SM && tries < TRIES * LAUNCHES_PER_SM {
            if (runner.config().cancel).load(std::sync::atomic::Ordering::Relaxed) {
                return Err(Interrupted.into());
            }
            tries += 1;
            self.out.write(&[0u64; 4], stream).map_err(cuda_failure)?;
            self.claim.write(&[0u32], stream).map_err(cuda_failure)?;
            let args = [
                Arg::U64(*position),
                Arg::U64(0),
                Arg::U64(TIMED_LOADS),
                Arg::U64(self.out.address()),
                Arg::U32(sm),
                Arg::U64(self.claim.address()),
            ];
            Launch::new(self.kernel, 2 * self.gpu.sm_count(), 1, &args)
                .enqueue(stream)
                .and_then(|()| stream.synchronize())
                .map_err(cuda_failure)?;
            let [cycles, ns, last, ran_on] =
                read_chase_output(&self.out, stream).map_err(cuda_failure)?;
            if cycles > 0 && ran_on == u64::from(sm) {
                figures.push(ns as f64 / TIMED_LOADS as f64);
                *position = last;
            }
        }
        Ok(figures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_runs_visit_every_fourth_sm() {
        assert_eq!(sms_visited(Suite::Quick, 10), [0, 4, 8]);
        assert_eq!(sms_visited(Suite::Full, 3), [0, 1, 2]);
    }

    #[test]
    fn the_spread_names_its_fastest_and_slowest_sm() {
        let r = spread_result("gpu.spread/l2", "m", &[(0, 100.0), (4, 120.0), (8, 110.0)]).unwrap();
        assert_eq!(r.summary.n, 3);
        assert_eq!(r.parameter(FASTEST_SM).unwrap().as_u64(), Some(0));
        assert_eq!(r.parameter(SLOWEST_SM).unwrap().as_u64(), Some(4));
        let spread = r.parameter(SPREAD).unwrap().as_f64().unwrap();
        assert!((spread - 20.0 / 110.0).abs() < 1e-9, "{spread}");
        assert!(spread_result("gpu.spread/l2", "m", &[]).is_none());
    }
}
