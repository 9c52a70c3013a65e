//! `proc.spawn`: creating a process and waiting for it to end.
//!
//! Each event is timed from before the call that creates the child until the parent knows it
//! has ended (`waitid`, before reaping):
//!
//! * `fork`: `fork`, the child calls `_exit(0)` at once, the parent waits. The cost grows
//!   with the parent's mapped memory (its page tables are copied), recorded as
//!   `parent_rss_bytes`.
//! * `fork-exec`: `fork`, the child `execve`s a tiny program (`true`, found on the `PATH`,
//!   dynamically linked like nearly every program), the parent waits for it to end: loading
//!   and linking included.
//! * `posix-spawn`: `posix_spawn` of the same program (glibc creates the child with
//!   `CLONE_VM | CLONE_VFORK`, copying no page tables), and the wait.
//!
//! Every child is watched by a sentinel that kills it after the probe's time limit, and
//! every child is reaped.

use crate::peer::{Child, Failure, Sentinel, time_limit, wait_exited};
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::parameters::Key;
use latlab_engine::{BenchResult, Clock};
use std::ffi::CString;
use std::path::PathBuf;

const PARENT_RSS_BYTES: Key = Key::new("parent_rss_bytes");
const PROGRAM_KEY: Key = Key::new("program");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "proc.spawn",
    method: "fork + _exit + wait, fork + exec of `true` + wait, posix_spawn of `true` + wait",
    timing: crate::Timing::Events,
    results: &[
        "proc.spawn/fork",
        "proc.spawn/fork-exec",
        "proc.spawn/posix-spawn",
    ],
    typical: Typical::quick_full(0.18, 0.43),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

/// The tiny program that the exec variants run.
const PROGRAM: &str = "true";

/// Where `name` is on the `PATH` (or in /bin, /usr/bin when there is no `PATH`).
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| rustix::fs::access(candidate, rustix::fs::Access::EXEC_OK).is_ok())
}

/// The resident set of this process, from /proc/self/statm.
fn resident_bytes() -> Option<u64> {
    let statm = latlab_doors::input::system_text("/proc/self/statm")?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * rustix::param::page_size() as u64)
}

/// How a child is made.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Creation {
    Fork,
    ForkExec,
    PosixSpawn,
}

/// A program and its argument and environment vectors, built before any fork.
struct Program {
    path: CString,
    argv: [*const libc::c_char; 2],
    envp: [*const libc::c_char; 1],
}

impl Program {
    fn new(path: &std::path::Path) -> Option<Program> {
        let path = CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
        let mut program = Program {
            path,
            argv: [std::ptr::null(); 2],
            envp: [std::ptr::null()],
        };
        program.argv[0] = program.path.as_ptr();
        Some(program)
    }
}

/// Creates one child the `creation` way; the caller reaps it.
fn start_child(creation: Creation, program: &Program) -> Result<libc::pid_t, String> {
    match creation {
        // SAFETY: the child does nothing but exit.
        Creation::Fork => unsafe { Child::fork(|| 0) }
            .map(Child::into_pid)
            .map_err(|e| format!("fork: {e}")),
        Creation::ForkExec => {
            let exec = || {
                // SAFETY: path, argv and envp are valid, null-terminated, built before the
                // fork.
                unsafe {
                    libc::execve(
                        program.path.as_ptr(),
                        program.argv.as_ptr(),
                        program.envp.as_ptr(),
                    )
                };
                127
            };
            // SAFETY: the child only calls execve (async-signal-safe) on data built before
            // the fork, and exits if it fails.
            unsafe { Child::fork(exec) }
        }
        .map(Child::into_pid)
        .map_err(|e| format!("fork: {e}")),
        #[cfg(target_os = "android")]
        Creation::PosixSpawn => unreachable!("run leaves posix_spawn out on Android"),
        #[cfg(not(target_os = "android"))]
        Creation::PosixSpawn => {
            let mut pid = 0;
            // SAFETY: as above; no file actions or attributes.
            let status = unsafe {
                libc::posix_spawn(
                    &mut pid,
                    program.path.as_ptr(),
                    std::ptr::null(),
                    std::ptr::null(),
                    program.argv.as_ptr().cast(),
                    program.envp.as_ptr().cast(),
                )
            };
            if status == 0 {
                Ok(pid)
            } else {
                Err(format!(
                    "posix_spawn: {}",
                    std::io::Error::from_raw_os_error(status)
                ))
            }
        }
    }
}

