//! The progress line itself, drawn with indicatif.
//!
//! It is redrawn as each measurement starts and each unit ends, never by a thread of its
//! own: while the measuring process has a second thread, even asleep, every system call on a
//! descriptor and every switch into the process costs more (measured in the book's
//! methods, "Threads and processes"), so a redrawing thread would be measured with every
//! probe. Within a long measurement the line
//! stands still.

use super::ProgressUnit;
use super::estimate::{Estimate, describe_left};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use latlab_engine::Listener;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// The progress line of one run; a hidden one does nothing.
pub struct Progress {
    bar: ProgressBar,
    estimate: Arc<Mutex<Estimate>>,
    units: Vec<ProgressUnit>,
    /// Rounds the run takes.
    rounds: usize,
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
        Progress {
            bar,
            estimate,
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
            bar.set_message(name.to_string());
            bar.tick();
        }))
    }

    /// What the run is doing between units: `stability check`.
    pub fn say(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// Round `round` of unit `index` begins.
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
    }

    /// Clears the line.
    pub fn finish(&mut self) {
        self.bar.finish_and_clear();
    }

    fn with_estimate(&self, f: impl FnOnce(&mut Estimate)) {
        f(&mut self.estimate.lock().unwrap_or_else(PoisonError::into_inner));
    }
}
