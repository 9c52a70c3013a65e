//! How near `latlab history` comes to its targets on this machine's own runs.
//!
//! `cargo bench --bench history_targets -- [--runs DIR] [--generated] [--seeds N] [--first-seed S]
//! [--beyond-scatter K]… [--otava PYTHON [--otava-p P]…] [--keep DIR]`
//!
//! DIR holds runs of one build on one machine, one after another (forty main jobs:
//! `for i in $(seq -w 40); do latlab --out DIR/r$i; done`, twenty minutes). For each factor
//! `K` (`--beyond-scatter`, the default unless given, as many times as wanted) it reports:
//!
//! - **Quiet on unchanged runs:** the results that `latlab history` gives a change point
//!   among DIR's runs, of those with six runs or more, how many of those are reported with a
//!   change of their own (not a member of a step of the machine, which moves many results at
//!   one run and is reported once), and the steps of the machine and of the core clock.
//! - **Planted steps:** the results present and positive in every run of DIR, each copied
//!   into 40 runs with its own scatter between DIR's runs (the median absolute deviation of
//!   its logarithm, ×1.4826, drawn heavy-tailed: Student's t with 4 degrees of freedom), one
//!   run in 50 made 30% slower, and steps of 5% to 10% either way planted in a tenth of the
//!   results at runs 5 to 35; written as summaries and read by `latlab history` itself, for
//!   `--seeds` seeds (6 unless given, from `--first-seed`, 1 unless given: the series a
//!   method is tuned on and those it is held to are kept apart by their seeds). A change
//!   point counts as found within one run of where its step was planted: steps found, those of three scatters or more found, change points
//!   not planted, precision and F1.
//! - **The most any method could find:** the share of the planted steps that a test which
//!   knew where each step was would find at p 0.001, two-sided, from each step's size over
//!   its scatter and its two levels' lengths; and the share that one which knew each step's
//!   two levels and the law of the scatter would place within one run (an outlier beside a
//!   small step pulls its most likely place off), beside the steps latlab found two to five
//!   runs off.
//!
//! - **The project's own series** (`--generated`, with or without `--runs`): 200 results of
//!   40 runs a seed, with a scatter of 2% (5% for one result in six), one-run outliers, two
//!   regimes, steps of 5% to 10% and a kernel change ([`Generated`]), scored the same way,
//!   with the steps found by the result's scatter and by the kernel, whether the kernel
//!   change was named as one step of the machine, and the steps called in two-regime
//!   results.
//!
//! With `--otava PYTHON` (a Python that has apache-otava), Apache Otava's change points
//! (`compute_change_points`, window 50, at each `--otava-p`, 0.001 unless given: its
//! defaults) are scored beside latlab's on the same unchanged runs and the same planted
//! series. Without it, the benchmark needs nothing but latlab. `--keep DIR` keeps the planted
//! runs there (under `planted/seed-N/` and `generated/seed-N/`, with what was planted in
//! each generated seed in `generated/seed-N.planted.json`) instead of a temporary directory.

