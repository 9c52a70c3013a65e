//! Small synthetic run records for the exporters' tests.

use latlab_engine::environment::Environment;
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord, RunSettings};
use latlab_engine::{BenchResult, ClockInfo, ClockKind};

/// A derived result whose five samples are all `median`, with parameters.
pub(crate) fn result(
    name: &str,
    median: f64,
    parameters: &[(
        latlab_engine::parameters::Key,
        latlab_engine::parameters::Value,
    )],
) -> BenchResult {
    let mut r =
        BenchResult::derived(name, "test", vec![median; 5], Vec::new(), Vec::new()).unwrap();
    for (key, value) in parameters {
        r = r.with_parameter(*key, value.clone());
    }
    r
}

pub(crate) fn probe(id: &str, results: Vec<BenchResult>) -> ProbeOutcome {
    ProbeOutcome {
        id: id.into(),
        method: "test".into(),
        status: ProbeStatus::Ok,
        results,
        duration_ns: 1,
    }
}

pub(crate) fn record(probes: Vec<ProbeOutcome>) -> RunRecord {
    let config = latlab_engine::Config {
        samples: 5,
        target_sample_time: std::time::Duration::from_nanos(1),
        budget: std::time::Duration::from_nanos(1),
        ..latlab_engine::Config::quick()
    };
    RunRecord {
        latlab_version: "0".into(),
        started_at: "2000-01-01T00:00:00Z".into(),
        settings: RunSettings::uncontrolled("quick", &config, 1),
        clock: ClockInfo {
            kind: ClockKind::Synthetic,
            method: "test".into(),
            frequency_hz: 1e9,
            resolution_ns: 1.0,
            region_overhead_ns: 1.0,
            fallback_reason: None,
        },
        environment: Environment::synthetic(),
        load_avg_after: None,
        notes: Vec::new(),
        stability: Vec::new(),
        probes,
        complete: true,
    }
}
