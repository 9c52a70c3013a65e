//! The harness's features as a divan or criterion user looks for them: throughput, threads,
//! generic benchmarks, and (in the comments at the end) baselines as a CI gate.
//!
//! `cargo bench -p latlab-bench --bench features`

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]
use latlab_bench::{Bencher, black_box};
use std::sync::atomic::{AtomicU64, Ordering};

fn main() {
    latlab_bench::main();
}

/// Throughput: what one call processes, reported as a rate beside its time.
mod throughput {
    use super::*;

    /// A checksum of a 64 KiB buffer: GB/s (criterion's `Throughput::Bytes`, divan's
    /// `counter(BytesCount)`).
    #[latlab_bench::bench]
    fn checksum_64kib(b: Bencher) {
        let data: Vec<u8> = (0..65536u32).map(|i| i as u8).collect();
        b.bytes(data.len() as u64).bench(|| {
            black_box(&data)
                .iter()
                .fold(0u32, |sum, &x| sum.rotate_left(3) ^ u32::from(x))
        });
    }

    /// Sorting 1,024 shuffled numbers, each call given a fresh copy: Melem/s (criterion's
    /// `Throughput::Elements`, divan's `counter(ItemsCount)`).
    #[latlab_bench::bench]
    fn sort_1024(b: Bencher) {
        let shuffled: Vec<u32> = (0..1024u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        b.items(1024)
            .with_inputs(|| shuffled.clone())
            .bench_refs(|v| v.sort_unstable());
    }
}

/// Threads: the same benchmark on 1, 2 and 4 threads at once (divan's `threads = [..]`);
/// run it with `--pin 0` to give each thread a CPU of its own.
mod threads {
    use super::*;

    static SHARED: AtomicU64 = AtomicU64::new(0);

    /// One atomic add to a counter all threads share: its cache line passes between cores.
    #[latlab_bench::bench(threads = [1, 2, 4])]
    fn shared_counter() -> u64 {
        SHARED.fetch_add(1, Ordering::Relaxed)
    }

    /// The same add to a counter of each thread's own: no line passes, whatever the threads.
    #[latlab_bench::bench(threads = [1, 2, 4])]
    fn own_counter(b: Bencher) {
        let own = AtomicU64::new(0);
        b.bench(|| own.fetch_add(1, Ordering::Relaxed));
    }
}

/// Generic benchmarks: one per type (divan's `types = [..]`), here combined with arguments.
mod generic {
    use super::*;

    /// Summing `n` numbers of each type, as an item rate: the integers vectorise, the
    /// floating-point sum keeps its order and cannot.
    #[latlab_bench::bench(types = [u32, u64, f64], args = [64, 4096])]
    fn sum<T: Copy + From<u8> + std::iter::Sum<T>>(b: Bencher, n: usize) {
        let data: Vec<T> = (0..n).map(|i| T::from(i as u8)).collect();
        b.items(n as u64)
            .bench(|| black_box(&data).iter().copied().sum::<T>());
    }
}

// Baselines as a CI gate (criterion's `--save-baseline` and `--baseline`), from the shell:
//
//   cargo bench --bench features -- --save-baseline main        # on the main branch
//   cargo bench --bench features -- --add-to-baseline main      # later: a second run of it
//   cargo bench --bench features -- --baseline main --fail-if-slower 10   # on the change
//
// The last exits with status 1, naming each benchmark, when one is slower than the
// baseline by more than 10% and beyond the noise between the baseline's runs.
