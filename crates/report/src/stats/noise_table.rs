//! How far each result's figure moves between runs of one machine, measured: the prior a
//! comparison of one run a side takes, since one run cannot show it.
//!
//! A [`NoiseTable`] is read from several runs of the same build on the same machine, each a
//! process of its own (`latlab run --runs N`, then `latlab noise DIR`): for every result,
//! the standard deviation of the logarithm of its run figure (the run's median) over the
//! runs, worth one degree of freedom fewer than the runs that measured it, and the widest
//! move between two of them. Nothing in it is typed by hand: its header says which machine, how many runs, which build and when.
//!
//! The table is text, a line per fact with a tab between its fields (shown here as
//! spaces), so that it reads without a parser and a change to it reads as a diff:
//!
//! ```text
//! # latlab run-to-run noise ...
//! cpu             AMD EPYC
//! runs            40
//! ...
//! result          sd        range     runs
//! clock.read/cost 0.00412   0.01690   40
//! ```

use latlab_doors::rules::{MAX_DEVIATION, MAX_LOG_RANGE, MAX_RUN_NUMBER};
use latlab_engine::model::RunRecord;
use std::fmt::Write as _;

/// The first line of every table, naming the format.
const FORMAT_LINE: &str = "# latlab run-to-run noise 1: the standard deviation of the logarithm of each \
     result's run figure over runs of one machine, each run a process of its own, and the widest \
     move between two of them";
/// The line that ends the header and names the columns of the results.
const COLUMNS_LINE: &str = "result\tsd\trange\truns";

/// The fewest runs a table is measured from: fewer give each result's deviation too few
/// degrees of freedom to be a prior worth the name.
pub const MIN_RUNS_FOR_TABLE: usize = 5;
/// The fewest runs that must have measured a result for it to enter a table.
pub const MIN_RUNS_FOR_RESULT: usize = 3;

/// The machine a table was measured on, as a comparison matches it to a run's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoiseMachine {
    pub cpu: String,
    pub logical_cpus: usize,
    /// The hypervisor, or `none`.
    pub virtualization: String,
}

impl NoiseMachine {
    /// The machine of `run`.
    pub fn of(run: &RunRecord) -> NoiseMachine {
        let environment = &run.environment;
        NoiseMachine {
            cpu: environment.cpu.model.clone(),
            logical_cpus: environment.cpu.logical_cpus,
            virtualization: (environment.virtualization.clone()).unwrap_or_else(|| "none".into()),
        }
    }
}

impl std::fmt::Display for NoiseMachine {
    /// `AMD EPYC, 2 CPUs, kvm`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, {} CPUs, {}",
            self.cpu, self.logical_cpus, self.virtualization
        )
    }
}

/// One result's measured movement between runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultNoise {
    pub name: String,
    /// The standard deviation of the logarithm of its run figure.
    pub sd: f64,
    /// The widest move between two of its runs: the largest logarithm of its run figure
    /// less the smallest. A figure that flips between two regimes moves this far between
    /// unchanged runs, further than its standard deviation says.
    pub range: f64,
    /// The runs that measured it: its deviation is worth one degree fewer.
    pub runs: usize,
}

/// Refuses runs that differ from the first in machine, build, suite or rounds, in one line.
fn alike(runs: &[RunRecord]) -> Result<(), String> {
    let Some((first, rest)) = runs.split_first() else {
        return Ok(());
    };
    let machine = NoiseMachine::of(first);
    for run in rest {
        let differs = if NoiseMachine::of(run) != machine {
            Some(format!(
                "machine ({} against {machine})",
                NoiseMachine::of(run)
            ))
        } else if run.latlab_version != first.latlab_version {
            Some(format!(
                "build ({} against {})",
                run.latlab_version, first.latlab_version
            ))
        } else if run.settings.suite != first.settings.suite
            || run.settings.rounds != first.settings.rounds
        {
            Some("suite or rounds".to_string())
        } else {
            None
        };
        if let Some(what) = differs {
            return Err(format!(
                "the runs differ in {what}: a noise table is read from runs of one build on \
                 one machine in one suite"
            ));
        }
    }
    Ok(())
}

