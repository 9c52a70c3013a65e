//! `--only` and `--skip`: regular expressions over probe ids or result names.
//!
//! A pattern without a `/` is matched against probe ids (`--only cpu` runs the CPU family,
//! not `mem.bandwidth/…/all-cpus`). A pattern with a `/` is matched against result names
//! (`cpu.branch/random`, `level/L[12]$`, `mem.memcpy/`): `--only` then runs each probe one
//! of whose result names it can match ([`ProbeSpec::results`], each placeholder standing
//! for any of its values) and keeps the results it matches; `--skip` leaves out the results
//! it matches, and a probe all of whose results it would match. A result kept keeps those it
//! is derived from.

use super::UsageError;
use latlab_engine::model::BenchResult;
use latlab_engine::result_names::template_regex;
use latlab_probes::ProbeSpec;
use regex::Regex;
use regex_automata::Anchored;
use regex_automata::dfa::{Automaton, dense};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use std::collections::HashSet;

/// What `--only` and `--skip` keep.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    only: Option<Pattern>,
    skip: Option<Pattern>,
}

/// A regular expression, and the same as a DFA to ask whether it can match a template.
#[derive(Debug, Clone)]
struct Pattern {
    regex: Regex,
    /// Whether it is matched against result names (it has a `/`) rather than probe ids.
    by_name: bool,
    /// `None` when the expression has no DFA (a Unicode word boundary): it may then match
    /// any template.
    dfa: Option<DenseDfa>,
}

type DenseDfa = dense::DFA<Vec<u32>>;

impl Pattern {
    fn new(flag: &str, text: &str) -> Result<Pattern, UsageError> {
        let regex = Regex::new(text).map_err(|e| {
            let detail = e.to_string();
            let reason = detail.lines().last().unwrap_or("invalid").trim();
            UsageError(format!(
                "{flag} '{text}' is not a valid regular expression ({reason}); for example \
                 'clock|cpu', or a result name as 'latlab list' shows it"
            ))
        })?;
        Ok(Pattern {
            regex,
            by_name: text.contains('/'),
            dfa: DenseDfa::new(text).ok(),
        })
    }

    /// Whether some name the template stands for contains a match.
    fn can_match_template(&self, template: &str) -> bool {
        self.template_has_name(template, true)
    }

    /// Whether some name the template stands for contains no match.
    fn can_miss_template(&self, template: &str) -> bool {
        self.template_has_name(template, false)
    }

    /// Whether the template stands for a name that the pattern matches (or, with `matching`
    /// false, does not): a search of the product of the template's DFA (anchored, whole
    /// names) and the pattern's (unanchored). A template or pattern without a DFA may have
    /// either.
    fn template_has_name(&self, template: &str, matching: bool) -> bool {
        let names = template_regex(template)
            .ok()
            .and_then(|regex| DenseDfa::new(&regex).ok());
        let (Some(pattern), Some(names)) = (&self.dfa, names) else {
            return true;
        };
        let anchored = start::Config::new().anchored(Anchored::Yes);
        let unanchored = start::Config::new().anchored(Anchored::No);
        let (Ok(name_start), Ok(pattern_start)) = (
            names.start_state(&anchored),
            pattern.start_state(&unanchored),
        ) else {
            return true;
        };
        let mut seen = HashSet::new();
        let mut frontier = vec![(name_start, Search::Looking(pattern_start))];
        while let Some((name, search)) = frontier.pop() {
            if !seen.insert((name, search)) {
                continue;
            }
            let search = search.after_match_check(pattern);
            if names.is_match_state(names.next_eoi_state(name))
                && search.matched_at_end(pattern) == matching
            {
                return true;
            }
            for byte in 0..=u8::MAX {
                let next_name = names.next_state(name, byte);
                if !names.is_dead_state(next_name) {
                    frontier.push((next_name, search.next(pattern, byte)));
                }
            }
        }
        false
    }
}

