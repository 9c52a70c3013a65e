//! How `latlab fleet` and `latlab history` scale: a fleet, or one host's runs, generated from
//! one real run, read by the real command.
//!
//! `cargo bench --bench fleet_scale -- [--from RESULTS.json] [--hosts N] [--full N]
//! [--history-runs N [--history-results K]] [--keep DIR]`
//!
//! From a real results file (`--from`, or a main job run first), it writes `--hosts`
//! summaries (default 10,000) and `--full` full results files (default 1,000: a full file is
//! megabytes, and ten thousand of them would fill most disks). Each host has its own name, one
//! of four CPU models (each with its figures scaled by a factor of its own), a jitter of a few
//! percent on every figure, and one host in a thousand has its main-memory latency planted
//! 60% slower. Then it runs `latlab fleet DIR --openmetrics FILE` on each set and reports the
//! wall time, the peak memory of that process (its maximum resident set), the time per host,
//! and whether every planted host was named an outlier. The files are read from the page
//! cache, as they were just written: a cold read adds the disk's time.
//!
//! With `--history-runs N` it also writes N summaries of one host, a second apart, each
//! figure moved by up to 1% either way from run to run and the first result kept stepped
//! 20% slower from the middle run on, keeping the first `--history-results` results of the
//! run (all unless given), and runs `latlab history` on them: its wall time, its peak memory,
//! and whether the planted step was found.

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_report::summary::RunSummary;
use latlab_report::{Exporter, JsonExporter};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// The result a planted outlier is slower in, and its headline row.
const PLANTED_RESULT: &str = "mem.latency/level/DRAM";
const PLANTED_ROW: &str = "Main memory reference";
/// One host in this many is planted, this much slower.
const PLANTED_EVERY: usize = 1000;
const PLANTED_FACTOR: f64 = 1.6;
/// The CPU models' factors on every figure.
const MODEL_FACTORS: [f64; 4] = [1.0, 0.85, 1.2, 1.45];
/// Each host's figures move by up to this share either way.
const JITTER: f64 = 0.03;

struct Options {
    from: Option<PathBuf>,
    hosts: usize,
    full: usize,
    history_runs: usize,
    history_results: Option<usize>,
    keep: Option<PathBuf>,
}

fn main() -> ExitCode {
    match options().and_then(|options| bench(&options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fleet_scale: {error}");
            ExitCode::from(2)
        }
    }
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        from: None,
        hosts: 10_000,
        full: 1_000,
        history_runs: 0,
        history_results: None,
        keep: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        let count = |text: String| {
            (text.parse::<usize>()).map_err(|_| format!("{arg} {text}: give a whole number"))
        };
        match arg.as_str() {
            "--from" => options.from = Some(PathBuf::from(value()?)),
            "--hosts" => options.hosts = count(value()?)?,
            "--full" => options.full = count(value()?)?,
            "--history-runs" => options.history_runs = count(value()?)?,
            "--history-results" => options.history_results = Some(count(value()?)?),
            "--keep" => options.keep = Some(PathBuf::from(value()?)),
            // What `cargo bench` passes to every benchmark.
            "--bench" => {}
            other => {
                return Err(format!(
                    "{other}: unknown; the options are --from, --hosts, --full, --history-runs, \
                     --history-results and --keep"
                ));
            }
        }
    }
    Ok(options)
}

fn bench(options: &Options) -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let dir = options.keep.clone().unwrap_or(scratch.path().to_path_buf());
    let source = match &options.from {
        Some(path) => path.clone(),
        None => main_job(&dir.join("source"))?,
    };
    let run =
        latlab_report::load::load_run(&source, latlab_doors::Reached::Named).map_err(|e| e.0)?;
    println!(
        "from {} ({}, {}): {} results",
        source.display(),
        run.environment.host_name,
        run.environment.cpu.model,
        run.results().count()
    );
    let declared = latlab_probes::presentations();
    let summaries = dir.join("summaries");
    let generated = generate(&summaries, options.hosts, |host| {
        let summary = RunSummary::of(&host_run(&run, host), &declared);
        serde_json::to_string(&summary).map_err(|e| e.to_string())
    })?;
    report("summaries", options.hosts, generated, &summaries, &dir)?;
    let full = dir.join("full");
    let generated = generate(&full, options.full, |host| {
        JsonExporter
            .render(&host_run(&run, host))
            .map_err(|e| e.to_string())
    })?;
    report("full files", options.full, generated, &full, &dir)?;
    if options.history_runs > 0 {
        history(&run, options, &dir.join("history"))?;
    }
    Ok(())
}

