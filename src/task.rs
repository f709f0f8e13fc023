//! Task files: the inputs of a check in TOML or JSON, including SWE-bench instances unchanged.

use crate::check::TestCommand;
use crate::ids::IdSyntax;
use crate::runner::Preset;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A task file. Every field is optional; command-line flags override it.
///
/// SWE-bench instance fields are accepted under their own names: `base_commit`,
/// `FAIL_TO_PASS`, `PASS_TO_PASS` (JSON-encoded strings or arrays), `test_patch` (inline text).
/// Its `repo` is the `owner/name` of the project, informational only; the local path is
/// `repo_path`. Its `patch` (the reference solution) is ignored: the candidate comes from
/// `--patch` or `patch_file`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TaskFile {
    /// Task id.
    pub instance_id: Option<String>,
    /// `owner/name`, informational.
    pub repo: Option<String>,
    /// Local repository path (relative to the task file).
    pub repo_path: Option<PathBuf>,
    /// Base revision.
    #[serde(alias = "base_commit")]
    pub base: Option<String>,
    /// Candidate patch file (relative to the task file).
    pub patch_file: Option<PathBuf>,
    /// Test patch, inline.
    pub test_patch: Option<String>,
    /// Test patch file (relative to the task file).
    pub test_patch_file: Option<PathBuf>,
    /// Fail-to-pass ids.
    #[serde(default, alias = "FAIL_TO_PASS", deserialize_with = "id_list")]
    pub f2p: Vec<String>,
    /// Pass-to-pass ids.
    #[serde(default, alias = "PASS_TO_PASS", deserialize_with = "id_list")]
    pub p2p: Vec<String>,
    /// Test command template.
    pub test_cmd: Option<String>,
    /// Preset runner name.
    pub runner: Option<String>,
    /// Id syntax of a custom `test_cmd` (a runner name or `classname.name`).
    pub ids: Option<String>,
    /// Per-command timeout.
    #[serde(default, deserialize_with = "timeout")]
    pub timeout: Option<Duration>,
    /// Environment for the test command.
    #[serde(default, deserialize_with = "env")]
    pub env: Vec<(String, String)>,
    /// Setup command.
    pub setup_cmd: Option<String>,
}

/// A task file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct TaskError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub reason: String,
}

impl TaskFile {
    /// Read a task file; relative paths in it are taken relative to its directory.
    pub fn load(path: &Path) -> Result<TaskFile, TaskError> {
        let fail = |reason: String| TaskError {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        let is_toml = path.extension().is_some_and(|e| e == "toml");
        let mut task: TaskFile = if is_toml {
            toml::from_str(&text).map_err(|e| fail(format!("invalid TOML: {}", e.message())))?
        } else {
            serde_json::from_str(&text).map_err(|e| fail(format!("invalid JSON: {e}")))?
        };
        task.relative_to(path.parent().unwrap_or(Path::new("")));
        Ok(task)
    }

    /// Take relative paths in the task relative to `dir` (where the file that held it is).
    pub fn relative_to(&mut self, dir: &Path) {
        for p in [
            &mut self.repo_path,
            &mut self.patch_file,
            &mut self.test_patch_file,
        ]
        .into_iter()
        .flatten()
        {
            if p.is_relative() {
                *p = dir.join(&*p);
            }
        }
    }
}

/// The test command from a template, a preset name and an id syntax name, each optional: a
/// template keeps the preset's id syntax and environment handling unless `ids` names another;
/// `None` when neither a template nor a preset is given.
pub fn test_command(
    test_cmd: Option<&str>,
    runner: Option<&str>,
    ids: Option<&str>,
) -> Result<Option<TestCommand>, String> {
    let preset = runner
        .map(str::parse::<Preset>)
        .transpose()
        .map_err(|e| e.to_string())?;
    let syntax = ids
        .map(str::parse::<IdSyntax>)
        .transpose()
        .map_err(|e| e.to_string())?;
    let command = match (test_cmd, preset) {
        (Some(t), Some(p)) if syntax.is_none() => TestCommand::custom_for(t, p),
        (Some(t), _) => TestCommand::custom(t, syntax.unwrap_or(IdSyntax::Pytest)),
        (None, Some(p)) => Ok(TestCommand::preset(p)),
        (None, None) => return Ok(None),
    };
    command.map(Some).map_err(|e| e.to_string())
}

/// Parse `1h30m`, `90s`, `45` (seconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(s).map_err(|e| format!("invalid duration `{s}`: {e}"))
}

