//! The IPC family: moving data and requests between processes.

pub(crate) mod latency;
mod link;
pub(crate) mod throughput;
