//! Helper threads: the peers, contenders and hogs that probes run beside the measuring
//! thread.
//!
//! Every helper is named (so it can be told apart in `top` or a profile), leaves any
//! real-time class it inherited from a `--rt` run (a helper that spins must not run
//! unbounded at real-time priority, nor be killed by the RLIMIT_RTTIME that guards the
//! measuring thread) and is pinned to its CPU through the host. Whether pinning worked is
//! handed to its body, which decides what a refusal means.

use crate::ProbeError;
use latlab_engine::isolation::leave_realtime;
use latlab_engine::{Host, SharedHost};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{JoinHandle, Scope, ScopedJoinHandle};

/// Starts a thread named `name`, out of any real-time class and pinned to `cpu`, running
/// `body` with the outcome of the pinning.
pub(crate) fn spawn_pinned<T: Send + 'static>(
    host: &SharedHost,
    name: &str,
    cpu: usize,
    body: impl FnOnce(Result<(), String>) -> T + Send + 'static,
) -> Result<JoinHandle<T>, ProbeError> {
    let host = Arc::clone(host);
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || body(settle(host.as_ref(), cpu)))
        .map_err(|e| not_started(name, e))
}

/// What every helper does first, on its own thread: leave any real-time class, then move
/// onto its CPU. Threads started otherwise (the workers of a `std::thread::scope`) call it
/// themselves.
pub(crate) fn settle(host: &dyn Host, cpu: usize) -> Result<(), String> {
    leave_realtime();
    host.pin_to_cpu(cpu)
}

/// Starts a thread named `name` in `scope`: an error, where `Scope::spawn` would panic,
/// when the system refuses a thread (`ulimit -u`, no memory for its stack).
pub(crate) fn spawn_in<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    name: &str,
    body: impl FnOnce() -> T + Send + 'scope,
) -> Result<ScopedJoinHandle<'scope, T>, String> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn_scoped(scope, body)
        .map_err(|e| refused(name, &e))
}

/// Starts a thread named `name`: an error, where `std::thread::spawn` would panic, when the
/// system refuses a thread.
pub(crate) fn spawn_named<T: Send + 'static>(
    name: &str,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<JoinHandle<T>, String> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(body)
        .map_err(|e| refused(name, &e))
}

fn not_started(name: &str, e: std::io::Error) -> ProbeError {
    ProbeError::Failed(refused(name, &e))
}

/// Why a thread named `name` could not be started, naming the limit when it is the cause.
pub(crate) fn refused(name: &str, e: &std::io::Error) -> String {
    let hint = if e.kind() == std::io::ErrorKind::WouldBlock {
        " (the limit on processes and threads, `ulimit -u`, is reached)"
    } else {
        ""
    };
    format!("could not start a thread ({name}): {e}{hint}")
}

/// Holds a group of threads until every one has been started, then lets them all go, or
/// sends them home when one could not be started: a barrier sized for the whole group would
/// wait for ever for the thread that never came.
#[derive(Default)]
pub(crate) struct StartGate {
    /// `None` until decided; then whether to go.
    decided: Mutex<Option<bool>>,
    changed: Condvar,
}

impl StartGate {
    /// Waits for the decision: `true` to go on, `false` to return at once.
    pub(crate) fn wait(&self) -> bool {
        let decided = self.decided.lock().unwrap_or_else(PoisonError::into_inner);
        let decided = self
            .changed
            .wait_while(decided, |d| d.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        decided.unwrap_or(false)
    }

    /// Lets the waiting threads go (`true`) or sends them home (`false`).
    pub(crate) fn open(&self, go: bool) {
        *self.decided.lock().unwrap_or_else(PoisonError::into_inner) = Some(go);
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group whose last thread could not start is sent home instead of left waiting.
    #[test]
    fn a_gate_sends_home_the_threads_of_a_group_that_could_not_all_start() {
        for go in [true, false] {
            let gate = StartGate::default();
            let went = std::thread::scope(|scope| {
                let waiting: Vec<_> = (0..3)
                    .map(|i| spawn_in(scope, &format!("waiter-{i}"), || gate.wait()).unwrap())
                    .collect();
                gate.open(go);
                waiting
                    .into_iter()
                    .map(|t| t.join().unwrap())
                    .collect::<Vec<_>>()
            });
            assert_eq!(went, [go; 3]);
        }
    }
}
