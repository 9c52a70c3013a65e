//! The other build's bench executable for this bench target: a path to a saved bench
//! executable as given, or a git revision's bench targets built in a worktree under the
//! target directory, cached by commit and profile.
//!
//! - The revision is resolved by `git rev-parse` in the package's directory; a worktree of
//!   its commit is added (`git worktree add --detach`) under
//!   `TARGET/latlab-against/COMMIT`, once.
//! - Its package's bench targets are built there by `cargo build --benches` with this
//!   build's profile, into one target directory kept for every revision
//!   (`TARGET/latlab-against/target`), so that a second revision builds only what changed.
//! - The executables cargo names (`--message-format json`) are kept in
//!   `TARGET/latlab-against/COMMIT-PROFILE.txt`: each bench target of a later run (cargo runs
//!   one binary per target) and each later run finds them there, built once.
//!
//! git and cargo run as children through the door ([`latlab_doors::child`]), a build that
//! fails is refused in one line with the last error cargo gave.

use latlab_doors::child::{End, Output, Supervision};
use latlab_doors::{Missing, OwnDir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long git may take to answer.
const GIT_LIMIT: Duration = Duration::from_secs(120);
/// How long the other build may take, and after how long it is named as running long.
const BUILD_LIMIT: Duration = Duration::from_secs(3600);
const BUILD_NOTICE: Duration = Duration::from_secs(30);
/// What cargo's messages may come to: one line an artifact.
const MAX_MESSAGES: usize = 64 << 20;
/// The last of cargo's standard error kept, for why a build failed.
const KEPT_STDERR: usize = 64 * 1024;
/// The most a cache of executables may hold.
const MAX_CACHE: u64 = 1 << 20;

/// The executable the other side runs, and how it is named in what is printed.
#[derive(Debug, Clone)]
pub(crate) struct OtherBuild {
    pub executable: PathBuf,
    /// `main (3f2a9c1)`, or the path given.
    pub label: String,
}

/// The other build of bench target `target` for `rev`: a file there, or a revision of the
/// repository of `package_dir`, built with `profile` into `target_dir`'s cache. `Ok(None)`
/// where the revision has no such bench target.
pub(crate) fn other_build(
    rev: &str,
    target: &str,
    package_dir: &Path,
    target_dir: &Path,
    profile: &str,
    stop: &dyn Fn() -> Option<i32>,
) -> Result<Option<OtherBuild>, String> {
    let as_path = Path::new(rev);
    if as_path.is_file() {
        return Ok(Some(OtherBuild {
            executable: as_path.to_path_buf(),
            label: rev.to_string(),
        }));
    }
    let (executables, label) = revision_build(rev, package_dir, target_dir, profile, stop)
        .map_err(|why| format!("--against {rev}: {why}"))?;
    let wanted = target.replace('-', "_");
    Ok((executables.into_iter())
        .find(|(name, _)| name.replace('-', "_") == wanted)
        .map(|(_, executable)| OtherBuild { executable, label }))
}

/// The bench executables of revision `rev` of the repository of `package_dir`, built with
/// `profile` under `target_dir` (or found built there), and how the revision is named.
fn revision_build(
    rev: &str,
    package_dir: &Path,
    target_dir: &Path,
    profile: &str,
    stop: &dyn Fn() -> Option<i32>,
) -> Result<(Vec<(String, PathBuf)>, String), String> {
    let commit = git(
        package_dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )?
    .ok_or_else(|| {
        format!(
            "not a file, nor a revision of the git repository at {}; give \
                 a commit, a branch or a tag, or the path of a saved bench executable",
            package_dir.display()
        )
    })?;
    let short = &commit[..commit.len().min(7)];
    let label = format!("{rev} ({short})");
    let top = git(package_dir, &["rev-parse", "--show-toplevel"])?
        .ok_or_else(|| format!("{} is not in a git work tree", package_dir.display()))?;
    let within = package_dir
        .strip_prefix(&top)
        .map_err(|_| format!("{} is not under {top}", package_dir.display()))?;
    let cache = OwnDir::kept(&target_dir.join("latlab-against"), Missing::Made)
        .map_err(|e| format!("{}: {e}", target_dir.join("latlab-against").display()))?;
    let _held = cache
        .lock(Duration::from_secs(3600), || {
            latlab_front::say!(
                "waiting for another build of {label}, under {}",
                cache.path().display()
            )
        })
        .map_err(|e| format!("{}: {e}", cache.path().display()))?;
    let executables = built_or_cached(
        &cache,
        &commit,
        (package_dir, within),
        profile,
        &label,
        stop,
    )?;
    Ok((executables, label))
}

/// The bench executables of `commit` listed in `cache`, or built there (a worktree of the
/// repository of `package_dir`, the package `within` it) with `profile` and listed.
fn built_or_cached(
    cache: &OwnDir,
    commit: &str,
    (package_dir, within): (&Path, &Path),
    profile: &str,
    label: &str,
    stop: &dyn Fn() -> Option<i32>,
) -> Result<Vec<(String, PathBuf)>, String> {
    let listed = format!("{commit}-{profile}.txt");
    if let Some(executables) = cached(cache, &listed) {
        return Ok(executables);
    }
    let worktree = cache.join(commit);
    if !worktree.exists() {
        add_worktree(package_dir, &worktree, commit)?;
    }
    let executables = build(
        &worktree.join(within),
        &cache.join("target"),
        profile,
        label,
        stop,
    )
    .map_err(|why| format!("{label} does not build: {why}"))?;
    let text: String = (executables.iter())
        .map(|(name, path)| format!("{name}\t{}\n", path.display()))
        .collect();
    cache
        .replace(&listed, text.as_bytes(), latlab_doors::Durability::Synced)
        .map_err(|e| format!("{}: {e}", cache.join(&listed).display()))?;
    Ok(executables)
}

/// The executables a cache lists, where every one is still there.
fn cached(cache: &OwnDir, listed: &str) -> Option<Vec<(String, PathBuf)>> {
    let text = String::from_utf8(cache.read(listed, MAX_CACHE).ok()?).ok()?;
    let executables: Vec<(String, PathBuf)> = (text.lines())
        .filter_map(|line| line.split_once('\t'))
        .map(|(name, path)| (name.to_string(), PathBuf::from(path)))
        .collect();
    // An empty list is no build: one with no bench target is refused before it is kept.
    let all_there = executables.iter().all(|(_, path)| path.is_file());
    (all_there && !executables.is_empty()).then_some(executables)
}

fn supervision<'a>(
    what: &'a str,
    limit: Duration,
    notice_after: Option<Duration>,
    stop: &'a dyn Fn() -> Option<i32>,
    stdout: Output,
) -> Supervision<'a> {
    Supervision {
        what,
        limit,
        notice_after,
        grace: Duration::from_secs(5),
        stop,
        say: &|line| latlab_front::say!("{line}"),
        stdout,
        stderr: Output::Tail(KEPT_STDERR),
    }
}

