//! The latlab measurement engine.
//!
//! This crate knows how to time a piece of code honestly and nothing about what latlab
//! measures: probes, the command line and the exporters live elsewhere. Someone benchmarking
//! their own functions can depend on it alone.
//!
//! The path of one benchmark through the engine:
//!
//! 0. A [`Host`] is the machine: [`RealHost`] this one, [`SyntheticHost`] an imaginary one
//!    whose figures are the same everywhere (for testing whatever renders results).
//! 1. [`clock`] picks the cheapest trustworthy clock (an invariant TSC read with fences on
//!    x86-64, `CNTVCT_EL0` on aarch64, `CLOCK_MONOTONIC_RAW` otherwise), calibrates it and
//!    measures its own resolution and the cost of an empty timed region.
//! 2. [`Runner::bench`] hands the benchmark to the host's timer, which times the first, cold
//!    call on its own, doubles the iteration count until one sample lasts long enough to
//!    dwarf the clock's resolution, then takes samples, alternating with samples of the same
//!    loop with an empty body.
//! 3. [`analysis`] subtracts the empty loop, summarises the samples ([`stats`]), decides
//!    whether the work was optimised away, and attaches warnings: typed facts with their
//!    figures, which the front ends phrase.
//! 4. The outcome is a [`model::BenchResult`]: one serialisable record with the raw samples.
//!
//! [`environment`] records the machine and [`isolation`] the controls (CPU pinning, memory
//! locking, real-time priority, the lock between concurrent runs) that make a run trustworthy.

// Tests read and write files as they please: the doors are for what latlab itself does.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
pub mod analysis;
pub mod budget;
pub mod clock;
mod config;
pub mod config_text;
pub mod cycle;
pub mod environment;
pub mod host;
pub mod isolation;
pub mod locks;
pub mod model;
pub mod names;
pub mod parameters;
pub mod presentation;
pub mod result_names;
pub mod rounds;
mod runner;
pub mod signals;
pub mod stats;
pub mod sys;
pub mod units;
mod usage;

pub use clock::{Clock, ClockInfo, ClockKind};
pub use config::{Config, Interrupted, MIN_SAMPLES, Suite};
pub use host::{Host, RealHost, SharedHost, SyntheticHost};
pub use model::{BenchResult, Verdict, Warning};
pub use runner::{Listener, Runner};
pub use usage::{THREAD_CPU_TIME, THREAD_USAGE, thread_cpu_ns};

/// How a control or a count that only some systems have says it is missing on this one.
pub const NOT_AVAILABLE: &str = "not available on this system";