// A benchmark reads and writes files as it pleases: the doors are for what latlab does.
#![allow(clippy::disallowed_methods)]
use latlab_report::history::{History, HistoryOptions, HostHistory};
use latlab_report::stats::{normal_quantile, normal_upper_tail};
use latlab_test_support::{
    Draws, Generated, PlantedStep, Scored, generated, otava_change_points, scored, summary_text,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs of a planted series.
const RUNS: usize = 40;
/// Results of a generated series, each seed.
const GENERATED_RESULTS: usize = 200;
/// The share of results a step is planted in, and the runs it may begin at.
const STEPPED_SHARE: f64 = 0.1;
const FIRST_STEP: usize = 5;
const LAST_STEP: usize = 35;
/// The sizes of a planted step.
const STEP_SIZES: (f64, f64) = (1.05, 1.10);
/// One run in this many is a noisy night, this much slower: the generated series' one-run
/// outliers, so that both kinds of series and the placing ceiling read one law.
const NOISY_EVERY: f64 = generated::OUTLIER_EVERY;
const NOISY_FACTOR: f64 = generated::OUTLIER_FACTOR;
/// The least scatter a result is given, in logarithms.
const LEAST_SCATTER: f64 = 0.002;
/// The level the oracle tests at, two-sided.
const ORACLE_P: f64 = 0.001;
/// Otava's own default p-value.
const OTAVA_DEFAULT_P: f64 = 0.001;
/// The fewest runs of a result that `latlab history` can find a step in (two levels of
/// three).
const FEWEST_RUNS: usize = 6;

struct Options {
    runs: Option<PathBuf>,
    generated: bool,
    seeds: u64,
    first_seed: u64,
    factors: Vec<f64>,
    otava: Option<String>,
    otava_p: Vec<f64>,
    keep: Option<PathBuf>,
}

fn main() -> ExitCode {
    match options().and_then(|options| bench(&options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("history_targets: {error}");
            ExitCode::from(2)
        }
    }
}

fn options() -> Result<Options, String> {
    let (mut runs, mut seeds, mut factors, mut keep) = (None, 6, Vec::new(), None);
    let mut first_seed = 1;
    let mut generated = false;
    let (mut otava, mut otava_p) = (None, Vec::new());
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => runs = Some(PathBuf::from(value()?)),
            "--generated" => generated = true,
            "--seeds" => {
                let text = value()?;
                seeds = (text.parse::<u64>().ok())
                    .filter(|&n| n > 0)
                    .ok_or(format!("--seeds {text}: give a whole number, 1 or more"))?;
            }
            "--first-seed" => {
                let text = value()?;
                first_seed = (text.parse::<u64>().ok())
                    .ok_or(format!("--first-seed {text}: give a whole number"))?;
            }
            "--beyond-scatter" => {
                let text = value()?;
                factors.push(latlab_engine::config_text::parse_scatters(&text)?);
            }
            "--otava" => otava = Some(value()?),
            "--otava-p" => {
                let text = value()?;
                let p = (text.parse::<f64>().ok())
                    .filter(|p| *p > 0.0 && *p < 1.0)
                    .ok_or(format!("--otava-p {text}: give a p-value, such as 0.001"))?;
                otava_p.push(p);
            }
            "--keep" => keep = Some(PathBuf::from(value()?)),
            // What `cargo bench` passes to every benchmark.
            "--bench" => {}
            other => {
                return Err(format!(
                    "{other}: unknown; the options are --runs, --generated, --seeds, --first-seed, \
                     --beyond-scatter, --otava, --otava-p and --keep"
                ));
            }
        }
    }
    if factors.is_empty() {
        factors.push(latlab_report::history::DEFAULT_BEYOND_SCATTER);
    }
    if otava_p.is_empty() {
        otava_p.push(OTAVA_DEFAULT_P);
    }
    if runs.is_none() && !generated {
        return Err(
            "give --runs DIR, a directory of runs of one build on one machine (forty \
                    main jobs: for i in $(seq -w 40); do latlab --out DIR/r$i; done), or \
                    --generated"
                .into(),
        );
    }
    Ok(Options {
        runs,
        generated,
        seeds,
        first_seed,
        factors,
        otava,
        otava_p,
        keep,
    })
}

impl Options {
    /// The seeds to plant, in order.
    fn seeds(&self) -> std::ops::Range<u64> {
        self.first_seed..self.first_seed + self.seeds
    }
}

fn bench(options: &Options) -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let root = options.keep.clone().unwrap_or(scratch.path().to_path_buf());
    if let Some(runs) = &options.runs {
        from_runs(options, runs, &root.join("planted"))?;
    }
    if options.generated {
        generated(options, &root.join("generated"))?;
    }
    Ok(())
}

