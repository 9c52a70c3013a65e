//! latlab's probes: what is measured, one file per probe, grouped by family.
//!
//! A probe is a row of [`PROBES`]: an id (`family.name`), a one-line method and a function
//! that measures with the engine's [`Runner`] and returns results named `id/variant`. Probes
//! never print; the registry drives `latlab list`, `--only`/`--skip` and the documentation.

// Tests read and write files as they please: the doors are for what latlab itself does.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
mod clock;
mod cpu;
mod file;
mod findings;
mod gpu;
mod helper;
mod ipc;
mod mem;
mod monotonic;
pub mod options;
mod peer;
mod proc;
mod random;
mod sched;
pub mod stability;
mod sweep_time;
pub mod synthetic;
mod syscall;
mod thread;

use latlab_engine::presentation::{Presentation, Presentations};
use latlab_engine::{BenchResult, Interrupted, Runner, SharedHost};

pub use findings::Findings;
pub use mem::sizes::{DEFAULT_MAX_CEILING, default_max_size};
pub use options::{OptionSpec, OptionValues};
/// The options whose values the run checks against the machine before it measures.
pub use {file::DIR_OPTION, ipc::latency::PAIRS_OPTION, mem::MAX_SIZE_OPTION};

/// Which suite a probe runs in: the quick one keeps sizes and counts small.
pub use latlab_engine::Suite;

/// What a probe measures with.
pub struct ProbeContext<'a> {
    pub runner: &'a mut Runner,
    pub suite: Suite,
    /// The values the run gave the probes' options (see [`options`]).
    pub options: OptionValues,
    /// What the probes found earlier in the run (see [`Findings`]).
    pub findings: std::sync::Arc<Findings>,
}

impl ProbeContext<'_> {
    /// The core's cycle: as `cpu.frequency` measured it earlier in the run, else measured
    /// now (a run without `cpu.frequency`, or before it).
    pub fn cycle(&mut self) -> Result<latlab_engine::cycle::Cycle, Interrupted> {
        match self.findings.cycle() {
            Some(cycle) => Ok(cycle),
            None => latlab_engine::cycle::measure(self.runner),
        }
    }

    /// The machine being measured.
    pub fn host(&self) -> &SharedHost {
        self.runner.host()
    }

    /// The largest cache the kernel reports (the last level, as it claims it: a guest's
    /// kernel may claim the host's).
    pub fn kernel_last_cache(&self) -> Option<u64> {
        self.host().caches().iter().map(|c| c.size_bytes).max()
    }

    /// The largest working set of the memory probes: as asked, else four times the host's
    /// last-level cache (at most [`DEFAULT_MAX_CEILING`]).
    pub fn max_working_set(&self) -> u64 {
        (self.options.bytes(&mem::MAX_SIZE_OPTION))
            .unwrap_or_else(|| default_max_size(&self.host().caches()))
    }

    /// The largest working set of a sweep sized from the latency curve (`mem.bandwidth`,
    /// `mem.memcpy`): in the quick suite, with no `--max-size`, where the curve found main
    /// memory earlier in the run, [`CURVE_MULTIPLE`] times the last cache it found, at the
    /// nearest power of two and never beyond [`ProbeContext::max_working_set`]; otherwise
    /// that. Far enough past the last cache that the largest point reads main memory,
    /// however large a cache the kernel claims.
    ///
    /// A sweep that ends with every CPU at once (`all_cpus`) goes twice as far, and as far
    /// past the kernel's last-level cache too where the kernel's claim is within
    /// [`PLAUSIBLE_CLAIM`] times what the curve found: the CPUs share that cache, of which
    /// one thread's curve shows only what the neighbours leave it. A claim beyond that is
    /// not a cache the guest gets (the book's memory methods, "The figures behind the rules").
    pub fn max_working_set_from_curve(&self, all_cpus: bool) -> u64 {
        let default = self.max_working_set();
        let (Suite::Quick, None, Some(found)) = (
            self.suite,
            self.options.bytes(&mem::MAX_SIZE_OPTION),
            self.findings.last_cache_bytes(),
        ) else {
            return default;
        };
        sized_from_curve(found, self.kernel_last_cache(), all_cpus).min(default)
    }
}

