//! Valgrind's callgrind run over this bench binary to count its benchmarks, and the dumps
//! it writes read back. Valgrind is started, waited for and stopped through the door for a
//! child ([`latlab_doors::child`]), its dumps read through the door in from a scratch
//! directory of this process's own.

use super::child::parse_label;
use super::{BodyCounts, CHILD_VARIABLE, Counting};
use latlab_doors::Scratch;
use latlab_doors::child::{End, Output, Supervision};
use latlab_engine::model::Counted;
use latlab_engine::signals::StopSignals;
use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

/// What to say when Valgrind is not there.
const INSTALL: &str = "install Valgrind (Debian and Ubuntu: apt-get install valgrind; Fedora: \
     dnf install valgrind), or count with the CPU's counter where it can be read (--via perf)";

/// How long `valgrind --version` may take to answer.
const VERSION_LIMIT: Duration = Duration::from_secs(5);
/// How long the counting run may take: Valgrind runs code some fifty times slower, and a
/// benchmark's setup runs there too.
const COUNT_LIMIT: Duration = Duration::from_secs(3600);
/// After how long the counting run is named as running long (then at each doubling).
const COUNT_NOTICE: Duration = Duration::from_secs(60);
/// How long the counting run may take to stop once a stopping signal is passed on.
const COUNT_GRACE: Duration = Duration::from_secs(5);
/// The last bytes of the counting run's standard error kept, for what it said of a failure.
const KEPT_STDERR: usize = 64 * 1024;
/// The largest dump read: a dump of one counted pass, without costs by line, is a few
/// kilobytes.
const MAX_DUMP_BYTES: u64 = 64 << 20;
/// What the scratch directories of counting runs are named after.
const SCRATCH_KIND: &str = "latlab-bench-count-";

/// Whether `valgrind` runs; `Err` is one line saying how to get it.
pub(crate) fn check_installed() -> Result<(), String> {
    let ended = latlab_doors::child::run(
        Command::new("valgrind").arg("--version"),
        &Supervision {
            what: "valgrind --version",
            limit: VERSION_LIMIT,
            notice_after: None,
            grace: Duration::ZERO,
            stop: &|| None,
            say: &|_| {},
            stdout: Output::Discarded,
            stderr: Output::Discarded,
        },
    );
    match ended {
        Ok(ended) if ended.end == End::OutlivedLimit(VERSION_LIMIT) => Err(format!(
            "--count: `valgrind --version` did not answer within {} s, and was stopped; the \
             valgrind on PATH does not work: {INSTALL}",
            VERSION_LIMIT.as_secs()
        )),
        Ok(ended) if ended.status.success() => Ok(()),
        Ok(ended) => Err(format!(
            "--count: `valgrind --version` failed ({}); {INSTALL}",
            ended.status
        )),
        Err(e) => Err(format!(
            "--count: valgrind cannot be run ({e}): it is not installed, or not on PATH; \
             {INSTALL}"
        )),
    }
}

/// What the counting run gave: each benchmark's counts per call, the benchmarks that
/// failed under it (with why), and those it never counted.
#[derive(Debug, Default)]
pub(crate) struct ValgrindCounts {
    pub counted: HashMap<String, Counted>,
    pub failed: HashMap<String, String>,
    pub uncounted: Vec<String>,
}

impl ValgrindCounts {
    /// The note a run keeps of the benchmarks the counting run never counted: they are
    /// judged by their times, and a comparison must know.
    pub(crate) fn note(&self) -> Option<String> {
        (!self.uncounted.is_empty()).then(|| {
            format!(
                "--count: the counting run under Valgrind wrote no counts for {}, so {} judged \
                 by time alone",
                self.uncounted.join(", "),
                if self.uncounted.len() == 1 {
                    "it is"
                } else {
                    "they are"
                }
            )
        })
    }
}

/// How the counting run ended.
pub(crate) enum CountEnd {
    Counted(ValgrindCounts),
    /// A stopping signal stopped it: the status the harness ends with.
    Stopped(u8),
}

