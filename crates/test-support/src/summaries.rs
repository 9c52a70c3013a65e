//! Run summaries written by hand, as tests and benchmarks plant them.

/// `run` (a summary as JSON) as a summary's text: its version key first, as a reader tells
/// a summary by.
pub fn summary_text(mut run: serde_json::Value) -> String {
    let version = (run.as_object_mut())
        .and_then(|fields| fields.remove("latlab_summary_version"))
        .expect("a summary has its version");
    let rest = run.to_string();
    format!("{{\"latlab_summary_version\":{version},{}", &rest[1..])
}
