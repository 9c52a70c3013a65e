//! `file.cold`: reads that bypass the page cache (`O_DIRECT`), where the file system allows
//! it.
//!
//! A 64 MiB file is written and synced, then read with `O_DIRECT` into a page-aligned
//! buffer, so every read goes to the device:
//!
//! * `random-4KiB`: `pread` of 4 KiB at a random 4 KiB-aligned offset;
//! * `sequential/{size}`: `pread` of 64 KiB, 1 MiB and 8 MiB at successive offsets,
//!   wrapping at the end of the file.
//!
//! What "the device" is depends on the machine: a VM's virtual disk may be cached by its
//! host, which no guest can see or prevent. A file system that refuses `O_DIRECT` (tmpfs)
//! has no device to read: the probe is then skipped, saying that only cached reads
//! (`file.read`) were measured.

use super::{Workspace, c_path, last_error};
use crate::mem::{headline_point, sweep_point};
use crate::random::SplitMix64;
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::presentation::{HeadlineRow, Presentation, Source, Template};
use latlab_engine::units::format_bytes;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "file.cold",
    method: "O_DIRECT reads of a 64 MiB file: random 4 KiB, sequential 64 KiB … 8 MiB",
    timing: crate::Timing::LessEmptyLoop,
    results: &["file.cold/random-{size}", "file.cold/sequential/{size}"],
    typical: Typical::quick_full(0.25, 0.70),
    extras: crate::Extras {
        options: &[&super::DIR_OPTION],
        ..crate::Extras::NONE
    },
    presentation: Presentation {
        headline: &[
            HeadlineRow {
                order: 200,
                operation: "Read 4 KiB randomly from the file system",
                reference: Some("ssd_random_4k"),
                source: Source::Result(RANDOM_4KIB),
                qualifier: "device, O_DIRECT",
                only_with_family: false,
            },
            HeadlineRow {
                order: 230,
                operation: "Read 1 MiB sequentially from the file system",
                reference: Some("ssd_seq_1m"),
                source: Source::Result(Template("file.cold/sequential/1MiB")),
                qualifier: "device, O_DIRECT",
                only_with_family: false,
            },
        ],
        ..Presentation::NONE
    },
    run,
};

const RANDOM_4KIB: Template = Template("file.cold/random-4KiB");

/// The file read by the probe.
const FILE_BYTES: u64 = 64 << 20;
/// Alignment of O_DIRECT buffers, offsets and sizes.
const ALIGN: usize = 4096;

/// A zeroed buffer aligned for O_DIRECT.
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(len, ALIGN).expect("a valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Aligned { ptr, layout }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated by `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let workspace = Workspace::create(ctx.options.path(&super::DIR_OPTION))?;
    let fs = workspace.fs_type().to_string();
    let path = workspace.fill("cold", FILE_BYTES)?;
    let c = c_path(&path);
    // SAFETY: a valid C path; closed at the end.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECT | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) {
            return Err(ProbeError::Skipped(format!(
                "{fs} at {} does not support O_DIRECT, so only cached reads (file.read) were \
                 measured; give --dir a directory on a disk to read the device",
                workspace.location()
            )));
        }
        return Err(last_error(&format!(
            "opening {} with O_DIRECT",
            path.display()
        )));
    }
    let outcome = measure(ctx, fd);
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
    Ok(outcome?
        .into_iter()
        .map(|r| {
            r.with_parameter(crate::file::FILE_SYSTEM, &fs)
                .with_parameter(crate::file::DIRECTORY, workspace.location())
                .with_parameter(
                    crate::file::CACHE,
                    "bypassed (O_DIRECT); a VM host may still cache",
                )
        })
        .collect())
}

fn measure(ctx: &mut ProbeContext, fd: libc::c_int) -> Result<Vec<BenchResult>, ProbeError> {
    let buffer = Aligned::new(8 << 20);
    let mut results = Vec::new();
    let mut failed = false;
    let mut offsets = SplitMix64::seeded(0x9e37_79b9_7f4a_7c15);
    let read = |len: usize, offset: u64| -> bool {
        // SAFETY: the buffer holds at least `len` bytes; offset and length are aligned.
        unsafe { libc::pread(fd, buffer.ptr.cast(), len, offset as libc::off_t) == len as isize }
    };
    ctx.runner.scoped(sweep_point, |runner| {
        // The headline reads the random 4 KiB and the 1 MiB sequential reads.
        let random = runner.scoped(headline_point(true), |runner| {
            runner.bench(
                RANDOM_4KIB.as_str(),
                "pread O_DIRECT of 4 KiB at a random aligned offset of a 64 MiB file",
                || {
                    failed |= !read(
                        ALIGN,
                        offsets.below(FILE_BYTES / ALIGN as u64) * ALIGN as u64,
                    )
                },
            )
        })?;
        results.push(random.with_bytes_per_operation(ALIGN as u64));
        for len in [64usize << 10, 1 << 20, 8 << 20] {
            let mut offset = 0u64;
            let sequential = runner.scoped(headline_point(len == 1 << 20), |runner| {
                runner.bench(
                    &format!("file.cold/sequential/{}", format_bytes(len as f64)),
                    &format!("pread O_DIRECT of {len} bytes at successive offsets"),
                    || {
                        failed |= !read(len, offset);
                        offset = (offset + len as u64) % FILE_BYTES;
                    },
                )
            })?;
            results.push(sequential.with_bytes_per_operation(len as u64));
        }
        Ok::<_, ProbeError>(())
    })?;
    if failed {
        return Err(last_error("an O_DIRECT read"));
    }
    Ok(results)
}
