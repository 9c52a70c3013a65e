//! `file.write`: creating, writing and deleting a file, by size, with and without fsync.
//!
//! Each event creates a new file (`open` with `O_CREAT | O_TRUNC`), writes its bytes,
//! optionally `fsync`s it, closes it, then `unlink`s it, timestamped between the two, so
//! that each size gives two results: `create-write-close` (or `create-write-fsync-close`)
//! and `unlink`. Sizes are 0 B, then 1 B to 10 MiB as `file.read`'s. Apart from them,
//! `fsync-alone/4KiB` times only the `fsync` after a 4 KiB overwrite of an open file: what
//! making one small change durable costs on this file system.

use super::{Workspace, c_path};
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical, keeping_measured};
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{HeadlineRow, Presentation, Source, Template};
use latlab_engine::units::format_bytes;
use latlab_engine::{BenchResult, Clock};
use std::ffi::CStr;

const FSYNC: Key = Key::new("fsync");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "file.write",
    method: "create+write(+fsync)+close then unlink of a new file, 0 B … 10 MiB; fsync of a 4 KiB change",
    timing: crate::Timing::Events,
    results: &[
        "file.write/no-fsync/{size}/create-write-close",
        "file.write/no-fsync/{size}/unlink",
        "file.write/fsync/{size}/create-write-fsync-close",
        "file.write/fsync/{size}/unlink",
        "file.write/fsync-alone/{size}",
    ],
    typical: Typical::quick_full(0.53, 0.82),
    extras: crate::Extras {
        options: &[&super::DIR_OPTION],
        ..crate::Extras::NONE
    },
    presentation: Presentation {
        headline: &[HeadlineRow {
            order: 190,
            operation: "fsync of a 4 KiB change",
            reference: None,
            source: Source::Result(FSYNC_4KIB),
            qualifier: "",
            only_with_family: false,
        }],
        ..Presentation::NONE
    },
    run,
};

const FSYNC_4KIB: Template = Template("file.write/fsync-alone/4KiB");

/// Events per size: (without fsync, with fsync).
fn events(suite: Suite) -> (usize, usize) {
    match suite {
        Suite::Quick => (10, 5),
        Suite::Full => (30, 10),
    }
}

/// Writes all of `data` to `fd`; the error number on failure.
fn write_all(fd: libc::c_int, mut data: &[u8]) -> Result<(), i32> {
    while !data.is_empty() {
        // SAFETY: `data` is a valid buffer of its length.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        data = &data[n as usize..];
    }
    Ok(())
}

/// One event: [start, closed, unlinked]; the error number on failure.
fn one_event(
    clock: &Clock,
    stamps: &mut [u64],
    path: &CStr,
    data: &[u8],
    sync: bool,
) -> Result<(), i32> {
    let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    stamps[0] = clock.start();
    // SAFETY: a valid C path; the descriptor is closed below.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_TRUNC | libc::O_WRONLY | libc::O_CLOEXEC,
            0o600,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    let written = write_all(fd, data);
    // SAFETY: our descriptor.
    let synced = if sync && written.is_ok() && unsafe { libc::fsync(fd) } != 0 {
        Err(errno())
    } else {
        Ok(())
    };
    // SAFETY: our descriptor, closed once.
    unsafe { libc::close(fd) };
    stamps[1] = clock.end();
    // SAFETY: a valid C path.
    let unlinked = unsafe { libc::unlink(path.as_ptr()) };
    stamps[2] = clock.end();
    written?;
    synced?;
    if unlinked != 0 {
        return Err(errno());
    }
    Ok(())
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let workspace = Workspace::create(ctx.options.path(&super::DIR_OPTION))?;
    let fs = workspace.fs_type().to_string();
    let location = workspace.location();
    let mut sizes = vec![0];
    sizes.extend(super::sizes());
    let largest = *sizes.last().expect("sizes") as usize;
    let data: Vec<u8> = (0..largest).map(|i| (i % 251) as u8 | 1).collect();
    let path = workspace.path("written");
    let c = c_path(&path);
    let (plain, synced) = events(ctx.suite);
    let with_place = |r: BenchResult| {
        r.with_parameter(crate::file::FILE_SYSTEM, &fs)
            .with_parameter(crate::file::DIRECTORY, &location)
    };
    // Stopped part-way (a disk filling, Ctrl-C), the sizes measured before are kept.
    keeping_measured(|results| {
        for (sync, count) in [(false, plain), (true, synced)] {
            let mode = if sync { "fsync" } else { "no-fsync" };
            let first = if sync {
                "create-write-fsync-close"
            } else {
                "create-write-close"
            };
            for &size in &sizes {
                let label = format_bytes(size as f64);
                let base = format!("file.write/{mode}/{label}");
                let (phase_write, phase_unlink) =
                    (format!("{base}/{first}"), format!("{base}/unlink"));
                let mut error = None;
                let measured = ctx.runner.observe_phases(
                    &base,
                    "one new file, created, written and deleted",
                    &[
                        (
                            &phase_write,
                            &format!(
                                "open(O_CREAT|O_TRUNC), write {size} bytes{}, close",
                                if sync { ", fsync" } else { "" }
                            ),
                        ),
                        (&phase_unlink, "unlink the file just closed"),
                    ],
                    count,
                    |clock, stamps| {
                        if let Err(e) = one_event(clock, stamps, &c, &data[..size as usize], sync) {
                            error.get_or_insert(e);
                        }
                    },
                )?;
                if let Some(errno) = error {
                    return Err(super::io_error(
                        &format!("writing {size} bytes to {}", path.display()),
                        &std::io::Error::from_raw_os_error(errno),
                    ));
                }
                results.extend(measured.into_iter().skip(1).map(|r| {
                    with_place(r)
                        .with_parameter(key::SIZE_BYTES, size)
                        .with_parameter(FSYNC, sync)
                        .as_sweep_detail(super::is_sweep_detail(size))
                }));
            }
        }
        results.push(with_place(fsync_alone(ctx, &workspace)?));
        Ok(())
    })
}

