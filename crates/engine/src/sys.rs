//! The system calls that the engine, the report and the front end make themselves, as safe
//! functions over libc, each `unsafe` block with what makes it sound.
//!
//! These three crates are the harness's light build, which is kept quick to build: rustix's
//! modules for these calls cost more of it than the calls are worth (measured in the book's
//! "Features and build time"), and libc is built for the clock and the affinity calls
//! already. The probes, which the light build never compiles, keep rustix.

#![cfg(unix)]

use latlab_doors::sys::checked;
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

/// A resource limit's soft and hard values, each `None` when unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// `getrlimit(resource)` for a resource constant of libc (`libc::RLIMIT_AS`, …), whose
/// type differs between C libraries; `None` when the call fails.
macro_rules! limit_of {
    ($resource:expr) => {{
        let mut raw = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one whole rlimit into `raw`, which outlives the call.
        (unsafe { libc::getrlimit($resource, &mut raw) } == 0).then(|| Limit {
            soft: finite(raw.rlim_cur),
            hard: finite(raw.rlim_max),
        })
    }};
}

/// A limit's value, `None` for `RLIM_INFINITY`.
#[allow(
    clippy::unnecessary_cast,
    reason = "rlim_t is u64 on some C libraries only"
)]
fn finite(value: libc::rlim_t) -> Option<u64> {
    (value != libc::RLIM_INFINITY).then_some(value as u64)
}

/// RLIMIT_AS, the address-space limit (`ulimit -v`), in bytes.
pub fn address_space_limit() -> Option<Limit> {
    limit_of!(libc::RLIMIT_AS)
}

/// RLIMIT_MEMLOCK, the locked-memory limit (`ulimit -l`), in bytes.
pub fn locked_memory_limit() -> Option<Limit> {
    limit_of!(libc::RLIMIT_MEMLOCK)
}

/// RLIMIT_RTPRIO, the highest real-time priority this process may take.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn realtime_priority_limit() -> Option<Limit> {
    limit_of!(libc::RLIMIT_RTPRIO)
}

/// RLIMIT_RTTIME, the CPU time in microseconds a real-time thread may take without
/// blocking.
#[cfg(target_os = "linux")]
pub fn realtime_time_limit() -> Option<Limit> {
    limit_of!(libc::RLIMIT_RTTIME)
}

/// Sets RLIMIT_RTTIME to `limit` (`None`: unlimited).
#[cfg(target_os = "linux")]
pub fn set_realtime_time_limit(limit: Limit) -> io::Result<()> {
    #[allow(
        clippy::unnecessary_cast,
        reason = "rlim_t is u64 on some C libraries only"
    )]
    let raw = |value: Option<u64>| value.map_or(libc::RLIM_INFINITY, |v| v as libc::rlim_t);
    let limit = libc::rlimit {
        rlim_cur: raw(limit.soft),
        rlim_max: raw(limit.hard),
    };
    // SAFETY: setrlimit reads one whole rlimit, which outlives the call.
    checked(unsafe { libc::setrlimit(libc::RLIMIT_RTTIME, &limit) }).map(drop)
}

/// Locks this process's current and future pages into memory (`mlockall`).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn lock_all_memory() -> io::Result<()> {
    // SAFETY: mlockall takes flags only and touches no memory of the caller's.
    checked(unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) }).map(drop)
}

/// The process that started this one (its parent now).
pub fn parent_pid() -> i32 {
    // SAFETY: getppid takes nothing and cannot fail.
    unsafe { libc::getppid() }
}

/// Asks the kernel to send this process SIGKILL when the thread that started it ends
/// (`PR_SET_PDEATHSIG`).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn die_with_parent() -> io::Result<()> {
    let signal = libc::c_ulong::try_from(libc::SIGKILL).expect("a small positive signal");
    // SAFETY: PR_SET_PDEATHSIG takes a signal number and touches no memory of the caller's.
    checked(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal) }).map(drop)
}

/// What `uname` says of this system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemName {
    pub system: String,
    pub node_name: String,
    pub release: String,
    pub version: String,
    pub machine: String,
}

/// `uname(2)`; empty fields where it fails.
pub fn system_name() -> SystemName {
    // SAFETY: a utsname is arrays of C characters; all zero is a set of empty strings.
    let mut raw: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname writes one whole utsname into `raw`, each field NUL-terminated.
    let named = unsafe { libc::uname(&mut raw) } == 0;
    let field = |chars: &[libc::c_char]| -> String {
        if !named {
            return String::new();
        }
        // SAFETY: the kernel NUL-terminates every field within its array.
        unsafe { CStr::from_ptr(chars.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    SystemName {
        system: field(&raw.sysname),
        node_name: field(&raw.nodename),
        release: field(&raw.release),
        version: field(&raw.version),
        machine: field(&raw.machine),
    }
}

/// Waits up to `limit` for `fd` to be ready for `events` (`libc::POLLIN`, `POLLOUT`):
/// whether it is. A signal that cuts the wait short counts as ready: the caller tries, and
/// waits again if need be.
pub fn wait_until_ready(
    fd: BorrowedFd<'_>,
    events: libc::c_short,
    limit: Duration,
) -> io::Result<bool> {
    let mut watched = [libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    }];
    let millis = libc::c_int::try_from(limit.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one pollfd, of the length given, that outlives the call.
    match checked(unsafe { libc::poll(watched.as_mut_ptr(), 1, millis) }) {
        Ok(ready) => Ok(ready > 0),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(true),
        Err(e) => Err(e),
    }
}

/// Sets or clears `fd`'s close-on-exec flag: whether a program this process executes
/// inherits it.
pub fn set_inherited(fd: BorrowedFd<'_>, inherited: bool) -> io::Result<()> {
    let flags = if inherited { 0 } else { libc::FD_CLOEXEC };
    // SAFETY: F_SETFD on an open descriptor takes the flags only.
    checked(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, flags) }).map(drop)
}

/// Whether `fd` is an open descriptor of this process.
pub fn is_open(fd: libc::c_int) -> bool {
    // SAFETY: F_GETFD only asks whether the descriptor is open.
    (unsafe { libc::fcntl(fd, libc::F_GETFD) }) >= 0
}

/// The columns of the terminal open as `fd`, when it is one that says.
pub fn terminal_columns(fd: BorrowedFd<'_>) -> Option<u16> {
    // SAFETY: a winsize is four integers; all zero is a valid one.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one whole winsize into `size`, which outlives the call.
    let asked = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut size) };
    (asked == 0 && size.ws_col > 0).then_some(size.ws_col)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// The calls answer as the system does: this process's parent exists; uname names the system std says it is; a pipe with
    /// data is ready to read and an empty one is not.
    #[test]
    fn the_calls_answer_as_the_system_does() {
        assert!(latlab_doors::sys::process_exists(parent_pid() as u32));
        let name = system_name();
        assert_eq!(name.system.to_lowercase(), std::env::consts::OS);
        assert!(!name.release.is_empty());

        let (reader, mut writer) = std::io::pipe().unwrap();
        let now = Duration::ZERO;
        assert!(!wait_until_ready(reader.as_fd(), libc::POLLIN, now).unwrap());
        std::io::Write::write_all(&mut writer, b"x").unwrap();
        assert!(wait_until_ready(reader.as_fd(), libc::POLLIN, now).unwrap());
        assert!(is_open(reader.as_fd().as_raw_fd()));
    }
}
