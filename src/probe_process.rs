//! A probe in a process of its own ([`Process::Own`]: the GPU family). For each of its
//! rounds the run starts latlab's own program again with [`COMMAND`] and a request (the
//! probe, the suite and how to sample, as arguments), and reads the outcome the child
//! writes to its standard output as JSON (a [`ProbeOutcome`], as the results file holds). A fault that poisons the child (a CUDA kernel's illegal address
//! is sticky until the process ends) ends with it; the run goes on with the next probe on a
//! device as new.
//!
//! The child stops on SIGINT, SIGTERM or SIGHUP as a run does, writing what it measured, but
//! a second signal does not end it: the run passes a stopping signal on to it once,
//! whichever reached the run (Ctrl-C reaches both, `kill` the run alone), and kills it if it
//! has not stopped 10 s later, or if it runs far beyond what the probe takes. It dies with
//! the run (`PR_SET_PDEATHSIG`).
//!
//! [`Process::Own`]: latlab_probes::Process::Own

use crate::cli::BUDGET_RANGE;
use anyhow::{Context, anyhow, bail};
use latlab_doors::child::{End, Output, Supervision};
use latlab_engine::config_text::{SAMPLES_RANGE, TARGET_TIME_RANGE};
use latlab_engine::model::{ProbeOutcome, ProbeStatus};
use latlab_engine::signals::StopSignals;
use latlab_engine::{BenchResult, Config, Runner, Suite};
use latlab_front::say;
use latlab_probes::{OptionValues, ProbeContext, ProbeSpec};
use std::ops::RangeInclusive;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The first argument that makes latlab a probe's process: not a subcommand for people.
pub const COMMAND: &str = "__probe-process";

/// How long a child may take to stop once a stopping signal is passed on to it.
const GRACE: Duration = Duration::from_secs(10);

/// The most a probe's process may write as its outcome: a probe's results with all their
/// samples are a few megabytes.
const MAX_ANSWER_BYTES: usize = 256 << 20;

/// The longest pause between samples a request may ask for: a run pauses
/// [`latlab_engine::isolation::RT_PAUSE`] under `--rt`, and never more than this.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// What a probe's process is asked to do.
#[derive(Debug, Clone, PartialEq)]
struct Request {
    probe: String,
    suite: String,
    samples: usize,
    target_sample_time_ns: u64,
    budget_ns: u64,
    rounds: usize,
    pause_between_samples_ns: Option<u64>,
    /// The budget's share of the samples ([`Config::share`]).
    share: f64,
    /// The time left before the unit's deadline when it was asked, if it has one.
    time_left_ns: Option<u64>,
    /// The values the run gave the probe's options.
    options: OptionValues,
}

impl Request {
    fn of(probe: &ProbeSpec, config: &Config, suite: Suite, options: &OptionValues) -> Request {
        Request {
            probe: probe.id.to_string(),
            suite: suite.name().to_string(),
            samples: config.samples,
            target_sample_time_ns: config.target_sample_time.as_nanos() as u64,
            budget_ns: config.budget.as_nanos() as u64,
            rounds: config.rounds,
            pause_between_samples_ns: (config.pause_between_samples)
                .map(|pause| pause.as_nanos() as u64),
            share: config.share,
            time_left_ns: (config.deadline).map(|deadline| {
                deadline
                    .saturating_duration_since(Instant::now())
                    .as_nanos() as u64
            }),
            options: options.clone(),
        }
    }

    /// The arguments that carry it, after [`COMMAND`]: nine in order, then the probe's
    /// options as `--NAME=VALUE`.
    fn to_args(&self) -> Vec<String> {
        let declared = find_probe(&self.probe).map_or(&[][..], |probe| probe.options());
        let fixed = [
            self.probe.clone(),
            self.suite.clone(),
            self.samples.to_string(),
            self.target_sample_time_ns.to_string(),
            self.budget_ns.to_string(),
            self.rounds.to_string(),
            (self.pause_between_samples_ns).map_or("-".to_string(), |ns| ns.to_string()),
            self.share.to_string(),
            (self.time_left_ns).map_or("-".to_string(), |ns| ns.to_string()),
        ];
        fixed.into_iter().chain(self.options.to_args(declared)).collect()
    }

