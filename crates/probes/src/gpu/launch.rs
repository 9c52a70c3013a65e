//! `gpu.launch`: what starting an empty kernel costs, and how long the host takes to learn
//! that it has finished.
//!
//! - `enqueue`: back-to-back launches, the host's cost per launch (launch throughput): the
//!   slope between batches of 32 and 64 launches, each batch followed by one
//!   synchronisation, which the slope cancels.
//! - `sync`: launch, then `cuStreamSynchronize`: the round trip a program pays for a kernel
//!   whose result it waits for (the headline row). `event-sync` waits on an event recorded
//!   after the kernel instead (spinning), `event-sync-blocking` on an event created with
//!   `CU_EVENT_BLOCKING_SYNC` (the thread sleeps and is woken: the wake-up adds its latency).
//! - `idle-sync`: `cuStreamSynchronize` on a stream with nothing queued: the cost of asking.
//! - `graph-kernel`: the cost per kernel inside a CUDA graph, the slope between graphs of 32
//!   and 64 empty kernels, each launched and waited for; `graph-sync`: a graph of one kernel,
//!   launched and waited for.
//!
//! All are host times on latlab's clock, through calibrated loops.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "gpu.launch",
    method: "an empty kernel launched back to back, launched and waited for (stream, event, blocking event), and in CUDA graphs",
    timing: crate::Timing::LessEmptyLoop,
    results: &[
        "gpu.launch/enqueue",
        "gpu.launch/sync",
        "gpu.launch/event-sync",
        "gpu.launch/event-sync-blocking",
        "gpu.launch/idle-sync",
        "gpu.launch/graph-kernel",
        "gpu.launch/graph-sync",
    ],
    typical: Typical::quick_full(2.0, 6.0),
    extras: super::own_process_noting(
        "per-launch and per-graph-kernel costs as the slope between batches of 32 and 64",
    ),
    presentation: latlab_engine::presentation::Presentation {
        headline: &[latlab_engine::presentation::HeadlineRow {
            only_with_family: true,
            ..crate::headline_row(
                90,
                "GPU kernel launch (+ sync)",
                None,
                "gpu.launch/sync",
                "empty kernel",
            )
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// Launches per batch: the slope's two counts.
const BATCHES: (u64, u64) = (32, 64);

super::entry!(measure);

#[cfg(feature = "gpu")]
fn measure(ctx: &mut ProbeContext, gpu: &super::Gpu) -> Result<Vec<BenchResult>, ProbeError> {
    use super::cuda_failure;
    use super::driver::Launch;

    let module = gpu.module(super::kernels::EMPTY)?;
    let empty = module.kernel("empty").map_err(cuda_failure)?;
    // Warm up: the first launch loads the module onto the device.
    Launch::new(empty, 1, 1, &[])
        .enqueue(&gpu.stream)
        .and_then(|()| gpu.stream.synchronize())
        .map_err(cuda_failure)?;
    let failed = super::FirstError::default();
    let mut results = launches(ctx.runner, gpu, empty, &failed)?;
    graphs(ctx.runner, (gpu, empty), &failed, &mut results)?;
    Ok(results)
}

/// Launches on the stream: back to back (`enqueue`), then each waited for on the stream, on
/// an event either way, and the wait alone.
#[cfg(feature = "gpu")]
fn launches(
    runner: &mut latlab_engine::Runner,
    gpu: &super::Gpu,
    empty: super::driver::Kernel<'_>,
    failed: &super::FirstError,
) -> Result<Vec<BenchResult>, ProbeError> {
    use super::cuda_failure;
    use super::driver::{Event, Launch};

    let (stream, note) = (&gpu.stream, |result| failed.note(result));
    let mut results = Vec::new();
    let mut launch = Launch::new(empty, 1, 1, &[]);
    let batch = |n: u64| {
        let mut launch = Launch::new(empty, 1, 1, &[]);
        move || {
            for _ in 0..n {
                note(launch.enqueue(stream));
            }
            note(stream.synchronize());
        }
    };
    let enqueue = runner.bench_slope(
        "gpu.launch/enqueue",
        &format!(
            "batches of {} and {} empty-kernel launches, each batch then synchronised: the slope per launch",
            BATCHES.0, BATCHES.1
        ),
        (BATCHES.0, batch(BATCHES.0)),
        (BATCHES.1, batch(BATCHES.1)),
    )?;
    results.push(failed.checked(enqueue)?);

    let sync = runner.bench(
        "gpu.launch/sync",
        "an empty kernel launched, then cuStreamSynchronize",
        || {
            note(launch.enqueue(stream));
            note(stream.synchronize());
        },
    )?;
    results.push(failed.checked(sync)?);

    for (name, blocking, how) in [
        ("gpu.launch/event-sync", false, "an event (spinning)"),
        (
            "gpu.launch/event-sync-blocking",
            true,
            "an event created with CU_EVENT_BLOCKING_SYNC (the thread sleeps until woken)",
        ),
    ] {
        let event = Event::new(&gpu.device, blocking).map_err(cuda_failure)?;
        let result = runner.bench(
            name,
            &format!(
                "an empty kernel launched, then cuEventSynchronize on {how} recorded after it"
            ),
            || {
                note(launch.enqueue(stream));
                note(event.record(stream));
                note(event.synchronize());
            },
        )?;
        results.push(failed.checked(result)?);
    }

    let idle = runner.bench(
        "gpu.launch/idle-sync",
        "cuStreamSynchronize on a stream with nothing queued",
        || note(stream.synchronize()),
    )?;
    results.push(failed.checked(idle)?);

    Ok(results)
}

/// Kernels in CUDA graphs: the cost per kernel inside a graph, and a graph of one waited for.
#[cfg(feature = "gpu")]
fn graphs(
    runner: &mut latlab_engine::Runner,
    (gpu, empty): (&super::Gpu, super::driver::Kernel<'_>),
    failed: &super::FirstError,
    results: &mut Vec<BenchResult>,
) -> Result<(), ProbeError> {
    use super::cuda_failure;
    use super::driver::{Graph, Launch};

    let (stream, note) = (&gpu.stream, |result| failed.note(result));
    let graph_of = |kernels: u64| {
        let mut launch = Launch::new(empty, 1, 1, &[]);
        Graph::capture(stream, || {
            (0..kernels).try_for_each(|_| launch.enqueue(stream))
        })
        .map_err(cuda_failure)
    };
    let (short, long) = (graph_of(BATCHES.0)?, graph_of(BATCHES.1)?);
    let run_graph = |graph: &Graph| {
        note(graph.launch(stream));
        note(stream.synchronize());
    };
    // Warm up both graphs: their first launch uploads them.
    run_graph(&short);
    run_graph(&long);
    let per_kernel = runner.bench_slope(
        "gpu.launch/graph-kernel",
        &format!(
            "CUDA graphs of {} and {} empty kernels, each launched and synchronised: the slope per kernel",
            BATCHES.0, BATCHES.1
        ),
        (BATCHES.0, || run_graph(&short)),
        (BATCHES.1, || run_graph(&long)),
    )?;
    results.push(failed.checked(per_kernel)?);
    let single = graph_of(1)?;
    run_graph(&single);
    let graph_sync = runner.bench(
        "gpu.launch/graph-sync",
        "a CUDA graph of one empty kernel launched, then cuStreamSynchronize",
        || run_graph(&single),
    )?;
    results.push(failed.checked(graph_sync)?);
    Ok(())
}
