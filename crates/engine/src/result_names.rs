//! Result-name templates: `mem.latency/random/{size}`, each `{placeholder}` standing for a
//! value. Probes list their results so and declare what their results feed (see
//! [`crate::presentation`]) so; this module says what each placeholder stands for, whether a
//! name fits a template, and turns a template into a regular expression matching exactly
//! the names it covers.

/// The probe whose result the cycle is (`cpu.frequency`), under which a harness's run keeps
/// the cycle it measured before its benchmarks ([`crate::cycle`]).
pub const CYCLE_PROBE: &str = "cpu.frequency";
/// The name of the cycle's result.
pub const CYCLE_RESULT: &str = "cpu.frequency/cycle";
/// The multiply chain's result: x86-64's check, recorded beside aarch64's.
pub const MULTIPLY_RESULT: &str = "cpu.frequency/multiply";
/// The exclusive-or chain's result: aarch64's check.
pub const EOR_RESULT: &str = "cpu.frequency/eor";

/// The placeholders a template may use, each with the regular expression of its values.
pub const PLACEHOLDERS: &[(&str, &str)] = &[
    // `size_label`: up to three significant digits and a binary unit (`1KiB`, `5.69KiB`).
    ("size", r"[0-9]+(?:\.[0-9]+)?(?:B|KiB|MiB|GiB|TiB)"),
    // A logical CPU number.
    ("cpu", "[0-9]+"),
    // A memory (NUMA) node's number.
    ("node", "[0-9]+"),
    // A count (workers, a pair's index).
    ("n", "[0-9]+"),
    // A level found on the latency curve.
    ("level", "L[0-9]+|L2-far|DRAM"),
];

/// The regular expression a placeholder's values match, `None` for an unknown one.
pub fn placeholder_regex(name: &str) -> Option<&'static str> {
    PLACEHOLDERS
        .iter()
        .find(|(known, _)| *known == name)
        .map(|&(_, regex)| regex)
}

/// The template as an anchored regular expression (`^mem\.memcpy/(?:…)$`), or the name of
/// the first unknown or unclosed placeholder.
pub fn template_regex(template: &str) -> Result<String, String> {
    let mut regex = String::from("^");
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        escape_into(&mut regex, &rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("{{{after} (unclosed)"))?;
        let name = &after[..close];
        let values = placeholder_regex(name).ok_or_else(|| format!("{{{name}}}"))?;
        regex.push_str(&format!("(?:{values})"));
        rest = &after[close + 1..];
    }
    escape_into(&mut regex, rest);
    regex.push('$');
    Ok(regex)
}

/// Whether `name` is one of the names `template` covers: its literal text, each
/// placeholder standing for one value of its kind ([`PLACEHOLDERS`]). The same language as
/// [`template_regex`]'s expression, read without a regular-expression engine so that the
/// report can match its declarations cheaply.
pub fn template_matches(template: &str, name: &str) -> bool {
    let (mut template, mut name) = (template, name);
    loop {
        let Some(open) = template.find('{') else {
            return name == template;
        };
        let Some(after_literal) = name.strip_prefix(&template[..open]) else {
            return false;
        };
        let Some(close) = template[open..].find('}') else {
            return false;
        };
        let Some(length) = value_length(&template[open + 1..open + close], after_literal) else {
            return false;
        };
        name = &after_literal[length..];
        template = &template[open + close + 1..];
    }
}

/// The length of the value of placeholder `kind` that `text` starts with, if it starts with
/// one: the longest such value, as [`PLACEHOLDERS`]' expressions define them.
fn value_length(kind: &str, text: &str) -> Option<usize> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let nonzero = |n: usize| (n > 0).then_some(n);
    match kind {
        "cpu" | "n" | "node" => nonzero(digits(text)),
        "size" => {
            let mut length = nonzero(digits(text))?;
            if let Some(fraction) = text[length..].strip_prefix('.') {
                length += 1 + nonzero(digits(fraction))?;
            }
            let unit = ["KiB", "MiB", "GiB", "TiB", "B"]
                .into_iter()
                .find(|unit| text[length..].starts_with(unit))?;
            Some(length + unit.len())
        }
        "level" => ["L2-far", "DRAM"]
            .into_iter()
            .find(|level| text.starts_with(level))
            .map(str::len)
            .or_else(|| Some(1 + nonzero(digits(text.strip_prefix('L')?))?)),
        _ => None,
    }
}

/// Appends literal text, its regular-expression meta characters escaped.
fn escape_into(regex: &mut String, literal: &str) {
    for c in literal.chars() {
        if r"\.+*?()|[]{}^$#&-~".contains(c) {
            regex.push('\\');
        }
        regex.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_become_anchored_expressions() {
        assert_eq!(
            template_regex("mem.memcpy/{size}").unwrap(),
            r"^mem\.memcpy/(?:[0-9]+(?:\.[0-9]+)?(?:B|KiB|MiB|GiB|TiB))$"
        );
        assert_eq!(
            template_regex("thread.core_to_core/one-way/cas/{cpu}-{cpu}").unwrap(),
            r"^thread\.core_to_core/one\-way/cas/(?:[0-9]+)\-(?:[0-9]+)$"
        );
        assert_eq!(template_regex("a/{nope}"), Err("{nope}".to_string()));
        assert!(template_regex("a/{size").is_err());
    }

    /// The matcher covers what the expression covers: each kind's values, nothing more.
    #[test]
    fn names_match_the_templates_that_cover_them() {
        let fits = template_matches;
        assert!(fits("mem.memcpy/{size}", "mem.memcpy/4KiB"));
        assert!(fits(
            "mem.latency/random/{size}",
            "mem.latency/random/5.69KiB"
        ));
        assert!(fits("mem.memcpy/{size}", "mem.memcpy/512B"));
        assert!(!fits("mem.memcpy/{size}", "mem.memcpy/4KB"));
        assert!(!fits("mem.memcpy/{size}", "mem.memcpy/4KiB/x"));
        assert!(!fits("mem.memcpy/{size}", "mem.memcpy/.5KiB"));
        assert!(!fits("mem.memcpy/{size}", "mem.memcpy/5.KiB"));
        let pair = "thread.core_to_core/one-way/cas/{cpu}-{cpu}";
        assert!(fits(pair, "thread.core_to_core/one-way/cas/0-13"));
        assert!(!fits(pair, "thread.core_to_core/one-way/cas/all-pairs"));
        assert!(fits("ipc.latency/pair{n}/fifo", "ipc.latency/pair2/fifo"));
        assert!(!fits("ipc.latency/pair{n}/fifo", "ipc.latency/pair/fifo"));
        for level in ["L1", "L12", "L2-far", "DRAM"] {
            assert!(fits(
                "gpu.memory/level/{level}",
                &format!("gpu.memory/level/{level}")
            ));
        }
        assert!(!fits("gpu.memory/level/{level}", "gpu.memory/level/L"));
        assert!(!fits("gpu.memory/level/{level}", "gpu.memory/level/L3x"));
        assert!(fits("file.read/open-close", "file.read/open-close"));
        assert!(!fits("file.read/open-close", "file.read/open-close/"));
        assert!(!fits("a/{nope}", "a/1"));
        assert!(!fits("a/{size", "a/1B"));
    }
}