impl ResultNoise {
    /// Result `name` from the logarithms of its run figures, two or more.
    fn of(name: &str, logs: &[f64]) -> ResultNoise {
        let (_, sd) = super::mean_and_sd(logs);
        let (low, high) = (logs.iter()).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
        ResultNoise {
            name: name.to_string(),
            sd,
            range: high - low,
            runs: logs.len(),
        }
    }
}

/// How far each result moved between runs of one machine, and where that was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseTable {
    pub machine: NoiseMachine,
    /// The kernel the runs ran on.
    pub kernel: String,
    /// The build that measured them.
    pub latlab_version: String,
    /// The suite and rounds per run, as the runs' settings say.
    pub suite: String,
    pub rounds: usize,
    /// How many runs the table was read from.
    pub runs: usize,
    /// When the earliest run started (RFC 3339, as the run records it).
    pub measured: String,
    /// In the runs' order of results.
    pub results: Vec<ResultNoise>,
    /// The results measured that moved further between runs than a table may hold
    /// ([`MAX_DEVIATION`], [`MAX_LOG_RANGE`]), left out of it; not written.
    pub unsteady: Vec<String>,
}

impl NoiseTable {
    /// The table of `runs`: several runs of one build on one machine in one suite. A run's
    /// figure of a result counts where `counts` says (a comparison leaves out the runs whose
    /// stability checks for the result moved, and so does its table); each result measured
    /// (not extrapolated) with a positive figure in at least three runs enters it. Refused,
    /// in one line, with fewer than [`MIN_RUNS_FOR_TABLE`] runs or runs that differ in
    /// machine, build, suite or rounds.
    pub fn measure(
        runs: &[RunRecord],
        counts: impl Fn(&RunRecord, &latlab_engine::model::BenchResult) -> bool,
    ) -> Result<NoiseTable, String> {
        let Some(first) = runs.first() else {
            return Err("no runs to measure the noise of".into());
        };
        if runs.len() < MIN_RUNS_FOR_TABLE {
            return Err(format!(
                "{} runs are too few to measure how far results move between runs: take at \
                 least {MIN_RUNS_FOR_TABLE} (latlab run --runs {MIN_RUNS_FOR_TABLE})",
                runs.len()
            ));
        }
        let machine = NoiseMachine::of(first);
        alike(runs)?;
        let mut results: Vec<ResultNoise> = Vec::new();
        let mut unsteady = Vec::new();
        // Every result any run has, in the order the runs first give it: a run may lack a
        // result the others have (a level its sweep could not tell, a size its budget left
        // out).
        let mut names: Vec<&str> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        // Each run's results by name: a lookup per result and run, in constant time.
        let by_name: Vec<std::collections::HashMap<&str, &latlab_engine::model::BenchResult>> =
            (runs.iter())
                .map(|run| run.results().map(|r| (r.name.as_str(), r)).collect())
                .collect();
        for run in runs {
            for result in run.results() {
                if seen.insert(result.name.as_str()) {
                    names.push(&result.name);
                }
            }
        }
        for name in names {
            let logs: Vec<f64> = (runs.iter().zip(&by_name))
                .filter_map(|(run, results)| Some((run, *results.get(name)?)))
                .filter(|(run, r)| !r.is_extrapolated() && counts(run, r))
                .map(|(_, r)| r)
                .map(|r| r.summary.median)
                .filter(|median| *median > 0.0 && median.is_finite())
                .map(f64::ln)
                .collect();
            if logs.len() >= MIN_RUNS_FOR_RESULT {
                let noise = ResultNoise::of(name, &logs);
                // What moves further than a table may hold is no noise a comparison can
                // take as a prior: said, and left out.
                if noise.sd <= MAX_DEVIATION && noise.range <= MAX_LOG_RANGE {
                    results.push(noise);
                } else {
                    unsteady.push(name.to_string());
                }
            }
        }
        Ok(NoiseTable {
            machine,
            kernel: first.environment.kernel.clone(),
            latlab_version: first.latlab_version.clone(),
            suite: first.settings.suite.clone(),
            rounds: first.settings.rounds,
            runs: runs.len(),
            measured: (runs.iter())
                .map(|run| run.started_at.clone())
                .min()
                .unwrap_or_default(),
            results,
            unsteady,
        })
    }

