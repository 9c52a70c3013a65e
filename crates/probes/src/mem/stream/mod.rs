//! The one memory-streaming engine: the loops ([`mixes`]) and the crew of pinned threads
//! that runs them on many CPUs at once ([`crew`]). `mem.bandwidth` runs the loops on one
//! thread and, at its largest working set, on a crew sharing one buffer; `mem.loaded` runs
//! a loading crew beside its chase and measures a crew for its peaks; `mem.numa` measures a
//! crew of one node's CPUs reading another node's memory.

pub(crate) mod crew;
pub(crate) mod mixes;

pub(crate) use crew::{Crew, LOADERS, Memory, Per};
pub(crate) use mixes::{Kernel, Mix};
