//! `cargo bench -- --against REV`: this build's benchmarks and another build's, run side
//! by side in paired slices, judged by the paired differences.
//!
//! Both builds run as children ([`sides`]), each serving its benchmarks ([`serve`]); the
//! other build is REV's bench target of the same name ([`build`]). Each benchmark both
//! sides have is timed in blocks of four slices, A B B A (A the other build, B this one),
//! each slice the same turns on both sides, until the median ratio's 95% interval is
//! narrower than the precision asked or the benchmark's time is spent ([`paired`]), in
//! rounds of fresh pairs of processes whose spread is the layout floor, which a verdict
//! never calls a change inside.

pub(crate) mod build;
mod paired;
mod report;
pub(crate) mod serve;
mod sides;
pub(crate) mod slices;
mod wire;

use crate::bencher::Benchmark;
use latlab_engine::signals::StopSignals;
use paired::{Block, Paired};
use sides::{NotServed, Side};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a slice takes: long enough that the switch between the sides (a few
/// microseconds on one CPU) and the timer are under 0.1% of it, short enough that a
/// benchmark's seconds hold a hundred blocks.
const SLICE: Duration = Duration::from_millis(5);
/// How many blocks a round, each round a fresh pair of processes: few, so that a
/// benchmark's seconds hold many pairs (the floor they make narrows with their number),
/// enough that a pair's start (a few milliseconds, and the benchmark's own setup) is a
/// small part of the round.
const BLOCKS_A_ROUND: usize = 4;
/// The fewest rounds before the sampling may stop as precise enough: fewer read the spread
/// of the pairs of processes too loosely to trust a floor of nothing.
const MIN_ROUNDS: usize = 6;

/// What `--against` asks.
#[derive(Debug, Clone)]
pub(crate) struct AgainstArgs {
    pub rev: String,
    /// The interval's half-width and the layout floor together at which a benchmark's
    /// sampling stops, as a share.
    pub precision: f64,
    /// The most time a benchmark is sampled.
    pub time: Duration,
    /// `--fail-if-slower PCT`, as a share.
    pub fail_if_slower: Option<f64>,
}

pub(crate) const DEFAULT_PRECISION_PERCENT: f64 = 0.5;
pub(crate) const DEFAULT_TIME: Duration = Duration::from_secs(2);

/// Where the comparison is written besides the terminal.
pub(crate) struct Outputs<'a> {
    pub json: Option<&'a str>,
    #[cfg(feature = "html")]
    pub html: Option<&'a str>,
}

/// One benchmark's comparison.
pub(crate) struct Compared {
    pub name: String,
    pub turns: u64,
    pub paired: Paired,
    pub took: Duration,
}

/// What a comparison found, benchmark by benchmark.
pub(crate) struct Comparison {
    pub other: String,
    pub compared: Vec<Compared>,
    /// Benchmarks only this build has, and only the other.
    pub only_here: Vec<String>,
    pub only_there: Vec<String>,
    /// Benchmarks one side could not serve, and why.
    pub not_compared: Vec<(String, String)>,
    pub interrupted: bool,
}

/// Where this bench executable was built: its bench target's name, the target directory,
/// the profile cargo built it with, and its package's directory.
struct ThisBuild {
    executable: PathBuf,
    target: String,
    target_dir: PathBuf,
    profile: String,
    package_dir: PathBuf,
}

impl ThisBuild {
    fn find() -> Result<ThisBuild, String> {
        let executable = std::env::current_exe()
            .map_err(|e| format!("--against: this executable cannot be found ({e})"))?;
        let stem = (executable.file_stem()).map(|s| s.to_string_lossy().into_owned());
        let target = stem
            .as_deref()
            .map(|s| s.rsplit_once('-').map_or(s, |(name, _)| name).to_string())
            .unwrap_or_default();
        // TARGET/PROFILE/deps/NAME-HASH
        let profile_dir = (executable.parent()).and_then(Path::parent);
        let (Some(profile_dir), Some(target_dir)) =
            (profile_dir, profile_dir.and_then(Path::parent))
        else {
            return Err(format!(
                "--against: {} is not where cargo builds a bench target (TARGET/PROFILE/deps)",
                executable.display()
            ));
        };
        let profile = match profile_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        {
            Some(dir) if dir == "release" => "bench".to_string(),
            Some(dir) if dir == "debug" => "dev".to_string(),
            Some(dir) => dir,
            None => "bench".to_string(),
        };
        let package_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        Ok(ThisBuild {
            target_dir: target_dir.to_path_buf(),
            executable,
            target,
            profile,
            package_dir,
        })
    }
}

/// Compares the `selected` benchmarks with `args.rev`'s, prints and writes what was found;
/// the exit status.
pub(crate) fn run(
    args: &AgainstArgs,
    selected: &[Benchmark],
    outputs: Outputs<'_>,
    stop: &StopSignals,
) -> Result<i32, String> {
    let this = ThisBuild::find()?;
    let stopped = || stop.received();
    let other = build::other_build(
        &args.rev,
        &this.target,
        &this.package_dir,
        &this.target_dir,
        &this.profile,
        &stopped,
    )?;
    let Some(other) = other else {
        latlab_front::say!(
            "--against {}: it has no bench target {}: nothing to compare this one with",
            args.rev,
            this.target
        );
        return Ok(0);
    };
    let builds = Builds {
        here: (this.executable, "this build".to_string()),
        there: (other.executable, other.label),
    };
    let comparison = compare(&builds, selected, args, stop)?;
    report::print_end(&comparison);
    if let Some(path) = outputs.json {
        report::write_json(&comparison, args, path)?;
    }
    #[cfg(feature = "html")]
    if let Some(path) = outputs.html {
        report::write_html(&comparison, path)?;
    }
    Ok(report::status(&comparison, args))
}

