//! Progress on standard error while a run measures, only when it is a terminal and the run
//! is not quiet: how many probes are done, the measurement under way (`mem.memcpy/4KiB`,
//! `thread.core_to_core/one-way/cas/0-1`), the time so far and about how long is left.
//!
//! The estimate starts from each planned probe's typical duration in the suite
//! ([`latlab_probes::Typical`]) and scales it by how long the probes done so far took against
//! theirs, so that a slower or faster machine corrects it as the run goes; the closing
//! stability check is expected to take as long as the opening one did.

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use latlab_engine::Listener;
use latlab_probes::{ProbeSpec, Suite};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The progress line of one run; a hidden one does nothing.
pub struct Progress {
    bar: ProgressBar,
    estimate: Arc<Mutex<Estimate>>,
    ticker: Option<Ticker>,
    /// Probes in the plan, and rounds each is measured in.
    probes: usize,
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
    /// A progress line for `probes` in `suite`, each measured in `rounds` rounds, drawn only
    /// when `shown`.
    pub fn new(probes: &[&ProbeSpec], suite: Suite, rounds: usize, shown: bool) -> Progress {
        let rounds = rounds.max(1);
        // Each round takes its share of a probe's samples, and about that share of its time;
        // a probe measured once takes all of it in the first.
        let typical_s = (0..rounds)
            .flat_map(|round| probes.iter().map(move |p| (round, p)))
            .map(|(round, p)| match p.rounds.of(rounds) {
                1 if round == 0 => p.typical.seconds(suite),
                1 => 0.0,
                each => p.typical.seconds(suite) / each as f64,
            })
            .collect();
        let estimate = Arc::new(Mutex::new(Estimate::new(typical_s, Instant::now())));
        let bar = if shown {
            let bar = ProgressBar::new((probes.len() * rounds) as u64);
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
            probes: probes.len(),
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

    pub fn stability_check(&self, what: &'static str) {
        self.bar.set_message(what);
    }

    /// A probe begins. One that must measure alone ([`ProbeSpec::alone`]) stops the
    /// redrawing thread until it ends: the line then moves only as each measurement starts.
    pub fn probe_started(&mut self, index: usize, probe: &ProbeSpec, round: usize) {
        let step = round * self.probes + index;
        self.with_estimate(|e| e.probe_started(step, Instant::now()));
        if self.rounds > 1 {
            self.bar
                .set_message(format!("round {}/{}: {}", round + 1, self.rounds, probe.id));
        } else {
            self.bar.set_message(probe.id);
        }
        if probe.alone {
            drop(self.ticker.take());
        }
    }

    /// A probe ended; `skipped` when it measured nothing (no GPU), so that its moment does
    /// not pass for this machine's pace; `again` when it is measured in later rounds too.
    pub fn probe_finished(&mut self, skipped: bool, again: bool) {
        let probes = self.probes;
        self.with_estimate(|e| {
            if !again {
                e.leave_out_later_rounds(probes);
            }
            e.probe_finished(Instant::now(), skipped)
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

/// How long a run has left.
#[derive(Debug)]
struct Estimate {
    /// Each planned probe's typical duration in the suite, in plan order.
    typical_s: Vec<f64>,
    started: Instant,
    /// How long the opening stability check took, once the first probe starts.
    opening_check: Option<Duration>,
    /// The probe under way and when it started.
    current: Option<(usize, Instant)>,
    /// The first probe after those finished.
    after_finished: usize,
    /// Seconds the finished probes took, and their typical seconds.
    done_s: f64,
    done_typical_s: f64,
}

/// Typical seconds of finished probes below which their pace is not yet trusted.
const MIN_EVIDENCE_S: f64 = 0.5;

impl Estimate {
    fn new(typical_s: Vec<f64>, started: Instant) -> Estimate {
        Estimate {
            typical_s,
            started,
            opening_check: None,
            current: None,
            after_finished: 0,
            done_s: 0.0,
            done_typical_s: 0.0,
        }
    }

    fn probe_started(&mut self, index: usize, now: Instant) {
        if self.opening_check.is_none() {
            self.opening_check = Some(now - self.started);
        }
        self.current = Some((index, now));
    }

    fn probe_finished(&mut self, now: Instant, skipped: bool) {
        if let Some((index, started)) = self.current.take() {
            if !skipped {
                self.done_s += (now - started).as_secs_f64();
                self.done_typical_s += self.typical_s[index];
            }
            self.after_finished = index + 1;
        }
    }

    /// The probe under way is not measured in later rounds (`probes` to a round): their
    /// share of its time is not left.
    fn leave_out_later_rounds(&mut self, probes: usize) {
        if let Some((index, _)) = self.current {
            for later in (index + probes..self.typical_s.len()).step_by(probes.max(1)) {
                self.typical_s[later] = 0.0;
            }
        }
    }

    /// This machine's pace against the typical one: how long the finished probes took for
    /// each typical second, once there is enough of them to tell.
    fn pace(&self) -> f64 {
        if self.done_typical_s < MIN_EVIDENCE_S {
            1.0
        } else {
            (self.done_s / self.done_typical_s).clamp(0.1, 10.0)
        }
    }

    /// Time left at `now`: the rest of the probe under way, the probes after it and the
    /// closing stability check. Before the first probe starts, every probe is left.
    fn left(&self, now: Instant) -> Duration {
        let pace = self.pace();
        let (next, current_left) = match self.current {
            Some((index, started)) => {
                let spent = (now - started).as_secs_f64();
                (index + 1, (self.typical_s[index] * pace - spent).max(0.0))
            }
            None => (self.after_finished, 0.0),
        };
        let rest: f64 = self.typical_s.get(next..).unwrap_or_default().iter().sum();
        let closing = self.opening_check.map_or(0.0, |d| d.as_secs_f64());
        Duration::from_secs_f64(current_left + rest * pace + closing)
    }
}

/// `about 17 s left`, `about 2 min 5 s left`, `finishing`.
fn describe_left(left: Duration) -> String {
    let seconds = left.as_secs_f64().round() as u64;
    match seconds {
        0 => "finishing".to_string(),
        1..60 => format!("about {seconds} s left"),
        _ => format!("about {} min {} s left", seconds / 60, seconds % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn the_estimate_counts_what_is_left_at_the_typical_pace_first() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![1.0, 4.0, 2.0], t0);
        assert_eq!(estimate.left(t0), seconds(7.0));
        // A 0.5 s opening check: the closing one is expected to take as long.
        estimate.probe_started(0, t0 + seconds(0.5));
        assert_eq!(estimate.left(t0 + seconds(0.5)), seconds(7.5));
        assert_eq!(estimate.left(t0 + seconds(1.0)), seconds(7.0));
        // A probe running over its typical time leaves nothing of it, not a negative.
        assert_eq!(estimate.left(t0 + seconds(3.0)), seconds(6.5));
    }

    #[test]
    fn a_slower_machine_scales_what_is_left() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![1.0, 4.0, 2.0], t0);
        estimate.probe_started(0, t0);
        // Twice as slow as typical on the first probe.
        estimate.probe_finished(t0 + seconds(2.0), false);
        assert_eq!(estimate.left(t0 + seconds(2.0)), seconds(12.0));
        estimate.probe_started(1, t0 + seconds(2.0));
        // Halfway through the second probe at that pace.
        assert_eq!(estimate.left(t0 + seconds(6.0)), seconds(8.0));
        estimate.probe_finished(t0 + seconds(10.0), false);
        estimate.probe_started(2, t0 + seconds(10.0));
        estimate.probe_finished(t0 + seconds(14.0), false);
        assert_eq!(estimate.left(t0 + seconds(14.0)), Duration::ZERO);
    }

    #[test]
    fn too_little_evidence_keeps_the_typical_pace() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![0.1, 3.0], t0);
        estimate.probe_started(0, t0);
        estimate.probe_finished(t0 + seconds(1.0), false);
        assert_eq!(estimate.left(t0 + seconds(1.0)), seconds(3.0));
    }

    /// A skipped probe (the GPU family without a GPU) took no time of its typical
    /// duration: it leaves the estimate, and the pace stays what the measured probes set.
    #[test]
    fn a_skipped_probe_does_not_set_the_pace() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![2.0, 20.0, 2.0], t0);
        estimate.probe_started(0, t0);
        estimate.probe_finished(t0 + seconds(2.0), false);
        estimate.probe_started(1, t0 + seconds(2.0));
        estimate.probe_finished(t0 + seconds(2.0), true);
        assert_eq!(estimate.left(t0 + seconds(2.0)), seconds(2.0));
    }

    /// Two probes in two rounds: the first, skipped in round one, is not measured in round
    /// two, so its second share is not left.
    #[test]
    fn a_probe_left_out_of_later_rounds_leaves_their_time() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![1.0, 2.0, 1.0, 2.0], t0);
        estimate.probe_started(0, t0);
        estimate.leave_out_later_rounds(2);
        estimate.probe_finished(t0, true);
        assert_eq!(estimate.left(t0), seconds(4.0));
    }

    #[test]
    fn time_left_reads_as_a_person_would_say_it() {
        assert_eq!(describe_left(seconds(0.4)), "finishing");
        assert_eq!(describe_left(seconds(16.6)), "about 17 s left");
        assert_eq!(describe_left(seconds(125.0)), "about 2 min 5 s left");
    }
}
