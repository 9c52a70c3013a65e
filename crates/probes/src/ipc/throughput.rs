//! `ipc.throughput`: round trips of a payload between two processes, by payload size and
//! transport.
//!
//! For each transport ([`Transport`]: pipes, a Unix stream socket pair, a Unix datagram
//! socket pair, eventfd signalling with the payload in shared memory, TCP over 127.0.0.1)
//! and each payload from 4 B to 64 KiB (doubling; quadrupling in the quick suite), a forked server echoes every message of
//! that size back; one timed call of the client is one round trip. The time and the client's
//! CPU time are per round trip, and the rate counts the payload both ways (2 × size bytes
//! per round trip), as Google Benchmark's `bytes_per_second` counts the bytes an iteration
//! processes. The processes run where the scheduler puts them (the `cpus` parameter says
//! which were allowed); `proc.pipe` shows what that costs against one CPU.

use super::link::{Link, Transport};
use crate::mem::{headline_point, sweep_point};
use crate::peer::{Child, Failure, Watchdog, time_limit};
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical};
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::units::format_bytes;
use latlab_engine::{BenchResult, Runner};

const PAYLOAD_BYTES: Key = Key::new("payload_bytes");
const TRANSPORT: Key = Key::new("transport");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "ipc.throughput/pipe/{size}",
    "ipc.throughput/unix-stream/{size}",
    "ipc.throughput/unix-dgram/{size}",
    "ipc.throughput/eventfd-shm/{size}",
    "ipc.throughput/tcp/{size}",
];

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "ipc.throughput",
    method: "echo round trips of 4 B … 64 KiB between two processes over pipes, Unix sockets, eventfd + shared memory, loopback TCP",
    timing: crate::Timing::LessEmptyLoop,
    results: RESULTS,
    typical: Typical::quick_full(1.3, 25.0),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        headline: &[crate::headline_row(
            170,
            "Loopback TCP round trip",
            None,
            "ipc.throughput/tcp/4B",
            "4 bytes",
        )],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::CoreToCore,
            results: RESULTS,
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// The smallest and largest payloads.
const SMALLEST: usize = 4;
const LARGEST: usize = 64 << 10;

/// The payloads: every power of two from [`SMALLEST`] to [`LARGEST`] in the full suite, every
/// other one in the quick suite (both keep a page, 4 KiB, and the pipe buffer, 64 KiB).
fn payload_sizes(suite: Suite) -> Vec<usize> {
    let step = match suite {
        Suite::Quick => 4,
        Suite::Full => 2,
    };
    std::iter::successors(Some(SMALLEST), |&n| (n < LARGEST).then_some(n * step)).collect()
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let cpus = ctx.host().allowed_cpus();
    let sizes = payload_sizes(ctx.suite);
    ctx.runner.scoped(sweep_point, |runner| {
        let mut results: Vec<BenchResult> = Vec::new();
        let mut clock = crate::sweep_time::PointClock::start();
        let mut out_of_time = Vec::new();
        for transport in Transport::ALL {
            for &n in &sizes {
                // The headline reads the TCP round trip of the smallest payload: measured
                // whatever the budget; another point that would end past the deadline is
                // left out.
                let read_by_headline = transport == Transport::Tcp && n == SMALLEST;
                if !read_by_headline && !runner.config().has_time_for(clock.last) {
                    out_of_time.push(format!("{}/{}", transport.label(), format_bytes(n as f64)));
                    continue;
                }
                clock.point_begins();
                let result = runner.scoped(headline_point(read_by_headline), |runner| {
                    measure(runner, transport, n)
                })?;
                clock.point_ended();
                results.push(result.with_parameter(key::CPUS, cpus.as_slice()));
            }
        }
        crate::sweep_time::note_left_out(&mut results, "ipc.throughput points", &out_of_time);
        Ok(results)
    })
}

