//! The channels between a client and a forked server process, one kind per transport, with
//! the two halves of an echo: the client's round trip and the server's loop.
//!
//! Every channel is made before the fork and is anonymous (pipes, socket pairs, eventfds, an
//! anonymous shared mapping, a loopback TCP connection accepted at once), so nothing is left
//! in the file system or in `/dev/shm` whatever happens. The server's half keeps to raw
//! system calls on memory prepared before the fork (see [`crate::peer::Child::fork`]).

use crate::mem::pages::mapped::MappedBuffer;
use std::io;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixDatagram, UnixStream};

/// How the payload travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Pipe,
    UnixStream,
    UnixDatagram,
    EventfdShm,
    Tcp,
}

impl Transport {
    pub(crate) const ALL: [Transport; 5] = [
        Transport::Pipe,
        Transport::UnixStream,
        Transport::UnixDatagram,
        Transport::EventfdShm,
        Transport::Tcp,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::UnixStream => "unix-stream",
            Transport::UnixDatagram => "unix-dgram",
            Transport::EventfdShm => "eventfd-shm",
            Transport::Tcp => "tcp",
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Transport::Pipe => "two pipes, one each way",
            Transport::UnixStream => "a Unix stream socket pair",
            Transport::UnixDatagram => "a Unix datagram socket pair, one datagram each way",
            Transport::EventfdShm => {
                "the payload copied through shared memory, an eventfd signalled each way"
            }
            Transport::Tcp => "a TCP connection over 127.0.0.1 with TCP_NODELAY",
        }
    }

    /// Whether one `read` may return part of a message.
    fn is_stream(self) -> bool {
        matches!(
            self,
            Transport::Pipe | Transport::UnixStream | Transport::Tcp
        )
    }
}

/// One side's descriptors: where it sends and where it receives (the same for sockets).
#[derive(Debug, Clone, Copy)]
struct Ends {
    send: RawFd,
    recv: RawFd,
}

/// An anonymous shared mapping of two areas, a request and a reply.
struct SharedPages {
    pages: MappedBuffer,
    area: usize,
}

impl SharedPages {
    fn new(area: usize) -> io::Result<SharedPages> {
        let area = area.max(1);
        Ok(SharedPages {
            pages: MappedBuffer::shared(2 * area)?,
            area,
        })
    }

    fn request(&self) -> *mut u8 {
        self.pages.as_mut_ptr()
    }

    fn reply(&self) -> *mut u8 {
        // SAFETY: the reply area is the second half of the mapping, which is at least two
        // areas long.
        unsafe { self.pages.as_mut_ptr().add(self.area) }
    }
}

/// A client–server channel of one transport. The parent keeps the client's half after the
/// fork ([`Link::close_server_half`]); the child serves with the other.
pub(crate) struct Link {
    transport: Transport,
    client: Ends,
    server: Ends,
    /// Every descriptor, closed when the link is dropped (in the parent).
    owned: Vec<OwnedFd>,
    server_fds: Vec<RawFd>,
    shared: Option<SharedPages>,
}

impl Link {
    /// Opens a channel for payloads of up to `max_payload` bytes.
    pub(crate) fn open(transport: Transport, max_payload: usize) -> io::Result<Link> {
        let mut shared = None;
        let (client, server, fds): (Ends, Ends, Vec<OwnedFd>) = match transport {
            Transport::Pipe => {
                let there = crate::proc::Pipe::new()?;
                let back = crate::proc::Pipe::new()?;
                let client = Ends {
                    send: there.write.as_raw_fd(),
                    recv: back.read.as_raw_fd(),
                };
                let server = Ends {
                    send: back.write.as_raw_fd(),
                    recv: there.read.as_raw_fd(),
                };
                (
                    client,
                    server,
                    vec![there.write, back.read, back.write, there.read],
                )
            }
            Transport::UnixStream => {
                let (a, b) = UnixStream::pair()?;
                let (a, b) = (OwnedFd::from(a), OwnedFd::from(b));
                (Ends::both(&a), Ends::both(&b), vec![a, b])
            }
            Transport::UnixDatagram => {
                let (a, b) = UnixDatagram::pair()?;
                let (a, b) = (OwnedFd::from(a), OwnedFd::from(b));
                (Ends::both(&a), Ends::both(&b), vec![a, b])
            }
            Transport::Tcp => {
                let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
                let a = TcpStream::connect(listener.local_addr()?)?;
                let (b, _) = listener.accept()?;
                a.set_nodelay(true)?;
                b.set_nodelay(true)?;
                let (a, b) = (OwnedFd::from(a), OwnedFd::from(b));
                (Ends::both(&a), Ends::both(&b), vec![a, b])
            }
            Transport::EventfdShm => {
                let cloexec = rustix::event::EventfdFlags::CLOEXEC;
                let to_server = rustix::event::eventfd(0, cloexec)?;
                let to_client = rustix::event::eventfd(0, cloexec)?;
                shared = Some(SharedPages::new(max_payload)?);
                let client = Ends {
                    send: to_server.as_raw_fd(),
                    recv: to_client.as_raw_fd(),
                };
                let server = Ends {
                    send: to_client.as_raw_fd(),
                    recv: to_server.as_raw_fd(),
                };
                (client, server, vec![to_server, to_client])
            }
        };
        let server_fds = match transport {
            // The eventfds are shared by both sides.
            Transport::EventfdShm => Vec::new(),
            Transport::Pipe => vec![server.send, server.recv],
            _ => vec![server.send],
        };
        Ok(Link {
            transport,
            client,
            server,
            owned: fds,
            server_fds,
            shared,
        })
    }

