//! A history as JSON: `hosts[]`, each with `host`, `cpu_model`, `runs` (each run's start,
//! oldest first), `clock_steps[]`, `machine_events[]`, `changes[]` (the results' own) and
//! `timelines[]`. Each change has `result`, `after_run`, `before_run`, `before` and `after`
//! (nanoseconds), `ratio`, `interval`, `p`, `mix` (for a result in two regimes, the share of
//! runs in the upper one before and after), `environment_changes[]` (`field`, `before`,
//! `after`) and `machine_event` (the start of the run its machine event began at, or null).
//! A machine event has `after_run`, `before_run`, `environment_changes[]` and `members[]`
//! (each a change). A timeline is a changed result's every run: `result` and `points[]`,
//! each with the run's `start`, its `median_ns` and the median's 95% `interval_ns`.

use super::{Change, EnvironmentChange, History};
use crate::formats::FileFormat;
use crate::{ExportError, Exporter};
use serde_json::{Value, json};

/// The version of the history's JSON; raised on incompatible changes.
pub const HISTORY_JSON_VERSION: u32 = 2;

/// The JSON rendering of a history.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryJson;

/// `latlab history --json FILE`.
pub(crate) const FORMAT: FileFormat<History> = FileFormat {
    name: "json",
    help: "Also write the history as JSON here: each host's runs and changes, each change with \
        its levels, ratio, interval and what else changed in the environment; '-' for \
        standard output",
    exporter: |_| Box::new(HistoryJson),
};

impl Exporter<History> for HistoryJson {
    fn render(&self, history: &History) -> Result<String, ExportError> {
        let hosts: Vec<Value> = (history.hosts.iter())
            .map(|host| {
                let change = |change: &Change| change_json(change, &host.runs);
                json!({
                    "host": host.host,
                    "cpu_model": host.cpu_model,
                    "runs": host.runs,
                    "clock_steps": host.clock_steps.iter().map(|step| json!({
                        "change": change(&step.change),
                        "followers": step.followers,
                    })).collect::<Vec<_>>(),
                    "machine_events": host.events.iter().map(|event| json!({
                        "after_run": event.after_run,
                        "before_run": event.before_run,
                        "environment_changes": environment_json(&event.environment_changes),
                        "members": event.members.iter().map(change).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                    "changes": host.changes.iter().map(change).collect::<Vec<_>>(),
                    "timelines": host.timelines.iter().map(|timeline| json!({
                        "result": timeline.result,
                        "points": timeline.points.iter().map(|(run, figure)| json!({
                            "start": host.runs[*run],
                            "median_ns": figure.median_ns,
                            "interval_ns": figure.interval_ns,
                        })).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let document = json!({
            "latlab_history_version": HISTORY_JSON_VERSION,
            "hosts": hosts,
            "notes": history.notes,
        });
        serde_json::to_string_pretty(&document)
            .map(|text| text + "\n")
            .map_err(|e| ExportError::Encode {
                format: "json",
                detail: e.to_string(),
            })
    }
}

fn change_json(change: &Change, runs: &[String]) -> Value {
    json!({
        "result": change.result,
        "after_run": change.after_run,
        "before_run": change.before_run,
        "before": change.before,
        "after": change.after,
        "ratio": change.ratio,
        "interval": change.interval.map(|(low, high)| [low, high]),
        "p": change.p,
        "mix": change.mix.map(|(before, after)| json!({"before": before, "after": after})),
        "machine_event": change.machine_event.map(|at| &runs[at]),
        "environment_changes": environment_json(&change.environment_changes),
    })
}

fn environment_json(changes: &[EnvironmentChange]) -> Value {
    (changes.iter())
        .map(|field| json!({"field": field.field, "before": field.before, "after": field.after}))
        .collect()
}
