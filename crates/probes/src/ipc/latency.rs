//! `ipc.latency`: request/reply latency against a deadline, modelled on Android's binder
//! latency test.
//!
//! `--pairs` client/server pairs run at once. Each pair has two arms, each a caller thread in
//! latlab and a forked server process joined by a Unix stream socket pair: the `other` arm's
//! caller and server run at normal priority (`SCHED_OTHER`), the `fifo` arm's at real-time
//! priority (`SCHED_FIFO` 10) when this process may use it, bounded by `RLIMIT_RTTIME`;
//! otherwise that arm is reported as skipped with the reason. A caller makes `--iterations`
//! round trips of an 8-byte request; the server answers with the CPU it ran on. Each round
//! trip is timed on its own and compared with `--deadline`.
//!
//! Per pair and arm: every round trip as a sample (so median and percentiles), and as
//! parameters the average, best, worst, p50/p90/p99/p99.9, the misses and the meet rate, a
//! histogram in power-of-two microsecond buckets, and how many round trips the server ran on
//! the caller's CPU (a wake-up that stays on one CPU is a switch; one that crosses CPUs waits
//! for the other CPU to wake). As everywhere in latlab, the first round trip is reported
//! apart as the cold one; the figures are over the others.
//!
//! Priority inheritance: a real-time thread blocks on a `PTHREAD_PRIO_INHERIT` mutex held by
//! a normal thread, which watches its own priority (`/proc/thread-self/stat`) while holding
//! it. PASS when the holder is boosted to real time, FAIL (a warning) when not; skipped with
//! the reason when real-time priority is not permitted.
//!
//! `--trace-on-miss`: at the first missed deadline, a marker is written to ftrace's
//! `trace_marker` and tracing is stopped (`tracing_on` = 0), so the trace ends at the miss;
//! when tracefs cannot be written, the results say why.

use crate::distribution::with_distribution;
use crate::peer::{
    Child, FIFO_PRIORITY, Failure, Watchdog, enter_fifo, leave_realtime, time_limit,
};
use crate::proc::read_byte;
use crate::thread::semaphore::Semaphore;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite};
use latlab_engine::names::key;
use latlab_engine::{BenchResult, Clock, Warning};
use std::fmt::Write as _;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "ipc.latency",
    method: "request/reply round trips per client/server pair, normal and SCHED_FIFO, against a deadline",
    run,
};

/// The default deadline, as in the binder latency test.
pub(crate) const DEFAULT_DEADLINE: Duration = Duration::from_micros(2500);
/// Round trips per pair and arm by default.
fn default_iterations(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 1000,
        Suite::Full => 10_000,
    }
}
/// How many times the priority-inheritance check is made.
const PI_CHECKS: usize = 5;

/// A scheduling class for one arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arm {
    Other,
    Fifo,
}

impl Arm {
    fn label(self) -> &'static str {
        match self {
            Arm::Other => "other",
            Arm::Fifo => "fifo",
        }
    }
}

/// Moves the calling thread into `arm`'s class. Async-signal-safe (forked servers call it).
fn enter(arm: Arm) -> Result<(), i32> {
    match arm {
        Arm::Other => {
            leave_realtime();
            Ok(())
        }
        Arm::Fifo => enter_fifo(FIFO_PRIORITY),
    }
}

/// Whether this process may run threads at SCHED_FIFO: `Err` with the reason if not.
fn realtime_permitted() -> Result<(), String> {
    crate::sched::Class::Fifo.available()
}

/// The CPU the caller runs on, or -1.
fn current_cpu() -> i32 {
    // SAFETY: sched_getcpu has no preconditions.
    unsafe { libc::sched_getcpu() }
}

/// One arm of one pair: the server process and the caller's end of the socket.
struct Server {
    child: Child,
    socket: OwnedFd,
}

