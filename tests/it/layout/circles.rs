//! No circles between files of a stage: the files a stage's files name (through `use`, paths
//! and re-exports) form no cycle, so each file can be read knowing only those it names.
//!
//! A folder's `mod.rs` and the files in it are one unit (the children name the parent's
//! types, the parent names the children it declares), so an edge between a module and one of
//! its own descendants is not counted; a circle between siblings, or cousins, is.

use super::{files, without_strings};
use crate::setup::root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path (`["workspace", "apply"]`), the crate root being `[]`.
type Module = Vec<String>;

/// The module a source file defines: `a/b.rs` and `a/b/mod.rs` are both `a::b`; `lib.rs` and
/// `main.rs` are the root.
fn module_of(rel: &Path) -> Module {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of a file without its string literals and without its inline test module (whose
/// `super` is the file itself).
fn code(text: &str) -> String {
    let text = without_strings(text);
    let lines: Vec<&str> = text.lines().collect();
    let cut = lines.windows(2).position(|w| {
        w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod ") && w[1].contains('{')
    });
    lines[..cut.unwrap_or(lines.len())].join("\n")
}

/// The tokens of a `use` tree: names, `::`, braces, commas, `*`.
fn tokens(tree: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = tree.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        match c {
            ':' if chars.peek() == Some(&':') => {
                chars.next();
                out.push("::".into());
            }
            '{' | '}' | ',' | '*' => out.push(c.to_string()),
            _ => {}
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Every path a `use` tree names, with the name it binds (`a::{b, c::d as e}` →
/// `(a::b, b)`, `(a::c::d, e)`; `a::{self}` binds `a`).
fn expand(toks: &[String], i: &mut usize, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let mut path = prefix.to_vec();
    while *i < toks.len() {
        let t = toks[*i].as_str();
        *i += 1;
        match t {
            "::" => {}
            "{" => loop {
                expand(toks, i, &path, out);
                match toks.get(*i).map(String::as_str) {
                    Some(",") => *i += 1,
                    Some("}") => {
                        *i += 1;
                        return;
                    }
                    _ => return,
                }
                if toks.get(*i).map(String::as_str) == Some("}") {
                    *i += 1;
                    return;
                }
            },
            "*" => {
                out.push((path, "*".into()));
                return;
            }
            "self" if !path.is_empty() => {
                let name = path.last().cloned().unwrap_or_default();
                out.push((path, name));
                return;
            }
            "as" => {
                let alias = toks.get(*i).cloned().unwrap_or_default();
                *i += 1;
                if let Some(last) = out.last_mut() {
                    last.1 = alias;
                }
                return;
            }
            "," | "}" => {
                *i -= 1;
                if path.len() > prefix.len() {
                    let name = path.last().cloned().unwrap_or_default();
                    out.push((path, name));
                }
                return;
            }
            name => {
                path.push(name.to_string());
                let next = toks.get(*i).map(String::as_str);
                if next != Some("::") {
                    let bound = if next == Some("as") {
                        *i += 1;
                        let alias = toks.get(*i).cloned().unwrap_or_default();
                        *i += 1;
                        alias
                    } else {
                        name.to_string()
                    };
                    out.push((path, bound));
                    return;
                }
            }
        }
    }
}

/// A file's `use` statements: each path, the name it binds, and whether it is a re-export
/// (`pub use`, `pub(crate) use`, …).
fn uses(code: &str) -> Vec<(Vec<String>, String, bool)> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        let before = rest[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let body = &rest[at + 3..];
        let end = body.find(';').unwrap_or(body.len());
        let toks = tokens(&body[..end]);
        let mut paths = Vec::new();
        let mut i = 0;
        expand(&toks, &mut i, &[], &mut paths);
        found.extend(paths.into_iter().map(|(p, n)| (p, n, public)));
        rest = &body[end..];
    }
    found
}

/// Where `word` next stands alone in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The paths a file names in its code outside `use` statements: `crate::…`, `super::…`,
/// `self::…`, and `child::…` for the modules it declares.
fn inline_paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for line in code.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("use ")
            || trimmed.starts_with("pub use ")
            || trimmed.starts_with("pub(")
        {
            continue;
        }
        let mut i = 0;
        while i < line.len() {
            let rest = &line[i..];
            let starts = i == 0 || !line[..i].chars().next_back().is_some_and(ident);
            let word: String = rest.chars().take_while(|c| ident(*c)).collect();
            if word.is_empty() {
                i += rest.chars().next().map_or(1, char::len_utf8);
                continue;
            }
            let head =
                word == "crate" || word == "super" || word == "self" || children.contains(&word);
            if starts && head && rest[word.len()..].starts_with("::") {
                let path: Vec<String> = rest
                    .split("::")
                    .map(|s| s.chars().take_while(|c| ident(*c)).collect::<String>())
                    .take_while(|s| !s.is_empty())
                    .collect();
                i += path
                    .iter()
                    .map(|s| s.len() + 2)
                    .sum::<usize>()
                    .max(word.len());
                found.push(path);
            } else {
                i += word.len();
            }
        }
    }
    found
}

struct Crate {
    /// Each module's file.
    files: BTreeMap<Module, PathBuf>,
    /// Each module's re-exports: the name, and the path it stands for (from that module).
    exports: BTreeMap<Module, Vec<(String, Vec<String>)>>,
}

impl Crate {
    /// The module `path` (as written in module `from`) names, if it is this crate's.
    fn resolve(&self, from: &Module, path: &[String], depth: usize) -> Option<Module> {
        let (mut cur, mut rest) = match path.first()?.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (from.clone(), &path[1..]),
            "super" => {
                let mut cur = from.clone();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    cur.pop();
                    rest = &rest[1..];
                }
                (cur, rest)
            }
            first => {
                let child: Module = from.iter().cloned().chain([first.to_string()]).collect();
                if !self.files.contains_key(&child) {
                    return None;
                }
                (from.clone(), path)
            }
        };
        while let Some(seg) = rest.first() {
            let next: Module = cur.iter().cloned().chain([seg.clone()]).collect();
            if !self.files.contains_key(&next) {
                break;
            }
            cur = next;
            rest = &rest[1..];
        }
        // An item the module re-exports is where it comes from.
        if let (Some(item), true) = (rest.first(), depth < 8) {
            let export = self
                .exports
                .get(&cur)
                .and_then(|e| e.iter().find(|(name, _)| name == item));
            if let Some((_, target)) = export
                && let Some(found) = self.resolve(&cur, target, depth + 1)
            {
                return Some(found);
            }
        }
        Some(cur)
    }
}

