//! The outputs a command line names (`--json FILE`, `--csv -`, `--html FILE`), checked in
//! one step for every command of both front ends, before anything is measured or written:
//! no empty path, at most one on standard output, no file named by two of them, and each
//! file writable where it lands ([`crate::check_output_file`]). A front end adds only what
//! is its own (the files a run writes anyway, the inputs a command reads).

use latlab_report::OutputTarget;
use std::path::Path;

/// An output as the command line named it: its format (whatever the caller keeps to write
/// it), the option that named it (`--json`) and the value given.
pub struct NamedOutput<F> {
    pub format: F,
    pub flag: String,
    pub value: String,
}

/// Checks `named`, whose options `listed` names in the messages (`--json, --csv and
/// --markdown`), and returns each format with where it goes. A file in the directory the
/// command `creates` (a run's new results directory) is checked as that directory is, by
/// the caller, not here. `Err` is the refusal, one line.
pub fn check_named_outputs<F>(
    named: Vec<NamedOutput<F>>,
    listed: &str,
    creates: Option<&Path>,
) -> Result<Vec<(F, OutputTarget)>, String> {
    if let Some(empty) = named.iter().find(|output| output.value.is_empty()) {
        return Err(format!(
            "{} '': an empty path; give a file name, or '-' for standard output",
            empty.flag
        ));
    }
    if named.iter().filter(|output| output.value == "-").count() > 1 {
        return Err(format!("only one of {listed} can be '-' (standard output)"));
    }
    let files: Vec<&Path> = (named.iter())
        .filter(|output| output.value != "-")
        .map(|output| Path::new(&output.value))
        .collect();
    for (i, path) in files.iter().enumerate() {
        if files[..i].iter().any(|other| same_file(other, path)) {
            return Err(format!(
                "{} is named by two outputs; give each of {listed} its own file",
                path.display()
            ));
        }
    }
    for output in named.iter().filter(|output| output.value != "-") {
        let path = Path::new(&output.value);
        if creates.is_some_and(|dir| path.parent() == Some(dir)) {
            continue;
        }
        crate::check_output_file(path).map_err(|why| format!("{} {why}", output.flag))?;
    }
    Ok((named.into_iter())
        .map(|output| (output.format, OutputTarget::parse(&output.value)))
        .collect())
}

/// Whether `a` and `b` name one file: where both exist, the same file
/// ([`latlab_report::is_same_file`]: on Unix the same device and inode, links followed);
/// where either is yet to be made, the same name in the same directory.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if a.exists() && b.exists() {
        return latlab_report::is_same_file(a, b);
    }
    let (parent_a, parent_b) = (crate::parent_or_current(a), crate::parent_or_current(b));
    a.file_name() == b.file_name()
        && a.file_name().is_some()
        && (parent_a == parent_b || latlab_report::is_same_file(parent_a, parent_b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(pairs: &[(&str, &str)]) -> Vec<NamedOutput<usize>> {
        (pairs.iter().enumerate())
            .map(|(i, (flag, value))| NamedOutput {
                format: i,
                flag: (*flag).to_string(),
                value: (*value).to_string(),
            })
            .collect()
    }

    /// Every rule, in the order a command line meets them, each refused in its words.
    #[test]
    fn outputs_are_refused_by_one_set_of_rules() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name).display().to_string();
        let listed = "--json and --csv";
        let refused = |pairs: &[(&str, &str)]| {
            check_named_outputs(named(pairs), listed, None)
                .map(|_| ())
                .unwrap_err()
        };
        assert!(refused(&[("--json", "")]).starts_with("--json '': an empty path"));
        assert_eq!(
            refused(&[("--json", "-"), ("--csv", "-")]),
            "only one of --json and --csv can be '-' (standard output)"
        );
        let same = at("x");
        let also_same = format!("{}/./x", dir.path().display());
        assert!(refused(&[("--json", &same), ("--csv", &also_same)]).contains("named by two"));
        assert!(
            refused(&[("--json", &dir.path().display().to_string())]).contains("is a directory")
        );
        let nowhere = at("nowhere/x");
        assert!(refused(&[("--json", &nowhere)]).starts_with("--json cannot write"));
        let checked =
            check_named_outputs(named(&[("--json", "-"), ("--csv", &at("y"))]), listed, None)
                .unwrap();
        assert_eq!(checked[0], (0, OutputTarget::Stdout));
        assert_eq!(checked[1].0, 1);
    }

    /// One file under two names (a hard link, or `dir/./x`) is one file; two names in one
    /// directory are two.
    #[test]
    fn one_file_is_one_file_under_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a");
        std::fs::write(&file, "x").unwrap();
        let link = dir.path().join("b");
        std::fs::hard_link(&file, &link).unwrap();
        assert!(same_file(&file, &link));
        assert!(same_file(
            &dir.path().join("new"),
            &dir.path().join(".").join("new")
        ));
        assert!(!same_file(
            &dir.path().join("new"),
            &dir.path().join("other")
        ));
        assert!(!same_file(&file, &dir.path().join("new")));
    }
}