/// ValgrindCounts `names` (benchmarks of this binary) in a child of this binary under callgrind.
/// `Err` is one line: Valgrind could not be started, ran past its limit, or left a dump no
/// callgrind writes.
pub(crate) fn count(
    what: Counting,
    names: &[String],
    stop: &StopSignals,
) -> Result<CountEnd, String> {
    let scratch = Scratch::new(SCRATCH_KIND)
        .map_err(|e| format!("--count: cannot make a scratch directory: {e}"))?;
    let exe = std::env::current_exe()
        .map_err(|e| format!("--count: cannot find this bench binary ({e})"))?;
    let mut command = Command::new("valgrind");
    command
        .args([
            "--tool=callgrind",
            "--collect-atstart=no",
            "--dump-instr=no",
            "--dump-line=no",
            "--compress-strings=no",
            "--compress-pos=no",
        ])
        .arg(format!(
            "--callgrind-out-file={}",
            scratch.dir().join("callgrind.out").display()
        ));
    if what == Counting::Cache {
        command.arg("--cache-sim=yes");
    }
    command
        .arg(&exe)
        .args(["--bench", "--exact"])
        .args(names)
        .env(CHILD_VARIABLE, "1");
    let ended = latlab_doors::child::run(
        &mut command,
        &Supervision {
            what: "the counting run under Valgrind",
            limit: COUNT_LIMIT,
            notice_after: Some(COUNT_NOTICE),
            grace: COUNT_GRACE,
            stop: &|| stop.received(),
            say: &|line| latlab_front::say!("{line}"),
            stdout: Output::Discarded,
            stderr: Output::Tail(KEPT_STDERR),
        },
    )
    .map_err(|e| format!("--count: cannot start valgrind ({e}); {INSTALL}"))?;
    match ended.end {
        End::Stopped(_) | End::DidNotStop(..) => {
            latlab_front::say!("latlab-bench: interrupted while counting; nothing was measured");
            return Ok(CountEnd::Stopped(stop.exit_status()));
        }
        End::OutlivedLimit(limit) => {
            return Err(format!(
                "--count: the counting run under Valgrind was still running after {} s, and \
                 was stopped{}",
                limit.as_secs(),
                running_when_it_ended(names, &scratch)
            ));
        }
        End::Exited => {}
    }
    let bodies = read_dumps(&scratch)?;
    let said = ChildSaid::from(&ended.stderr_tail);
    Ok(CountEnd::Counted(counts_of(
        names,
        bodies,
        &said,
        ended.status,
    )))
}

/// `: NAME was running` for the first of `names` the dumps do not count, if any.
fn running_when_it_ended(names: &[String], scratch: &Scratch) -> String {
    let bodies = read_dumps(scratch).unwrap_or_default();
    (names.iter())
        .find(|name| !bodies.contains_key(*name))
        .map(|name| format!(" while {} was counted", latlab_report::one_line(name)))
        .unwrap_or_default()
}

/// Each benchmark's counts, failure, or neither, from the dumps and what the child said.
fn counts_of(
    names: &[String],
    mut bodies: HashMap<String, BodyCounts>,
    said: &ChildSaid,
    status: std::process::ExitStatus,
) -> ValgrindCounts {
    let mut counts = ValgrindCounts::default();
    // A run that ended badly without naming the benchmark it failed in (a crash, a signal)
    // ended in the first benchmark it wrote no counts for.
    let mut ended_early = !status.success() && said.failed.is_empty();
    for name in names {
        if let Some(reason) = said.failed.get(name) {
            counts.failed.insert(name.clone(), reason.clone());
            continue;
        }
        match bodies.remove(name).and_then(|b| b.per_call("callgrind")) {
            Some(counted) => {
                counts.counted.insert(name.clone(), counted);
            }
            // The first benchmark without counts, when the run ended badly, was the one
            // running: its end is the run's.
            None if ended_early => {
                let how = said.last_line.as_deref().unwrap_or("it said nothing");
                counts.failed.insert(
                    name.clone(),
                    format!("the counting run under Valgrind ended while it ran ({status}): {how}"),
                );
                ended_early = false;
            }
            None => counts.uncounted.push(name.clone()),
        }
    }
    counts
}

/// What the counting child (not Valgrind) said on standard error: the benchmarks it names
/// as failed, and its last line.
#[derive(Debug, Default)]
struct ChildSaid {
    failed: HashMap<String, String>,
    last_line: Option<String>,
}

