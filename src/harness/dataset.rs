//! The offline harness's inputs: tasks (SWE-bench instances), predictions (SWE-bench's
//! prediction format) and the config file that supplies what a task leaves out.

use crate::task::{TaskFile, parse_duration};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An input file that cannot be used: the file, the line when it is one, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {reason}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct InputError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line (JSONL).
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

fn input_error(path: &Path, line: Option<usize>, reason: impl Into<String>) -> InputError {
    InputError {
        path: path.to_path_buf(),
        line,
        reason: reason.into(),
    }
}

/// One candidate patch for one task, as SWE-bench writes predictions.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Prediction {
    /// The task.
    pub instance_id: String,
    /// The model or agent that wrote it.
    #[serde(default)]
    pub model_name_or_path: Option<String>,
    /// The patch; `null` (the agent gave up) is an empty patch.
    #[serde(default)]
    pub model_patch: Option<String>,
}

/// The records of a JSONL file, a JSON list, or (with `keyed`) a JSON object whose values are
/// records keyed by instance id. Returns each record with its line (JSONL) for messages.
fn records(
    path: &Path,
    keyed: bool,
) -> Result<Vec<(Option<usize>, serde_json::Value)>, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| input_error(path, None, e.to_string()))?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let list: Vec<serde_json::Value> = serde_json::from_str(trimmed)
            .map_err(|e| input_error(path, None, format!("invalid JSON list: {e}")))?;
        return Ok(list.into_iter().map(|v| (None, v)).collect());
    }
    if keyed && trimmed.starts_with('{') {
        // A whole-file object without `instance_id` is keyed by instance id; one with it is a
        // one-line JSONL file.
        if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(trimmed)
            && !map.contains_key("instance_id")
        {
            return Ok(map
                .into_iter()
                .map(|(id, mut v)| {
                    if let serde_json::Value::Object(o) = &mut v {
                        o.entry("instance_id").or_insert(id.into());
                    }
                    (None, v)
                })
                .collect());
        }
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map(|v| (Some(i + 1), v))
                .map_err(|e| input_error(path, Some(i + 1), format!("invalid JSON: {e}")))
        })
        .collect()
}