/// The targets on the runs under `dir`, and on series planted from their scatter under
/// `root`.
fn from_runs(options: &Options, dir: &Path, root: &Path) -> Result<(), String> {
    let runs = read_runs(dir)?;
    let series = series_of(&runs);
    let scatter = scatter_of(&runs);
    println!(
        "{} runs of {} ({}), {} results of six runs or more; {} present and positive in \
         every run, their scatter between runs {:.1}% at the median",
        runs.len(),
        text(&runs[0], "/environment/host_name"),
        text(&runs[0], "/environment/cpu/model"),
        series.len(),
        scatter.len(),
        100.0 * median(scatter.values().map(|s| s.sd).collect()),
    );
    for &factor in &options.factors {
        unchanged(dir, series.len(), factor)?;
    }
    if let Some(python) = &options.otava {
        for &p in &options.otava_p {
            let found = otava_change_points(python, &series, p)?;
            let changed = found.values().filter(|at| !at.is_empty()).count();
            println!(
                "unchanged runs, Otava at p {p}: {changed} results with a change point ({:.1}%)",
                100.0 * changed as f64 / series.len() as f64
            );
        }
    }
    let plantings: Vec<Planting> = options.seeds().map(|seed| plant(&scatter, seed)).collect();
    for (seed, planting) in (options.first_seed..).zip(&plantings) {
        write_runs(&runs[0], &planting.series, &seed_dir(root, seed))?;
    }
    println!("planted from the scatter of these runs:");
    planted(options, root, &plantings)
}

/// The planted series' scores: latlab's at each factor, and Otava's where asked.
fn planted(options: &Options, root: &Path, plantings: &[Planting]) -> Result<(), String> {
    let steps: BTreeMap<String, &Step> = (options.first_seed..)
        .zip(plantings)
        .flat_map(|(seed, p)| p.steps.iter().map(move |(n, s)| (format!("{seed}/{n}"), s)))
        .collect();
    let oracle = steps.values().map(|step| step.oracle_power()).sum::<f64>() / steps.len() as f64;
    let placed = (plantings.iter())
        .flat_map(|p| {
            p.steps
                .iter()
                .map(|(name, step)| step.placed(&p.series[name]))
        })
        .filter(|&placed| placed)
        .count();
    println!(
        "planted: {} seeds, {} steps; a test that knew where each step was would find {:.0}%, \
         one that knew each step's two levels and the scatter's law would place {:.0}% within \
         one run",
        options.seeds,
        steps.len(),
        100.0 * oracle,
        100.0 * placed as f64 / steps.len() as f64,
    );
    let score = |found: &BTreeMap<String, Vec<usize>>| Score::of(found, &steps);
    for &factor in &options.factors {
        let mut found = BTreeMap::new();
        for seed in options.seeds() {
            let host = history_of(&seed_dir(root, seed), factor)?;
            found.extend(changes_by_result(&host, seed));
        }
        println!(
            "  latlab history --beyond-scatter {factor}: {}",
            score(&found)
        );
    }
    if let Some(python) = &options.otava {
        for &p in &options.otava_p {
            let mut found = BTreeMap::new();
            for (seed, planting) in (options.first_seed..).zip(plantings) {
                let points = otava_change_points(python, &planting.series, p)?;
                found.extend(
                    points
                        .into_iter()
                        .map(|(n, at)| (format!("{seed}/{n}"), at)),
                );
            }
            println!("  Otava at p {p}: {}", score(&found));
        }
    }
    Ok(())
}

