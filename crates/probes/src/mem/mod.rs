//! The memory family.

pub(crate) mod alloc;
