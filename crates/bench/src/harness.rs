//! A bench binary's run: parse the command line, select the benchmarks, and run them
//! through the shared lifecycle (`latlab_front::execute`) as [`BenchSets`], or several
//! times with `--runs`, or once each under `cargo test`.

use crate::bencher::Benchmark;
use crate::count::callgrind::{CountEnd, ValgrindCounts};
use crate::options::{Command, Options, help};
use crate::registry;
use crate::session::{Mode, Session};
use crate::sets::{BenchSets, result_files};
use latlab_engine::analysis::SLOPE_SAMPLES_PER_ROUND;
use latlab_engine::signals::StopSignals;
use latlab_engine::{Config, Host, RealHost, Runner};
use latlab_front::{Controls, RunOf, RunRequest, help_width, text_width};
use regex_lite::Regex;
use std::ffi::OsString;
use std::sync::Arc;

/// A reason to stop with exit status 2 (bad arguments, an unknown benchmark or baseline,
/// an output that cannot be written), in one line.
struct Stop(String);

fn bad(message: impl Into<String>) -> Stop {
    Stop(message.into())
}

/// What the binary refuses before measuring, the harness refuses too: a `--pin` CPU this
/// process cannot run on, and outputs the one check of every command refuses
/// ([`latlab_front::check_named_outputs`]: an empty path, a directory, a file that cannot be
/// written, two on standard output, one file named twice).
fn check_before_measuring(options: &Options, host: &dyn Host) -> Result<(), Stop> {
    if let Some(cpu) = options.sampling.pin {
        latlab_front::check_pin(host, cpu).map_err(bad)?;
    }
    let by_flag = options.outputs_by_flag();
    let flags: Vec<&str> = by_flag.iter().map(|(flag, _)| flag.as_str()).collect();
    let named = (by_flag.iter())
        .filter_map(|(flag, value)| {
            Some(latlab_front::NamedOutput {
                format: (),
                flag: flag.clone(),
                value: value.clone()?,
            })
        })
        .collect();
    latlab_front::check_named_outputs(named, &latlab_report::formats::listed(&flags), None)
        .map_err(bad)?;
    Ok(())
}

/// Writes `text` to standard output ([`latlab_front::print_out`]: a closed pipe ends it
/// quietly); any other failure is said on standard error.
fn print(text: &str) {
    if let Err(error) = latlab_front::print_out(text) {
        latlab_front::say!("error: {}", latlab_front::with_causes(&error));
    }
}

/// Runs the bench binary with these arguments; returns the exit status.
pub(crate) fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let mut args = args.into_iter().peekable();
    let program = args
        .peek()
        .and_then(|path| std::path::Path::new(path).file_name())
        .map_or_else(
            || "bench".to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
    let options = match Command::parse(args) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            let columns = std::env::var("COLUMNS").ok();
            let width = help_width(text_width(columns.as_deref(), || None));
            print(&help(&program, width));
            return 0;
        }
        Err(message) => {
            latlab_front::say!("error: {message}; see `cargo bench -- --help`");
            return 2;
        }
    };
    crate::watchdog::install_hooks();
    match run_with(&Arc::new(*options)) {
        Ok(code) => code,
        Err(Stop(message)) => {
            latlab_front::say!("error: {message}");
            2
        }
    }
}