/// [`ProbeContext::max_working_set_from_curve`] where the curve found the last cache ending
/// at `found` and the kernel claims a last-level cache of `claim`, before the default bounds
/// it.
fn sized_from_curve(found: u64, claim: Option<u64>, all_cpus: bool) -> u64 {
    let bytes = if all_cpus {
        let plausible = claim.filter(|&claim| claim <= PLAUSIBLE_CLAIM * found);
        (2 * CURVE_MULTIPLE * found).max(CURVE_MULTIPLE * plausible.unwrap_or(0))
    } else {
        CURVE_MULTIPLE * found
    };
    nearest_power_of_two(bytes).min(CURVE_SIZED_CEILING)
}

/// The power of two nearest `bytes`, geometrically: within √2 of it either way.
fn nearest_power_of_two(bytes: u64) -> u64 {
    let up = bytes.max(1).next_power_of_two();
    let down = (up / 2).max(1);
    if (bytes as f64 / down as f64) < (up as f64 / bytes as f64) {
        down
    } else {
        up
    }
}

/// A kernel's last-level cache at most this many times what the curve found is one the
/// guest may get whole when its neighbours are quiet: where it ends moves severalfold from
/// one run to the next (the book's memory methods, "The figures behind the rules").
pub const PLAUSIBLE_CLAIM: u64 = 8;

/// The sweeps sized from the curve go no further than this: far past any last-level cache
/// a guest gets.
const CURVE_SIZED_CEILING: u64 = 256 << 20;

/// How far past the last cache the latency curve found the sweeps sized from it go.
pub const CURVE_MULTIPLE: u64 = 4;

/// Why a probe stopped short of its results.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("interrupted")]
    Interrupted(#[from] Interrupted),
    #[error("{0}")]
    Failed(String),
    /// Nothing the probe measures can be had here (no such interface, no permission); not a
    /// failure of the run.
    #[error("skipped: {0}")]
    Skipped(String),
    /// A sweep stopped part-way by `cause` (a mapping refused under a memory limit, a disk
    /// filling, Ctrl-C): the results measured before it are kept beside the failure.
    #[error("{cause}")]
    Partial {
        measured: Vec<BenchResult>,
        cause: Box<ProbeError>,
    },
}

impl ProbeError {
    /// This error, keeping the results measured before it.
    pub(crate) fn after(self, mut measured: Vec<BenchResult>) -> ProbeError {
        match self {
            _ if measured.is_empty() => self,
            ProbeError::Partial {
                measured: more,
                cause,
            } => {
                measured.extend(more);
                ProbeError::Partial { measured, cause }
            }
            cause => ProbeError::Partial {
                measured,
                cause: Box::new(cause),
            },
        }
    }

    /// The error with the results it kept (none but for [`ProbeError::Partial`]).
    pub fn into_parts(self) -> (ProbeError, Vec<BenchResult>) {
        match self {
            ProbeError::Partial { measured, cause } => (*cause, measured),
            other => (other, Vec::new()),
        }
    }
}

/// Runs a sweep that pushes each result into the vector it is given as soon as it is
/// measured: if the sweep stops part-way, the error keeps what it had measured.
pub(crate) fn keeping_measured(
    sweep: impl FnOnce(&mut Vec<BenchResult>) -> Result<(), ProbeError>,
) -> Result<Vec<BenchResult>, ProbeError> {
    let mut results = Vec::new();
    match sweep(&mut results) {
        Ok(()) => Ok(results),
        Err(e) => Err(e.after(results)),
    }
}

/// One probe: its id, its method in one line, and the function that runs it.
#[derive(Debug)]
pub struct ProbeSpec {
    pub id: &'static str,
    pub method: &'static str,
    /// How measured time becomes the probe's figures, as `latlab list` states it
    /// ([`ProbeSpec::timing_text`]).
    pub timing: Timing,
    /// The names of the results it produces, each `{placeholder}` standing for a value
    /// ([`latlab_engine::result_names`] says which): `mem.latency/random/{size}`. `--only` and `--skip`
    /// match them; a test checks every result of a run against them.
    pub results: &'static [&'static str],
    /// How long it typically takes, for the progress display's estimate of the time left.
    pub typical: Typical,
    /// What sets it apart from most probes, [`Extras::NONE`] where nothing does.
    pub extras: Extras,
    /// What its results feed in the report: plots, headline rows, matrices, distributions.
    pub presentation: Presentation,
    pub run: fn(&mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError>,
}

