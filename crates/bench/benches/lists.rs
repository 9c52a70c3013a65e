//! The worked example: a list built three ways, and a map looked up two ways, by size.
//!
//! `cargo bench -p latlab-bench --bench lists`

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]
use latlab_bench::{Bencher, black_box};
use std::collections::{BTreeMap, HashMap};

fn main() {
    latlab_bench::main();
}

// Counts each benchmark's allocations and bytes per call.
#[global_allocator]
static ALLOC: latlab_bench::CountingAllocator = latlab_bench::CountingAllocator::system();

/// Building a list of `n` numbers: into a vector given its capacity first (the baseline),
/// into one that grows as it is pushed to, and into a fixed-size array.
mod build {
    #[latlab_bench::bench(baseline, args = [16, 1024, 65536])]
    fn with_capacity(n: usize) -> Vec<u64> {
        let mut v = Vec::with_capacity(n);
        for i in 0..n as u64 {
            v.push(i);
        }
        v
    }

    #[latlab_bench::bench(args = [16, 1024, 65536])]
    fn push_grow(n: usize) -> Vec<u64> {
        let mut v = Vec::new();
        for i in 0..n as u64 {
            v.push(i);
        }
        v
    }

    /// A boxed array filled in place: no growth, one allocation of the final size.
    #[latlab_bench::bench(args = [16, 1024, 65536])]
    fn fixed_array(n: usize) -> Box<[u64]> {
        let mut a = vec![0u64; n].into_boxed_slice();
        for (i, slot) in a.iter_mut().enumerate() {
            *slot = i as u64;
        }
        a
    }
}

/// Looking up a key present in a map of `n` entries: a hash map (the baseline) and a B-tree.
mod lookup {
    use super::*;

    fn keys(n: usize) -> Vec<u64> {
        (0..n as u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect()
    }

    #[latlab_bench::bench(baseline, args = [16, 1024, 65536])]
    fn hash_map(b: Bencher, n: usize) {
        let keys = keys(n);
        let map: HashMap<u64, u64> = keys.iter().map(|&k| (k, k)).collect();
        let mut i = 0;
        b.bench(|| {
            i = (i + 1) % keys.len();
            map.get(black_box(&keys[i])).copied()
        });
    }

    #[latlab_bench::bench(args = [16, 1024, 65536])]
    fn btree_map(b: Bencher, n: usize) {
        let keys = keys(n);
        let map: BTreeMap<u64, u64> = keys.iter().map(|&k| (k, k)).collect();
        let mut i = 0;
        b.bench(|| {
            i = (i + 1) % keys.len();
            map.get(black_box(&keys[i])).copied()
        });
    }
}
