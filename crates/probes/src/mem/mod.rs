//! The memory family.

pub(crate) mod alloc;
mod buffer;
mod chase;
pub mod latency;
mod levels;
