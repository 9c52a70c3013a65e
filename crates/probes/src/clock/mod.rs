//! The clock family: what reading time costs.

pub(crate) mod read;
pub(crate) mod vdso;