    /// The measured deviation of result `name`, with the runs behind it.
    pub fn of(&self, name: &str) -> Option<&ResultNoise> {
        self.results.iter().find(|r| r.name == name)
    }

    /// Where it was measured, in a few words: `12 runs of AMD EPYC, 2 CPUs, kvm on
    /// 2026-11-28`.
    pub fn provenance(&self) -> String {
        let day = self.measured.get(..10).unwrap_or(&self.measured);
        format!("{} runs of {} on {day}", self.runs, self.machine)
    }

    /// The table as text (see the module's example).
    pub fn to_text(&self) -> String {
        let mut text = format!("{FORMAT_LINE}\n");
        let header = [
            ("cpu", self.machine.cpu.clone()),
            ("logical_cpus", self.machine.logical_cpus.to_string()),
            ("virtualization", self.machine.virtualization.clone()),
            ("kernel", self.kernel.clone()),
            ("latlab", self.latlab_version.clone()),
            ("suite", self.suite.clone()),
            ("rounds", self.rounds.to_string()),
            ("runs", self.runs.to_string()),
            ("measured", self.measured.clone()),
        ];
        for (key, value) in header {
            let _ = writeln!(text, "{key}\t{}", one_line(&value));
        }
        let _ = writeln!(text, "{COLUMNS_LINE}");
        for result in &self.results {
            let _ = writeln!(
                text,
                "{}\t{:.5}\t{:.5}\t{}",
                result.name, result.sd, result.range, result.runs
            );
        }
        text
    }

