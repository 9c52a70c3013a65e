//! Stopping a run cleanly on a signal. Ctrl-C (SIGINT), SIGTERM (a service manager, `kill`,
//! a batch scheduler's time limit) and SIGHUP (a closed terminal, a dropped ssh session)
//! each set the flag the runner checks at its next sample, so that the run stops, writes
//! what it measured and ends with the shell's status for that signal: 128 plus its number
//! (130, 143, 129). A second signal while the first is being handled ends the process at
//! once, with the same status.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The signals that stop a run.
#[cfg(unix)]
pub const STOPPING: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
/// The signals that stop a run: Windows has no SIGHUP (a closed console sends Ctrl-Break's
/// and close events, which the C runtime does not map to a signal).
#[cfg(not(unix))]
pub const STOPPING: [i32; 2] = [libc::SIGINT, libc::SIGTERM];

/// The flag a stopping signal sets, and which signal it was.
#[derive(Debug, Clone)]
pub struct StopSignals {
    flag: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl StopSignals {
    /// Installs the handlers. The flag is the one to give the runner (`Config::cancel`).
    pub fn install() -> std::io::Result<StopSignals> {
        let stop = StopSignals::unset();
        for signal in STOPPING {
            // In the order they run: a signal that finds the flag already set ends the
            // process; otherwise its number is kept and the flag set.
            signal_hook::flag::register_conditional_shutdown(
                signal,
                exit_status(signal),
                Arc::clone(&stop.flag),
            )?;
            signal_hook::flag::register_usize(signal, Arc::clone(&stop.signal), signal as usize)?;
            signal_hook::flag::register(signal, Arc::clone(&stop.flag))?;
        }
        Ok(stop)
    }

    /// Installs handlers that only set the flag, however many signals come, and ends this
    /// process when the one that started it ends: for a process a parent supervises (a
    /// probe in a process of its own), which passes on a signal it received whether or not
    /// this one had it too (Ctrl-C reaches the whole process group, `kill` one process), and
    /// kills it itself when it does not stop.
    pub fn install_supervised() -> std::io::Result<StopSignals> {
        let stop = StopSignals::unset();
        for signal in STOPPING {
            signal_hook::flag::register_usize(signal, Arc::clone(&stop.signal), signal as usize)?;
            signal_hook::flag::register(signal, Arc::clone(&stop.flag))?;
        }
        end_with_parent()?;
        Ok(stop)
    }

    /// No signal yet, and no handler: for a run stopped only through its flag (a test).
    pub fn unset() -> StopSignals {
        StopSignals {
            flag: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The flag the signals set.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }

    /// The signal that stopped the run, if one did.
    pub fn received(&self) -> Option<i32> {
        match self.signal.load(Ordering::Relaxed) {
            0 => None,
            signal => Some(signal as i32),
        }
    }

    /// The exit status of a run stopped part way: that of the signal that stopped it, or
    /// 130 (Ctrl-C's) when the flag was set some other way.
    pub fn exit_status(&self) -> u8 {
        exit_status(self.received().unwrap_or(libc::SIGINT)) as u8
    }
}

/// Asks the kernel to kill this process when the one that started it ends.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn end_with_parent() -> std::io::Result<()> {
    let parent = crate::sys::parent_pid();
    crate::sys::die_with_parent()?;
    // The parent may have ended before the death signal was asked for.
    if crate::sys::parent_pid() != parent {
        return Err(std::io::Error::other(
            "the process that started this one has ended",
        ));
    }
    Ok(())
}

/// A parent-death signal is Linux's: elsewhere a supervised process cannot be ended with its
/// parent, and is refused.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn end_with_parent() -> std::io::Result<()> {
    Err(std::io::Error::other(format!(
        "ending with the parent process is {}",
        crate::NOT_AVAILABLE
    )))
}

/// Makes a write past the file-size limit (`ulimit -f`, RLIMIT_FSIZE) fail with EFBIG ("File
/// too large"), reported like any failed write, instead of SIGXFSZ killing the process
/// with no message and a temporary file left behind.
pub fn fail_oversized_writes() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN)
    };
}

/// 128 plus the signal's number, as a shell reports a process a signal ended.
fn exit_status(signal: i32) -> i32 {
    128 + signal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stopping_signal_has_the_shells_status() {
        assert_eq!(exit_status(libc::SIGINT), 130);
        assert_eq!(exit_status(libc::SIGTERM), 143);
        #[cfg(unix)]
        assert_eq!(exit_status(libc::SIGHUP), 129);
    }

    #[cfg(unix)]
    #[test]
    fn a_raised_hangup_sets_the_flag_and_names_itself() {
        let stop = StopSignals::install().unwrap();
        assert_eq!(stop.received(), None);
        assert_eq!(stop.exit_status(), 130);
        // SAFETY: raise(3) delivers the signal to this thread; the handler was installed.
        unsafe { libc::raise(libc::SIGHUP) };
        assert!(stop.flag().load(Ordering::Relaxed));
        assert_eq!(stop.received(), Some(libc::SIGHUP));
        assert_eq!(stop.exit_status(), 129);
    }
}
