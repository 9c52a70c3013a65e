//! The x86-64 time-stamp counter.
//!
//! Used only when it is invariant: CPUID leaf 0x8000_0007 EDX bit 8, or the kernel's
//! `constant_tsc` and `nonstop_tsc` flags in /proc/cpuinfo (hypervisors often hide the CPUID bit
//! but the kernel still knows). Its frequency is calibrated against `CLOCK_MONOTONIC_RAW`: each
//! end of a window pairs one OS-clock read with the midpoint of the two TSC reads around it,
//! keeping the tightest of several tries, and two windows of different length must agree.

use super::TickSource;
use super::os::monotonic_raw_ns;
use std::arch::x86_64::{__cpuid, __rdtscp, _mm_lfence, _rdtsc};

pub(crate) const METHOD: &str =
    "invariant TSC: lfence; rdtsc at the start, rdtscp; lfence at the end";

/// The two calibration windows, in nanoseconds.
const WINDOWS_NS: [u64; 2] = [10_000_000, 25_000_000];
/// How far apart the two windows' frequencies may be.
const MAX_DISAGREEMENT: f64 = 500e-6;

pub(crate) struct Tsc;

impl TickSource for Tsc {
    #[inline(always)]
    fn start() -> u64 {
        // SAFETY: lfence and rdtsc exist on every x86-64 CPU.
        unsafe {
            _mm_lfence();
            _rdtsc()
        }
    }

    #[inline(always)]
    fn end() -> u64 {
        let mut aux = 0u32;
        // SAFETY: rdtscp was checked to exist before this clock was chosen (`usable`); `aux`
        // is a valid place for the processor id it also returns.
        unsafe {
            let ticks = __rdtscp(&mut aux);
            _mm_lfence();
            ticks
        }
    }
}

/// The TSC's frequency in hertz when it can be trusted, else why not.
pub(crate) fn usable() -> Result<f64, String> {
    if !has_rdtscp() {
        return Err("the CPU has no rdtscp instruction".into());
    }
    if !invariant() {
        return Err(
            "the TSC is not invariant (no CPUID invariant-TSC bit, no constant_tsc+nonstop_tsc)"
                .into(),
        );
    }
    calibrate()
}

/// The highest extended CPUID leaf; leaves above it must not be queried.
fn max_extended_leaf() -> u32 {
    __cpuid(0x8000_0000).eax
}

/// CPUID leaf 0x8000_0001 EDX bit 27.
fn has_rdtscp() -> bool {
    max_extended_leaf() >= 0x8000_0001 && __cpuid(0x8000_0001).edx & (1 << 27) != 0
}

fn invariant() -> bool {
    let by_cpuid = max_extended_leaf() >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0;
    by_cpuid || kernel_says_invariant()
}

fn kernel_says_invariant() -> bool {
    let Some(cpuinfo) = latlab_doors::input::system_text("/proc/cpuinfo") else {
        return false;
    };
    cpuinfo
        .lines()
        .find(|line| line.starts_with("flags"))
        .is_some_and(|flags| {
            let has = |wanted: &str| flags.split_whitespace().any(|flag| flag == wanted);
            has("constant_tsc") && has("nonstop_tsc")
        })
}

/// One (TSC, OS nanoseconds) pair: the OS read bracketed by two TSC reads, the tightest of a
/// few tries, the TSC taken at the bracket's midpoint.
fn paired_read() -> (u64, u64) {
    (0..7)
        .map(|_| {
            let before = Tsc::start();
            let ns = monotonic_raw_ns();
            let after = Tsc::end();
            (after - before, before + (after - before) / 2, ns)
        })
        .min_by_key(|&(bracket, _, _)| bracket)
        .map(|(_, tsc, ns)| (tsc, ns))
        .expect("seven tries")
}

fn window_frequency_hz(window_ns: u64) -> f64 {
    let (tsc0, ns0) = paired_read();
    while monotonic_raw_ns() < ns0 + window_ns {
        std::hint::spin_loop();
    }
    let (tsc1, ns1) = paired_read();
    (tsc1 - tsc0) as f64 * 1e9 / (ns1 - ns0) as f64
}

fn calibrate() -> Result<f64, String> {
    let short = window_frequency_hz(WINDOWS_NS[0]);
    let long = window_frequency_hz(WINDOWS_NS[1]);
    let disagreement = (short - long).abs() / long;
    if disagreement > MAX_DISAGREEMENT {
        return Err(format!(
            "TSC calibration windows disagree by {:.0} ppm ({:.3} vs {:.3} MHz)",
            disagreement * 1e6,
            short / 1e6,
            long / 1e6
        ));
    }
    Ok(long)
}
