//! `clock.vdso`: `clock_gettime(CLOCK_MONOTONIC)`, the call behind `std::time::Instant::now`.
//!
//! glibc routes it through the vDSO, so no system call happens when the kernel's clock source
//! can be read from user space (`tsc`, `kvm-clock` with a stable TSC); with another clock
//! source (`hpet`, `acpi_pm`, or Xen's without a stable TSC) it falls back to a real system
//! call, many times slower. The clock source in use is recorded as a parameter.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::parameters::Key;

const CLOCKSOURCE: Key = Key::new("clocksource");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "clock.vdso",
    method: "clock_gettime(CLOCK_MONOTONIC) through the vDSO, back to back",
    timing: crate::Timing::LessEmptyLoop,
    results: &["clock.vdso/monotonic"],
    typical: Typical::quick_full(0.10, 1.1),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let clocksource = ctx
        .host()
        .clocksource()
        .unwrap_or_else(|| "unknown".to_string());
    let result = ctx
        .runner
        .bench(
            "clock.vdso/monotonic",
            "clock_gettime(CLOCK_MONOTONIC) via glibc and the vDSO, back to back",
            || {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: `ts` is a valid, writable timespec.
                unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
                ts.tv_nsec
            },
        )?
        .with_parameter(CLOCKSOURCE, clocksource);
    Ok(vec![result])
}