/// The targets on the project's own generated series ([`Generated`]), written under `root`.
fn generated(options: &Options, root: &Path) -> Result<(), String> {
    let template = synthetic_summary(root)?;
    let sets: Vec<Generated> = options
        .seeds()
        .map(|seed| Generated::new(seed, GENERATED_RESULTS, RUNS))
        .collect();
    let plantings: Vec<Planting> = sets.iter().map(Planting::of_generated).collect();
    for (seed, set) in (options.first_seed..).zip(&sets) {
        let dir = seed_dir(root, seed);
        (set.write_summaries(&template, &dir)).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_what_was_planted(set, &root.join(format!("seed-{seed}.planted.json")))?;
    }
    println!(
        "generated: {} results a seed, {} runs, a scatter of {:.0}% between runs ({:.0}% for \
         one result in {}), one-run outliers, two regimes in one result in {}, steps of 5% to \
         10% and a kernel change:",
        GENERATED_RESULTS,
        RUNS,
        100.0 * generated::SCATTER,
        100.0 * generated::NOISY_SCATTER,
        generated::NOISY_EVERY,
        generated::REGIMES_EVERY,
    );
    planted(options, root, &plantings)?;
    for &factor in &options.factors {
        let mut by_class = [(0, 0); 3];
        let (mut in_regimes, mut kernel_named) = (0, 0);
        for (seed, set) in (options.first_seed..).zip(&sets) {
            let host = history_of(&seed_dir(root, seed), factor)?;
            for change in host.all_changes() {
                let Some(step) = set.steps.get(&change.result) else {
                    let regime = set.regimes.contains(&change.result);
                    in_regimes += usize::from(regime && change.mix.is_none());
                    continue;
                };
                let class = &mut by_class[class_of(step)];
                class.0 += usize::from(change.at.abs_diff(step.at) <= 1);
            }
            for step in set.steps.values() {
                by_class[class_of(step)].1 += 1;
            }
            kernel_named += usize::from(host.events.iter().any(|event| {
                event.at.abs_diff(set.kernel_change) <= 1
                    && event
                        .environment_changes
                        .iter()
                        .any(|c| c.field == "kernel")
            }));
        }
        let recall = |(found, of): (usize, usize)| format!("{found} of {of}");
        println!(
            "  latlab at {factor}: steps found in results of {:.0}% scatter {}, of {:.0}% \
             scatter {}, of the kernel {}; the kernel change named as a step of the machine in \
             {kernel_named} of {} seeds; steps called in two-regime results: {in_regimes}",
            100.0 * generated::SCATTER,
            recall(by_class[0]),
            100.0 * generated::NOISY_SCATTER,
            recall(by_class[1]),
            recall(by_class[2]),
            options.seeds,
        );
    }
    Ok(())
}

/// A step's class: a result's own in the usual scatter, in the noisier one, or the kernel's.
fn class_of(step: &PlantedStep) -> usize {
    match (step.kernel, step.scatter > generated::SCATTER) {
        (true, _) => 2,
        (false, noisy) => usize::from(noisy),
    }
}

/// A run's summary to copy: `latlab run --synthetic` of one probe, made under `root`.
fn synthetic_summary(root: &Path) -> Result<Value, String> {
    let dir = root.join("template");
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_latlab"))
        .args(["run", "--synthetic", "--only", "cpu.call", "--out"])
        .stdout(std::process::Stdio::null())
        .arg(&dir)
        .status()
        .map_err(|e| format!("latlab run --synthetic: {e}"))?;
    if !status.success() {
        return Err(format!("latlab run --synthetic: {status}"));
    }
    let text = std::fs::read_to_string(dir.join("summary.json"))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("latlab run --synthetic: {e}"))
}

/// What was planted in `set`, as JSON at `path`: each step (its result, first run, factor,
/// scatter and whether it is the kernel's), the two-regime results and the kernel's run.
fn write_what_was_planted(set: &Generated, path: &Path) -> Result<(), String> {
    let steps: Vec<Value> = (set.steps.iter())
        .map(|(name, step)| {
            serde_json::json!({"result": name, "at": step.at, "factor": step.factor,
                "scatter": step.scatter, "kernel": step.kernel})
        })
        .collect();
    let planted = serde_json::json!({"steps": steps, "regimes": set.regimes,
        "kernel_change": set.kernel_change});
    std::fs::write(path, planted.to_string()).map_err(|e| format!("{}: {e}", path.display()))
}

fn seed_dir(root: &Path, seed: u64) -> PathBuf {
    root.join(format!("seed-{seed}"))
}

/// Every summary under `dir` (to three levels), oldest first; refused unless they are six
/// runs or more of one host.
fn read_runs(dir: &Path) -> Result<Vec<Value>, String> {
    // The doors' one walk: three levels below `dir` (host, run, files), no link followed.
    let limits = latlab_doors::tree::Limits {
        depth: 3,
        entries: 1 << 20,
    };
    let tree = latlab_doors::tree::walk(dir, limits, |name| name == "summary.json");
    if let Some((path, why)) = tree.passed_over.unreadable.first() {
        return Err(format!("{}: cannot read it ({why})", path.display()));
    }
    let mut runs = Vec::new();
    for found in &tree.found {
        let read = found.read(64 << 20);
        let run: Value = read
            .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            .map_err(|e| format!("{}: {e}", found.path.display()))?;
        runs.push(run);
    }
    runs.sort_by_key(|run| text(run, "/started_at"));
    let hosts: BTreeSet<(String, String)> = (runs.iter())
        .map(|run| {
            let host = text(run, "/environment/host_name");
            (host, text(run, "/environment/cpu/model"))
        })
        .collect();
    match (runs.len(), hosts.len()) {
        (n, _) if n < 6 => Err(format!(
            "{}: {n} summary.json files; give six runs or more (forty for the targets)",
            dir.display()
        )),
        (_, 1) => Ok(runs),
        (_, n) => Err(format!(
            "{}: runs of {n} hosts; give one machine's runs",
            dir.display()
        )),
    }
}

