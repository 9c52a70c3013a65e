//! `cpu.compress`: compressing 1 KiB of ordinary English prose with Snappy, the 2012 table's
//! "compress 1K bytes with Zippy" (Zippy is Google's internal name for Snappy).
//!
//! The input is the first 1024 bytes of a paragraph of plain prose bundled with latlab
//! (`data/prose.txt`), not zeros or random bytes, which would compress far faster or far
//! slower than text. The `snap` crate's raw encoder (the Snappy block format) writes into a
//! buffer allocated once, so the timed loop is the compression alone; the compressed bytes
//! are checked to decompress back to the input before timing.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::parameters::Key;
use std::hint::black_box;

const COMPRESSED_BYTES: Key = Key::new("compressed_bytes");
const INPUT: Key = Key::new("input");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "cpu.compress",
    method: "Snappy (snap crate, raw block format) compression of 1 KiB of English prose",
    timing: crate::Timing::LessEmptyLoop,
    results: &["cpu.compress/snappy-{size}"],
    typical: Typical::quick_full(0.10, 1.1),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        headline: &[crate::headline_row(
            130,
            "Compress 1 KiB with Snappy (Zippy)",
            Some("compress_1k"),
            SNAPPY_1KIB,
            "",
        )],
        // 1 KiB in and out, within L1: the compressor's instructions, in cycles.
        on_core_clock: &["cpu.compress/snappy-{size}"],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

const SNAPPY_1KIB: &str = "cpu.compress/snappy-1KiB";

const PROSE: &[u8] = include_bytes!("../../data/prose.txt");
const INPUT_BYTES: usize = 1024;

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let input = &PROSE[..INPUT_BYTES];
    let mut encoder = snap::raw::Encoder::new();
    let mut output = vec![0u8; snap::raw::max_compress_len(INPUT_BYTES)];
    let compressed = encoder
        .compress(input, &mut output)
        .map_err(|e| ProbeError::Failed(format!("Snappy compression failed: {e}")))?;
    let round_trip = snap::raw::Decoder::new()
        .decompress_vec(&output[..compressed])
        .map_err(|e| ProbeError::Failed(format!("Snappy decompression failed: {e}")))?;
    if round_trip != input {
        return Err(ProbeError::Failed(
            "Snappy did not give the input back".into(),
        ));
    }
    let result = ctx.runner.bench(
        SNAPPY_1KIB,
        "snap::raw::Encoder::compress of 1024 bytes of prose into a reused buffer",
        || {
            encoder
                .compress(black_box(input), black_box(&mut output))
                .map_or(0, |n| n)
        },
    )?;
    Ok(vec![
        result
            .with_bytes_per_operation(INPUT_BYTES as u64)
            .with_parameter(INPUT, "1024 bytes of English prose (data/prose.txt)")
            .with_parameter(COMPRESSED_BYTES, compressed)
            .with_parameter(
                latlab_engine::names::key::RATIO,
                INPUT_BYTES as f64 / compressed as f64,
            ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prose compresses (unlike random bytes) but not to nothing (unlike zeros).
    #[test]
    fn the_input_is_text_that_compresses_like_text() {
        assert!(PROSE.len() >= INPUT_BYTES);
        assert!(PROSE[..INPUT_BYTES].iter().all(|b| b.is_ascii()));
        let mut output = vec![0u8; snap::raw::max_compress_len(INPUT_BYTES)];
        let n = snap::raw::Encoder::new()
            .compress(&PROSE[..INPUT_BYTES], &mut output)
            .unwrap();
        let ratio = INPUT_BYTES as f64 / n as f64;
        assert!((1.02..3.0).contains(&ratio), "ratio {ratio}");
    }
}
