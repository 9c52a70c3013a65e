//! The aarch64 generic timer: `CNTVCT_EL0`, read after an `isb` so that it is not read early,
//! at the frequency the firmware states in `CNTFRQ_EL0` (typically 24 MHz to 1 GHz). Its tick
//! is coarse on many machines, which the measured resolution then shows.

use super::TickSource;
use std::arch::asm;

pub(crate) const METHOD: &str = "isb; mrs CNTVCT_EL0 at the CNTFRQ_EL0 frequency";

/// The counter's frequency, as the hardware states it.
pub(crate) fn frequency_hz() -> Result<f64, String> {
    let hz: u64;
    // SAFETY: CNTFRQ_EL0 is readable from EL0 on every Linux aarch64 system (the kernel enables
    // user access to the virtual counter) and on macOS; the read has no side effects.
    unsafe { asm!("mrs {}, cntfrq_el0", out(reg) hz, options(nomem, nostack)) };
    if hz == 0 {
        Err("CNTFRQ_EL0 reads 0: the firmware did not set the counter frequency".into())
    } else {
        Ok(hz as f64)
    }
}

pub(crate) struct Cntvct;

impl TickSource for Cntvct {
    #[inline(always)]
    fn start() -> u64 {
        let ticks: u64;
        // SAFETY: as above; `isb` only orders the instruction stream.
        unsafe { asm!("isb", "mrs {}, cntvct_el0", out(reg) ticks, options(nostack)) };
        ticks
    }

    #[inline(always)]
    fn end() -> u64 {
        let ticks: u64;
        // SAFETY: as above.
        unsafe { asm!("isb", "mrs {}, cntvct_el0", "isb", out(reg) ticks, options(nostack)) };
        ticks
    }
}