    /// Reads a table written by [`NoiseTable::to_text`]; a malformed one, or one whose
    /// figures `latlab noise` could not have written ([`latlab_doors::rules`]' bounds, and
    /// [`latlab_doors::rules`]), is refused in one line that names the line at fault.
    pub fn parse(text: &str) -> Result<NoiseTable, String> {
        let mut lines = text.lines().enumerate().map(|(i, line)| (i + 1, line));
        match lines.next() {
            Some((_, line)) if line.starts_with("# latlab run-to-run noise 1:") => {}
            _ => return Err("not a latlab run-to-run noise table (its first line differs)".into()),
        }
        let header = header_of(&mut lines)?;
        let field = |key: &str| -> Result<&str, String> {
            (header.iter())
                .find(|(k, _)| *k == key)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("the header lacks '{key}'"))
        };
        let number = |key: &str, least: usize, most: usize| -> Result<usize, String> {
            (field(key)?.parse().ok())
                .filter(|n| (least..=most).contains(n))
                .ok_or_else(|| {
                    format!("the header's '{key}' is not a whole number from {least} to {most}")
                })
        };
        let runs = number("runs", MIN_RUNS_FOR_TABLE, MAX_RUN_NUMBER as usize)?;
        let results = (lines.map(|(number, line)| result_line(number, line, runs)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(NoiseTable {
            machine: NoiseMachine {
                cpu: field("cpu")?.to_string(),
                logical_cpus: number("logical_cpus", 1, 1 << 20)?,
                virtualization: field("virtualization")?.to_string(),
            },
            kernel: field("kernel")?.to_string(),
            latlab_version: field("latlab")?.to_string(),
            suite: field("suite")?.to_string(),
            rounds: number("rounds", 1, 1000)?,
            runs,
            measured: field("measured")?.to_string(),
            results,
            unsteady: Vec::new(),
        })
    }
}

/// The header's keys and values, up to the line that names the columns; a table without
/// that line is refused (its results would be read as header).
fn header_of<'a>(
    lines: &mut impl Iterator<Item = (usize, &'a str)>,
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut header = Vec::new();
    for (number, line) in lines.by_ref() {
        if line == COLUMNS_LINE {
            return Ok(header);
        }
        let (key, value) = line
            .split_once('\t')
            .ok_or_else(|| format!("line {number}: expected a key, a tab and a value"))?;
        header.push((key, value));
    }
    Err(format!(
        "its header never ends: the line naming the columns ('{}') is missing",
        COLUMNS_LINE.replace('\t', " ")
    ))
}

/// One result's line, under a header of `runs` runs: its name, a deviation and a range
/// `latlab noise` could have written (the deviation no more than half the range, widened
/// for the runs, as a sample's can be), and the runs that measured it, from
/// [`MIN_RUNS_FOR_RESULT`] to the header's.
fn result_line(number: usize, line: &str, runs: usize) -> Result<ResultNoise, String> {
    use latlab_doors::rules::{Rule, check};
    let at = |why: String| format!("line {number}: {why}");
    let [name, sd, range, result_runs] = line.split('\t').collect::<Vec<_>>()[..] else {
        return Err(at(
            "expected a result's name, its deviation, its range and its runs, \
                       a tab apart"
                .into(),
        ));
    };
    if name.is_empty() {
        return Err(at("a result without a name".into()));
    }
    let figure = |text: &str, what: &str, rule: Rule| -> Result<f64, String> {
        let value: f64 = text
            .parse()
            .map_err(|_| at(format!("the {what} {text:?} is no number")))?;
        check(&format!("{name}'s {what}"), value, rule).map_err(at)
    };
    let sd = figure(sd, "deviation", Rule::Deviation)?;
    let range = figure(range, "range", Rule::LogRange)?;
    let result_runs: usize = (result_runs.parse().ok())
        .filter(|r| (MIN_RUNS_FOR_RESULT..=runs).contains(r))
        .ok_or_else(|| {
            at(format!(
                "{name}'s runs {result_runs:?} are not a whole number from \
                 {MIN_RUNS_FOR_RESULT} to the header's {runs}"
            ))
        })?;
    // A sample's deviation is at most half its range times sqrt(n / (n - 1)); the table's
    // figures are rounded to five decimals.
    let widest = range / 2.0 * (result_runs as f64 / (result_runs - 1) as f64).sqrt() + 1e-5;
    if sd > widest {
        return Err(at(format!(
            "{name}'s deviation {sd} is more than its range {range} allows over \
             {result_runs} runs"
        )));
    }
    Ok(ResultNoise {
        name: name.to_string(),
        sd,
        range,
        runs: result_runs,
    })
}

/// `value` with tabs and line breaks made spaces: one field of one line.
fn one_line(value: &str) -> String {
    value.replace(['\t', '\n', '\r'], " ")
}

/// The tables a comparison may take its prior from: those of the machines the project has
/// met ([`shipped`](NoiseTables::shipped)), or the one the user gave (`--noise-table`).
#[derive(Debug, Clone, Copy)]
pub struct NoiseTables<'t> {
    tables: &'t [NoiseTable],
    given: bool,
}

/// The prior one result takes from the tables, and whether it was measured on the machine
/// being compared.
#[derive(Debug, Clone, PartialEq)]
pub struct NoisePrior {
    pub result: ResultNoise,
    /// Where the table was measured ([`NoiseTable::provenance`]).
    pub provenance: String,
    pub same_machine: bool,
    /// Whether the user gave the table, rather than the project shipping it.
    pub given: bool,
}

impl Default for NoiseTables<'_> {
    /// No table: one run a side judged by its rounds alone.
    fn default() -> Self {
        NoiseTables::measured(&[])
    }
}

impl<'t> NoiseTables<'t> {
    /// `tables`, each of a machine the project has met.
    pub fn measured(tables: &'t [NoiseTable]) -> NoiseTables<'t> {
        NoiseTables {
            tables,
            given: false,
        }
    }

    /// The table the user gave: taken whatever machine it was measured on, as the user
    /// asked, and said to be theirs.
    pub fn given(table: &'t NoiseTable) -> NoiseTables<'t> {
        NoiseTables {
            tables: std::slice::from_ref(table),
            given: true,
        }
    }

    /// Every table.
    pub fn tables(&self) -> &'t [NoiseTable] {
        self.tables
    }

    /// The table the user gave, if it is one.
    pub fn given_table(&self) -> Option<&'t NoiseTable> {
        self.tables.first().filter(|_| self.given)
    }