fn run_with(options: &Arc<Options>) -> Result<i32, Stop> {
    refuse_what_this_build_lacks(options)?;
    let selected = select(options)?;
    if crate::count::child::is_counting_child().map_err(bad)? {
        return Ok(count_in_this_child(selected));
    }
    #[cfg(feature = "files")]
    if crate::against::serve::asked() {
        return Ok(crate::against::serve::serve(&selected));
    }
    if options.list {
        for benchmark in &selected {
            print(&format!("{}: benchmark\n", benchmark.name));
        }
        return Ok(0);
    }
    let run_of = RunOf::of_this_process();
    #[cfg(feature = "files")]
    let baselines = crate::baselines::asked(options, run_of).map_err(bad)?;
    #[cfg(not(feature = "files"))]
    let baselines = latlab_front::Baselines::none();
    if !options.bench {
        return Ok(run_once(selected));
    }
    #[cfg(feature = "files")]
    if let Some(against) = &options.against {
        return compare_against(options, against, &selected);
    }
    let files = result_files(options, run_of).map_err(bad)?;
    let host: Arc<dyn Host> = Arc::new(RealHost::default());
    check_before_measuring(options, host.as_ref())?;
    check_counting(options)?;
    let stop = StopSignals::install().map_err(|e| bad(format!("cannot handle Ctrl-C: {e}")))?;
    #[cfg(feature = "files")]
    if options.sampling.runs > 1 && run_of.is_none() {
        return repeat(options, &baselines, &stop);
    }
    let config = config_of(options)?;
    let mut notes = fewer_rounds_note(options, &config);
    let terminal = latlab_front::terminal(
        &options.terminal,
        latlab_front::Stream::beside(files.uses_stdout()),
    );
    let counts = match count_under_valgrind(options, &selected, &stop)? {
        CountEnd::Counted(counts) => counts,
        CountEnd::Stopped(status) => return Ok(i32::from(status)),
    };
    notes.extend(counts.note());
    let sets = registry::side_by_side(selected);
    let sets = BenchSets::new(
        Arc::clone(options),
        sets,
        &config,
        terminal,
        stop.clone(),
        run_of,
    )
    .with_counts(counts);
    let request = RunRequest {
        suite: options.sampling.suite,
        rounds: config.rounds,
        controls: Controls {
            pin: options.sampling.pin,
            ..Controls::default()
        },
        notes,
        baselines,
        terminal,
        results_called: "benchmark",
        ..RunRequest::new(host, config, files)
    };
    let mut sets = sets;
    let status = latlab_front::execute(request, &mut sets, &stop).map_err(bad)?;
    Ok(i32::from(status))
}

/// `--against REV`: this build's benchmarks and REV's, compared in paired slices, every
/// process of both pinned to one CPU (`--pin`'s, else the last this process may use).
#[cfg(feature = "files")]
fn compare_against(
    options: &Options,
    against: &crate::against::AgainstArgs,
    selected: &[Benchmark],
) -> Result<i32, Stop> {
    let stop = StopSignals::install().map_err(|e| bad(format!("cannot handle Ctrl-C: {e}")))?;
    // This process times nothing: the OS's clock, not the cycle counter's calibration.
    let host = RealHost::with_clock(latlab_engine::Clock::monotonic());
    check_before_measuring(options, &host)?;
    // Both sides' processes on one CPU, this process's (which they inherit): neither waits
    // for the other to wake on another CPU, and neither runs on a core the other did not.
    let host: &dyn Host = &host;
    let cpu = options
        .sampling
        .pin
        .or_else(|| host.allowed_cpus().last().copied());
    if let Some(Err(why)) = cpu.map(|cpu| host.pin_to_cpu(cpu)) {
        latlab_front::say!("--against: the two builds are not pinned to one CPU: {why}");
    }
    let json = (options.outputs_by_flag().into_iter())
        .find(|(flag, _)| flag == "--json")
        .and_then(|(_, path)| path);
    let outputs = crate::against::Outputs {
        json: json.as_deref(),
        #[cfg(feature = "html")]
        html: options.html.as_deref(),
    };
    crate::against::run(against, selected, outputs, &stop).map_err(bad)
}

/// `--runs N`: the run made N times, each a process of its own started after the last
/// ended ([`latlab_front::RunsCommand`]), each writing its results into `run-K.json` of the
/// command's own runs directory ([`crate::baselines::runs_directory`]); then the runs
/// compared with the baseline together (and gated), and kept as one together.
#[cfg(feature = "files")]
fn repeat(
    options: &Options,
    baselines: &latlab_front::Baselines,
    stop: &StopSignals,
) -> Result<i32, Stop> {
    use crate::baselines::run_file;
    let runs = options.sampling.runs;
    let own = crate::baselines::runs_directory().map_err(|why| bad(format!("--runs: {why}")))?;
    let dir = own.dir.path();
    let terminal = latlab_front::terminal(&options.terminal, latlab_front::Stream::Stdout);
    let command = latlab_front::RunsCommand {
        runs,
        dir,
        results_of: &|of| run_file(dir, of),
        announce: &|of: RunOf| {
            let into = run_file(dir, of);
            latlab_front::say!("run {} of {}, into {}", of.run, of.runs, into.display());
        },
        handed: Some(dir),
        baselines,
        terminal: &terminal,
        results_called: "benchmark",
        closing: format!(
            "{runs} runs in {}/run-1.json ... run-{runs}.json; `latlab compare` compares that \
             directory with another of runs",
            dir.display()
        ),
    };
    let status = command.execute(stop).map_err(bad)?;
    Ok(i32::from(status))
}

