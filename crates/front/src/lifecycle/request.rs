//! A run as a front end asks for it: the request and the controls it applies.

#[cfg(feature = "files")]
use crate::Baselines;
use crate::ResultFiles;
use latlab_engine::{Config, Host, Suite};
use latlab_report::terminal::Terminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The controls a run applies to itself before measuring.
#[derive(Debug, Clone, Copy, Default)]
pub struct Controls {
    /// `--pin CPU`.
    pub pin: Option<usize>,
    /// `--mlock`.
    pub mlock: bool,
    /// `--rt`: real-time priority, with a pause between samples.
    pub rt: bool,
}

/// A run as a front end asks for it.
pub struct RunRequest {
    pub host: Arc<dyn Host>,
    pub suite: Suite,
    /// The engine's settings (the lifecycle sets their cancel flag).
    pub config: Config,
    /// The rounds each unit is measured in, at most.
    pub rounds: usize,
    pub controls: Controls,
    /// What the front end changed from the defaults, for the record's notes.
    pub notes: Vec<String>,
    pub files: ResultFiles,
    /// A directory to create for the outputs once the lock is held; removed again when the
    /// run kept nothing in it.
    pub create_dir: Option<PathBuf>,
    pub baselines: Baselines,
    /// How the comparison with a baseline is laid out.
    pub terminal: Terminal,
    /// What a result is called in the gate's text: "result", "benchmark".
    pub results_called: &'static str,
    /// The time the run may take, from the lock taken to the outputs written; `None`: as
    /// long as its units take.
    pub budget: Option<Duration>,
}

impl RunRequest {
    /// A run on `host` that samples by `config` and writes `files`, with the defaults a front
    /// end changes as it needs: the quick suite in one round, no controls, no notes, no
    /// directory to create, no baselines, the default terminal, no time limit, and its
    /// results called "result".
    pub fn new(host: Arc<dyn Host>, config: Config, files: ResultFiles) -> RunRequest {
        RunRequest {
            host,
            suite: Suite::Quick,
            config,
            rounds: 1,
            controls: Controls::default(),
            notes: Vec::new(),
            files,
            create_dir: None,
            baselines: Baselines::none(),
            terminal: Terminal::default(),
            results_called: "result",
            budget: None,
        }
    }
}

/// Without the results files (the `files` feature) there are no baselines: nothing to
/// compare with or keep.
#[cfg(not(feature = "files"))]
#[derive(Debug, Default)]
pub struct Baselines;

#[cfg(not(feature = "files"))]
impl Baselines {
    /// Nothing asked of baselines.
    pub fn none() -> Baselines {
        Baselines
    }
}
