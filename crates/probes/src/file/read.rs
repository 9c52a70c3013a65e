//! `file.read`: reading a whole file from the page cache, by size, two ways.
//!
//! For each size from 1 B to 10 MiB (doubling, then 10 MiB) a file is written and read once,
//! so it sits in the page cache, then timed:
//!
//! * `open-read-close`: `open`, `read` until the whole file is in a buffer, `close`;
//! * `pread`: `pread` of the whole file at offset 0 on a descriptor kept open.
//!
//! Two results come from the curves: `open-close`, the fixed cost of opening and closing
//! (at each size up to 64 KiB, open-read-close less pread; the median over sizes), and
//! `per-byte`, the
//! cost of each further byte (the slope of pread between consecutive sizes from 64 KiB up;
//! the median over sizes, with its rate). Every figure is a cached read: `file.cold`
//! measures the device.

use super::{Workspace, c_path, last_error};
use crate::mem::sweep_point;
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::Runner;
use latlab_engine::names::key;
use latlab_engine::units::format_bytes;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "file.read",
    method: "open+read+close of a whole cached file vs pread on an open descriptor, 1 B … 10 MiB",
    timing: crate::Timing::LessEmptyLoop,
    results: &[
        "file.read/open-read-close/{size}",
        "file.read/pread/{size}",
        "file.read/open-close",
        "file.read/per-byte",
    ],
    typical: Typical::quick_full(1.00, 6.3),
    extras: crate::Extras {
        options: &[&super::DIR_OPTION],
        ..crate::Extras::NONE
    },
    presentation: latlab_engine::presentation::Presentation {
        plots: &[super::BY_SIZE],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// The cost of one more byte, derived from the sweep's largest sizes.
const PER_BYTE: &str = "file.read/per-byte";
/// The slope is taken from this size up, where the per-byte cost dominates.
const SLOPE_FROM: u64 = 64 << 10;
/// The open/close cost is taken up to this size, where the read is small beside it and the
/// difference of two medians is not lost in the read's own noise.
const OPEN_CLOSE_UP_TO: u64 = 64 << 10;

/// Fills `buffer` with calls of `read(rest, offset)` (a `read` or `pread` of the unfilled
/// rest at that file offset); false on an error or a file shorter than the buffer.
#[inline(always)]
fn fill(buffer: &mut [u8], mut read: impl FnMut(&mut [u8], usize) -> isize) -> bool {
    let mut done = 0;
    while done < buffer.len() {
        let got = read(&mut buffer[done..], done);
        if got <= 0 {
            return false;
        }
        done += got as usize;
    }
    true
}

/// Reads the whole of `buffer` from `fd`'s current position.
#[inline]
fn read_all(fd: libc::c_int, buffer: &mut [u8]) -> bool {
    // SAFETY: the destination is the unfilled rest of `buffer`, of the length passed.
    fill(buffer, |rest, _| unsafe {
        libc::read(fd, rest.as_mut_ptr().cast(), rest.len())
    })
}

/// Reads the whole of `buffer` from offset 0 of `fd` with `pread`.
#[inline]
fn pread_all(fd: libc::c_int, buffer: &mut [u8]) -> bool {
    // SAFETY: as above; the offset is how much is already read.
    fill(buffer, |rest, offset| unsafe {
        libc::pread(
            fd,
            rest.as_mut_ptr().cast(),
            rest.len(),
            offset as libc::off_t,
        )
    })
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let workspace = Workspace::create(ctx.options.path(&super::DIR_OPTION))?;
    let fs = workspace.fs_type().to_string();
    let location = workspace.location();
    let sizes = super::sizes();
    let mut buffer = vec![0u8; *sizes.last().expect("sizes") as usize];
    let (mut whole, mut positioned) = (Vec::new(), Vec::new());
    // Stopped part-way (a disk filling, Ctrl-C), the sizes measured before are kept.
    let mut out_of_time = None;
    let swept = ctx.runner.scoped(sweep_point, |runner| {
        let mut clock = crate::sweep_time::PointClock::start();
        for &size in &sizes {
            let label = format_bytes(size as f64);
            // A file twice as large takes up to twice as long to write and read.
            if !positioned.is_empty() && !runner.config().has_time_for(clock.last * 2) {
                out_of_time = Some(label);
                break;
            }
            clock.point_begins();
            let buffer = &mut buffer[..size as usize];
            let (one_whole, one_positioned) = read_size(runner, &workspace, size, buffer)?;
            whole.push(one_whole);
            positioned.push(one_positioned);
            clock.point_ended();
        }
        Ok::<_, ProbeError>(())
    });
    crate::sweep_time::note_left_out(
        &mut positioned,
        "file.read sizes from",
        out_of_time.as_slice(),
    );
    let derived = derived(&sizes[..positioned.len()], &whole, &positioned);
    // The slope from 64 KiB needs two sizes there: where the budget stopped the sweep short
    // of them, per-byte was left out with them, and is said so.
    if out_of_time.is_some() && !derived.iter().any(|r| r.name == PER_BYTE) {
        crate::sweep_time::note_left_out(&mut positioned, "file.read", &["per-byte".into()]);
    }
    let mut results: Vec<BenchResult> = whole.into_iter().chain(positioned).collect();
    results.extend(derived);
    let results = results
        .into_iter()
        .map(|r| {
            r.with_parameter(crate::file::FILE_SYSTEM, &fs)
                .with_parameter(crate::file::DIRECTORY, &location)
                .with_parameter(
                    crate::file::CACHE,
                    "page cache (the file was just written and read)",
                )
        })
        .collect();
    match swept {
        Ok(()) => Ok(results),
        Err(stopped) => Err(stopped.after(results)),
    }
}

/// One size's two reads of a fresh file of `size` bytes into `buffer`: opened, read and
/// closed, and read with pread on an open descriptor.
fn read_size(
    runner: &mut Runner,
    workspace: &Workspace,
    size: u64,
    buffer: &mut [u8],
) -> Result<(BenchResult, BenchResult), ProbeError> {
    let label = format_bytes(size as f64);
    let path = workspace.fill(&format!("read-{size}"), size)?;
    let c = c_path(&path);
    let mut failed = false;
    let result = runner.bench(
        &format!("file.read/open-read-close/{label}"),
        &format!("open, read {size} bytes, close"),
        || {
            // SAFETY: a valid C path; the descriptor is closed below.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            failed |= fd < 0 || !read_all(fd, buffer);
            // SAFETY: our descriptor (closing -1 only fails harmlessly).
            unsafe { libc::close(fd) };
        },
    )?;
    let whole = read_of(result, size, failed, &path)?;
    // SAFETY: a valid C path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(last_error(&format!("opening {}", path.display())));
    }
    let result = runner.bench(
        &format!("file.read/pread/{label}"),
        &format!("pread {size} bytes at offset 0 on an open descriptor"),
        || failed |= !pread_all(fd, buffer),
    );
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
    let positioned = read_of(result?, size, failed, &path)?;
    #[allow(
        clippy::disallowed_methods,
        reason = "the probe's workload, in its own workspace, not an output"
    )]
    std::fs::remove_file(&path).ok();
    Ok((whole, positioned))
}

