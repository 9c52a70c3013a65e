//! Sampling the benchmark's own thread with perf_event_open: a software cpu-clock event,
//! which every Linux kernel has, also where a hypervisor hides the hardware counters. Each
//! sample is the user-space instruction pointer at a timer interrupt.

use perf_event::data::Record;
use perf_event::events::Software;
use perf_event::{Builder, SampleFlag, Sampler};

/// Nanoseconds of CPU time between samples: 10,000 samples per second of the benchmark.
pub(crate) const PERIOD_NS: u64 = 100_000;
/// The event, as the profile names it.
pub(crate) const EVENT: &str = "cpu-clock (software)";
/// Bytes of the kernel's ring buffer: room for 32,768 samples of 16 bytes and their headers.
const RING_BYTES: usize = 1 << 20;

/// A sampler of this thread, off until [`ThreadSampler::sample`] runs something.
pub(crate) struct ThreadSampler {
    sampler: Sampler,
}

/// What the sampler took: instruction pointers (run-time addresses) and samples lost.
#[derive(Default)]
pub(crate) struct Samples {
    pub ips: Vec<u64>,
    pub lost: u64,
}

impl ThreadSampler {
    /// Opens the event; the error says why the kernel refused it, in one line.
    pub fn open() -> Result<ThreadSampler, String> {
        let sampler = Builder::new(Software::CPU_CLOCK)
            .observe_self()
            .any_cpu()
            .exclude_kernel(true)
            .exclude_hv(true)
            .sample_period(PERIOD_NS)
            .sample(SampleFlag::IP)
            .enabled(false)
            .build()
            .and_then(|counter| counter.sampled(RING_BYTES))
            .map_err(|e| refusal(&e))?;
        Ok(ThreadSampler { sampler })
    }

    /// Runs `f` with sampling on, and adds its samples to `samples`.
    pub fn sample<T>(&mut self, samples: &mut Samples, f: impl FnOnce() -> T) -> T {
        let enabled = self.sampler.enable().is_ok();
        let value = f();
        if enabled {
            let _ = self.sampler.disable();
        }
        self.drain(samples);
        value
    }

    fn drain(&mut self, samples: &mut Samples) {
        while let Some(record) = self.sampler.next_record() {
            match record.parse_record() {
                Ok(Record::Sample(sample)) => samples.ips.extend(sample.ip()),
                Ok(Record::Lost(lost)) => samples.lost += lost.lost,
                _ => {}
            }
        }
    }
}

/// The kernel's refusal in words a user can act on.
fn refusal(error: &std::io::Error) -> String {
    let paranoid = latlab_doors::input::system_text("/proc/sys/kernel/perf_event_paranoid")
        .map_or_else(|| "unknown".into(), |p| p.trim().to_string());
    match error.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "perf_event_open was refused ({error}); kernel.perf_event_paranoid is {paranoid}: \
             set it to 2 or lower (sysctl kernel.perf_event_paranoid=2), or allow \
             perf_event_open in the container's seccomp profile"
        ),
        Some(libc::ENOSYS) => {
            "perf_event_open is not available: this kernel was built without perf events".into()
        }
        _ => format!("perf_event_open failed: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perf_events_allowed() -> bool {
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
            .is_some_and(|p| p <= 2)
    }

    /// Spins for about `ms` of CPU time.
    #[inline(never)]
    fn spin_for(ms: u64) -> u64 {
        let start = std::time::Instant::now();
        let mut x = 1u64;
        while start.elapsed().as_millis() < ms as u128 {
            for _ in 0..1000 {
                x = std::hint::black_box(x).wrapping_mul(3).wrapping_add(1);
            }
        }
        x
    }

    #[test]
    fn samples_land_in_the_code_that_ran() {
        let sampler = ThreadSampler::open();
        if let Some(why) = latlab_engine::environment::emulation::detect() {
            // An emulator (qemu-user) implements no perf_event_open.
            latlab_test_support::skip!("emulated ({why}); sampling is the host's");
        }
        if !perf_events_allowed() {
            let why = sampler
                .err()
                .expect("refused where perf events are not allowed");
            assert!(why.contains("perf_event_paranoid"), "{why}");
            latlab_test_support::skip!("perf events are not allowed here: {why}");
        }
        let mut sampler = sampler.expect("cpu-clock sampling opens where it is allowed");
        let mut samples = Samples::default();
        // 50 ms of CPU time at one sample per 100 µs: about 500 samples.
        sampler.sample(&mut samples, || spin_for(50));
        assert!(samples.ips.len() >= 100, "{} samples", samples.ips.len());
        // Nothing is sampled while the sampler is off.
        let before = samples.ips.len();
        spin_for(20);
        sampler.sample(&mut samples, || ());
        assert!(samples.ips.len() - before < 5);
    }
}