/// Read predictions: JSONL, a JSON list, or a JSON object keyed by instance id. Two
/// predictions for one task are an error: which one to grade would be a guess.
pub fn read_predictions(path: &Path) -> Result<Vec<Prediction>, InputError> {
    let mut seen: HashMap<String, Option<usize>> = HashMap::new();
    let mut out = Vec::new();
    for (line, value) in records(path, true)? {
        let p: Prediction = serde_json::from_value(value)
            .map_err(|e| input_error(path, line, format!("not a prediction: {e}")))?;
        if p.instance_id.trim().is_empty() {
            return Err(input_error(
                path,
                line,
                "a prediction with an empty `instance_id`",
            ));
        }
        if let Some(first) = seen.insert(p.instance_id.clone(), line) {
            let at = first
                .map(|l| format!(" (first at line {l})"))
                .unwrap_or_default();
            return Err(input_error(
                path,
                line,
                format!("a second prediction for `{}`{at}", p.instance_id),
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// Read tasks: JSONL or a JSON list of SWE-bench instances (plus optional `repo_path`,
/// `test_cmd`/`runner`, `ids`, `env`, `timeout`, `setup_cmd`). Relative paths are relative to
/// the file; every task needs an `instance_id`, once.
pub fn read_tasks(path: &Path) -> Result<Vec<TaskFile>, InputError> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (line, value) in records(path, false)? {
        let mut task: TaskFile = serde_json::from_value(value)
            .map_err(|e| input_error(path, line, format!("not a task: {e}")))?;
        let Some(id) = task.instance_id.clone().filter(|id| !id.trim().is_empty()) else {
            return Err(input_error(
                path,
                line,
                "a task without `instance_id` (or an empty one)",
            ));
        };
        if !seen.insert(id.clone()) {
            return Err(input_error(
                path,
                line,
                format!("task `{id}` appears twice"),
            ));
        }
        task.validate()
            .map_err(|e| input_error(path, line, e.to_string()))?;
        task.relative_to(dir);
        out.push(task);
    }
    Ok(out)
}

/// What a config file gives the tasks of one repository (or, under `[defaults]`, every task).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConfig {
    /// The local clone.
    pub path: Option<PathBuf>,
    /// Preset runner name.
    pub runner: Option<String>,
    /// Test command template.
    pub test_cmd: Option<String>,
    /// Id syntax of a custom `test_cmd`.
    pub ids: Option<String>,
    /// Environment for the commands.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Setup command.
    pub setup_cmd: Option<String>,
    /// Run the setup command once per pool slot and base (`--setup-once`).
    pub setup_once: Option<bool>,
    /// Per-command timeout (`"30m"`, or seconds).
    pub timeout: Option<toml::Value>,
    /// Whose rules grade the observations: `patchgrade` or `swebench`.
    pub scoring: Option<String>,
    /// The Python interpreter the commands run (its directory first on `PATH`).
    pub python: Option<PathBuf>,
    /// Downstream tests: `auto`, `coverage`, `imports`, `off`, or a file of ids.
    pub downstream: Option<String>,
    /// At most this many downstream tests.
    pub downstream_max: Option<usize>,
    /// Count the downstream tests as P2P tests too.
    pub downstream_counts_as_p2p: Option<bool>,
    /// Per version of the project (a task's `version`, as SWE-bench's rows give it): what
    /// differs from this entry, such as the interpreter (`[repos."o/n".versions."4.2"]`).
    #[serde(default)]
    pub versions: BTreeMap<String, RepoConfig>,
}

/// `patchgrade.toml`: `[defaults]` for every task, and `[repos."owner/name"]` entries.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Defaults for every task (a `path` there is ignored: it names one repository).
    #[serde(default)]
    pub defaults: RepoConfig,
    /// Per repository (`owner/name`, as a task's `repo`).
    #[serde(default)]
    pub repos: BTreeMap<String, RepoConfig>,
}

impl Config {
    /// Read a config file; relative paths are relative to it.
    pub fn load(path: &Path) -> Result<Config, InputError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| input_error(path, None, e.to_string()))?;
        let mut config: Config = toml::from_str(&text)
            .map_err(|e| input_error(path, None, format!("invalid config: {}", e.message())))?;
        let dir = path.parent().unwrap_or(Path::new(""));
        for entry in std::iter::once(&mut config.defaults).chain(config.repos.values_mut()) {
            entry
                .normalize(dir)
                .map_err(|e| input_error(path, None, e))?;
        }
        Ok(config)
    }

    /// The task stacked over what the config gives it: its repository's entry for its
    /// version, its repository's entry, then the defaults, then a clone in `repos_dir` (`DIR/owner__name`), then `flags` (what the caller
    /// gives every task that sets nothing), by the one precedence rule ([`TaskFile::over`]).
    pub fn complete(&self, task: TaskFile, repos_dir: Option<&Path>, flags: &TaskFile) -> TaskFile {
        let entry = task.repo.as_ref().and_then(|r| self.repos.get(r));
        let version = entry
            .zip(task.version.as_ref())
            .and_then(|(e, v)| e.versions.get(v));
        let clone = TaskFile {
            repo_path: task
                .repo
                .as_ref()
                .and_then(|repo| Some(repos_dir?.join(repo.replace('/', "__")))),
            ..TaskFile::default()
        };
        let mut defaults = self.defaults.layer();
        // A path names one repository, so the defaults' is not every task's.
        defaults.repo_path = None;
        TaskFile::stack([
            task,
            version.map(RepoConfig::layer).unwrap_or_default(),
            entry.map(RepoConfig::layer).unwrap_or_default(),
            defaults,
            clone,
            flags.clone(),
        ])
    }
}

impl RepoConfig {
    /// Paths made relative to the config's directory, and timeouts checked, in this entry and
    /// its versions'.
    fn normalize(&mut self, dir: &Path) -> Result<(), String> {
        if let Some(p) = self.path.as_mut().filter(|p| p.is_relative()) {
            *p = dir.join(&*p);
        }
        // A bare name (`python3.9`) is looked up on PATH; a relative path is the config's.
        if let Some(p) = self
            .python
            .as_mut()
            .filter(|p| p.is_relative() && p.components().count() > 1)
        {
            *p = dir.join(&*p);
        }
        if let Some(t) = &self.timeout {
            timeout_of(t)?;
        }
        for version in self.versions.values_mut() {
            version.normalize(dir)?;
        }
        Ok(())
    }