    /// The request `args` carry, or what is wrong with them.
    fn from_args(args: &[String]) -> Result<Request, String> {
        let (fixed, options) = args.split_at(args.len().min(9));
        let [
            probe,
            suite,
            samples,
            target,
            budget,
            rounds,
            pause,
            share,
            time_left,
        ] = fixed
        else {
            return Err(format!("{} arguments where 9 were expected", args.len()));
        };
        let declared = find_probe(probe)
            .ok_or_else(|| format!("no probe is named {probe}"))?
            .options();
        // Each number is bounded as the option it comes from is: anything else is no
        // request a run made.
        let number = |what: &str, text: &str, range: RangeInclusive<u64>| -> Result<u64, String> {
            text.parse()
                .ok()
                .filter(|n| range.contains(n))
                .ok_or_else(|| {
                    format!(
                        "{what} {text:?} is not a whole number from {} to {}",
                        range.start(),
                        range.end()
                    )
                })
        };
        let nanoseconds = |range: &RangeInclusive<Duration>| {
            (range.start().as_nanos() as u64)..=(range.end().as_nanos() as u64)
        };
        let samples_range = (*SAMPLES_RANGE.start() as u64)..=(*SAMPLES_RANGE.end() as u64);
        let up_to_the_budget = 0..=(BUDGET_RANGE.end().as_nanos() as u64);
        Ok(Request {
            probe: probe.clone(),
            suite: suite.clone(),
            samples: number("samples", samples, samples_range)? as usize,
            target_sample_time_ns: number(
                "the sample time",
                target,
                nanoseconds(&TARGET_TIME_RANGE),
            )?,
            budget_ns: number("the budget", budget, up_to_the_budget.clone())?,
            rounds: number("rounds", rounds, 1..=10)? as usize,
            pause_between_samples_ns: match pause.as_str() {
                "-" => None,
                ns => Some(number("the pause", ns, 0..=MAX_PAUSE.as_nanos() as u64)?),
            },
            share: share
                .parse()
                .ok()
                .filter(|share: &f64| (0.0..=1.0).contains(share))
                .ok_or_else(|| format!("the share {share:?} is not a number from 0 to 1"))?,
            time_left_ns: match time_left.as_str() {
                "-" => None,
                ns => Some(number("the time left", ns, up_to_the_budget)?),
            },
            options: OptionValues::from_args(options, declared)?,
        })
    }

    fn config(&self, cancel: Arc<AtomicBool>) -> Config {
        Config {
            samples: self.samples,
            target_sample_time: Duration::from_nanos(self.target_sample_time_ns),
            budget: Duration::from_nanos(self.budget_ns),
            pause_between_samples: self.pause_between_samples_ns.map(Duration::from_nanos),
            cancel,
            rounds: self.rounds,
            share: self.share,
            deadline: (self.time_left_ns).map(|ns| Instant::now() + Duration::from_nanos(ns)),
        }
    }
}

/// The probe named `id`.
fn find_probe(id: &str) -> Option<&'static ProbeSpec> {
    latlab_probes::PROBES.iter().find(|probe| probe.id == id)
}

/// Runs `probe` in a process of its own, sampling as `config` says, with the option values
/// `options`; a process that could not start, died or said nothing readable fails the probe
/// with the reason.
pub fn measure(
    probe: &ProbeSpec,
    config: &Config,
    suite: Suite,
    options: &OptionValues,
) -> (ProbeStatus, Vec<BenchResult>) {
    match measure_in_child(probe, config, suite, options) {
        Ok(outcome) => outcome,
        Err(error) => (
            ProbeStatus::Failed {
                reason: format!("in a process of its own: {error:#}"),
            },
            Vec::new(),
        ),
    }
}

fn measure_in_child(
    probe: &ProbeSpec,
    config: &Config,
    suite: Suite,
    options: &OptionValues,
) -> anyhow::Result<(ProbeStatus, Vec<BenchResult>)> {
    let request = Request::of(probe, config, suite, options);
    let program = std::env::current_exe().context("could not find latlab's own program")?;
    let mut command = Command::new(program);
    command.arg(COMMAND).args(request.to_args());
    let cancel = &config.cancel;
    let limit = Duration::from_secs_f64(60.0 + 10.0 * probe.typical.seconds(suite));
    let what = format!("{}'s process", probe.id);
    // The run's stopping signal, whichever it was, is passed on as SIGTERM.
    let stop = || cancel.load(Ordering::Relaxed).then_some(libc::SIGTERM);
    let ended = latlab_doors::child::run(
        &mut command,
        &Supervision {
            what: &what,
            limit,
            notice_after: Some(limit / 4),
            grace: GRACE,
            stop: &stop,
            say: &|line| say!("{line}"),
            stdout: Output::Captured(MAX_ANSWER_BYTES),
            stderr: Output::Inherited,
        },
    )
    .context("could not start it")?;
    match ended.end {
        End::Exited | End::Stopped(_) if ended.overflowed => bail!(
            "it answered with more than {} MiB, more than any probe's outcome",
            MAX_ANSWER_BYTES >> 20
        ),
        // Stopped by a signal passed on, it writes what it measured, as a run does.
        End::Exited | End::Stopped(_) if ended.status.success() => {
            let answer: ProbeOutcome =
                serde_json::from_slice(&ended.stdout).context("its answer could not be read")?;
            Ok((answer.status, answer.results))
        }
        End::Exited => bail!("it ended without its results ({})", ended.status),
        End::Stopped(_) | End::DidNotStop(..) => Ok((ProbeStatus::Interrupted, Vec::new())),

        End::OutlivedLimit(limit) => bail!(
            "it was still running after {} s, far beyond what the probe takes, and was killed",
            limit.as_secs()
        ),
    }
}