/// Where the pattern's search stands on a name: still looking (its DFA state, which may be a
/// dead one) or matched (anything after a match keeps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Search {
    Looking(StateID),
    Matched,
}

impl Search {
    /// A DFA reports a match one byte late: entering a match state means the match ended
    /// before the byte just read.
    fn after_match_check(self, dfa: &DenseDfa) -> Search {
        match self {
            Search::Looking(state) if dfa.is_match_state(state) => Search::Matched,
            other => other,
        }
    }

    fn matched_at_end(self, dfa: &DenseDfa) -> bool {
        match self {
            Search::Matched => true,
            Search::Looking(state) => dfa.is_match_state(dfa.next_eoi_state(state)),
        }
    }

    fn next(self, dfa: &DenseDfa, byte: u8) -> Search {
        match self {
            Search::Looking(state) => Search::Looking(dfa.next_state(state, byte)),
            Search::Matched => Search::Matched,
        }
    }
}

impl Selection {
    pub fn new(only: Option<&str>, skip: Option<&str>) -> Result<Selection, UsageError> {
        Ok(Selection {
            only: only.map(|p| Pattern::new("--only", p)).transpose()?,
            skip: skip.map(|p| Pattern::new("--skip", p)).transpose()?,
        })
    }

    /// Whether the probe runs: `--only` matches its id or can match one of its result
    /// names, and `--skip` matches neither its id nor every one of its result names.
    pub fn runs(&self, probe: &ProbeSpec) -> bool {
        let only = self.only.as_ref().is_none_or(|only| {
            if only.by_name {
                probe.results.iter().any(|t| only.can_match_template(t))
            } else {
                only.regex.is_match(probe.id)
            }
        });
        let skipped = self.skip.as_ref().is_some_and(|skip| {
            if skip.by_name {
                probe.results.iter().all(|t| !skip.can_miss_template(t))
            } else {
                skip.regex.is_match(probe.id)
            }
        });
        only && !skipped
    }

    /// Keeps the results of a probe that ran which the selection keeps, and those they are
    /// derived from (`cpu.branch/difference` keeps `random` and `predictable`).
    pub fn retain(&self, probe_id: &str, results: &mut Vec<BenchResult>) {
        let mut kept: HashSet<String> = results
            .iter()
            .filter(|r| self.keeps(probe_id, &r.name))
            .map(|r| r.name.clone())
            .collect();
        loop {
            let sources: Vec<String> = results
                .iter()
                .filter(|r| kept.contains(&r.name))
                .flat_map(|r| r.derived_from.iter().cloned())
                .filter(|source| !kept.contains(source))
                .collect();
            if sources.is_empty() {
                break;
            }
            kept.extend(sources);
        }
        results.retain(|r| kept.contains(&r.name));
    }

    /// Whether a result of a probe that ran is kept for its own name.
    fn keeps(&self, probe_id: &str, result_name: &str) -> bool {
        let matches = |pattern: &Pattern| {
            pattern.regex.is_match(if pattern.by_name {
                result_name
            } else {
                probe_id
            })
        };
        self.only.as_ref().is_none_or(matches) && !self.skip.as_ref().is_some_and(matches)
    }

    pub fn only(&self) -> Option<&str> {
        self.only.as_ref().map(|p| p.regex.as_str())
    }