/// What `git ARGS` printed in `dir`, trimmed; `None` where it failed.
fn git(dir: &Path, args: &[&str]) -> Result<Option<String>, String> {
    let ended = latlab_doors::child::run(
        Command::new("git").arg("-C").arg(dir).args(args),
        &supervision("git", GIT_LIMIT, None, &|| None, Output::Captured(1 << 20)),
    )
    .map_err(|e| format!("git cannot be run ({e}); install git"))?;
    if ended.end != End::Exited {
        return Err(format!("git {} did not finish", args.join(" ")));
    }
    Ok(ended
        .status
        .success()
        .then(|| String::from_utf8_lossy(&ended.stdout).trim().to_string()))
}

fn add_worktree(package_dir: &Path, worktree: &Path, commit: &str) -> Result<(), String> {
    let worktree_text = worktree.to_string_lossy();
    let ended = latlab_doors::child::run(
        Command::new("git").arg("-C").arg(package_dir).args([
            "worktree",
            "add",
            "--detach",
            &worktree_text,
            commit,
        ]),
        &supervision(
            "git worktree add",
            GIT_LIMIT,
            None,
            &|| None,
            Output::Discarded,
        ),
    )
    .map_err(|e| format!("git cannot be run ({e}); install git"))?;
    match ended.status.success() {
        true => Ok(()),
        false => Err(format!(
            "git worktree add {worktree_text} failed: {}",
            last_line(&ended.stderr_tail)
        )),
    }
}

