//! What a `#[bench]` function is handed: a [`Bencher`], to which it gives the closure to
//! measure.
//!
//! Benchmarks that are compared (a group with a baseline) are measured side by side, their
//! samples interleaved round by round. Each closure lives on its own function's stack, so
//! the functions are called one inside the other: the first one's `bench` calls the second
//! function, and so on, and the innermost call measures every body at once. The bodies reach
//! the innermost call as trait objects, each still a monomorphised loop of its closure.

use crate::bodies::{Calls, LONG_CALLS, Refs, Values};
use crate::registry::Benchmark;
use crate::session::Session;
use latlab_engine::host::LoopBody;
use std::cell::RefCell;

/// Hands a benchmark's closure to the harness. A `#[bench]` function that takes one must
/// call one of its `bench…` methods exactly once; one that returns a value is measured
/// without it.
pub struct Bencher<'a, 'b> {
    chain: Option<Chain<'a, 'b>>,
}

/// The benchmarks still to be called, and the bodies of those already called.
struct Chain<'a, 'b> {
    session: &'a mut Session,
    benchmark: &'a Benchmark,
    rest: &'a [Benchmark],
    pending: Vec<Pending<'b>>,
}

/// The two bodies of a benchmark that waits to be measured with the others of its set.
pub(crate) struct Pending<'b> {
    pub benchmark_name: String,
    pub short: &'b mut dyn LoopBody,
    pub long: &'b mut dyn LoopBody,
}

impl<'b> Pending<'b> {
    /// The same bodies, for a call deeper in the chain.
    fn reborrow<'c>(self) -> Pending<'c>
    where
        'b: 'c,
    {
        Pending {
            benchmark_name: self.benchmark_name,
            short: self.short,
            long: self.long,
        }
    }
}

impl<'a, 'b> Bencher<'a, 'b> {
    pub(crate) fn new(
        session: &'a mut Session,
        benchmark: &'a Benchmark,
        rest: &'a [Benchmark],
        pending: Vec<Pending<'b>>,
    ) -> Bencher<'a, 'b> {
        Bencher {
            chain: Some(Chain {
                session,
                benchmark,
                rest,
                pending,
            }),
        }
    }

    /// Measures one call of `f`. Its result goes through a value sink, so the compiler
    /// cannot delete the work for being unused; a result that owns memory is dropped inside
    /// the timed loop (use [`Bencher::with_inputs`] and [`WithInputs::bench_refs`] to leave
    /// its drop out).
    pub fn bench<F: FnMut() -> R, R>(mut self, f: F) {
        let chain = self.chain.take().expect("a Bencher is used once");
        let f = RefCell::new(f);
        let mut short = Calls::<F, 1>(&f);
        let mut long = Calls::<F, LONG_CALLS>(&f);
        chain.measure_with(&mut short, &mut long);
    }

    /// Makes each call's input with `setup`, outside the timed loop: inputs are made in
    /// batches before each timed batch.
    pub fn with_inputs<S: FnMut() -> I, I>(self, setup: S) -> WithInputs<'a, 'b, S> {
        WithInputs {
            bencher: self,
            setup,
        }
    }
}

impl Chain<'_, '_> {
    fn measure_with(self, short: &mut dyn LoopBody, long: &mut dyn LoopBody) {
        let Chain {
            session,
            benchmark,
            rest,
            pending,
        } = self;
        let mut pending: Vec<Pending<'_>> = pending.into_iter().map(Pending::reborrow).collect();
        pending.push(Pending {
            benchmark_name: benchmark.name.clone(),
            short,
            long,
        });
        session.next(rest, pending);
    }
}

impl Drop for Bencher<'_, '_> {
    /// A benchmark that returned without calling `bench` is a mistake in it: say so, and go
    /// on with the rest of its set.
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        if let Some(chain) = self.chain.take() {
            chain.session.fail(
                &chain.benchmark.name,
                "the benchmark returned without calling Bencher::bench".into(),
            );
            chain.session.next(chain.rest, chain.pending);
        }
    }
}

/// A benchmark whose calls each take an input made outside the timed loop.
pub struct WithInputs<'a, 'b, S> {
    bencher: Bencher<'a, 'b>,
    setup: S,
}

impl<S> WithInputs<'_, '_, S> {
    /// Measures `f`, each call given a fresh input by value (a vector to sort, a map to fill).
    /// Outputs that need dropping are dropped after the timed batch.
    pub fn bench_values<I, F: FnMut(I) -> R, R>(self, f: F)
    where
        S: FnMut() -> I,
    {
        let WithInputs { mut bencher, setup } = self;
        let chain = bencher.chain.take().expect("a Bencher is used once");
        let state = RefCell::new((setup, f));
        let mut short = Values::<S, F, 1>(&state);
        let mut long = Values::<S, F, LONG_CALLS>(&state);
        chain.measure_with(&mut short, &mut long);
    }

    /// Measures `f`, each call given a mutable reference to a fresh input; inputs and
    /// outputs are dropped after the timed batch.
    pub fn bench_refs<I, F: FnMut(&mut I) -> R, R>(self, f: F)
    where
        S: FnMut() -> I,
    {
        let WithInputs { mut bencher, setup } = self;
        let chain = bencher.chain.take().expect("a Bencher is used once");
        let state = RefCell::new((setup, f));
        let mut short = Refs::<S, F, 1>(&state);
        let mut long = Refs::<S, F, LONG_CALLS>(&state);
        chain.measure_with(&mut short, &mut long);
    }
}
