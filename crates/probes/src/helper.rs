//! Helper threads: the peers, contenders and hogs that probes run beside the measuring
//! thread.
//!
//! Every helper is named (so it can be told apart in `top` or a profile), leaves any
//! real-time class it inherited from a `--rt` run (a helper that spins must not run
//! unbounded at real-time priority, nor be killed by the RLIMIT_RTTIME that guards the
//! measuring thread) and is pinned to its CPU through the host. Whether pinning worked is
//! handed to its body, which decides what a refusal means.

use crate::ProbeError;
use crate::peer::leave_realtime;
use latlab_engine::{Host, SharedHost};
use std::sync::Arc;
use std::thread::JoinHandle;

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

fn not_started(name: &str, e: std::io::Error) -> ProbeError {
    ProbeError::Failed(format!("could not start a thread ({name}): {e}"))
}
