//! Valgrind's callgrind run over this bench binary to count its benchmarks, and the dumps
//! it writes read back.

use super::child::parse_label;
use super::{BodyCounts, CHILD_VARIABLE, Counting};
use latlab_engine::model::Counted;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What to say when Valgrind is not there.
const INSTALL: &str = "install Valgrind (Debian and Ubuntu: apt-get install valgrind; Fedora: \
     dnf install valgrind), or count with the CPU's counter where it can be read (--via perf)";

/// Whether `valgrind` runs; `Err` is one line saying how to get it.
pub(crate) fn check_installed() -> Result<(), String> {
    match Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!(
            "--count: `valgrind --version` failed ({status}); {INSTALL}"
        )),
        Err(e) => Err(format!(
            "--count: valgrind cannot be run ({e}): it is not installed, or not on PATH; \
             {INSTALL}"
        )),
    }
}

/// A directory of this process's own, removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Result<ScratchDir, String> {
        let path = std::env::temp_dir().join(format!(
            "latlab-bench-count-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir(&path)
            .map_err(|e| format!("--count: cannot make {}: {e}", path.display()))?;
        Ok(ScratchDir(path))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Counts `names` (benchmarks of this binary) in a child of this binary under callgrind;
/// each benchmark's counts per call. `Err` is one line: the child failed, or counted none.
pub(crate) fn count(what: Counting, names: &[String]) -> Result<HashMap<String, Counted>, String> {
    let scratch = ScratchDir::new()?;
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
            scratch.0.join("callgrind.out").display()
        ));
    if what == Counting::Cache {
        command.arg("--cache-sim=yes");
    }
    command
        .arg(&exe)
        .args(["--bench", "--exact"])
        .args(names)
        .env(CHILD_VARIABLE, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let output = command
        .output()
        .map_err(|e| format!("--count: cannot start valgrind ({e}); {INSTALL}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        return Err(format!(
            "--count: the counting run under Valgrind failed ({}): {}",
            output.status,
            last.unwrap_or("it said nothing")
        ));
    }
    let dumps = read_dumps(&scratch.0)?;
    Ok(dumps
        .into_iter()
        .filter_map(|(name, counts)| Some((name, counts.per_call("callgrind")?)))
        .collect())
}

/// Every dump in `dir` labelled by the counting child, gathered by benchmark.
fn read_dumps(dir: &Path) -> Result<HashMap<String, BodyCounts>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("--count: cannot read {}: {e}", dir.display()))?;
    let mut bodies: HashMap<String, BodyCounts> = HashMap::new();
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path())
            .map_err(|e| format!("--count: cannot read {}: {e}", entry.path().display()))?;
        let Some(dump) = Dump::parse(&text) else {
            continue;
        };
        let Some((name, body, turns)) = parse_label(&dump.label) else {
            continue;
        };
        let counts = bodies.entry(name).or_insert_with(|| BodyCounts {
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
    /// Reads the header and totals of a callgrind output file; `None` for one that is not a
    /// dump a client request triggered.
    fn parse(text: &str) -> Option<Dump> {
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
                totals = numbers(rest);
            } else if let Some(rest) = line.strip_prefix("summary:") {
                summary = numbers(rest);
            }
        }
        let events = events?;
        let mut totals = totals.or(summary)?;
        // Events counted zero times may be left off the end of the line.
        totals.resize(events.len(), 0);
        Some(Dump {
            label: label?,
            events,
            totals,
        })
    }
}

fn numbers(text: &str) -> Option<Vec<u64>> {
    text.split_whitespace().map(|n| n.parse().ok()).collect()
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
        let dump = Dump::parse(DUMP).unwrap();
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
            Dump::parse(&short).unwrap().totals,
            [5, 6, 0, 0, 0, 0, 0, 0, 0]
        );
        let at_exit = DUMP.replace("Client Request: latlab-bench", "Program termination");
        assert!(Dump::parse(&at_exit).is_none());
        assert!(Dump::parse("not a dump").is_none());
    }
}