    /// This entry as a layer of a task.
    pub fn layer(&self) -> TaskFile {
        TaskFile {
            repo_path: self.path.clone(),
            runner: self.runner.clone(),
            test_cmd: self.test_cmd.clone(),
            ids: self.ids.clone(),
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            setup_cmd: self.setup_cmd.clone(),
            setup_once: self.setup_once,
            scoring: self.scoring.clone(),
            python: self.python.clone(),
            downstream: self.downstream.clone(),
            downstream_max: self.downstream_max,
            downstream_counts_as_p2p: self.downstream_counts_as_p2p,
            // Checked when the config was loaded.
            timeout: self.timeout.as_ref().and_then(|t| timeout_of(t).ok()),
            ..TaskFile::default()
        }
    }
}

fn timeout_of(value: &toml::Value) -> Result<Duration, String> {
    match value {
        toml::Value::Integer(s) if *s > 0 => Ok(Duration::from_secs(*s as u64)),
        toml::Value::String(s) => parse_duration(s).map_err(|e| e.to_string()),
        other => Err(format!("invalid timeout `{other}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn predictions_in_all_three_shapes() {
        let dir = tempfile::tempdir().unwrap();
        let line = r#"{"instance_id": "a", "model_name_or_path": "m", "model_patch": "diff"}"#;
        let jsonl = file(
            dir.path(),
            "p.jsonl",
            &format!("{line}\n\n{{\"instance_id\": \"b\", \"model_patch\": null}}\n"),
        );
        let list = file(dir.path(), "p.json", &format!("[{line}]"));
        let keyed = file(
            dir.path(),
            "k.json",
            r#"{"a": {"model_name_or_path": "m", "model_patch": "diff"}}"#,
        );
        let single = file(dir.path(), "s.jsonl", line);
        let a = Prediction {
            instance_id: "a".into(),
            model_name_or_path: Some("m".into()),
            model_patch: Some("diff".into()),
        };
        let got = read_predictions(&jsonl).unwrap();
        assert_eq!(got[0], a);
        assert_eq!(got[1].model_patch, None);
        for p in [&list, &keyed, &single] {
            assert_eq!(
                read_predictions(p).unwrap(),
                std::slice::from_ref(&a),
                "{}",
                p.display()
            );
        }
    }

    #[test]
    fn bad_predictions_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(
            dir.path(),
            "p.jsonl",
            "{\"instance_id\": \"a\"}\n{\"instance_id\": \"a\"}\n",
        );
        let e = read_predictions(&p).unwrap_err().to_string();
        assert!(
            e.ends_with("p.jsonl:2: a second prediction for `a` (first at line 1)"),
            "{e}"
        );
        let p = file(dir.path(), "q.jsonl", "{\"instance_id\": \"a\"}\n{oops\n");
        let e = read_predictions(&p).unwrap_err().to_string();
        assert!(e.contains("q.jsonl:2: invalid JSON"), "{e}");
    }

    #[test]
    fn tasks_need_unique_ids_and_take_paths_relative_to_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let t = file(
            dir.path(),
            "t.jsonl",
            "{\"instance_id\": \"x\", \"repo_path\": \"r\", \"FAIL_TO_PASS\": \"[\\\"a\\\"]\"}\n",
        );
        let tasks = read_tasks(&t).unwrap();
        assert_eq!(
            tasks[0].repo_path.as_deref(),
            Some(dir.path().join("r").as_path())
        );
        assert_eq!(tasks[0].f2p.as_deref(), Some(&["a".to_string()][..]));
        let t = file(
            dir.path(),
            "u.jsonl",
            "{\"instance_id\": \"x\"}\n{\"instance_id\": \"x\"}\n",
        );
        assert!(
            read_tasks(&t)
                .unwrap_err()
                .to_string()
                .contains("u.jsonl:2: task `x` appears twice")
        );
        let t = file(dir.path(), "v.jsonl", "{\"repo\": \"o/r\"}\n");
        assert!(
            read_tasks(&t)
                .unwrap_err()
                .to_string()
                .contains("without `instance_id`")
        );
    }

    #[test]
    fn the_example_config_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/patchgrade.toml");
        let config = Config::load(&path).unwrap();
        assert_eq!(config.defaults.runner.as_deref(), Some("pytest"));
        let calc = &config.repos["example/calc"];
        assert_eq!(calc.path, Some(path.parent().unwrap().join("calc")));
        let django = &config.repos["django/django"].versions["4.2"];
        assert!(django.python.is_some());
    }

    #[test]
    fn a_version_entry_overrides_its_repository() {
        let dir = tempfile::tempdir().unwrap();
        let c = file(
            dir.path(),
            "patchgrade.toml",
            "[repos.\"o/r\"]\npath = \"r\"\npython = \"python3\"\nsetup_cmd = \"make\"\n\
             [repos.\"o/r\".versions.\"1.0\"]\npython = \"venvs/one/bin/python\"\n",
        );
        let config = Config::load(&c).unwrap();
        let task = |version: &str| TaskFile {
            repo: Some("o/r".into()),
            version: Some(version.into()),
            ..TaskFile::default()
        };
        let one = config.complete(task("1.0"), None, &TaskFile::default());
        assert_eq!(one.python, Some(dir.path().join("venvs/one/bin/python")));
        assert_eq!(one.setup_cmd.as_deref(), Some("make"));
        // A version with no entry, and a bare name, which is looked up on PATH.
        let two = config.complete(task("2.0"), None, &TaskFile::default());
        assert_eq!(two.python, Some(PathBuf::from("python3")));
    }

    #[test]
    fn config_fills_what_the_task_leaves_out() {
        let dir = tempfile::tempdir().unwrap();
        let c = file(
            dir.path(),
            "patchgrade.toml",
            "[defaults]\nrunner = \"pytest\"\ntimeout = 60\nenv = { A = \"top\", B = \"top\" }\n\
             [repos.\"o/r\"]\npath = \"clones/r\"\nenv = { B = \"repo\" }\nsetup_cmd = \"make\"\n",
        );
        let config = Config::load(&c).unwrap();
        let task = TaskFile {
            repo: Some("o/r".into()),
            env: vec![("A".into(), "task".into())],
            ..TaskFile::default()
        };
        let task = config.complete(task, None, &TaskFile::default());
        assert_eq!(task.repo_path, Some(dir.path().join("clones/r")));
        assert_eq!(task.runner.as_deref(), Some("pytest"));
        assert_eq!(task.setup_cmd.as_deref(), Some("make"));
        assert_eq!(task.timeout, Some(Duration::from_secs(60)));
        // Later entries win when the environment is applied: top, then repo, then task.
        let last = |k: &str| {
            task.env
                .iter()
                .rev()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(last("A").as_deref(), Some("task"));
        assert_eq!(last("B").as_deref(), Some("repo"));
        // A repository's own command is not mixed with the defaults' runner.
        let c = file(
            dir.path(),
            "cmd.toml",
            "[defaults]\nrunner = \"nextest\"\n[repos.\"o/go\"]\ntest_cmd = \"t {junit} {tests}\"\nids = \"go\"\n",
        );
        let go = TaskFile {
            repo: Some("o/go".into()),
            ..TaskFile::default()
        };
        let go = Config::load(&c)
            .unwrap()
            .complete(go, None, &TaskFile::default());
        assert_eq!(
            (
                go.test_cmd.as_deref(),
                go.runner.as_deref(),
                go.ids.as_deref()
            ),
            (Some("t {junit} {tests}"), None, Some("go"))
        );
        // Without an entry, the repository directory names the clone.
        let other = TaskFile {
            repo: Some("x/y".into()),
            ..TaskFile::default()
        };
        let other = config.complete(other, Some(Path::new("/repos")), &TaskFile::default());
        assert_eq!(other.repo_path, Some(PathBuf::from("/repos/x__y")));
        let bad = file(
            dir.path(),
            "bad.toml",
            "[repos.\"o/r\"]\nrunr = \"pytest\"\n",
        );
        let e = Config::load(&bad).unwrap_err().to_string();
        assert!(
            e.contains("bad.toml: invalid config") && e.contains("runr"),
            "{e}"
        );
    }
}
