//! What the engine's and the probes' facts mean for the user, and what to do about them: the
//! one place where warnings, verdicts and the machine's concerns become sentences.
//!
//! The engine states facts with their figures (`Warning::HighVariance { cv }`); every
//! renderer phrases them through here, so the terminal, the files and the report say the
//! same thing, and grouping or translating them needs no parsing.

use latlab_engine::environment::Concern;
use latlab_engine::model::{Verdict, Warning};
use latlab_engine::{ClockInfo, ClockKind};

/// One warning as a sentence, with what to do.
pub fn warning(warning: &Warning) -> String {
    match warning {
        Warning::NotSteadyState {
            early_samples,
            shift,
        } => format!(
            "not at steady state: the first {early_samples} samples were {:.0}% {} than the \
             rest (frequency ramp, cold caches or page faults); raise --samples or \
             --target-time",
            shift.abs() * 100.0,
            if *shift > 0.0 { "slower" } else { "faster" }
        ),
        Warning::HighVariance { cv } => format!(
            "unstable: coefficient of variation {:.0}%; the machine was busy or its frequency \
             changed; close other programs, try --pin, or raise --samples",
            cv * 100.0
        ),
        Warning::Preempted {
            involuntary_switches,
        } => format!(
            "preempted {involuntary_switches} times while sampling: another task wanted this \
             CPU; try --pin to an idle CPU or --rt"
        ),
        Warning::MajorPageFaults { count } => format!(
            "{count} major page faults while sampling: the benchmark waited for storage; try \
             --mlock"
        ),
        Warning::FewSamples { taken, wanted } => format!(
            "only {taken} of {wanted} samples fitted in the time budget: the confidence \
             interval is wider; use the full suite for more"
        ),
        Warning::DifferenceNotSignificant => "the 95% confidence interval of the difference \
                                              includes zero: no difference was detected"
            .into(),
        Warning::CacheSizeMismatch {
            level,
            measured_bytes,
            reported_bytes,
        } => format!(
            "the latency curve puts the end of {level} near {} KiB but the kernel reports {} \
             KiB: a VM may report the host's caches, or the cache is shared with busy \
             neighbours; trust the curve for this machine as it runs",
            measured_bytes / 1024,
            reported_bytes / 1024
        ),
        Warning::PartSkipped { part, reason } => format!("{part} skipped: {reason}"),
        Warning::CheckFailed { check, failure } => format!("{check} FAILED: {failure}"),
        Warning::Phrased { message, .. } => message.clone(),
    }
}

/// A verdict as the table and the report state it.
pub fn verdict(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Measured => "measured",
        Verdict::OptimisedAway => {
            "OPTIMISED AWAY? indistinguishable from the empty loop: the compiler removed the \
             work or it costs less than the loop can resolve; pass inputs and results through \
             std::hint::black_box"
        }
    }
}

/// One of the machine's concerns as a run note, with what to do.
pub fn concern(concern: &Concern) -> String {
    match concern {
        Concern::DebugBuild => "this is a debug build: its figures say nothing about \
                                optimised code; run `cargo run --release`"
            .into(),
        Concern::Governor { governor } => format!(
            "the frequency governor is `{governor}`: figures vary with the clock speed; set \
             `performance` (cpupower frequency-set -g performance) for stable numbers"
        ),
        Concern::Virtualised { hypervisor } => format!(
            "running under {hypervisor}: the hypervisor can steal time and hide hardware \
             counters; compare only with runs on the same kind of machine"
        ),
        Concern::Loaded { load_average, cpus } => format!(
            "load average {load_average:.2} on {cpus} CPUs at the start: other work competes \
             for the CPUs; figures may be slower and noisier"
        ),
    }
}

/// What a run must say about the clock it was timed with, if anything.
pub fn clock(clock: &ClockInfo) -> Option<String> {
    if clock.kind == ClockKind::Synthetic {
        return Some("synthetic machine (--synthetic): every figure in this run is made up".into());
    }
    clock.fallback_reason.as_ref().map(|reason| {
        format!(
            "no cycle counter: {reason}; timing with clock_gettime, whose resolution limits \
             figures below a few hundred nanoseconds"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_warning_says_what_it_saw() {
        let high = warning(&Warning::HighVariance { cv: 0.23 });
        assert!(high.contains("23%") && high.contains("--pin"), "{high}");
        let early = warning(&Warning::NotSteadyState {
            early_samples: 6,
            shift: -0.12,
        });
        assert!(early.contains("first 6 samples were 12% faster"), "{early}");
        let cache = warning(&Warning::CacheSizeMismatch {
            level: "L3".into(),
            measured_bytes: 5 << 20,
            reported_bytes: 32 << 20,
        });
        assert!(
            cache.contains("5120 KiB") && cache.contains("32768 KiB"),
            "{cache}"
        );
    }
}