/// What the sweep's figures give: the fixed cost of open + close (open-read-close less
/// pread, at each size up to 64 KiB) and the cost of one more byte (pread's slope between
/// consecutive sizes from 64 KiB).
fn derived(sizes: &[u64], whole: &[BenchResult], positioned: &[BenchResult]) -> Vec<BenchResult> {
    let small = sizes.iter().take_while(|&&s| s <= OPEN_CLOSE_UP_TO).count();
    let open_close = BenchResult::derived(
        "file.read/open-close",
        "at each size up to 64 KiB, open-read-close less pread: the fixed cost of open + close",
        whole
            .iter()
            .zip(positioned)
            .take(small)
            .map(|(w, p)| w.summary.median - p.summary.median)
            .collect(),
        Vec::new(),
        whole.iter().take(small).map(|r| r.name.clone()).collect(),
    );
    let slopes: Vec<(f64, String)> = sizes
        .windows(2)
        .zip(positioned.windows(2))
        .filter(|(s, _)| s[0] >= SLOPE_FROM)
        .map(|(s, r)| {
            (
                (r[1].summary.median - r[0].summary.median) / (s[1] - s[0]) as f64,
                r[1].name.clone(),
            )
        })
        .collect();
    let per_byte = BenchResult::derived(
        PER_BYTE,
        "the slope of pread between consecutive sizes from 64 KiB: the cost of one more byte",
        slopes.iter().map(|s| s.0).collect(),
        Vec::new(),
        slopes.iter().map(|s| s.1.clone()).collect(),
    )
    .map(|r| r.with_bytes_per_operation(1));
    open_close.into_iter().chain(per_byte).collect()
}

/// A read of `size` bytes from `path` as a result: a throughput, by size, folded between
/// powers of two; the failure when any read in it failed.
fn read_of(
    result: BenchResult,
    size: u64,
    failed: bool,
    path: &std::path::Path,
) -> Result<BenchResult, ProbeError> {
    if failed {
        return Err(last_error(&format!("reading {}", path.display())));
    }
    Ok(result
        .with_bytes_per_operation(size)
        .with_parameter(key::SIZE_BYTES, size)
        .as_sweep_detail(super::is_sweep_detail(size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opening and closing costs something, and a big read costs more than a small one.
    #[test]
    fn open_costs_and_bytes_cost() {
        let (results, _runner) =
            crate::run_for_test(&SPEC, 5, std::time::Duration::from_micros(200));
        let median = |name: &str| crate::named(&results, name).summary.median;
        assert!(median("file.read/open-close") > 0.0);
        assert!(median("file.read/per-byte") > 0.0);
        assert!(median("file.read/pread/10MiB") > 10.0 * median("file.read/pread/1B"));
        assert!(
            results
                .iter()
                .all(|r| r.parameters.contains_key("file_system"))
        );
    }
}
