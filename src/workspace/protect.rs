//! Protected paths: files a candidate patch should not need to edit to fix a bug (its tests,
//! `conftest.py`, the runners' configuration, CI), because editing them can make failing tests
//! pass without fixing anything. What happens to such an edit is the user's choice.

use crate::util::names::Named;
use globset::{GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

/// Protected by default: test files and directories of the supported runners, their
/// configuration, and CI configuration. [`Protection::new`] adds to these.
pub const DEFAULT_GLOBS: &[&str] = &[
    "**/conftest.py",
    "**/test_*.py",
    "**/*_test.py",
    "**/tests/**",
    "**/test/**",
    "**/__tests__/**",
    "**/*.test.*",
    "**/*.spec.*",
    "**/*_test.go",
    "**/*Test.java",
    "**/*Tests.java",
    "**/*Test.php",
    "**/pytest.ini",
    "**/tox.ini",
    "**/noxfile.py",
    "**/jest.config.*",
    "**/vitest.config.*",
    "**/.mocharc*",
    "**/phpunit.xml*",
    ".github/**",
    ".gitlab-ci.yml",
    ".circleci/**",
    ".travis.yml",
    ".buildkite/**",
    "azure-pipelines.yml",
    "Jenkinsfile",
];

/// Files a patch edits for good reasons (dependencies, metadata) that also hold a runner's
/// configuration in one section: an edit inside that section is a protected edit, though the
/// file is not protected.
const SECTIONED: &[(&str, &[&str])] = &[
    (
        "pyproject.toml",
        &["tool.pytest.ini_options", "tool.pytest"],
    ),
    ("setup.cfg", &["tool:pytest"]),
    ("package.json", &["jest", "mocha"]),
];

/// Whether `file` is one of the files with runner sections (`pyproject.toml`, `setup.cfg`,
/// `package.json`).
pub fn has_runner_sections(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    SECTIONED.iter().any(|(n, _)| *n == name)
}

/// The runner section of `file` (by its name) that 1-based line `line` of `text` is in, if
/// any: an INI or TOML table (`[tool.pytest.ini_options]` and its subtables), or a top-level
/// key of `package.json` (`"jest": { … }`).
pub fn runner_section(file: &str, text: &str, line: usize) -> Option<&'static str> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let (_, sections) = SECTIONED.iter().find(|(n, _)| *n == name)?;
    let upto = text.lines().take(line);
    if name == "package.json" {
        // The top-level key whose value the line is in, by brace depth (strings with braces
        // in them are rare in a runner's configuration and only widen the match).
        let mut depth = 0i32;
        let mut current: Option<&'static str> = None;
        for l in upto {
            if depth == 1 {
                current = sections
                    .iter()
                    .copied()
                    .find(|s| l.trim_start().starts_with(&format!("\"{s}\"")));
            }
            depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
        }
        return current;
    }
    let header = upto
        .filter_map(|l| {
            let t = l.trim();
            t.strip_prefix('[')
                .and_then(|t| t.strip_suffix(']'))
                .map(|t| t.trim_matches(['[', ']']).trim())
        })
        .last()?;
    sections
        .iter()
        .copied()
        .find(|s| header == *s || header.starts_with(&format!("{s}.")))
}

/// What a candidate edit to a protected path does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnProtectedEdit {
    /// Grade the patch as it is; list the edits and warn.
    #[default]
    Warn,
    /// Put the protected files back to base before the tests run; list them and warn.
    Revert,
    /// Refuse the patch: outcome `patch-failed`.
    Reject,
}

impl Named for OnProtectedEdit {
    const NAMES: &'static [(&'static str, OnProtectedEdit)] = &[
        ("warn", OnProtectedEdit::Warn),
        ("revert", OnProtectedEdit::Revert),
        ("reject", OnProtectedEdit::Reject),
    ];
}

/// A name that is not an [`OnProtectedEdit`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown action on protected edits `{0}` (known: {known})", known = OnProtectedEdit::known())]
pub struct UnknownAction(pub String);

impl std::str::FromStr for OnProtectedEdit {
    type Err = UnknownAction;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OnProtectedEdit::from_name(s).ok_or_else(|| UnknownAction(s.to_string()))
    }
}

/// The protected globs and what to do about edits to them.
#[derive(Debug, Clone)]
pub struct Protection {
    set: GlobSet,
    /// What an edit does.
    pub action: OnProtectedEdit,
}

