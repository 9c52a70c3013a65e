//! The options a probe declares: each [`OptionSpec`] says its name, the kind of value it
//! takes (and so how that value is parsed and bounded), its default and its help. A probe
//! lists the options it reads in [`crate::ProbeSpec::options`]; the command line, `--help`,
//! the man pages, the request to a probe's own process and the book's probe page are all
//! made from those declarations, so that an option is added in one place.

use latlab_engine::config_text::{duration_in, whole_number_in};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One option of one or more probes (`--NAME VALUE`, or `--NAME` for a flag).
#[derive(Debug)]
pub struct OptionSpec {
    /// The long name, without its dashes.
    pub name: &'static str,
    /// What it takes, and so how its text is parsed and bounded.
    pub kind: Kind,
    /// The value it has when not given, as it would be written, where there is one fixed
    /// value; `None` where the probe chooses (by suite, by machine).
    pub default: Option<&'static str>,
    /// One or more sentences for `--help`, ending with the default in words where
    /// `default` is `None` and the probe chooses one.
    pub help: &'static str,
    /// The heading it is listed under in `--help`.
    pub heading: &'static str,
}

/// The kind of value an option takes.
#[derive(Debug)]
pub enum Kind {
    /// A size in bytes written with a unit (`64KiB`, `256MiB`), at least `min`.
    Bytes { min: u64 },
    /// A whole number of `unit`, from `min` to `max` where there is a most.
    Count {
        min: usize,
        max: Option<usize>,
        unit: &'static str,
    },
    /// A duration written with a unit (`2.5ms`, `500us`), within `min` to `max`.
    Duration { min: Duration, max: Duration },
    /// Present or not.
    Flag,
    /// A path on this machine.
    Path,
}

/// A value an option was given.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bytes(u64),
    Count(usize),
    Duration(Duration),
    Flag(bool),
    Path(PathBuf),
}

impl OptionSpec {
    /// The value `text` stands for, or what is wrong with it in a clause (`must be …`).
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        match self.kind {
            Kind::Bytes { min } => parse_bytes(text, min).map(Value::Bytes),
            Kind::Count { min, max, unit } => match max {
                Some(max) => whole_number_in(text, min..=max, unit),
                None => whole_number_in(text, min.., unit),
            }
            .map(Value::Count),
            Kind::Duration { min, max } => {
                duration_in(text, &(min..=max), self.default.unwrap_or("1ms")).map(Value::Duration)
            }
            Kind::Flag => match text {
                "true" => Ok(Value::Flag(true)),
                "false" => Ok(Value::Flag(false)),
                _ => Err("must be true or false".to_string()),
            },
            Kind::Path if text.is_empty() => Err("must not be empty".to_string()),
            Kind::Path => Ok(Value::Path(PathBuf::from(text))),
        }
    }

    /// The placeholder of its value in `--help` (`SIZE`, `N`, `DURATION`, `PATH`); `None`
    /// for a flag.
    pub fn value_name(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Bytes { .. } => Some("SIZE"),
            Kind::Count { .. } => Some("N"),
            Kind::Duration { .. } => Some("DURATION"),
            Kind::Flag => None,
            Kind::Path => Some("PATH"),
        }
    }

    /// The value it has when it is not given, where it has a fixed one.
    fn default_value(&self) -> Option<Value> {
        match self.kind {
            Kind::Flag => Some(Value::Flag(false)),
            _ => self.default.and_then(|text| self.parse(text).ok()),
        }
    }
}

/// A size in bytes, written as a number and a unit, at least `min`.
pub(crate) fn parse_bytes(text: &str, min: u64) -> Result<u64, String> {
    let bad = || "not a size; write a number and a unit, such as 64KiB or 256MiB".to_string();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = (number * scale as f64).round();
    if bytes < min as f64 {
        return Err(format!(
            "must be at least {}",
            latlab_engine::units::format_bytes(min as f64).replace(' ', "")
        ));
    }
    if bytes > u64::MAX as f64 / 2.0 {
        return Err("larger than any machine's memory; give at most a few TiB".to_string());
    }
    Ok(bytes as u64)
}

/// The values the options of a run were given, by option name; an option not given has its
/// declared default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptionValues(BTreeMap<&'static str, Value>);

impl OptionValues {
    /// Gives `spec` the value `value`.
    pub fn set(&mut self, spec: &OptionSpec, value: Value) {
        self.0.insert(spec.name, value);
    }

    fn value(&self, spec: &OptionSpec) -> Option<Value> {
        self.0
            .get(spec.name)
            .cloned()
            .or_else(|| spec.default_value())
    }

    /// The size `spec` was given, else its default.
    pub fn bytes(&self, spec: &OptionSpec) -> Option<u64> {
        match self.value(spec) {
            Some(Value::Bytes(bytes)) => Some(bytes),
            _ => None,
        }
    }

    /// The count `spec` was given, else its default.
    pub fn count(&self, spec: &OptionSpec) -> Option<usize> {
        match self.value(spec) {
            Some(Value::Count(count)) => Some(count),
            _ => None,
        }
    }

    /// The duration `spec` was given, else its default.
    pub fn duration(&self, spec: &OptionSpec) -> Option<Duration> {
        match self.value(spec) {
            Some(Value::Duration(duration)) => Some(duration),
            _ => None,
        }
    }

