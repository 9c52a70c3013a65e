//! An imaginary machine for testing whatever renders results: the same figures everywhere.
//!
//! Four CPUs of one class, three cache levels (32 KiB, 1 MiB, 32 MiB), 16 GiB free on one
//! memory node (or split between two or four: [`SyntheticHost::with_memory_nodes`]). Each
//! benchmark still runs once, so that every probe's code is exercised, but its figures are
//! made up: a nominal cost derived from its name, its samples wobbling around it in a fixed
//! pattern. The synthetic samples go through the same analysis as real ones, so a synthetic
//! run exercises everything but the clock and the machine.
//!
//! A noisy synthetic machine ([`SyntheticHost::noisy`]) adds seeded noise to those figures
//! ([`Noise`]), so that comparisons of runs can be tried on runs that differ as real ones do.
//!
//! Pinning a thread to one of the four CPUs succeeds and changes nothing, so probes that pin
//! their helpers run unchanged; run-level controls that would change the real machine
//! (`--mlock`, `--rt`) are refused and the run says so.

use super::synthetic_model::{FigureModel, Machine, NAMES_ONLY};
use super::synthetic_noise::{Noise, NoiseState};
use super::{
    Controls, Cpus, EventRun, Inventory, Limits, LoopBody, LoopRun, Sampled, Timer, Timing,
};
use crate::analysis::LoopSamples;
use crate::clock::{Clock, ClockInfo, ClockKind};
use crate::environment::{
    CacheInfo, CoreClass, Environment, MemoryModule, MemoryNode, PerfCounters,
};
use crate::locks::{LockRefused, RunLock};
use crate::model::Integrity;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

/// The relative wobble of consecutive samples, repeating.
const WOBBLE: [f64; 5] = [0.0, 0.01, -0.01, 0.02, -0.02];
/// The synthetic empty loop's cost per iteration.
const EMPTY_LOOP_NS: f64 = 0.5;
/// The synthetic clock's resolution.
const RESOLUTION_NS: f64 = 1.0;
/// Memory the synthetic machine has free.
const AVAILABLE_MEMORY: u64 = 16 << 30;
/// The time every synthetic run starts at: 2000-01-01T00:00:00Z.
const START_SECONDS: u64 = 946_684_800;

