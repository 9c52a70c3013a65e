//! The measured loops of a benchmark, as the engine's timer sees them ([`LoopBody`]).
//!
//! Every benchmark is timed by slope: one body calls the function a few times per turn of
//! the loop, another four times as often, and the figure is the difference per extra call.
//! The loop's own instructions are the same in both and cancel, even where the core runs them
//! beside a short dependent chain; an empty loop subtracted instead would under-report it.
//! Each body is a monomorphised loop of the user's closure: no dynamic call inside it.
//!
//! Which pair of bodies: 1 and 4 calls a turn, or for a call cheaper than [`CHEAP_CALL_NS`]
//! 4 and 16. A turn of one cheap call can take longer than the call itself (a taken branch
//! per turn that the front end cannot sustain beside a one-cycle chain), so time is not yet
//! linear in the calls; from four calls a turn it is.

use crate::alloc::timed_region;
use latlab_engine::host::LoopBody;
use latlab_engine::{Clock, thread_cpu_ns};
use std::cell::RefCell;
use std::hint::black_box;
use std::mem::needs_drop;
use std::time::{Duration, Instant};

/// A call cheaper than this is timed with 4 and 16 calls a turn, a dearer one with 1 and 4.
pub(crate) const CHEAP_CALL_NS: f64 = 20.0;

/// Inputs made ahead of one timed batch are capped at this many bytes, so that a
/// benchmark's inputs stay in the caches and a long sample does not need memory for all its
/// inputs at once.
const INPUT_BATCH_BYTES: usize = 64 * 1024;
/// ... and at this many loop turns, so that a batch's clock reads stay below a few
/// hundredths of a nanosecond per turn.
const MAX_BATCH_TURNS: u64 = 1024;
/// ... and to the inputs made in this long: the bytes cap sees an input's own size, not
/// what it owns (a `Vec` of 8 KiB is 24 bytes to it), and a batch of a thousand such inputs
/// would leave the caches and fault its pages in afresh every batch.
const MAX_BATCH_SETUP: Duration = Duration::from_micros(50);

/// `K` calls of a closure per turn of the loop. The closure is shared with the benchmark's
/// other body; each sample borrows it for its duration.
pub(crate) struct Calls<'c, F, const K: u64>(pub &'c RefCell<F>);

impl<F: FnMut() -> R, R, const K: u64> LoopBody for Calls<'_, F, K> {
    fn time(&mut self, clock: &Clock, iterations: u64) -> u64 {
        let mut f = self.0.borrow_mut();
        timed_region(|| {
            clock.time_loop(iterations, &mut || {
                for _ in 1..K {
                    black_box(f());
                }
                f()
            })
        })
    }

    fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64 {
        clock.time_loop(iterations, &mut || ())
    }

    fn operations(&self) -> u64 {
        K
    }
}

/// `K` calls of a closure per turn, each given the previous call's result: one dependency
/// chain through the whole sample. The state is taken out for each sample and lives in the
/// timed loop's registers; the closure is shared with the benchmark's other body.
pub(crate) struct Chained<'c, F, T, const K: u64>(pub &'c RefCell<(F, Option<T>)>);

impl<F: FnMut(T) -> T, T, const K: u64> LoopBody for Chained<'_, F, T, K> {
    fn time(&mut self, clock: &Clock, iterations: u64) -> u64 {
        let (f, state) = &mut *self.0.borrow_mut();
        let seed = state
            .take()
            .expect("a chain's state is put back after each sample");
        let (ticks, last) = timed_region(|| {
            clock.time_chain(
                iterations,
                &mut |mut x| {
                    for _ in 0..K {
                        x = f(x);
                    }
                    x
                },
                seed,
            )
        });
        *state = Some(last);
        ticks
    }

    fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64 {
        let (_, state) = &mut *self.0.borrow_mut();
        let seed = state
            .take()
            .expect("a chain's state is put back after each sample");
        let (ticks, last) = clock.time_chain(iterations, &mut |x| x, seed);
        *state = Some(last);
        ticks
    }

    fn operations(&self) -> u64 {
        K
    }
}

/// How many turns of `K` inputs of type `I` one batch makes ahead of timing, at most.
fn batch_turns<I>(k: u64) -> u64 {
    let per_turn = (std::mem::size_of::<I>().max(1) as u64) * k;
    (INPUT_BATCH_BYTES as u64 / per_turn).clamp(1, MAX_BATCH_TURNS)
}

/// The ticks of a body's timed batches, and the CPU time spent outside them.
struct Batches {
    ticks: u64,
    untimed_cpu_ns: u64,
}

/// Times `iterations` turns in batches: before each batch (untimed) `setup` makes the
/// batch's inputs, `k` a turn, until the batch has [`batch_turns`] turns or its inputs
/// took [`MAX_BATCH_SETUP`] to make; then `timed` times the batch, and returns its ticks
/// and what it leaves to drop (the inputs, the outputs kept), dropped untimed. The CPU
/// time of making and dropping is counted apart, to be taken from the sample's.
fn in_batches<I, D>(
    iterations: u64,
    k: u64,
    setup: &mut impl FnMut() -> I,
    mut timed: impl FnMut(Vec<I>, u64) -> (u64, D),
) -> Batches {
    let mut batches = Batches {
        ticks: 0,
        untimed_cpu_ns: 0,
    };
    let most_turns = batch_turns::<I>(k);
    let mut left = iterations;
    while left > 0 {
        let making = thread_cpu_ns();
        let started = Instant::now();
        let mut inputs = Vec::new();
        let mut turns = 0;
        while turns < left.min(most_turns) && (turns == 0 || started.elapsed() < MAX_BATCH_SETUP) {
            inputs.extend((0..k).map(|_| setup()));
            turns += 1;
        }
        let made = thread_cpu_ns();
        let (ticks, leftovers) = timed(inputs, turns);
        let timed_end = thread_cpu_ns();
        drop(leftovers);
        let dropped = thread_cpu_ns();
        batches.ticks += ticks;
        batches.untimed_cpu_ns += made.saturating_sub(making) + dropped.saturating_sub(timed_end);
        left -= turns;
    }
    batches
}

