//! Rust: the tests of the files that name a changed module. The crates come from the
//! workspace's `Cargo.toml` files, the module each source file is from where it sits
//! (`src/a/b.rs` is `a::b`), and a file names a module when one of its paths (`use` trees
//! expanded, `crate::`, `self::`, `super::`, a workspace library's name, or a path relative to
//! the file's own module) resolves into it. Tests are named as nextest names them:
//! `binary test::path`.

use super::cargo::{Layout, Target};
use super::lex::{Tok, tokens};
use std::collections::{BTreeMap, BTreeSet};

/// A test, or a module of tests, that reaches a changed module.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Dependent {
    /// One test, by its nextest id (`httparse simd::swar::test_is_uri_block`).
    Test(String),
    /// Every test whose nextest id starts with this: a module's tests (`httparse tests::`),
    /// or a whole binary (`mycrate::api `). Tests a macro writes are found only this way.
    Module(String),
}

/// The tests (first those of the changed files themselves, then the others by path) of the
/// Rust files, among `files` (path and source, with every `Cargo.toml`), that name one of the
/// modules `changed` are. A test file the patch changes is its own edit, not a dependent.
pub fn rust_dependents<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
    changed: &[String],
) -> Vec<Dependent> {
    let files: BTreeMap<&str, &str> = files.into_iter().collect();
    let layout = Layout::read(&files);
    let modules: Vec<Changed> = changed
        .iter()
        .filter_map(|path| {
            let (target, here) = layout.module_of(path)?;
            let children = facts(files.get(path.as_str())?).children;
            (!layout.targets[target].test).then_some(Changed {
                target,
                path: here,
                children,
            })
        })
        .collect();
    if modules.is_empty() {
        return Vec::new();
    }
    let (mut own, mut others) = (Vec::new(), Vec::new());
    for (path, source) in &files {
        // Every test attribute (`#[test]`, `#[cfg(test)]`, `#[tokio::test]`) says `test`.
        if !path.ends_with(".rs") || !source.contains("test") {
            continue;
        }
        let Some((target, here)) = layout.module_of(path) else {
            continue;
        };
        let is_changed = changed.iter().any(|c| c == path);
        if is_changed && layout.targets[target].test {
            continue;
        }
        let f = facts(source);
        if f.tests.is_empty() && f.test_modules.is_empty() {
            continue;
        }
        let names = || {
            f.paths.iter().any(|p| {
                layout
                    .resolve(p, &here, target)
                    .iter()
                    .any(|(t, r)| modules.iter().any(|m| m.named_by(*t, r)))
            })
        };
        if is_changed {
            own.extend(groups(&f, &layout.targets[target], &here));
        } else if names() {
            others.extend(groups(&f, &layout.targets[target], &here));
        }
    }
    let all: Vec<Dependent> = own.into_iter().chain(others).collect();
    let prefixes: Vec<String> = all
        .iter()
        .filter_map(|d| match d {
            Dependent::Module(p) => Some(p.clone()),
            Dependent::Test(_) => None,
        })
        .collect();
    let mut seen = BTreeSet::new();
    all.into_iter()
        .filter(|d| match d {
            // A test its module's prefix already selects is found once.
            Dependent::Test(id) => !prefixes.iter().any(|p| id.starts_with(p.as_str())),
            Dependent::Module(_) => true,
        })
        .filter(|d| seen.insert(d.clone()))
        .collect()
}

/// A module the patch changes.
struct Changed {
    target: usize,
    path: Vec<String>,
    /// Its modules in files of their own (`mod x;`): a path into one names that, not this.
    children: BTreeSet<String>,
}

impl Changed {
    /// Whether `path`, resolved in `target`, names this module or an item of it.
    fn named_by(&self, target: usize, path: &[String]) -> bool {
        target == self.target
            && path.starts_with(&self.path)
            && path
                .get(self.path.len())
                .is_none_or(|next| !self.children.contains(next))
    }
}

/// What a file holds that the search reads.
#[derive(Debug, Default, PartialEq)]
struct Facts {
    /// Every path it names, as written (`crate`, `self`, `super` kept), `use` trees expanded.
    paths: Vec<Vec<String>>,
    /// The modules it declares out of line (`mod x;`).
    children: BTreeSet<String>,
    /// Its tests: the inline modules each is in, and its name (`None` for a macro's `$name`).
    tests: Vec<(Vec<String>, Option<String>)>,
    /// Its inline modules marked `#[cfg(test)]`.
    test_modules: Vec<Vec<String>>,
}