thread_local! {
    /// The memory node the calling thread bound its pages to on the synthetic machine.
    static BOUND_NODE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The imaginary machine.
pub struct SyntheticHost {
    timer: SyntheticTimer,
    environment: Environment,
    /// Whether its kernel binds memory to nodes (one built without NUMA support does not).
    binds_memory: bool,
}

impl SyntheticHost {
    /// The imaginary machine with cores of these classes (big and little cores, say), as
    /// many CPUs as they list.
    pub fn with_core_classes(classes: Vec<crate::environment::CoreClass>) -> SyntheticHost {
        let mut host = SyntheticHost::default();
        let cpus = classes
            .iter()
            .flat_map(|c| c.cpus.iter())
            .max()
            .map_or(1, |&c| c + 1);
        host.environment.cpu.logical_cpus = cpus;
        host.environment.core_classes = classes;
        host
    }

    /// The imaginary machine with its four CPUs and 16 GiB split evenly between `nodes`
    /// memory nodes (1, 2 or 4): node 0 holds the first CPUs.
    pub fn with_memory_nodes(nodes: usize) -> SyntheticHost {
        assert!(
            matches!(nodes, 1 | 2 | 4),
            "four CPUs split into {nodes} nodes"
        );
        let mut host = SyntheticHost::default();
        let cpus_each = host.environment.cpu.logical_cpus / nodes;
        host.environment.memory_nodes = (0..nodes)
            .map(|node| crate::environment::MemoryNode {
                node,
                cpus: (node * cpus_each..(node + 1) * cpus_each).collect(),
                memory_bytes: Some(AVAILABLE_MEMORY / nodes as u64),
            })
            .collect();
        host
    }

    /// The same machine with a kernel that binds no memory to nodes, as one built without
    /// NUMA support (or an emulator without the call) refuses `set_mempolicy`.
    pub fn without_memory_policy(mut self) -> SyntheticHost {
        self.binds_memory = false;
        self
    }

    /// The imaginary machine with seeded noise on its figures.
    pub fn noisy(noise: Noise) -> SyntheticHost {
        let mut host = SyntheticHost::default();
        host.timer.noise = Some(NoiseState::new(noise));
        host
    }

    /// The same machine, its results costing what `model` says (the probes' model: the
    /// caches a chase hits, the results on the core clock).
    pub fn with_model(mut self, model: &'static dyn FigureModel) -> SyntheticHost {
        self.timer.model = model;
        self
    }
}

impl Default for SyntheticHost {
    fn default() -> SyntheticHost {
        SyntheticHost {
            timer: SyntheticTimer {
                clock: Clock::reporting(ClockInfo {
                    kind: ClockKind::Synthetic,
                    method: "synthetic clock (--synthetic): figures are made up".into(),
                    frequency_hz: 1e9,
                    resolution_ns: RESOLUTION_NS,
                    region_overhead_ns: 20.0,
                    fallback_reason: None,
                }),
                noise: None,
                model: NAMES_ONLY,
            },
            environment: Environment::synthetic(),
            binds_memory: true,
        }
    }
}

impl Timing for SyntheticHost {
    fn timer(&self) -> &dyn Timer {
        &self.timer
    }

    fn now(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(START_SECONDS)
    }

    fn elapsed(&self, _since: Instant) -> Duration {
        Duration::ZERO
    }
}

impl Cpus for SyntheticHost {
    fn online_cpus(&self) -> Vec<usize> {
        (0..self.environment.cpu.logical_cpus).collect()
    }

    fn allowed_cpus(&self) -> Vec<usize> {
        self.online_cpus()
    }

    fn set_allowed_cpus(&self, cpus: &[usize]) -> Result<(), String> {
        let online = self.online_cpus();
        match cpus.iter().find(|cpu| !online.contains(cpu)) {
            Some(cpu) => Err(format!("the synthetic machine has no CPU {cpu}")),
            None if cpus.is_empty() => Err("no CPU given".into()),
            None => Ok(()),
        }
    }

    fn thread_siblings(&self, cpu: usize) -> Vec<usize> {
        vec![cpu]
    }

    fn core_classes(&self) -> Vec<CoreClass> {
        self.environment.core_classes.clone()
    }
}

impl Inventory for SyntheticHost {
    fn environment(&self) -> Environment {
        self.environment.clone()
    }

    fn caches(&self) -> Vec<CacheInfo> {
        self.environment.caches.clone()
    }

    fn clocksource(&self) -> Option<String> {
        self.environment.clocksource.clone()
    }

    fn memory_nodes(&self) -> Vec<MemoryNode> {
        self.environment.memory_nodes.clone()
    }

    fn memory_modules(&self) -> Result<Vec<MemoryModule>, String> {
        Err("the synthetic machine has no firmware memory table".into())
    }

    fn available_memory_bytes(&self) -> Option<u64> {
        Some(AVAILABLE_MEMORY)
    }

    fn load_average(&self) -> Option<[f64; 3]> {
        self.environment.load_avg
    }

    fn perf_counters(&self) -> PerfCounters {
        PerfCounters::synthetic()
    }
}

impl Controls for SyntheticHost {
    fn lock_runs(&self, _wait: Duration, _cancel: &AtomicBool) -> Result<RunLock, LockRefused> {
        // A synthetic run measures nothing, so it need not wait for one that does.
        Ok(RunLock::not_needed())
    }

    fn lock_memory(&self) -> Result<(), String> {
        Err(NO_CONTROLS.into())
    }

    /// Binding to one of its nodes succeeds and is remembered for the calling thread, as
    /// the kernel's policy is.
    fn bind_memory(&self, node: Option<usize>) -> Result<(), String> {
        if !self.binds_memory {
            return Err("this kernel binds no memory: Function not implemented".into());
        }
        match node {
            Some(node) if !self.environment.memory_nodes.iter().any(|n| n.node == node) => {
                Err(format!("the synthetic machine has no memory node {node}"))
            }
            _ => {
                BOUND_NODE.set(node);
                Ok(())
            }
        }
    }

    /// Every page lies where the calling thread's binding puts the pages it touches: on the
    /// bound node, else on the first node (the machine's CPUs are all on node 0's side
    /// first). A probe that asks while still bound, as it must to know where its pages
    /// went, is told the node it bound or, had it not bound, node 0.
    fn nodes_of_pages(&self, addresses: &[*const u8]) -> Result<Vec<Option<usize>>, String> {
        let first = self.environment.memory_nodes.first().map_or(0, |n| n.node);
        Ok(vec![
            Some(BOUND_NODE.get().unwrap_or(first));
            addresses.len()
        ])
    }

    fn enter_realtime(&self) -> Result<(), String> {
        Err(NO_CONTROLS.into())
    }
}

const NO_CONTROLS: &str = "a synthetic run changes nothing on the real machine";

/// Made-up samples, the same on every machine.
struct SyntheticTimer {
    /// Reads the OS clock when a probe times something itself; reports synthetic figures.
    clock: Clock,
    /// Noise on the figures, when the machine is a noisy one.
    noise: Option<NoiseState>,
    /// What its results cost.
    model: &'static dyn FigureModel,
}

impl SyntheticTimer {
    /// The noise factors of one measurement of `name`, `count` samples (all 1 without noise).
    fn noise_factors(&self, name: &str, count: usize) -> Vec<f64> {
        match &self.noise {
            Some(noise) => noise.factors(name, count, self.model),
            None => vec![1.0; count],
        }
    }

    /// The machine as this run finds it.
    fn machine(&self) -> Machine {
        (self.noise.as_ref()).map_or_else(Machine::default, NoiseState::machine)
    }

    /// The figure of `name` per operation, before noise.
    fn nominal_ns(&self, name: &str) -> f64 {
        self.machine().figure_ns(self.model, name, nominal_ns(name))
    }

    /// Events of `name`'s figure, wobbling, one per noise factor.
    fn events(&self, name: &str, factors: &[f64]) -> Vec<f64> {
        let nominal = self.nominal_ns(name);
        (factors.iter().enumerate())
            .map(|(i, factor)| nominal * factor * (1.0 + WOBBLE[i % WOBBLE.len()]))
            .collect()
    }
}

impl Timer for SyntheticTimer {
    fn clock(&self) -> &Clock {
        &self.clock
    }

    fn sample_loops(
        &self,
        names: &[&str],
        bodies: &mut [&mut dyn LoopBody],
        limits: &Limits,
    ) -> Sampled<Vec<LoopRun>> {
        let count = limits.config.samples_per_round(limits.config.samples);
        // Bodies sampled side by side drift together, as on a real machine.
        let factors = match (&self.noise, names.len()) {
            (Some(noise), 2..) => noise.factors_together(names, count, self.model),
            _ => (names.iter())
                .map(|name| self.noise_factors(name, count))
                .collect(),
        };
        Ok((names.iter().zip(bodies.iter_mut()).zip(factors))
            .map(|((name, body), factors)| {
                let nominal = self.nominal_ns(name);
                synthetic_loop(&self.clock, nominal, *body, &factors, limits)
            })
            .collect())
    }

    fn sample_events(
        &self,
        names: &[&str],
        count: usize,
        operations: u64,
        event: &mut dyn FnMut(&Clock, &mut [f64]),
        limits: &Limits,
    ) -> Sampled<EventRun> {
        event(&self.clock, &mut vec![0.0; names.len()]);
        let count = limits.config.samples_per_round(count);
        let per_event = operations as f64;
        let series_ns: Vec<Vec<f64>> = (names.iter())
            .map(|name| {
                let events = self.events(name, &self.noise_factors(name, count));
                events.into_iter().map(|ns| ns * per_event).collect()
            })
            .collect();
        Ok(EventRun {
            cold_ns: (names.iter())
                .map(|name| 10.0 * self.nominal_ns(name) * per_event)
                .collect(),
            cpu_ns: series_ns[0].clone(),
            series_ns,
            integrity: Integrity::default(),
        })
    }

    fn events_timed_elsewhere(
        &self,
        name: &str,
        _samples_ns: Vec<f64>,
        limits: &Limits,
    ) -> Vec<f64> {
        let mut synthetic = vec![10.0 * self.nominal_ns(name)];
        let count = limits.config.samples_per_round(limits.config.samples);
        synthetic.extend(self.events(name, &self.noise_factors(name, count)));
        synthetic
    }
}

/// A cost between 1 and 200.9 ns with one decimal, fixed by the name (FNV-1a).
fn nominal_ns(name: &str) -> f64 {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    });
    1.0 + (hash % 2000) as f64 / 10.0
}