    pub fn skip(&self) -> Option<&str> {
        self.skip.as_ref().map(|p| p.regex.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(id: &str) -> &'static ProbeSpec {
        latlab_probes::PROBES.iter().find(|p| p.id == id).unwrap()
    }

    fn can(pattern: &str, template: &str) -> bool {
        Pattern::new("--only", pattern)
            .unwrap()
            .can_match_template(template)
    }

    #[test]
    fn a_pattern_can_match_a_template_through_its_placeholders() {
        assert!(can("cpu.branch/random", "cpu.branch/random"));
        assert!(!can("cpu.branch/random", "cpu.branch/predictable"));
        assert!(can("mem.latency/random/4KiB", "mem.latency/random/{size}"));
        assert!(can("random/5.69KiB$", "mem.latency/random/{size}"));
        assert!(can("/all-cpus", "mem.bandwidth/read/all/{size}/all-cpus"));
        assert!(!can("/all-cpus", "mem.bandwidth/read/all/{size}"));
        // A placeholder holds only its own kind of value.
        assert!(!can("memcpy/4KiB/x", "mem.memcpy/{size}"));
        assert!(!can("latency", "mem.alloc/{size}"));
        assert!(!can("memcpy/4KB", "mem.memcpy/{size}"));
        assert!(can("memcpy/4K", "mem.memcpy/{size}"));
        assert!(can("L9", "mem.latency/level/{level}"));
        assert!(can("^mem.memcpy/[0-9]+B$", "mem.memcpy/{size}"));
        assert!(can(
            "^thread.core_to_core/one-way/cas/0-1$",
            "thread.core_to_core/one-way/cas/{cpu}-{cpu}"
        ));
        assert!(!can("^latency", "mem.latency/level/{level}"));
        assert!(can("level/L[12]$", "mem.latency/level/{level}"));
    }

    #[test]
    fn a_pattern_with_a_slash_keeps_results_by_name() {
        let branch = probe("cpu.branch");
        let memcpy = probe("mem.memcpy");
        let only = Selection::new(Some("cpu.branch/random"), None).unwrap();
        assert!(only.runs(branch) && !only.runs(memcpy));
        assert!(only.keeps("cpu.branch", "cpu.branch/random"));
        assert!(!only.keeps("cpu.branch", "cpu.branch/mispredict"));
        let whole = Selection::new(Some("cpu.branch"), None).unwrap();
        assert!(whole.keeps("cpu.branch", "cpu.branch/mispredict"));
        let skip = Selection::new(None, Some("/mispredict|mem.memcpy")).unwrap();
        assert!(skip.runs(branch) && !skip.runs(memcpy));
        let every_result = Selection::new(None, Some("branch/|memcpy/[0-9]+K")).unwrap();
        assert!(!every_result.runs(branch) && every_result.runs(memcpy));
        assert!(!skip.keeps("cpu.branch", "cpu.branch/mispredict"));
        assert!(skip.keeps("cpu.branch", "cpu.branch/random"));
    }

    #[test]
    fn a_pattern_without_a_slash_matches_probe_ids_only() {
        let bandwidth = probe("mem.bandwidth");
        // `mem.bandwidth/read/all/{size}/all-cpus` contains "cpu", but the family is meant.
        assert!(!Selection::new(Some("cpu"), None).unwrap().runs(bandwidth));
        assert!(
            Selection::new(Some("/all-cpus"), None)
                .unwrap()
                .runs(bandwidth)
        );
        assert!(Selection::new(None, Some("cpu")).unwrap().runs(bandwidth));
    }

    #[test]
    fn a_kept_result_keeps_those_it_is_derived_from() {
        let result = |name: &str, from: &[&str]| {
            BenchResult::derived(
                name,
                "test",
                vec![1.0],
                Vec::new(),
                from.iter().map(|s| s.to_string()).collect(),
            )
            .unwrap()
        };
        let mut results = vec![
            result("cpu.branch/random", &[]),
            result("cpu.branch/predictable", &[]),
            result("cpu.branch/other", &[]),
            result(
                "cpu.branch/difference",
                &["cpu.branch/random", "cpu.branch/predictable"],
            ),
            result("cpu.branch/mispredict", &["cpu.branch/difference"]),
        ];
        Selection::new(Some("/mispredict"), None)
            .unwrap()
            .retain("cpu.branch", &mut results);
        let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cpu.branch/random",
                "cpu.branch/predictable",
                "cpu.branch/difference",
                "cpu.branch/mispredict"
            ]
        );
    }
}
