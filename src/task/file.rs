//! Task files: the inputs of a check in TOML or JSON, including SWE-bench instances unchanged.

use super::parse::{parse_duration, parse_env};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A task: what a patch is graded against. Every field is optional, because a task is also one
/// *layer* of several that say what to do: for `check`, its flags over a task file; for
/// `batch`, a dataset row over its repository's config entry, the config's defaults and the
/// flags. [`TaskFile::over`] is the one rule that stacks them.
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
    /// Fail-to-pass ids (`None`: this layer does not say).
    #[serde(default, alias = "FAIL_TO_PASS", deserialize_with = "id_list")]
    pub f2p: Option<Vec<String>>,
    /// Pass-to-pass ids (`None`: this layer does not say).
    #[serde(default, alias = "PASS_TO_PASS", deserialize_with = "id_list")]
    pub p2p: Option<Vec<String>>,
    /// Test command template.
    pub test_cmd: Option<String>,
    /// Preset runner name.
    pub runner: Option<String>,
    /// Id syntax of a custom `test_cmd` (a runner name or `classname.name`).
    pub ids: Option<String>,
    /// Per-command timeout.
    #[serde(default, deserialize_with = "timeout")]
    pub timeout: Option<Duration>,
    /// Reruns of the tests that did not pass.
    pub retries: Option<usize>,
    /// Environment for the test command.
    #[serde(default, deserialize_with = "env")]
    pub env: Vec<(String, String)>,
    /// Setup command.
    pub setup_cmd: Option<String>,
    /// Run the setup command once per pool slot and base, not before every run.
    pub setup_once: Option<bool>,
    /// Where the commands run: `auto`, `none`, `bwrap`, `docker`, `podman`.
    pub sandbox: Option<String>,
    /// The container image the commands run in.
    pub image: Option<String>,
    /// Where the checkout is mounted in the image (default `/testbed`).
    pub image_workdir: Option<PathBuf>,
    /// Whether the tests get the network.
    pub network: Option<bool>,
    /// Each command's memory limit: `256M`, `2G`, or bytes.
    #[serde(default, deserialize_with = "size")]
    pub memory: Option<String>,
    /// Each command's limit of processes and threads.
    pub pids: Option<u64>,
    /// Variables of the environment passed to the commands besides the default ones.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Host paths the sandbox shows read-only (relative to the task file).
    #[serde(default)]
    pub sandbox_ro: Vec<PathBuf>,
    /// Host paths the sandbox shows writable (relative to the task file).
    #[serde(default)]
    pub sandbox_rw: Vec<PathBuf>,
    /// Whose rules grade the observations: `patchgrade` (default) or `swebench`.
    pub scoring: Option<String>,
    /// The project's version, as SWE-bench's rows give it: picks the config's
    /// `[repos."owner/name".versions."X.Y"]` entry.
    pub version: Option<String>,
    /// The Python interpreter the commands run (its directory first on `PATH`).
    pub python: Option<PathBuf>,
    /// Downstream tests: `auto`, `coverage`, `imports`, `off`, or a file of ids (relative to
    /// the task file).
    pub downstream: Option<String>,
    /// At most this many downstream tests (or test files found by imports).
    pub downstream_max: Option<usize>,
    /// Count the downstream tests as P2P tests too.
    pub downstream_counts_as_p2p: Option<bool>,
}

/// The `downstream` values that are not a file.
pub const DOWNSTREAM_MODES: [&str; 5] = ["auto", "coverage", "imports", "off", "none"];

/// A task file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct TaskError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: TaskProblem,
}

/// What is wrong with a task.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskProblem {
    /// It cannot be read.
    #[error("cannot read: {0}")]
    Read(#[source] std::io::Error),
    /// Not TOML.
    #[error("invalid TOML: {0}")]
    Toml(String),
    /// Not JSON.
    #[error("invalid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// Two test patches, inline and from a file: which one holds the hidden tests would be a
    /// guess.
    #[error("both test_patch and test_patch_file are given; give one")]
    TwoTestPatches,
}

impl TaskFile {
    /// Read a task file; relative paths in it are taken relative to its directory.
    pub fn load(path: &Path) -> Result<TaskFile, TaskError> {
        let fail = |problem| TaskError {
            path: path.to_path_buf(),
            problem,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(TaskProblem::Read(e)))?;
        let is_toml = path.extension().is_some_and(|e| e == "toml");
        let mut task: TaskFile = if is_toml {
            toml::from_str(&text).map_err(|e| fail(TaskProblem::Toml(e.message().to_string())))?
        } else {
            serde_json::from_str(&text).map_err(|e| fail(TaskProblem::Json(e)))?
        };
        task.validate().map_err(fail)?;
        task.relative_to(path.parent().unwrap_or(Path::new("")));
        Ok(task)
    }

    /// What no reader of one task can settle: two test patches.
    pub fn validate(&self) -> Result<(), TaskProblem> {
        if self.test_patch.is_some() && self.test_patch_file.is_some() {
            return Err(TaskProblem::TwoTestPatches);
        }
        Ok(())
    }

