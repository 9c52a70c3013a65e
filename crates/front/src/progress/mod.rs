//! Progress on standard error while a run measures, only when it is a terminal and the run
//! is not quiet: how many units are done, the measurement under way (`mem.memcpy/4KiB`,
//! `lists/sort/1024`), the time so far and about how long is left ([`estimate`]). The
//! lifecycle drives it; the engine's listener names each measurement as it begins.
//!
//! Drawn with indicatif, behind the `progress` feature: without it (the harness's light
//! build) the line is never drawn.

#[cfg(feature = "progress")]
mod estimate;
#[cfg(feature = "progress")]
mod line;

#[cfg(feature = "progress")]
pub use line::Progress;

/// A unit as the progress line knows it.
#[derive(Debug, Clone)]
pub struct ProgressUnit {
    /// What the line calls it: `mem.latency`, `lists/sort`.
    pub name: String,
    /// How long it typically takes in all its rounds, in seconds; the estimate scales it by
    /// this machine's pace.
    pub typical_s: f64,
    /// The rounds it is measured in.
    pub rounds: usize,
}

/// Without the `progress` feature, a line that is never drawn.
#[cfg(not(feature = "progress"))]
pub struct Progress;

#[cfg(not(feature = "progress"))]
impl Progress {
    pub fn new(_: Vec<ProgressUnit>, _: usize, _: bool) -> Progress {
        Progress
    }

    pub fn listener(&self) -> Option<latlab_engine::Listener> {
        None
    }

    pub fn say(&self, _: &str) {}

    pub fn unit_started(&mut self, _: usize, _: usize) {}

    pub fn unit_finished(&mut self, _: bool, _: bool) {}

    pub fn finish(&mut self) {}
}
