//! The locks that keep latlab runs apart: the machine-wide run lock, one run measuring at a
//! time since two disturb each other's figures, and the results-directory lock, one run
//! writing into a results directory at a time.
//!
//! On Linux and Android they are abstract Unix socket names, which the kernel frees with
//! their holder (`abstract_socket.rs`); elsewhere (macOS, Windows) locks on files in a
//! directory every run of the machine shares (`lock_file.rs`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[cfg(any(target_os = "linux", target_os = "android"))]
mod abstract_socket;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use abstract_socket::{DirectoryLock, RunLock, close_run_lock_after_fork};

// Compiled on Linux too for its tests: its locks are std's, and work there as well.
#[cfg(any(test, not(any(target_os = "linux", target_os = "android"))))]
mod lock_file;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub use lock_file::{DirectoryLock, RunLock, close_run_lock_after_fork};

/// The process that holds the run lock, as the kernel says it: its user always, its
/// process id where it lives in this PID namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
    pub pid: Option<u32>,
    pub uid: u32,
}

impl Holder {
    /// `pid 4242 of uid 1000: latlab run --suite full`, the command line where this user
    /// may read it (cut to a line's length).
    pub fn describe(&self) -> String {
        let Some(pid) = self.pid else {
            return format!("uid {}, in another PID namespace", self.uid);
        };
        let command = latlab_doors::input::system_file(format!("/proc/{pid}/cmdline"))
            .ok()
            .map(|bytes| {
                let words: Vec<String> = (bytes.split(|&b| b == 0))
                    .filter(|word| !word.is_empty())
                    .map(|word| String::from_utf8_lossy(word).into_owned())
                    .collect();
                words.join(" ")
            })
            .filter(|command| !command.is_empty());
        let mut described = format!("pid {pid} of uid {}", self.uid);
        if let Some(command) = command {
            let shown: String = (command.chars())
                .map(|c| if c.is_control() { ' ' } else { c })
                .take(120)
                .collect();
            described.push_str(&format!(": {shown}"));
        }
        described
    }
}

/// Why the run lock was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockRefused {
    /// Another run of this user still held it after the wait: which, where the kernel
    /// says.
    Busy {
        waited: Duration,
        holder: Option<Holder>,
    },
    /// Another user's run holds it: not waited for.
    OtherUser { holder: Holder },
    /// The wait was cancelled (Ctrl-C).
    Cancelled,
    /// The lock cannot be had on this system at all, and why (its file cannot be made or
    /// locked): the run goes ahead unlocked.
    Unavailable(String),
}

/// One turn of a wait for the run lock begun at `started`: `Err` once `cancel` is set or
/// the wait has lasted `wait`, otherwise a pause of 50 ms before the next try.
fn wait_turn(
    started: Instant,
    wait: Duration,
    cancel: &AtomicBool,
    holder: Option<Holder>,
) -> Result<(), LockRefused> {
    if cancel.load(Ordering::Relaxed) {
        return Err(LockRefused::Cancelled);
    }
    if started.elapsed() >= wait {
        return Err(LockRefused::Busy {
            waited: started.elapsed(),
            holder,
        });
    }
    std::thread::sleep(Duration::from_millis(50));
    Ok(())
}

/// The directory a results directory `dir` is made in (`.` for a bare name) and its own
/// name's bytes: what its lock is named from, before it exists.
fn parent_and_name(dir: &Path) -> (&Path, &[u8]) {
    let parent = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = dir.file_name().map(|n| n.as_encoded_bytes());
    (parent, name.unwrap_or_default())
}

/// The 64-bit FNV-1a hash of `parts` in order: stable across builds and versions, so that
/// two versions of latlab name one directory's lock alike.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|part| part.iter()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
