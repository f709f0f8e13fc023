//! The crate's layering, read from its own source: each stage imports only from the stages
//! below it (the order `src/lib.rs` documents), so a newcomer can follow the data path and
//! no import cycle can form between stages.

mod circles;

use crate::setup::root;
use std::path::Path;

/// The stages, lowest first.
const STAGES: [&str; 10] = [
    "util",
    "observe",
    "workspace",
    "run",
    "judge",
    "task",
    "check",
    "harness",
    "report",
    "mcp",
];

fn rank(stage: &str) -> Option<usize> {
    STAGES.iter().position(|s| *s == stage)
}

/// Every `crate::<module>` a file names, with its line (`crate::Verdict`, a re-export at the
/// root in a doc link, and `my_crate::x` or any path in a string literal, such as a test's
/// Rust source, are not modules).
fn imports(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in without_strings(text).lines().enumerate() {
        for (i, _) in line.match_indices("crate::") {
            let before = line[..i].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let stage: String = line[i + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if stage.starts_with(|c: char| c.is_ascii_lowercase()) {
                found.push((n + 1, stage));
            }
        }
    }
    found
}

/// The text with the contents of its string literals (`"…"`, `r#"…"#`) blanked, lines kept;
/// comments stay (a doc link names a module too), and character literals (`'"'`) are skipped
/// so that their quote opens nothing.
fn without_strings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let blank = |bytes: &[u8], out: &mut String| {
        out.extend(bytes.iter().map(|c| if *c == b'\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|c| *c == b'\n').unwrap_or(rest.len());
            out.push_str(&text[i..i + end]);
            i += end;
        } else if rest.starts_with(b"r\"") || rest.starts_with(b"r#") {
            let hashes = rest[1..].iter().take_while(|c| **c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"').chain(vec![b'#'; hashes]).collect();
            let body = 2 + hashes;
            let end = rest[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |p| body + p + close.len());
            blank(&rest[..end], &mut out);
            i += end;
        } else if rest[0] == b'"' {
            let mut end = 1;
            while end < rest.len() && rest[end] != b'"' {
                end += if rest[end] == b'\\' { 2 } else { 1 };
            }
            let end = (end + 1).min(rest.len());
            blank(&rest[..end], &mut out);
            i += end;
        } else if rest.starts_with(b"'\"'") || rest.starts_with(b"'\\''") {
            let end = if rest[1] == b'"' { 3 } else { 4 };
            blank(&rest[..end], &mut out);
            i += end;
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_stage_imports_only_from_below() {
    let src = root().join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut upward = Vec::new();
    for path in all {
        let rel = path.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a component");
        let stage = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        // The crate root re-exports; the binary's `cli` uses the public API only.
        let Some(own) = rank(&stage) else { continue };
        let text = std::fs::read_to_string(&path).expect("read");
        for (line, to) in imports(&text) {
            match rank(&to) {
                Some(r) if r > own => upward.push(format!("{}:{line} → {to}", rel.display())),
                Some(_) => {}
                None => panic!("{}:{line}: `crate::{to}` is no stage", rel.display()),
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a higher stage: {upward:#?}"
    );
}

#[test]
fn the_binary_uses_only_the_public_api() {
    let mut all = Vec::new();
    files(&root().join("src/cli"), &mut all);
    all.push(root().join("src/main.rs"));
    for path in all {
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            !text.contains("patchgrade::internals"),
            "{} reaches into internals",
            path.display()
        );
    }
}

#[test]
fn the_guide_lists_every_stage() {
    let readme = std::fs::read_to_string(root().join("docs/guide/src/library.md")).expect("guide");
    for stage in STAGES {
        assert!(
            readme.contains(&format!("`{stage}/`")) || readme.contains(&format!("`{stage}`")),
            "the guide's module list lacks `{stage}`"
        );
    }
}

#[test]
fn imports_are_read_from_code_and_doc_links_not_from_strings() {
    let text = "use crate::run::x;\n/// See [`y`](crate::judge::y).\nlet q = '\"'; let s = \"crate::task\n\
                crate::report\";\nlet r = r#\"crate::mcp \"quoted\"\"#;\nlet c = crate::check::z;\n";
    let found: Vec<(usize, String)> = imports(text);
    let names: Vec<(usize, &str)> = found.iter().map(|(n, s)| (*n, s.as_str())).collect();
    assert_eq!(names, [(1, "run"), (2, "judge"), (6, "check")]);
}

/// Each function of the crate, by file, name and length in lines: from its `fn` line to the
/// `}` at its indentation (rustfmt's layout), strings blanked so a test's Rust source in a
/// literal is not read as code.
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let code = without_strings(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let signature = trimmed
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("const ")
            .trim_start_matches("async ")
            .trim_start_matches("unsafe ");
        let Some(rest) = signature.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        let end = lines[i..]
            .iter()
            .position(|l| {
                l.trim_end() == close
                    || (l.trim_end().ends_with(';') && l.starts_with(indent) && l.contains("fn "))
            })
            .unwrap_or(0);
        found.push((name, end + 1));
    }
    found
}

#[test]
fn no_function_is_over_100_lines() {
    let mut all = Vec::new();
    files(&root().join("src"), &mut all);
    let mut long = Vec::new();
    for path in all {
        let text = std::fs::read_to_string(&path).expect("read");
        for (name, lines) in function_lengths(&text) {
            if lines > 100 {
                long.push(format!("{}: {name} ({lines} lines)", path.display()));
            }
        }
    }
    assert!(long.is_empty(), "functions over 100 lines: {long:#?}");
}

#[test]
fn function_lengths_are_read_from_code() {
    let text = "fn a() {\n    x();\n}\n\nimpl T {\n    pub async fn b(\n        &self,\n    ) {\n        \
                y();\n    }\n}\nconst S: &str = \"fn c() {\\n}\";\nfn d();\n";
    let found = function_lengths(text);
    assert_eq!(
        found,
        [
            ("a".to_string(), 3),
            ("b".to_string(), 5),
            ("d".to_string(), 1)
        ]
    );
}

/// A sandbox backend's knowledge stays in `run/sandbox/`: the pipeline asks the resolved
/// sandbox what it needs (its cache key, whether a run in it may be kept, whether its tools
/// are the host's) and never matches on which backend it is.
#[test]
fn the_pipeline_never_matches_on_a_sandbox_backend() {
    let mut all = Vec::new();
    files(&root().join("src/check"), &mut all);
    let mut found = Vec::new();
    for path in all {
        let text = without_strings(&std::fs::read_to_string(&path).expect("read"));
        for (n, line) in text.lines().enumerate() {
            for variant in ["Sandbox::None", "Sandbox::Bwrap", "Sandbox::Container"] {
                if line.contains(variant) {
                    found.push(format!("{}:{}: {variant}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "check/ matches on a backend: {found:#?}");
}