/// Refuses, before measuring, an option whose feature this build of the harness was built
/// without, naming the feature.
fn refuse_what_this_build_lacks(options: &Options) -> Result<(), Stop> {
    let (files, profile, html) = (
        ("files", cfg!(feature = "files")),
        ("profile", cfg!(feature = "profile")),
        ("html", cfg!(feature = "html")),
    );
    let asked = [
        ("--profile", options.profile, profile),
        ("--html", options.html.is_some(), html),
        (
            "--save-baseline",
            options.baselines.save_baseline.is_some(),
            files,
        ),
        (
            "--add-to-baseline",
            options.baselines.add_to_baseline.is_some(),
            files,
        ),
        ("--baseline", options.baselines.baseline.is_some(), files),
        (
            "--baseline-history",
            options.baselines.baseline_history.is_some(),
            files,
        ),
        ("--runs", options.sampling.runs > 1, files),
    ];
    match asked
        .into_iter()
        .find(|&(_, asked, (_, built))| asked && !built)
    {
        Some((option, _, (feature, _))) => Err(bad(crate::options::not_built(option, feature))),
        None => Ok(()),
    }
}

/// The benchmarks the patterns select, in source order.
fn select(options: &Options) -> Result<Vec<Benchmark>, Stop> {
    let all = registry::all();
    if options.filters.is_empty() {
        return Ok(all);
    }
    let patterns = options
        .filters
        .iter()
        .map(|p| {
            let anchored = if options.exact {
                format!("^{}$", regex_lite::escape(p))
            } else {
                p.clone()
            };
            Regex::new(&anchored)
                .map_err(|e| bad(format!("'{p}' is not a regular expression: {e}")))
        })
        .collect::<Result<Vec<Regex>, Stop>>()?;
    let selected: Vec<Benchmark> = all
        .into_iter()
        .filter(|b| patterns.iter().any(|p| p.is_match(&b.name)))
        .collect();
    if selected.is_empty() {
        return Err(bad(format!(
            "no benchmark matches {}; `cargo bench -- --list` lists them",
            options.filters.join(" or ")
        )));
    }
    Ok(selected)
}

/// Refuses `--count` where nothing can count: Valgrind not installed, or the CPU's counter
/// not readable by this process (`--via perf`), in one line saying what to do.
fn check_counting(options: &Options) -> Result<(), Stop> {
    use crate::count::Via;
    match options.count.map(|count| count.via) {
        None => Ok(()),
        Some(Via::Valgrind) => crate::count::callgrind::check_installed().map_err(bad),
        #[cfg(all(feature = "profile", any(target_os = "linux", target_os = "android")))]
        Some(Via::Perf) => crate::count::perf::check_available().map_err(bad),
        #[cfg(not(all(feature = "profile", any(target_os = "linux", target_os = "android"))))]
        Some(Via::Perf) => Err(bad(
            if cfg!(any(target_os = "linux", target_os = "android")) {
                crate::options::not_built("--via perf", "profile")
            } else {
                "--via perf: perf_event_open is Linux's; count under Valgrind (leave out --via \
             perf)"
                    .to_string()
            },
        )),
    }
}

/// `--count` under Valgrind: each selected benchmark counted in a child of this binary
/// under callgrind, before any is timed (a threaded benchmark is not: callgrind runs its
/// threads one at a time, and they would never contend). Empty for any other `--via`, and
/// without `--count`.
fn count_under_valgrind(
    options: &Options,
    selected: &[Benchmark],
    stop: &StopSignals,
) -> Result<CountEnd, Stop> {
    let nothing = || Ok(CountEnd::Counted(ValgrindCounts::default()));
    let Some(count) = options
        .count
        .filter(|c| c.via == crate::count::Via::Valgrind)
    else {
        return nothing();
    };
    let names: Vec<String> = (selected.iter())
        .filter(|b| b.threads.is_none())
        .map(|b| b.name.clone())
        .collect();
    if names.is_empty() {
        return nothing();
    }
    latlab_front::say!(
        "latlab-bench: counting {} benchmark{} under Valgrind's callgrind",
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    );
    crate::count::callgrind::count(count.what, &names, stop).map_err(bad)
}

