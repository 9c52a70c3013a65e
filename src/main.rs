//! latlab: measures the latency numbers of the machine it runs on.
//!
//! This binary is the command line and glue only: `cli` parses, `plan` validates every
//! subcommand into a plan (every refusal happens there), and `command` only dispatches. `run`
//! drives the engine (crates/engine) over the probes (crates/probes) and hands the record to
//! the exporters (crates/report), and `runs` makes several runs of it; `reading_commands`
//! executes the subcommands that read results files (`report`, `compare`, `fleet`, `export`,
//! `noise`); `probe_process` runs a probe in a process of its own (the GPU family);
//! `list` and `env_report` print the registry and the environment;
//! `shell_docs` generates completions and man pages from `cli`; `probe_options` makes the
//! probes' declared options into command-line arguments.

// Tests read and write files as they please: the doors are for what latlab itself does.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
#![forbid(unsafe_code)]

/// Declares the command's modules, which measure through Linux's interfaces: compiled on
/// Linux and Android only.
macro_rules! on_linux {
    ($($module:ident),* $(,)?) => {
        $(
            #[cfg(any(target_os = "linux", target_os = "android"))]
            mod $module;
        )*
    };
}

on_linux!(
    cli,
    command,
    env_report,
    list,
    placement_watch,
    plan,
    probe_options,
    probe_outcome,
    probe_process,
    probes_page,
    reading_commands,
    run,
    runs,
    shell_docs,
    unmet_machine,
);

/// The command measures through Linux's interfaces (/proc, sysfs, its system calls).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn main() -> std::process::ExitCode {
    command::main()
}

/// Elsewhere it refuses in one line; the harness (latlab-bench) builds and runs on macOS and
/// Windows too.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn main() -> std::process::ExitCode {
    eprintln!(
        "latlab: the latlab command runs on Linux and Android only (its probes measure \
         through /proc, sysfs and Linux's system calls), not on {}; to benchmark your own \
         code here, use the latlab-bench harness with cargo bench",
        std::env::consts::OS
    );
    std::process::ExitCode::from(2)
}
