//! Memory as pages: the one mmap wrapper every buffer of the memory probes is
//! ([`mapped`]), and the check that pages bound to a node landed there ([`nodes`]).

pub(crate) mod mapped;
pub(crate) mod nodes;
