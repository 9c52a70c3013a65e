//! `mem.bandwidth`: how fast one thread, and then every CPU together, reads, writes and
//! modifies memory, by working-set size.
//!
//! For each working set from 4 KiB up to the largest (in the quick suite four times the last
//! cache the latency curve found, else four times the kernel's last-level cache; see
//! [`crate::ProbeContext::max_working_set_from_curve`]) a buffer of 64-bit elements is
//! mapped and touched, then passed over by each loop of `stream/mixes.rs`: read (sum), write
//! (store a value) and modify (`x = x * 2`), visiting every element or every 4th (two
//! elements per 64-byte line: the whole line still moves, so the useful rate drops where the
//! set leaves the caches). One call of the measured closure is a pass over the buffer, or
//! beyond 2 MiB over the next of its equal segments in turn (the working set is still the
//! whole buffer; a sample lasts a fraction of a pass of a large one rather than several
//! passes). Results are per element visited, and as GB/s (10^9 bytes per second) counting
//! the bytes the loop reads plus the bytes it writes, as STREAM does.
//!
//! At the largest size every loop runs again on every online CPU at once, by the crew of
//! `stream/crew.rs` sharing the buffer out, and the read rates are compared with the peak
//! the memory modules could deliver, when the firmware says what they are. `mem.loaded`'s
//! read peak is a like figure measured apart: over a buffer of each CPU's own, at least four
//! times the largest cache, so that it is main memory's whatever this sweep's largest set
//! turns out to be (in the quick suite, four times the last cache the curve found).

use super::pages::mapped::MappedBuffer;
use super::sizes::{is_sweep_detail, size_label, working_sets};
use super::stream::mixes::VECTOR_ISA;
use super::stream::{Crew, Kernel, Memory, Mix, Per};
use super::{UNPINNED_THREADS, headline_point, sweep_point};
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical, keeping_measured};
use latlab_engine::Host;
use latlab_engine::environment::peak_bandwidth_bytes_per_s;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{
    HeadlineRow, Panel, Plot, Presentation, Scale, Source, Stroke, Template, Unit,
};
use latlab_engine::{BenchResult, Runner};

const ELEMENT_BYTES: Key = Key::new("element_bytes");
const PLAUSIBLE_PEAK_BYTES_PER_SECOND: Key = Key::new("plausible_peak_bytes_per_second");
const PLAUSIBLE_PEAK_FROM: Key = Key::new("plausible_peak_from");
const PLAUSIBLE_PEAK_UNKNOWN: Key = Key::new("plausible_peak_unknown");
const SEGMENT_BYTES_KEY: Key = Key::new("segment_bytes");
const SHARE_OF_PEAK: Key = Key::new("share_of_peak");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "mem.bandwidth/read/all/{size}",
    "mem.bandwidth/read/every4th/{size}",
    "mem.bandwidth/write/all/{size}",
    "mem.bandwidth/write/every4th/{size}",
    "mem.bandwidth/modify/all/{size}",
    "mem.bandwidth/modify/every4th/{size}",
    "mem.bandwidth/read/all/{size}/all-cpus",
    "mem.bandwidth/read/every4th/{size}/all-cpus",
    "mem.bandwidth/write/all/{size}/all-cpus",
    "mem.bandwidth/write/every4th/{size}/all-cpus",
    "mem.bandwidth/modify/all/{size}/all-cpus",
    "mem.bandwidth/modify/every4th/{size}/all-cpus",
];

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.bandwidth",
    method: "read, write and modify passes over 64-bit elements, every element and every 4th, by \
             working-set size; all CPUs at the largest",
    timing: crate::Timing::LessEmptyLoop,
    results: RESULTS,
    typical: Typical::quick_full(2.9, 53.0),
    extras: crate::Extras {
        options: &[&crate::mem::MAX_SIZE_OPTION, &crate::mem::HUGE_PAGES_OPTION],
        ..crate::Extras::NONE
    },
    presentation: Presentation {
        plots: &[Plot {
            stem: "mem-bandwidth",
            title: "mem.bandwidth: bytes moved per second by working set",
            caption: "mem.bandwidth: bytes read plus bytes written per second (median, decimal \
                      units) as the working set grows; colour is the access (read, write, \
                      read-modify-write), a solid line touches every element and a dashed one \
                      every fourth, dots and dotted lines every CPU at once. Each step down is \
                      a cache level running out.",
            x_parameter: key::WORKING_SET_BYTES,
            x_label: "working set",
            x_axis: latlab_engine::presentation::XAxis::SizeLog,
            panels: &[Panel {
                y_label: "rate (median)",
                y_unit: Unit::BytesPerSecond,
                y_scale: Scale::Log,
                lines: &[
                    crate::rate_line("mem.bandwidth/read/all/{size}", "read all", Stroke::Line, 0),
                    crate::rate_line(
                        "mem.bandwidth/read/every4th/{size}",
                        "read every4th",
                        Stroke::Dashed,
                        0,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/write/all/{size}",
                        "write all",
                        Stroke::Line,
                        1,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/write/every4th/{size}",
                        "write every4th",
                        Stroke::Dashed,
                        1,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/modify/all/{size}",
                        "modify all",
                        Stroke::Line,
                        2,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/modify/every4th/{size}",
                        "modify every4th",
                        Stroke::Dashed,
                        2,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/read/all/{size}/all-cpus",
                        "read all, {threads} threads",
                        Stroke::Dots,
                        0,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/read/every4th/{size}/all-cpus",
                        "read every4th, {threads} threads",
                        Stroke::Dotted,
                        0,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/write/all/{size}/all-cpus",
                        "write all, {threads} threads",
                        Stroke::Dots,
                        1,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/write/every4th/{size}/all-cpus",
                        "write every4th, {threads} threads",
                        Stroke::Dotted,
                        1,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/modify/all/{size}/all-cpus",
                        "modify all, {threads} threads",
                        Stroke::Dots,
                        2,
                    ),
                    crate::rate_line(
                        "mem.bandwidth/modify/every4th/{size}/all-cpus",
                        "modify every4th, {threads} threads",
                        Stroke::Dotted,
                        2,
                    ),
                ],
                levels: None,
                host_caches: false,
                reference: None,
            }],
        }],
        headline: &[HeadlineRow {
            order: 210,
            operation: "Read 1 MB sequentially from memory",
            reference: Some("mem_seq_1m"),
            source: Source::LargestScaled {
                results: Template("mem.bandwidth/read/all/{size}"),
                largest_by: key::WORKING_SET_BYTES,
                bytes: 1_000_000,
            },
            qualifier: "",
            only_with_family: false,
        }],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::MemoryChases,
            results: RESULTS,
        }],
        ..Presentation::NONE
    },
    run,
};

