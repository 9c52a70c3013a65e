//! Whole runs of `mem.latency` on the synthetic machine as a machine latlab has not met:
//! its cache levels sized in the bytes its caches hold, and an unchanged rerun that passes
//! the gate, although a noise table measured on another machine has every one of its
//! points by name. Tests only: the synthetic machine's caches and placement effect are
//! `latlab_engine::host::Machine`'s and `Noise`'s.

#[cfg(test)]
mod tests {
    use latlab_engine::host::Noise;
    use latlab_engine::model::RunRecord;
    use latlab_engine::Warning;
    use latlab_report::stats::{NoiseTable, NoiseTables};
    use latlab_report::compare::{Comparison, DEFAULT_THRESHOLD, Gate, Verdict};

    /// `latlab run --synthetic --only mem.latency` on a noisy synthetic machine, the run
    /// `seed`: its record. Each chase at a cache level's end gets its own between-process
    /// placement effect (a quarter in logarithms, as an L1's end moves between unchanged
    /// runs: the book's "Comparing runs", "The figures behind the rules").
    fn chase_run(seed: u64) -> RunRecord {
        let noise = Noise {
            seed,
            run_sd: 0.01,
            placement_sd: 0.25,
            round_sd: 0.01,
            sample_sd: 0.02,
            ..Noise::default()
        };
        crate::run::synthetic_run_with("^mem.latency$", noise)
    }

    /// A table of another guest that has every result of `run` by name, each moving 1%
    /// between runs there (as points inside an AMD core's L2 do).
    fn another_guests_table(run: &RunRecord) -> NoiseTable {
        let mut text = String::from(
            "# latlab run-to-run noise 1: the standard deviation of the logarithm of each \
             result's run figure over runs of one machine, each run a process of its own, and \
             the widest move between two of them\ncpu\tAnother CPU\nlogical_cpus\t2\n\
             virtualization\tKVM\nkernel\t6.18\nlatlab\t0.1.0\nsuite\tquick\nrounds\t3\n\
             runs\t12\nmeasured\t2026-11-28T09:43:31Z\nresult\tsd\trange\truns\n",
        );
        for result in run.results() {
            text.push_str(&format!("{}\t0.01000\t0.03000\t12\n", result.name));
        }
        NoiseTable::parse(&text).unwrap()
    }

    /// Two unchanged runs, one a side, on a machine no table describes but another guest's:
    /// the points at a level's end are not judged from one run (their pages rule them), the
    /// rest are judged by what the pair shows, and the gate at 10% passes. Taken by name from
    /// the other guest's table, as before, the points at the L1's end moved beyond its 1%
    /// and failed the gate.
    #[test]
    fn an_unchanged_rerun_passes_the_gate_on_a_machine_not_met() {
        for pair in 0..3 {
            let runs = [
                ("A".to_string(), chase_run(2 * pair)),
                ("B".to_string(), chase_run(2 * pair + 1)),
            ];
            let table = another_guests_table(&runs[0].1);
            let comparison = Comparison::of(
                &runs,
                DEFAULT_THRESHOLD,
                &latlab_probes::presentations(),
                NoiseTables::measured(std::slice::from_ref(&table)),
            );
            let gate = Gate::of(&comparison, 10.0);
            assert!(!gate.failed(), "pair {pair}: {}", gate.text("result", "A"));
            let not_judged = (comparison.results.iter())
                .filter(|r| r.later[0].as_ref().unwrap().verdict == Verdict::AtLevelEnd)
                .count();
            assert!(not_judged > 0, "pair {pair}: no point at a level's end");
            let text = gate.text("result", "A");
            assert!(
                text.contains("cannot be gated from one run a side"),
                "{text}"
            );
        }
    }

    /// The levels are sized in the bytes the synthetic caches hold (32 KiB and 1 MiB, as its
    /// kernel reports them), within the sweep's step, not in the span where a ring of one
    /// line in four leaves them (2.5 MiB for the L2), and no level is said to differ from
    /// the kernel's.
    #[test]
    fn levels_are_sized_in_the_bytes_the_caches_hold() {
        let run = chase_run(0);
        let level = |name: &str| run.results().find(|r| r.name == name).unwrap();
        for (name, kernel) in [("mem.latency/level/L1", 32 << 10), ("mem.latency/level/L2", 1 << 20)]
        {
            let result = level(name);
            let number = |key: &'static str| {
                result.parameter(latlab_engine::parameters::Key::new(key))
                    .and_then(|v| v.as_f64())
                    .unwrap()
            };
            let held = number("size_estimate_bytes") / kernel as f64;
            assert!((0.7..1.5).contains(&held), "{name}: {held}× the kernel's");
            assert!(
                !(result.warnings.iter()).any(|w| matches!(w, Warning::CacheSizeMismatch { .. })),
                "{name}: {:?}",
                result.warnings
            );
        }
        let span = |r: &latlab_engine::BenchResult| {
            r.parameter(latlab_engine::parameters::Key::new("end_span_bytes"))
                .and_then(|v| v.as_f64())
                .unwrap()
        };
        assert!(span(level("mem.latency/level/L2")) > 2.0 * (1 << 20) as f64);
    }
}
