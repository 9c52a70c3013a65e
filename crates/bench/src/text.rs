//! What a run prints after the results table: the comparisons with each set's baseline,
//! allocations per call, and each benchmark's profile.

use latlab_engine::model::{Profile, RunRecord};
use latlab_engine::names::key;
use latlab_engine::units::format_bytes;
use latlab_report::terminal::Terminal;
use latlab_report::{Align, TextTable, advice, group_ratio_sentence};

/// Instructions of the hottest function shown on the terminal; the files keep them all.
const SHOWN_INSTRUCTIONS: usize = 40;
/// Hot functions shown on the terminal.
const SHOWN_FUNCTIONS: usize = 8;

/// "push_grow/16 is 1.32× as slow as with_capacity/16 (95% CI 1.28–1.36×)", one per
/// compared benchmark, wrapped to the terminal's width.
pub(crate) fn comparison_lines(record: &RunRecord, terminal: &Terminal) -> Vec<String> {
    (record.results().filter_map(group_ratio_sentence))
        .flat_map(|sentence| wrapped(terminal, &sentence))
        .collect()
}

/// `text` wrapped to the terminal's width, as lines.
fn wrapped(terminal: &Terminal, text: &str) -> Vec<String> {
    terminal
        .prose("", text)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A table of allocations and bytes per call of each benchmark counted; empty when no
/// counting allocator is installed.
pub(crate) fn allocation_lines(record: &RunRecord) -> Vec<String> {
    let mut table = TextTable::new(["allocations per call", "allocations", "bytes"]);
    for result in record.results() {
        if let Some(a) = &result.allocations {
            table.rows.push(vec![
                format!("  {}", result.name),
                trimmed(a.count),
                format_bytes(a.bytes),
            ]);
        }
    }
    lines_of(&table)
}

/// A table of what each counted benchmark executed per call (`--count`), headed by what
/// counted; empty when nothing was counted.
pub(crate) fn count_lines(record: &RunRecord) -> Vec<String> {
    let counted: Vec<(&str, &latlab_engine::model::Counted)> = (record.results())
        .filter_map(|r| Some((r.name.as_str(), r.counted.as_ref()?)))
        .collect();
    let Some((_, first)) = counted.first() else {
        return Vec::new();
    };
    let by = match first.via.as_str() {
        "callgrind" => "Valgrind's callgrind, in the timed loops only",
        _ => "the CPU's instructions:u counter, in the timed loops only",
    };
    let cache = counted.iter().any(|(_, c)| c.cache.is_some());
    let mut headers = vec![format!("counted per call, by {by}"), "instructions".into()];
    if cache {
        headers.extend(["L1 misses", "LL misses", "est. cycles"].map(String::from));
    }
    let mut table = TextTable {
        headers,
        rows: Vec::new(),
    };
    for (name, c) in counted {
        let mut row = vec![format!("  {name}"), trimmed(c.instructions)];
        if let Some(misses) = &c.cache {
            row.extend([
                trimmed(misses.l1_misses),
                trimmed(misses.last_level_misses),
                trimmed(misses.estimated_cycles),
            ]);
        }
        table.rows.push(row);
    }
    lines_of(&table)
}

/// Each benchmark's time per call in core cycles, headed by the cycle they are counted in
/// (wrapped to the terminal's width); empty when no cycle was measured.
pub(crate) fn cycle_lines(record: &RunRecord, terminal: &Terminal) -> Vec<String> {
    let mut table = TextTable::new(["  benchmark", "cycles"]);
    let mut cycle = None;
    for result in record.results() {
        let parameter = |key| result.parameter(key).and_then(|v| v.as_f64());
        if let (Some(cycles), Some(cycle_ns)) = (
            parameter(key::CYCLES_PER_CALL),
            parameter(key::CORE_CYCLE_NS),
        ) {
            cycle.get_or_insert(cycle_ns);
            let shown = if cycles < 100.0 {
                format!("{cycles:.1}")
            } else {
                format!("{cycles:.0}")
            };
            table.rows.push(vec![format!("  {}", result.name), shown]);
        }
    }
    let Some(cycle_ns) = cycle else {
        return Vec::new();
    };
    let heading = format!(
        "cycles per call, of a core cycle measured at {cycle_ns:.3} ns ({:.2} GHz) by a chain \
         of dependent adds:",
        1.0 / cycle_ns
    );
    let mut lines = wrapped(terminal, &heading);
    lines.extend(lines_of(&table));
    lines
}

/// The table's lines, names left and figures right; none when it has no rows.
fn lines_of(table: &TextTable) -> Vec<String> {
    if table.rows.is_empty() {
        return Vec::new();
    }
    (table.aligned(&[Align::Left]).lines())
        .map(str::to_string)
        .collect()
}

/// Each profiled benchmark's hot functions and the hottest one's annotated instructions.
pub(crate) fn profile_text(record: &RunRecord) -> String {
    let mut text = String::new();
    for result in record.results() {
        if let Some(profile) = &result.profile {
            text.push_str(&one_profile(&result.name, profile));
        }
    }
    text
}

fn one_profile(name: &str, profile: &Profile) -> String {
    let mut text = format!("\nprofile of {name}: {}\n", advice::profile_taken(profile));
    for function in profile.functions.iter().take(SHOWN_FUNCTIONS) {
        text.push_str(&format!(
            "  {:>6.2}%  {}\n",
            function.share * 100.0,
            function.name
        ));
    }
    if let Some(counters) = &profile.counters {
        let counts = advice::hardware_counts(counters);
        text.push_str(&format!("  per call: {counts}\n"));
    }
    if let Some(note) = &profile.counters_note {
        text.push_str(&format!("  {note}\n"));
    }
    if let Some(annotated) = &profile.annotated {
        text.push_str(&format!("  hottest function: {}\n", annotated.name));
        let shown = shown_instructions(annotated.instructions.len(), |i| {
            annotated.instructions[i].samples
        });
        let mut last = None;
        for i in shown {
            if last.is_some_and(|l| l + 1 != i) {
                text.push_str("        …\n");
            }
            let instruction = &annotated.instructions[i];
            let share = if instruction.samples > 0 {
                format!("{:6.2}%", instruction.share * 100.0)
            } else {
                String::new()
            };
            text.push_str(&format!(
                "  {share:>7}  {:>8x}  {:<44} {}\n",
                instruction.address,
                instruction.text,
                instruction.line.as_deref().unwrap_or("")
            ));
            last = Some(i);
        }
        if last.is_some_and(|l| l + 1 < annotated.instructions.len()) {
            text.push_str("        …\n");
        }
    }
    if let Some(note) = &profile.annotation_note {
        text.push_str(&format!("  {note}\n"));
    }
    text
}

/// The instructions a terminal shows: all of a short function; of a long one, those with
/// samples and two either side, at most [`SHOWN_INSTRUCTIONS`], the hottest kept first.
fn shown_instructions(count: usize, samples: impl Fn(usize) -> u64) -> Vec<usize> {
    if count <= SHOWN_INSTRUCTIONS {
        return (0..count).collect();
    }
    let mut hot: Vec<usize> = (0..count).filter(|&i| samples(i) > 0).collect();
    hot.sort_by_key(|&i| std::cmp::Reverse(samples(i)));
    let mut shown = std::collections::BTreeSet::new();
    for i in hot {
        let around = i.saturating_sub(2)..(i + 3).min(count);
        if shown.len() + around.len() > SHOWN_INSTRUCTIONS {
            break;
        }
        shown.extend(around);
    }
    shown.into_iter().collect()
}

/// A per-call figure without a meaningless tail: "9", "0.5", "1.33".
fn trimmed(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_function_shows_its_hot_instructions_with_context() {
        let samples = |i: usize| if i == 100 || i == 300 { 5 } else { 0 };
        let shown = shown_instructions(1_000, samples);
        assert_eq!(shown, vec![98, 99, 100, 101, 102, 298, 299, 300, 301, 302]);
        assert_eq!(shown_instructions(10, samples), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn per_call_counts_lose_only_trailing_zeros() {
        assert_eq!(trimmed(9.0), "9");
        assert_eq!(trimmed(0.5), "0.5");
        assert_eq!(trimmed(1.333), "1.33");
    }
}