/// The text at `pointer` in `run`, or "".
fn text(run: &Value, pointer: &str) -> String {
    (run.pointer(pointer).and_then(Value::as_str))
        .unwrap_or_default()
        .to_string()
}

/// Each result's median in `run`.
fn figures(run: &Value) -> BTreeMap<String, f64> {
    (run["results"].as_array().into_iter().flatten())
        .filter_map(|result| {
            let name = result["name"].as_str()?;
            Some((name.to_string(), result["median_ns"].as_f64()?))
        })
        .collect()
}

/// Each result's positive figures in run order, for the results that have six or more.
fn series_of(runs: &[Value]) -> BTreeMap<String, Vec<f64>> {
    let mut series: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for run in runs {
        for (name, figure) in figures(run).into_iter().filter(|(_, f)| *f > 0.0) {
            series.entry(name).or_default().push(figure);
        }
    }
    series.retain(|_, figures| figures.len() >= FEWEST_RUNS);
    series
}

/// A result's level and scatter between runs, in logarithms.
struct Scatter {
    level: f64,
    sd: f64,
}

/// The level and scatter of each result present and positive in every run.
fn scatter_of(runs: &[Value]) -> BTreeMap<String, Scatter> {
    let per_run: Vec<BTreeMap<String, f64>> = runs.iter().map(figures).collect();
    let mut scatter = BTreeMap::new();
    for name in per_run[0].keys() {
        let logs: Option<Vec<f64>> = (per_run.iter())
            .map(|run| run.get(name).filter(|&&v| v > 0.0).map(|v| v.ln()))
            .collect();
        let Some(logs) = logs else { continue };
        let level = median(logs.clone());
        let sd = 1.4826 * median(logs.iter().map(|v| (v - level).abs()).collect());
        let sd = sd.max(LEAST_SCATTER);
        scatter.insert(name.clone(), Scatter { level, sd });
    }
    scatter
}

/// The median of `values` (the engine's, which the history uses too).
fn median(mut values: Vec<f64>) -> f64 {
    latlab_engine::stats::median_in_place(&mut values)
}

/// The results with a change point in the runs of `dir` at `factor`, those of them reported
/// with a change of their own (shared by no step of the machine), and the steps of the
/// machine and of the core clock.
fn unchanged(dir: &Path, results: usize, factor: f64) -> Result<(), String> {
    let host = history_of(dir, factor)?;
    let changed: BTreeSet<&str> = (host.all_changes())
        .filter(|c| c.result != latlab_report::history::CLOCK_RESULT)
        .map(|c| c.result.as_str())
        .collect();
    let own: BTreeSet<&str> = host.changes.iter().map(|c| c.result.as_str()).collect();
    let share = |n: usize| 100.0 * n as f64 / results as f64;
    println!(
        "unchanged runs, --beyond-scatter {factor}: {} results with a change point ({:.1}%), \
         {} ({:.1}%) reported with a change of their own, {} steps of the machine, {} steps of \
         the core clock",
        changed.len(),
        share(changed.len()),
        own.len(),
        share(own.len()),
        host.events.len(),
        host.clock_steps.len()
    );
    Ok(())
}

/// The one host's history of the runs under `dir`.
fn history_of(dir: &Path, factor: f64) -> Result<HostHistory, String> {
    let options = HistoryOptions {
        beyond_scatter: factor,
        ..latlab_report::history::DEFAULT_HISTORY_OPTIONS
    };
    let declared = latlab_probes::presentations();
    let history = History::load(&[dir.to_path_buf()], &declared, options).map_err(|e| e.0)?;
    let mut hosts = history.hosts.into_iter();
    match (hosts.next(), hosts.next()) {
        (Some(host), None) => Ok(host),
        _ => Err(format!("{}: not one host's runs", dir.display())),
    }
}

