//! `--trace-on-miss`: at the first missed deadline, a marker in ftrace's `trace_marker` and
//! tracing stopped (`tracing_on` = 0), so that the trace ends at the miss.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// The optional ftrace hook: descriptors opened before the measurement.
pub(super) struct Tracer {
    marker: std::fs::File,
    switch: std::fs::File,
    fired: AtomicBool,
}

impl Tracer {
    /// Opens tracefs for writing, or says why it cannot.
    pub(super) fn open() -> Result<Tracer, String> {
        let roots = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
        let mut why = String::new();
        for root in roots {
            #[allow(
                clippy::disallowed_methods,
                reason = "the kernel's trace switch, asked for by --trace-on-miss, not an output"
            )]
            let open = |name: &str| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(format!("{root}/{name}"))
            };
            match (open("trace_marker"), open("tracing_on")) {
                (Ok(marker), Ok(switch)) => {
                    return Ok(Tracer {
                        marker,
                        switch,
                        fired: AtomicBool::new(false),
                    });
                }
                (Err(e), _) | (_, Err(e)) => {
                    let _ = write!(why, "{root}: {e}; ");
                }
            }
        }
        Err(format!(
            "tracefs cannot be written here ({}): mount it and run as root",
            why.trim_end_matches("; ")
        ))
    }

    /// At the first miss only: marks the trace and stops it.
    pub(super) fn miss(&self, what: &str) -> bool {
        use std::io::Write;
        if self.fired.swap(true, Ordering::AcqRel) {
            return false;
        }
        let _ = (&self.marker).write_all(format!("latlab: deadline missed: {what}\n").as_bytes());
        let _ = (&self.switch).write_all(b"0");
        true
    }
}