/// A glob that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("protected-path glob `{glob}`: {reason}")]
pub struct BadGlob {
    /// The glob given.
    pub glob: String,
    /// globset's reason.
    pub reason: String,
}

impl Protection {
    /// The default globs plus `extra`.
    pub fn new(extra: &[String], action: OnProtectedEdit) -> Result<Protection, BadGlob> {
        let mut builder = GlobSetBuilder::new();
        for glob in DEFAULT_GLOBS
            .iter()
            .copied()
            .chain(extra.iter().map(String::as_str))
        {
            let parsed = globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|e| BadGlob {
                    glob: glob.to_string(),
                    reason: e.kind().to_string(),
                })?;
            builder.add(parsed);
        }
        let set = builder.build().map_err(|e| BadGlob {
            glob: extra.join(" "),
            reason: e.to_string(),
        })?;
        Ok(Protection { set, action })
    }

    /// The default globs, warning on edits.
    pub fn defaults() -> Protection {
        Protection::new(&[], OnProtectedEdit::Warn).expect("the default globs parse")
    }

    /// The files among `files` that are protected.
    pub fn edits(&self, files: &[String]) -> Vec<String> {
        files
            .iter()
            .filter(|f| self.set.is_match(f.as_str()))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(extra: &[&str], files: &[&str]) -> Vec<String> {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let files: Vec<String> = files.iter().map(|s| s.to_string()).collect();
        Protection::new(&extra, OnProtectedEdit::Warn)
            .unwrap()
            .edits(&files)
    }

    #[test]
    fn defaults_cover_tests_config_and_ci_but_not_code() {
        let files = [
            "conftest.py",
            "src/pkg/conftest.py",
            "tests/test_calc.py",
            "pkg/tests/helpers.py",
            "test_root.py",
            "calc_test.py",
            "src/app.test.ts",
            "web/__tests__/a.js",
            "x/y_test.go",
            "src/test/java/a/CalcTest.java",
            "tests/CalcTest.php",
            "pytest.ini",
            "jest.config.js",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
        ];
        assert_eq!(edits(&[], &files), files);
        let code = [
            "src/calc.py",
            "src/testing_utils.py",
            "latest.py",
            "pkg/contest.py",
            "README.md",
            "pyproject.toml",
            "src/main/java/a/Calc.java",
        ];
        assert!(edits(&[], &code).is_empty(), "{:?}", edits(&[], &code));
    }

    #[test]
    fn runner_sections_of_files_that_are_not_protected() {
        let toml = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n\n[tool.ruff]\nline = 1\n";
        let at = |line| runner_section("pyproject.toml", toml, line);
        assert_eq!(
            (at(2), at(4), at(5), at(8)),
            (
                None,
                Some("tool.pytest.ini_options"),
                Some("tool.pytest.ini_options"),
                None
            )
        );
        let cfg = "[metadata]\nname = x\n[tool:pytest]\naddopts = -p no:x\n";
        assert_eq!(runner_section("sub/setup.cfg", cfg, 4), Some("tool:pytest"));
        assert_eq!(runner_section("setup.cfg", cfg, 2), None);
        let json = "{\n  \"name\": \"x\",\n  \"jest\": {\n    \"testMatch\": [\"x\"]\n  },\n  \"dependencies\": {\n    \"a\": \"1\"\n  }\n}\n";
        let at = |line| runner_section("package.json", json, line);
        assert_eq!(
            (at(2), at(3), at(4), at(7)),
            (None, Some("jest"), Some("jest"), None)
        );
        assert_eq!(runner_section("README.md", toml, 4), None);
    }

    #[test]
    fn extra_globs_add_and_bad_ones_are_named() {
        assert_eq!(
            edits(&["pyproject.toml"], &["pyproject.toml", "a.py"]),
            ["pyproject.toml"]
        );
        assert_eq!(
            edits(&["docs/*"], &["docs/a.md", "docs/x/b.md"]),
            ["docs/a.md"]
        );
        let bad = Protection::new(&["a[".to_string()], OnProtectedEdit::Warn).unwrap_err();
        assert!(
            bad.to_string().starts_with("protected-path glob `a[`"),
            "{bad}"
        );
        assert_eq!("revert".parse(), Ok(OnProtectedEdit::Revert));
        assert_eq!(
            "later".parse::<OnProtectedEdit>().unwrap_err().to_string(),
            "unknown action on protected edits `later` (known: warn, revert, reject)"
        );
        assert!("later".parse::<OnProtectedEdit>().is_err());
    }
}