/// The fsync after a 4 KiB overwrite of a file kept open.
fn fsync_alone(ctx: &mut ProbeContext, workspace: &Workspace) -> Result<BenchResult, ProbeError> {
    const SMALL: usize = 4096;
    let path = workspace.fill("fsynced", SMALL as u64)?;
    #[allow(
        clippy::disallowed_methods,
        reason = "the probe's workload, in its own workspace, not an output"
    )]
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(|e| super::io_error(&format!("opening {}", path.display()), &e))?;
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let data = [0x5au8; SMALL];
    let mut error = None;
    // The headline reads it: enough events for a p5 … p95.
    let count = (events(ctx.suite).1 * 2).max(latlab_engine::stats::MIN_SAMPLES_FOR_PERCENTILES);
    let result = ctx.runner.observe(
        FSYNC_4KIB.as_str(),
        "fsync after a 4 KiB pwrite at offset 0 of a file kept open (the pwrite untimed)",
        count,
        |clock| {
            // SAFETY: a valid buffer of SMALL bytes and our descriptor.
            if unsafe { libc::pwrite(fd, data.as_ptr().cast(), SMALL, 0) } != SMALL as isize {
                error.get_or_insert(std::io::Error::last_os_error());
            }
            let start = clock.start();
            // SAFETY: our descriptor.
            if unsafe { libc::fsync(fd) } != 0 {
                error.get_or_insert(std::io::Error::last_os_error());
            }
            clock.end().wrapping_sub(start)
        },
    )?;
    match error {
        Some(e) => Err(super::io_error("fsync of a small change", &e)),
        None => Ok(result),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Making data durable costs more than leaving it in the page cache, and the files are
    /// gone afterwards.
    #[test]
    fn fsync_costs_more_than_no_fsync() {
        let _quiet = crate::quiet_cpus();
        let workspace = Workspace::create(None).unwrap();
        if matches!(workspace.fs_type(), "tmpfs" | "ramfs") {
            latlab_test_support::skip!(
                "the workspace is on {}: fsync has nothing to do in memory",
                workspace.fs_type()
            );
        }
        let path = workspace.path("t");
        let c = c_path(&path);
        let clock = Clock::detect();
        let data = vec![7u8; 256 << 10];
        let mut stamps = [0u64; 3];
        let (mut plain, mut synced) = (Vec::new(), Vec::new());
        for _ in 0..7 {
            one_event(&clock, &mut stamps, &c, &data, false).unwrap();
            plain.push(stamps[1] - stamps[0]);
            one_event(&clock, &mut stamps, &c, &data, true).unwrap();
            synced.push(stamps[1] - stamps[0]);
            assert!(!path.exists());
        }
        plain.sort_unstable();
        synced.sort_unstable();
        assert!(
            synced[3] > plain[3],
            "fsync {} vs {} ticks",
            synced[3],
            plain[3]
        );
    }
}