impl ChildSaid {
    fn from(stderr: &[u8]) -> ChildSaid {
        let text = String::from_utf8_lossy(stderr);
        let mut said = ChildSaid::default();
        // Valgrind's own lines begin `==PID==`.
        let own = text
            .lines()
            .filter(|line| !is_valgrinds(line) && !line.trim().is_empty());
        for line in own {
            let line = latlab_report::one_line(line).into_owned();
            if let Some((name, reason)) =
                (line.strip_prefix("bench ")).and_then(|rest| rest.split_once(" ... FAILED: "))
            {
                said.failed.insert(name.to_string(), reason.to_string());
            } else if let Some(name) = (line
                .strip_prefix("latlab-bench: the process was ended while "))
            .or_else(|| line.strip_prefix("latlab-bench: the process was aborted while "))
            .and_then(|rest| rest.split_once(" was running").map(|(name, _)| name))
            {
                said.failed
                    .entry(name.to_string())
                    .or_insert_with(|| format!("under Valgrind: {line}"));
            }
            said.last_line = Some(line);
        }
        said
    }
}

/// Whether `line` is Valgrind's own (`==4242== ...`).
fn is_valgrinds(line: &str) -> bool {
    line.strip_prefix("==")
        .and_then(|rest| rest.split_once("=="))
        .is_some_and(|(pid, _)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Every dump in the scratch directory labelled by the counting child, gathered by
/// benchmark; `Err` names a file that is no dump callgrind writes.
fn read_dumps(scratch: &Scratch) -> Result<HashMap<String, BodyCounts>, String> {
    let dir = scratch.dir();
    let names =
        (dir.names()).map_err(|e| format!("--count: cannot read {}: {e}", dir.path().display()))?;
    let mut bodies: HashMap<String, BodyCounts> = HashMap::new();
    for name in names.iter().filter_map(|n| n.to_str()) {
        if !name.starts_with("callgrind.out") {
            continue;
        }
        let refused = |why: String| format!("--count: {}: {why}", dir.join(name).display());
        let bytes = dir.read(name, MAX_DUMP_BYTES).map_err(refused)?;
        let text = String::from_utf8_lossy(&bytes);
        let Some(dump) = Dump::parse(&text).map_err(refused)? else {
            continue;
        };
        let Some((benchmark, body, turns)) = parse_label(&dump.label) else {
            continue;
        };
        let counts = bodies.entry(benchmark).or_insert_with(|| BodyCounts {
            turns,
            events: dump.events.clone(),
            short: Vec::new(),
            long: Vec::new(),
        });
        match body.as_str() {
            "short" => counts.short = dump.totals,
            "long" => counts.long = dump.totals,
            _ => {}
        }
    }
    Ok(bodies)
}

/// One dump of callgrind's: what triggered it, its events and their totals.
#[derive(Debug, PartialEq)]
struct Dump {
    /// What a client request that triggered the dump said (`DUMP_STATS_AT`'s argument).
    label: String,
    events: Vec<String>,
    totals: Vec<u64>,
}

impl Dump {
    /// Reads the header and totals of a callgrind output file: `Ok(None)` for one that is
    /// not a dump a client request triggered, `Err` for one whose events or totals no
    /// callgrind writes.
    fn parse(text: &str) -> Result<Option<Dump>, String> {
        let mut label = None;
        let mut events = None;
        let mut totals = None;
        let mut summary = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("desc: Trigger: Client Request: ") {
                label = Some(rest.trim_end().to_string());
            } else if let Some(rest) = line.strip_prefix("events:") {
                events = Some(
                    rest.split_whitespace()
                        .map(String::from)
                        .collect::<Vec<_>>(),
                );
            } else if let Some(rest) = line.strip_prefix("totals:") {
                totals = Some(counts(rest)?);
            } else if let Some(rest) = line.strip_prefix("summary:") {
                summary = Some(counts(rest)?);
            }
        }
        let (Some(label), Some(events), Some(mut totals)) = (label, events, totals.or(summary))
        else {
            return Ok(None);
        };
        if totals.len() > events.len() {
            return Err(format!(
                "{} totals for {} events, which no callgrind writes",
                totals.len(),
                events.len()
            ));
        }
        // Events counted zero times may be left off the end of the line.
        totals.resize(events.len(), 0);
        Ok(Some(Dump {
            label,
            events,
            totals,
        }))
    }
}

/// A line of event counts, each a whole number below 2^64.
fn counts(text: &str) -> Result<Vec<u64>, String> {
    (text.split_whitespace())
        .map(|n| {
            n.parse()
                .map_err(|_| format!("{n:?} in a line of counts is no count a counter writes"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dump as callgrind 3.19 writes it with `--cache-sim=yes`, trimmed of its costs by
    /// function.
    const DUMP: &str = "# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  target/release/deps/sums-1 --bench --exact sum/1024
part: 2

desc: I1 cache: 32768 B, 64 B, 8-way associative
desc: D1 cache: 32768 B, 64 B, 8-way associative
desc: LL cache: 33554432 B, 64 B, 16-way associative
desc: Timerange: Basic block 9183 - 1044090
desc: Trigger: Client Request: latlab-bench 4096 long 73756d2f31303234

positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 12627979 4198400 8 4 66 1 4 0 0


totals: 12627979 4198400 8 4 66 1 4 0 0
";

    #[test]
    fn a_dump_gives_its_label_events_and_totals() {
        let dump = Dump::parse(DUMP).unwrap().unwrap();
        assert_eq!(dump.label, "latlab-bench 4096 long 73756d2f31303234");
        assert_eq!(dump.events.len(), 9);
        assert_eq!(dump.totals[0], 12_627_979);
        assert_eq!(
            parse_label(&dump.label),
            Some(("sum/1024".to_string(), "long".to_string(), 4096))
        );
        // Trailing zero events left off, and a dump of another trigger.
        let short = DUMP.replace("totals: 12627979 4198400 8 4 66 1 4 0 0", "totals: 5 6");
        assert_eq!(
            Dump::parse(&short).unwrap().unwrap().totals,
            [5, 6, 0, 0, 0, 0, 0, 0, 0]
        );
        let at_exit = DUMP.replace("Client Request: latlab-bench", "Program termination");
        assert_eq!(Dump::parse(&at_exit), Ok(None));
        assert_eq!(Dump::parse("not a dump"), Ok(None));
        // A total past 2^64, a negative one, and more totals than events are refused.
        for bad in [
            "totals: 18446744073709551616",
            "totals: -5 6",
            "totals: 1 2 3 4 5 6 7 8 9 10",
        ] {
            let damaged = DUMP.replace("totals: 12627979 4198400 8 4 66 1 4 0 0", bad);
            assert!(Dump::parse(&damaged).is_err(), "{bad}");
        }
    }

    /// A dump that is a link (to `/dev/zero`, read for ever before) is refused at once,
    /// naming it; a label of no turns, or of more than a pass takes, is no dump of the
    /// counting child's.
    #[test]
    fn a_dump_planted_in_the_scratch_directory_is_refused() {
        let scratch = Scratch::new("latlab-bench-count-test-").unwrap();
        let dir = scratch.dir().path().to_path_buf();
        std::os::unix::fs::symlink("/dev/zero", dir.join("callgrind.out.1")).unwrap();
        let refused = read_dumps(&scratch).unwrap_err();
        assert!(
            refused.contains("callgrind.out.1") && refused.contains("symbolic link"),
            "{refused}"
        );
        std::fs::remove_file(dir.join("callgrind.out.1")).unwrap();
        let no_turns = DUMP.replace("latlab-bench 4096 long", "latlab-bench 0 long");
        std::fs::write(dir.join("callgrind.out.2"), no_turns).unwrap();
        assert!(read_dumps(&scratch).unwrap().is_empty());
    }

    /// What the counting child said reaches the terminal one line each, its escape
    /// sequences shown, never sent (a title, a screen cleared, a right-to-left override);
    /// Valgrind's own lines are not taken for the child's.
    #[test]
    fn the_childs_words_are_shown_not_sent() {
        let said = ChildSaid::from(
            b"==4242== Callgrind, a call-graph generating cache profiler\n\
              bench x/y ... FAILED: panicked: \x1b]0;title\x07\x1b[2J\xe2\x80\xae\n\
              ==4242== I refs: 12\n",
        );
        let reason = &said.failed["x/y"];
        assert!(
            !reason.contains('\u{1b}') && !reason.contains('\u{202e}'),
            "{reason:?}"
        );
        assert!(reason.contains("\\u{1b}"), "{reason:?}");
        assert_eq!(
            said.last_line.as_deref().map(|l| l.contains("I refs")),
            Some(false)
        );
    }
}