/// Strongly connected components of more than one file (Tarjan's algorithm).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on: BTreeSet<Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit(s: &mut State, v: &Module) {
        let n = s.index.len();
        s.index.insert(v.clone(), n);
        s.low.insert(v.clone(), n);
        s.stack.push(v.clone());
        s.on.insert(v.clone());
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v.clone(), low);
            } else if s.on.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(&w);
                let done = &w == v;
                component.push(w);
                if done {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Which files each file names, outside its own module's family.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut all = Vec::new();
    files(src, &mut all);
    let mut krate = Crate {
        files: BTreeMap::new(),
        exports: BTreeMap::new(),
    };
    let mut codes = BTreeMap::new();
    for path in &all {
        let module = module_of(path.strip_prefix(src).expect("under src"));
        let code = code(&std::fs::read_to_string(path).expect("read"));
        krate.files.insert(module.clone(), path.clone());
        codes.insert(module, code);
    }
    for (module, code) in &codes {
        let exports = uses(code)
            .into_iter()
            .filter(|(_, name, public)| *public && name != "*")
            .map(|(path, name, _)| (name, path))
            .collect();
        krate.exports.insert(module.clone(), exports);
    }
    let family = |a: &Module, b: &Module| a.starts_with(b) || b.starts_with(a);
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, code) in &codes {
        let children: BTreeSet<String> = krate
            .files
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .filter_map(|m| m.last().cloned())
            .collect();
        let named = uses(code)
            .into_iter()
            .map(|(path, _, _)| path)
            .chain(inline_paths(code, &children));
        let targets = edges.entry(module.clone()).or_default();
        for path in named {
            if let Some(to) = krate.resolve(module, &path, 0)
                && !family(module, &to)
                && to.first() == module.first()
            {
                targets.insert(to);
            }
        }
    }
    edges
}

#[test]
fn no_file_circles_inside_a_stage() {
    let g = graph(&root().join("src"));
    // Each circle with the edges that close it, so the fix is plain from the message.
    let found: Vec<Vec<String>> = circles(&g)
        .iter()
        .map(|c| {
            c.iter()
                .flat_map(|a| {
                    g.get(a)
                        .into_iter()
                        .flatten()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("{} → {}", a.join("::"), b.join("::")))
                })
                .collect()
        })
        .collect();
    assert!(
        found.is_empty(),
        "files that name each other in a circle: {found:#?}"
    );
}

#[test]
fn use_trees_expand_to_every_path_they_name() {
    let found = uses(
        "use super::hunk::{self, Hunk, Line as L};\npub use crate::a::{b::C, d};\nuse std::x;\n",
    );
    let show: Vec<String> = found
        .iter()
        .map(|(p, n, public)| format!("{}={n}{}", p.join("::"), if *public { "!" } else { "" }))
        .collect();
    assert_eq!(
        show,
        [
            "super::hunk=hunk",
            "super::hunk::Hunk=Hunk",
            "super::hunk::Line=L",
            "crate::a::b::C=C!",
            "crate::a::d=d!",
            "std::x=x"
        ]
    );
}

#[test]
fn a_circle_through_a_re_export_is_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("lib.rs", "mod s;\n");
    write("s/mod.rs", "mod a;\nmod b;\nmod c;\npub use b::Thing;\n");
    write("s/a.rs", "use super::Thing;\n");
    write("s/b.rs", "fn f() { crate::s::c::g(); }\n");
    write(
        "s/c.rs",
        "fn g() { super::a::h(); }\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    let found = circles(&graph(dir.path()));
    let names: Vec<Vec<String>> = found
        .iter()
        .map(|c| c.iter().map(|m| m.join("::")).collect())
        .collect();
    assert_eq!(names, [["s::a", "s::b", "s::c"]]);
}
