//! What a `#[bench]` function is handed: a [`Bencher`], to which it gives the closure to
//! measure.
//!
//! Benchmarks that are compared (a group with a baseline) are measured side by side, their
//! samples interleaved round by round. Each closure lives on its own function's stack, so
//! the functions are called one inside the other: the first one's `bench` calls the second
//! function, and so on, and the innermost call measures every body at once. The bodies reach
//! the innermost call as trait objects, each still a monomorphised loop of its closure.

use crate::bodies::{CHEAP_CALL_NS, Calls, Chained, Refs, Values};
use latlab_engine::Clock;
use latlab_engine::host::LoopBody;
use std::cell::RefCell;

/// One benchmark: a function with one of its arguments.
pub(crate) struct Benchmark {
    /// Runs it with the argument at `arg_index`.
    pub run: fn(Bencher<'_, '_>, usize),
    /// Whether the group's other benchmarks are compared with this one.
    pub baseline: bool,
    pub group: String,
    /// `group/function` or `group/function/argument` (without the group when it is empty).
    pub name: String,
    pub arg_index: usize,
    /// The argument's label, when the function takes one.
    pub arg: Option<String>,
    /// How many threads run it at once, for a benchmark of `threads = [..]`.
    pub threads: Option<usize>,
}

/// What a [`Bencher`] hands its set back to once its benchmark has given its closure (or
/// failed to): the session measuring the set, which calls the next benchmark of the set or,
/// after the last, measures the bodies gathered.
pub(crate) trait SetRunner {
    /// Calls the next of `rest` with the bodies gathered so far, or measures them.
    fn next(&mut self, rest: &[Benchmark], pending: Vec<Pending<'_>>);
    /// Records that benchmark `name` failed, and why.
    fn fail(&mut self, name: &str, reason: String);
}

/// Hands a benchmark's closure to the harness. A `#[bench]` function that takes one must
/// call one of its `bench…` methods exactly once; one that returns a value is measured
/// without it.
///
/// A sort of 1,000 integers, each call given a fresh reversed vector made outside the timed
/// loop, in a bench target's `main` as `cargo bench` runs it:
///
/// ```
/// use latlab_bench::Bencher;
///
/// #[latlab_bench::bench]
/// fn sort(b: Bencher) {
///     b.with_inputs(|| (0..1000u64).rev().collect::<Vec<_>>())
///         .bench_refs(|v| v.sort());
/// }
///
/// fn main() {
///     // Under `cargo bench` (`--bench`) this measures `sort` and prints its line; under
///     // `cargo test`, as here, it calls `sort` once to check that it runs. Either way it
///     // exits: status 0 when it ran.
///     latlab_bench::main();
/// }
/// ```
pub struct Bencher<'a, 'b> {
    chain: Option<Chain<'a, 'b>>,
}

/// The benchmarks still to be called, and the bodies of those already called.
struct Chain<'a, 'b> {
    session: &'a mut dyn SetRunner,
    benchmark: &'a Benchmark,
    rest: &'a [Benchmark],
    pending: Vec<Pending<'b>>,
    throughput: Option<Throughput>,
}

/// What one call processes, declared with [`Bencher::bytes`] or [`Bencher::items`]: its
/// result is then also a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Throughput {
    Bytes(u64),
    Items(u64),
}

/// The bodies of a benchmark that waits to be measured with the others of its set: 1, 4
/// and 16 calls a turn.
pub(crate) struct Pending<'b> {
    pub benchmark_name: String,
    pub throughput: Option<Throughput>,
    pub one: &'b mut dyn LoopBody,
    pub four: &'b mut dyn LoopBody,
    pub sixteen: &'b mut dyn LoopBody,
}

/// How a benchmark's call is timed, from what it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cost {
    /// Under [`CHEAP_CALL_NS`]: the slope between 4 and 16 calls a turn.
    Cheap,
    /// The slope between 1 and 4 calls a turn.
    Normal,
    /// So long that even the slope's fewest samples would overrun the budget: one call a
    /// sample, timed directly (the loop's overhead, nanoseconds, is far below its noise).
    Slow,
}

