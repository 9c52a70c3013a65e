//! `--profile`: each benchmark run again, for the iteration count it was measured with,
//! under a sampling profiler of its own thread; the samples attributed to the binary's
//! functions, the hottest function disassembled with each instruction's share and source
//! line, and hardware counts per call where the machine has counters.

mod binary;
mod counters;
mod disassembly;
mod sampling;

use crate::measured::Measured;
use binary::{Function, Process};
use counters::{Counts, HardwareCounters};
use latlab_engine::Clock;
use latlab_engine::host::LoopBody;
use latlab_engine::model::{AnnotatedFunction, Counters, HotFunction, Instruction, Profile};
use sampling::{Samples, ThreadSampler};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A profile goes on past the measured iteration count until it has this many samples
/// (0.2 s of the benchmark at 10,000 samples a second), so that a short benchmark's
/// shares are not a handful of samples ...
const ENOUGH_SAMPLES: usize = 2_000;
/// ... and stops at this wall time, so that `--profile` adds at most about 2 s a benchmark.
const LONGEST: Duration = Duration::from_millis(1_500);
/// Functions a profile keeps.
const HOT_FUNCTIONS: usize = 20;
/// Rounds of each loop the hardware counters count.
const COUNTED_ROUNDS: usize = 5;

/// The sampler and what it needs to name addresses, opened once for a run.
pub(crate) struct Profiler {
    sampler: ThreadSampler,
    process: Process,
    counters: Result<HardwareCounters, String>,
}

impl Profiler {
    /// Opens the sampler and reads this binary; the error says why profiling is impossible
    /// here, in one line.
    pub fn open() -> Result<Profiler, String> {
        let sampler = ThreadSampler::open()?;
        let process = Process::read()?;
        Ok(Profiler {
            sampler,
            process,
            counters: HardwareCounters::open(),
        })
    }

    /// Profiles one benchmark: its longer loop (`long`: calls per turn, body) run for as
    /// many samples of as many turns as it was measured with, and its shorter loop too where
    /// hardware counters count the difference.
    pub fn profile(
        &mut self,
        clock: &Clock,
        short: (u64, &mut dyn LoopBody),
        long: (u64, &mut dyn LoopBody),
        measured: &Measured,
    ) -> Profile {
        let started = Instant::now();
        let mut samples = Samples::default();
        let mut rounds = 0;
        while (rounds < measured.rounds || samples.ips.len() < ENOUGH_SAMPLES)
            && started.elapsed() < LONGEST
        {
            self.sampler
                .sample(&mut samples, || long.1.time(clock, measured.turns));
            rounds += 1;
        }
        let duration = started.elapsed();
        let (counters, counters_note) = match self.count_per_call(clock, short, long, measured) {
            Ok(counters) => (Some(counters), None),
            Err(why) => (None, Some(why)),
        };
        let hot = self.hot_functions(&samples.ips);
        let hottest_function = hot
            .iter()
            .position(|(_, p)| matches!(p, Place::Function(..)));
        let (annotated, mut annotation_note) =
            self.annotate(hottest_function.map(|i| hot[i].1), &samples.ips);
        if let Some((unnamed, _)) = hot
            .first()
            .filter(|_| hottest_function.is_some_and(|i| i > 0))
        {
            let note = format!(
                "{:.1}% of the samples fell in {}, outside its named functions (a library \
                 without its symbol table); annotated is the hottest named function",
                unnamed.share * 100.0,
                unnamed.name
            );
            annotation_note = Some(match annotation_note {
                Some(other) => format!("{note}; {other}"),
                None => note,
            });
        }
        let functions = hot.into_iter().map(|(function, _)| function).collect();
        Profile {
            event: sampling::EVENT.to_string(),
            period_ns: sampling::PERIOD_NS,
            samples: samples.ips.len() as u64,
            lost: samples.lost,
            iterations: rounds as u64 * measured.turns,
            duration_ns: duration.as_nanos() as u64,
            functions,
            annotated,
            annotation_note,
            counters,
            counters_note,
        }
    }

