//! JavaScript runners: jest (jest-junit), vitest, mocha (mocha-junit-reporter), node:test.
//!
//! An id is `file › Describe › test` (jest's console form; vitest's ` > ` also works), the file
//! optional, or the full name `Describe test` as `jest -t` and `mocha --grep` take it. Every
//! reporter writes the titles differently; [`describe`] turns a testcase back into a file and
//! titles, so that both sides meet at the full name.

use super::{IdSyntax, Query, Scope};
use crate::observe::junit::{Case, Report};
use serde::{Deserialize, Serialize};

/// Which JavaScript reporter wrote the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JsFlavor {
    /// jest with jest-junit (default or the preset's configuration).
    Jest,
    /// vitest's built-in junit reporter.
    Vitest,
    /// mocha-junit-reporter (default or `jenkinsMode`).
    Mocha,
    /// node's test runner, `--test-reporter=junit`.
    Node,
}

const EXTENSIONS: [&str; 8] = [".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"];

/// The file and titles an id asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsQuery {
    file: Option<String>,
    /// Set when the id spells the titles apart (it has a separator).
    titles: Option<Vec<String>>,
}

/// A testcase read back as file, titles and full name.
pub(super) struct JsCase {
    file: Option<String>,
    titles: Option<Vec<String>>,
    pub(super) full: String,
}

/// Titles joined as `jest -t` sees them. A separator inside a title (vitest allows ` > `) reads
/// as a space, so the id and the report meet whatever the title holds.
fn full_name(titles: &[String]) -> String {
    titles.join(" ").replace(" › ", " ").replace(" > ", " ")
}

impl JsFlavor {
    /// How the reporter joins describe titles; titles are compared joined by it, since the
    /// reporter's own joining cannot be undone when a title contains it.
    fn separator(self) -> &'static str {
        match self {
            JsFlavor::Vitest => " > ",
            _ => " › ",
        }
    }
}

fn looks_like_file(s: &str) -> bool {
    EXTENSIONS.iter().any(|x| s.ends_with(x))
}

/// Paths compare equal when one is the other with a directory in front (reporters write them
/// absolute, relative, or with `./`).
fn same_file(a: &str, b: &str) -> bool {
    let a = a.strip_prefix("./").unwrap_or(a);
    let b = b.strip_prefix("./").unwrap_or(b);
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

pub(super) fn parse(_flavor: JsFlavor, id: &str) -> Query {
    let mut parts: Vec<String> = if id.contains(" › ") {
        id.split(" › ").map(str::to_string).collect()
    } else {
        id.split(" > ").map(str::to_string).collect()
    };
    let file = match parts.first() {
        Some(first) if looks_like_file(first) => Some(parts.remove(0)),
        _ => None,
    };
    let titles = (parts.len() != 1).then(|| parts.clone());
    Query {
        key: full_name(&parts),
        widened: false,
        scope: Scope::Js(JsQuery { file, titles }),
    }
}

impl JsQuery {
    pub(super) fn admits(&self, syntax: IdSyntax, case: &Case, report: &Report) -> bool {
        let IdSyntax::Js(flavor) = syntax else {
            return false;
        };
        let d = describe(flavor, case, report);
        let file_ok = match (&self.file, &d.file) {
            (Some(want), Some(have)) => same_file(want, have),
            _ => true,
        };
        let titles_ok = match (&self.titles, &d.titles) {
            (Some(want), Some(have)) => {
                want.join(flavor.separator()) == have.join(flavor.separator())
            }
            _ => true,
        };
        file_ok && titles_ok
    }
}

/// A file that failed to load: the reporters name a testcase after the file.
fn load_failure(file: &str) -> JsCase {
    JsCase {
        file: Some(file.to_string()),
        titles: Some(Vec::new()),
        full: String::new(),
    }
}

fn from_titles(file: Option<String>, titles: Vec<String>) -> JsCase {
    JsCase {
        full: full_name(&titles),
        file,
        titles: Some(titles),
    }
}

// Long because it is one match arm per reporter, each reading back its own way of writing
// file and titles; they are easiest to compare side by side.
pub(super) fn describe(flavor: JsFlavor, case: &Case, report: &Report) -> JsCase {
    let suite = report.suites.get(case.suite);
    let suite_name = suite.and_then(|s| s.names.last()).map(String::as_str);
    let suite_file = suite.and_then(|s| s.file.clone());
    match flavor {
        JsFlavor::Jest => {
            if case.classname == "Test suite failed to run" {
                return load_failure(&case.name);
            }
            // The preset configures titles apart (` › `) and a file attribute; the defaults
            // join everything with spaces into both attributes, with no file.
            if case.file.is_some() || case.classname != case.name {
                let file = case.file.clone().or_else(|| {
                    suite_name
                        .filter(|n| looks_like_file(n))
                        .map(str::to_string)
                });
                let mut titles: Vec<String> = case
                    .classname
                    .split(" › ")
                    .filter(|t| !t.is_empty())
                    .map(str::to_string)
                    .collect();
                titles.push(case.name.clone());
                return from_titles(file, titles);
            }
            let full = case.classname.strip_prefix(' ').unwrap_or(&case.classname);
            JsCase {
                file: None,
                titles: None,
                full: full_name(&[full.to_string()]),
            }
        }
        JsFlavor::Vitest => {
            if case.name == case.classname && looks_like_file(&case.name) {
                return load_failure(&case.name);
            }
            let file = case.file.clone().or_else(|| Some(case.classname.clone()));
            from_titles(file, case.name.split(" > ").map(str::to_string).collect())
        }
        JsFlavor::Mocha => {
            // Default: name is the full title and classname the test's own title. Jenkins
            // mode: classname is the describe path joined by `.`, name the own title.
            if case.name == case.classname || case.name.ends_with(&format!(" {}", case.classname)) {
                return JsCase {
                    file: suite_file,
                    titles: None,
                    full: full_name(std::slice::from_ref(&case.name)),
                };
            }
            let mut titles: Vec<String> = case
                .classname
                .split('.')
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect();
            titles.push(case.name.clone());
            from_titles(suite_file, titles)
        }
        JsFlavor::Node => {
            // node 20 escapes `"` twice in attributes: one level is left after parsing.
            let unquote = |s: &String| s.replace("&quot;", "\"");
            let ancestors: Vec<String> = suite
                .map(|s| {
                    s.names
                        .iter()
                        .filter(|n| !n.is_empty())
                        .map(unquote)
                        .collect()
                })
                .unwrap_or_default();
            let name = unquote(&case.name);
            if ancestors.is_empty() && looks_like_file(&name) && name.starts_with('/') {
                return load_failure(&name);
            }
            let mut titles = ancestors;
            titles.push(name);
            from_titles(None, titles)
        }
    }
}

pub(super) fn display(flavor: JsFlavor, case: &Case, report: &Report) -> String {
    let d = describe(flavor, case, report);
    let titles = match d.titles {
        Some(t) => t.join(" › "),
        None => d.full,
    };
    match d.file {
        Some(f) if titles.is_empty() => f,
        Some(f) => format!("{f} › {titles}"),
        None => titles,
    }
}
