//! The memory family.

pub(crate) mod alloc;
pub(crate) mod bandwidth;
pub(crate) mod buffer;
pub(crate) mod chase;
mod kernels;
pub mod latency;
pub(crate) mod levels;
pub(crate) mod memcpy;
mod parallel;
pub(crate) mod sizes;

/// Sampling for one point of a sweep: a third of the samples, each half as long. A sweep has
/// dozens to hundreds of points and its neighbours corroborate each one; the time saved keeps
/// the memory family within its budget.
pub(crate) fn sweep_point(config: &mut latlab_engine::Config) {
    config.samples = (config.samples / 3).max(latlab_engine::MIN_SAMPLES);
    config.target_sample_time /= 2;
}
