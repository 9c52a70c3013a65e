//! Reading results without their samples: a fleet of thousands of runs needs each result's
//! summary, not the thousands of samples behind it, which are most of a results file.
//!
//! [`without_samples`] reads a record with `samples_ns` and `cpu_samples_ns` skipped (left
//! empty) while `read` runs on this thread. The skipped arrays are scanned, not parsed, so a
//! file reads several times faster and its samples never reach memory.

use serde::de::{Deserialize, Deserializer, IgnoredAny};
use std::cell::Cell;

thread_local! {
    static SKIPPING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `read` (a deserialisation of results) with every result's samples skipped.
pub fn without_samples<T>(read: impl FnOnce() -> T) -> T {
    /// Puts the flag back however `read` ends (a panic included).
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SKIPPING.set(self.0);
        }
    }
    let _restore = Restore(SKIPPING.replace(true));
    read()
}

/// A result's samples: read, or skipped inside [`without_samples`].
pub(crate) fn samples<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<f64>, D::Error> {
    if SKIPPING.get() {
        IgnoredAny::deserialize(deserializer)?;
        Ok(Vec::new())
    } else {
        Vec::deserialize(deserializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Held {
        #[serde(deserialize_with = "samples")]
        samples_ns: Vec<f64>,
        n: usize,
    }

    /// Inside, the samples are skipped and the rest read; outside, and after a read that
    /// failed, they are read again.
    #[test]
    fn samples_are_skipped_only_inside() {
        let text = r#"{"samples_ns": [1.5, 2.5, 3.5], "n": 3}"#;
        let skipped: Held = without_samples(|| serde_json::from_str(text)).unwrap();
        assert!(skipped.samples_ns.is_empty());
        assert_eq!(skipped.n, 3);
        let failed = without_samples(|| serde_json::from_str::<Held>("{\"n\": [}"));
        assert!(failed.is_err());
        let read: Held = serde_json::from_str(text).unwrap();
        assert_eq!(read.samples_ns, [1.5, 2.5, 3.5]);
    }
}
