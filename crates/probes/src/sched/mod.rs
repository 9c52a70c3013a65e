//! The scheduling family: what priority changes, alone and under contention.
//!
//! Shared here: the scheduling classes a thread can put itself in ([`Class`]), the hogs
//! that compete with it ([`Hogs`]), and the conditions they make ([`Condition`]).

pub(crate) mod priority;
pub(crate) mod wakeup;

use crate::ProbeError;
use crate::helper::{spawn_in, spawn_named, spawn_pinned};
use crate::peer::{FIFO_PRIORITY, leave_realtime};
use latlab_engine::isolation::enter_realtime;
use latlab_engine::{BenchResult, Host, SharedHost, Warning};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A scheduling class for the measured thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// SCHED_OTHER at nice 0.
    Nice0,
    /// SCHED_OTHER at nice 19.
    Nice19,
    SchedBatch,
    SchedIdle,
    /// SCHED_OTHER at nice 0 with its utilisation clamped to a quarter (uclamp max 256 of
    /// 1024), a hint for frequency selection and placement on asymmetric machines.
    UclampMax,
    /// SCHED_FIFO at [`FIFO_PRIORITY`], under RLIMIT_RTTIME (wake-up latency only).
    Fifo,
}

impl Class {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Class::Nice0 => "nice0",
            Class::Nice19 => "nice19",
            Class::SchedBatch => "batch",
            Class::SchedIdle => "idle",
            Class::UclampMax => "uclamp-max-25",
            Class::Fifo => "fifo",
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Class::Nice0 => "SCHED_OTHER, nice 0",
            Class::Nice19 => "SCHED_OTHER, nice 19",
            Class::SchedBatch => "SCHED_BATCH",
            Class::SchedIdle => "SCHED_IDLE",
            Class::UclampMax => "SCHED_OTHER, nice 0, uclamp max 256/1024",
            Class::Fifo => "SCHED_FIFO 10",
        }
    }

    /// Puts the calling thread in this class.
    pub(crate) fn enter(self) -> Result<(), String> {
        leave_realtime();
        let policy = |policy: libc::c_int, priority: libc::c_int| {
            let param = libc::sched_param {
                sched_priority: priority,
            };
            // SAFETY: a valid sched_param for the calling thread.
            if unsafe { libc::sched_setscheduler(0, policy, &param) } == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        };
        match self {
            Class::Nice0 => Ok(()),
            Class::Nice19 => {
                // setpriority on one's own thread id sets that thread's nice value (Linux),
                // and raising it needs no privilege.
                let thread = rustix::thread::gettid();
                rustix::process::setpriority_process(Some(thread), 19)
                    .map_err(|e| format!("nice 19: {}", io::Error::from(e)))
            }
            Class::SchedBatch => {
                policy(libc::SCHED_BATCH, 0).map_err(|e| format!("SCHED_BATCH: {e}"))
            }
            Class::SchedIdle => policy(libc::SCHED_IDLE, 0).map_err(|e| format!("SCHED_IDLE: {e}")),
            Class::UclampMax => clamp_utilisation(256),
            Class::Fifo => enter_realtime(FIFO_PRIORITY),
        }
    }

    /// Whether a thread may enter this class here: `Err` with the reason if not.
    pub(crate) fn available(self) -> Result<(), String> {
        self.tried()?
    }

    /// Whether a new thread could enter this class (the inner result), tried on one; the
    /// outer error when no thread could be started to try (`ulimit -u`).
    fn tried(self) -> Result<Result<(), String>, String> {
        Ok(spawn_named("latlab-class-check", move || self.enter())?
            .join()
            .unwrap_or_else(|_| Err("the check thread failed".into())))
    }
}

/// The classes of `wanted` that a thread may enter here, and for the others why not.
pub(crate) struct Classes {
    pub(crate) available: Vec<Class>,
    skipped: Vec<(&'static str, String)>,
}

impl Classes {
    /// Tries each class of `wanted` on a thread of its own; fails, rather than calling every
    /// class unavailable, when no thread can be started to try.
    pub(crate) fn check(wanted: &[Class]) -> Result<Classes, ProbeError> {
        let mut classes = Classes {
            available: Vec::new(),
            skipped: Vec::new(),
        };
        for &class in wanted {
            match class.tried().map_err(ProbeError::Failed)? {
                Ok(()) => classes.available.push(class),
                Err(reason) => classes.skipped.push((class.label(), reason)),
            }
        }
        Ok(classes)
    }