/// Writes `--history-runs` summaries of one host under `dir` and runs `latlab history` on
/// them, saying what it took and whether it found the planted step.
fn history(run: &RunRecord, options: &Options, dir: &Path) -> Result<(), String> {
    let mut run = run.clone();
    let mut kept = options.history_results.unwrap_or(usize::MAX);
    for probe in &mut run.probes {
        let here = probe.results.len().min(kept);
        probe.results.truncate(here);
        kept -= here;
    }
    run.probes.retain(|probe| !probe.results.is_empty());
    let stepped = run
        .results()
        .next()
        .ok_or("no result to keep")?
        .name
        .clone();
    let runs = options.history_runs;
    let declared = latlab_probes::presentations();
    let generated = generate(dir, runs, |night| {
        let mut run = run.clone();
        run.environment.host_name = "nightly".into();
        run.started_at = format!(
            "2026-01-{:02}T{:02}:{:02}:{:02}Z",
            1 + night / 86_400,
            night / 3600 % 24,
            night / 60 % 60,
            night % 60
        );
        let mut index = 0u64;
        for probe in &mut run.probes {
            for result in &mut probe.results {
                index += 1;
                let jitter = 1.0 + 0.01 * (2.0 * unit_random(index << 32 | night as u64) - 1.0);
                let step = if result.name == stepped && night >= runs / 2 {
                    1.2
                } else {
                    1.0
                };
                scale(result, jitter * step);
            }
        }
        serde_json::to_string(&RunSummary::of(&run, &declared)).map_err(|e| e.to_string())
    })?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_latlab"));
    command
        .arg("history")
        .arg(dir)
        .stdout(std::process::Stdio::piped());
    let started = Instant::now();
    let (status, stdout, peak_kib) = run_measured(command)?;
    let wall = started.elapsed();
    if !status.success() {
        return Err(format!("latlab history failed ({status})"));
    }
    let found = stdout.contains(&format!("{stepped}: ")) || stdout.contains(&format!("{stepped} "));
    println!(
        "{runs} runs of one host, {} results each ({:.1} MB, written in {:.1} s): latlab \
         history took {:.2} s, peak memory {:.0} MiB; the planted step of {stepped} found: {found}",
        run.results().count(),
        generated.1 as f64 / 1e6,
        generated.0.as_secs_f64(),
        wall.as_secs_f64(),
        peak_kib as f64 / 1024.0,
    );
    Ok(())
}

/// A main job's results file, written under `dir`.
fn main_job(dir: &Path) -> Result<PathBuf, String> {
    println!("no --from: running the main job for a real results file");
    let status = Command::new(env!("CARGO_BIN_EXE_latlab"))
        .args(["run", "-q", "--out"])
        .arg(dir)
        .status()
        .map_err(|e| format!("running latlab: {e}"))?;
    if !status.success() {
        return Err(format!("the main job failed ({status})"));
    }
    Ok(dir.join("results.json"))
}

/// Host `host`'s run: its name, its model, its figures scaled by its model's factor and
/// its own jitter, and planted when it is one in [`PLANTED_EVERY`].
fn host_run(run: &RunRecord, host: usize) -> RunRecord {
    let mut run = run.clone();
    let model = host % MODEL_FACTORS.len();
    run.environment.host_name = format!("node{host:05}");
    run.environment.cpu.model = format!("{} (model {})", run.environment.cpu.model, model + 1);
    let jitter = 1.0 + JITTER * (2.0 * unit_random(host as u64) - 1.0);
    let factor = MODEL_FACTORS[model] * jitter;
    for probe in &mut run.probes {
        for result in &mut probe.results {
            let planted = is_planted(host) && result.name == PLANTED_RESULT;
            scale(result, factor * if planted { PLANTED_FACTOR } else { 1.0 });
        }
    }
    run
}

fn is_planted(host: usize) -> bool {
    host % PLANTED_EVERY == PLANTED_EVERY / 2
}

