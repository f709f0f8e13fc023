//! The documents people read hold together: every link in the README and the guide leads to a
//! file (and a heading) that exists, every chapter is in the guide's table of contents, and
//! every flag `--help` lists is documented in the guide.

use crate::setup::{BIN, root};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Markdown files people read: the README, `docs/`, the guide's chapters.
fn documents() -> Vec<PathBuf> {
    let mut all = vec![root().join("README.md")];
    for dir in ["docs", "docs/guide/src"] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect("docs")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        here.sort();
        all.extend(here);
    }
    all
}

/// The text outside fenced code blocks and inline code, where links and headings are.
fn prose(text: &str) -> Vec<String> {
    let mut fence = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            out.push(String::new());
            continue;
        }
        if fence {
            out.push(String::new());
        } else {
            let mut kept = String::new();
            for (i, part) in line.split('`').enumerate() {
                if i % 2 == 0 {
                    kept.push_str(part);
                } else {
                    kept.push_str(&" ".repeat(part.len()));
                }
            }
            out.push(kept);
        }
    }
    out
}

/// A heading's anchor as GitHub and mdBook make it: lower case, spaces to `-`, and only
/// letters, digits, `-` and `_` kept.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (code spans in them count, as both renderers do).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fence = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        } else if !fence && let Some(h) = line.strip_prefix('#') {
            found.insert(slug(h.trim_start_matches('#')));
        }
    }
    found
}

/// Every `[label](target)` link of a text: (line, target).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in prose(text).iter().enumerate() {
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            found.push((n + 1, after[..end].trim().to_string()));
            rest = &after[end..];
        }
    }
    found
}

fn broken_links(doc: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(doc).expect("read");
    let dir = doc.parent().expect("dir");
    let mut broken = Vec::new();
    let includes = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("{{#include ")?.strip_suffix("}}"))
        .map(|t| (0, t.trim().to_string()));
    for (line, target) in links(&text).into_iter().chain(includes) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
        let file = if path.is_empty() {
            doc.to_path_buf()
        } else {
            dir.join(path)
        };
        let at = format!("{}:{line}: {target}", doc.display());
        if !file.exists() {
            broken.push(format!("{at}: no such file"));
        } else if !anchor.is_empty() && file.extension().is_some_and(|x| x == "md") {
            let target_text = std::fs::read_to_string(&file).expect("read");
            if !anchors(&target_text).contains(anchor) {
                broken.push(format!("{at}: no such heading"));
            }
        }
    }
    broken
}

#[test]
fn every_link_in_the_docs_leads_somewhere() {
    let broken: Vec<String> = documents().iter().flat_map(|d| broken_links(d)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_chapter_is_in_the_guide_s_contents() {
    let src = root().join("docs/guide/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("SUMMARY.md");
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    for doc in documents() {
        if doc.parent() == Some(src.as_path()) {
            let name = doc
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            assert!(
                name == "SUMMARY.md" || listed.contains(&name),
                "{name} is not in SUMMARY.md"
            );
        }
    }
}

/// The subcommands `patchgrade --help` lists.
fn subcommands() -> Vec<String> {
    let out = Command::new(BIN)
        .arg("--help")
        .output()
        .expect("run patchgrade");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// The long flags a help text lists.
fn flags(help: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in help.lines() {
        let line = line.trim_start();
        let line = line
            .strip_prefix('-')
            .filter(|_| !line.starts_with("--"))
            .map_or(line, |l| {
                // `-q, --quiet`: the long form after the short one.
                l.split_once(", ").map_or(l, |(_, long)| long)
            });
        if let Some(flag) = line.strip_prefix("--") {
            let name: String = flag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !name.is_empty() && name != "help" && name != "version" {
                found.insert(format!("--{name}"));
            }
        }
    }
    found
}

#[test]
fn every_flag_of_every_command_is_documented_in_the_guide() {
    let mut guide = String::new();
    for doc in documents() {
        if doc.starts_with(root().join("docs/guide")) {
            guide.push_str(&std::fs::read_to_string(&doc).expect("read"));
        }
    }
    let documented = |flag: &str| {
        guide.match_indices(flag).any(|(i, _)| {
            let next = guide[i + flag.len()..].chars().next();
            !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    };
    let commands = subcommands();
    assert!(commands.len() > 10, "{commands:?}");
    let mut missing = Vec::new();
    for command in std::iter::once(None).chain(commands.iter().map(Some)) {
        let mut args: Vec<&str> = command.iter().map(|c| c.as_str()).collect();
        args.push("--help");
        let out = Command::new(BIN)
            .args(&args)
            .output()
            .expect("run patchgrade");
        for flag in flags(&String::from_utf8_lossy(&out.stdout)) {
            if !documented(&flag) {
                missing.push(format!("{} {flag}", command.map_or("patchgrade", |c| c)));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "flags the guide does not document: {missing:#?}"
    );
}

#[test]
fn the_readme_is_read_in_five_minutes() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "the README has {lines} lines; move detail into the guide"
    );
}

#[test]
fn anchors_and_links_are_read_as_the_renderers_make_them() {
    assert_eq!(
        slug(" Sandboxes (`--sandbox`, `--image`, `--network`)"),
        "sandboxes---sandbox---image---network"
    );
    let text = "a [x](b.md#c) `[not](a link)`\n```\n[no](link)\n```\n[y](#d)";
    assert_eq!(
        links(text),
        [(1, "b.md#c".to_string()), (5, "#d".to_string())]
    );
}