/// One event: create, wait for the end, then (untimed) reap. Returns the ticks.
fn one_event(
    clock: &Clock,
    creation: Creation,
    program: &Program,
    sentinel: &Sentinel,
) -> Result<u64, String> {
    let start = clock.start();
    let pid = start_child(creation, program)?;
    sentinel.watch(pid);
    let waited = wait_exited(pid);
    let end = clock.end();
    sentinel.clear();
    // Dropped on any early return: killed and reaped.
    let mut child = Child::adopt(pid);
    waited.map_err(|e| format!("waitid: {e}"))?;
    let exit = child.wait().map_err(|e| format!("waitpid: {e}"))?;
    match exit {
        crate::peer::Exit::Code(0) => Ok(end.wrapping_sub(start)),
        other => Err(format!("the child ended with {other:?}")),
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let path = find_program(PROGRAM).ok_or_else(|| {
        ProbeError::Failed(format!(
            "no `{PROGRAM}` program on the PATH: the exec variants need one"
        ))
    })?;
    let program = Program::new(&path)
        .ok_or_else(|| ProbeError::Failed(format!("{} is not a valid path", path.display())))?;
    let count = ctx.runner.config().samples;
    let limit = time_limit(ctx.runner);
    let rss = resident_bytes().unwrap_or(0);
    let variants = [
        (
            Creation::Fork,
            "fork",
            "fork, the child _exits at once, waitid".to_string(),
        ),
        (
            Creation::ForkExec,
            "fork-exec",
            format!("fork, the child execs {}, waitid", path.display()),
        ),
        (
            Creation::PosixSpawn,
            "posix-spawn",
            format!("posix_spawn of {}, waitid", path.display()),
        ),
    ];
    let mut results = Vec::new();
    // Android's C library gives this build no posix_spawn: that variant is left out there,
    // and the first result says so.
    let variants = variants.into_iter().filter(|(creation, ..)| {
        !(cfg!(target_os = "android") && *creation == Creation::PosixSpawn)
    });
    for (creation, label, method) in variants {
        let name = format!("proc.spawn/{label}");
        let failure = Failure::default();
        let sentinel = Sentinel::start(limit, &name, &failure)?;
        let result = failure.guard(ctx.runner, |runner| {
            Ok(runner.observe(&name, &method, count, |clock| {
                one_event(clock, creation, &program, &sentinel).unwrap_or_else(|e| {
                    failure.fail(format!("{name}: {e}"));
                    0
                })
            })?)
        });
        drop(sentinel);
        results.push(
            result?
                .with_parameter(PARENT_RSS_BYTES, rss)
                .with_parameter(PROGRAM_KEY, path.display().to_string()),
        );
    }
    if cfg!(target_os = "android")
        && let Some(first) = results.first_mut()
    {
        first.warnings.push(latlab_engine::Warning::part_skipped(
            "the posix_spawn variant",
            "posix_spawn is not in Android's C library to this build",
        ));
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loading a program costs more than a fork alone. The two are interleaved event by
    /// event, no test that holds the CPUs runs meanwhile, and the quickest of each is
    /// compared: the process's size sets the cost of a fork, and another test's buffers can
    /// change it from one event to the next (a fork's median once read 5.3 M ticks against
    /// 3.7 M for fork and exec, with the machine loaded besides, and 8.1 M against 3.4 M in
    /// a full `cargo test`), while the quickest of each is taken when nothing was mapped.
    /// Under qemu-user the costs are the emulator's: a fork copies its translated image, and
    /// the exec leaves it for a native program (exec read 676 k ticks against fork's 686 k).
    #[test]
    fn exec_costs_more_than_fork() {
        if crate::skipped_under_emulation() {
            return;
        }
        let _alone = crate::process_alone();
        let runner = latlab_engine::Runner::new(latlab_engine::Config {
            samples: 5,
            target_sample_time: std::time::Duration::from_micros(500),
            ..latlab_engine::Config::quick()
        });
        let path = find_program(PROGRAM).expect("a `true` program");
        let program = Program::new(&path).unwrap();
        let failure = Failure::default();
        let sentinel =
            Sentinel::start(std::time::Duration::from_secs(10), "test", &failure).unwrap();
        let (mut fork, mut exec) = (Vec::new(), Vec::new());
        for _ in 0..21 {
            let time = |creation| one_event(runner.clock(), creation, &program, &sentinel).unwrap();
            fork.push(time(Creation::Fork));
            exec.push(time(Creation::ForkExec));
        }
        fork.sort_unstable();
        exec.sort_unstable();
        assert!(
            exec[0] > fork[0],
            "fork-exec {:?} ticks, fork {:?} ticks",
            exec,
            fork
        );
        assert!(failure.reason().is_none());
    }
}