    /// This layer over `below`: what this layer says wins, field by field, with two groups
    /// taken whole from the layer that sets any part of them, because their parts only mean
    /// something together:
    /// - the test command (`runner`, `test_cmd`): a template must not take a runner, or a
    ///   runner a template, from another layer; `ids` comes from the first layer that sets it,
    ///   except that ids set beside another command (in a lower layer) stay with it;
    /// - the test patch (`test_patch`, `test_patch_file`).
    ///
    /// The environment adds up: `below`'s variables, then this layer's, so that this layer's
    /// value wins where both set a key. So do the paths the sandbox shows (`sandbox_ro`,
    /// `sandbox_rw`): every layer's.
    pub fn over(self, below: TaskFile) -> TaskFile {
        let command_here = self.runner.is_some() || self.test_cmd.is_some();
        let command_below = below.runner.is_some() || below.test_cmd.is_some();
        let (runner, test_cmd, ids) = match (command_here, command_below) {
            // Below's ids went with below's command.
            (true, true) => (self.runner, self.test_cmd, self.ids),
            (true, false) => (self.runner, self.test_cmd, self.ids.or(below.ids)),
            (false, _) => (below.runner, below.test_cmd, self.ids.or(below.ids)),
        };
        let patch_here = self.test_patch.is_some() || self.test_patch_file.is_some();
        let (test_patch, test_patch_file) = if patch_here {
            (self.test_patch, self.test_patch_file)
        } else {
            (below.test_patch, below.test_patch_file)
        };
        let mut env = below.env;
        env.extend(self.env);
        let mut sandbox_ro = below.sandbox_ro;
        sandbox_ro.extend(self.sandbox_ro);
        let mut sandbox_rw = below.sandbox_rw;
        sandbox_rw.extend(self.sandbox_rw);
        TaskFile {
            instance_id: self.instance_id.or(below.instance_id),
            repo: self.repo.or(below.repo),
            repo_path: self.repo_path.or(below.repo_path),
            base: self.base.or(below.base),
            patch_file: self.patch_file.or(below.patch_file),
            test_patch,
            test_patch_file,
            f2p: self.f2p.or(below.f2p),
            p2p: self.p2p.or(below.p2p),
            test_cmd,
            runner,
            ids,
            timeout: self.timeout.or(below.timeout),
            retries: self.retries.or(below.retries),
            env,
            setup_cmd: self.setup_cmd.or(below.setup_cmd),
            setup_once: self.setup_once.or(below.setup_once),
            sandbox: self.sandbox.or(below.sandbox),
            image: self.image.or(below.image),
            image_workdir: self.image_workdir.or(below.image_workdir),
            network: self.network.or(below.network),
            sandbox_ro,
            sandbox_rw,
            memory: self.memory.or(below.memory),
            pass_env: below.pass_env.into_iter().chain(self.pass_env).collect(),
            pids: self.pids.or(below.pids),
            scoring: self.scoring.or(below.scoring),
            version: self.version.or(below.version),
            python: self.python.or(below.python),
            downstream: self.downstream.or(below.downstream),
            downstream_max: self.downstream_max.or(below.downstream_max),
            downstream_counts_as_p2p: self
                .downstream_counts_as_p2p
                .or(below.downstream_counts_as_p2p),
        }
    }

    /// The layers stacked, the first on top.
    pub fn stack(layers: impl IntoIterator<Item = TaskFile>) -> TaskFile {
        let layers: Vec<TaskFile> = layers.into_iter().collect();
        layers
            .into_iter()
            .rev()
            .fold(TaskFile::default(), |below, layer| layer.over(below))
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
        .chain(&mut self.sandbox_ro)
        .chain(&mut self.sandbox_rw)
        {
            if p.is_relative() {
                *p = dir.join(&*p);
            }
        }
        if let Some(d) = self.downstream.as_mut().filter(|d| {
            !DOWNSTREAM_MODES.contains(&d.as_str()) && Path::new(d.as_str()).is_relative()
        }) {
            *d = dir.join(&*d).to_string_lossy().into_owned();
        }
    }
}

/// A size as text (`256M`) or a number of bytes.
fn size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        Text(String),
        Bytes(u64),
    }
    Ok(Some(match Size::deserialize(d)? {
        Size::Text(s) => s,
        Size::Bytes(n) => n.to_string(),
    }))
}

fn id_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Ids {
        List(Vec<String>),
        Encoded(String),
    }
    match Ids::deserialize(d)? {
        Ids::List(v) => Ok(Some(v)),
        // SWE-bench's dataset stores the lists as JSON-encoded strings.
        Ids::Encoded(s) => serde_json::from_str(&s).map(Some).map_err(|e| {
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
        assert_eq!(t.f2p.unwrap(), ["t.py::a"]);
        assert_eq!(t.p2p.unwrap(), ["t.py::b", "t.py::c[x y]"]);
        assert_eq!(t.repo.as_deref(), Some("o/r"));
        assert!(t.patch_file.is_none());
    }

    #[test]
    fn real_arrays_and_toml() {
        let t: TaskFile =
            serde_json::from_str(r#"{"FAIL_TO_PASS":["a"],"PASS_TO_PASS":[]}"#).unwrap();
        assert_eq!(t.f2p.unwrap(), ["a"]);
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
