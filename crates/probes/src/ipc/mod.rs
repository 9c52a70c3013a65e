//! The IPC family: moving data and requests between processes.

mod link;
pub(crate) mod throughput;
