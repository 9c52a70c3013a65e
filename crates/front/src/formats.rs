//! The output options `--NAME FILE` of the formats a model is offered in
//! ([`Offered`]): made from the report crate's one list of them, parsed by clap (this
//! crate's `clap` feature) and by lexopt alike. A front end writes what they name through
//! each format's exporter, so that a new format reaches both front ends with no change here.

use crate::options::{OptionHelp, value};
use latlab_report::{FileFormat, Offered};
use std::marker::PhantomData;

/// The file named for each format `M` is offered in, if any.
pub struct FormatArgs<M: Offered> {
    /// One per format of `M::formats()`, in its order.
    paths: Vec<Option<String>>,
    model: PhantomData<fn() -> M>,
}

impl<M: Offered> FormatArgs<M> {
    /// The options, as the help lists them.
    pub fn options() -> Vec<OptionHelp> {
        (M::formats().iter())
            .map(|format| OptionHelp {
                long: format.name,
                short: None,
                value: Some("FILE"),
                help: format.help,
                values: &[],
                default: None,
            })
            .collect()
    }

    /// Takes the option `--long` (its value from `parser`) when it names a format; `Ok(false)`
    /// when it does not, `Err` with one line when its value is missing.
    pub fn take(&mut self, long: &str, parser: &mut lexopt::Parser) -> Result<bool, String> {
        let Some(index) = M::formats().iter().position(|f| f.name == long) else {
            return Ok(false);
        };
        self.paths[index] = Some(value(parser, long, "FILE", |text| Ok(text.to_string()))?);
        Ok(true)
    }

    /// Each option given, with its format and the path as given, in the list's order.
    pub fn named(&self) -> impl Iterator<Item = (&'static FileFormat<M>, &str)> + '_ {
        (M::formats().iter())
            .zip(&self.paths)
            .filter_map(|(format, path)| Some((format, path.as_deref()?)))
    }

    /// The formats named, each with where it goes, checked by the rules every command's
    /// outputs meet ([`crate::check_named_outputs`]); files in the directory the command
    /// `creates` are left to the caller.
    pub fn checked(
        &self,
        creates: Option<&std::path::Path>,
    ) -> Result<Vec<(&'static FileFormat<M>, latlab_report::OutputTarget)>, String> {
        let named = (self.named())
            .map(|(format, value)| crate::NamedOutput {
                format,
                flag: format.flag(),
                value: value.to_string(),
            })
            .collect();
        crate::check_named_outputs(named, &M::flags_listed(), creates)
    }

    /// Each option by its flag (`--json`) with what it named, given or not: what the checks
    /// that name an option take.
    pub fn by_flag(&self) -> Vec<(String, Option<String>)> {
        (M::formats().iter())
            .zip(&self.paths)
            .map(|(format, path)| (format.flag(), path.clone()))
            .collect()
    }
}

impl<M: Offered> Default for FormatArgs<M> {
    fn default() -> FormatArgs<M> {
        FormatArgs {
            paths: vec![None; M::formats().len()],
            model: PhantomData,
        }
    }
}

impl<M: Offered> Clone for FormatArgs<M> {
    fn clone(&self) -> FormatArgs<M> {
        FormatArgs {
            paths: self.paths.clone(),
            model: PhantomData,
        }
    }
}

impl<M: Offered> std::fmt::Debug for FormatArgs<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.named().map(|(format, path)| (format.name, path)))
            .finish()
    }
}

/// The options under the heading "Outputs", one per format.
#[cfg(feature = "clap")]
impl<M: Offered> clap::Args for FormatArgs<M> {
    fn augment_args(command: clap::Command) -> clap::Command {
        (M::formats().iter()).fold(command, |command, format| {
            command.arg(
                clap::Arg::new(format.name)
                    .long(format.name)
                    .value_name("FILE")
                    .help(format.help)
                    .help_heading("Outputs"),
            )
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

#[cfg(feature = "clap")]
impl<M: Offered> clap::FromArgMatches for FormatArgs<M> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<FormatArgs<M>, clap::Error> {
        let mut args = FormatArgs::default();
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        for (format, path) in M::formats().iter().zip(&mut self.paths) {
            if let Some(named) = matches.get_one::<String>(format.name) {
                *path = Some(named.clone());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_engine::model::RunRecord;
    use std::ffi::OsString;

    fn parsed(args: &[&str]) -> Result<FormatArgs<RunRecord>, String> {
        let mut parser = lexopt::Parser::from_args(args.iter().map(OsString::from));
        let mut formats = FormatArgs::default();
        while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
            let lexopt::Arg::Long(long) = arg else {
                return Err("not an option".into());
            };
            let long = long.to_string();
            if !formats.take(&long, &mut parser)? {
                return Err(format!("unknown --{long}"));
            }
        }
        Ok(formats)
    }

    /// Every format in the list is an option, taken in the list's order whatever the
    /// command line's; the last of an option given twice holds; others are not taken.
    #[test]
    fn each_format_of_the_list_is_an_option() {
        let named = |formats: &FormatArgs<RunRecord>| -> Vec<(String, String)> {
            (formats.named())
                .map(|(format, path)| (format.name.to_string(), path.to_string()))
                .collect()
        };
        let formats = parsed(&["--markdown=a.md", "--markdown", "t.md"]).unwrap();
        assert_eq!(named(&formats), [("markdown".into(), "t.md".into())]);
        #[cfg(feature = "files")]
        {
            let formats = parsed(&["--markdown", "t.md", "--json", "r.json"]).unwrap();
            let names: Vec<String> = named(&formats).into_iter().map(|(n, _)| n).collect();
            assert_eq!(names, ["json", "markdown"]);
        }
        assert_eq!(parsed(&["--pdf", "x"]).err().unwrap(), "unknown --pdf");
        let missing = parsed(&["--markdown"]).err().unwrap();
        assert!(missing.contains("'--markdown <FILE>'"), "{missing}");
        let options = FormatArgs::<RunRecord>::options();
        let longs: Vec<&str> = options.iter().map(|o| o.long).collect();
        let listed: Vec<&str> = RunRecord::formats().iter().map(|f| f.name).collect();
        assert_eq!(longs, listed);
    }
}
