//! The memory family.

pub(crate) mod alloc;
pub(crate) mod bandwidth;
pub(crate) mod buffer;
pub(crate) mod chase;
mod kernels;
pub(crate) mod latency;
pub(crate) mod levels;
pub(crate) mod loaded;
mod loaders;
pub(crate) mod memcpy;
pub(crate) mod numa;
mod page_nodes;
mod parallel;
pub(crate) mod sizes;

/// Helper threads of a result (loaders, workers) that could not be pinned to their CPU.
pub(crate) const UNPINNED_THREADS: latlab_engine::parameters::Key =
    latlab_engine::parameters::Key::new("unpinned_threads");

/// The configuration of a sweep point, by whether the headline table reads it
/// (`file.cold/random-4KiB`, the largest `mem.bandwidth` read …): such a point takes at
/// least as many samples as a p5 … p95 needs, so that its row always has a spread; any
/// other keeps the sweep's.
pub(crate) fn headline_point(read_by_headline: bool) -> impl FnOnce(&mut latlab_engine::Config) {
    move |config| {
        if read_by_headline {
            config.samples = config
                .samples
                .max(latlab_engine::stats::MIN_SAMPLES_FOR_PERCENTILES);
        }
    }
}

/// Sampling for one point of a sweep: a third of the samples, each half as long. A sweep has
/// dozens to hundreds of points and its neighbours corroborate each one; the time saved keeps
/// the memory family within its budget.
pub(crate) fn sweep_point(config: &mut latlab_engine::Config) {
    config.samples = (config.samples / 3).max(latlab_engine::MIN_SAMPLES);
    config.target_sample_time /= 2;
}
