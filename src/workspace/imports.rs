//! Which test files import a changed module, read from their source: Python's `import` and
//! `from … import …` (relative imports included), JavaScript's `import … from` and
//! `require(…)` of a relative path. One level only: a test that reaches the module through
//! another module is not found (coverage finds it).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// Whether a path is a test file by its name: Python's `test_*.py`, `*_test.py` and `.py`
/// files under `tests/` or `test/`; JavaScript's `*.test.*`, `*.spec.*` and files under
/// `__tests__/`.
pub fn is_test_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let in_dir = |d: &str| path.split('/').rev().skip(1).any(|p| p == d);
    if name.ends_with(".py") {
        return name.starts_with("test_")
            || name.ends_with("_test.py")
            || in_dir("tests")
            || in_dir("test");
    }
    let js = [".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"];
    js.iter().any(|x| name.ends_with(x))
        && (name.contains(".test.") || name.contains(".spec.") || in_dir("__tests__"))
}

/// The test files, among `files` (path and source), that import one of `changed` (paths in
/// the same tree), sorted.
pub fn importers<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
    changed: &[String],
) -> Vec<String> {
    let modules: BTreeSet<String> = changed.iter().filter_map(|c| python_module(c)).collect();
    let changed: BTreeSet<&str> = changed.iter().map(String::as_str).collect();
    let mut found: BTreeSet<String> = BTreeSet::new();
    for (path, source) in files {
        if !is_test_path(path) || changed.contains(path) {
            continue;
        }
        let hit = if path.ends_with(".py") {
            python_imports(path, source)
                .iter()
                .any(|m| modules.contains(m))
        } else {
            js_imports(path, source).iter().any(|p| {
                js_candidates(p)
                    .iter()
                    .any(|c| changed.contains(c.as_str()))
            })
        };
        if hit {
            found.insert(path.to_string());
        }
    }
    found.into_iter().collect()
}

/// `pkg/sub/mod.py` → `pkg.sub.mod` (`__init__.py` names its package; a leading `src/` or
/// `lib/` is not part of the name).
fn python_module(path: &str) -> Option<String> {
    let stem = path.strip_suffix(".py")?;
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let stem = ["src/", "lib/"]
        .iter()
        .find_map(|p| stem.strip_prefix(p))
        .unwrap_or(stem);
    Some(stem.replace('/', "."))
}

/// Every module a Python file's import statements name, absolute: `import a.b` names `a.b`;
/// `from a import b` names `a` and `a.b` (b may be a module); relative imports are resolved
/// against the file's package.
fn python_imports(path: &str, source: &str) -> BTreeSet<String> {
    // The file's package, for relative imports.
    let module = python_module(path).unwrap_or_default();
    let mut here: Vec<&str> = module.split('.').collect();
    here.pop();
    let mut out = BTreeSet::new();
    for statement in logical_lines(source) {
        let s = statement.trim();
        if let Some(rest) = s.strip_prefix("import ") {
            for name in rest.split(',') {
                let name = name.split(" as ").next().unwrap_or("").trim();
                if !name.is_empty() {
                    out.insert(name.to_string());
                }
            }
        } else if let Some(rest) = s.strip_prefix("from ") {
            let Some((from, names)) = rest.split_once(" import ") else {
                continue;
            };
            let from = from.trim();
            let dots = from.chars().take_while(|c| *c == '.').count();
            let base = if dots == 0 {
                from.to_string()
            } else {
                let up = dots - 1;
                if up > here.len() {
                    continue;
                }
                let mut parts: Vec<&str> = here[..here.len() - up].to_vec();
                let rest = &from[dots..];
                if !rest.is_empty() {
                    parts.push(rest);
                }
                parts.join(".")
            };
            if !base.is_empty() {
                out.insert(base.clone());
            }
            let names = names.trim().trim_start_matches('(').trim_end_matches(')');
            for name in names.split(',') {
                let name = name.split(" as ").next().unwrap_or("").trim();
                if name.is_empty() || name == "*" {
                    continue;
                }
                out.insert(if base.is_empty() {
                    name.to_string()
                } else {
                    format!("{base}.{name}")
                });
            }
        }
    }
    out
}