    /// In the parent after the fork: closes the server's descriptors, so that the client sees
    /// an end of file when the server dies.
    pub(crate) fn close_server_half(&mut self) {
        let server_fds = std::mem::take(&mut self.server_fds);
        self.owned
            .retain(|fd| !server_fds.contains(&fd.as_raw_fd()));
    }

    /// The descriptors the child closes (the client's, unless shared), computed before the
    /// fork so that the child allocates nothing.
    pub(crate) fn child_closes(&self) -> Vec<RawFd> {
        match self.transport {
            Transport::EventfdShm => Vec::new(),
            Transport::Pipe => vec![self.client.send, self.client.recv],
            _ => vec![self.client.send],
        }
    }

    /// Descriptors a watchdog must signal to wake a client blocked on a server it killed:
    /// the client's eventfd, which no death closes. Sockets and pipes need none: the
    /// server's death is an end of file.
    pub(crate) fn wake_on_kill(&self) -> Vec<RawFd> {
        match self.transport {
            Transport::EventfdShm => vec![self.client.recv],
            _ => Vec::new(),
        }
    }

    /// One round trip from the client: `n` bytes of `buffer` to the server and `n` back into
    /// `buffer`. False when the server is gone.
    #[inline]
    pub(crate) fn round_trip(&self, buffer: &mut [u8], n: usize) -> bool {
        match &self.shared {
            Some(shared) => {
                // SAFETY: the request area holds at least max_payload ≥ n bytes; the server
                // only reads it after the signal below.
                unsafe { std::ptr::copy_nonoverlapping(buffer.as_ptr(), shared.request(), n) };
                if !signal(self.client.send) || !await_signal(self.client.recv) {
                    return false;
                }
                // SAFETY: the server wrote the reply before signalling.
                unsafe { std::ptr::copy_nonoverlapping(shared.reply(), buffer.as_mut_ptr(), n) };
                true
            }
            None => {
                send_all(self.client.send, &buffer[..n], self.transport.is_stream())
                    && recv_all(
                        self.client.recv,
                        &mut buffer[..n],
                        self.transport.is_stream(),
                    )
            }
        }
    }

    /// The server's loop, in the child: echoes messages of `n` bytes until the client goes
    /// away. Returns the exit code. Raw system calls only.
    pub(crate) fn serve(&self, buffer: &mut [u8], n: usize, close_first: &[RawFd]) -> i32 {
        for &fd in close_first {
            // SAFETY: closing the client's descriptors in the child's own table.
            unsafe { libc::close(fd) };
        }
        let stream = self.transport.is_stream();
        loop {
            match &self.shared {
                Some(shared) => {
                    if !await_signal(self.server.recv) {
                        return 0;
                    }
                    // SAFETY: both areas hold at least n bytes; the client waits meanwhile.
                    unsafe { std::ptr::copy_nonoverlapping(shared.request(), shared.reply(), n) };
                    if !signal(self.server.send) {
                        return 0;
                    }
                }
                None => {
                    if !recv_all(self.server.recv, &mut buffer[..n], stream)
                        || !send_all(self.server.send, &buffer[..n], stream)
                    {
                        return 0;
                    }
                }
            }
        }
    }
}

impl Ends {
    fn both(fd: &OwnedFd) -> Ends {
        Ends {
            send: fd.as_raw_fd(),
            recv: fd.as_raw_fd(),
        }
    }
}

/// Writes all of `data` (one datagram when not a stream).
#[inline]
fn send_all(fd: RawFd, mut data: &[u8], stream: bool) -> bool {
    while !data.is_empty() {
        // SAFETY: `data` is a valid buffer of its length.
        let sent = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if sent <= 0 {
            return false;
        }
        if !stream {
            return sent as usize == data.len();
        }
        data = &data[sent as usize..];
    }
    true
}

/// Reads exactly `data.len()` bytes (one datagram when not a stream).
#[inline]
fn recv_all(fd: RawFd, mut data: &mut [u8], stream: bool) -> bool {
    while !data.is_empty() {
        // SAFETY: `data` is a valid, writable buffer of its length.
        let got = unsafe { libc::read(fd, data.as_mut_ptr().cast(), data.len()) };
        if got <= 0 {
            return false;
        }
        if !stream {
            return got as usize == data.len();
        }
        data = &mut data[got as usize..];
    }
    true
}

/// Adds one to an eventfd.
#[inline]
fn signal(fd: RawFd) -> bool {
    let one: u64 = 1;
    // SAFETY: an eventfd takes exactly 8 bytes.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) == 8 }
}

/// Waits for an eventfd to be signalled, and takes the signal.
#[inline]
fn await_signal(fd: RawFd) -> bool {
    let mut value: u64 = 0;
    // SAFETY: as above.
    unsafe { libc::read(fd, (&mut value as *mut u64).cast(), 8) == 8 }
}
