//! A history as a self-contained HTML page. Its first screen is the hosts that changed, a
//! row each with its newest change, each linked to its own section; each host's section then
//! has a timeline per changed result (`plots/timeline.rs`: every run's figure with its 95%
//! interval, each change marked with its levels either side) above the table of its changes.
//! The hosts without a change are listed last.

use super::{Change, History, HostHistory, Timeline};
use crate::formats::FileFormat;
use crate::markup::{Contents, Section, page};
use crate::plots::timeline::{Mark, Point, timeline_svg};
use crate::units::{format_ns, format_ratio};
use crate::{ExportError, Exporter};
use maud::{Markup, PreEscaped, html};

/// The page of a history.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryHtml;

/// `latlab history --html FILE`.
pub(crate) const FORMAT: FileFormat<History> = FileFormat {
    name: "html",
    help: "Also write the history as a self-contained HTML page here: the hosts that changed \
        first, then each host's timeline of every changed result, run by run with its \
        interval and the change marked; '-' for standard output",
    exporter: |_| Box::new(HistoryHtml),
};

impl Exporter<History> for HistoryHtml {
    fn render(&self, history: &History) -> Result<String, ExportError> {
        let changed: Vec<(usize, &HostHistory)> = (history.hosts.iter().enumerate())
            .filter(|(_, host)| host.changed())
            .collect();
        let intro = html! {
            p {
                (history.hosts.len()) " host" @if history.hosts.len() != 1 { "s" }
                " with two runs or more · " (changed.len()) " changed"
            }
        };
        let mut sections = vec![first_screen(&changed)];
        sections.extend(changed.iter().map(|(i, host)| host_section(*i, host)));
        let unchanged: Vec<&HostHistory> = (history.hosts.iter())
            .filter(|host| !host.changed())
            .collect();
        if !unchanged.is_empty() {
            let body = html! { ul { @for host in &unchanged {
                li { (host.host) " · " (host.cpu_model) " · " (host.runs.len()) " runs" }
            } } };
            sections.push(Section::new("unchanged", "Hosts without a change", body));
        }
        if !history.notes.is_empty() {
            let notes = html! { ul { @for note in &history.notes { li { (note) } } } };
            sections.push(Section::new("notes", "Notes", notes));
        }
        Ok(page("latlab history", intro, &sections, Contents::Unlisted))
    }
}

/// The hosts that changed, each with its newest change and a link to its section.
fn first_screen(changed: &[(usize, &HostHistory)]) -> Section {
    let body = html! {
        @if changed.is_empty() {
            p { "No host has a change point." }
        } @else {
            div.scroll { table {
                tr {
                    th { "host" } th { "CPU model" } th { "runs" } th { "changes" }
                    th { "newest" } th { "ratio" } th { "from the run of" }
                }
                @for (i, host) in changed {
                    @let newest = newest_change(host);
                    tr {
                        td { a href={ "#host-" (i) } { (host.host) } }
                        td { (host.cpu_model) }
                        td { (host.runs.len()) }
                        td { (host.changes.len() + host.events.len() + host.clock_steps.len()) }
                        td { (newest.result) }
                        td { (format_ratio(newest.ratio)) }
                        td { (newest.after_run) }
                    }
                }
            } }
        }
    };
    Section::new(
        "changed",
        format!("Hosts that changed ({})", changed.len()),
        body,
    )
}

/// A host's newest change (the core clock's step where it is as new).
fn newest_change(host: &HostHistory) -> &Change {
    (host.all_changes())
        .max_by_key(|change| change.at)
        .expect("a host that changed has a change")
}

/// One host: a timeline per changed result, then the table of its changes.
fn host_section(index: usize, host: &HostHistory) -> Section {
    let all: Vec<&Change> = host.all_changes().collect();
    let body = html! {
        p { (host.cpu_model) " · " (host.runs.len()) " runs, " (host.runs[0]) " … "
            (host.runs[host.runs.len() - 1]) }
        @if !host.events.is_empty() {
            p { "Steps of the machine: many results moved at one run, reported once." }
            ul { @for event in &host.events {
                li {
                    (super::text::event_words(event))
                    ": " (event.members.iter().map(|m| format!("{} {}", m.result, format_ratio(m.ratio)))
                        .collect::<Vec<_>>().join(", "))
                }
            } }
        }
        @for timeline in &host.timelines { (timeline_figure(host, timeline, &all)) }
        div.scroll { table {
            tr {
                th { "result" } th { "before" } th { "after" } th { "ratio" } th { "95%" }
                th { "from the run of" } th { "the old level's last" } th { "what else changed" }
                th { "machine event" }
            }
            @for change in &all {
                tr {
                    td { (change.result) }
                    td { (format_ns(change.before)) }
                    td { (format_ns(change.after)) }
                    td { (format_ratio(change.ratio)) }
                    td { (change.interval.map_or("a change of mix".into(), |(low, high)| {
                        format!("{}–{}", format_ratio(low), format_ratio(high))
                    })) }
                    td { (change.after_run) }
                    td { (change.before_run) }
                    td { (environment_words(change)) }
                    td { (change.machine_event.map_or("", |at| host.runs[at].as_str())) }
                }
            }
        } }
    };
    Section::new(
        format!("host-{index}"),
        format!("{} ({})", host.host, all.len()),
        body,
    )
}

/// A result's timeline, its changes marked.
fn timeline_figure(host: &HostHistory, timeline: &Timeline, all: &[&Change]) -> Markup {
    let mut changes: Vec<Mark> = (all.iter())
        .filter(|change| change.result == timeline.result)
        .map(|change| Mark {
            at: change.at,
            before_ns: change.before,
            after_ns: change.after,
        })
        .collect();
    changes.sort_by_key(|mark| mark.at);
    let plot = timeline_svg(&crate::plots::timeline::Timeline {
        title: &timeline.result,
        runs: host.runs.len(),
        points: (timeline.points.iter())
            .map(|(run, figure)| Point {
                run: *run,
                median_ns: figure.median_ns,
                interval_ns: figure.interval_ns,
                label: &host.runs[*run],
            })
            .collect(),
        changes,
    });
    html! { @if let Some(svg) = plot { figure { (PreEscaped(svg)) } } }
}

/// What else changed in the environment at `change`, or `nothing`.
pub(crate) fn environment_words(change: &Change) -> String {
    match change.environment_text() {
        text if text.is_empty() => "nothing".into(),
        text => text,
    }
}