/// Parse an id file: a JSON array of strings, or one id per line (blank lines and `#`
/// comments skipped).
pub fn parse_id_file(text: &str) -> Result<Vec<String>, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return serde_json::from_str(trimmed).map_err(|e| format!("invalid JSON array: {e}"));
    }
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// Split `KEY=VALUE`.
pub fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!(
            "invalid environment variable `{s}`: expected KEY=VALUE"
        )),
    }
}

fn id_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Ids {
        List(Vec<String>),
        Encoded(String),
    }
    match Ids::deserialize(d)? {
        Ids::List(v) => Ok(v),
        // SWE-bench's dataset stores the lists as JSON-encoded strings.
        Ids::Encoded(s) => serde_json::from_str(&s).map_err(|e| {
            serde::de::Error::custom(format!(
                "test id list is neither an array nor a JSON-encoded array: {e}"
            ))
        }),
    }
}

fn timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum T {
        Secs(u64),
        Text(String),
    }
    Ok(Some(match T::deserialize(d)? {
        T::Secs(s) => Duration::from_secs(s),
        T::Text(s) => parse_duration(&s).map_err(serde::de::Error::custom)?,
    }))
}

fn env<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum E {
        Map(BTreeMap<String, String>),
        List(Vec<String>),
    }
    match E::deserialize(d)? {
        E::Map(m) => Ok(m.into_iter().collect()),
        E::List(l) => l
            .iter()
            .map(|s| parse_env(s).map_err(serde::de::Error::custom))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swe_bench_instance_with_encoded_lists() {
        let json = r#"{"instance_id":"o__r-1","repo":"o/r","base_commit":"abc","patch":"gold",
            "test_patch":"diff --git a/t b/t\n","FAIL_TO_PASS":"[\"t.py::a\"]",
            "PASS_TO_PASS":"[\"t.py::b\", \"t.py::c[x y]\"]","version":"1.0"}"#;
        let t: TaskFile = serde_json::from_str(json).unwrap();
        assert_eq!(t.base.as_deref(), Some("abc"));
        assert_eq!(t.f2p, ["t.py::a"]);
        assert_eq!(t.p2p, ["t.py::b", "t.py::c[x y]"]);
        assert_eq!(t.repo.as_deref(), Some("o/r"));
        assert!(t.patch_file.is_none());
    }

    #[test]
    fn real_arrays_and_toml() {
        let t: TaskFile =
            serde_json::from_str(r#"{"FAIL_TO_PASS":["a"],"PASS_TO_PASS":[]}"#).unwrap();
        assert_eq!(t.f2p, ["a"]);
        let t: TaskFile = toml::from_str(
            "base = \"main\"\nf2p = [\"a\"]\ntimeout = \"90s\"\nenv = { K = \"v\" }\nrunner = \"pytest\"\n",
        )
        .unwrap();
        assert_eq!(t.timeout, Some(Duration::from_secs(90)));
        assert_eq!(t.env, [("K".to_string(), "v".to_string())]);
        let t: TaskFile =
            serde_json::from_str(r#"{"timeout": 5, "env": ["A=1", "B=x=y"]}"#).unwrap();
        assert_eq!(t.timeout, Some(Duration::from_secs(5)));
        assert_eq!(t.env[1], ("B".to_string(), "x=y".to_string()));
    }

    #[test]
    fn bad_lists_are_errors() {
        assert!(serde_json::from_str::<TaskFile>(r#"{"FAIL_TO_PASS":"not json"}"#).is_err());
        assert!(serde_json::from_str::<TaskFile>(r#"{"timeout":"soon"}"#).is_err());
    }

    #[test]
    fn id_files() {
        assert_eq!(parse_id_file("a\n\n# c\n b \n").unwrap(), ["a", "b"]);
        assert_eq!(parse_id_file(" [\"a b\", \"c\"]").unwrap(), ["a b", "c"]);
        assert!(parse_id_file("[oops").is_err());
    }

    #[test]
    fn durations_and_env() {
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("x").is_err());
        assert_eq!(parse_env("A=b=c").unwrap(), ("A".into(), "b=c".into()));
        assert!(parse_env("=x").is_err());
        assert!(parse_env("nope").is_err());
    }

    #[test]
    fn relative_paths_follow_the_task_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(
            &path,
            "repo_path = \"repo\"\ntest_patch_file = \"/abs/tp.diff\"\n",
        )
        .unwrap();
        let t = TaskFile::load(&path).unwrap();
        assert_eq!(t.repo_path.unwrap(), dir.path().join("repo"));
        assert_eq!(t.test_patch_file.unwrap(), PathBuf::from("/abs/tp.diff"));
        std::fs::write(&path, "base = [").unwrap();
        let err = TaskFile::load(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&path.display().to_string()) && err.contains("invalid TOML"),
            "{err}"
        );
    }
}