/// The two builds' executables and how each is named.
struct Builds {
    here: (PathBuf, String),
    there: (PathBuf, String),
}

impl Builds {
    /// A fresh pair of processes, this build's first.
    fn start(&self) -> Result<(Side, Side), String> {
        Ok((
            Side::start(&self.here.0, &self.here.1)?,
            Side::start(&self.there.0, &self.there.1)?,
        ))
    }
}

/// Pairs the sides' benchmarks by name, of those `selected`, and compares each.
fn compare(
    builds: &Builds,
    selected: &[Benchmark],
    args: &AgainstArgs,
    stop: &StopSignals,
) -> Result<Comparison, String> {
    let (here, there) = builds.start()?;
    let wanted = |name: &str| selected.iter().any(|b| b.name == name);
    let names = Names::pair(&here.names, &there.names, wanted);
    let mut comparison = Comparison {
        other: there.label.clone(),
        compared: Vec::new(),
        only_here: names.only_here,
        only_there: names.only_there,
        not_compared: Vec::new(),
        interrupted: false,
    };
    let both = names.both;
    drop((here, there));
    for name in both {
        if stop.received().is_some() {
            comparison.interrupted = true;
            break;
        }
        match one(builds, &name, args, stop) {
            Ok(compared) => {
                report::print_line(&compared, &comparison.other);
                comparison.compared.push(compared);
            }
            // A side that stopped answering stopped on this benchmark (a body that hangs,
            // floods or ends its process): its processes are gone, the next benchmark
            // starts fresh ones, and what was compared is kept.
            Err(NotServed::Benchmark(why) | NotServed::Side(why)) => {
                report::print_line_not_compared(&name, &why);
                comparison.not_compared.push((name, why));
            }
        }
    }
    comparison.interrupted |= stop.received().is_some();
    Ok(comparison)
}

/// The benchmarks of two sides paired by name.
#[derive(Debug, PartialEq)]
struct Names {
    /// Both sides have them, and this run selected them: compared, in this side's order.
    both: Vec<String>,
    /// Only this side has them (of those selected), and only the other.
    only_here: Vec<String>,
    only_there: Vec<String>,
}

impl Names {
    fn pair(here: &[String], there: &[String], wanted: impl Fn(&str) -> bool) -> Names {
        let (both, only_here) = (here.iter())
            .filter(|n| wanted(n))
            .cloned()
            .partition(|n| there.contains(n));
        Names {
            both,
            only_here,
            only_there: (there.iter())
                .filter(|n| !here.contains(n))
                .cloned()
                .collect(),
        }
    }
}

/// Compares benchmark `name` in rounds, each a fresh pair of processes timed in blocks of
/// slices, until it could hear a change of the precision asked, or its time is spent.
fn one(
    builds: &Builds,
    name: &str,
    args: &AgainstArgs,
    stop: &StopSignals,
) -> Result<Compared, NotServed> {
    let started = Instant::now();
    let mut turns = None;
    let mut rounds: Vec<Vec<Block>> = Vec::new();
    loop {
        let (mut here, mut there) = builds.start().map_err(NotServed::Side)?;
        here.begin(name)?;
        there.begin(name)?;
        let turns = *match &mut turns {
            Some(turns) => turns,
            none => none.insert(here.calibrate(SLICE.as_nanos() as u64)?),
        };
        // One slice a side first, untimed: the first touches its data.
        there.slice(turns, SLICE)?;
        here.slice(turns, SLICE)?;
        let mut blocks = Vec::new();
        while blocks.len() < BLOCKS_A_ROUND {
            let a0 = there.slice(turns, SLICE)?;
            let b0 = here.slice(turns, SLICE)?;
            let b1 = here.slice(turns, SLICE)?;
            let a1 = there.slice(turns, SLICE)?;
            blocks.push(Block {
                a: [a0, a1],
                b: [b0, b1],
            });
            if stop.received().is_some() {
                break;
            }
        }
        here.end()?;
        there.end()?;
        rounds.push(blocks);
        let paired = Paired::of(&rounds).expect("a block was timed");
        let precise = rounds.len() >= MIN_ROUNDS && paired.precise_to(args.precision);
        if precise || started.elapsed() >= args.time || stop.received().is_some() {
            return Ok(Compared {
                name: name.to_string(),
                turns,
                paired,
                took: started.elapsed(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmarks_are_paired_by_name_and_those_of_one_side_named() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let here = names(&["sort/16", "sort/1024", "new", "skipped"]);
        let there = names(&["sort/1024", "old", "sort/16", "skipped"]);
        let paired = Names::pair(&here, &there, |n| n != "skipped");
        assert_eq!(
            paired,
            Names {
                both: names(&["sort/16", "sort/1024"]),
                only_here: names(&["new"]),
                only_there: names(&["old"]),
            }
        );
    }
}
