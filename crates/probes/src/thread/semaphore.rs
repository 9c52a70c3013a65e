//! A binary semaphore on a futex, with a time limit on every wait: the hand-off primitive of
//! the thread probes.
//!
//! The word is 0 (empty), 1 (posted) or 2 (empty, and its one waiter sleeps or is about to).
//! `post` makes the system call to wake only when the word says someone sleeps, as glibc's
//! `sem_post` does, so a hand-off to a thread that is already asleep costs one `FUTEX_WAKE`
//! and one `FUTEX_WAIT` return, and nothing else. One waiter per semaphore.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const EMPTY: u32 = 0;
const POSTED: u32 = 1;
const SLEEPING: u32 = 2;

/// A wait ran out of time: the poster is gone or hung.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimedOut;

#[derive(Debug, Default)]
pub(crate) struct Semaphore(AtomicU32);

impl Semaphore {
    pub(crate) fn post(&self) {
        if self.0.swap(POSTED, Ordering::Release) == SLEEPING {
            futex_wake(&self.0, 1);
        }
    }

    /// Waits until posted, at most `limit`.
    pub(crate) fn wait(&self, limit: Duration) -> Result<(), TimedOut> {
        let mut deadline = None;
        loop {
            if self
                .0
                .compare_exchange(POSTED, EMPTY, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(());
            }
            if let Err(POSTED) =
                self.0
                    .compare_exchange(EMPTY, SLEEPING, Ordering::Relaxed, Ordering::Relaxed)
            {
                continue;
            }
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + limit);
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(TimedOut);
            }
            futex_wait(&self.0, SLEEPING, left);
        }
    }
}

/// Sleeps while `word` holds `expected`, at most `limit` (spurious returns are fine: callers
/// loop).
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, limit: Duration) {
    let timeout = libc::timespec {
        tv_sec: limit.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: limit.subsec_nanos() as libc::c_long,
    };
    futex(word, libc::FUTEX_WAIT, expected, &timeout);
}

/// Wakes up to `count` threads sleeping on `word`.
pub(crate) fn futex_wake(word: &AtomicU32, count: u32) {
    futex(word, libc::FUTEX_WAKE, count, std::ptr::null());
}

/// One private futex operation on `word`; `timeout` (relative) only for waits.
fn futex(word: &AtomicU32, operation: libc::c_int, value: u32, timeout: *const libc::timespec) {
    // SAFETY: `word` is a valid, aligned u32 for the call's duration; `timeout` is null or a
    // valid relative timespec that outlives the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            operation | libc::FUTEX_PRIVATE_FLAG,
            value,
            timeout,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_post_releases_one_wait_and_a_missing_post_times_out() {
        let semaphore = Arc::new(Semaphore::default());
        let poster = {
            let semaphore = Arc::clone(&semaphore);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                semaphore.post();
            })
        };
        assert_eq!(semaphore.wait(Duration::from_secs(10)), Ok(()));
        poster.join().unwrap();
        let started = Instant::now();
        assert_eq!(semaphore.wait(Duration::from_millis(30)), Err(TimedOut));
        assert!(started.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn ping_pong_hands_off_every_time() {
        let (ping, pong) = (
            Arc::new(Semaphore::default()),
            Arc::new(Semaphore::default()),
        );
        let peer = {
            let (ping, pong) = (Arc::clone(&ping), Arc::clone(&pong));
            std::thread::spawn(move || {
                let mut answered = 0;
                while ping.wait(Duration::from_secs(10)).is_ok() {
                    answered += 1;
                    pong.post();
                    if answered == 1000 {
                        break;
                    }
                }
                answered
            })
        };
        for _ in 0..1000 {
            ping.post();
            pong.wait(Duration::from_secs(10)).unwrap();
        }
        assert_eq!(peer.join().unwrap(), 1000);
    }
}