/// What a probe declares where it differs from most.
#[derive(Debug, Clone, Copy)]
pub struct Extras {
    /// What the method's name leaves unsaid for this probe (unroll counts, what is batched).
    pub timing_note: Option<&'static str>,
    /// The process it runs in: latlab's own, or one of its own (the GPU family).
    pub process: Process,
    /// Whether it is measured in each of the run's rounds or once.
    pub rounds: Rounds,
    /// The options it reads, each declared once where its family keeps it.
    pub options: &'static [&'static OptionSpec],
}

impl Extras {
    /// No timing note, latlab's own process, measured in each round, no options.
    pub const NONE: Extras = Extras {
        timing_note: None,
        process: Process::Shared,
        rounds: Rounds::Each,
        options: &[],
    };
}

impl ProbeSpec {
    /// The options it reads.
    pub fn options(&self) -> &'static [&'static OptionSpec] {
        self.extras.options
    }

    /// How measured time becomes the probe's figures, in words: the method, then the note.
    pub fn timing_text(&self) -> String {
        match self.extras.timing_note {
            Some(note) => format!("{}; {note}", self.timing.text()),
            None => self.timing.text().to_string(),
        }
    }

    /// What it is expected to cost in `suite`, in seconds: its typical cost, or nothing for a
    /// probe that its process's readiness already skips (the GPU family without a driver),
    /// so that a run's budget and its estimate of the time left do not wait for it.
    pub fn expected_seconds(&self, suite: Suite) -> f64 {
        match self.extras.process {
            Process::Own { ready } if ready().is_err() => 0.0,
            _ => self.typical.seconds(suite),
        }
    }
}

/// The process a probe runs in.
#[derive(Debug, Clone, Copy)]
pub enum Process {
    /// latlab's own.
    Shared,
    /// A process of its own for each round, started afresh from latlab's binary: a fault
    /// that poisons a process (a CUDA kernel's illegal address is sticky until the process
    /// ends) ends with it, and the next probe finds the device as new. `ready` is asked
    /// first, in latlab's process, for a reason to skip the probe without starting one
    /// (there is no CUDA driver).
    Own {
        ready: fn() -> Result<(), ProbeError>,
    },
}

/// Whether a probe is measured in each of the run's rounds
/// (`Config::rounds`), each round taking its share of the
/// samples so that its results carry how far they move between rounds, or once with all of
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounds {
    Each,
    /// In the first round only, with every sample, for the reason given: its results are
    /// read from an analysis of all its figures that a round's share would blur, or its
    /// set-up costs more than its samples. Its results carry no round medians, and
    /// `compare` judges them by the run-to-run scatter of all results.
    Once {
        why: &'static str,
    },
}

impl Rounds {
    /// The rounds a probe is measured in, of the run's `rounds`.
    pub fn of(self, rounds: usize) -> usize {
        match self {
            Rounds::Each => rounds,
            Rounds::Once { .. } => 1,
        }
    }
}

/// How long a probe typically takes in each suite, in seconds, as measured on a 2-vCPU
/// virtual machine (the book's "How it measures", "The figures behind the rules") with the
/// default largest working set. The
/// GPU family's are estimates from the work its probes do, not measurements: that machine
/// has no GPU. Only the progress display's estimate of the time left uses it, scaled by how
/// fast the run turns out to be; no figure depends on it.
#[derive(Debug, Clone, Copy)]
pub struct Typical {
    pub quick_s: f64,
    pub full_s: f64,
}

impl Typical {
    /// `quick_s` seconds in the quick suite, `full_s` in the full one.
    pub const fn quick_full(quick_s: f64, full_s: f64) -> Typical {
        Typical { quick_s, full_s }
    }

    pub fn seconds(self, suite: Suite) -> f64 {
        match suite {
            Suite::Quick => self.quick_s,
            Suite::Full => self.full_s,
        }
    }
}

/// The ways a probe turns measured time into figures. A calibrated loop's time includes the
/// loop's own instructions; subtracting an empty loop's cost is right when they run before
/// or after the body, and wrong for a dependent chain of a few cycles, beside which they run
/// in parallel (the subtraction then takes off time the chain never spent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// The engine's default.
    LessEmptyLoop,
    /// For dependent chains of a few cycles.
    Slope,
    /// For events too long or too irregular to repeat in a loop.
    Events,
    /// For a cost that only shows beside another: two loops that differ in it alone.
    Difference,
    /// For GPU kernels: the device's own clocks read around the timed work.
    OnDevice,
}

