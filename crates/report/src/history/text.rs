//! A history for the terminal: per host, its runs, the core clock's steps with how many
//! results stepped with them, the steps of the machine each with its members, then each
//! result's own change, newest first, with what else changed on the machine at that run;
//! and the lines of `--fail-if-slower`'s verdict.

use super::{Change, EnvironmentChange, History, HostHistory, MachineEvent, Slower};
use crate::units::{format_ns, format_percent, format_ratio, plural};
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
    if !host.changed() {
        let _ = writeln!(text, "  no change point");
    }
    changes_text(text, host, "  ");
    text.push('\n');
}

/// How many members of a machine event the terminal lists; the files list them all.
const MEMBERS_SHOWN: usize = 12;

/// A host's changes, a line each at `indent`: the core clock's steps, the machine's events
/// each with its members below it, then the results' own changes.
pub(crate) fn changes_text(text: &mut String, host: &HostHistory, indent: &str) {
    for step in &host.clock_steps {
        let _ = writeln!(
            text,
            "{indent}the core clock's cycle: {}; {} stepped with it (the same in cycles)",
            change_words(&step.change),
            plural(step.followers, "result")
        );
    }
    for event in &host.events {
        let _ = writeln!(text, "{indent}{}", event_words(event));
        for member in event.members.iter().take(MEMBERS_SHOWN) {
            let _ = writeln!(text, "{indent}  {}: {}", member.result, level_words(member));
        }
        if event.members.len() > MEMBERS_SHOWN {
            let _ = writeln!(
                text,
                "{indent}  and {} more (--json, --csv and --html list every member)",
                event.members.len() - MEMBERS_SHOWN
            );
        }
    }
    for change in &host.changes {
        let _ = writeln!(text, "{indent}{}: {}", change.result, change_words(change));
    }
}

/// `a step of the machine from the run of … (the old level's last: …): 37 results, 30
/// slower and 7 faster; nothing else changed in the environment`.
pub(crate) fn event_words(event: &MachineEvent) -> String {
    let slower = (event.members.iter()).filter(|m| m.ratio > 1.0).count();
    format!(
        "a step of the machine from the run of {} (the old level's last: {}): {}, {slower} \
         slower and {} faster; {}",
        event.after_run,
        event.before_run,
        plural(event.members.len(), "result"),
        event.members.len() - slower,
        environment_words(&event.environment_changes)
    )
}

/// `8.36 ns → 9.11 ns, 1.09× (95%: 1.07–1.11×, p 2.0e-6), from the run of … (the old level's
/// last: …); kernel 6.8.0 → 6.9.1`.
pub(crate) fn change_words(change: &Change) -> String {
    format!(
        "{}, from the run of {} (the old level's last: {}); {}",
        level_words(change),
        change.after_run,
        change.before_run,
        environment_words(&change.environment_changes)
    )
}

/// A p-value as said: `p 2.0e-6`, or below the least a float holds where it underflowed
/// (a step of many scatters over thousands of runs), never `p 0.0e0`.
fn p_words(p: f64) -> String {
    if p < f64::MIN_POSITIVE {
        format!("p < {:.0e}", f64::MIN_POSITIVE)
    } else {
        format!("p {p:.1e}")
    }
}

/// A change's levels: `8.36 ns → 9.11 ns, 1.09× (95%: 1.07–1.11×, p 2.0e-6)`, or the shares
/// of a change of mix and the typical figure they make.
fn level_words(change: &Change) -> String {
    match (change.mix, change.interval) {
        (Some((before, after)), _) => format!(
            "the mix of its two regimes changed: {} of runs in the upper before, {} after \
             ({}); its typical figure {} → {}, {}",
            format_percent(before),
            format_percent(after),
            p_words(change.p),
            format_ns(change.before),
            format_ns(change.after),
            format_ratio(change.ratio)
        ),
        (None, Some((low, high))) => format!(
            "{} → {}, {} (95%: {}–{}, {})",
            format_ns(change.before),
            format_ns(change.after),
            format_ratio(change.ratio),
            format_ratio(low),
            format_ratio(high),
            p_words(change.p)
        ),
        (None, None) => format!("{} → {}", format_ns(change.before), format_ns(change.after)),
    }
}

