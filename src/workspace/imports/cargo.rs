//! Cargo's layout: the targets of every package in a tree (libraries, main binaries,
//! integration tests) from its `Cargo.toml` files, the module each source file is in its
//! target, and what a path written in a module may name.

use std::collections::BTreeMap;

/// One target whose tests nextest runs: a library, the main binary, or an integration test.
pub(super) struct Target {
    /// nextest's binary id: `pkg`, `pkg::bin/pkg`, `pkg::name`.
    pub(super) binary: String,
    /// The root file.
    pub(super) root: String,
    /// Where the root's module files are (`src/`, `tests/it/`); `None` when it has none here.
    pub(super) dir: Option<String>,
    /// A library's name in paths (`my_crate`).
    pub(super) ident: Option<String>,
    /// An integration test.
    pub(super) test: bool,
}

/// The targets of every package in the tree.
pub(super) struct Layout {
    pub(super) targets: Vec<Target>,
}

impl Layout {
    /// From each `Cargo.toml` with a `[package]`: its library, its `src/main.rs`, its
    /// `[[test]]` entries and the tests Cargo finds itself (`tests/x.rs`, `tests/x/main.rs`).
    pub(super) fn read(files: &BTreeMap<&str, &str>) -> Layout {
        let mut targets = Vec::new();
        for (path, text) in files {
            let Some(dir) = path.strip_suffix("Cargo.toml") else {
                continue;
            };
            if !(dir.is_empty() || dir.ends_with('/')) {
                continue;
            }
            let Ok(manifest) = toml::from_str::<toml::Table>(text) else {
                continue;
            };
            let str_at = |table: &str, key: &str| {
                manifest
                    .get(table)
                    .and_then(|t| t.get(key))
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            let Some(name) = str_at("package", "name") else {
                continue;
            };
            let lib = str_at("lib", "path")
                .map(|p| format!("{dir}{p}"))
                .unwrap_or_else(|| format!("{dir}src/lib.rs"));
            let has_lib = files.contains_key(lib.as_str());
            if has_lib {
                targets.push(Target {
                    binary: name.clone(),
                    dir: Some(parent(&lib)),
                    root: lib,
                    ident: Some(str_at("lib", "name").unwrap_or_else(|| name.replace('-', "_"))),
                    test: false,
                });
            }
            let main = format!("{dir}src/main.rs");
            if files.contains_key(main.as_str()) {
                targets.push(Target {
                    binary: format!("{name}::bin/{name}"),
                    // Beside a library, the files under `src/` are the library's.
                    dir: (!has_lib).then(|| format!("{dir}src/")),
                    root: main,
                    ident: None,
                    test: false,
                });
            }
            let listed = manifest.get("test").and_then(|t| t.as_array());
            for entry in listed.into_iter().flatten() {
                let field = |k: &str| entry.get(k).and_then(|v| v.as_str());
                if let (Some(test), Some(root)) = (field("name"), field("path")) {
                    targets.push(Target::test(format!("{name}::{test}"), dir, root));
                }
            }
            let tests = format!("{dir}tests/");
            for path in files.keys() {
                let Some(rest) = path.strip_prefix(tests.as_str()) else {
                    continue;
                };
                let test = match rest.split_once('/') {
                    None => rest.strip_suffix(".rs"),
                    Some((sub, "main.rs")) => Some(sub),
                    Some(_) => None,
                };
                if let Some(test) = test
                    && !targets.iter().any(|t| t.root == *path)
                {
                    targets.push(Target::test(
                        format!("{name}::{test}"),
                        dir,
                        &path[dir.len()..],
                    ));
                }
            }
        }
        Layout { targets }
    }

    /// The target a file belongs to and the module it is there (`[]` for a root).
    pub(super) fn module_of(&self, path: &str) -> Option<(usize, Vec<String>)> {
        if let Some(t) = self.targets.iter().position(|t| t.root == path) {
            return Some((t, Vec::new()));
        }
        let (t, dir) = self
            .targets
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((i, t.dir.as_deref()?)))
            .filter(|(_, dir)| path.starts_with(dir))
            .max_by_key(|(_, dir)| dir.len())?;
        let rel = path[dir.len()..].strip_suffix(".rs")?;
        let rel = rel.strip_suffix("/mod").unwrap_or(rel);
        // `src/bin/*.rs` are binaries of their own, not modules of the library.
        if rel.starts_with("bin/") || self.targets.iter().any(|o| o.root == path) {
            return None;
        }
        Some((t, rel.split('/').map(str::to_string).collect()))
    }

    /// What a path written in module `here` of `target` may name: (target, module path)
    /// pairs. `super::` in an inline module means the file's own module, at its top the
    /// parent: both are kept, so a dependent is found rather than missed.
    pub(super) fn resolve(
        &self,
        path: &[String],
        here: &[String],
        target: usize,
    ) -> Vec<(usize, Vec<String>)> {
        let Some(first) = path.first() else {
            return Vec::new();
        };
        let joined = |base: &[String], rest: &[String]| -> Vec<String> {
            base.iter().chain(rest).cloned().collect()
        };
        match first.as_str() {
            "crate" => vec![(target, path[1..].to_vec())],
            "self" => vec![(target, joined(here, &path[1..]))],
            "super" => {
                let up = path.iter().take_while(|s| *s == "super").count();
                let rest = &path[up..];
                [up, up - 1]
                    .into_iter()
                    .filter(|u| *u <= here.len())
                    .map(|u| (target, joined(&here[..here.len() - u], rest)))
                    .collect()
            }
            _ => {
                let mut out = vec![(target, joined(here, path))];
                for (t, lib) in self.targets.iter().enumerate() {
                    if lib.ident.as_deref() == Some(first.as_str()) {
                        out.push((t, path[1..].to_vec()));
                    }
                }
                out
            }
        }
    }
}

impl Target {
    fn test(binary: String, dir: &str, root: &str) -> Target {
        let root = format!("{dir}{root}");
        Target {
            binary,
            dir: root.ends_with("/main.rs").then(|| parent(&root)),
            root,
            ident: None,
            test: true,
        }
    }
}

/// `a/b/c.rs` → `a/b/`; `c.rs` → ``.
fn parent(path: &str) -> String {
    path.rfind('/')
        .map_or(String::new(), |at| path[..=at].to_string())
}