    /// Says on the first result which classes were skipped, and why.
    pub(crate) fn note_skipped(self, results: &mut [BenchResult]) {
        if let Some(first) = results.first_mut() {
            for (label, reason) in self.skipped {
                first.warnings.push(Warning::part_skipped(
                    &format!("the {label} class"),
                    &reason,
                ));
            }
        }
    }
}

/// Stops a loop of measurements when the run is interrupted (Ctrl-C).
pub(crate) fn check_cancel(cancel: &AtomicBool) -> Result<(), ProbeError> {
    if cancel.load(Ordering::Relaxed) {
        Err(ProbeError::Interrupted(latlab_engine::Interrupted))
    } else {
        Ok(())
    }
}

/// The kernel's `struct sched_attr` (size 56, as of Linux 5.3).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

/// Clamps the calling thread's utilisation to `max` of 1024 with `sched_setattr`, keeping its
/// policy and parameters.
fn clamp_utilisation(max: u32) -> Result<(), String> {
    const SCHED_FLAG_KEEP_POLICY: u64 = 0x08;
    const SCHED_FLAG_KEEP_PARAMS: u64 = 0x10;
    const SCHED_FLAG_UTIL_CLAMP_MAX: u64 = 0x40;
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_flags: SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_KEEP_PARAMS | SCHED_FLAG_UTIL_CLAMP_MAX,
        sched_util_max: max,
        ..SchedAttr::default()
    };
    // SAFETY: a valid sched_attr of the size it declares, for the calling thread (pid 0).
    if unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) } == 0 {
        Ok(())
    } else {
        Err(format!(
            "uclamp via sched_setattr is not available here ({}): the kernel needs \
             CONFIG_UCLAMP_TASK",
            io::Error::last_os_error()
        ))
    }
}

/// What competes with the measured thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Condition {
    /// Nothing: the thread has its CPU to itself.
    Alone,
    /// A nice-0 thread spinning on the same CPU.
    Contended,
    /// A nice-0 thread spinning on every online CPU; the measured thread may run anywhere.
    Loaded,
}

impl Condition {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Condition::Alone => "alone",
            Condition::Contended => "contended",
            Condition::Loaded => "loaded",
        }
    }

    pub(crate) fn describe(self, cpu: usize) -> String {
        match self {
            Condition::Alone => format!("alone on CPU {cpu}"),
            Condition::Contended => format!("against a nice-0 spinning thread on CPU {cpu}"),
            Condition::Loaded => {
                "against a nice-0 spinning thread on every CPU, free to move".into()
            }
        }
    }

    /// The CPUs the measured thread may use under this condition.
    pub(crate) fn cpus(self, host: &dyn Host, cpu: usize) -> Vec<usize> {
        match self {
            Condition::Alone | Condition::Contended => vec![cpu],
            Condition::Loaded => host.every_cpu(),
        }
    }

    /// Starts the hogs this condition needs.
    pub(crate) fn hogs(self, host: &SharedHost, cpu: usize, limit: Duration) -> Hogs {
        match self {
            Condition::Alone => Hogs::start(host, &[], limit),
            Condition::Contended => Hogs::start(host, &[cpu], limit),
            Condition::Loaded => Hogs::start(host, &host.every_cpu(), limit),
        }
    }
}

/// Threads spinning at nice 0, one pinned to each CPU asked for, until dropped or `limit`.
pub(crate) struct Hogs {
    stop: Arc<AtomicBool>,
    /// While set, the hogs sleep instead of spinning.
    paused: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// Hogs paused until this is dropped.
pub(crate) struct PausedHogs<'a>(&'a Hogs);

impl Drop for PausedHogs<'_> {
    fn drop(&mut self) {
        self.0.paused.store(false, Ordering::Relaxed);
    }
}

impl Hogs {
    /// Starts the hogs and returns once each spins on its CPU (or `limit` has passed), so
    /// that what is measured next competes from its first instant.
    fn start(host: &SharedHost, cpus: &[usize], limit: Duration) -> Hogs {
        let stop = Arc::new(AtomicBool::new(false));
        let paused = Arc::new(AtomicBool::new(false));
        let spinning = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + limit;
        let threads: Vec<JoinHandle<()>> = cpus
            .iter()
            .filter_map(|&cpu| {
                let (stop, paused, spinning) = (
                    Arc::clone(&stop),
                    Arc::clone(&paused),
                    Arc::clone(&spinning),
                );
                spawn_pinned(host, &format!("latlab-hog-{cpu}"), cpu, move |_| {
                    spinning.fetch_add(1, Ordering::Release);
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                        if paused.load(Ordering::Relaxed) {
                            std::thread::sleep(PAUSED_NAP);
                            continue;
                        }
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(3).wrapping_add(1));
                        }
                    }
                })
                .ok()
            })
            .collect();
        while spinning.load(Ordering::Acquire) < threads.len() && Instant::now() < deadline {
            std::thread::yield_now();
        }
        Hogs {
            stop,
            paused,
            threads,
        }
    }

    /// Stops the hogs spinning (they sleep) until the guard is dropped: a starved thread that
    /// must be told to stop gets the CPU to see it.
    pub(crate) fn pause(&self) -> PausedHogs<'_> {
        self.paused.store(true, Ordering::Relaxed);
        PausedHogs(self)
    }
}

/// How long a paused hog sleeps before it looks again.
const PAUSED_NAP: Duration = Duration::from_micros(200);

impl Drop for Hogs {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Runs `body` on a new thread confined to `cpus` and put in `class`; its error if either
/// was refused.
pub(crate) fn on_thread<T: Send>(
    host: &dyn Host,
    cpus: &[usize],
    class: Class,
    body: impl FnOnce() -> T + Send,
) -> Result<T, String> {
    std::thread::scope(|scope| {
        spawn_in(scope, "latlab-measured", || {
            host.set_allowed_cpus(cpus)?;
            class.enter()?;
            Ok(body())
        })?
        .join()
        .unwrap_or_else(|_| Err("the measured thread panicked".into()))
    })
}
