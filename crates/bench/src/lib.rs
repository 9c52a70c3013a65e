//! Benchmark your own Rust code with latlab's engine.
//!
//! In `Cargo.toml`:
//!
//! ```toml
//! [dev-dependencies]
//! latlab-bench = "0.1"
//!
//! [[bench]]
//! name = "lists"
//! harness = false
//! ```
//!
//! In `benches/lists.rs`:
//!
//! ```ignore
//! use latlab_bench::Bencher;
//!
//! fn main() {
//!     latlab_bench::main();
//! }
//!
//! // A function that returns a value: its result goes through a value sink.
//! #[latlab_bench::bench(args = [16, 1024, 65536])]
//! fn with_capacity(n: usize) -> Vec<u64> {
//!     let mut v = Vec::with_capacity(n);
//!     v.extend(0..n as u64);
//!     v
//! }
//!
//! // One that makes its input outside the timed loop, and reports items per second.
//! #[latlab_bench::bench(args = [16, 1024])]
//! fn sort(b: Bencher, n: usize) {
//!     b.items(n as u64)
//!         .with_inputs(|| (0..n as u64).rev().collect::<Vec<_>>())
//!         .bench_refs(|v| v.sort());
//! }
//!
//! // One benchmark per type, named `default/u64`, `default/Vec<u8>`.
//! #[latlab_bench::bench(types = [u64, Vec<u8>])]
//! fn default<T: Default>() -> T {
//!     T::default()
//! }
//! ```
//!
//! `cargo bench` measures them all, `cargo bench -- PATTERN` those whose name matches, and
//! `cargo bench -- --help` lists the options (`--list`, `--json`, `--samples`, `--pin`,
//! `--save-baseline`, `--baseline` …).
//!
//! **How each benchmark is measured.** Each gets its own monomorphised loop; the iteration
//! count doubles until one sample lasts the target time; each result goes through a value
//! sink. The figure per call is the slope between a loop that calls the function once per
//! turn and one that calls it four times (4 and 16 for a call under 20 ns), so the loop's
//! own instructions cancel exactly, and the longer loop is judged against an empty loop:
//! work the compiler deleted is reported as optimised away, not as a figure.
//! [`Bencher::bench_chained`] times a dependent chain, its state kept in registers.
//!
//! The book's "Benchmark your own code" (`docs/src/harness.md`) says the rest: profiles
//! (`--profile`), allocations ([`CountingAllocator`]) and instruction counts (`--count`),
//! the features and their build time, and benchmarks compared side by side with a
//! `baseline`.

// Tests read and write files as they please: the doors are for what latlab itself does.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
#[cfg(feature = "files")]
mod against;
mod alloc;
#[cfg(feature = "files")]
mod baselines;
mod bencher;
mod bodies;
mod count;
mod harness;
mod measured;
mod options;
#[cfg(all(feature = "profile", any(target_os = "linux", target_os = "android")))]
mod profile;
#[cfg(all(
    feature = "profile",
    not(any(target_os = "linux", target_os = "android"))
))]
#[path = "profile/unavailable.rs"]
mod profile;
mod registry;
mod session;
mod sets;
mod text;
mod threads;
mod watchdog;

pub use alloc::CountingAllocator;
pub use bencher::{Bencher, WithInputs};
pub use latlab_bench_macros::bench;
pub use std::hint::black_box;

/// Runs the benchmarks of this binary as its command line says, and exits: status 0 when
/// every selected benchmark ran, 1 when one failed, 2 for bad arguments.
pub fn main() -> ! {
    latlab_engine::signals::fail_oversized_writes();
    let code = harness::run(std::env::args_os());
    std::process::exit(code)
}

/// What the `#[bench]` attribute expands to refers to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::registry::{BENCHMARKS, Entry};
    pub use linkme;
}
