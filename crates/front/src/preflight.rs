//! The outputs both front ends write where the user names them (`--json FILE`, `--html
//! FILE`, `--out DIR`): checked before anything is measured, so that a path that cannot be
//! written is one line and status 2, not a run lost at the end.

use latlab_report::Destination;
use std::path::Path;

/// A file output the user named must be writable where it lands ([`Destination`]): a link
/// is checked at the end of its chain, a device or FIFO by opening it, a regular file (or
/// none yet) by its directory. `Err` is the refusal, naming the path.
pub fn check_output_file(path: &Path) -> Result<(), String> {
    if path.as_os_str().is_empty() {
        return Err("an empty path; give a file name, or '-' for standard output".into());
    }
    if path.is_dir() {
        return Err(format!(
            "{} is a directory; give a file name such as {}",
            path.display(),
            path.join("results.json").display()
        ));
    }
    let context = format!("cannot write {}", path.display());
    let destination = Destination::of(path).map_err(|e| format!("{context}: {e}"))?;
    match destination {
        // A device or pipe (/dev/null, /dev/stdout) is written in place: it must be
        // writable. It is opened without blocking: a FIFO whose reader has not come yet
        // (ENXIO) is writable, and is opened for the write itself only at the end.
        Destination::InPlace(device) | Destination::Appended(device) => {
            latlab_doors::output::can_write_in_place(&device).map_err(|e| format!("{context}: {e}"))
        }
        Destination::Replaced(file) => {
            existing_writable(&context, "the directory", parent_or_current(&file))
        }
    }
}

/// `dir` (`called` so in the message) must exist and be writable, for `context`.
pub fn existing_writable(context: &str, called: &str, dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => check_writable(dir, context),
        Ok(_) => Err(format!(
            "{context}: {called} {} is not a directory; name a directory",
            dir.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{context}: {called} {} does not exist; create it first",
            dir.display()
        )),
        // A loop of links (ELOOP), no permission to look (EACCES), ...: said as it is.
        Err(e) => Err(format!(
            "{context}: {called} {} cannot be used ({e}); choose another",
            dir.display()
        )),
    }
}

/// Whether this process can create files in `dir`: an unnamed file made there and closed
/// (`O_TMPFILE`), or where the file system has none, a named one made exclusively and
/// removed at once. Asked by doing, since permission bits do not tell: root passes them,
/// yet cannot create a file in `/proc`. Nothing is left behind either way.
pub fn check_writable(dir: &Path, context: &str) -> Result<(), String> {
    if dir.is_relative() && std::env::current_dir().is_err() {
        // A deleted working directory can still be looked at, but nothing can be made in
        // it: said as it is, not as a permission.
        return Err(format!(
            "{context}: the working directory no longer exists (it was deleted or moved); \
             change to a directory that exists and run again"
        ));
    }
    latlab_doors::output::can_create_in(dir).map_err(|e| {
        format!(
            "{context}: the directory {} is not writable ({e}); choose one you can write to",
            dir.display()
        )
    })
}

/// `--pin CPU` must name a CPU this process may run on: refused before measuring, where it
/// would otherwise become a note after it.
pub fn check_pin(host: &dyn latlab_engine::Host, cpu: usize) -> Result<(), String> {
    let allowed = host.allowed_cpus();
    if allowed.contains(&cpu) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(usize::to_string).collect();
    Err(format!(
        "--pin {cpu}: this process cannot run on CPU {cpu}; choose one of {}",
        list.join(", ")
    ))
}

/// The directory `path` is in: its parent, or `.` for a bare name.
pub fn parent_or_current(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_is_refused_when_it_cannot_be_written_where_it_lands() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            check_output_file(Path::new(""))
                .unwrap_err()
                .contains("empty path")
        );
        let refused = check_output_file(dir.path()).unwrap_err();
        assert!(refused.contains("is a directory"), "{refused}");
        let missing = dir.path().join("nowhere/x.json");
        let refused = check_output_file(&missing).unwrap_err();
        assert!(
            refused.contains("does not exist; create it first"),
            "{refused}"
        );
        // A link is checked where it leads.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("nowhere/x.json", &link).unwrap();
        let refused = check_output_file(&link).unwrap_err();
        assert!(refused.contains("nowhere does not exist"), "{refused}");
        assert_eq!(check_output_file(&dir.path().join("x.json")), Ok(()));
        assert_eq!(check_output_file(Path::new("/dev/null")), Ok(()));
        // Root passes every permission bit, yet cannot create a file in /sys; /proc is the
        // kernel's, whatever its bits say.
        let refused = check_output_file(Path::new("/sys/r.json")).unwrap_err();
        assert!(refused.contains("is not writable"), "{refused}");
        let refused = check_output_file(Path::new("/proc/r.json")).unwrap_err();
        assert!(refused.contains("under /proc"), "{refused}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "only the link stays"
        );
    }
}