impl Timing {
    /// The method in words.
    pub fn text(self) -> &'static str {
        match self {
            Timing::LessEmptyLoop => {
                "calibrated loops less the empty loop's cost (the body is long or serialising: \
                 the loop's own instructions do not run beside it)"
            }
            Timing::Slope => {
                "the slope between two unroll counts: the loop's own cost is the same in both \
                 and cancels, overlapped or not"
            }
            Timing::Events => "each event timed on its own",
            Timing::Difference => {
                "the difference of two calibrated loops that differ only in what is measured: \
                 the loop's cost cancels"
            }
            Timing::OnDevice => "each launch timed on the device",
        }
    }
}

/// Every probe, in the order a run takes them.
pub static PROBES: &[ProbeSpec] = &[
    clock::read::SPEC,
    clock::vdso::SPEC,
    cpu::frequency::SPEC,
    cpu::call::SPEC,
    cpu::branch::SPEC,
    cpu::compress::SPEC,
    syscall::getppid::SPEC,
    mem::alloc::SPEC,
    mem::latency::SPEC,
    mem::bandwidth::SPEC,
    mem::memcpy::SPEC,
    mem::loaded::SPEC,
    mem::numa::SPEC,
    thread::lifecycle::SPEC,
    thread::handoff::SPEC,
    thread::pool::SPEC,
    thread::mutex::SPEC,
    thread::atomic::SPEC,
    thread::core_to_core::SPEC,
    proc::pipe::SPEC,
    proc::spawn::SPEC,
    ipc::throughput::SPEC,
    ipc::latency::SPEC,
    file::read::SPEC,
    file::write::SPEC,
    file::cold::SPEC,
    sched::priority::SPEC,
    sched::wakeup::SPEC,
    gpu::launch::SPEC,
    gpu::copy::SPEC,
    gpu::memory::SPEC,
    gpu::spread::SPEC,
    gpu::atomic::SPEC,
    gpu::shared::SPEC,
];

/// A headline row read from one result: the `order`th row of the table, for `operation`,
/// beside the 2012 table's `reference` row when there is one.
pub(crate) const fn headline_row(
    order: u16,
    operation: &'static str,
    reference: Option<&'static str>,
    result: &'static str,
    qualifier: &'static str,
) -> latlab_engine::presentation::HeadlineRow {
    latlab_engine::presentation::HeadlineRow {
        order,
        operation,
        reference,
        source: latlab_engine::presentation::Source::Result(latlab_engine::presentation::Template(
            result,
        )),
        qualifier,
        only_with_family: false,
    }
}

/// A plot's line of rates (bytes per second at the median): the results `results` covers,
/// drawn in `stroke` and palette colour `color`.
pub(crate) const fn rate_line(
    results: &'static str,
    label: &'static str,
    stroke: latlab_engine::presentation::Stroke,
    color: u8,
) -> latlab_engine::presentation::Line {
    latlab_engine::presentation::Line {
        results: latlab_engine::presentation::Template(results),
        label,
        y: latlab_engine::presentation::Measure::Rate,
        stroke,
        color,
    }
}

/// What every probe's results feed in the report, for the report to render.
pub fn presentations() -> Presentations {
    Presentations::of(PROBES.iter().map(|probe| &probe.presentation))
}

/// Tests that time something share the CPUs (read); tests that load every CPU on purpose
/// (hogs, the whole registry) take them alone (write), so their load never lands in another
/// test's figures.
#[cfg(test)]
static CPUS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held by a test whose figures a deliberate CPU load would spoil.
#[cfg(test)]
pub(crate) fn quiet_cpus() -> std::sync::RwLockReadGuard<'static, ()> {
    CPUS.read().unwrap_or_else(|e| e.into_inner())
}

/// Held by a test that loads the CPUs on purpose.
#[cfg(test)]
pub(crate) fn load_cpus() -> std::sync::RwLockWriteGuard<'static, ()> {
    CPUS.write().unwrap_or_else(|e| e.into_inner())
}

/// Held by a test whose figure the other tests of this process would spoil by running
/// beside it: a fork's cost is set by the size of the process, which their buffers change
/// from one event to the next.
#[cfg(test)]
pub(crate) fn process_alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    load_cpus()
}

/// A runner for probe tests (few, short samples on the real clock), holding the CPUs
/// against deliberate load while it lives.
#[cfg(test)]
pub(crate) struct TestRunner {
    runner: Runner,
    _quiet: std::sync::RwLockReadGuard<'static, ()>,
}

