//! `mem.alloc`: allocating a small heap block and freeing it again, by size.
//!
//! `Vec::with_capacity` asks Rust's global allocator (the system `malloc`) for uninitialised
//! memory, and dropping the vector frees it, inside the timed loop; the block's address goes
//! through a value sink so neither call can be elided. Allocating and freeing the same size
//! repeatedly is the allocator's fast path (glibc's per-thread cache): the figure is a lower
//! bound for allocations in real programs, whose heaps are fragmented and contended.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use std::hint::black_box;

const ALLOCATOR: Key = Key::new("allocator");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.alloc",
    method: "heap allocation and free of one small block (16 B, 128 B, 1 KiB) through malloc",
    timing: crate::Timing::LessEmptyLoop,
    results: &["mem.alloc/{size}"],
    typical: Typical::quick_full(0.31, 2.5),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

const SIZES: [(usize, &str); 3] = [(16, "16B"), (128, "128B"), (1024, "1KiB")];

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    SIZES
        .iter()
        .map(|&(size, label)| {
            let result = ctx
                .runner
                .bench(
                    &format!("mem.alloc/{label}"),
                    &format!("Vec::<u8>::with_capacity({size}) then drop: malloc + free"),
                    move || Vec::<u8>::with_capacity(black_box(size)),
                )?
                .with_parameter(key::SIZE_BYTES, size)
                .with_parameter(ALLOCATOR, "Rust global allocator (system malloc)");
            Ok(result)
        })
        .collect()
}
