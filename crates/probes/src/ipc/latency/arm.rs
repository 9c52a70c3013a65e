//! The arms of `ipc.latency`: a caller thread in latlab and a forked server, joined by a
//! Unix stream socket pair, in one scheduling class; and the caller's timed round trips.

use super::tracer::Tracer;
use crate::peer::{Child, FIFO_PRIORITY, enter_fifo, leave_realtime};
use crate::proc::read_byte;
use latlab_engine::Clock;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};

/// A scheduling class for one arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arm {
    Other,
    Fifo,
}

impl Arm {
    pub(super) fn label(self) -> &'static str {
        match self {
            Arm::Other => "other",
            Arm::Fifo => "fifo",
        }
    }
}

/// Moves the calling thread into `arm`'s class. Async-signal-safe (forked servers call it).
pub(super) fn enter(arm: Arm) -> Result<(), i32> {
    match arm {
        Arm::Other => {
            leave_realtime();
            Ok(())
        }
        Arm::Fifo => enter_fifo(FIFO_PRIORITY),
    }
}

/// Whether this process may run threads at SCHED_FIFO: `Err` with the reason if not.
pub(super) fn realtime_permitted() -> Result<(), String> {
    crate::sched::Class::Fifo.available()
}

/// The CPU the caller runs on, or -1.
pub(super) fn current_cpu() -> i32 {
    i32::try_from(rustix::thread::sched_getcpu()).unwrap_or(-1)
}

/// One arm of one pair: the server process and the caller's end of the socket.
pub(super) struct Server {
    pub child: Child,
    pub socket: OwnedFd,
}

pub(super) fn start_server(arm: Arm) -> Result<Server, String> {
    let (caller, server) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let (caller, server) = (OwnedFd::from(caller), OwnedFd::from(server));
    let (server_fd, caller_fd) = (server.as_raw_fd(), caller.as_raw_fd());
    let serve = move || {
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
    };
    // SAFETY: `serve` makes raw system calls on descriptors opened before the fork (read,
    // write, close, sched_setaffinity) and allocates nothing.
    let child = unsafe { Child::fork(serve) }.map_err(|e| format!("fork: {e}"))?;
    drop(server);
    Ok(Server {
        child,
        socket: caller,
    })
}

/// What a caller saw: each round trip's nanoseconds, and how many ran on its own CPU.
pub(super) struct Trips {
    pub samples_ns: Vec<f64>,
    pub same_cpu: usize,
}

/// Why a caller stopped early.
pub(super) enum Stop {
    Interrupted,
    Failed(String),
}

/// What every caller shares.
pub(super) struct Shared<'a> {
    pub clock: &'a Clock,
    pub deadline_ns: f64,
    pub iterations: usize,
    pub tracer: Option<&'a Tracer>,
    /// Where the trace was stopped, if it was.
    pub stopped_at: std::sync::Mutex<Option<String>>,
    pub cancel: &'a AtomicBool,
}

/// Makes the round trips of one arm, from the calling thread.
pub(super) fn call(socket: RawFd, shared: &Shared, what: &str) -> Result<Trips, Stop> {
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
        if ns > shared.deadline_ns
            && let Some(tracer) = shared.tracer
        {
            let at = format!("{what}, round trip {i}, {:.1} µs", ns / 1e3);
            if tracer.miss(&at) {
                *shared.stopped_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
            }
        }
        samples_ns.push(ns);
    }
    Ok(Trips {
        samples_ns,
        same_cpu,
    })
}