/// A number in [0, 1) drawn from `seed` (SplitMix64): the same fleet every time.
fn unit_random(seed: u64) -> f64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as f64 / (u64::MAX as f64 + 1.0)
}

/// Every time of `result` multiplied by `factor` (its summary with them).
fn scale(result: &mut BenchResult, factor: f64) {
    result.samples_ns.iter_mut().for_each(|x| *x *= factor);
    result
        .round_medians_ns
        .iter_mut()
        .for_each(|x| *x *= factor);
    let s = &mut result.summary;
    for x in [
        &mut s.min,
        &mut s.p5,
        &mut s.median,
        &mut s.p95,
        &mut s.max,
        &mut s.mean,
        &mut s.stddev,
        &mut s.mad,
    ] {
        *x *= factor;
    }
    s.median_ci95 = s.median_ci95.map(|bound| bound * factor);
}

/// Writes `hosts` files `node#####.json` into `dir`, each `render`ed, on every CPU; the
/// time it took and the bytes written.
fn generate(
    dir: &Path,
    hosts: usize,
    render: impl Fn(usize) -> Result<String, String> + Sync,
) -> Result<(Duration, u64), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let bytes = std::sync::atomic::AtomicU64::new(0);
    let work = || -> Result<(), String> {
        loop {
            let host = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if host >= hosts {
                return Ok(());
            }
            let text = render(host)?;
            let path = dir.join(format!("node{host:05}.json"));
            std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
            bytes.fetch_add(text.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mine = work();
        (helpers.into_iter())
            .map(|helper| helper.join().unwrap_or(Err("a writer panicked".into())))
            .chain([mine])
            .collect::<Result<(), String>>()
    })?;
    Ok((started.elapsed(), bytes.into_inner()))
}

/// Runs `latlab fleet` on `fleet` and prints what it took.
fn report(
    what: &str,
    hosts: usize,
    (generated, bytes): (Duration, u64),
    fleet: &Path,
    dir: &Path,
) -> Result<(), String> {
    if hosts == 0 {
        return Ok(());
    }
    let metrics = dir.join(format!("{}.prom", what.replace(' ', "-")));
    let mut command = Command::new(env!("CARGO_BIN_EXE_latlab"));
    command
        .arg("fleet")
        .arg(fleet)
        .arg("--openmetrics")
        .arg(&metrics)
        .stdout(std::process::Stdio::piped());
    let started = Instant::now();
    let (status, stdout, peak_kib) = run_measured(command)?;
    let wall = started.elapsed();
    if !status.success() {
        return Err(format!("latlab fleet failed on the {what} ({status})"));
    }
    let planted: Vec<String> = (0..hosts)
        .filter(|&h| is_planted(h))
        .map(|h| format!("node{h:05}: {PLANTED_ROW} "))
        .collect();
    let named = (planted.iter())
        .filter(|line| stdout.contains(line.as_str()))
        .count();
    println!(
        "{hosts} hosts, {what} ({:.1} MB, written in {:.1} s): latlab fleet took {:.2} s \
         ({:.2} ms a host), peak memory {:.0} MiB; planted outliers named: {named} of {}",
        bytes as f64 / 1e6,
        generated.as_secs_f64(),
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1e3 / hosts as f64,
        peak_kib as f64 / 1024.0,
        planted.len()
    );
    Ok(())
}

/// Runs `command` to its end: its status, its standard output and its peak resident set
/// in KiB (from the kernel's accounting of that child alone).
fn run_measured(mut command: Command) -> Result<(std::process::ExitStatus, String, i64), String> {
    use std::io::Read;
    let mut child = command.spawn().map_err(|e| format!("latlab: {e}"))?;
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        pipe.read_to_string(&mut stdout)
            .map_err(|e| format!("latlab's output: {e}"))?;
    }
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pointers are to live locals, and the pid is this process's own child,
    // not yet waited for (std's handle is dropped without waiting).
    let waited = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    if waited < 0 {
        return Err(format!(
            "waiting for latlab: {}",
            std::io::Error::last_os_error()
        ));
    }
    let status = std::os::unix::process::ExitStatusExt::from_raw(status);
    Ok((status, stdout, usage.ru_maxrss))
}
