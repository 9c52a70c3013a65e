//! The priority-inheritance check of `ipc.latency`: a real-time thread blocks on a
//! `PTHREAD_PRIO_INHERIT` mutex held by a normal thread, which watches its own priority
//! (`/proc/thread-self/stat`) while holding it. PASS when the holder is boosted to real time
//! every time, FAIL (a warning) when not.

use super::arm::{Arm, enter};
use crate::helper::spawn_in;
use crate::peer::leave_realtime;
use crate::thread::semaphore::Semaphore;
use crate::{ProbeContext, ProbeError};
use latlab_engine::parameters::Key;
use latlab_engine::parameters::Value;
use latlab_engine::{BenchResult, Clock, Warning};
use std::time::Duration;

const BOOSTED: Key = Key::new("boosted");
const CHECKS: Key = Key::new("checks");
const HOLDER_PRIORITY_BEFORE: Key = Key::new("holder_priority_before");
const HOLDER_PRIORITY_WHILE_BLOCKED: Key = Key::new("holder_priority_while_blocked");
pub(super) const VERDICT: Key = Key::new("verdict");

/// How many times the priority-inheritance check is made.
const PI_CHECKS: usize = 5;

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
            #[cfg(not(target_os = "android"))]
            let set = libc::pthread_mutexattr_setprotocol(&mut attr, libc::PTHREAD_PRIO_INHERIT);
            // Android's C library has the call from API level 28 on, the libc crate not at
            // all: the arm is skipped with the reason below.
            #[cfg(target_os = "android")]
            let set = libc::ENOSYS;
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
    let stat = latlab_doors::input::system_text("/proc/thread-self/stat")?;
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
        let holder = spawn_in(scope, "latlab-pi-holder", || {
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
        })?;
        // Refused, the waiter never blocks: the holder lets the mutex go after its second.
        let waiter = spawn_in(scope, "latlab-pi-waiter", || {
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
        })?;
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
pub(super) fn priority_inheritance(ctx: &mut ProbeContext) -> Result<BenchResult, ProbeError> {
    let mut waits = Vec::new();
    let mut boosted = 0;
    let mut priorities = Vec::new();
    for _ in 0..PI_CHECKS {
        let (before, highest, waited) =
            one_inheritance_check(ctx.runner.clock()).map_err(ProbeError::Failed)?;
        if highest < 0 {
            boosted += 1;
        }
        priorities.push((before, highest));
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
    let (before, during): (Vec<i64>, Vec<i64>) = priorities.iter().copied().unzip();
    result = result
        .with_parameter(VERDICT, if pass { "PASS" } else { "FAIL" })
        .with_parameter(HOLDER_PRIORITY_BEFORE, Value::Integers(before))
        .with_parameter(HOLDER_PRIORITY_WHILE_BLOCKED, Value::Integers(during))
        .with_parameter(BOOSTED, boosted)
        .with_parameter(CHECKS, PI_CHECKS);
    if !pass {
        result.warnings.push(Warning::check_failed(
            "priority inheritance",
            &format!(
                "the holder was boosted to real time in {boosted} of {PI_CHECKS} checks (kernel priority before→while blocked: {})",
                priorities
                    .iter()
                    .map(|(before, highest)| format!("{before}→{highest}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ));
    }
    Ok(result)
}