fn start_server(arm: Arm) -> Result<Server, String> {
    let (caller, server) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let (caller, server) = (OwnedFd::from(caller), OwnedFd::from(server));
    let (server_fd, caller_fd) = (server.as_raw_fd(), caller.as_raw_fd());
    let child = Child::fork(move || {
        // SAFETY: closing the caller's end in the child.
        unsafe { libc::close(caller_fd) };
        if enter(arm).is_err() {
            return 2;
        }
        let mut request = [0u8; 8];
        loop {
            for byte in &mut request {
                match read_byte(server_fd) {
                    Some(b) => *byte = b,
                    None => return 0,
                }
            }
            let cpu = current_cpu().to_le_bytes();
            // SAFETY: a 4-byte reply from a valid buffer.
            if unsafe { libc::write(server_fd, cpu.as_ptr().cast(), 4) } != 4 {
                return 0;
            }
        }
    })
    .map_err(|e| format!("fork: {e}"))?;
    drop(server);
    Ok(Server {
        child,
        socket: caller,
    })
}

/// What a caller saw: each round trip's nanoseconds, and how many ran on its own CPU.
struct Trips {
    samples_ns: Vec<f64>,
    same_cpu: usize,
}

/// The optional ftrace hook: descriptors opened before the measurement.
struct Tracer {
    marker: std::fs::File,
    switch: std::fs::File,
    fired: AtomicBool,
}

impl Tracer {
    /// Opens tracefs for writing, or says why it cannot.
    fn open() -> Result<Tracer, String> {
        let roots = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
        let mut why = String::new();
        for root in roots {
            let open = |name: &str| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(format!("{root}/{name}"))
            };
            match (open("trace_marker"), open("tracing_on")) {
                (Ok(marker), Ok(switch)) => {
                    return Ok(Tracer {
                        marker,
                        switch,
                        fired: AtomicBool::new(false),
                    });
                }
                (Err(e), _) | (_, Err(e)) => {
                    let _ = write!(why, "{root}: {e}; ");
                }
            }
        }
        Err(format!(
            "tracefs cannot be written here ({}): mount it and run as root",
            why.trim_end_matches("; ")
        ))
    }

    /// At the first miss only: marks the trace and stops it.
    fn miss(&self, what: &str) -> bool {
        use std::io::Write;
        if self.fired.swap(true, Ordering::AcqRel) {
            return false;
        }
        let _ = (&self.marker).write_all(format!("latlab: deadline missed: {what}\n").as_bytes());
        let _ = (&self.switch).write_all(b"0");
        true
    }
}

/// Why a caller stopped early.
enum Stop {
    Interrupted,
    Failed(String),
}

/// What every caller shares.
struct Shared<'a> {
    clock: &'a Clock,
    deadline_ns: f64,
    iterations: usize,
    tracer: Option<&'a Tracer>,
    /// Where the trace was stopped, if it was.
    stopped_at: std::sync::Mutex<Option<String>>,
    cancel: &'a AtomicBool,
}

