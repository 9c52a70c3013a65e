//! The memory family.

use crate::options::{Kind, OptionSpec};

pub(crate) mod alloc;
pub(crate) mod bandwidth;
pub(crate) mod latency;
pub(crate) mod loaded;
pub(crate) mod memcpy;
pub(crate) mod numa;
pub(crate) mod pages;
pub(crate) mod sizes;
mod stream;

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

/// `--max-size`: the largest working set of the memory probes.
pub const MAX_SIZE_OPTION: OptionSpec = OptionSpec {
    name: "max-size",
    kind: Kind::Bytes { min: 4 << 10 },
    default: None,
    help: "Largest working set of the memory probes, e.g. 256MiB [default: 4 × the last-level \
           cache, at most 512MiB; the quick suite stops where the latency curve has told its \
           story].",
    heading: "Memory probes",
};

/// `--huge-pages`: transparent huge pages instead of base pages.
pub(crate) const HUGE_PAGES_OPTION: OptionSpec = OptionSpec {
    name: "huge-pages",
    kind: Kind::Flag,
    default: None,
    help: "Ask for transparent huge pages in the memory probes (default: base pages).",
    heading: "Memory probes",
};