    /// Samples per function, the hottest first, each with where it is; addresses in no
    /// function are counted by their library (the vDSO, a library without symbols).
    fn hot_functions(&self, ips: &[u64]) -> Vec<(HotFunction, Place)> {
        let mut per_place: HashMap<Place, u64> = HashMap::new();
        for &ip in ips {
            let place = match self.process.locate(ip) {
                Some(located) => match located.function {
                    Some(function) => Place::Function(located.object, function.address),
                    None => Place::Object(located.object),
                },
                None => Place::Unknown,
            };
            *per_place.entry(place).or_default() += 1;
        }
        let total = ips.len().max(1) as f64;
        let mut functions: Vec<(HotFunction, Place)> = per_place
            .into_iter()
            .map(|(place, samples)| {
                let function = HotFunction {
                    name: self.name_of(place),
                    samples,
                    share: samples as f64 / total,
                };
                (function, place)
            })
            .collect();
        functions.sort_by(|(a, _), (b, _)| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
        functions.truncate(HOT_FUNCTIONS);
        functions
    }

    /// A function's name, with its library's where it is not the executable's.
    fn name_of(&self, place: Place) -> String {
        match place {
            Place::Function(object, address) => {
                let object = self.process.object(object);
                let name = object
                    .function_starting_at(address)
                    .map_or("?", |f| f.name.as_str());
                if object.library.is_empty() {
                    name.to_string()
                } else {
                    format!("{name} [{}]", object.library)
                }
            }
            Place::Object(object) => format!("[{}]", self.process.object(object).library),
            Place::Unknown => "[unknown]".to_string(),
        }
    }

    /// The hottest function's instructions with their samples and source lines, or why
    /// there are none.
    fn annotate(
        &self,
        hottest: Option<Place>,
        ips: &[u64],
    ) -> (Option<AnnotatedFunction>, Option<String>) {
        let (index, function) = match hottest {
            None if ips.is_empty() => return (None, Some("no samples were taken".into())),
            None => return (None, Some("no sample fell in a named function".into())),
            Some(Place::Function(index, address)) => {
                let function = self.process.object(index).function_starting_at(address);
                (index, function.expect("a located function").clone())
            }
            Some(_) if !self.process.executable_has_symbols() => {
                return (
                    None,
                    Some("this binary has no symbol table (is it stripped?)".into()),
                );
            }
            Some(_) => {
                let why = "no sample fell in a named function".to_string();
                return (None, Some(why));
            }
        };
        let object = self.process.object(index);
        let Some(code) = object.code_of(&function) else {
            return (
                None,
                Some(format!("the code of {} cannot be read", function.name)),
            );
        };
        let listing = match disassembly::disassemble(object, &code, function.address) {
            Ok(listing) => listing,
            Err(why) => return (None, Some(why)),
        };
        let per_address = samples_per_address(&self.process, index, &function, ips);
        let in_function: u64 = per_address.values().sum();
        let instructions = listing
            .into_iter()
            .map(|(address, text)| {
                let samples = per_address.get(&address).copied().unwrap_or(0);
                Instruction {
                    address,
                    text,
                    samples,
                    share: samples as f64 / in_function.max(1) as f64,
                    line: object.line_at(address),
                }
            })
            .collect();
        let note = if index != 0 {
            Some(format!(
                "{} is in {}: no source lines outside the executable",
                function.name, object.library
            ))
        } else if !self.process.executable_has_lines() {
            Some(
                "no source lines: this binary has no line tables; add debug = \"line-tables-only\" \
                 under [profile.bench] in Cargo.toml"
                    .to_string(),
            )
        } else {
            None
        };
        let name = self.name_of(Place::Function(index, function.address));
        (
            Some(AnnotatedFunction {
                name,
                address: function.address,
                instructions,
            }),
            note,
        )
    }

    /// Hardware counts per call: the longer loop's counts less the shorter's, over the
    /// extra calls, as the time is measured.
    fn count_per_call(
        &mut self,
        clock: &Clock,
        short: (u64, &mut dyn LoopBody),
        long: (u64, &mut dyn LoopBody),
        measured: &Measured,
    ) -> Result<Counters, String> {
        let counters = self.counters.as_mut().map_err(|why| why.clone())?;
        let mut totals = [Counts::default(); 2];
        for _ in 0..COUNTED_ROUNDS {
            let short_counts = counters.count(|| {
                short.1.time(clock, measured.turns);
            })?;
            let long_counts = counters.count(|| {
                long.1.time(clock, measured.turns);
            })?;
            for (total, counts) in totals.iter_mut().zip([short_counts, long_counts]) {
                total.cycles += counts.cycles;
                total.instructions += counts.instructions;
                total.branch_misses += counts.branch_misses;
                total.cache_misses += counts.cache_misses;
            }
        }
        let extra_calls = ((long.0 - short.0) * measured.turns * COUNTED_ROUNDS as u64) as f64;
        let per_call = |short: u64, long: u64| (long as f64 - short as f64) / extra_calls;
        let [short, long] = totals;
        let cycles = per_call(short.cycles, long.cycles);
        let instructions = per_call(short.instructions, long.instructions);
        Ok(Counters {
            cycles,
            instructions,
            ipc: if cycles > 0.0 {
                instructions / cycles
            } else {
                0.0
            },
            branch_misses: per_call(short.branch_misses, long.branch_misses),
            cache_misses: per_call(short.cache_misses, long.cache_misses),
        })
    }
}

/// Where samples fell: a function of an object, an object outside its functions, or no
/// object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Place {
    /// The object's index and the function's address in its file.
    Function(usize, u64),
    Object(usize),
    Unknown,
}

/// Samples per file address within one function.
fn samples_per_address(
    process: &Process,
    object: usize,
    function: &Function,
    ips: &[u64],
) -> HashMap<u64, u64> {
    let mut per_address = HashMap::new();
    for located in ips.iter().filter_map(|&ip| process.locate(ip)) {
        let inside = located.object == object
            && (function.address..function.address + function.size).contains(&located.address);
        if inside {
            *per_address.entry(located.address).or_default() += 1;
        }
    }
    per_address
}