    /// The prior for result `name` on `machine`: from the table the user gave, where they
    /// gave one (whatever its machine); the table measured on that machine where
    /// one has the result; else, for a virtual machine, of the tables measured on virtual
    /// machines that have it, the one where it moved most (a guest latlab has not met is
    /// taken to be as noisy as the noisiest guest it has: a guest's neighbours move its
    /// figures, wherever it runs). A machine that is no guest takes no other machine's
    /// table: a quiet one would be judged deaf by a shared guest's noise.
    pub fn prior(&self, machine: &NoiseMachine, name: &str) -> Option<NoisePrior> {
        let with = |table: &'t NoiseTable| table.of(name).map(|result| (table, result));
        let found = if let Some(table) = self.given_table() {
            with(table)
        } else {
            let own = (self.tables.iter())
                .filter(|table| &table.machine == machine)
                .find_map(with);
            let guest = |m: &NoiseMachine| !m.virtualization.eq_ignore_ascii_case("none");
            own.or_else(|| {
                (self.tables.iter())
                    .filter(|table| guest(machine) && guest(&table.machine))
                    .filter_map(with)
                    .max_by(|a, b| a.1.sd.total_cmp(&b.1.sd))
            })
        };
        found.map(|(table, result)| NoisePrior {
            result: result.clone(),
            provenance: table.provenance(),
            same_machine: &table.machine == machine,
            given: self.given,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_engine::host::SyntheticHost;
    use latlab_engine::model::{BenchResult, ProbeOutcome, ProbeStatus, RunSettings};
    use latlab_engine::{Config, Runner};
    use std::sync::Arc;

    /// A run of the synthetic host whose two results read `figures`.
    fn run(figures: [f64; 2]) -> RunRecord {
        let host: latlab_engine::SharedHost =
            Arc::new(SyntheticHost::default().with_model(&latlab_probes::synthetic::MODEL));
        let config = Config {
            samples: 5,
            ..Config::quick()
        };
        let mut runner = Runner::on(Arc::clone(&host), config);
        let results: Vec<BenchResult> = (figures.iter().enumerate())
            .map(|(i, figure)| {
                let mut result = runner.bench(&format!("p/{i}"), "nothing", || i).unwrap();
                result.summary.median = *figure;
                result
            })
            .collect();
        let settings = RunSettings::uncontrolled("quick", runner.config(), 3);
        let mut record = RunRecord::begin(host.as_ref(), settings, Vec::new());
        record.probes.push(ProbeOutcome {
            id: "p".into(),
            method: "nothing".into(),
            status: ProbeStatus::Ok,
            results,
            duration_ns: 0,
        });
        record
    }

    #[test]
    fn a_table_holds_each_results_deviation_between_runs_and_reads_back() {
        // The first result moves 10% run to run, the second not at all.
        let runs: Vec<RunRecord> = [1.0, 1.1, 1.0, 1.1, 1.0, 1.1]
            .iter()
            .map(|f| run([100.0 * f, 50.0]))
            .collect();
        let table = NoiseTable::measure(&runs, |_, _| true).unwrap();
        let moved = table.of("p/0").unwrap();
        let expected = {
            let logs: Vec<f64> = [1.0f64, 1.1, 1.0, 1.1, 1.0, 1.1]
                .iter()
                .map(|f| (100.0 * f).ln())
                .collect();
            let mean = logs.iter().sum::<f64>() / 6.0;
            (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 5.0).sqrt()
        };
        assert!((moved.sd - expected).abs() < 1e-12 && moved.runs == 6);
        assert!((moved.range - 1.1f64.ln()).abs() < 1e-12);
        assert_eq!(table.of("p/1").unwrap().sd, 0.0);
        let read = NoiseTable::parse(&table.to_text()).unwrap();
        assert_eq!(read.machine, table.machine);
        assert_eq!(read.runs, 6);
        assert!((read.of("p/0").unwrap().sd - expected).abs() < 1e-5);
        // A run that does not count (its stability checks moved) widens nothing.
        let mut with_a_moved_run = runs.clone();
        with_a_moved_run.push(run([1000.0, 50.0]));
        let table = NoiseTable::measure(&with_a_moved_run, |_, r| r.summary.median < 500.0);
        let moved = table.unwrap();
        assert!((moved.of("p/0").unwrap().sd - expected).abs() < 1e-12);
        assert_eq!((moved.runs, moved.of("p/0").unwrap().runs), (7, 6));
        // A result the first run lacks is still measured from the runs that have it.
        let mut lacking = runs.clone();
        lacking[0].probes[0].results.truncate(1);
        let table = NoiseTable::measure(&lacking, |_, _| true).unwrap();
        assert_eq!(table.of("p/1").unwrap().runs, 5);
    }

    #[test]
    fn too_few_runs_or_a_malformed_table_are_refused_in_one_line() {
        let runs: Vec<RunRecord> = (0..3).map(|_| run([1.0, 2.0])).collect();
        let refused = NoiseTable::measure(&runs, |_, _| true).unwrap_err();
        assert!(
            refused.contains("too few") && !refused.contains('\n'),
            "{refused}"
        );
        let good = NoiseTable::measure(&vec![run([1.0, 2.0]); 5], |_, _| true)
            .unwrap()
            .to_text();
        for (bad, says) in [
            ("a results file\n".to_string(), "not a latlab"),
            (
                good.replace("\t0.00000\t0.00000\t5", "\t-1\t0\t5"),
                "deviation",
            ),
            (
                good.replace("logical_cpus\t", "logical_cpus\tmany"),
                "logical_cpus",
            ),
            (good.replace("runs\t5\n", ""), "lacks 'runs'"),
            // Deviations and runs no `latlab noise` writes: a deviation past tenfold, one
            // wider than its range allows, more runs for a result than the table has, and
            // a header that never ends.
            (
                good.replace("\t0.00000\t0.00000\t5", "\t1e300\t0\t5"),
                "from 0 to 2.303",
            ),
            (
                good.replace("\t0.00000\t0.00000\t5", "\t5\t7\t5"),
                "from 0 to 2.303",
            ),
            (
                good.replace("\t0.00000\t0.00000\t5", "\t0.9\t1\t5"),
                "more than its range 1 allows",
            ),
            (
                good.replace("\t0.00000\t0.00000\t5", "\t0\t0\t1000000"),
                "not a whole number from 3 to the header's 5",
            ),
            (good.replace("result\tsd\trange\truns\n", ""), "never ends"),
        ] {
            let refused = NoiseTable::parse(&bad).unwrap_err();
            assert!(
                refused.contains(says) && !refused.contains('\n'),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_run_takes_its_own_machines_table_else_the_noisiest_guests_if_a_guest() {
        let table = |cpu: &str, sd: f64| NoiseTable {
            machine: NoiseMachine {
                cpu: cpu.into(),
                logical_cpus: 2,
                virtualization: "kvm".into(),
            },
            kernel: "6".into(),
            latlab_version: "0".into(),
            suite: "quick".into(),
            rounds: 3,
            runs: 10,
            measured: "2026-11-28T00:00:00Z".into(),
            results: vec![ResultNoise {
                name: "p/0".into(),
                sd,
                range: 3.0 * sd,
                runs: 10,
            }],
            unsteady: Vec::new(),
        };
        let met = [table("A", 0.05), table("B", 0.01), table("C", 0.02)];
        let tables = NoiseTables::measured(&met);
        let machine = |cpu: &str| NoiseMachine {
            cpu: cpu.into(),
            logical_cpus: 2,
            virtualization: "kvm".into(),
        };
        let own = tables.prior(&machine("B"), "p/0").unwrap();
        assert!(own.same_machine && own.result.sd == 0.01);
        let met_none = tables.prior(&machine("D"), "p/0").unwrap();
        assert!(!met_none.same_machine && met_none.result.sd == 0.05);
        assert!(tables.prior(&machine("B"), "p/1").is_none());
        let bare_metal = NoiseMachine {
            virtualization: "none".into(),
            ..machine("D")
        };
        assert!(tables.prior(&bare_metal, "p/0").is_none());
        // A table the user gave is taken for any machine, and said to be theirs.
        let given = NoiseTables::given(&met[1]);
        let theirs = given.prior(&bare_metal, "p/0").unwrap();
        assert!(theirs.given && !theirs.same_machine && theirs.result.sd == 0.01);
    }
}