#[cfg(test)]
impl std::ops::Deref for TestRunner {
    type Target = Runner;
    fn deref(&self) -> &Runner {
        &self.runner
    }
}

#[cfg(test)]
impl std::ops::DerefMut for TestRunner {
    fn deref_mut(&mut self) -> &mut Runner {
        &mut self.runner
    }
}

/// Whether a test that asserts a property of the machine (a mispredicted branch costs
/// more, a set beyond the caches is read slower, loading a program costs more than a fork)
/// runs under an emulator, whose costs are its own: it then says so and is counted as
/// skipped ([`latlab_test_support::skipped`]).
#[cfg(test)]
pub(crate) fn skipped_under_emulation() -> bool {
    let Some(why) = latlab_engine::environment::emulation::detect() else {
        return false;
    };
    latlab_test_support::skipped(module_path!(), line!(), &format!("emulated ({why})"));
    true
}

#[cfg(test)]
pub(crate) fn test_runner(samples: usize, target: std::time::Duration) -> TestRunner {
    TestRunner {
        _quiet: quiet_cpus(),
        runner: Runner::new(latlab_engine::Config {
            samples,
            target_sample_time: target,
            ..latlab_engine::Config::quick()
        }),
    }
}

/// A cache of `level`, `kind` (`Data`, `Instruction`, `Unified`) and `size_bytes`, with
/// 64-byte lines, private to one CPU: a test's stand-in for what the kernel reports.
#[cfg(test)]
pub(crate) fn cache(
    level: u8,
    kind: &str,
    size_bytes: u64,
) -> latlab_engine::environment::CacheInfo {
    latlab_engine::environment::CacheInfo {
        level,
        kind: kind.into(),
        size_bytes,
        line_bytes: Some(64),
        shared_by_cpus: 1,
    }
}

/// The result named `name` among a test's results.
#[cfg(test)]
pub(crate) fn named<'a>(results: &'a [BenchResult], name: &str) -> &'a BenchResult {
    results
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no {name} among the results"))
}

/// Runs `probe` as [`test_runner`] would sample it, with the default options; its results
/// and the runner (still holding the CPUs).
#[cfg(test)]
pub(crate) fn run_for_test(
    probe: &ProbeSpec,
    samples: usize,
    target: std::time::Duration,
) -> (Vec<BenchResult>, TestRunner) {
    let mut runner = test_runner(samples, target);
    let results = (probe.run)(&mut ProbeContext::for_test(&mut runner))
        .unwrap_or_else(|e| panic!("{}: {e}", probe.id));
    (results, runner)
}

/// A runner on the synthetic machine (4 CPUs, three cache levels, made-up figures) with the
/// quick suite's configuration.
#[cfg(test)]
pub(crate) fn synthetic_runner() -> Runner {
    Runner::on(
        std::sync::Arc::new(
            latlab_engine::SyntheticHost::default().with_model(&crate::synthetic::MODEL),
        ),
        latlab_engine::Config::quick(),
    )
}

#[cfg(test)]
impl<'a> ProbeContext<'a> {
    /// Gives `--max-size` the value `bytes`.
    pub(crate) fn set_max_size(&mut self, bytes: u64) {
        (self.options).set(&MAX_SIZE_OPTION, options::Value::Bytes(bytes));
    }

