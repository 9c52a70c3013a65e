//! The probes' options on the command line: one clap argument for each option the probes
//! declare ([`latlab_probes::options::declared`]), parsed and bounded by its declaration,
//! under its declaration's heading, with its help and default.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use latlab_probes::options::{Kind, OptionSpec, OptionValues, Value, declared};

/// The values the probes' options were given on the command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeOptionArgs {
    pub values: OptionValues,
}

/// The clap argument of `spec`.
fn argument(spec: &'static OptionSpec) -> Arg {
    let arg = Arg::new(spec.name)
        .long(spec.name)
        .help_heading(spec.heading)
        .help(spec.help);
    match spec.kind {
        Kind::Flag => arg.action(ArgAction::SetTrue),
        // A path is the system's bytes, UTF-8 or not.
        Kind::Path => arg
            .value_name(spec.value_name())
            .value_parser(clap::value_parser!(std::path::PathBuf)),
        _ => {
            let parse = move |text: &str| spec.parse(text);
            let arg = arg
                .value_name(spec.value_name())
                .value_parser(parse)
                .allow_hyphen_values(true);
            match spec.default {
                Some(default) => arg.default_value(default),
                None => arg,
            }
        }
    }
}

impl Args for ProbeOptionArgs {
    fn augment_args(command: Command) -> Command {
        declared().into_iter().fold(command, |command, spec| command.arg(argument(spec)))
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl FromArgMatches for ProbeOptionArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut values = OptionValues::default();
        for spec in declared() {
            let value = match spec.kind {
                Kind::Flag => Some(Value::Flag(matches.get_flag(spec.name))),
                Kind::Path => (matches.get_one::<std::path::PathBuf>(spec.name))
                    .map(|path| Value::Path(path.clone())),
                _ => matches.get_one::<Value>(spec.name).cloned(),
            };
            if let Some(value) = value {
                values.set(spec, value);
            }
        }
        Ok(ProbeOptionArgs { values })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::Cli;
    use clap::Parser;
    use std::ffi::OsStr;

    /// What the command line says of a value an option refuses.
    fn refusal(args: &[&str]) -> String {
        let args = ["latlab", "run"].iter().chain(args);
        Cli::try_parse_from(args).unwrap_err().to_string()
    }

    /// Each option is parsed and bounded by its declaration, with the declaration's words.
    #[test]
    fn options_are_bounded_by_their_declarations() {
        let cases = [
            (["--workers", "0"], "must be a whole number of threads from 1 to 1024"),
            (["--pairs", "0"], "must be a whole number of pairs, at least 1"),
            (["--deadline", "0s"], "must be from 1us to 10s"),
            (["--max-size", "12"], "must be at least 4KiB"),
            (["--max-size", "5TB"], "not a size"),
            (["--iterations", "9"], "must be a whole number from 10 to 10000000"),
        ];
        for (args, words) in cases {
            let refused = refusal(&args);
            assert!(refused.contains(words), "{args:?}: {refused}");
        }
    }

    /// Values given reach the run's options; those not given have their declared defaults.
    #[test]
    fn given_values_and_defaults_reach_the_run() {
        let cli = Cli::try_parse_from(["latlab", "run", "--max-size", "1.5GiB", "--huge-pages"])
            .unwrap();
        let Some(crate::cli::Command::Run(run)) = cli.command else {
            panic!("not a run");
        };
        let values = &run.probe_options.values;
        let option = |name: &str| {
            let every = latlab_probes::options::declared();
            every.into_iter().find(|spec| spec.name == name).unwrap()
        };
        assert_eq!(values.bytes(option("max-size")), Some(3 << 29));
        assert!(values.flag(option("huge-pages")));
        assert!(!values.flag(option("trace-on-miss")));
        assert_eq!(values.count(option("workers")), Some(16));
        assert_eq!(values.path(option("dir")), None);

        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9");
        let args = [OsStr::new("latlab"), OsStr::new("run"), OsStr::new("--dir"), odd];
        let Some(crate::cli::Command::Run(run)) = Cli::try_parse_from(args).unwrap().command else {
            panic!("not a run");
        };
        let dir = run.probe_options.values.path(option("dir")).map(|p| p.as_os_str().to_owned());
        assert_eq!(dir.as_deref(), Some(odd), "a directory's name is its bytes");
    }
}
