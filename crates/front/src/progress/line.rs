//! The progress line itself, drawn with indicatif.

use super::ProgressUnit;
use super::estimate::{Estimate, describe_left};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use latlab_engine::Listener;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The progress line of one run; a hidden one does nothing.
pub struct Progress {
    bar: ProgressBar,
    estimate: Arc<Mutex<Estimate>>,
    ticker: Option<Ticker>,
    units: Vec<ProgressUnit>,
    /// Rounds the run takes.
    rounds: usize,
}

/// Redraws the line every [`TICK`] (the spinner, the time so far) between measurements.
/// A thread of its own rather than indicatif's steady tick, whose thread panics when the
/// system refuses it (`ulimit -u`): here the line then just moves at each measurement.
struct Ticker {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

const TICK: Duration = Duration::from_millis(120);

impl Ticker {
    fn start(bar: &ProgressBar) -> Option<Ticker> {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (bar, stopped) = (bar.clone(), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("latlab-progress".into())
            .spawn(move || {
                while !stopped.load(std::sync::atomic::Ordering::Acquire) {
                    bar.tick();
                    std::thread::park_timeout(TICK);
                }
            })
            .ok()?;
        Some(Ticker {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

impl Progress {
    /// A progress line for `units`, measured in at most `rounds` rounds, drawn only when
    /// `shown`.
    pub fn new(units: Vec<ProgressUnit>, rounds: usize, shown: bool) -> Progress {
        let rounds = rounds.max(1);
        // Each round takes its share of a unit's samples, and about that share of its time;
        // a unit measured once takes all of it in the first.
        let typical_s = (0..rounds)
            .flat_map(|round| units.iter().map(move |u| (round, u)))
            .map(|(round, u)| match u.rounds.min(rounds) {
                0 | 1 if round == 0 => u.typical_s,
                0 | 1 => 0.0,
                each if round < each => u.typical_s / each as f64,
                _ => 0.0,
            })
            .collect();
        let estimate = Arc::new(Mutex::new(Estimate::new(typical_s, Instant::now())));
        let bar = if shown {
            let bar = ProgressBar::new(
                units
                    .iter()
                    .map(|u| u.rounds.clamp(1, rounds))
                    .sum::<usize>() as u64,
            );
            let shared = Arc::clone(&estimate);
            let style = ProgressStyle::with_template(
                "{spinner} [{pos}/{len}] {wide_msg} {elapsed} so far, {left}",
            )
            .expect("a valid template")
            .with_key(
                "left",
                move |_: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let estimate = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    let _ = write!(out, "{}", describe_left(estimate.left(Instant::now())));
                },
            );
            bar.set_style(style);
            bar
        } else {
            ProgressBar::hidden()
        };
        let ticker = (!bar.is_hidden()).then(|| Ticker::start(&bar)).flatten();
        Progress {
            bar,
            estimate,
            ticker,
            units,
            rounds,
        }
    }

    /// What the runner calls as each measurement begins; `None` when nothing is drawn.
    pub fn listener(&self) -> Option<Listener> {
        if self.bar.is_hidden() {
            return None;
        }
        let bar = self.bar.clone();
        Some(Arc::new(move |name: &str| {
            bar.set_message(name.to_string())
        }))
    }

    /// What the run is doing between units: `stability check`.
    pub fn say(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// Round `round` of unit `index` begins. One that must measure alone stops the
    /// redrawing thread until it ends: the line then moves only as each measurement starts.
    pub fn unit_started(&mut self, index: usize, round: usize) {
        let step = round * self.units.len() + index;
        self.with_estimate(|e| e.unit_started(step, Instant::now()));
        let unit = &self.units[index];
        if self.rounds > 1 {
            let message = format!("round {}/{}: {}", round + 1, self.rounds, unit.name);
            self.bar.set_message(message);
        } else {
            self.bar.set_message(unit.name.clone());
        }
        if unit.alone {
            drop(self.ticker.take());
        }
    }

    /// A unit's round ended; `skipped` when it measured nothing (no GPU), so that its
    /// moment does not pass for this machine's pace; `again` when it is measured in later
    /// rounds too.
    pub fn unit_finished(&mut self, skipped: bool, again: bool) {
        let units = self.units.len();
        self.with_estimate(|e| {
            if !again {
                e.leave_out_later_rounds(units);
            }
            e.unit_finished(Instant::now(), skipped)
        });
        self.bar.inc(1);
        if self.ticker.is_none() && !self.bar.is_hidden() {
            self.ticker = Ticker::start(&self.bar);
        }
    }

    /// Stops the redrawing and clears the line.
    pub fn finish(&mut self) {
        // Joined before the line is cleared, so that no redraw follows the clearing.
        drop(self.ticker.take());
        self.bar.finish_and_clear();
    }

    fn with_estimate(&self, f: impl FnOnce(&mut Estimate)) {
        f(&mut self.estimate.lock().unwrap_or_else(PoisonError::into_inner));
    }
}