/// Read a file's paths, modules and tests from its tokens.
fn facts(source: &str) -> Facts {
    let toks = tokens(source);
    let mut f = Facts::default();
    // Inline modules open here, each with the brace depth inside it.
    let mut scope: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let (mut test_attr, mut cfg_test) = (false, false);
    let mut opening: Option<String> = None;
    let names = |scope: &[(String, usize)]| -> Vec<String> {
        scope.iter().map(|(n, _)| n.clone()).collect()
    };
    let mut i = 0;
    while i < toks.len() {
        match toks[i] {
            Tok::Hash => {
                let at = i + 1 + usize::from(toks.get(i + 1) == Some(&Tok::Bang));
                if toks.get(at) == Some(&Tok::Open('[')) {
                    let end = closing(&toks, at);
                    match attribute(&toks[at + 1..end]) {
                        Attribute::Test => test_attr = true,
                        Attribute::CfgTest => cfg_test = true,
                        Attribute::Other => {}
                    }
                    i = end + 1;
                    continue;
                }
            }
            Tok::Ident("mod") => {
                if let Some(Tok::Ident(name)) = toks.get(i + 1) {
                    match toks.get(i + 2) {
                        Some(Tok::Semi) => {
                            f.children.insert(name.to_string());
                        }
                        Some(Tok::Open('{')) => {
                            if cfg_test {
                                let mut path = names(&scope);
                                path.push(name.to_string());
                                f.test_modules.push(path);
                            }
                            opening = Some(name.to_string());
                        }
                        _ => {}
                    }
                    (test_attr, cfg_test) = (false, false);
                    i += 2;
                    continue;
                }
            }
            Tok::Ident("fn") => {
                if test_attr {
                    let name = match toks.get(i + 1) {
                        Some(Tok::Ident(n)) => Some(n.to_string()),
                        _ => None,
                    };
                    f.tests.push((names(&scope), name));
                }
                (test_attr, cfg_test) = (false, false);
            }
            Tok::Ident("use") => {
                let end = toks[i..]
                    .iter()
                    .position(|t| *t == Tok::Semi)
                    .map_or(toks.len(), |p| i + p);
                use_tree(&toks[i + 1..end], &[], &mut f.paths);
                i = end;
                continue;
            }
            Tok::Ident(first)
                if toks.get(i + 1) == Some(&Tok::Sep) && (i == 0 || toks[i - 1] != Tok::Sep) =>
            {
                let (path, next) = path_at(&toks, i, first);
                f.paths.push(path);
                i = next;
                continue;
            }
            Tok::Open('{') => {
                depth += 1;
                if let Some(name) = opening.take() {
                    scope.push((name, depth));
                }
                (test_attr, cfg_test) = (false, false);
            }
            Tok::Close('}') => {
                if scope.last().is_some_and(|(_, d)| *d == depth) {
                    scope.pop();
                }
                depth = depth.saturating_sub(1);
                (test_attr, cfg_test) = (false, false);
            }
            Tok::Semi => (test_attr, cfg_test) = (false, false),
            _ => {}
        }
        i += 1;
    }
    f
}

/// The path `first::a::b` starting at token `i`, and the token after it.
fn path_at(toks: &[Tok], i: usize, first: &str) -> (Vec<String>, usize) {
    let mut path = vec![first.to_string()];
    let mut j = i + 1;
    while let (Some(Tok::Sep), Some(Tok::Ident(s))) = (toks.get(j), toks.get(j + 1)) {
        path.push(s.to_string());
        j += 2;
    }
    (path, j)
}

enum Attribute {
    /// `#[test]`, `#[tokio::test]`, `#[rstest]`, `#[test_case(…)]`: the next `fn` is a test.
    Test,
    /// `#[cfg(test)]` and `#[cfg(all(test, …))]`.
    CfgTest,
    Other,
}

/// What an attribute's tokens (inside `#[…]`) say.
fn attribute(toks: &[Tok]) -> Attribute {
    let path: Vec<&str> = toks
        .iter()
        .take_while(|t| matches!(t, Tok::Ident(_) | Tok::Sep))
        .filter_map(|t| match t {
            Tok::Ident(s) => Some(*s),
            _ => None,
        })
        .collect();
    match path.as_slice() {
        ["cfg"] if toks.contains(&Tok::Ident("test")) => Attribute::CfgTest,
        [first, ..]
            if path.last().is_some_and(|l| l.contains("test"))
                && !["cfg", "cfg_attr", "allow", "warn", "deny", "expect", "doc"]
                    .contains(first) =>
        {
            Attribute::Test
        }
        _ => Attribute::Other,
    }
}

