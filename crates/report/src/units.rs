//! Human units for the terminal and Markdown; machine formats keep full precision in
//! nanoseconds.

use latlab_engine::presentation::Unit;
pub use latlab_engine::units::format_bytes;
use latlab_engine::units::{three_digit_decimals, three_digits_trimmed};

/// A duration in nanoseconds with three significant digits in ns, µs, ms or s.
pub fn format_ns(ns: f64) -> String {
    // A figure that would round up to 1000 of one unit is shown in the next.
    let magnitude = ns.abs();
    let (value, unit) = if magnitude < 999.5 {
        (ns, "ns")
    } else if magnitude < 999.5e3 {
        (ns / 1e3, "µs")
    } else if magnitude < 999.5e6 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{value:.*} {unit}", three_digit_decimals(value))
}

/// A duration on a plot's axis: up to three significant digits in ps, ns, µs, ms or s,
/// trailing zeros dropped (`500 ps`, `10 ms`, `1.5 µs`).
pub fn format_ns_axis(ns: f64) -> String {
    let magnitude = ns.abs();
    let units = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")];
    let (scale, unit) = units
        .into_iter()
        .find(|&(scale, _)| magnitude >= scale * 0.9995)
        .unwrap_or((1e-3, "ps"));
    // Below a zeptosecond is rounding noise around zero (a derivative's axis crosses it).
    if magnitude < 1e-12 {
        return "0".to_string();
    }
    format!("{} {unit}", three_digits_trimmed(ns / scale))
}

/// A throughput on a plot's axis, given in GB/s: as [`format_rate`], trailing zeros
/// dropped (`10 GB/s`, `500 MB/s`).
pub fn format_rate_axis(gigabytes_per_second: f64) -> String {
    let (value, unit) = rate_unit(gigabytes_per_second);
    format!("{} {unit}", three_digits_trimmed(value))
}

/// A throughput given in GB/s (10^9 bytes per second) with three significant digits in
/// kB/s, MB/s, GB/s or TB/s, all decimal.
pub fn format_rate(gigabytes_per_second: f64) -> String {
    let (value, unit) = rate_unit(gigabytes_per_second);
    format!("{value:.*} {unit}", three_digit_decimals(value))
}

/// Items per second with three significant digits in elem/s, Kelem/s, Melem/s or
/// Gelem/s (criterion's and divan's units).
pub fn format_items_rate(items_per_second: f64) -> String {
    let units = [(1e9, "Gelem/s"), (1e6, "Melem/s"), (1e3, "Kelem/s")];
    let (value, unit) = in_unit(items_per_second, &units, "elem/s");
    format!("{value:.*} {unit}", three_digit_decimals(value))
}

/// A result's rate as a table shows it: bytes per second where it moves bytes, items per
/// second where it processes items, `None` for a pure latency.
pub fn format_result_rate(result: &latlab_engine::BenchResult) -> Option<String> {
    (result.gigabytes_per_second().map(format_rate))
        .or_else(|| result.items_per_second().map(format_items_rate))
}

