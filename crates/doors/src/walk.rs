//! Paths walked for writing: each directory opened through its parent's descriptor, one
//! component at a time, and a symbolic link followed only where it belongs to this user or
//! to root. Another user cannot then redirect a write by a link planted on the way (`nb/w/race
//! -> /root/…`), and a directory renamed between two steps is never the one written into
//! unawares: every step is taken on what the last one opened.

#![cfg(unix)]

use crate::MAX_LINKS;
use crate::sys::{self, Kind, Status};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};

/// Whether the last component of a walk may be a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LastLink {
    /// Followed, where it may be ([`may_follow`]): a path the user named.
    Followed,
    /// Refused: a directory latlab keeps on its own account.
    Refused,
}

/// How a directory is opened on the way: for reaching others through it (Linux's
/// `O_PATH`, which needs no permission to read the directory), or to read and lock it.
#[cfg(any(target_os = "linux", target_os = "android"))]
const ON_THE_WAY: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const ON_THE_WAY: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;

/// Opens the directory `path` names, as [`LastLink`] says of its last component; the
/// descriptor can be read, listed and locked.
pub(crate) fn open_directory(path: &Path, last: LastLink) -> io::Result<OwnedFd> {
    let on_the_way = walk(path, last)?;
    sys::open_in(
        on_the_way.as_fd(),
        OsStr::new("."),
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    )
}

/// The walk itself: a descriptor of the directory `path` names, opened on the way.
fn walk(path: &Path, last: LastLink) -> io::Result<OwnedFd> {
    let mut dir = if path.has_root() {
        root()?
    } else {
        sys::open(Path::new("."), ON_THE_WAY, 0)?
    };
    // The components still to take, the next last.
    let mut ahead: Vec<OsString> = components(path);
    let mut links = 0;
    while let Some(name) = ahead.pop() {
        if name == ".." {
            dir = sys::open_in(dir.as_fd(), &name, ON_THE_WAY, 0)?;
            continue;
        }
        let status = sys::status_in(dir.as_fd(), &name)?;
        if status.kind != Kind::Link {
            dir = sys::open_in(dir.as_fd(), &name, ON_THE_WAY, 0).map_err(|e| {
                if e.raw_os_error() == Some(libc::ENOTDIR) {
                    named(&name, "is not a directory")
                } else {
                    e
                }
            })?;
            continue;
        }
        if ahead.is_empty() && last == LastLink::Refused {
            return Err(named(
                &name,
                "is a symbolic link, which latlab does not write through on its own account",
            ));
        }
        may_follow(&name, &status)?;
        links += 1;
        if links > MAX_LINKS {
            return Err(io::Error::other(format!(
                "more than {MAX_LINKS} symbolic links in a row (a loop of links?)"
            )));
        }
        let text = sys::read_link_in(dir.as_fd(), &name)?;
        let target = Path::new(&text);
        if target.has_root() {
            dir = root()?;
        }
        ahead.extend(components(target));
    }
    Ok(dir)
}

/// This process's root directory: `/proc/self/root` where it can be opened (the root the
/// kernel gives the process, which an emulator's sysroot, `qemu-user -L`, does not stand
/// in for), else `/`.
fn root() -> io::Result<OwnedFd> {
    let flags = ON_THE_WAY & !libc::O_NOFOLLOW;
    sys::open(Path::new("/proc/self/root"), flags, 0)
        .or_else(|_| sys::open(Path::new("/"), ON_THE_WAY, 0))
}

/// The names of `path`'s components, last first (`.` and the root left out: the walk
/// starts at the root or here).
fn components(path: &Path) -> Vec<OsString> {
    let mut names: Vec<OsString> = (path.components())
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    names.reverse();
    names
}

/// Whether a symbolic link may be followed to write: it belongs to this user or to root,
/// so that no other user planted it. `Err` says why not.
pub(crate) fn may_follow(name: &OsStr, link: &Status) -> io::Result<()> {
    let me = sys::effective_uid();
    if link.owner == me || link.owner == 0 {
        return Ok(());
    }
    Err(named(
        name,
        &format!(
            "is a symbolic link of uid {}, not yours (uid {me}) or root's: latlab writes \
             through no link another user could have planted; name where it leads",
            link.owner
        ),
    ))
}

/// An error naming the component at fault.
fn named(name: &OsStr, why: &str) -> io::Error {
    io::Error::other(format!("{} {why}", Path::new(name).display()))
}

/// Whether the directory open as `dir` is this user's: `Err` names its owner.
pub(crate) fn check_own(dir: &OwnedFd) -> io::Result<()> {
    let (owner, me) = (sys::status(dir.as_fd())?.owner, sys::effective_uid());
    if owner != me {
        return Err(io::Error::other(format!(
            "the directory belongs to uid {owner}, not to you (uid {me})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk reaches the directory a path names through links of this user's, up and down
    /// (`..`), relative and absolute, and refuses a last link where asked, and a loop.
    #[test]
    fn a_walk_reaches_what_the_path_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::os::unix::fs::symlink("a/b", root.join("to-b")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("to-a")).unwrap();
        let b = sys::status(
            open_directory(&root.join("a/b"), LastLink::Refused)
                .unwrap()
                .as_fd(),
        )
        .unwrap()
        .inode;
        for path in ["to-b", "to-a/b", "a/b/../b", "to-b/../b", "a/./b/"] {
            let opened = open_directory(&root.join(path), LastLink::Followed).unwrap();
            assert_eq!(sys::status(opened.as_fd()).unwrap().inode, b, "{path}");
        }
        let refused = open_directory(&root.join("to-b"), LastLink::Refused).unwrap_err();
        assert!(
            refused.to_string().contains("to-b is a symbolic link"),
            "{refused}"
        );
        // Not the last: followed either way.
        assert!(open_directory(&root.join("to-a/b"), LastLink::Refused).is_ok());
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        let looped = open_directory(&root.join("loop"), LastLink::Followed).unwrap_err();
        assert!(looped.to_string().contains("a loop of links"), "{looped}");
        std::fs::write(root.join("file"), "").unwrap();
        let not_dir = open_directory(&root.join("file/x"), LastLink::Followed).unwrap_err();
        assert!(
            not_dir.to_string().contains("file is not a directory"),
            "{not_dir}"
        );
    }
}
