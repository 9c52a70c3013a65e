//! The front-end core shared by the `latlab` binary and the `latlab-bench` harness:
//! - what both take from their command lines about how to sample ([`SamplingArgs`],
//!   described once, parsed by the binary's clap and by the harness's lexopt, with the
//!   engine's [`Suite`]), the forms results are also written in ([`FormatArgs`], one option per
//!   format of the report crate's list) and the
//!   baselines ([`BaselineArgs`]);
//! - the directories both write into on their own account, which must be the user's own
//!   ([`check_own_directory`]);
//! - the checks of the outputs the user names, made before measuring, in one step for
//!   every command ([`check_named_outputs`], [`FormatArgs::checked`]);
//! - the machine-wide run lock, with the note a run keeps when it goes ahead without it
//!   ([`take_lock`]);
//! - what a panic said ([`panic_message`]): both survive a probe or a benchmark that panics;
//! - the outputs that could not be written ([`Unwritten`]): both go on measuring when a
//!   write fails, and read their exit status from what was written;
//! - messages on standard error that never panic, whatever standard error is ([`say!`]);
//! - how wide their text may be ([`text_width`]: `COLUMNS`, else the terminal's), and the
//!   terminal options (`-q`, `-v`, `--color`) that make a report
//!   [`Terminal`](latlab_report::terminal::Terminal)
//!   ([`terminal`]), on the stream the text goes to ([`Stream`]);
//! - several runs as one command, each a process of its own ([`run_again`], started and
//!   supervised through latlab-doors' door for a child).
//!
//! - the run itself, from the lock to the exit status ([`execute`]), over what a front end
//!   measures ([`Measured`]: the binary's probes, the harness's benchmark sets), with the
//!   results files it writes ([`ResultFiles`]) and the baselines it keeps and is judged
//!   against ([`Baselines`], in one [`BaselineStore`]).
//!
//! One definition each, so that the two front ends cannot drift apart.

// Tests read and write files as they please: the doors are for what latlab itself does.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
#[cfg(feature = "files")]
mod baselines;
mod core_class;
mod directories;
mod formats;
mod lifecycle;
mod lock;
mod named_outputs;
mod options;
mod panics;
mod preflight;
mod progress;
mod repeat;
mod run_files;
mod stderr;
mod stdout;
mod terminal;
mod time_spent;
mod unwritten;
mod width;

#[cfg(feature = "files")]
pub use baselines::{BaselineStore, Baselines};
pub use directories::check_own_directory;
pub use formats::FormatArgs;
pub use latlab_engine::Suite;
#[cfg(not(feature = "files"))]
pub use lifecycle::Baselines;
#[cfg(feature = "files")]
pub use lifecycle::RunsCommand;
pub use lifecycle::{Controls, Measured, RunRequest, execute, with_causes};
pub use lock::{LOCK_WAIT, take_lock};
pub use named_outputs::{NamedOutput, check_named_outputs, same_file};
pub use options::{
    BaselineArgs, OptionHelp, SamplingArgs, help_section, parse_suite, shown_value, value,
};
pub use panics::panic_message;
pub use preflight::{
    check_output_file, check_pin, check_writable, existing_writable, parent_or_current,
};
pub use progress::{Progress, ProgressUnit};
pub use repeat::{
    RUN_OF_VARIABLE, RunOf, RunsEnded, check_outputs_for_runs, numbered_runs, run_again,
};
pub use run_files::ResultFiles;
pub use stderr::stderr_text;
pub use stdout::print_out;
pub use terminal::{ColorChoice, Stream, TerminalArgs, help_text_width, terminal};
pub use time_spent::{TimeSpent, TimeWords};
pub use unwritten::Unwritten;
pub use width::{help_width, text_width};