/// Times `turns` turns of `K` calls of `call` (each takes the batch's next input), in a
/// counted region; returns the ticks, and the results whose drop does something, kept to
/// be dropped after the clock stops.
#[inline(always)]
fn time_batch<R, const K: u64>(
    clock: &Clock,
    turns: u64,
    mut call: impl FnMut() -> R,
) -> (u64, Vec<R>) {
    let mut kept: Vec<R> = Vec::with_capacity(kept_capacity::<R>((turns * K) as usize));
    let ticks = timed_region(|| {
        clock.time_loop(turns, &mut || {
            for _ in 0..K {
                keep_or_sink(&mut kept, call());
            }
        })
    });
    (ticks, kept)
}

/// A setup that makes one input per call, untimed, and a closure that takes it by value.
/// Outputs that need dropping are kept until the batch is timed, so their drop is not.
pub(crate) struct Values<'c, S, F, const K: u64> {
    state: &'c RefCell<(S, F)>,
    untimed_cpu_ns: u64,
}

impl<'c, S, F, const K: u64> Values<'c, S, F, K> {
    pub(crate) fn new(state: &'c RefCell<(S, F)>) -> Self {
        Values {
            state,
            untimed_cpu_ns: 0,
        }
    }
}

impl<S: FnMut() -> I, F: FnMut(I) -> R, I, R, const K: u64> LoopBody for Values<'_, S, F, K> {
    fn time(&mut self, clock: &Clock, iterations: u64) -> u64 {
        let (setup, f) = &mut *self.state.borrow_mut();
        let batches = in_batches(iterations, K, setup, |inputs, turns| {
            let mut inputs = inputs.into_iter();
            let (ticks, kept) = time_batch::<_, K>(clock, turns, || {
                f(inputs.next().expect("one input per call"))
            });
            (ticks, (kept, inputs))
        });
        self.untimed_cpu_ns = batches.untimed_cpu_ns;
        batches.ticks
    }

    fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64 {
        let (setup, _) = &mut *self.state.borrow_mut();
        let batches = in_batches(iterations, K, setup, |inputs, turns| {
            let mut inputs = inputs.into_iter();
            let (ticks, kept) =
                time_batch::<_, K>(clock, turns, || inputs.next().expect("one input per call"));
            (ticks, (kept, inputs))
        });
        self.untimed_cpu_ns = batches.untimed_cpu_ns;
        batches.ticks
    }

    fn operations(&self) -> u64 {
        K
    }

    fn untimed_cpu_ns(&self) -> u64 {
        self.untimed_cpu_ns
    }
}

/// A setup that makes one input per call, untimed, and a closure that borrows it mutably.
/// The inputs and the outputs that need dropping are dropped after the batch is timed.
pub(crate) struct Refs<'c, S, F, const K: u64> {
    state: &'c RefCell<(S, F)>,
    untimed_cpu_ns: u64,
}

impl<'c, S, F, const K: u64> Refs<'c, S, F, K> {
    pub(crate) fn new(state: &'c RefCell<(S, F)>) -> Self {
        Refs {
            state,
            untimed_cpu_ns: 0,
        }
    }
}

impl<S: FnMut() -> I, F: FnMut(&mut I) -> R, I, R, const K: u64> LoopBody for Refs<'_, S, F, K> {
    fn time(&mut self, clock: &Clock, iterations: u64) -> u64 {
        let (setup, f) = &mut *self.state.borrow_mut();
        let batches = in_batches(iterations, K, setup, |mut inputs, turns| {
            let mut next = inputs.iter_mut();
            let (ticks, kept) =
                time_batch::<_, K>(clock, turns, || f(next.next().expect("one input per call")));
            (ticks, (kept, inputs))
        });
        self.untimed_cpu_ns = batches.untimed_cpu_ns;
        batches.ticks
    }

    fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64 {
        let (setup, _) = &mut *self.state.borrow_mut();
        let batches = in_batches(iterations, K, setup, |mut inputs, turns| {
            let mut next = inputs.iter_mut();
            // The references kept are the inputs' own, which are dropped untimed.
            let (ticks, _) =
                time_batch::<_, K>(clock, turns, || next.next().expect("one input per call"));
            (ticks, inputs)
        });
        self.untimed_cpu_ns = batches.untimed_cpu_ns;
        batches.ticks
    }

    fn operations(&self) -> u64 {
        K
    }

    fn untimed_cpu_ns(&self) -> u64 {
        self.untimed_cpu_ns
    }
}

/// Room for the values a batch keeps: none when dropping them does nothing.
fn kept_capacity<T>(calls: usize) -> usize {
    if needs_drop::<T>() { calls } else { 0 }
}

/// Keeps a value whose drop does something until after the timed batch; passes any other
/// through the value sink.
#[inline(always)]
fn keep_or_sink<T>(kept: &mut Vec<T>, value: T) {
    if needs_drop::<T>() {
        kept.push(value);
    } else {
        black_box(value);
    }
}
