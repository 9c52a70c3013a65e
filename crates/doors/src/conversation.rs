//! A child spoken with, line by line: the other build of a paired comparison
//! (`cargo bench -- --against REV`) serves its benchmarks to this process one request at a
//! time. It is started and kept as [`crate::child`] keeps a child that runs to its end:
//!
//! - a process group of its own, dying with this process (`PR_SET_PDEATHSIG`), and its
//!   whole group killed when the conversation is dropped, whatever state it is in;
//! - every answer awaited with a limit, past which the group is killed and the
//!   conversation is over ([`Refused::NoAnswer`]);
//! - each answer one line of at most a bound of bytes: a child that floods its output is
//!   refused at the bound, never buffered ([`Refused::Flooded`]);
//! - a child that ends is said with its status and the last bytes of its standard error
//!   ([`Refused::Ended`]);
//! - what the child must first say (`hello`) is checked before anything is asked: another
//!   program in its place is refused at once ([`Refused::Stranger`]).

use crate::child::{Output, Reader, kill_group, own_group, reader};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::Duration;

/// The last bytes of the child's standard error kept, for what it said of a failure.
const KEPT_STDERR: usize = 4096;

/// Why a conversation is over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// It could not be started, written to or read from.
    Io(String),
    /// It gave no answer within the limit; its group was killed.
    NoAnswer(Duration),
    /// It wrote a line longer than the bound.
    Flooded(usize),
    /// It ended: its status and the last of its standard error.
    Ended(String),
    /// Its first line was not the greeting asked for: what it said instead.
    Stranger(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Io(e) => write!(f, "{e}"),
            Refused::NoAnswer(limit) => write!(
                f,
                "it gave no answer within {:.1} s, and was stopped",
                limit.as_secs_f64()
            ),
            Refused::Flooded(bound) => {
                write!(
                    f,
                    "it wrote a line longer than {bound} bytes, and was stopped"
                )
            }
            Refused::Ended(how) => write!(f, "it ended ({how})"),
            Refused::Stranger(said) => write!(
                f,
                "it is not the program asked for: its first line was {said:?}"
            ),
        }
    }
}

/// A line the child wrote, or how its output ended.
enum Heard {
    Line(String),
    Flooded,
    Closed,
}

/// A child spoken with line by line, killed with its group when dropped.
pub struct Conversation {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Heard>,
    /// Its standard error's last bytes, read until it ends ([`crate::child`]'s reader).
    stderr: Option<Reader>,
    bound: usize,
    over: Option<Refused>,
}

impl Conversation {
    /// Starts `command` with its standard input and output piped, reading lines of at most
    /// `bound` bytes, and waits up to `limit` for its first line, which must be `hello`.
    pub fn start(
        command: &mut Command,
        hello: &str,
        bound: usize,
        limit: Duration,
    ) -> Result<Conversation, Refused> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        own_group(command);
        #[allow(clippy::disallowed_methods, reason = "this is the door for a child")]
        let mut child = command.spawn().map_err(|e| Refused::Io(e.to_string()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_group(&child);
            return Err(Refused::Io("its streams could not be piped".into()));
        };
        let lines = read_lines(stdout, bound);
        let stderr = Some(reader(stderr, Output::Tail(KEPT_STDERR)));
        let mut conversation = Conversation {
            child,
            stdin,
            lines,
            stderr,
            bound,
            over: None,
        };
        let first = conversation.hear(limit)?;
        if first != hello {
            let refused = Refused::Stranger(first.chars().take(200).collect());
            conversation.end(refused.clone());
            return Err(refused);
        }
        Ok(conversation)
    }

    /// Says `line` and waits up to `limit` for the answer, one line. Once refused, the
    /// conversation is over: the group is killed, and every later question is refused the
    /// same way.
    pub fn ask(&mut self, line: &str, limit: Duration) -> Result<String, Refused> {
        if let Some(over) = &self.over {
            return Err(over.clone());
        }
        let said = writeln!(self.stdin, "{line}").and_then(|()| self.stdin.flush());
        if let Err(e) = said {
            // A child that ended closes its input: say how it ended, where it did.
            let refused = self.ended().unwrap_or(Refused::Io(e.to_string()));
            self.end(refused.clone());
            return Err(refused);
        }
        self.hear(limit)
    }