/// Makes the round trips of one arm, from the calling thread.
fn call(socket: RawFd, shared: &Shared, what: &str) -> Result<Trips, Stop> {
    let clock = shared.clock;
    let mut samples_ns = Vec::with_capacity(shared.iterations);
    let mut same_cpu = 0;
    let gone = || Stop::Failed(format!("{what}: the server stopped answering"));
    for i in 0..shared.iterations {
        if shared.cancel.load(Ordering::Relaxed) {
            return Err(Stop::Interrupted);
        }
        let request = (i as u64).to_le_bytes();
        let here = current_cpu();
        let start = clock.start();
        // SAFETY: an 8-byte request from a valid buffer.
        if unsafe { libc::write(socket, request.as_ptr().cast(), 8) } != 8 {
            return Err(gone());
        }
        let mut reply = [0u8; 4];
        for byte in &mut reply {
            *byte = read_byte(socket).ok_or_else(gone)?;
        }
        let ns = clock.ticks_to_ns(clock.end().wrapping_sub(start));
        if i32::from_le_bytes(reply) == here {
            same_cpu += 1;
        }
        if ns > shared.deadline_ns {
            if let Some(tracer) = shared.tracer {
                let at = format!("{what}, round trip {i}, {:.1} µs", ns / 1e3);
                if tracer.miss(&at) {
                    *shared.stopped_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
                }
            }
        }
        samples_ns.push(ns);
    }
    Ok(Trips {
        samples_ns,
        same_cpu,
    })
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let options = ctx.ipc;
    let iterations = options
        .iterations
        .unwrap_or_else(|| default_iterations(ctx.suite));
    let realtime = realtime_permitted();
    let arms: &[Arm] = if realtime.is_ok() {
        &[Arm::Other, Arm::Fifo]
    } else {
        &[Arm::Other]
    };
    let tracer = options.trace_on_miss.then(Tracer::open);
    let mut servers = Vec::new();
    for pair in 0..options.pairs {
        for &arm in arms {
            let server = start_server(arm).map_err(ProbeError::Failed)?;
            servers.push((pair, arm, server));
        }
    }
    let failure = Failure::default();
    let limit = time_limit(ctx.runner) + options.deadline * 2 * iterations as u32;
    let watchdog = Watchdog::arm(
        servers.iter().map(|(_, _, s)| s.child.pid()).collect(),
        Vec::new(),
        limit,
        "ipc.latency",
        &failure,
    );
    let cancel = Arc::clone(&ctx.runner.config().cancel);
    let shared = Shared {
        clock: ctx.runner.clock(),
        deadline_ns: options.deadline.as_nanos() as f64,
        iterations,
        tracer: tracer.as_ref().and_then(|t| t.as_ref().ok()),
        stopped_at: std::sync::Mutex::new(None),
        cancel: &cancel,
    };
    let outcomes: Vec<Result<Trips, Stop>> = std::thread::scope(|scope| {
        let callers: Vec<_> = servers
            .iter()
            .map(|(pair, arm, server)| {
                let (shared, socket) = (&shared, server.socket.as_raw_fd());
                let what = format!("pair {pair}, {} arm", arm.label());
                scope.spawn(move || {
                    enter(*arm).map_err(|errno| {
                        Stop::Failed(format!(
                            "{what}: could not enter its scheduling class: {}",
                            std::io::Error::from_raw_os_error(errno)
                        ))
                    })?;
                    call(socket, shared, &what)
                })
            })
            .collect();
        callers
            .into_iter()
            .map(|caller| {
                caller
                    .join()
                    .unwrap_or_else(|_| Err(Stop::Failed("a caller thread panicked".into())))
            })
            .collect()
    });
    drop(watchdog);
    drop(servers);
    let stopped_at = shared
        .stopped_at
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let mut all_trips = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(trips) => all_trips.push(trips),
            Err(Stop::Interrupted) => {
                return Err(ProbeError::Interrupted(latlab_engine::Interrupted));
            }
            Err(Stop::Failed(reason)) => {
                return Err(ProbeError::Failed(failure.reason().unwrap_or(reason)));
            }
        }
    }
    let labels = (0..options.pairs).flat_map(|pair| arms.iter().map(move |&arm| (pair, arm)));
    let mut results = Vec::new();
    for ((pair, arm), trips) in labels.zip(all_trips) {
        let name = format!(
            "{}{pair}/{}",
            latlab_engine::names::result::IPC_LATENCY_PAIR_PREFIX,
            arm.label()
        );
        let method = format!(
            "8-byte request, 4-byte reply over a Unix stream socket; caller and server at {}",
            match arm {
                Arm::Other => "SCHED_OTHER".to_string(),
                Arm::Fifo => format!("SCHED_FIFO {FIFO_PRIORITY}"),
            }
        );
        let same_cpu = trips.same_cpu;
        if let Some(result) = ctx
            .runner
            .record_observations(&name, &method, trips.samples_ns)
        {
            results.push(describe(result, options.deadline, same_cpu, iterations));
        }
    }
    let first = results
        .first_mut()
        .ok_or_else(|| ProbeError::Failed("no round trip was recorded".into()))?;
    match &tracer {
        Some(Ok(_)) => {
            let said = stopped_at.unwrap_or_else(|| "armed; no deadline was missed".into());
            *first = first.clone().with_parameter("trace_on_miss", said);
        }
        Some(Err(reason)) => first
            .warnings
            .push(Warning::part_skipped("--trace-on-miss", reason)),
        None => {}
    }
    match realtime {
        Err(reason) => {
            first
                .warnings
                .push(Warning::part_skipped("the SCHED_FIFO arm", &reason));
            first.warnings.push(Warning::part_skipped(
                "the priority-inheritance check",
                &reason,
            ));
        }
        Ok(()) => results.push(priority_inheritance(ctx)?),
    }
    Ok(results)
}

