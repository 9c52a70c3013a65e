//! `syscall.getppid`: the round trip into the kernel and back for the cheapest system call.
//!
//! `getppid` does almost no work in the kernel and, unlike `getpid`, has never been cached by
//! a C library, so the figure is the entry and exit cost: the `syscall` instruction, the
//! kernel's entry code and its speculative-execution mitigations, and `sysret`. It is made with
//! `syscall(SYS_getppid)`, as `perf bench syscall basic` does, so the two can be compared.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "syscall.getppid",
    method: "syscall(SYS_getppid) back to back: the kernel entry and exit cost",
    timing: crate::Timing::LessEmptyLoop,
    results: &["syscall.getppid/getppid"],
    typical: Typical::quick_full(0.06, 0.74),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        headline: &[crate::headline_row(120, "System call", None, GETPPID, "")],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

const GETPPID: &str = "syscall.getppid/getppid";

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let result = ctx.runner.bench(
        GETPPID,
        "syscall(SYS_getppid) back to back",
        // SAFETY: getppid takes no arguments and cannot fail.
        || unsafe { libc::syscall(libc::SYS_getppid) },
    )?;
    Ok(vec![result])
}