fn measure(runner: &mut Runner, transport: Transport, n: usize) -> Result<BenchResult, ProbeError> {
    let name = format!(
        "ipc.throughput/{}/{}",
        transport.label(),
        format_bytes(n as f64)
    );
    let mut link = Link::open(transport, n)
        .map_err(|e| ProbeError::Failed(format!("{name}: could not open the channel: {e}")))?;
    let mut server_buffer = vec![0u8; n];
    let closes = link.child_closes();
    let child = {
        let link = &link;
        // SAFETY: `serve` makes raw system calls on the channel opened before the fork, into
        // a buffer allocated before it, and allocates nothing.
        unsafe { Child::fork(move || link.serve(&mut server_buffer, n, &closes)) }
            .map_err(|e| ProbeError::Failed(format!("{name}: fork: {e}")))?
    };
    link.close_server_half();
    let failure = Failure::default();
    let watchdog = Watchdog::arm(
        vec![child.pid()],
        link.wake_on_kill(),
        time_limit(runner),
        &name,
        &failure,
    )?;
    let mut buffer: Vec<u8> = (0..n).map(|i| i as u8).collect();
    let outcome = failure.guard(runner, |runner| {
        Ok(runner.bench(
            &name,
            &format!("{} B echoed over {}", n, transport.describe()),
            || {
                if !link.round_trip(&mut buffer, n) || failure.has_failed() {
                    failure.fail(format!("{name}: the server process stopped answering"));
                }
            },
        )?)
    });
    drop(watchdog);
    drop(child);
    drop(link);
    Ok(outcome?
        .with_bytes_per_operation(2 * n as u64)
        .with_parameter(PAYLOAD_BYTES, n)
        .with_parameter(TRANSPORT, transport.label()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every transport carries every byte of a payload there and back intact.
    #[test]
    fn the_quick_suite_keeps_a_page_and_the_pipe_buffer() {
        let (quick, full) = (payload_sizes(Suite::Quick), payload_sizes(Suite::Full));
        assert_eq!(full.len(), 15);
        assert_eq!(quick, [4, 16, 64, 256, 1024, 4096, 16384, 65536]);
        assert!(quick.iter().all(|n| full.contains(n)));
    }

    #[test]
    fn every_transport_echoes_the_payload_intact() {
        for transport in Transport::ALL {
            for n in [4, 1000, LARGEST] {
                let mut link = Link::open(transport, n).unwrap();
                let mut server_buffer = vec![0u8; n];
                let closes = link.child_closes();
                let child = {
                    let link = &link;
                    // SAFETY: as in the probe: `serve` is async-signal-safe.
                    unsafe { Child::fork(move || link.serve(&mut server_buffer, n, &closes)) }
                        .unwrap()
                };
                link.close_server_half();
                for round in 0..3u8 {
                    let sent: Vec<u8> = (0..n).map(|i| (i as u8) ^ round).collect();
                    let mut buffer = sent.clone();
                    assert!(link.round_trip(&mut buffer, n), "{transport:?} {n} B");
                    assert_eq!(buffer, sent, "{transport:?} {n} B, round {round}");
                }
                drop(child);
            }
        }
    }

    /// A bigger payload never travels faster than a much smaller one (both processes on one
    /// CPU, so that waking the other CPU does not drown the difference).
    #[test]
    fn a_large_payload_takes_longer_than_a_small_one() {
        let mut runner = crate::test_runner(5, std::time::Duration::from_micros(500));
        let host = runner.host().clone();
        let _affinity = latlab_engine::host::AffinityGuard::save(&host);
        host.pin_to_cpu(host.first_allowed_cpu()).unwrap();
        let small = measure(&mut runner, Transport::UnixStream, 4).unwrap();
        let large = measure(&mut runner, Transport::UnixStream, LARGEST).unwrap();
        assert!(
            large.summary.median > small.summary.median,
            "64 KiB {} ns, 4 B {} ns",
            large.summary.median,
            small.summary.median
        );
        assert_eq!(large.bytes_per_operation, Some(2 * LARGEST as u64));
    }
}
