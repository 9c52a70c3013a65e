//! The CPU family: calls and branches.

pub(crate) mod branch;
pub(crate) mod call;
pub(crate) mod compress;
pub(crate) mod frequency;