/// The request's arguments, when this process was started as a probe's process.
pub fn request_of_this_process() -> Option<Vec<String>> {
    let mut args = std::env::args().skip(1);
    (args.next()? == COMMAND).then(|| args.collect())
}

/// Serves a request: runs the probe here and writes its outcome to standard output.
/// Status 2, with one line on standard error, when the request cannot be served.
pub fn serve(request: &[String]) -> ExitCode {
    match serve_request(request) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            say!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn serve_request(args: &[String]) -> anyhow::Result<()> {
    let request = Request::from_args(args)
        .map_err(|why| anyhow!("{COMMAND} serves requests latlab makes itself: {why}"))?;
    let probe = find_probe(&request.probe).ok_or_else(|| anyhow!("no probe is named {}", request.probe))?;
    let suite = latlab_front::parse_suite(&request.suite)
        .map_err(|why| anyhow!("suite {}: {why}", request.suite))?;
    let stop = StopSignals::install_supervised().context("could not watch for signals")?;
    let mut runner = Runner::new(request.config(stop.flag()));
    let mut ctx = ProbeContext {
        runner: &mut runner,
        suite,
        options: request.options,
        findings: Default::default(),
    };
    let started = std::time::Instant::now();
    let (status, results) = crate::probe_outcome::outcome_here(probe, &mut ctx);
    let outcome = ProbeOutcome {
        id: probe.id.to_string(),
        method: probe.method.to_string(),
        status,
        results,
        duration_ns: started.elapsed().as_nanos() as u64,
    };
    serde_json::to_writer(std::io::stdout().lock(), &outcome)
        .context("could not write the probe's outcome")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_survives_its_arguments_and_a_malformed_one_is_refused() {
        let request = Request {
            probe: "gpu.memory".into(),
            suite: "full".into(),
            samples: 100,
            target_sample_time_ns: 5_000_000,
            budget_ns: 10_000_000_000,
            rounds: 3,
            pause_between_samples_ns: Some(1000),
            share: 0.375,
            time_left_ns: Some(2_500_000_000),
            options: OptionValues::default(),
        };
        assert_eq!(Request::from_args(&request.to_args()), Ok(request.clone()));
        assert_eq!(latlab_front::parse_suite(&request.suite), Ok(Suite::Full));
        let unpaused = Request {
            pause_between_samples_ns: None,
            time_left_ns: None,
            ..request
        };
        assert_eq!(
            Request::from_args(&unpaused.to_args()),
            Ok(unpaused.clone())
        );
        let mut args = unpaused.to_args();
        args[2] = "many".into();
        assert_eq!(
            Request::from_args(&args),
            Err("samples \"many\" is not a whole number from 5 to 100000".into())
        );
        // Numbers no run asks for: as the public options bound them.
        for (at, huge) in [
            (2, "100001"),
            (3, "10000000001"),
            (5, "11"),
            (6, "1000000001"),
        ] {
            let mut args = unpaused.to_args();
            args[at] = huge.into();
            assert!(Request::from_args(&args).is_err(), "{at}: {huge}");
        }
        assert!(Request::from_args(&args[..3]).is_err());
        let mut args = unpaused.to_args();
        args[7] = "2".into();
        assert!(
            Request::from_args(&args)
                .unwrap_err()
                .contains("from 0 to 1")
        );
    }

    /// The values a run gives a probe's options reach its process, parsed and bounded as on
    /// the command line there; an option the probe does not declare is refused.
    #[test]
    fn a_request_carries_the_probes_options() {
        let ipc = find_probe("ipc.latency").unwrap();
        let mut options = OptionValues::default();
        let pairs = latlab_probes::PAIRS_OPTION;
        options.set(&pairs, pairs.parse("2").unwrap());
        for spec in ipc.options().iter().filter(|spec| spec.name == "deadline") {
            options.set(spec, spec.parse("750us").unwrap());
        }
        let config = Config::quick();
        let request = Request::of(ipc, &config, Suite::Quick, &options);
        let args = request.to_args();
        assert!(args.contains(&"--pairs=2".to_string()), "{args:?}");
        assert!(args.contains(&"--deadline=750000ns".to_string()), "{args:?}");
        assert_eq!(Request::from_args(&args), Ok(request.clone()));
        let mut foreign = args.clone();
        foreign.push("--max-size=4096".into());
        assert!(Request::from_args(&foreign).unwrap_err().contains("--max-size"));
        let mut bad = args;
        bad.push("--pairs=0".into());
        assert!(Request::from_args(&bad).is_err());
    }
}