/// The binder test's figures for one arm, as parameters.
fn describe(
    result: BenchResult,
    deadline: Duration,
    same_cpu: usize,
    iterations: usize,
) -> BenchResult {
    let deadline_ns = deadline.as_nanos() as f64;
    let n = result.samples_ns.len().max(1) as f64;
    let misses = result
        .samples_ns
        .iter()
        .filter(|&&ns| ns > deadline_ns)
        .count();
    with_distribution(result)
        .with_parameter("iterations", iterations)
        .with_parameter("deadline_us", deadline_ns / 1e3)
        .with_parameter(key::MISSES, misses)
        .with_parameter("meet_rate", 1.0 - misses as f64 / n)
        .with_parameter("same_cpu_round_trips", same_cpu)
        .with_parameter("same_cpu_share", same_cpu as f64 / iterations.max(1) as f64)
}

/// A default-protocol-free mutex with priority inheritance, pinned in a box.
struct PiMutex(Box<std::cell::UnsafeCell<libc::pthread_mutex_t>>);

// SAFETY: a pthread mutex is made to be shared between threads; it never moves (boxed).
unsafe impl Sync for PiMutex {}

impl PiMutex {
    fn new() -> Result<PiMutex, String> {
        let mutex = PiMutex(Box::new(std::cell::UnsafeCell::new(
            libc::PTHREAD_MUTEX_INITIALIZER,
        )));
        // SAFETY: the attribute object is initialised before use and destroyed after; the
        // mutex is initialised in place in its box.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            let set = libc::pthread_mutexattr_setprotocol(&mut attr, libc::PTHREAD_PRIO_INHERIT);
            let init = libc::pthread_mutex_init(mutex.0.get(), &attr);
            libc::pthread_mutexattr_destroy(&mut attr);
            if set != 0 || init != 0 {
                return Err("PTHREAD_PRIO_INHERIT mutexes are not supported here".into());
            }
        }
        Ok(mutex)
    }

    fn lock(&self) {
        // SAFETY: an initialised mutex.
        unsafe { libc::pthread_mutex_lock(self.0.get()) };
    }

    fn unlock(&self) {
        // SAFETY: locked by the calling thread.
        unsafe { libc::pthread_mutex_unlock(self.0.get()) };
    }
}

impl Drop for PiMutex {
    fn drop(&mut self) {
        // SAFETY: nobody holds it any more.
        unsafe { libc::pthread_mutex_destroy(self.0.get()) };
    }
}

/// The calling thread's kernel priority (field 18 of /proc/thread-self/stat): 20 for a
/// normal thread at nice 0, negative for a real-time one.
fn own_priority() -> Option<i64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(15)?.parse().ok()
}

/// One check: (holder's priority before, its highest priority while the waiter blocked,
/// the waiter's wait in ns).
fn one_inheritance_check(clock: &Clock) -> Result<(i64, i64, f64), String> {
    let mutex = PiMutex::new()?;
    let locked = Semaphore::default();
    let limit = Duration::from_secs(2);
    std::thread::scope(|scope| {
        let holder = scope.spawn(|| {
            leave_realtime();
            mutex.lock();
            let before = own_priority();
            locked.post();
            // Watch the priority until it is boosted or a second has passed.
            let started = std::time::Instant::now();
            let mut highest = before;
            while started.elapsed() < Duration::from_secs(1) {
                let now = own_priority();
                if now < highest {
                    highest = now;
                }
                if highest.is_some_and(|p| p < 0) {
                    break;
                }
                std::thread::sleep(Duration::from_micros(100));
            }
            mutex.unlock();
            (before, highest)
        });
        let waiter = scope.spawn(|| {
            if locked.wait(limit).is_err() {
                return Err("the holder never took the mutex".to_string());
            }
            enter(Arm::Fifo).map_err(|errno| {
                format!(
                    "the waiter could not become real-time: {}",
                    std::io::Error::from_raw_os_error(errno)
                )
            })?;
            let start = clock.start();
            mutex.lock();
            let waited = clock.ticks_to_ns(clock.end().wrapping_sub(start));
            mutex.unlock();
            leave_realtime();
            Ok(waited)
        });
        let (before, highest) = holder
            .join()
            .map_err(|_| "the holder panicked".to_string())?;
        let waited = waiter
            .join()
            .map_err(|_| "the waiter panicked".to_string())??;
        match (before, highest) {
            (Some(before), Some(highest)) => Ok((before, highest, waited)),
            _ => Err("/proc/thread-self/stat could not be read".into()),
        }
    })
}

