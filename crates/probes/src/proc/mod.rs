//! The process family: context switches through pipes, and creating processes.

pub(crate) mod pipe;
pub(crate) mod spawn;

use std::io;
use std::os::fd::{OwnedFd, RawFd};

/// A pipe's two ends, closed on exec and when dropped.
pub(crate) struct Pipe {
    pub(crate) read: OwnedFd,
    pub(crate) write: OwnedFd,
}

impl Pipe {
    pub(crate) fn new() -> io::Result<Pipe> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        Ok(Pipe { read, write })
    }
}

/// Writes one byte to `fd`: true if it was written.
#[inline(always)]
pub(crate) fn write_byte(fd: RawFd, byte: u8) -> bool {
    // SAFETY: the buffer is one valid byte.
    unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) == 1 }
}

/// Reads one byte from `fd`: `None` at end of file or on error.
#[inline(always)]
pub(crate) fn read_byte(fd: RawFd) -> Option<u8> {
    let mut byte = 0u8;
    // SAFETY: the buffer is one valid, writable byte.
    (unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) } == 1).then_some(byte)
}
