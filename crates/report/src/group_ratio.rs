//! A user's benchmark against its group's baseline, in words: "push_grow is 1.32× as slow
//! as with_capacity (95% CI 1.28–1.36×)".

use crate::units::format_ratio;
use latlab_engine::model::BenchResult;
use latlab_engine::names::key;
use latlab_engine::parameters::Value;

/// The sentence for a result compared with a baseline; `None` for a result that is not.
pub fn group_ratio_sentence(result: &BenchResult) -> Option<String> {
    let baseline = result.parameter(key::BASELINE)?.as_str()?;
    let Some(ratio) = result.parameter(key::RATIO).and_then(|r| r.as_f64()) else {
        return Some(format!(
            "{} cannot be compared with {baseline}: one of them was optimised away",
            result.name
        ));
    };
    // "as slow as" reads the ratio itself, "as fast as" its inverse, and so its interval
    // inverted.
    let slower = ratio >= 1.0;
    let shown = |r: f64| format_ratio(if slower { r } else { 1.0 / r });
    let interval = match result.parameter(key::RATIO_CI95) {
        Some(Value::Numbers(ci)) if ci.len() == 2 => {
            let (lo, hi) = if slower {
                (ci[0], ci[1])
            } else {
                (ci[1], ci[0])
            };
            format!(" (95% CI {}–{})", shown(lo), shown(hi))
        }
        _ => " (too few pairs for an interval)".to_string(),
    };
    let speed = if slower { "slow" } else { "fast" };
    Some(format!(
        "{} is {} as {speed} as {baseline}{interval}",
        result.name,
        shown(ratio)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::result;

    /// A result compared with `lists/with_capacity` at `ratio`, its interval `ci`.
    fn compared(name: &str, ratio: f64, ci: [f64; 2]) -> BenchResult {
        result(name, 1.0, &[])
            .with_parameter(key::BASELINE, "lists/with_capacity")
            .with_parameter(key::RATIO, ratio)
            .with_parameter(key::RATIO_CI95, ci.to_vec())
    }

    #[test]
    fn a_faster_benchmark_reads_its_inverse_ratio_and_interval() {
        assert_eq!(
            group_ratio_sentence(&compared("lists/fixed_array", 0.25, [0.2, 0.5])).unwrap(),
            "lists/fixed_array is 4.00× as fast as lists/with_capacity (95% CI 2.00×–5.00×)"
        );
    }

    #[test]
    fn a_slower_benchmark_reads_its_ratio_and_results_not_compared_have_no_sentence() {
        assert_eq!(
            group_ratio_sentence(&compared("lists/push_grow", 1.32, [1.28, 1.36])).unwrap(),
            "lists/push_grow is 1.32× as slow as lists/with_capacity (95% CI 1.28×–1.36×)"
        );
        assert_eq!(group_ratio_sentence(&result("lists/alone", 1.0, &[])), None);
    }
}