/// The smallest working set: below it the call of the loop dominates a pass.
const MIN_WORKING_SET: u64 = 4 << 10;
/// Sizes are whole cache lines.
const LINE_BYTES: u64 = 64;
/// The most one call of a single-thread loop passes over (see [`segment_len`]).
const SEGMENT_BYTES: usize = 2 << 20;
/// Its mixes.
const MIXES: [Mix; 3] = [Mix::Read, Mix::Write, Mix::Modify];
/// Every element, or every 4th.
const PATTERNS: [(usize, &str); 2] = [(1, "all"), (4, "every4th")];

fn points_per_octave(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 1,
        Suite::Full => 4,
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    // Its largest working set is passed over by every CPU at once too.
    let max = ctx.max_working_set_from_curve(true);
    let sizes = working_sets(
        MIN_WORKING_SET,
        max,
        points_per_octave(ctx.suite),
        LINE_BYTES,
    );
    let huge_pages = ctx.options.flag(&super::HUGE_PAGES_OPTION);
    let peak = MemoryPeak::read(ctx.host().as_ref());
    keeping_measured(|results| {
        ctx.runner.scoped(sweep_point, |runner| {
            let mut clock = crate::sweep_time::PointClock::start();
            let mut out_of_time = Vec::new();
            for (index, &size) in sizes.iter().enumerate() {
                // The largest set is the headline's: a point before it that leaves no time
                // for it (about two points' worth, with every CPU at once) is left out.
                let largest = index + 1 == sizes.len();
                if !largest && !runner.config().has_time_for(clock.last * 3) {
                    out_of_time.push(size_label(size));
                    continue;
                }
                clock.point_begins();
                let mut buffer = MappedBuffer::new(size as usize, huge_pages).map_err(|e| {
                    ProbeError::Failed(format!("could not map {}: {e}", size_label(size)))
                })?;
                let data = buffer.as_words_mut();
                for mix in MIXES {
                    for (step, pattern) in PATTERNS {
                        let kernel = Kernel::new(mix, step);
                        // The headline reads the largest set's plain read.
                        let read_by_headline = largest && mix == Mix::Read && step == 1;
                        let pass = Pass {
                            kernel,
                            pattern,
                            size,
                        };
                        let single = runner.scoped(headline_point(read_by_headline), |runner| {
                            one_thread(runner, pass, data)
                        })?;
                        if !largest {
                            results.push(single.as_sweep_detail(is_sweep_detail(size, max)));
                            continue;
                        }
                        let all = all_cpus(runner, pass, data)?;
                        results.push(peak.compare(single, kernel));
                        results.push(peak.compare(all, kernel));
                    }
                }
                clock.point_ended();
            }
            crate::sweep_time::note_left_out(results, "mem.bandwidth working sets", &out_of_time);
            Ok(())
        })
    })
}