    pub(crate) fn for_test(runner: &'a mut Runner) -> ProbeContext<'a> {
        ProbeContext {
            runner,
            suite: Suite::Quick,
            options: OptionValues::default(),
            findings: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_probe_template_is_well_formed_and_distinct() {
        use latlab_engine::result_names::template_regex;
        let mut seen = HashSet::new();
        for probe in PROBES {
            assert!(!probe.results.is_empty(), "{} lists no results", probe.id);
            for template in probe.results {
                assert!(
                    template.starts_with(&format!("{}/", probe.id)),
                    "{template} is not under {}",
                    probe.id
                );
                template_regex(template)
                    .unwrap_or_else(|bad| panic!("{template}: unknown placeholder {bad}"));
                assert!(seen.insert(*template), "{template} listed twice");
            }
        }
    }

    /// The probes declare which stability checks speak for their results: the memory
    /// chases for the memory hierarchy, the core-to-core pair for figures that cross CPUs
    /// (the unpinned pipe, the two-CPU hand-off, contended locks and atomics, IPC), both for
    /// memory under load, none for the rest.
    #[test]
    fn the_stability_checks_speak_for_the_results_their_probes_name() {
        use latlab_engine::presentation::StabilityCheck::{CoreToCore, MemoryChases};
        let declared = presentations();
        let memory = MemoryChases.names();
        let across = CoreToCore.names();
        for (name, checks) in [
            ("mem.latency/random/1MiB", memory),
            ("mem.latency/level/DRAM", memory),
            ("mem.bandwidth/read/all/8MiB", memory),
            ("mem.memcpy/4KiB", memory),
            ("thread.core_to_core/one-way/cas/0-1", across),
            ("ipc.latency/pair0/fifo", across),
            ("ipc.latency/priority-inheritance", across),
            ("ipc.throughput/pipe/4KiB", across),
            ("proc.pipe/unpinned/round-trip", across),
            ("thread.handoff/two-cpus", across),
            ("thread.mutex/pthread/contended", across),
            ("thread.atomic/contended", across),
            ("proc.pipe/pinned/round-trip", &[]),
            ("thread.handoff/same-cpu", &[]),
            ("thread.mutex/std/uncontended", &[]),
            ("cpu.call/direct", &[]),
            ("file.read/open-close", &[]),
        ] {
            assert_eq!(declared.checks_for(name), checks, "{name}");
        }
        // A figure under load: both the memory path and the CPUs' placement speak for it.
        let both: Vec<&str> = memory.iter().chain(across).copied().collect();
        for name in ["mem.loaded/read/0", "mem.loaded/peak/read"] {
            assert_eq!(declared.checks_for(name), both, "{name}");
        }
        assert_eq!(declared.checks_for("mem.numa/latency/0-1"), memory);
    }

    /// Every template a declaration reads is one a probe lists (or a name one covers), so
    /// that a renamed result cannot silently empty a plot or a headline row; every grid's
    /// prefix starts some; no two headline rows claim one place.
    #[test]
    fn the_declarations_read_listed_results() {
        let listed: HashSet<&str> = PROBES.iter().flat_map(|p| p.results).copied().collect();
        let declared = presentations();
        // A declared template is a listed one, or one name a listed template covers.
        let covered = |declared: &str| {
            listed.contains(declared)
                || (listed.iter())
                    .any(|t| latlab_engine::result_names::template_matches(t, declared))
        };
        for template in declared.templates() {
            assert!(
                covered(template.as_str()),
                "{} is declared but no probe lists it",
                template.as_str()
            );
        }
        for grid in &declared.grids {
            assert!(
                listed.iter().any(|t| t.starts_with(grid.prefix)),
                "{}",
                grid.prefix
            );
        }
        let orders: HashSet<u16> = declared.headline.iter().map(|row| row.order).collect();
        assert_eq!(
            orders.len(),
            declared.headline.len(),
            "two headline rows share an order"
        );
    }

    #[test]
    fn probe_ids_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for probe in PROBES {
            assert!(seen.insert(probe.id), "duplicate id {}", probe.id);
            let (family, name) = probe.id.split_once('.').expect("family.name");
            assert!(!family.is_empty() && !name.is_empty());
            assert!(!probe.method.is_empty() && !probe.method.contains('\n'));
        }
    }

    /// A sweep stopped part-way keeps what it measured, in order, under the first cause;
    /// one stopped before measuring anything is the bare error.
    #[test]
    fn a_sweep_stopped_part_way_keeps_its_results_in_order() {
        let result = |name: &str| {
            BenchResult::derived(name, "test", vec![1.0], Vec::new(), Vec::new()).unwrap()
        };
        let stopped = keeping_measured(|results| {
            results.push(result("a"));
            results.push(result("b"));
            Err(ProbeError::Failed("no room".into()))
        });
        let (cause, kept) = stopped
            .unwrap_err()
            .after(vec![result("first")])
            .into_parts();
        assert!(matches!(cause, ProbeError::Failed(ref r) if r == "no room"));
        let names: Vec<_> = kept.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["first", "a", "b"]);
        let (bare, none) = keeping_measured(|_| Err(ProbeError::Skipped("absent".into())))
            .unwrap_err()
            .into_parts();
        assert!(matches!(bare, ProbeError::Skipped(_)) && none.is_empty());
    }

    /// Every probe runs on the synthetic host and names its results after itself.
    #[test]
    fn every_probe_runs_and_names_its_results() {
        // The scheduling probes load the CPUs for real, even on the synthetic host.
        let _alone = load_cpus();
        let mut runner = synthetic_runner();
        let mut options = OptionValues::default();
        options.set(&MAX_SIZE_OPTION, options::Value::Bytes(64 << 10));
        options.set(&ipc::latency::ITERATIONS_OPTION, options::Value::Count(20));
        for probe in PROBES {
            let mut ctx = ProbeContext {
                runner: &mut runner,
                suite: Suite::Quick,
                options: options.clone(),
                findings: Default::default(),
            };
            let results = match (probe.run)(&mut ctx) {
                // Without a GPU (or the driver), and only then, the GPU family is skipped.
                Err(ProbeError::Skipped(reason)) if probe.id.starts_with("gpu.") => {
                    assert!(!reason.is_empty());
                    continue;
                }
                outcome => outcome.unwrap_or_else(|e| panic!("{}: {e}", probe.id)),
            };
            assert!(!results.is_empty(), "{} produced nothing", probe.id);
            for r in results {
                assert!(r.name.starts_with(&format!("{}/", probe.id)), "{}", r.name);
            }
        }
    }

    /// A kernel that claims far more L3 than the curve finds (the book's memory methods, "The
    /// figures behind the rules") sends no memory sweep to 1 GiB: the latency sweep's default stops at the
    /// ceiling, and once the curve found the last cache, bandwidth and memcpy go to four
    /// times it (the all-CPU sweep past a plausible claim too); `--max-size` and the full
    /// suite go as far as the default or as asked.
    #[test]
    fn the_sweeps_are_sized_from_the_curve_not_the_claim() {
        use latlab_engine::environment::CacheInfo;
        const MIB: u64 = 1 << 20;
        let claimed = [CacheInfo {
            level: 3,
            kind: "Unified".into(),
            size_bytes: 260 * MIB,
            line_bytes: Some(64),
            shared_by_cpus: 2,
        }];
        assert_eq!(default_max_size(&claimed), 256 * MIB);
        let mut runner = synthetic_runner();
        let mut ctx = ProbeContext::for_test(&mut runner);
        // The synthetic machine claims a 32 MiB L3: 128 MiB by default.
        let kernel_default = ctx.max_working_set();
        assert_eq!(kernel_default, 128 * MIB);
        assert_eq!(ctx.max_working_set_from_curve(false), kernel_default);
        // The curve found its L3 ending at 5 MiB: one thread goes to 16 MiB (the power of
        // two nearest 20 MiB); all CPUs past the plausible claim of 32 MiB, to 128 MiB.
        ctx.findings.found_last_cache(5 * MIB);
        assert_eq!(ctx.max_working_set_from_curve(false), 16 * MIB);
        assert_eq!(ctx.max_working_set_from_curve(true), 128 * MIB);
        ctx.suite = Suite::Full;
        assert_eq!(ctx.max_working_set_from_curve(false), kernel_default);
        ctx.suite = Suite::Quick;
        ctx.set_max_size(1 << 30);
        assert_eq!(ctx.max_working_set_from_curve(false), 1 << 30);
        // Far more claimed than found: one thread goes to four times what was found, all
        // CPUs to the ceiling; a plausible claim takes the all-CPU sweep past the cache
        // found, never past the ceiling.
        let sized = |found: u64, claim: u64, all_cpus| {
            sized_from_curve(found * MIB, Some(claim * MIB), all_cpus) / MIB
        };
        assert_eq!(sized(32, 260, false), 128);
        assert_eq!(sized(32, 260, true), 256);
        assert_eq!(sized(13, 260, true), 128);
        assert_eq!(sized(20, 64, true), 256);
        assert_eq!(sized(40, 260, true), 256);
    }

    /// The memory probes take the run's cycle from cpu.frequency once it has measured one,
    /// and measure their own only when it has not.
    #[test]
    fn the_cycle_is_measured_once_a_run() {
        let mut runner = synthetic_runner();
        let mut ctx = ProbeContext::for_test(&mut runner);
        let own = ctx.cycle().unwrap();
        assert!(ctx.findings.cycle().is_none());
        let mut recorded = latlab_engine::cycle::measure(ctx.runner).unwrap();
        recorded.result.summary.median = 2.0 * own.ns();
        ctx.findings.found_cycle(recorded);
        assert_eq!(ctx.cycle().unwrap().ns(), 2.0 * own.ns());
    }
}
