//! The system-call family.

pub(crate) mod getppid;
