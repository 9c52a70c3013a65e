//! The two builds of a paired comparison, each a child serving its benchmarks
//! ([`super::serve`], [`super::wire`]), spoken with through the door for a child that answers
//! ([`latlab_doors::conversation`]).

use super::wire::{HELLO, SERVE_VARIABLE, hex, unhex};
use latlab_doors::conversation::{Conversation, Refused};
use latlab_doors::rules::Rule;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The longest line a side may answer: its list of benchmarks, in hexadecimal.
const MAX_ANSWER: usize = 4 << 20;
/// How long a side may take to greet, to list, to begin or end a benchmark.
const ANSWER_LIMIT: Duration = Duration::from_secs(60);
/// How long a slice may take beyond the time it was calibrated to, before its side is
/// stopped as hung.
const SLICE_GRACE: Duration = Duration::from_secs(10);

/// One build, serving.
pub(crate) struct Side {
    talk: Conversation,
    /// Its benchmarks' names, in its order.
    pub names: Vec<String>,
    /// How it is named in messages: `this build`, `main (3f2a9c1)`.
    pub label: String,
}

/// A benchmark a side could not serve.
pub(crate) enum NotServed {
    /// It failed or cannot be paired (a benchmark of several threads): why.
    Benchmark(String),
    /// The side itself stopped answering (it hung, flooded, ended or said what the
    /// protocol does not): its processes are of no more use.
    Side(String),
}

impl Side {
    /// Starts `executable` serving, and reads its list of benchmarks.
    pub fn start(executable: &Path, label: &str) -> Result<Side, String> {
        let said = |why: Refused| format!("{label} ({}): {why}", executable.display());
        let talk = Conversation::start(
            Command::new(executable)
                .arg("--bench")
                .env(SERVE_VARIABLE, "1"),
            HELLO,
            MAX_ANSWER,
            ANSWER_LIMIT,
        )
        .map_err(|why| match why {
            Refused::Stranger(_) | Refused::Ended(_) => format!(
                "{}; is it a bench executable built with latlab-bench, of a version that \
                 serves paired comparisons?",
                said(why)
            ),
            why => said(why),
        })?;
        let mut side = Side {
            talk,
            names: Vec::new(),
            label: label.to_string(),
        };
        let listed = side.ask("list", ANSWER_LIMIT).map_err(|why| match why {
            NotServed::Benchmark(why) | NotServed::Side(why) => why,
        })?;
        let names = listed.strip_prefix("benchmarks").map(|rest| {
            rest.split_whitespace()
                .map(unhex)
                .collect::<Option<Vec<_>>>()
        });
        side.names = names.flatten().ok_or_else(|| {
            format!("{label}: its list of benchmarks was not understood: {listed:.80}")
        })?;
        Ok(side)
    }

    fn ask(&mut self, line: &str, limit: Duration) -> Result<String, NotServed> {
        let answer = (self.talk.ask(line, limit))
            .map_err(|why| NotServed::Side(format!("{}: {why}", self.label)))?;
        match answer.split_once(' ') {
            Some(("failed" | "unsupported", why)) => Err(NotServed::Benchmark(
                unhex(why).unwrap_or_else(|| why.to_string()),
            )),
            _ => Ok(answer),
        }
    }

    /// Makes `name` the benchmark its slices time.
    pub fn begin(&mut self, name: &str) -> Result<(), NotServed> {
        self.expect(&format!("bench {}", hex(name)), "ready", ANSWER_LIMIT)
            .map(|_| ())
    }

    /// The turns of one call each that make a slice of `ns` nanoseconds.
    pub fn calibrate(&mut self, ns: u64) -> Result<u64, NotServed> {
        let turns = self.expect(
            &format!("calibrate {ns}"),
            "turns",
            ANSWER_LIMIT + SLICE_GRACE,
        )?;
        self.number("turns", &turns, Rule::Count)
            .map(|turns| turns as u64)
    }

    /// Times `turns` turns of the benchmark; nanoseconds. `expected` is about how long
    /// that takes.
    pub fn slice(&mut self, turns: u64, expected: Duration) -> Result<f64, NotServed> {
        let ns = self.expect(&format!("slice {turns}"), "ns", 10 * expected + SLICE_GRACE)?;
        self.number("a slice's ns", &ns, Rule::PositiveTime)
    }

    /// `text`, a number the other side said, held to `rule` (the rules every number latlab
    /// reads obeys): not a number, NaN, 2^64 - 1 turns or a slice of a year end the side.
    fn number(&self, field: &str, text: &str, rule: Rule) -> Result<f64, NotServed> {
        let said = |why: String| NotServed::Side(format!("{}: {why}", self.label));
        let value = (text.trim().parse::<f64>())
            .map_err(|_| said(format!("{field} {text:.40?} is not a number")))?;
        latlab_doors::rules::check(field, value, rule).map_err(said)
    }

    /// Leaves the benchmark.
    pub fn end(&mut self) -> Result<(), NotServed> {
        self.expect("end", "done", ANSWER_LIMIT).map(|_| ())
    }

    /// Asks `line`, whose answer begins with `word`; what follows it.
    fn expect(&mut self, line: &str, word: &str, limit: Duration) -> Result<String, NotServed> {
        let answer = self.ask(line, limit)?;
        let (said, rest) = answer.split_once(' ').unwrap_or((&answer, ""));
        if said != word {
            return Err(NotServed::Side(format!(
                "{}: answered {answer:.80?} to {line:.40?}",
                self.label
            )));
        }
        Ok(rest.to_string())
    }
}

/// The numbers another build says, against the rules: each hostile answer ends its side in
/// one line, never a ratio made of it.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A side that greets, lists one benchmark, begins it, and answers every question after
    /// with `answer`.
    fn side(dir: &std::path::Path, answer: &str) -> Side {
        let script = dir.join("side");
        let text = format!(
            "#!/bin/sh\necho '{HELLO}'\nread q; echo 'benchmarks {}'\nread q; echo ready\n\
             while read q; do echo '{answer}'; done\n",
            hex("sum")
        );
        std::fs::write(&script, text).unwrap();
        let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&script, executable).unwrap();
        let mut side = Side::start(&script, "the other build").unwrap();
        assert_eq!(side.names, ["sum"]);
        assert!(side.begin("sum").is_ok());
        side
    }

    #[test]
    fn nan_huge_and_garbage_numbers_end_the_side_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        for answer in [
            "ns NaN",
            "ns inf",
            "ns -5",
            "ns 0",
            "ns 1e300",
            "ns 1e-320",
            "ns x",
        ] {
            let refused = side(dir.path(), answer).slice(1000, Duration::from_millis(5));
            let Err(NotServed::Side(why)) = refused else {
                panic!("{answer}: {:?}", refused.ok());
            };
            assert!(
                why.starts_with("the other build: a slice's ns"),
                "{answer}: {why}"
            );
            assert_eq!(why.lines().count(), 1);
        }
        for answer in [
            "turns 18446744073709551615",
            "turns 0",
            "turns 1.5",
            "turns -1",
        ] {
            let refused = side(dir.path(), answer).calibrate(5_000_000);
            assert!(
                matches!(refused, Err(NotServed::Side(_))),
                "{answer}: {:?}",
                refused.ok()
            );
        }
        assert_eq!(
            side(dir.path(), "turns 4096").calibrate(5_000_000).ok(),
            Some(4096)
        );
        let ns = side(dir.path(), "ns 5000000").slice(4096, Duration::from_millis(5));
        assert_eq!(ns.ok(), Some(5e6));
    }
}