/// Statements joined across the lines a parenthesised import spans; comments dropped.
fn logical_lines(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for line in source.lines() {
        let line = line.split('#').next().unwrap_or("");
        match &mut open {
            Some(s) => {
                s.push(' ');
                s.push_str(line.trim());
                if line.contains(')') {
                    out.extend(open.take());
                }
            }
            None if line.contains('(')
                && !line.contains(')')
                && line.trim_start().starts_with("from ") =>
            {
                open = Some(line.trim().to_string());
            }
            None => out.push(line.to_string()),
        }
    }
    out.extend(open);
    out
}

/// The relative paths a JavaScript file imports or requires, resolved against its directory.
fn js_imports(path: &str, source: &str) -> Vec<String> {
    let dir = Path::new(path).parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for quote in ['\'', '"', '`'] {
        let mut rest = source;
        while let Some(at) = rest.find(quote) {
            let after = &rest[at + 1..];
            let Some(end) = after.find(quote) else { break };
            let spec = &after[..end];
            let before = rest[..at].trim_end();
            let imports = before.ends_with("from")
                || before.ends_with("require(")
                || before.ends_with("import(")
                || before.ends_with("import");
            if imports && (spec.starts_with("./") || spec.starts_with("../")) {
                out.extend(normalize(&dir.join(spec)));
            }
            rest = &after[end + 1..];
        }
    }
    out
}

/// A path with `.` and `..` resolved, as `/`-separated text; `None` above the root.
fn normalize(path: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            _ => {}
        }
    }
    Some(
        PathBuf::from(parts.join("/"))
            .to_string_lossy()
            .into_owned(),
    )
}

/// The files an import specifier may mean: itself, with each extension, or its index file.
fn js_candidates(spec: &str) -> Vec<String> {
    let exts = ["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"];
    let mut out = vec![spec.to_string()];
    for x in exts {
        out.push(format!("{spec}.{x}"));
        out.push(format!("{spec}/index.{x}"));
    }
    // `./x.js` in TypeScript sources means `./x.ts`.
    if let Some(stem) = spec.strip_suffix(".js") {
        out.push(format!("{stem}.ts"));
        out.push(format!("{stem}.tsx"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_known_by_their_names() {
        for yes in [
            "tests/test_util.py",
            "pkg/tests/helpers.py",
            "util_test.py",
            "src/a.test.ts",
            "web/__tests__/x.js",
            "a.spec.mjs",
        ] {
            assert!(is_test_path(yes), "{yes}");
        }
        for no in ["pkg/util.py", "testing.py", "src/app.ts", "tests.md"] {
            assert!(!is_test_path(no), "{no}");
        }
    }

    #[test]
    fn python_imports_of_every_form_name_the_changed_module() {
        let changed = ["src/pkg/util/codify.py".to_string()];
        let files = [
            ("tests/test_a.py", "import pkg.util.codify\n"),
            ("tests/test_b.py", "from pkg.util import codify as c\n"),
            (
                "tests/test_c.py",
                "from pkg.util.codify import (\n    main,\n    other,\n)\n",
            ),
            ("pkg/util/tests/test_d.py", "from .. import codify\n"),
            (
                "tests/test_e.py",
                "import pkg.util  # not the module itself\n",
            ),
            (
                "tests/test_f.py",
                "# from pkg.util import codify\nimport os\n",
            ),
            ("pkg/util/other.py", "from pkg.util import codify\n"),
        ];
        let found = importers(files.iter().map(|(p, s)| (*p, *s)), &changed);
        assert_eq!(
            found,
            [
                "pkg/util/tests/test_d.py",
                "tests/test_a.py",
                "tests/test_b.py",
                "tests/test_c.py"
            ]
        );
    }

    #[test]
    fn javascript_imports_and_requires_of_a_relative_path() {
        let changed = ["src/utils.ts".to_string(), "lib/index.js".to_string()];
        let files = [
            (
                "test/base.test.ts",
                "import { withBase } from \"../src/utils\";\n",
            ),
            ("test/js.test.ts", "import { x } from '../src/utils.js'\n"),
            ("test/lib.spec.js", "const lib = require('../lib')\n"),
            ("test/other.test.ts", "import { y } from '../src/other'\n"),
            ("test/pkg.test.ts", "import { z } from 'utils'\n"),
        ];
        let found = importers(files.iter().map(|(p, s)| (*p, *s)), &changed);
        assert_eq!(
            found,
            ["test/base.test.ts", "test/js.test.ts", "test/lib.spec.js"]
        );
    }
}
