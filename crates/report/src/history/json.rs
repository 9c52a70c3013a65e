//! A history as JSON: `hosts[]`, each with `host`, `cpu_model`, `runs` (each run's start,
//! oldest first), `clock_steps[]` and `changes[]`; each change with `result`, `after_run`,
//! `before_run`, `before` and `after` (nanoseconds), `ratio`, `interval`, `p`, `mix` (for a
//! result in two regimes, the share of runs in the upper one before and after),
//! `environment_changes[]` (`field`, `before`, `after`) and `shared_with` (how many other
//! results changed within a run of it).

use super::{Change, History};
use crate::formats::FileFormat;
use crate::{ExportError, Exporter};
use serde_json::{Value, json};

/// The version of the history's JSON; raised on incompatible changes.
pub const HISTORY_JSON_VERSION: u32 = 1;

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
                json!({
                    "host": host.host,
                    "cpu_model": host.cpu_model,
                    "runs": host.runs,
                    "clock_steps": host.clock_steps.iter().map(|step| json!({
                        "change": change_json(&step.change),
                        "followers": step.followers,
                    })).collect::<Vec<_>>(),
                    "changes": host.changes.iter().map(change_json).collect::<Vec<_>>(),
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

fn change_json(change: &Change) -> Value {
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
        "shared_with": change.shared_with,
        "environment_changes": change.environment_changes.iter().map(|field| json!({
            "field": field.field,
            "before": field.before,
            "after": field.after,
        })).collect::<Vec<_>>(),
    })
}
