//! The outputs a run could not write, and why: both front ends go on measuring when a write
//! fails (a full disk), say so at the end, and read their exit status from it.

use latlab_report::ExportError;

/// Outputs that could not be written, each once with its last failure's cause.
#[derive(Debug, Default)]
pub struct Unwritten(Vec<(String, String)>);

impl Unwritten {
    /// Notes a failed write of `output`, or forgets an earlier failure when it succeeded;
    /// gives back what the write gave.
    pub fn note<T>(&mut self, output: &str, written: Result<T, ExportError>) -> Option<T> {
        self.0.retain(|(name, _)| name != output);
        match written {
            Ok(value) => Some(value),
            Err(error) => {
                let cause = std::error::Error::source(&error)
                    .map_or_else(|| error.to_string(), ToString::to_string);
                self.0.push((output.to_string(), cause));
                None
            }
        }
    }

    /// Whether `output` could not be written.
    pub fn contains(&self, output: &str) -> bool {
        self.0.iter().any(|(name, _)| name == output)
    }

    /// Whether every output was written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Says on standard error what could not be written and why, one line each.
    pub fn report(&self) {
        for (output, why) in &self.0 {
            crate::say!("latlab: could not write {output}: {why}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failure is kept until the same output is written, and is then forgotten.
    #[test]
    fn a_later_write_forgets_an_earlier_failure() {
        let mut unwritten = Unwritten::default();
        let full = || {
            Err::<(), _>(ExportError::Write {
                path: "out.json".into(),
                source: std::io::Error::from_raw_os_error(28),
            })
        };
        assert_eq!(unwritten.note("out.json", full()), None);
        assert!(unwritten.contains("out.json") && !unwritten.is_empty());
        assert_eq!(unwritten.note("out.json", Ok(7)), Some(7));
        assert!(unwritten.is_empty());
    }
}
