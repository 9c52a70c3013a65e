//! How far each probe's results moved between runs on the machines latlab has met: the
//! noise tables a comparison of one run a side takes its prior from
//! ([`latlab_engine::run_noise`]). Each was measured, never typed: `latlab run --runs 12
//! --out DIR` on a machine left otherwise alone, then `latlab noise DIR --out
//! crates/probes/data/run-noise/NAME.tsv`; its header says on what, by which build and
//! when.

use latlab_engine::run_noise::{NoiseTable, NoiseTables};
use std::sync::LazyLock;

/// The tables as shipped, one file per machine.
const TABLES: &[(&str, &str)] = &[(
    "amd-epyc-2-kvm.tsv",
    include_str!("../data/run-noise/amd-epyc-2-kvm.tsv"),
)];

static PARSED: LazyLock<Vec<NoiseTable>> = LazyLock::new(|| {
    (TABLES.iter())
        .map(|(file, text)| {
            NoiseTable::parse(text).unwrap_or_else(|why| panic!("data/run-noise/{file}: {why}"))
        })
        .collect()
});

/// The noise tables of the machines latlab has met.
pub(crate) fn tables() -> NoiseTables {
    NoiseTables::shipped(PARSED.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_engine::result_names::template_matches;
    use latlab_engine::run_noise::MIN_RUNS_FOR_TABLE;

    /// Every shipped table reads, was measured from enough runs, and names only results a
    /// probe lists: a renamed result fails here rather than silently losing its prior.
    #[test]
    fn the_shipped_tables_read_and_name_listed_results() {
        let listed: Vec<&str> = crate::PROBES
            .iter()
            .flat_map(|p| p.results)
            .copied()
            .collect();
        let tables = tables();
        assert_eq!(tables.tables().len(), TABLES.len());
        for table in tables.tables() {
            assert!(table.runs >= MIN_RUNS_FOR_TABLE, "{}", table.provenance());
            assert!(table.results.len() > 100, "{}", table.provenance());
            for result in &table.results {
                assert!(
                    listed
                        .iter()
                        .any(|t| *t == result.name || template_matches(t, &result.name)),
                    "{} in the table of {} is a result no probe lists",
                    result.name,
                    table.provenance()
                );
            }
        }
    }
}