/// The index of the bracket closing the one at `open` (past the last token when none does,
/// so that `open + 1..` that index is always a slice).
fn closing(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Open(_) => depth += 1,
            Tok::Close(_) => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// The paths a `use` tree names, each under `prefix`: `a::{b, c::d}` names `a::b` and
/// `a::c::d`; `a::*` and `a::{self}` name `a`; an alias (`as x`) changes nothing.
fn use_tree(toks: &[Tok], prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut start = 0;
    let mut depth = 0usize;
    let mut parts = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Open(_) => depth += 1,
            Tok::Close(_) => depth = depth.saturating_sub(1),
            Tok::Comma if depth == 0 => {
                parts.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&toks[start..]);
    for part in parts {
        let mut path = prefix.to_vec();
        let mut k = 0;
        while let Some(t) = part.get(k) {
            match t {
                Tok::Ident("as") => break,
                Tok::Ident("self") if !path.is_empty() && k == 0 => {}
                Tok::Ident(s) => path.push(s.to_string()),
                Tok::Open('{') => {
                    let end = closing(part, k);
                    use_tree(&part[k + 1..end], &path, out);
                    path.clear();
                    break;
                }
                Tok::Sep | Tok::Star => {}
                _ => break,
            }
            k += 1;
        }
        if !path.is_empty() {
            out.push(path);
        }
    }
}

/// The dependents a file's tests make, named as nextest names them.
fn groups(f: &Facts, target: &Target, here: &[String]) -> Vec<Dependent> {
    let name = |inner: &[String]| -> String {
        here.iter()
            .chain(inner)
            .cloned()
            .collect::<Vec<_>>()
            .join("::")
    };
    let module = |inner: &[String]| {
        let path = name(inner);
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}::")
        };
        Dependent::Module(format!("{} {prefix}", target.binary))
    };
    let mut out: Vec<Dependent> = f.test_modules.iter().map(|m| module(m)).collect();
    for (inner, test) in &f.tests {
        out.push(match test {
            Some(test) if inner.is_empty() => Dependent::Test(format!(
                "{} {}",
                target.binary,
                name(std::slice::from_ref(test))
            )),
            // A test in an inline module (often written by a macro) is found by its module.
            _ => module(inner),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(files: &[(&str, &str)], changed: &[&str]) -> Vec<Dependent> {
        let changed: Vec<String> = changed.iter().map(|c| c.to_string()).collect();
        rust_dependents(files.iter().copied(), &changed)
    }

    fn test(id: &str) -> Dependent {
        Dependent::Test(id.into())
    }

    fn module(prefix: &str) -> Dependent {
        Dependent::Module(prefix.into())
    }

    const MANIFEST: &str = "[package]\nname = \"my-lib\"\nversion = \"0.1.0\"\n";

    /// A small library laid out as httparse is: a root that uses `iter`, a `simd` module
    /// whose files reach `iter` from the crate root, tests inline, at top level and from a
    /// macro.
    fn library() -> Vec<(&'static str, &'static str)> {
        vec![
            ("Cargo.toml", MANIFEST),
            (
                "src/lib.rs",
                "mod iter;\nmod simd;\nuse crate::iter::Bytes;\n\
                 pub fn parse() {}\n\
                 #[cfg(test)]\nmod tests {\n    use super::parse;\n    \
                 macro_rules! t { ($n:ident) => { #[test] fn $n() { parse() } } }\n    \
                 t!(a);\n}\n",
            ),
            (
                "src/iter.rs",
                "pub struct Bytes;\n#[test]\nfn new_is_empty() {}\n",
            ),
            (
                "src/simd/mod.rs",
                "mod sse;\nmod swar;\npub use self::swar::*;\n",
            ),
            (
                "src/simd/sse.rs",
                "use crate::iter::Bytes;\n#[cfg(test)]\n#[test]\nfn sse_matches() {}\n\
                 #[cfg(test)]\nfn helper() {}\n",
            ),
            (
                "src/simd/swar.rs",
                "use crate::{parse, Bytes};\n#[test]\nfn swar_block() {}\n",
            ),
            (
                "tests/api.rs",
                "use my_lib::{parse, iter as _};\n#[test]\nfn api_parses() { parse() }\n",
            ),
            (
                "tests/it/main.rs",
                "mod deep;\n#[tokio::test]\nasync fn top() { my_lib::parse() }\n",
            ),
            (
                "tests/it/deep.rs",
                "#[test]\nfn deep() { my_lib::simd::go() }\n",
            ),
        ]
    }

    #[test]
    fn a_changed_module_finds_the_tests_of_the_files_that_name_it() {
        assert_eq!(
            found(&library(), &["src/iter.rs"]),
            [
                test("my-lib iter::new_is_empty"),
                module("my-lib tests::"),
                test("my-lib simd::sse::sse_matches"),
                test("my-lib::api api_parses"),
            ]
        );
    }

    #[test]
    fn the_root_is_named_by_its_items_not_by_its_child_modules() {
        // swar.rs names root items (`parse`, `Bytes`); sse.rs names the child module `iter`.
        assert_eq!(
            found(&library(), &["src/lib.rs"]),
            [
                module("my-lib tests::"),
                test("my-lib simd::swar::swar_block"),
                test("my-lib::api api_parses"),
                test("my-lib::it top"),
            ]
        );
    }

    #[test]
    fn a_nested_module_is_named_through_its_parent_path() {
        assert_eq!(
            found(&library(), &["src/simd/mod.rs"]),
            [test("my-lib::it deep::deep")]
        );
        assert_eq!(found(&library(), &["src/simd/swar.rs"]), {
            // `pub use self::swar::*` in `simd` has no tests; the file's own test comes first.
            vec![test("my-lib simd::swar::swar_block")]
        });
    }

    #[test]
    fn changed_test_files_and_other_languages_find_nothing() {
        assert_eq!(found(&library(), &["tests/api.rs"]), []);
        assert_eq!(found(&library(), &["README.md", "src/absent.rs"]), []);
        assert_eq!(found(&library()[1..], &["src/iter.rs"]), []);
    }

    #[test]
    fn super_in_an_out_of_line_test_module_names_its_parent() {
        let files = [
            ("Cargo.toml", MANIFEST),
            ("src/lib.rs", "pub mod a;\npub mod b;\n"),
            ("src/a.rs", "#[cfg(test)]\nmod tests;\npub fn f() {}\n"),
            (
                "src/a/tests.rs",
                "use super::*;\n#[test]\nfn f_works() { f() }\n",
            ),
            (
                "src/b.rs",
                "pub fn g() { super::a::f() }\n#[cfg(test)]\nmod tests {\n    \
                 use super::*;\n    #[test]\n    fn g_works() { g() }\n}\n",
            ),
        ];
        assert_eq!(
            found(&files, &["src/a.rs"]),
            [
                test("my-lib a::tests::f_works"),
                module("my-lib b::tests::")
            ]
        );
    }

    #[test]
    fn workspace_members_name_each_other_by_their_library_names() {
        let files = [
            ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
            (
                "crates/core/Cargo.toml",
                "[package]\nname = \"core-x\"\n[lib]\nname = \"corex\"\n",
            ),
            ("crates/core/src/lib.rs", "pub mod model;\n"),
            ("crates/core/src/model.rs", "pub struct M;\n"),
            (
                "crates/app/Cargo.toml",
                "[package]\nname = \"app\"\n[[test]]\nname = \"e2e\"\npath = \"checks/e2e.rs\"\n",
            ),
            (
                "crates/app/src/main.rs",
                "use corex::model::M;\n#[test]\nfn uses_m() {}\n",
            ),
            (
                "crates/app/checks/e2e.rs",
                "#[test]\nfn e2e() { let _ = corex::model::M; }\n",
            ),
        ];
        assert_eq!(
            found(&files, &["crates/core/src/model.rs"]),
            [test("app::e2e e2e"), test("app::bin/app uses_m")]
        );
    }

    #[test]
    fn use_trees_expand_to_every_path_they_name() {
        let f = facts("use a::{b, c::{self, d as e}, f::*};\npub use ::g::h;\n");
        let paths: Vec<String> = f.paths.iter().map(|p| p.join("::")).collect();
        assert_eq!(paths, ["a::b", "a::c", "a::c::d", "a::f", "g::h"]);
    }

    #[test]
    fn unclosed_brackets_end_the_file_without_a_panic() {
        // Found by `scripts/fuzz imports`: a `{` or `[` that nothing closes.
        for source in ["#[", "#![cfg(test", "mod m { mod n {"] {
            assert_eq!(facts(source), Facts::default(), "{source}");
        }
        assert_eq!(facts("use a::{").paths, [vec!["a".to_string()]]);
        let paths: Vec<String> = facts("use a::{b, c::{d")
            .paths
            .iter()
            .map(|p| p.join("::"))
            .collect();
        assert_eq!(paths, ["a::b", "a::c::d"]);
        assert_eq!(
            facts("mod m { #[test] fn").tests,
            [(vec!["m".to_string()], None)]
        );
    }

    #[test]
    fn paths_in_comments_and_strings_are_not_read() {
        let f = facts("// crate::a::x\nlet s = \"crate::a::y\";\nlet t = crate::b::z;\n");
        assert_eq!(f.paths, [vec!["crate", "b", "z"]]);
    }
}
