//! Human-readable figures shared by result names and renderers.

/// Decimals that give three significant digits for a value below 1000: 2 below 10, 1 below
/// 100, none above, with the thresholds placed where rounding would add a digit.
pub fn three_digit_decimals(value: f64) -> usize {
    match value.abs() {
        v if v >= 99.95 => 0,
        v if v >= 9.995 => 1,
        _ => 2,
    }
}

/// `value` with up to three significant digits (below 1000) and no trailing zeros: `1`,
/// `1.41`, `32.5`, `187`.
pub fn three_digits_trimmed(value: f64) -> String {
    let text = format!("{value:.*}", three_digit_decimals(value));
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A size in bytes with binary units (B, KiB, MiB, GiB), up to three significant digits and
/// no trailing zeros: `1KiB`, `1.41KiB`, `32MiB`.
pub fn format_bytes(bytes: f64) -> String {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    let (scale, unit) = units
        .into_iter()
        .find(|&(scale, _)| bytes.abs() >= scale as f64)
        .unwrap_or((1, "B"));
    format!("{}{unit}", three_digits_trimmed(bytes / scale as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_binary_units() {
        assert_eq!(format_bytes(1024.0), "1KiB");
        assert_eq!(format_bytes(1448.0), "1.41KiB");
        assert_eq!(format_bytes(32.0 * 1048576.0), "32MiB");
        assert_eq!(format_bytes(100.0), "100B");
        assert_eq!(format_bytes(3.0), "3B");
        assert_eq!(format_bytes(0.0), "0B");
    }
}
