//! A history for the terminal: per host, its runs, the core clock's steps with how many
//! results stepped with them, then each change, newest first, with what else changed on the
//! machine at that run.

use super::{Change, History, HostHistory};
use crate::units::{format_ns, format_percent, format_ratio};
use crate::{ExportError, Exporter};
use std::fmt::Write;

/// The terminal rendering of a history.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryText;

impl Exporter<History> for HistoryText {
    fn render(&self, history: &History) -> Result<String, ExportError> {
        let mut text = String::new();
        for host in &history.hosts {
            host_text(&mut text, host);
        }
        if history.hosts.is_empty() {
            text.push_str("no host has two runs or more: no history yet\n");
        }
        for note in &history.notes {
            let _ = writeln!(text, "note: {note}");
        }
        Ok(text)
    }
}

fn host_text(text: &mut String, host: &HostHistory) {
    let (first, last) = (&host.runs[0], &host.runs[host.runs.len() - 1]);
    let _ = writeln!(
        text,
        "{} · {} · {} runs, {first} … {last}",
        host.host,
        host.cpu_model,
        host.runs.len()
    );
    for step in &host.clock_steps {
        let _ = writeln!(
            text,
            "  the core clock's cycle: {}; {} result{} stepped with it (the same in cycles)",
            change_words(&step.change),
            step.followers,
            if step.followers == 1 { "" } else { "s" }
        );
    }
    if host.changes.is_empty() {
        let _ = writeln!(text, "  no change point");
    }
    for change in &host.changes {
        let _ = writeln!(text, "  {}: {}", change.result, change_words(change));
    }
    text.push('\n');
}

/// `8.36 ns → 9.11 ns, 1.09× (95%: 1.07–1.11×, p 2.0e-6), from the run of … (the old level's
/// last: …); kernel 6.8.0 → 6.9.1`.
pub(crate) fn change_words(change: &Change) -> String {
    let mut words = match (change.mix, change.interval) {
        (Some((before, after)), _) => format!(
            "the mix of its two regimes changed: {} of runs in the upper before, {} after \
             (p {:.1e})",
            format_percent(before),
            format_percent(after),
            change.p
        ),
        (None, Some((low, high))) => format!(
            "{} → {}, {} (95%: {}–{}, p {:.1e})",
            format_ns(change.before),
            format_ns(change.after),
            format_ratio(change.ratio),
            format_ratio(low),
            format_ratio(high),
            change.p
        ),
        (None, None) => format!("{} → {}", format_ns(change.before), format_ns(change.after)),
    };
    let _ = write!(
        words,
        ", from the run of {} (the old level's last: {})",
        change.after_run, change.before_run
    );
    if change.environment_changes.is_empty() {
        words.push_str("; nothing else changed in the environment");
    }
    for field in &change.environment_changes {
        let _ = write!(
            words,
            "; {} {} → {}",
            field.field, field.before, field.after
        );
    }
    if let Some(shared) = shared_words(change) {
        let _ = write!(words, "; {shared}");
    }
    words
}

/// `6 other results changed within a run of it`, where any did.
fn shared_words(change: &Change) -> Option<String> {
    (change.shared_with > 0).then(|| {
        format!(
            "{} other {} changed within a run of it",
            change.shared_with,
            if change.shared_with == 1 {
                "result"
            } else {
                "results"
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_of_mix_says_each_share_once_as_a_percentage() {
        let change = Change {
            result: "proc.pipe".to_string(),
            at: 20,
            after_run: "2026-11-20T03:00:00Z".to_string(),
            before_run: "2026-11-19T03:00:00Z".to_string(),
            before: 3000.0,
            after: 4500.0,
            ratio: 1.5,
            interval: None,
            p: 2.6e-4,
            environment_changes: Vec::new(),
            mix: Some((0.4, 0.0)),
            shared_with: 0,
        };
        let words = change_words(&change);
        assert!(
            words.starts_with(
                "the mix of its two regimes changed: 40% of runs in the upper before, 0.0% after"
            ),
            "{words}"
        );
    }
}