    fn hear(&mut self, limit: Duration) -> Result<String, Refused> {
        let refused = match self.lines.recv_timeout(limit) {
            Ok(Heard::Line(line)) => return Ok(line),
            Ok(Heard::Flooded) => Refused::Flooded(self.bound),
            Ok(Heard::Closed) | Err(RecvTimeoutError::Disconnected) => {
                // Its output closed: it ended, or is ending.
                let deadline = std::time::Instant::now() + Duration::from_secs(1);
                loop {
                    if let Some(ended) = self.ended() {
                        break ended;
                    }
                    if std::time::Instant::now() > deadline {
                        break Refused::Ended("it closed its output".into());
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            Err(RecvTimeoutError::Timeout) => Refused::NoAnswer(limit),
        };
        self.end(refused.clone());
        Err(refused)
    }

    /// How the child ended, if it has.
    fn ended(&mut self) -> Option<Refused> {
        let status = self.child.try_wait().ok()??;
        let tail = self.stderr.take().map(|r| r.finish().0).unwrap_or_default();
        let said = String::from_utf8_lossy(&tail);
        let last = said
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Some(Refused::Ended(if last.is_empty() {
            status.to_string()
        } else {
            format!("{status}: {}", last.trim())
        }))
    }

    fn end(&mut self, refused: Refused) {
        kill_group(&self.child);
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.over = Some(refused);
    }
}

impl Drop for Conversation {
    fn drop(&mut self) {
        if self.over.is_none() {
            self.end(Refused::Io("the conversation was closed".into()));
        }
    }
}

/// A thread reading `stdout` a line at a time, each at most `bound` bytes; a longer line
/// ends the reading (the child is then stopped).
fn read_lines(stdout: impl Read + Send + 'static, bound: usize) -> Receiver<Heard> {
    let (send, receive) = sync_channel(1);
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            let read = (&mut reader)
                .take(bound as u64 + 1)
                .read_until(b'\n', &mut line);
            let heard = match read {
                Ok(0) | Err(_) => Heard::Closed,
                Ok(_) if line.last() != Some(&b'\n') && line.len() > bound => Heard::Flooded,
                Ok(_) if line.last() != Some(&b'\n') => Heard::Closed,
                Ok(_) => {
                    line.pop();
                    Heard::Line(String::from_utf8_lossy(&line).into_owned())
                }
            };
            let last = !matches!(heard, Heard::Line(_));
            if send.send(heard).is_err() || last {
                return;
            }
        }
    });
    receive
}

/// The hostile children a conversation must bound, each a shell script: the other build of
/// a paired comparison that hangs, floods its output, exits early, or is another program.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::Instant;

    const LIMIT: Duration = Duration::from_millis(500);
    const BOUND: usize = 4096;
    const HELLO: &str = "latlab-bench-serve 1";

    fn start(script: &str, pid_file: &std::path::Path) -> Result<Conversation, Refused> {
        Conversation::start(
            Command::new("sh")
                .args(["-c", script])
                .env("PIDFILE", pid_file),
            HELLO,
            BOUND,
            LIMIT,
        )
    }

    /// A hostile child: what it does, its script, and what it must come to.
    type Hostile = (&'static str, &'static str, fn(&Refused) -> bool);

    /// What each hostile child comes to, asked one question after its greeting; and
    /// nothing it started is left running.
    #[test]
    fn every_hostile_other_build_is_refused_in_bounds_and_leaves_nothing_running() {
        let catalogue: &[Hostile] = &[
            (
                "hangs before its greeting",
                "echo $$ > \"$PIDFILE\"; sleep 1000",
                |r| matches!(r, Refused::NoAnswer(_)),
            ),
            (
                "hangs on a question",
                "echo $$ > \"$PIDFILE\"; echo 'latlab-bench-serve 1'; sleep 1000",
                |r| matches!(r, Refused::NoAnswer(_)),
            ),
            (
                "floods its output",
                "echo 'latlab-bench-serve 1'; read q; yes | tr -d '\\n'",
                |r| matches!(r, Refused::Flooded(BOUND)),
            ),
            (
                "exits early",
                "echo 'latlab-bench-serve 1'; echo 'no such benchmark' >&2; exit 3",
                |r| matches!(r, Refused::Ended(how) if how.contains("3") && how.contains("no such benchmark")),
            ),
            (
                "is another program",
                "echo 'Usage: something else'; sleep 1000",
                |r| matches!(r, Refused::Stranger(said) if said.contains("Usage")),
            ),
            (
                "forks a child that goes on, and hangs",
                "(trap '' TERM; sleep 1000) & echo $! > \"$PIDFILE\"; echo 'latlab-bench-serve 1'; sleep 1000",
                |r| matches!(r, Refused::NoAnswer(_)),
            ),
        ];
        std::thread::scope(|scope| {
            for &(what, script, expect) in catalogue {
                scope.spawn(move || {
                    let dir = tempfile::tempdir().unwrap();
                    let pid_file = dir.path().join("pid");
                    let started = Instant::now();
                    let refused = match start(script, &pid_file) {
                        Err(refused) => refused,
                        Ok(mut talk) => {
                            let refused = talk.ask("list", LIMIT).unwrap_err();
                            // Refused once, refused for good.
                            assert_eq!(talk.ask("list", LIMIT).unwrap_err(), refused, "{what}");
                            refused
                        }
                    };
                    assert!(expect(&refused), "{what}: {refused:?}");
                    assert!(started.elapsed() < Duration::from_secs(4), "{what}");
                    assert!(!refused.to_string().is_empty());
                    if let Some(pid) = std::fs::read_to_string(&pid_file)
                        .ok()
                        .and_then(|text| text.trim().parse::<u32>().ok())
                    {
                        let deadline = Instant::now() + Duration::from_secs(2);
                        while crate::sys::process_exists(pid) && Instant::now() < deadline {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        let gone = !crate::sys::process_exists(pid)
                            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                                .is_ok_and(|stat| stat.contains(") Z "));
                        assert!(gone, "{what}: pid {pid} is still running");
                    }
                });
            }
        });
    }

    /// A child that answers is heard, question after question.
    #[test]
    fn a_child_that_answers_is_heard() {
        let dir = tempfile::tempdir().unwrap();
        let script = "echo 'latlab-bench-serve 1'; while read q; do echo \"you said $q\"; done";
        let mut talk = start(script, &dir.path().join("pid")).unwrap();
        assert_eq!(talk.ask("one", LIMIT).unwrap(), "you said one");
        assert_eq!(talk.ask("two", LIMIT).unwrap(), "you said two");
    }
}
