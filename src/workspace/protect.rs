//! Protected paths: files a candidate patch should not need to edit to fix a bug (its tests,
//! `conftest.py`, the runners' configuration, CI), because editing them can make failing tests
//! pass without fixing anything. What happens to such an edit is the user's choice.

use crate::util::names::Named;
use globset::{GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

/// Protected by default, whatever the runner: test directories and CI configuration. Each
/// runner's own test files and configuration come with it (its preset's file), and a check
/// adds every runner's ([`Protection::with`]); [`Protection::new`] adds the user's.
pub const DEFAULT_GLOBS: &[&str] = &[
    "**/tests/**",
    "**/test/**",
    ".github/**",
    ".gitlab-ci.yml",
    ".circleci/**",
    ".travis.yml",
    ".buildkite/**",
    "azure-pipelines.yml",
    "Jenkinsfile",
];

/// The runner section of `file` (by its name) that 1-based line `line` of `text` is in, if
/// any, among `sections` (file name, section): an INI or TOML table
/// (`[tool.pytest.ini_options]` and its subtables), or a top-level key of `package.json`
/// (`"jest": { … }`).
pub fn runner_section(
    file: &str,
    text: &str,
    line: usize,
    sections: &[(&str, &'static str)],
) -> Option<&'static str> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let sections: Vec<&'static str> = sections
        .iter()
        .filter(|(f, _)| *f == name)
        .map(|(_, s)| *s)
        .collect();
    if sections.is_empty() {
        return None;
    }
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
    /// Every glob: the defaults, the user's, and the runners' once a check adds them.
    globs: Vec<String>,
    set: GlobSet,
    /// The runners' sections of shared files, as (file name, section).
    sections: Vec<(&'static str, &'static str)>,
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
        let globs = DEFAULT_GLOBS
            .iter()
            .map(|g| g.to_string())
            .chain(extra.iter().cloned())
            .collect();
        Protection::build(globs, Vec::new(), action)
    }

    fn build(
        globs: Vec<String>,
        sections: Vec<(&'static str, &'static str)>,
        action: OnProtectedEdit,
    ) -> Result<Protection, BadGlob> {
        let mut builder = GlobSetBuilder::new();
        for glob in &globs {
            let parsed = globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|e| BadGlob {
                    glob: glob.clone(),
                    reason: e.kind().to_string(),
                })?;
            builder.add(parsed);
        }
        let set = builder.build().map_err(|e| BadGlob {
            glob: globs.join(" "),
            reason: e.to_string(),
        })?;
        Ok(Protection {
            globs,
            set,
            sections,
            action,
        })
    }

    /// This protection with the runners' test files and configuration too: their globs, and
    /// their sections of shared files (`pyproject.toml`'s `[tool.pytest.ini_options]`).
    pub fn with(
        &self,
        globs: &[&str],
        sections: &[(&'static str, &'static str)],
    ) -> Result<Protection, BadGlob> {
        let mut all = self.globs.clone();
        all.extend(globs.iter().map(|g| g.to_string()));
        let mut sections_all = self.sections.clone();
        sections_all.extend_from_slice(sections);
        Protection::build(all, sections_all, self.action)
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

    /// Whether `file` is one of the files with runner sections (`pyproject.toml`,
    /// `setup.cfg`, `package.json`).
    pub fn has_sections(&self, file: &str) -> bool {
        let name = file.rsplit('/').next().unwrap_or(file);
        self.sections.iter().any(|(n, _)| *n == name)
    }

    /// The runner section of `file` that 1-based line `line` of `text` is in, if any (see
    /// `runner_section`).
    pub fn section(&self, file: &str, text: &str, line: usize) -> Option<&'static str> {
        runner_section(file, text, line, &self.sections)
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
    fn defaults_alone_cover_test_directories_and_ci() {
        let files = [
            "pkg/tests/helpers.py",
            "src/test/x.c",
            ".github/workflows/ci.yml",
        ];
        assert_eq!(edits(&[], &files), files);
        // A runner's own files come with the runner (a check adds every runner's).
        assert!(edits(&[], &["conftest.py", "x_test.go"]).is_empty());
        let p = Protection::defaults()
            .with(&["**/conftest.py"], &[("setup.cfg", "tool:pytest")])
            .unwrap();
        assert_eq!(p.edits(&["a/conftest.py".into()]), ["a/conftest.py"]);
        assert!(p.has_sections("sub/setup.cfg") && !p.has_sections("pyproject.toml"));
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