/// The priority-inheritance check, [`PI_CHECKS`] times; its samples are the real-time
/// waiter's waits for the mutex.
fn priority_inheritance(ctx: &mut ProbeContext) -> Result<BenchResult, ProbeError> {
    let mut waits = Vec::new();
    let mut boosted = 0;
    let mut seen = Vec::new();
    for _ in 0..PI_CHECKS {
        let (before, highest, waited) =
            one_inheritance_check(ctx.runner.clock()).map_err(ProbeError::Failed)?;
        if highest < 0 {
            boosted += 1;
        }
        seen.push(format!("{before}→{highest}"));
        waits.push(waited);
    }
    let name = "ipc.latency/priority-inheritance";
    let mut result = ctx
        .runner
        .record_observations(
            name,
            "a SCHED_FIFO thread waits on a PTHREAD_PRIO_INHERIT mutex held by a SCHED_OTHER thread: its wait",
            waits,
        )
        .ok_or_else(|| ProbeError::Failed("no check was recorded".into()))?;
    let pass = boosted == PI_CHECKS;
    result = result
        .with_parameter("verdict", if pass { "PASS" } else { "FAIL" })
        .with_parameter("holder_priority_before_and_while_blocked", seen.join(" "))
        .with_parameter("boosted", format!("{boosted} of {PI_CHECKS}"));
    if !pass {
        result.warnings.push(Warning::check_failed(
            "priority inheritance",
            &format!(
                "the holder was boosted to real time in {boosted} of {PI_CHECKS} checks (kernel priority before→while blocked: {})",
                seen.join(" ")
            ),
        ));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_and_the_meet_rate_follow_the_deadline() {
        let samples = vec![100.0, 200.0, 5_000.0, 300.0];
        let result = BenchResult::derived("t", "t", samples, Vec::new(), Vec::new()).unwrap();
        let result = describe(result, Duration::from_micros(1), 2, 4);
        assert_eq!(result.parameters["misses"], 1u64.into());
        assert_eq!(result.parameters["meet_rate"], 0.75.into());
        assert_eq!(result.parameters["worst_us"], 5.0.into());
        assert_eq!(result.parameters["same_cpu_share"], 0.5.into());
    }

    /// Each arm makes its round trips; an impossible deadline is missed; where real time is
    /// permitted, its arm runs and the holder of a priority-inheritance mutex is boosted.
    #[test]
    fn arms_run_deadlines_are_judged_and_inheritance_boosts() {
        let mut runner = crate::test_runner(5, Duration::from_micros(200));
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.ipc = crate::IpcOptions {
            pairs: 1,
            iterations: Some(50),
            deadline: Duration::from_nanos(1),
            trace_on_miss: false,
        };
        let results = run(&mut ctx).unwrap();
        let other = results
            .iter()
            .find(|r| r.name == "ipc.latency/pair0/other")
            .unwrap();
        assert_eq!(other.parameters["iterations"], 50u64.into());
        assert_eq!(other.parameters["misses"], 49u64.into());
        let fifo = results.iter().find(|r| r.name == "ipc.latency/pair0/fifo");
        match realtime_permitted() {
            Ok(()) => {
                assert!(fifo.is_some());
                let check = results
                    .iter()
                    .find(|r| r.name == "ipc.latency/priority-inheritance")
                    .unwrap();
                assert_eq!(
                    check.parameters["verdict"],
                    "PASS".into(),
                    "{:?}",
                    check.parameters
                );
            }
            Err(_) => {
                assert!(fifo.is_none());
                assert!(other.warnings.iter().any(|w| matches!(
                    w,
                    Warning::PartSkipped { part, .. } if part == "the SCHED_FIFO arm"
                )));
            }
        }
    }
}