    /// Whether flag `spec` was given.
    pub fn flag(&self, spec: &OptionSpec) -> bool {
        matches!(self.value(spec), Some(Value::Flag(true)))
    }

    /// The path `spec` was given.
    pub fn path(&self, spec: &OptionSpec) -> Option<&Path> {
        match self.0.get(spec.name) {
            Some(Value::Path(path)) => Some(path),
            _ => None,
        }
    }

    /// The values of `options` that were given, as `--NAME=VALUE` arguments that
    /// [`OptionValues::from_args`] reads back.
    pub fn to_args(&self, options: &[&OptionSpec]) -> Vec<String> {
        options
            .iter()
            .filter_map(|spec| Some((spec.name, self.0.get(spec.name)?)))
            .map(|(name, value)| format!("--{name}={}", value_text(value)))
            .collect()
    }

    /// The values `args` give `options`, parsed and bounded as on the command line; an
    /// argument naming no option of `options`, or a value its option refuses, is an error.
    pub fn from_args(args: &[String], options: &[&OptionSpec]) -> Result<OptionValues, String> {
        let mut values = OptionValues::default();
        for arg in args {
            let (name, text) = (arg.strip_prefix("--"))
                .and_then(|rest| rest.split_once('='))
                .ok_or_else(|| format!("{arg:?} is not --NAME=VALUE"))?;
            let spec = (options.iter())
                .find(|spec| spec.name == name)
                .ok_or_else(|| format!("--{name} is no option of this probe"))?;
            let value = spec.parse(text).map_err(|why| format!("--{name}: {why}"))?;
            values.set(spec, value);
        }
        Ok(values)
    }
}

/// A value as it would be written on the command line. A path is written as text: a probe
/// in a process of its own that declared a path option would get a name that is not UTF-8
/// altered (none declares one).
fn value_text(value: &Value) -> String {
    match value {
        Value::Bytes(bytes) => bytes.to_string(),
        Value::Count(count) => count.to_string(),
        Value::Duration(duration) => format!("{}ns", duration.as_nanos()),
        Value::Flag(flag) => flag.to_string(),
        Value::Path(path) => path.display().to_string(),
    }
}

/// Every option the probes of `PROBES` declare, each once, in the order the probes list
/// them.
pub fn declared() -> Vec<&'static OptionSpec> {
    let mut options: Vec<&'static OptionSpec> = Vec::new();
    for spec in crate::PROBES.iter().flat_map(|probe| probe.options()) {
        if !options.iter().any(|known| known.name == spec.name) {
            options.push(spec);
        }
    }
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every declared default is a value its option accepts, and no two options of
    /// different declarations share a name.
    #[test]
    fn declarations_are_consistent() {
        let every: Vec<&OptionSpec> = (crate::PROBES.iter())
            .flat_map(|p| p.options().iter().copied())
            .collect();
        for spec in &every {
            if let Some(default) = spec.default {
                assert!(spec.parse(default).is_ok(), "--{}: {default}", spec.name);
            }
            let same_name = every.iter().filter(|other| other.name == spec.name);
            assert!(
                same_name.clone().all(|other| std::ptr::eq(*other, *spec)),
                "--{} is declared twice",
                spec.name
            );
        }
        assert!(!declared().is_empty());
    }

    /// What a run gives, written as arguments and read back, is what it gave; a value the
    /// option refuses and a name it does not know are refused.
    #[test]
    fn values_survive_their_arguments() {
        let options = declared();
        let mut values = OptionValues::default();
        for spec in &options {
            let text = match spec.kind {
                Kind::Bytes { .. } => "3MiB",
                Kind::Count { min, .. } if min > 1 => "1000",
                Kind::Count { .. } => "2",
                Kind::Duration { .. } => "1.5ms",
                Kind::Flag => "true",
                Kind::Path => "/some where/odd=name",
            };
            values.set(spec, spec.parse(text).unwrap());
        }
        let args = values.to_args(&options);
        assert_eq!(args.len(), options.len());
        assert_eq!(OptionValues::from_args(&args, &options), Ok(values));
        let unknown = ["--no-such=1".to_string()];
        assert!(OptionValues::from_args(&unknown, &options).is_err());
        let sizes: Vec<&OptionSpec> = options
            .into_iter()
            .filter(|spec| matches!(spec.kind, Kind::Bytes { .. }))
            .collect();
        let tiny = [format!("--{}=1", sizes[0].name)];
        assert!(OptionValues::from_args(&tiny, &sizes).is_err());
    }

    /// An option not given has its declared default; one given, its value.
    #[test]
    fn an_option_not_given_has_its_default() {
        let counted = declared()
            .into_iter()
            .find(|spec| matches!(spec.kind, Kind::Count { .. }) && spec.default.is_some())
            .unwrap();
        let mut values = OptionValues::default();
        let default = counted.parse(counted.default.unwrap()).unwrap();
        assert_eq!(values.count(counted).map(Value::Count), Some(default));
        values.set(counted, Value::Count(3));
        assert_eq!(values.count(counted), Some(3));
        assert_eq!(
            parse_bytes("3KiB", 4096).unwrap_err(),
            "must be at least 4KiB"
        );
        assert_eq!(parse_bytes("1.5MiB", 4096), Ok(3 << 19));
    }
}