/// The counting child's run: each benchmark's bodies counted under callgrind, nothing
/// timed or written; the exit status 1 where a benchmark failed.
fn count_in_this_child(selected: Vec<Benchmark>) -> i32 {
    let host: Arc<dyn Host> = Arc::new(RealHost::default());
    let mut session = Session::new(Runner::on(host, Config::quick()), Mode::Count);
    let unthreaded = selected
        .into_iter()
        .filter(|b| b.threads.is_none())
        .collect();
    for set in registry::side_by_side(unthreaded) {
        session.run_set(&set);
    }
    for failure in &session.failures {
        latlab_front::say!("bench {} ... FAILED: {}", failure.name, failure.reason);
    }
    i32::from(!session.failures.is_empty())
}

/// Runs each benchmark once, as `cargo test` does with bench targets: it checks that they
/// run, and measures nothing.
fn run_once(selected: Vec<Benchmark>) -> i32 {
    let host: Arc<dyn Host> = Arc::new(RealHost::default());
    let mut session = Session::new(Runner::on(host, Config::quick()), Mode::Once);
    for set in registry::side_by_side(selected) {
        session.run_set(&set);
    }
    for name in &session.checked {
        print(&format!(
            "bench {name} ... ok (run once; `cargo bench` measures)\n"
        ));
    }
    for failure in &session.failures {
        print(&format!(
            "bench {} ... FAILED: {}\n",
            failure.name, failure.reason
        ));
    }
    i32::from(!session.failures.is_empty())
}

/// The note a run keeps where its samples leave fewer rounds than asked.
fn fewer_rounds_note(options: &Options, config: &Config) -> Vec<String> {
    (config.rounds < options.sampling.rounds)
        .then(|| {
            format!(
                "measured in {} round(s), not {}: each round takes at least \
                 {SLOPE_SAMPLES_PER_ROUND} of the {} samples",
                config.rounds, options.sampling.rounds, config.samples
            )
        })
        .into_iter()
        .collect()
}

/// The engine's settings for `options`: the suite's sampling, overridden, in as many of the
/// rounds asked for as leave each round [`SLOPE_SAMPLES_PER_ROUND`] samples.
fn config_of(options: &Options) -> Result<Config, Stop> {
    let config = options.sampling.config().map_err(bad)?;
    let rounds = config
        .rounds
        .min(config.samples / SLOPE_SAMPLES_PER_ROUND)
        .max(1);
    Ok(Config { rounds, ..config })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Command;

    /// Why the command line `args` is refused before measuring, when it is: by the parser
    /// (a format this build leaves out is not an option of it) or after it.
    fn refused(args: &[&str]) -> Result<(), String> {
        let args = std::iter::once("bench").chain(args.iter().copied());
        match Command::parse(args.map(OsString::from))? {
            Command::Run(options) => refuse_what_this_build_lacks(&options).map_err(|s| s.0),
            Command::Help => unreachable!("no --help given"),
        }
    }

    /// An option whose feature this build lacks is refused before anything is measured,
    /// naming the feature; with the feature, it goes ahead. (Run in the default build and in
    /// the light one, `--no-default-features`.)
    #[test]
    fn options_of_features_left_out_are_refused_by_name() {
        let asked = [
            (
                &["--json", "out.json"][..],
                "files",
                cfg!(feature = "files"),
            ),
            (&["--csv", "out.csv"], "files", cfg!(feature = "files")),
            (&["--baseline", "main"], "files", cfg!(feature = "files")),
            (&["--html", "out.html"], "html", cfg!(feature = "html")),
            (&["--profile"], "profile", cfg!(feature = "profile")),
        ];
        for (args, feature, built) in asked {
            match refused(args) {
                Ok(()) => assert!(built, "{args:?} went ahead without `{feature}`"),
                Err(message) => {
                    assert!(!built, "{args:?} refused with `{feature}`: {message}");
                    assert!(message.starts_with(args[0]), "{message}");
                    assert!(
                        message.contains(&format!("`{feature}` feature")),
                        "{message}"
                    );
                }
            }
        }
        assert!(refused(&["--markdown", "out.md"]).is_ok());
    }
}
