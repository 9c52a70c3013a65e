//! Directories latlab writes into on its own account (results directories, man pages, the
//! harness's baselines): they must be the user's own, since whoever owns a directory can
//! plant links or FIFOs where latlab writes, and a directory reached through a link may be
//! anyone's.

use std::path::Path;

/// Why latlab may not write into `dir` on its own account: it belongs to another user, or
/// (unless `follow_links`) `dir` itself is a symbolic link. `Ok` when it is a directory of
/// this user's, or does not exist yet (it will be created as this user's); `Err` with the
/// reason as a phrase, for the caller to put after the path it names.
pub fn check_own_directory(dir: &Path, follow_links: bool) -> Result<(), String> {
    let found = if follow_links {
        std::fs::metadata(dir)
    } else {
        std::fs::symlink_metadata(dir)
    };
    let metadata = match found {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot be used ({e})")),
    };
    if metadata.file_type().is_symlink() {
        let to = std::fs::read_link(dir)
            .map(|to| format!(" to {}", to.display()))
            .unwrap_or_default();
        return Err(format!(
            "is a symbolic link{to}, which latlab does not write through on its own account"
        ));
    }
    if !metadata.is_dir() {
        return Err("exists and is not a directory".into());
    }
    is_own(&metadata)
}

/// Whether the directory is this user's: its owner is this process's effective user.
#[cfg(unix)]
fn is_own(metadata: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let (owner, me) = (metadata.uid(), latlab_doors::sys::effective_uid());
    if owner != me {
        return Err(format!(
            "the directory belongs to uid {owner}, not to you (uid {me})"
        ));
    }
    Ok(())
}

/// Windows says who may write a directory in its access lists, which std does not read:
/// whoever could not write it is refused when the write is tried.
#[cfg(not(unix))]
fn is_own(_metadata: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_directory_is_refused_unless_links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(check_own_directory(&real, false), Ok(()));
        assert_eq!(check_own_directory(&link, true), Ok(()));
        let refused = check_own_directory(&link, false).unwrap_err();
        assert!(refused.contains("symbolic link to"), "{refused}");
        assert_eq!(
            check_own_directory(&dir.path().join("absent"), false),
            Ok(())
        );
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let refused = check_own_directory(&file, true).unwrap_err();
        assert!(refused.contains("not a directory"), "{refused}");
    }
}
