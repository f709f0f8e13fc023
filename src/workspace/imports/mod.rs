//! Which tests reach a changed module, read from the source without running anything: the
//! test files whose imports name it (Python, JavaScript), and in Rust the tests of the modules
//! whose paths (`use`, `crate::…`) name it. One level only: a test that reaches the module
//! through another module is not found (coverage finds it).
//!
//! - [`importers`]: the Python and JavaScript test files that import a changed file
//!   ([`python`], [`javascript`] read their imports).
//! - [`rust_dependents`]: the Rust tests, as nextest names them ([`rust`]; [`cargo`] knows
//!   the crates and their modules, [`lex`] reads the source as tokens).

mod cargo;
mod javascript;
mod lex;
mod python;
mod rust;

pub use rust::{Dependent, rust_dependents};

use javascript::{js_candidates, js_imports};
use python::{python_imports, python_module};
use std::collections::BTreeSet;

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
