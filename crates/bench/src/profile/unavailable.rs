//! `--profile` where there is no `perf_event_open` (macOS, Windows): the profiler cannot be
//! opened, says why, and the benchmarks run without it.

use crate::measured::Measured;
use latlab_engine::Clock;
use latlab_engine::host::LoopBody;
use latlab_engine::model::Profile;

/// No profiler can exist here: [`Profiler::open`] always refuses.
pub(crate) enum Profiler {}

impl Profiler {
    /// Refuses, in one line.
    pub fn open() -> Result<Profiler, String> {
        Err(format!(
            "the profiler samples with perf_event_open, which is {}",
            latlab_engine::NOT_AVAILABLE
        ))
    }

    /// Never called: no profiler is ever opened.
    pub fn profile(
        &mut self,
        _clock: &Clock,
        _short: (u64, &mut dyn LoopBody),
        _long: (u64, &mut dyn LoopBody),
        _measured: &Measured,
    ) -> Profile {
        match *self {}
    }
}