/// What a result of the sweep passes over: a loop, its pattern's name, the working set.
#[derive(Clone, Copy)]
struct Pass {
    kernel: Kernel,
    pattern: &'static str,
    size: u64,
}

/// One thread, one pass per call.
fn one_thread(
    runner: &mut Runner,
    pass: Pass,
    data: &mut [u64],
) -> Result<BenchResult, ProbeError> {
    let (kernel, pattern, size) = (pass.kernel, pass.pattern, pass.size);
    let access = kernel.mix.label();
    let segment_len = segment_len(data.len());
    let segments = data.len() / segment_len;
    let elements = kernel.indices_visited(segment_len);
    let how = if segments > 1 {
        format!(
            "{segments} segments of {} in turn, one per call",
            size_label((segment_len * size_of::<u64>()) as u64)
        )
    } else {
        "the whole buffer per call".to_string()
    };
    let mut next = 0;
    let result = runner
        .bench(
            &format!("mem.bandwidth/{access}/{pattern}/{}", size_label(size)),
            &format!(
                "{access} pass over {pattern} 64-bit elements of a {} buffer, one thread, {how}",
                size_label(size)
            ),
            || {
                let segment = &mut data[next * segment_len..(next + 1) * segment_len];
                next = (next + 1) % segments;
                kernel.pass(segment)
            },
        )?
        .per_operation(elements as u64);
    Ok(
        described(result, pass, 1)
            .with_parameter(SEGMENT_BYTES_KEY, segment_len * size_of::<u64>()),
    )
}

/// The elements one call passes over: the whole buffer up to [`SEGMENT_BYTES`], beyond it the
/// largest equal segments of at most that size, in whole lines. Successive calls take the
/// segments in turn, so the working set is still the whole buffer, while a sample of a
/// buffer many times the last-level cache lasts a fraction of a pass rather than several.
fn segment_len(len: usize) -> usize {
    let max = SEGMENT_BYTES / size_of::<u64>();
    if len <= max {
        return len;
    }
    let words_per_line = LINE_BYTES as usize / size_of::<u64>();
    (len / len.div_ceil(max) / words_per_line * words_per_line).max(words_per_line)
}

/// Every online CPU at once over shares of the same buffer.
fn all_cpus(runner: &mut Runner, pass: Pass, data: &mut [u64]) -> Result<BenchResult, ProbeError> {
    let (kernel, pattern, size) = (pass.kernel, pass.pattern, pass.size);
    let access = kernel.mix.label();
    let name = format!(
        "mem.bandwidth/{access}/{pattern}/{}/all-cpus",
        size_label(size)
    );
    let method = format!(
        "{access} passes over {pattern} 64-bit elements of a {} buffer shared out among one \
         pinned thread per online CPU, timed from the first start to the last end",
        size_label(size)
    );
    let host = runner.host().clone();
    // All online CPUs, even when this process was pinned to one with --pin.
    let mut crew = Crew {
        host: &host,
        cpus: &host.every_cpu(),
        memory: Memory::Shares(data),
    };
    let samples = runner.config().samples;
    let all = crew.measure(runner, (&name, &method), kernel, (samples, Per::Index))?;
    let result = described(all.result, pass, all.threads);
    Ok(if all.unpinned > 0 {
        result.with_parameter(
            UNPINNED_THREADS,
            format!(
                "{} (could not be pinned; ran where the kernel put them)",
                all.unpinned
            ),
        )
    } else {
        result
    })
}

fn described(result: BenchResult, pass: Pass, threads: usize) -> BenchResult {
    let (kernel, pattern, size) = (pass.kernel, pass.pattern, pass.size);
    result
        .with_bytes_per_operation(kernel.mix.bytes_per_index())
        .with_parameter(key::WORKING_SET_BYTES, size)
        .with_parameter(key::ACCESS, kernel.mix.label())
        .with_parameter(key::PATTERN, pattern)
        .with_parameter(ELEMENT_BYTES, size_of::<u64>())
        .with_parameter(key::THREADS, threads)
        .with_parameter(VECTOR_ISA, kernel.vector_isa())
}

/// The most the memory modules could deliver, or why that is not known.
struct MemoryPeak(Result<(f64, String), String>);

