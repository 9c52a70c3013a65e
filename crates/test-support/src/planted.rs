//! Change points held to planted steps: Apache Otava's on the same series, and the score of
//! any detector's against what was planted.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// Otava's change points (`otava.analysis.compute_change_points`, window 50, at
/// `max_pvalue`) of each series, as run indices by name, from `python`, a Python with
/// apache-otava installed. The series go in on its standard input as JSON.
pub fn otava_change_points(
    python: &str,
    series: &BTreeMap<String, Vec<f64>>,
    max_pvalue: f64,
) -> Result<BTreeMap<String, Vec<usize>>, String> {
    let script = format!(
        "import json, sys\n\
         from otava.analysis import compute_change_points\n\
         series = json.load(sys.stdin)\n\
         found = {{name: [int(c.index) for c in compute_change_points(values, window_len=50, \
         max_pvalue={max_pvalue:e})[0]] for name, values in series.items()}}\n\
         json.dump(found, sys.stdout)\n"
    );
    let mut child = Command::new(python)
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{python}: {e}; name a Python that has apache-otava"))?;
    let input = serde_json::to_vec(series).map_err(|e| e.to_string())?;
    let written = (child.stdin.take())
        .map(|mut stdin| stdin.write_all(&input))
        .transpose();
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    written.map_err(|e| format!("{python}: its input: {e}"))?;
    if !output.status.success() {
        return Err(format!("{python}: Otava failed ({})", output.status));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("{python}: its output: {e}"))
}

/// How a detector's change points meet the planted steps.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Scored {
    pub planted: usize,
    /// Planted steps with a change point within one run of their place (one each).
    pub found: usize,
    /// Every other change point.
    pub not_planted: usize,
}

impl Scored {
    pub fn precision(&self) -> f64 {
        self.found as f64 / (self.found + self.not_planted).max(1) as f64
    }

    pub fn recall(&self) -> f64 {
        self.found as f64 / self.planted.max(1) as f64
    }

    pub fn f1(&self) -> f64 {
        let (precision, recall) = (self.precision(), self.recall());
        match precision + recall {
            sum if sum > 0.0 => 2.0 * precision * recall / sum,
            _ => 0.0,
        }
    }
}

/// `found` (change points by name) against `steps` (each stepped series' first run of its
/// new level): a change point within one run of a planted step is that step's, once.
pub fn scored(found: &BTreeMap<String, Vec<usize>>, steps: &BTreeMap<String, usize>) -> Scored {
    let mut score = Scored {
        planted: steps.len(),
        ..Scored::default()
    };
    for (name, points) in found {
        let mut hit = false;
        for at in points {
            match steps.get(name) {
                Some(step) if !hit && at.abs_diff(*step) <= 1 => {
                    score.found += 1;
                    hit = true;
                }
                _ => score.not_planted += 1,
            }
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_point_counts_once_within_a_run_of_its_step() {
        let steps = BTreeMap::from([("a".to_string(), 10), ("b".to_string(), 20)]);
        let found = BTreeMap::from([
            ("a".to_string(), vec![11, 9]),
            ("b".to_string(), vec![25]),
            ("c".to_string(), vec![3]),
        ]);
        let score = scored(&found, &steps);
        assert_eq!((score.found, score.not_planted, score.planted), (1, 3, 2));
        assert_eq!(score.precision(), 0.25);
        assert_eq!(score.recall(), 0.5);
        assert!((score.f1() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(scored(&BTreeMap::new(), &steps).f1(), 0.0);
    }
}
