//! The contract of applying a patch: how it applied, or where it did not. Produced by the
//! exact apply (`checkout`) and the fuzzy fallback (`fuzzy`) alike, and
//! recorded in the verdict.

use serde::{Deserialize, Serialize};

/// The most context lines the fuzzy fallback ignores at each end of a hunk.
pub const MAX_FUZZ: usize = 2;

/// Where a patch failed to apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApplyFailure {
    /// The file being patched when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The hunk header being applied when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hunk: Option<String>,
    /// libgit2's reason.
    pub message: String,
}

impl std::fmt::Display for ApplyFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.file, &self.hunk) {
            (Some(file), Some(hunk)) => write!(f, "{file}, hunk {hunk}: {}", self.message),
            (Some(file), None) => write!(f, "{file}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// How a patch was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApplyStrategy {
    /// Every hunk where it said, with all its context.
    Exact,
    /// Some hunk moved or needed fuzz (listed as moved hunks).
    Fuzzy,
}

/// How far from what it says a hunk may apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Exactly where it says, with all its context (`--strict-apply`).
    Exact,
    /// Elsewhere in the file, with all its context, as `git apply` allows: how the hidden
    /// tests' patch applies (a task's patch written against a nearby revision still applies,
    /// and fuzz would hide a task that is broken).
    Offset,
    /// Elsewhere, and with up to `MAX_FUZZ` context lines ignored at each end.
    Fuzz,
}

impl Fit {
    /// Context lines the search may ignore at each end of a hunk.
    pub fn max_fuzz(self) -> usize {
        match self {
            Fit::Exact | Fit::Offset => 0,
            Fit::Fuzz => MAX_FUZZ,
        }
    }
}

/// A patch applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// Exactly or by context search.
    pub strategy: ApplyStrategy,
    /// The hunks that moved or needed fuzz.
    pub moved: Vec<MovedHunk>,
}

/// A hunk applied somewhere other than where it said, or with context ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MovedHunk {
    /// The file.
    pub file: String,
    /// The hunk's header, `@@ -a,b +c,d @@`.
    pub hunk: String,
    /// Lines between where the hunk said it applies and where it did (negative: earlier).
    pub offset: i64,
    /// Context lines ignored at each end.
    pub fuzz: usize,
}

/// A candidate edit the hidden tests replaced in a file both change: the hidden tests' patch
/// changed lines (or context) the edit changed too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OverriddenHunk {
    /// The file.
    pub file: String,
    /// The edit, as a diff of base and candidate without context: `@@ -a,b +c,d @@`.
    pub hunk: String,
}

/// `@@ -a,b +c,d @@` without the function context git appends.
pub fn header_of(raw: &[u8]) -> String {
    let header = String::from_utf8_lossy(raw);
    match header.match_indices("@@").nth(1) {
        Some((end, _)) => header[..end + 2].to_string(),
        None => header.trim_end().to_string(),
    }
}