impl MemoryPeak {
    fn read(host: &dyn Host) -> MemoryPeak {
        MemoryPeak(host.memory_modules().and_then(|modules| {
            let peak = peak_bandwidth_bytes_per_s(&modules).ok_or_else(|| {
                "the firmware's memory table gives no module speeds (common in VMs)".to_string()
            })?;
            let first = &modules[0];
            let how = format!(
                "{} {} module(s) at {} MT/s × {} bits, one per channel assumed",
                modules.len(),
                first.memory_type,
                first.speed_mts,
                first.data_width_bits
            );
            Ok((peak, how))
        }))
    }

    /// Adds the peak, and the share of it reached, to a read-every-element result.
    fn compare(&self, result: BenchResult, kernel: Kernel) -> BenchResult {
        if kernel.mix != Mix::Read || kernel.step != 1 {
            return result;
        }
        match &self.0 {
            Ok((peak, how)) => {
                let share = result.gigabytes_per_second().map(|rate| rate * 1e9 / peak);
                let result = result
                    .with_parameter(PLAUSIBLE_PEAK_BYTES_PER_SECOND, *peak)
                    .with_parameter(PLAUSIBLE_PEAK_FROM, how.as_str());
                match share {
                    Some(share) => result.with_parameter(SHARE_OF_PEAK, share),
                    None => result,
                }
            }
            Err(why) => result.with_parameter(PLAUSIBLE_PEAK_UNKNOWN, why.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_rate(runner: &mut Runner, size: u64) -> f64 {
        let mut buffer = MappedBuffer::new(size as usize, false).unwrap();
        let kernel = Kernel::new(Mix::Read, 1);
        let pass = Pass {
            kernel,
            pattern: "all",
            size,
        };
        let r = one_thread(runner, pass, buffer.as_words_mut()).unwrap();
        r.gigabytes_per_second().unwrap()
    }

    #[test]
    fn no_loop_is_optimised_away() {
        let mut runner = crate::test_runner(7, std::time::Duration::from_micros(300));
        let mut buffer = MappedBuffer::new(16 << 10, false).unwrap();
        for mix in MIXES {
            for (step, pattern) in PATTERNS {
                let kernel = Kernel::new(mix, step);
                let pass = Pass {
                    kernel,
                    pattern,
                    size: 16 << 10,
                };
                let r = one_thread(&mut runner, pass, buffer.as_words_mut()).unwrap();
                assert_eq!(r.verdict, latlab_engine::Verdict::Measured, "{}", r.name);
            }
        }
    }

    /// A set in L1 is read faster than one far beyond L2; wide margin, small sizes.
    #[test]
    fn bandwidth_falls_when_the_set_leaves_the_caches() {
        if crate::skipped_under_emulation() {
            return;
        }
        let mut runner = crate::test_runner(5, std::time::Duration::from_micros(500));
        let cached = read_rate(&mut runner, 16 << 10);
        let beyond = read_rate(&mut runner, 32 << 20);
        assert!(
            cached > 1.5 * beyond,
            "16 KiB {cached} GB/s, 32 MiB {beyond} GB/s"
        );
    }

    /// Large buffers are cut into equal segments of whole lines that cover all but less than
    /// a line of each segment's share; small ones are passed over whole.
    #[test]
    fn large_buffers_are_passed_over_in_equal_segments() {
        let words = |bytes: usize| bytes / size_of::<u64>();
        assert_eq!(segment_len(words(1 << 20)), words(1 << 20));
        assert_eq!(segment_len(words(SEGMENT_BYTES)), words(SEGMENT_BYTES));
        for bytes in [3 << 20, 192 << 20, (96 << 20) + (7 << 6), 5 << 20] {
            let len = words(bytes);
            let segment = segment_len(len);
            let segments = len / segment;
            assert!(segment <= words(SEGMENT_BYTES), "{bytes}: {segment}");
            assert_eq!(segment % 8, 0, "{bytes}: whole lines");
            assert!(
                len - segments * segment < 8 * segments,
                "{bytes}: {segment}"
            );
        }
    }

    #[test]
    fn a_rate_is_bytes_over_time() {
        let mut runner = crate::test_runner(5, std::time::Duration::from_micros(200));
        let mut buffer = MappedBuffer::new(16 << 10, false).unwrap();
        let kernel = Kernel::new(Mix::Modify, 1);
        let pass = Pass {
            kernel,
            pattern: "all",
            size: 16 << 10,
        };
        let r = one_thread(&mut runner, pass, buffer.as_words_mut()).unwrap();
        assert_eq!(r.bytes_per_operation, Some(16));
        let rate = r.gigabytes_per_second().unwrap();
        assert!((rate - 16.0 / r.summary.median).abs() < 1e-9);
        assert_eq!(
            *r.parameter(latlab_engine::names::key::THREADS).unwrap(),
            1u64.into()
        );
    }
}