/// The changes of `host`, a planted series of seed `seed`: the runs each result's new
/// levels begin at (the core clock's steps under its own name), by `seed/result`.
fn changes_by_result(host: &HostHistory, seed: u64) -> BTreeMap<String, Vec<usize>> {
    let mut found: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for change in host.all_changes() {
        let name = format!("{seed}/{}", change.result);
        found.entry(name).or_default().push(change.at);
    }
    found
}

/// A planted step: its first run, its factor and its result's scatter.
struct Step {
    at: usize,
    factor: f64,
    sd: f64,
}

impl Step {
    /// The chance that a test which knew where the step is finds it at [`ORACLE_P`].
    fn oracle_power(&self) -> f64 {
        let error = self.sd * (1.0 / self.at as f64 + 1.0 / (RUNS - self.at) as f64).sqrt();
        let z = self.factor.ln().abs() / error;
        normal_upper_tail(normal_quantile(1.0 - ORACLE_P / 2.0) - z)
    }

    /// Whether the most likely place of the step in `figures`, to one that knew its two
    /// levels (the medians of the runs either side of where it was planted) and the law of
    /// the scatter (Student's t with 4 degrees of freedom of deviation `sd`, one run in
    /// [`NOISY_EVERY`] [`NOISY_FACTOR`] slower), lies within one run of where it was planted:
    /// the most a search that must also place the step could find.
    fn placed(&self, figures: &[f64]) -> bool {
        let logs: Vec<f64> = figures.iter().map(|f| f.ln()).collect();
        let level = |range: &[f64]| median(range.to_vec());
        let (before, after) = (level(&logs[..self.at]), level(&logs[self.at..]));
        let scale = self.sd / 2f64.sqrt();
        let student = |x: f64| (1.0 + (x / scale).powi(2) / 4.0).powf(-2.5);
        let noisy = 1.0 / NOISY_EVERY;
        let likelihood = |x: f64, mean: f64| {
            ((1.0 - noisy) * student(x - mean) + noisy * student(x - mean - NOISY_FACTOR.ln())).ln()
        };
        let fewest = FEWEST_RUNS / 2;
        let fit = |at: usize| -> f64 {
            (logs.iter().enumerate())
                .map(|(i, &x)| likelihood(x, if i < at { before } else { after }))
                .sum()
        };
        let best = (fewest..=logs.len() - fewest)
            .map(|at| (at, fit(at)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(at, _)| at);
        best.is_some_and(|at| at.abs_diff(self.at) <= 1)
    }

    fn tall(&self) -> bool {
        self.factor.ln().abs() >= 3.0 * self.sd
    }
}

/// Series with steps planted: each result's figures run by run, and its step where it has
/// one.
struct Planting {
    series: BTreeMap<String, Vec<f64>>,
    steps: BTreeMap<String, Step>,
}

impl Planting {
    fn of_generated(set: &Generated) -> Planting {
        let steps = (set.steps.iter())
            .map(|(name, step)| {
                let (at, factor, sd) = (step.at, step.factor, step.scatter);
                (name.clone(), Step { at, factor, sd })
            })
            .collect();
        Planting {
            series: set.series.clone(),
            steps,
        }
    }
}

fn plant(scatter: &BTreeMap<String, Scatter>, seed: u64) -> Planting {
    let mut draws = Draws(seed);
    let (mut series, mut steps) = (BTreeMap::new(), BTreeMap::new());
    for (name, Scatter { level, sd }) in scatter {
        let mut figures: Vec<f64> = (0..RUNS)
            .map(|_| {
                let noisy = draws.uniform() < 1.0 / NOISY_EVERY;
                let figure = (level + sd * draws.heavy()).exp();
                if noisy { figure * NOISY_FACTOR } else { figure }
            })
            .collect();
        if draws.uniform() < STEPPED_SHARE {
            let span = (LAST_STEP - FIRST_STEP + 1) as f64;
            let at = FIRST_STEP + (draws.uniform() * span) as usize;
            let size = STEP_SIZES.0 + draws.uniform() * (STEP_SIZES.1 - STEP_SIZES.0);
            let factor = if draws.uniform() < 0.5 {
                size
            } else {
                1.0 / size
            };
            figures[at..].iter_mut().for_each(|f| *f *= factor);
            steps.insert(
                name.clone(),
                Step {
                    at,
                    factor,
                    sd: *sd,
                },
            );
        }
        series.insert(name.clone(), figures);
    }
    Planting { series, steps }
}

/// The runs of `series` as summaries under `dir`, each a copy of `first` with its figures
/// (and the headline rows read from them) moved to the series' and a start of its own.
fn write_runs(
    first: &Value,
    series: &BTreeMap<String, Vec<f64>>,
    dir: &Path,
) -> Result<(), String> {
    for run in 0..RUNS {
        let mut summary = first.clone();
        summary["started_at"] =
            format!("2026-10-{:02}T{:02}:00:00Z", 1 + run / 24, run % 24).into();
        let mut moved = BTreeMap::new();
        for result in summary["results"].as_array_mut().into_iter().flatten() {
            let name = result["name"].as_str().unwrap_or_default().to_string();
            let (Some(figures), Some(median)) = (series.get(&name), result["median_ns"].as_f64())
            else {
                continue;
            };
            let factor = figures[run] / median;
            scale(&mut result["median_ns"], factor);
            for bound in result["median_ci95_ns"]
                .as_array_mut()
                .into_iter()
                .flatten()
            {
                scale(bound, factor);
            }
            moved.insert(name, factor);
        }
        for row in summary["headline"].as_array_mut().into_iter().flatten() {
            let factor = (row["result"].as_str())
                .and_then(|name| moved.get(name))
                .copied();
            for key in ["median_ns", "p5_ns", "p95_ns"] {
                scale(&mut row[key], factor.unwrap_or(1.0));
            }
        }
        let run_dir = dir.join(format!("run-{run:02}"));
        std::fs::create_dir_all(&run_dir)
            .and_then(|()| std::fs::write(run_dir.join("summary.json"), summary_text(summary)))
            .map_err(|e| format!("{}: {e}", run_dir.display()))?;
    }
    Ok(())
}

fn scale(value: &mut Value, factor: f64) {
    if let Some(figure) = value.as_f64() {
        *value = (figure * factor).into();
    }
}

/// Planted steps found within one run of their place, over every seed, and of them the
/// steps of three scatters or more.
struct Score {
    scored: Scored,
    tall: usize,
    tall_found: usize,
    /// The steps not found within one run of their place but within [`OFF_BY`] runs.
    misplaced: usize,
}

/// The most runs off its place a change point counts as a step found in the wrong place.
const OFF_BY: usize = 5;

impl Score {
    fn of(found: &BTreeMap<String, Vec<usize>>, steps: &BTreeMap<String, &Step>) -> Score {
        let at: BTreeMap<String, usize> = (steps.iter())
            .map(|(name, step)| (name.clone(), step.at))
            .collect();
        let tall: Vec<(&String, &&Step)> = steps.iter().filter(|(_, s)| s.tall()).collect();
        let tall_found = (tall.iter())
            .filter(|(name, step)| {
                (found.get(*name)).is_some_and(|at| at.iter().any(|&a| a.abs_diff(step.at) <= 1))
            })
            .count();
        let nearest = |name: &String, step: &Step| {
            (found.get(name).into_iter().flatten())
                .map(|a| a.abs_diff(step.at))
                .min()
        };
        let misplaced = (steps.iter())
            .filter(|(name, step)| nearest(name, step).is_some_and(|d| (2..=OFF_BY).contains(&d)))
            .count();
        Score {
            scored: scored(found, &at),
            tall: tall.len(),
            tall_found,
            misplaced,
        }
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.scored;
        write!(
            f,
            "found {} of {} ({:.0}%), {} of the {} of three scatters or more, {} more placed 2 \
             to {OFF_BY} runs off, {} change points not planted, precision {:.2}, F1 {:.2}",
            s.found,
            s.planted,
            100.0 * s.recall(),
            self.tall_found,
            self.tall,
            self.misplaced,
            s.not_planted,
            s.precision(),
            s.f1()
        )
    }
}