/// The two bodies a benchmark's slope is taken between, with their calls per turn.
pub(crate) struct Pair<'p> {
    pub short: (u64, &'p mut dyn LoopBody),
    pub long: (u64, &'p mut dyn LoopBody),
}

impl<'b> Pending<'b> {
    /// The same bodies, for a call deeper in the chain.
    fn reborrow<'c>(self) -> Pending<'c>
    where
        'b: 'c,
    {
        Pending {
            benchmark_name: self.benchmark_name,
            throughput: self.throughput,
            one: self.one,
            four: self.four,
            sixteen: self.sixteen,
        }
    }

    /// How a call of this benchmark is timed, from what one costs: the one-call body timed
    /// for doubling turns until a run lasts 20 µs. A call cheaper than [`CHEAP_CALL_NS`] is
    /// cheap; one of `slow_ns` or more is slow. Also the time of a call as the last run saw
    /// it: a slow call's is that of one call alone (20 µs or more, it ends the first run).
    pub fn cost(&mut self, clock: &Clock, slow_ns: f64) -> (Cost, f64) {
        let mut turns = 1;
        loop {
            let ns = clock.ticks_to_ns(self.one.time(clock, turns));
            if ns >= 20_000.0 || turns >= 1 << 24 {
                let per_call = ns / turns as f64;
                let cost = if per_call < CHEAP_CALL_NS {
                    Cost::Cheap
                } else if per_call >= slow_ns {
                    Cost::Slow
                } else {
                    Cost::Normal
                };
                return (cost, per_call);
            }
            turns *= 2;
        }
    }

    /// The body whose allocations are counted: the longer of the pair, or the one-call body
    /// of a slow benchmark, with its calls per turn.
    pub fn counted(&mut self, cost: Cost) -> (u64, &mut dyn LoopBody) {
        match cost {
            Cost::Slow => (1, &mut *self.one),
            _ => self.pair(cost).long,
        }
    }

    /// The pair of bodies a benchmark of this cost is timed with (a slow one's slope is
    /// not taken; its pair serves its profile).
    pub fn pair(&mut self, cost: Cost) -> Pair<'_> {
        if cost == Cost::Cheap {
            Pair {
                short: (4, &mut *self.four),
                long: (16, &mut *self.sixteen),
            }
        } else {
            Pair {
                short: (1, &mut *self.one),
                long: (4, &mut *self.four),
            }
        }
    }
}

impl<'a, 'b> Bencher<'a, 'b> {
    pub(crate) fn new(
        session: &'a mut dyn SetRunner,
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
                throughput: None,
            }),
        }
    }

    /// Declares that one call processes `n` bytes: the result is also given as a rate (GB/s
    /// in the table, `bytes_per_second` in the JSON's Google Benchmark rows). Chain it before
    /// the `bench…` call: `b.bytes(len as u64).bench(|| checksum(&data))`.
    pub fn bytes(mut self, n: u64) -> Self {
        self.declare(Throughput::Bytes(n));
        self
    }

    /// Declares that one call processes `n` items (elements sorted, messages parsed): the
    /// result is also given as a rate (Melem/s in the table, `items_per_second` in the
    /// JSON's Google Benchmark rows).
    pub fn items(mut self, n: u64) -> Self {
        self.declare(Throughput::Items(n));
        self
    }

    fn declare(&mut self, throughput: Throughput) {
        if let Some(chain) = &mut self.chain {
            chain.throughput = Some(throughput);
        }
    }

    /// Measures one call of `f`. Its result goes through a value sink, so the compiler
    /// cannot delete the work for being unused; a result that owns memory is dropped inside
    /// the timed loop (use [`Bencher::with_inputs`] and [`WithInputs::bench_refs`] to leave
    /// its drop out).
    pub fn bench<F: FnMut() -> R, R>(mut self, f: F) {
        let chain = self.chain.take().expect("a Bencher is used once");
        let f = RefCell::new(f);
        let mut one = Calls::<F, 1>(&f);
        let mut four = Calls::<F, 4>(&f);
        let mut sixteen = Calls::<F, 16>(&f);
        chain.measure_with(&mut one, &mut four, &mut sixteen);
    }

    /// Measures `f` as a dependency chain: the first call is given `seed`, each later call the
    /// previous call's result, so no call can start before the last has finished. This is
    /// the latency of `f`, where [`Bencher::bench`] gives its cost when calls may overlap.
    ///
    /// Use it, not a closure that updates a captured variable, to time a short chain: a
    /// captured variable lives in memory, and storing and reloading it adds a few cycles to
    /// every call, while the chain's state stays in registers. Only the last result goes
    /// through the value sink, so a function the compiler can see through (`|x| x + 1`) may
    /// be folded away, and is then reported as optimised away.
    pub fn bench_chained<T, F: FnMut(T) -> T>(mut self, seed: T, f: F) {
        let chain = self.chain.take().expect("a Bencher is used once");
        let state = RefCell::new((f, Some(seed)));
        let mut one = Chained::<F, T, 1>(&state);
        let mut four = Chained::<F, T, 4>(&state);
        let mut sixteen = Chained::<F, T, 16>(&state);
        chain.measure_with(&mut one, &mut four, &mut sixteen);
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
    fn measure_with(
        self,
        one: &mut dyn LoopBody,
        four: &mut dyn LoopBody,
        sixteen: &mut dyn LoopBody,
    ) {
        let Chain {
            session,
            benchmark,
            rest,
            pending,
            throughput,
        } = self;
        let mut pending: Vec<Pending<'_>> = pending.into_iter().map(Pending::reborrow).collect();
        pending.push(Pending {
            benchmark_name: benchmark.name.clone(),
            throughput,
            one,
            four,
            sixteen,
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
        let mut one = Values::<S, F, 1>::new(&state);
        let mut four = Values::<S, F, 4>::new(&state);
        let mut sixteen = Values::<S, F, 16>::new(&state);
        chain.measure_with(&mut one, &mut four, &mut sixteen);
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
        let mut one = Refs::<S, F, 1>::new(&state);
        let mut four = Refs::<S, F, 4>::new(&state);
        let mut sixteen = Refs::<S, F, 16>::new(&state);
        chain.measure_with(&mut one, &mut four, &mut sixteen);
    }
}
