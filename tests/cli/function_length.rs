//! No function of the workspace, tests included, runs over [`MAX_LINES`] lines from its
//! `fn` to its closing brace, blank and comment lines counted: a longer one is split by
//! stage. (Clippy's `too_many_lines` counts code lines only, and leaves tests alone.)

use std::path::{Path, PathBuf};

/// The most lines a function may take.
const MAX_LINES: usize = 80;

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files below `dir`, the test fixtures' and peers' included.
fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name != "target" && !name.to_string_lossy().starts_with('.') {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// Where the raw string (`r"…"`, `r#"…"#`) that starts at byte `at` of `text` ends, one
/// past its closing quote and hashes; `None` where no raw string starts there.
fn raw_string_end(text: &[u8], at: usize) -> Option<usize> {
    let before = text[at - 1];
    if before.is_ascii_alphanumeric() || before == b'_' {
        return None;
    }
    let hashes = text[at + 1..].iter().take_while(|&&b| b == b'#').count();
    let body = at + 2 + hashes;
    (text.get(body - 1) == Some(&b'"')).then_some(())?;
    let close: Vec<u8> = std::iter::once(b'"').chain(vec![b'#'; hashes]).collect();
    let end = text[body..].windows(close.len()).position(|w| w == close)?;
    Some(body + end + close.len())
}

/// Where the item that starts at byte `open` (a `{`) of `text` ends: its matching `}`,
/// strings, characters and comments passed over.
fn matching_brace(text: &[u8], open: usize) -> usize {
    let (mut at, mut depth) = (open, 0usize);
    while at < text.len() {
        match text[at] {
            b'/' if text.get(at + 1) == Some(&b'/') => {
                at += text[at..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .unwrap_or(text.len() - at);
                continue;
            }
            b'/' if text.get(at + 1) == Some(&b'*') => {
                at += 2 + text[at + 2..].windows(2).position(|w| w == b"*/").unwrap() + 2;
                continue;
            }
            b'r' if raw_string_end(text, at).is_some() => {
                at = raw_string_end(text, at).unwrap();
                continue;
            }
            b'"' => {
                at += 1;
                while text[at] != b'"' {
                    at += if text[at] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' => {
                // A character ('x', '\n', '\u{..}'), or a lifetime, which is passed as is.
                let end = text[at + 1..].iter().take(12).position(|&b| b == b'\'');
                if let Some(end) = end.filter(|&e| e == 1 || text[at + 1] == b'\\') {
                    at += end + 1;
                }
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
        at += 1;
    }
    panic!("no closing brace")
}

/// The functions of `text` over [`MAX_LINES`] lines: their first line and length.
fn long_functions(text: &str) -> Vec<(usize, usize, String)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let item = line.trim_start();
        let item = item.strip_prefix("pub").map_or(item, |rest| {
            rest.trim_start_matches(|c: char| c != ' ' && c != '\t')
                .trim_start()
        });
        let item = ["const ", "async ", "unsafe ", "extern \"C\" "]
            .iter()
            .fold(item, |item, word| item.strip_prefix(word).unwrap_or(item));
        let Some(rest) = item.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body's brace: the first `{` after the signature, unless a `;` ends it first.
        let (mut at, mut depth) = (start + line.find("fn ").unwrap(), 0i32);
        while at < bytes.len() {
            match bytes[at] {
                b'(' | b'[' | b'<' => depth += 1,
                b')' | b']' | b'>' if bytes[at - 1] != b'-' => depth -= 1,
                b'{' if depth <= 0 => break,
                b';' if depth <= 0 => at = bytes.len(),
                _ => {}
            }
            at += 1;
        }
        if at >= bytes.len() {
            continue;
        }
        let end = matching_brace(bytes, at);
        let first = text[..start].matches('\n').count() + 1;
        let lines = text[start..=end].matches('\n').count() + 1;
        if lines > MAX_LINES {
            found.push((first, lines, name));
        }
    }
    found
}

#[test]
fn no_function_runs_over_eighty_lines() {
    let mut files = Vec::new();
    for dir in ["src", "crates", "tests", "benches"] {
        rust_files(&root().join(dir), &mut files);
    }
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, lines, name) in long_functions(&text) {
            let file = file.strip_prefix(root()).unwrap().display().to_string();
            long.push(format!("{file}:{line} {name}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// The reader counts every line of a function, passes over braces in strings, characters
/// and comments, and takes no declaration without a body for a function.
#[test]
fn a_long_function_is_found_whatever_its_braces_in_text() {
    let body = "    let x = 1;\n\n    // }\n".repeat(30);
    let text = format!(
        "fn declared(x: u8) -> Vec<u8>;\n\
         pub(crate) fn long<'a>(a: &'a str) -> Result<(), ()> {{\n{body}    let c = '}}';\n    \
         let s = \"}}\";\n    let r = r#\"}}\"#;\n    Ok(())\n}}\n\
         fn short() {{\n    /* }} */\n}}\n"
    );
    let found = long_functions(&text);
    assert_eq!(found, [(2, 96, "long".to_string())]);
}
