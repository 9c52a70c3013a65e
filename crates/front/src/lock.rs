//! The machine-wide run lock: one latlab run measures at a time, since two disturb each
//! other's figures.

use latlab_engine::Host;
use latlab_engine::Interrupted;
use latlab_engine::locks::{LockRefused, RunLock};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How long a run waits for another one to finish before it goes ahead beside it.
pub const LOCK_WAIT: Duration = Duration::from_secs(60);

/// Takes the machine-wide lock, waiting up to [`LOCK_WAIT`] for a run that holds it (and
/// saying so); where it cannot be had, the run goes ahead, with the reason said on standard
/// error and kept in `notes`. `Err` when Ctrl-C ended the wait.
pub fn take_lock(
    host: &dyn Host,
    cancel: &AtomicBool,
    notes: &mut Vec<String>,
) -> Result<Option<RunLock>, Interrupted> {
    let first_try = match host.lock_runs(Duration::ZERO, cancel) {
        Ok(lock) => return Ok(Some(with_its_note(lock, notes))),
        Err(LockRefused::Busy { holder, .. }) => {
            crate::say!(
                "latlab: another latlab run{} is measuring on this machine; waiting up to {} s \
                 for it to finish (Ctrl-C stops)",
                which(holder),
                LOCK_WAIT.as_secs()
            );
            host.lock_runs(LOCK_WAIT, cancel)
        }
        Err(refused) => Err(refused),
    };
    let message = match first_try {
        Ok(lock) => return Ok(Some(with_its_note(lock, notes))),
        Err(LockRefused::Cancelled) => return Err(Interrupted),
        Err(LockRefused::Busy { waited, holder }) => format!(
            "another latlab run{} was still measuring after {} s; this run went ahead and the \
             two disturbed each other: run them one at a time",
            which(holder),
            waited.as_secs()
        ),
        Err(LockRefused::Unavailable(why)) => format!(
            "the measurement lock could not be taken ({why}); this run went ahead unlocked: \
             another latlab run measuring at the same time would not have been seen"
        ),
        Err(LockRefused::OtherUser { holder }) => format!(
            "another user's latlab run ({}) holds this machine's measurement lock; this run \
             did not wait for it and went ahead: if both measure at once, they disturb each \
             other",
            holder.describe()
        ),
    };
    crate::say!("latlab: {message}");
    notes.push(message);
    Ok(None)
}

/// ` (pid 4242 of uid 1000: latlab run …)`: the run that holds the lock, where the kernel
/// says which.
fn which(holder: Option<latlab_engine::locks::Holder>) -> String {
    holder.map_or_else(String::new, |holder| format!(" ({})", holder.describe()))
}

/// `lock`, its limit kept in `notes` when it could not see runs in other network
/// namespaces.
fn with_its_note(lock: RunLock, notes: &mut Vec<String>) -> RunLock {
    if let Some(why) = lock.unseen_namespaces() {
        notes.push(format!(
            "the measurement lock could not be taken across network namespaces ({why}): a \
             latlab run in another container or network namespace measuring at the same \
             time would not have been seen"
        ));
    }
    lock
}
