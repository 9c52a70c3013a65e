//! How far each probe's results moved between runs on the machines latlab has met: the
//! noise tables a comparison of one run a side takes its prior from
//! ([`NoiseTables::shipped`](super::NoiseTables::shipped)). Each was measured, never typed:
//! `latlab run --runs 12 --out DIR` on a machine left otherwise alone, then `latlab noise
//! DIR --out crates/report/data/noise-tables/NAME.tsv`; its header says on what, by which
//! build and when.

use super::noise_table::{NoiseTable, NoiseTables};
use std::sync::LazyLock;

/// The tables as shipped, one file per machine.
const TABLES: &[(&str, &str)] = &[(
    "amd-epyc-2-kvm.tsv",
    include_str!("../../data/noise-tables/amd-epyc-2-kvm.tsv"),
)];

static PARSED: LazyLock<Vec<NoiseTable>> = LazyLock::new(|| {
    (TABLES.iter())
        .map(|(file, text)| {
            NoiseTable::parse(text).unwrap_or_else(|why| panic!("data/noise-tables/{file}: {why}"))
        })
        .collect()
});

impl NoiseTables<'static> {
    /// The tables of the machines the project has met, as shipped.
    pub fn shipped() -> NoiseTables<'static> {
        NoiseTables::measured(PARSED.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::super::noise_table::MIN_RUNS_FOR_TABLE;
    use super::*;
    use latlab_engine::result_names::template_matches;

    /// Every shipped table reads, was measured from enough runs, and names only results a
    /// probe lists: a renamed result fails here rather than silently losing its prior.
    #[test]
    fn the_shipped_tables_read_and_name_listed_results() {
        let listed: Vec<&str> = latlab_probes::PROBES
            .iter()
            .flat_map(|p| p.results)
            .copied()
            .collect();
        let shipped = NoiseTables::shipped();
        assert_eq!(shipped.tables().len(), TABLES.len());
        for table in shipped.tables() {
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