/// Builds the bench targets of the package at `package_dir` into `target_dir`; each bench
/// target's name and executable.
fn build(
    package_dir: &Path,
    target_dir: &Path,
    profile: &str,
    label: &str,
    stop: &dyn Fn() -> Option<i32>,
) -> Result<Vec<(String, PathBuf)>, String> {
    latlab_front::say!(
        "building the bench targets of {label} in {}",
        package_dir.display()
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let what = format!("the build of {label}");
    let ended = latlab_doors::child::run(
        Command::new(cargo)
            .current_dir(package_dir)
            .args([
                "build",
                "--benches",
                "--message-format",
                "json",
                "--profile",
                profile,
            ])
            .env("CARGO_TARGET_DIR", target_dir),
        &supervision(
            &what,
            BUILD_LIMIT,
            Some(BUILD_NOTICE),
            stop,
            Output::Captured(MAX_MESSAGES),
        ),
    )
    .map_err(|e| format!("cargo cannot be run ({e})"))?;
    match ended.end {
        End::Exited if ended.status.success() => {}
        End::Exited => return Err(last_error(&ended.stdout, &ended.stderr_tail)),
        End::OutlivedLimit(limit) => {
            return Err(format!(
                "it ran past {} s, and was stopped",
                limit.as_secs()
            ));
        }
        End::Stopped(_) | End::DidNotStop(..) => return Err("it was interrupted".into()),
    }
    let executables = bench_executables(&String::from_utf8_lossy(&ended.stdout));
    if executables.is_empty() {
        return Err("it has no bench targets".into());
    }
    Ok(executables)
}

/// Each bench target's name and executable, from cargo's JSON messages.
fn bench_executables(messages: &str) -> Vec<(String, PathBuf)> {
    (messages.lines())
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| {
            (m["target"]["kind"].as_array()).is_some_and(|k| k.iter().any(|k| k == "bench"))
        })
        .filter_map(|m| {
            let name = m["target"]["name"].as_str()?.to_string();
            Some((name, PathBuf::from(m["executable"].as_str()?)))
        })
        .collect()
}

/// Why a build failed: the first error cargo's messages give, else its last line of
/// standard error.
fn last_error(messages: &[u8], stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(messages);
    let error = (text.lines())
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-message" && m["message"]["level"] == "error")
        .find_map(|m| m["message"]["message"].as_str().map(str::to_string));
    error.unwrap_or_else(|| last_line(stderr))
}

fn last_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    (text.lines().rev())
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("no reason given")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list of a build kept is read back only where it names executables that are all
    /// still there: an empty list, one whose file is gone, or no list, builds again.
    #[test]
    fn a_kept_build_is_taken_only_whole() {
        let dir = tempfile::tempdir().unwrap();
        let cache = OwnDir::kept(&dir.path().join("latlab-against"), Missing::Made).unwrap();
        let exe = dir.path().join("lists-1f");
        std::fs::write(&exe, "").unwrap();
        let keep = |text: &str| {
            (cache.replace(
                "c-bench.txt",
                text.as_bytes(),
                latlab_doors::Durability::Synced,
            ))
            .unwrap()
        };
        assert!(cached(&cache, "c-bench.txt").is_none());
        keep("");
        assert!(cached(&cache, "c-bench.txt").is_none());
        keep(&format!(
            "lists\t{}\nold\t{}/gone\n",
            exe.display(),
            dir.path().display()
        ));
        assert!(cached(&cache, "c-bench.txt").is_none());
        keep(&format!("lists\t{}\nno tab here\n", exe.display()));
        assert_eq!(
            cached(&cache, "c-bench.txt"),
            Some(vec![("lists".into(), exe.clone())])
        );
    }

    #[test]
    fn cargos_messages_name_the_bench_executables_and_the_first_error() {
        let messages = r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"mine"},"executable":null}
{"reason":"compiler-artifact","target":{"kind":["bench"],"name":"lists"},"executable":"/t/release/deps/lists-1f"}
{"reason":"compiler-message","message":{"level":"warning","message":"unused"}}
{"reason":"compiler-message","message":{"level":"error","message":"cannot find value `x`"}}
not json"#;
        assert_eq!(
            bench_executables(messages),
            [(
                "lists".to_string(),
                PathBuf::from("/t/release/deps/lists-1f")
            )]
        );
        assert_eq!(
            last_error(messages.as_bytes(), b""),
            "cannot find value `x`"
        );
        assert_eq!(
            last_error(b"", b"error: could not compile\n\n"),
            "error: could not compile"
        );
    }
}
