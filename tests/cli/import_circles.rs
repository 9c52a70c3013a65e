//! No two source files of a crate need each other, directly or through others: each file's
//! references (`use` lines, `crate::…` and `super::…` paths, a child module's `child::…`)
//! are read as edges to the files that define what they name, a `pub use` followed to the
//! file behind it, and a test fails on any circle. A child's use of its parents (`super::`
//! types shared by siblings) is no edge: a module and the files below it are one piece.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path inside its crate (`["compare", "stats"]`); the crate's root is empty.
type ModulePath = Vec<String>;

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every source file below `dir`, by its module path, with its text.
fn modules(dir: &Path, base: &Path, into: &mut BTreeMap<ModulePath, String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            modules(&path, base, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(base).unwrap().with_extension("");
            let mut module: ModulePath = (relative.components())
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                module.pop();
            }
            into.insert(module, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// `text` without its line comments and without its tests' module.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    (text.lines())
        .map(|line| line.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths one `use` tree stands for: `a::{b, c::{d}}` is `a::b` and `a::c::d`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap().trim().to_string()];
    };
    let (prefix, inner) = (&tree[..open], &tree[open + 1..tree.rfind('}').unwrap()]);
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    (parts.iter().filter(|p| !p.trim().is_empty()))
        .flat_map(|p| expand(p).into_iter().map(|e| format!("{prefix}{e}")))
        .collect()
}

/// One crate's files and what each re-exports (`pub use`): a name to the path behind it.
struct Crate {
    modules: BTreeMap<ModulePath, String>,
    reexports: BTreeMap<ModulePath, BTreeMap<String, Vec<String>>>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        self::modules(src, src, &mut modules);
        let pub_use = Regex::new(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]*);").unwrap();
        let reexports = (modules.iter())
            .map(|(module, text)| {
                let code = code_of(text);
                let names = (pub_use.captures_iter(&code))
                    .flat_map(|c| expand(&c[1].replace('\n', " ")))
                    .map(|path| {
                        let name = path.rsplit([':', ' ']).next().unwrap().to_string();
                        let segments = path.split(" as ").next().unwrap();
                        (
                            name,
                            segments.split("::").map(|s| s.trim().to_string()).collect(),
                        )
                    })
                    .collect();
                (module.clone(), names)
            })
            .collect();
        Crate { modules, reexports }
    }

    /// The file that `segments` name, read from module `from`: the longest prefix that is a
    /// module, or, where the next segment is an item a module re-exports, the file behind it.
    fn resolve(&self, from: &ModulePath, segments: &[String], depth: usize) -> ModulePath {
        let mut at = from.clone();
        let mut segments = segments;
        match segments.first().map(String::as_str) {
            Some("crate") => (at, segments) = (Vec::new(), &segments[1..]),
            Some("self") => segments = &segments[1..],
            _ => {}
        }
        while segments.first().is_some_and(|s| s == "super") {
            at.pop();
            segments = &segments[1..];
        }
        for segment in segments {
            let mut next = at.clone();
            next.push(segment.clone());
            if self.modules.contains_key(&next) {
                at = next;
                continue;
            }
            let behind = self.reexports.get(&at).and_then(|names| names.get(segment));
            if let Some(path) = behind.filter(|_| depth < 5) {
                return self.resolve(&at, path, depth + 1);
            }
            break;
        }
        at
    }

    /// Each file's edges to the files it refers to, its ancestors left out.
    fn edges(&self) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
        let uses = Regex::new(r"\buse\s+((?:crate|super|self)\b[^;]*);").unwrap();
        let paths = Regex::new(r"\b(?:crate|super)(?:::\w+)+").unwrap();
        let child = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;").unwrap();
        let mut edges = BTreeMap::new();
        for (module, text) in &self.modules {
            let code = code_of(text);
            let mut referred: Vec<String> = (uses.captures_iter(&code))
                .flat_map(|c| expand(&c[1].replace('\n', " ")))
                .chain(paths.find_iter(&code).map(|m| m.as_str().to_string()))
                .collect();
            let body = child.replace_all(&code, "");
            for name in child.captures_iter(&code).map(|c| c[1].to_string()) {
                let used = Regex::new(&format!(r"(?:^|[^\w:]){name}::")).unwrap();
                if used.is_match(&body) {
                    referred.push(format!("self::{name}"));
                }
            }
            let targets: BTreeSet<ModulePath> = (referred.iter())
                .map(|path| {
                    let segments: Vec<String> = (path.split("::"))
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                    self.resolve(module, &segments, 0)
                })
                .filter(|target| !module.starts_with(target))
                .collect();
            edges.insert(module.clone(), targets);
        }
        edges
    }
}

/// The circles of `edges`: its strongly connected components of two files or more.
fn circles(edges: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Vec<Vec<ModulePath>> {
    // Two passes of Kosaraju's: the finishing order, then the components on the reverse.
    fn finish<'a>(
        node: &'a ModulePath,
        edges: &'a BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        seen: &mut BTreeSet<&'a ModulePath>,
        order: &mut Vec<&'a ModulePath>,
    ) {
        if seen.insert(node) {
            for next in edges.get(node).into_iter().flatten() {
                finish(next, edges, seen, order);
            }
            order.push(node);
        }
    }
    let (mut seen, mut order) = (BTreeSet::new(), Vec::new());
    for node in edges.keys() {
        finish(node, edges, &mut seen, &mut order);
    }
    let mut reverse: BTreeMap<&ModulePath, Vec<&ModulePath>> = BTreeMap::new();
    for (from, tos) in edges {
        for to in tos {
            reverse.entry(to).or_default().push(from);
        }
    }
    let (mut placed, mut found) = (BTreeSet::new(), Vec::new());
    for start in order.into_iter().rev() {
        let mut component = Vec::new();
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            if placed.insert(node) {
                component.push(node.clone());
                stack.extend(reverse.get(node).into_iter().flatten());
            }
        }
        if component.len() > 1 {
            found.push(component);
        }
    }
    found
}

#[test]
fn no_two_source_files_need_each_other() {
    let mut sources = vec![root().join("src")];
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        sources.push(entry.path().join("src"));
    }
    let mut all = Vec::new();
    for src in sources.iter().filter(|src| src.is_dir()) {
        for circle in circles(&Crate::read(src).edges()) {
            let files: Vec<String> = circle.iter().map(|m| m.join("/")).collect();
            all.push(format!("{}: {}", src.display(), files.join(" ↔ ")));
        }
    }
    assert!(all.is_empty(), "import circles:\n{}", all.join("\n"));
}

/// The reader finds a circle through a re-export and a child's module, and none where a
/// child only uses its parent.
#[test]
fn a_circle_is_found_through_reexports_and_children() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::Thing;\n");
    write("a.rs", "pub struct Thing;\nfn f() { crate::c::g(); }\n");
    write("c/mod.rs", "mod inner;\npub fn g() { inner::h(); }\n");
    write("c/inner.rs", "use crate::Thing;\npub fn h() {}\n");
    write("b.rs", "use super::a::Thing;\n");
    let found = circles(&Crate::read(dir.path()).edges());
    let names: Vec<Vec<String>> = (found.iter())
        .map(|c| c.iter().map(|m| m.join("/")).collect::<BTreeSet<_>>())
        .map(|c| c.into_iter().collect())
        .collect();
    assert_eq!(names, [["a", "c", "c/inner"]]);
    write("c/inner.rs", "use super::g;\npub fn h() {}\n");
    assert!(circles(&Crate::read(dir.path()).edges()).is_empty());
}
