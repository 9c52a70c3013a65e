//! latlab's three doors. Every file latlab reads that a user named or that it reads back,
//! every file it writes and every child process it starts goes through one of them, and
//! through nothing else, so that each check is made once and a new reader, writer or child
//! is born guarded:
//!
//! - **In** ([`input`]): a regular file only, its size bounded before it is read, a link
//!   followed only where the user named the path; every file read remembered, so that no
//!   output of the same command replaces it. The numbers a reader finds obey one set of
//!   [`rules`].
//! - **Out** ([`output`], [`OwnDir`]): written whole to a temporary file and renamed into
//!   place inside a directory held open as a descriptor, reached one component at a time
//!   (`walk.rs`: a link followed only where it is the user's or root's), never over a file
//!   the command reads; a directory latlab keeps on its own account is the user's own, and
//!   can be locked while its files are numbered and written.
//! - **A child** ([`child`]): a process group of its own, a limit on every wait, stopping
//!   signals passed on at once, its group killed after a grace and when it ends, its output
//!   read with a bound.
//!
//! The workspace's clippy configuration refuses the standard library's ways of opening a
//! file or starting a process anywhere else (`disallowed-methods`): a reader that skips
//! the door does not build.

// Tests read and write files as they please: the doors are for what latlab itself does.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
pub mod child;
pub mod conversation;
pub mod debris;
pub mod input;
pub mod output;
mod own_dir;
pub mod rules;
#[cfg(unix)]
pub mod sys;
pub mod tree;
#[cfg(unix)]
mod walk;

pub use input::Reached;
pub use output::{Destination, Durability};
pub use own_dir::{Held, Missing, OwnDir, Scratch};

/// What kind of file an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Regular,
    Directory,
    Link,
    Fifo,
    Device,
    Socket,
}

/// The most symbolic links a path may pass through before it counts as a loop (Linux's own
/// limit).
pub const MAX_LINKS: usize = 40;
