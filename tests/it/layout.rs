//! The crate's layering, read from its own source: each stage imports only from the stages
//! below it (the order `src/lib.rs` documents), so a newcomer can follow the data path and
//! no import cycle can form between stages.

use crate::setup::root;
use std::path::Path;

/// The stages, lowest first.
const STAGES: [&str; 10] = [
    "util",
    "observe",
    "workspace",
    "run",
    "judge",
    "report",
    "task",
    "check",
    "harness",
    "mcp",
];

fn rank(stage: &str) -> Option<usize> {
    STAGES.iter().position(|s| *s == stage)
}

/// Every `crate::<module>` a file names, with its line (`crate::Verdict`, a re-export at the
/// root in a doc link, and `my_crate::x` in a test's text are not modules).
fn imports(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
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
fn the_readme_lists_every_stage() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    for stage in STAGES {
        assert!(
            readme.contains(&format!("`{stage}/`")) || readme.contains(&format!("`{stage}`")),
            "the README's module list lacks `{stage}`"
        );
    }
}
