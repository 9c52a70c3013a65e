//! A pinned run on a machine of big and little cores (Arm's big.LITTLE, x86 hybrid parts):
//! its figures are those of the class of core it was pinned to, not the machine's. The run
//! says so in a note, and each result names the class in its parameters (`core_class`), so
//! that a figure from a little core is never read, or compared, as a big one's.

use latlab_engine::environment::name_class_of;
use latlab_engine::model::{ProbeOutcome, RunRecord};
use latlab_engine::names::key;

/// The class of core the run is pinned to, where the machine has more than one.
pub(crate) fn pinned_class(record: &RunRecord) -> Option<String> {
    let cpu = record.settings.pinned_cpu?;
    name_class_of(&record.environment.core_classes, cpu)
}

/// The note a pinned run on cores of several classes keeps.
pub(crate) fn note(record: &RunRecord) -> Option<String> {
    let class = pinned_class(record)?;
    let cpu = record.settings.pinned_cpu?;
    Some(format!(
        "pinned to CPU {cpu}, a core of {class}: every figure is that class's, not the \
         machine's other cores'; each result names its class (core_class)"
    ))
}

/// Names `class` in each of `outcome`'s results.
pub(crate) fn name_in_results(outcome: &mut ProbeOutcome, class: &str) {
    for result in &mut outcome.results {
        (result.parameters).insert(key::CORE_CLASS.to_string(), class.into());
    }
}