/// `kernel 6.8.0 → 6.9.1; latlab 0.1.0 → 0.2.0`, or that nothing else changed.
fn environment_words(changes: &[EnvironmentChange]) -> String {
    match changes.is_empty() {
        true => "nothing else changed in the environment".to_string(),
        false => super::environment_text(changes),
    }
}

/// The verdict of `--fail-if-slower PERCENT` on what was `slower`: the lines to print, and
/// whether the gate fails. With `accept_machine_steps`, a machine event or a step of the
/// core clock that no environment change explains is taken as the host's own noise, and
/// said so; anything else slower fails it.
pub fn gate_text(slower: &[Slower], percent: f64, accept_machine_steps: bool) -> (String, bool) {
    let unexplained = |item: &Slower| match item {
        Slower::ClockStep { step, .. } => step.change.environment_changes.is_empty(),
        Slower::Event { event, .. } => event.environment_changes.is_empty(),
        Slower::Change { .. } => false,
    };
    let (accepted, failing): (Vec<&Slower>, Vec<&Slower>) =
        (slower.iter()).partition(|item| accept_machine_steps && unexplained(item));
    let mut text = String::new();
    if failing.is_empty() {
        let _ = writeln!(text, "nothing made the machine more than {percent}% slower");
    } else {
        let _ = writeln!(
            text,
            "{} made the machine more than {percent}% slower (--fail-if-slower):",
            plural(failing.len(), "change")
        );
        for item in &failing {
            let _ = writeln!(text, "  {}", slower_words(item));
        }
    }
    if !accepted.is_empty() {
        let _ = writeln!(
            text,
            "{} {} of the machine that no environment change explains taken as the host's \
             own (--accept-machine-steps):",
            accepted.len(),
            if accepted.len() == 1 { "step" } else { "steps" }
        );
        for item in &accepted {
            let _ = writeln!(text, "  {}", slower_words(item));
        }
    }
    (text, !failing.is_empty())
}

/// One line of the gate: what was slower, on which host, from which run.
fn slower_words(item: &Slower) -> String {
    match item {
        Slower::ClockStep { host, step } => format!(
            "the core clock on {}: its cycle {} from the run of {}; {}",
            host.host,
            format_ratio(step.change.ratio),
            step.change.after_run,
            environment_words(&step.change.environment_changes)
        ),
        Slower::Event {
            host,
            event,
            members,
        } => {
            let named: Vec<String> = (members.iter().take(MEMBERS_SHOWN))
                .map(|m| format!("{} {}", m.result, format_ratio(m.ratio)))
                .collect();
            let more = members.len().saturating_sub(MEMBERS_SHOWN);
            format!(
                "a step of the machine on {} from the run of {}: {} of its {} slower ({}{}); {}",
                host.host,
                event.after_run,
                members.len(),
                plural(event.members.len(), "result"),
                named.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                },
                environment_words(&event.environment_changes)
            )
        }
        Slower::Change { host, change } => format!(
            "{} on {}: {} from the run of {}",
            change.result,
            host.host,
            match change.mix {
                Some((before, after)) => format!(
                    "its typical figure {} (runs in the upper regime {} → {})",
                    format_ratio(change.ratio),
                    format_percent(before),
                    format_percent(after)
                ),
                None => format_ratio(change.ratio),
            },
            change.after_run
        ),
    }
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
            machine_event: None,
        };
        let words = change_words(&change);
        assert!(
            words.starts_with(
                "the mix of its two regimes changed: 40% of runs in the upper before, 0.0% after"
            ),
            "{words}"
        );
    }

    #[test]
    fn a_p_value_that_underflowed_is_said_as_below_the_least_float() {
        assert_eq!(p_words(2.04e-6), "p 2.0e-6");
        assert_eq!(p_words(0.0), "p < 2e-308");
    }
}
