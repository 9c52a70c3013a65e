//! What the `{placeholder}`s of [`ProbeSpec::results`](crate::ProbeSpec::results) stand for,
//! and a result-name template as a regular expression matching exactly the names it covers.

/// The placeholders a template may use, each with the regular expression of its values.
pub const PLACEHOLDERS: &[(&str, &str)] = &[
    // `size_label`: up to three significant digits and a binary unit (`1KiB`, `5.69KiB`).
    ("size", r"[0-9]+(?:\.[0-9]+)?(?:B|KiB|MiB|GiB|TiB)"),
    // A logical CPU number.
    ("cpu", "[0-9]+"),
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

    #[test]
    fn every_probe_template_is_well_formed_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for probe in crate::PROBES {
            assert!(!probe.results.is_empty(), "{} lists no results", probe.id);
            for template in probe.results {
                assert!(
                    template.starts_with(&format!("{}/", probe.id)),
                    "{template} is not under {}",
                    probe.id
                );
                template_regex(template)
                    .unwrap_or_else(|bad| panic!("{template}: unknown placeholder {bad}"));
                assert!(seen.insert(*template), "{template} listed twice");
            }
        }
    }
}