/// A loop's made-up samples: the body runs once (so every benchmark is exercised), the
/// figures come from its name (`nominal_ns` an operation).
fn synthetic_loop(
    clock: &Clock,
    nominal_ns: f64,
    body: &mut dyn LoopBody,
    factors: &[f64],
    limits: &Limits,
) -> LoopRun {
    body.time(clock, 1);
    let nominal = nominal_ns * body.operations() as f64;
    let target_ns = limits.config.target_sample_time.as_nanos() as f64;
    let iterations = ((target_ns / (nominal + EMPTY_LOOP_NS)).ceil() as u64).next_power_of_two();
    let mut samples = LoopSamples::with_capacity(iterations, factors.len());
    let per_sample = |ns: f64, i: usize| ns * (1.0 + WOBBLE[i % WOBBLE.len()]) * iterations as f64;
    for (i, factor) in factors.iter().enumerate() {
        let bench = per_sample(nominal * factor + EMPTY_LOOP_NS, i);
        let empty = per_sample(EMPTY_LOOP_NS, i + 2);
        samples.push((bench, bench), (empty, empty));
    }
    LoopRun {
        samples,
        cold_ns: 10.0 * nominal,
        integrity: Integrity::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::runner::Runner;
    use std::sync::Arc;

    #[test]
    fn synthetic_results_are_deterministic_and_plausible() {
        let mut runner = Runner::on(Arc::new(SyntheticHost::default()), Config::quick());
        let a = runner.bench("x/y", "m", || 1).unwrap();
        let b = runner.bench("x/y", "m", || 1).unwrap();
        assert_eq!(a, b);
        assert!((a.summary.median - nominal_ns("x/y")).abs() < 0.05 * nominal_ns("x/y"));
        assert_ne!(nominal_ns("x/y"), nominal_ns("x/z"));
    }

    #[test]
    fn the_synthetic_machine_refuses_cpus_it_does_not_have() {
        let host = SyntheticHost::default();
        assert_eq!(host.every_cpu(), [0, 1, 2, 3]);
        assert!(host.pin_to_cpu(3).is_ok());
        assert!(host.pin_to_cpu(4).is_err());
        assert!(host.lock_memory().is_err());
    }
}