/// A rate in GB/s as a value in the decimal unit it reads best in.
fn rate_unit(gigabytes_per_second: f64) -> (f64, &'static str) {
    let units = [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")];
    in_unit(gigabytes_per_second * 1e9, &units, "B/s")
}

/// `value` in the largest of the decimal `units` (largest first) it reaches once rounded to
/// three digits, else in `base`.
fn in_unit(value: f64, units: &[(f64, &'static str)], base: &'static str) -> (f64, &'static str) {
    let (scale, unit) = (units.iter().copied())
        .find(|&(scale, _)| value.abs() >= scale * 0.9995)
        .unwrap_or((1.0, base));
    (value / scale, unit)
}

/// A clock as every rendering names it: its kind and rate, `TSC at 2.445 GHz`.
pub fn format_clock(clock: &latlab_engine::ClockInfo) -> String {
    format!("{} at {:.3} GHz", clock.kind, clock.frequency_hz / 1e9)
}

/// A ratio with three significant digits: `0.000867×`, `0.42×`, `3.50×`, `120×`; a dash
/// when it is not finite (a division by zero).
pub fn format_ratio(ratio: f64) -> String {
    if !ratio.is_finite() {
        return "—".into();
    }
    let magnitude = ratio.abs();
    let digits = if magnitude > 0.0 && magnitude < 1.0 {
        (2 - magnitude.log10().floor() as i32).max(0) as usize
    } else {
        three_digit_decimals(ratio)
    };
    format!("{ratio:.digits$}×")
}

/// A ratio as a percentage with no decimals below 10% and none above.
pub fn format_percent(fraction: f64) -> String {
    let percent = fraction * 100.0;
    if percent < 9.95 {
        format!("{percent:.1}%")
    } else {
        format!("{percent:.0}%")
    }
}

/// A result's median as shown: `≈` before an extrapolated one, an estimate.
pub fn format_median(result: &latlab_engine::BenchResult) -> String {
    let median = format_ns(result.summary.median);
    if result.is_extrapolated() {
        format!("≈{median}")
    } else {
        median
    }
}

/// The 95% confidence interval of a result's median; blank where there is none (too few
/// samples, or an extrapolated figure, for which none is claimed): the table's footnote
/// ([`INTERVAL_FOOTNOTE`]) says why.
pub fn format_interval(result: &latlab_engine::BenchResult) -> String {
    let summary = &result.summary;
    if has_interval(result) {
        let [low, high] = summary.median_ci95;
        format!("{} … {}", format_ns(low), format_ns(high))
    } else {
        String::new()
    }
}

/// Whether a result has a 95% confidence interval to show.
pub fn has_interval(result: &latlab_engine::BenchResult) -> bool {
    !result.is_extrapolated() && result.summary.has_interval()
}

/// Why a 95% interval is blank, said once under a table that has one.
pub const INTERVAL_FOOTNOTE: &str = "a blank 95% CI: too few samples for an interval, or a \
                                     figure extrapolated (≈) rather than measured";

/// The 5th to 95th percentiles of `n` samples; blank where they are too few for
/// percentiles: the table's footnote ([`percentiles_footnote`]) says why.
pub fn format_percentiles(n: usize, p5: f64, p95: f64) -> String {
    if has_percentiles(n) {
        format!("{} … {}", format_ns(p5), format_ns(p95))
    } else {
        String::new()
    }
}

/// Whether `n` samples are enough for percentiles.
pub fn has_percentiles(n: usize) -> bool {
    n >= latlab_engine::stats::MIN_SAMPLES_FOR_PERCENTILES
}

/// Why a p5 … p95 is blank, said once under a table that has one.
pub fn percentiles_footnote() -> String {
    format!(
        "a blank p5 … p95: fewer than {} samples, too few for percentiles (each point of a \
         sweep takes its share of --samples; the full suite takes more)",
        latlab_engine::stats::MIN_SAMPLES_FOR_PERCENTILES
    )
}

/// What a declared figure in `unit` shows of `result`: its median time, or its bytes per
/// second at the median in GB/s (`None` for a result without a byte count).
pub(crate) fn figure_in(unit: Unit, result: &latlab_engine::BenchResult) -> Option<f64> {
    match unit {
        Unit::Nanoseconds => Some(result.summary.median),
        Unit::BytesPerSecond => result.gigabytes_per_second(),
    }
}

/// A figure of [`figure_in`] in its unit, as [`format_ns`] or [`format_rate`] write it.
pub(crate) fn format_in(unit: Unit, figure: f64) -> String {
    match unit {
        Unit::Nanoseconds => format_ns(figure),
        Unit::BytesPerSecond => format_rate(figure),
    }
}

/// `1 host`, `2 hosts`.
#[cfg(feature = "files")]
pub(crate) fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_times_are_scaled_and_short() {
        assert_eq!(format_ns_axis(10_000_000.0), "10 ms");
        assert_eq!(format_ns_axis(1_500.0), "1.5 µs");
        assert_eq!(format_ns_axis(0.5), "500 ps");
        assert_eq!(format_ns_axis(0.03), "30 ps");
        assert_eq!(format_ns_axis(999.9), "1 µs");
        assert_eq!(format_ns_axis(2e9), "2 s");
        assert_eq!(format_ns_axis(0.0), "0");
        assert_eq!(format_ns_axis(-1e-14), "0");
        assert_eq!(format_rate_axis(10.0), "10 GB/s");
        assert_eq!(format_rate_axis(0.5), "500 MB/s");
        assert_eq!(format_rate_axis(1.25), "1.25 GB/s");
    }

    #[test]
    fn durations_pick_a_unit_and_three_digits() {
        assert_eq!(format_ns(0.3141), "0.31 ns");
        assert_eq!(format_ns(12.34), "12.3 ns");
        assert_eq!(format_ns(187.2), "187 ns");
        assert_eq!(format_ns(999.96), "1.00 µs");
        assert_eq!(format_ns(1_234.0), "1.23 µs");
        assert_eq!(format_ns(56_700_000.0), "56.7 ms");
        assert_eq!(format_ns(2.5e9), "2.50 s");
        assert_eq!(format_ns(-0.05), "-0.05 ns");
    }

    #[test]
    fn rates_pick_a_decimal_unit_and_three_digits() {
        assert_eq!(format_rate(193.2), "193 GB/s");
        assert_eq!(format_rate(20.51), "20.5 GB/s");
        assert_eq!(format_rate(0.5712), "571 MB/s");
        assert_eq!(format_rate(0.9999), "1.00 GB/s");
        assert_eq!(format_rate(1530.0), "1.53 TB/s");
        assert_eq!(format_rate(2e-7), "200 B/s");
        assert_eq!(format_items_rate(1.234e7), "12.3 Melem/s");
        assert_eq!(format_items_rate(999.0), "999 elem/s");
        assert_eq!(format_items_rate(2.5e9), "2.50 Gelem/s");
    }

    #[test]
    fn percentages() {
        assert_eq!(format_percent(0.0123), "1.2%");
        assert_eq!(format_percent(0.25), "25%");
    }
}
