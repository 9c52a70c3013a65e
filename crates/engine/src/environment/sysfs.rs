//! Small readers for the kernel's text interfaces.

use std::path::Path;

/// A file's contents without surrounding whitespace; `None` when unreadable or empty.
pub(crate) fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    let text = latlab_doors::input::system_text(path)?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The selected word of a sysfs choice list such as `always [madvise] never`.
pub(crate) fn bracketed_choice(choices: &str) -> Option<String> {
    choices
        .split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .map(str::to_string)
}

/// Parses a kernel CPU list such as `0-3,8,10-11`; `None` when malformed.
pub fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
                if first > last {
                    return None;
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// The value of a `Key:  N kB` line of /proc/meminfo or /proc/self/smaps, in bytes: the
/// first such line in `text`.
pub fn kib_field(text: &str, key: &str) -> Option<u64> {
    let kib: u64 = text
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Parses a sysfs cache size such as `32K`, `1024K` or `32M` into bytes.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, multiplier) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 1 << 10),
        'M' => (&text[..text.len() - 1], 1 << 20),
        'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok().map(|n| n * multiplier)
}

pub(crate) struct Uname {
    pub system: String,
    pub node_name: String,
    pub release: String,
    pub version: String,
}

#[cfg(unix)]
pub(crate) fn uname() -> Uname {
    let name = crate::sys::system_name();
    Uname {
        system: name.system,
        node_name: name.node_name,
        release: name.release,
        version: name.version,
    }
}

/// Windows has no `uname`: its name, the computer's name, and no release or version to read
/// without the registry.
#[cfg(not(unix))]
pub(crate) fn uname() -> Uname {
    Uname {
        system: "Windows".into(),
        node_name: std::env::var("COMPUTERNAME").unwrap_or_default(),
        release: String::new(),
        version: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_malformed_ones_are_refused() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("5\n"), Some(vec![5]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
    }

    #[test]
    fn kib_fields_parse_by_exact_key() {
        let text = "MemTotal:  100 kB\nMemAvailable:   24 kB\nAnonHugePages: 2048 kB\n";
        assert_eq!(kib_field(text, "MemAvailable"), Some(24 * 1024));
        assert_eq!(kib_field(text, "AnonHugePages"), Some(2 << 20));
        assert_eq!(kib_field(text, "Mem"), None);
    }

    #[test]
    fn sizes_and_choices_parse() {
        assert_eq!(parse_size("32K"), Some(32768));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("K"), None);
        assert_eq!(
            bracketed_choice("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed_choice("always madvise never"), None);
    }
}
