//! The one conversion from a task to a check, used by every front end (`check`, `batch`, the
//! MCP server): the task says what to grade against, [`CheckOptions`] how checks run.

use super::{BaselineCache, Check, Error};
use crate::run::sandbox::SandboxChoice;
use crate::task::TaskFile;
use crate::util::names::Named;
use crate::workspace::{Protection, WorkdirPool};
use std::path::PathBuf;
use std::sync::Arc;

/// How checks run, whatever the task: what a front end sets from its own options.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Where baselines are kept, if anywhere.
    pub cache: Option<Arc<BaselineCache>>,
    /// Reusable checkouts, if wanted.
    pub pool: Option<WorkdirPool>,
    /// Apply the candidate exactly or not at all.
    pub strict_apply: bool,
    /// Protected paths and what an edit to them does (`None`: the defaults, warn).
    pub protection: Option<Protection>,
}

impl Check {
    /// The check a task describes (stack its layers first with
    /// [`TaskFile::over`]), without its candidate patch: each front end has its own.
    /// The test patch file, if the task names one, is read here; everything else is checked
    /// when the check runs. A task without a repository path is an error: a default (`.`) is
    /// the front end's to give, as a layer.
    pub fn from_task(task: &TaskFile, options: &CheckOptions) -> Result<Check, Error> {
        let task = &task.clone().with_swebench_defaults();
        let Some(repo) = &task.repo_path else {
            return Err(Error::NoRepository {
                instance_id: task.instance_id.clone().unwrap_or_else(|| "task".into()),
                repo: task.repo.clone().unwrap_or_else(|| "no owner/name".into()),
            });
        };
        let mut check = Check::new(repo.clone())
            .base(task.base.clone().unwrap_or_else(|| "HEAD".into()))
            .f2p(task.f2p.clone().unwrap_or_default())
            .p2p(task.p2p.clone().unwrap_or_default())
            .retries(task.retries.unwrap_or(0))
            .strict_apply(options.strict_apply);
        match (&task.test_patch, &task.test_patch_file) {
            (Some(text), None) => check = check.test_patch("test_patch", text.clone()),
            (None, Some(path)) => check = check.test_patch(origin(path), read(path)?),
            (None, None) => {}
            // One layer with both is refused when it is read; stacking keeps one pair.
            (Some(_), Some(_)) => {
                return Err(Error::Task(crate::task::TaskProblem::TwoTestPatches));
            }
        }
        if let Some(command) = task.test_command()? {
            check = check.command(command);
        }
        if let Some(timeout) = task.timeout {
            check = check.timeout(timeout);
        }
        for (k, v) in &task.env {
            check = check.env(k, v);
        }
        if let Some(cmd) = &task.setup_cmd {
            check = check.setup_cmd(cmd);
        }
        if let Some(once) = task.setup_once {
            check = check.setup_once(once);
        }
        if let Some(id) = &task.instance_id {
            check = check.instance_id(id);
        }
        check = sandboxed(check, task)?;
        if let Some(name) = &task.scoring {
            check = check.scoring(name.parse()?);
        }
        if let Some(name) = &task.repo {
            check = check.repo_name(name);
        }
        if let Some(python) = &task.python {
            check = check.python(python);
        }
        if let Some(mode) = &task.downstream {
            check = check.downstream(downstream_mode(mode)?);
        }
        if let Some(n) = task.downstream_max {
            check = check.downstream_max(n);
        }
        if let Some(yes) = task.downstream_counts_as_p2p {
            check = check.downstream_counts_as_p2p(yes);
        }
        if let Some(cache) = &options.cache {
            check = check.baseline_cache(cache.clone());
        }
        if let Some(pool) = &options.pool {
            check = check.workdir_pool(pool.clone());
        }
        if let Some(protection) = &options.protection {
            check = check.protection(protection.clone());
        }
        Ok(check)
    }
}

/// The task's sandbox: its kind, image, network, limits and the host paths it shows.
fn sandboxed(mut check: Check, task: &TaskFile) -> Result<Check, Error> {
    if let Some(name) = &task.sandbox {
        let choice = SandboxChoice::from_name(name).ok_or_else(|| Error::UnknownSandbox {
            name: name.clone(),
            known: SandboxChoice::known(),
        })?;
        check = check.sandbox(choice);
    }
    if let Some(image) = &task.image {
        check = check.image(image);
    }
    if let Some(dir) = &task.image_workdir {
        check = check.image_workdir(dir);
    }
    check = check.network(task.network.unwrap_or(false));
    if let Some(size) = &task.memory {
        let bytes =
            crate::run::limits::parse_size(size).ok_or_else(|| Error::BadMemory(size.clone()))?;
        check = check.memory(bytes);
    }
    if let Some(n) = task.pids {
        check = check.pids(n);
    }
    for name in &task.pass_env {
        check = check.pass_env(name);
    }
    for path in &task.sandbox_ro {
        check = check.sandbox_path(path, false);
    }
    for path in &task.sandbox_rw {
        check = check.sandbox_path(path, true);
    }
    Ok(check)
}

/// A `downstream` value: a mode, or a file of ids (one per line, or a JSON array).
fn downstream_mode(value: &str) -> Result<super::DownstreamMode, Error> {
    use super::DownstreamMode as M;
    Ok(match value {
        "auto" => M::Auto,
        "coverage" => M::Coverage,
        "imports" => M::Imports,
        "off" | "none" => M::Off,
        file => {
            let path = PathBuf::from(file);
            let text = read(&path)?;
            let ids = crate::task::parse_id_file(&String::from_utf8_lossy(&text)).map_err(|e| {
                Error::DownstreamList {
                    path: path.clone(),
                    reason: e.to_string(),
                }
            })?;
            M::List(ids)
        }
    })
}

fn origin(path: &std::path::Path) -> String {
    path.display().to_string()
}

fn read(path: &PathBuf) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Read {
        path: path.clone(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn layer(f: impl FnOnce(&mut TaskFile)) -> TaskFile {
        let mut t = TaskFile::default();
        f(&mut t);
        t
    }

    /// The precedence rule, over the four layers of a batch (task field, config entry,
    /// config defaults, flags) and the two of `check` (flags, task file).
    #[test]
    fn layers_stack_field_by_field_with_the_command_and_test_patch_whole() {
        let task = layer(|t| {
            t.instance_id = Some("o__r-1".into());
            t.test_patch = Some("inline".into());
            t.f2p = Some(vec!["t::a".into()]);
            t.env = vec![("A".into(), "task".into())];
        });
        let entry = layer(|t| {
            t.repo_path = Some("/clones/r".into());
            t.test_cmd = Some("make test {junit} {tests}".into());
            t.ids = Some("go".into());
            t.env = vec![("A".into(), "entry".into()), ("B".into(), "entry".into())];
        });
        let defaults = layer(|t| {
            t.runner = Some("nextest".into());
            t.timeout = Some(Duration::from_secs(60));
            t.test_patch_file = Some("/elsewhere.diff".into());
        });
        let flags = layer(|t| {
            t.runner = Some("pytest".into());
            t.retries = Some(2);
            t.p2p = Some(vec!["t::b".into()]);
        });
        let s = TaskFile::stack([task, entry, defaults, flags]);
        assert_eq!(s.instance_id.as_deref(), Some("o__r-1"));
        assert_eq!(s.repo_path, Some(PathBuf::from("/clones/r")));
        // The command comes whole from the config entry, with its own ids: neither the
        // defaults' nor the flags' runner is mixed into it.
        assert_eq!(
            (s.test_cmd.as_deref(), s.runner.as_deref(), s.ids.as_deref()),
            (Some("make test {junit} {tests}"), None, Some("go"))
        );
        // The test patch comes whole from the task: the defaults' file is not also taken.
        assert_eq!(s.test_patch.as_deref(), Some("inline"));
        assert_eq!(s.test_patch_file, None);
        // Scalars fall through to the first layer that sets them.
        assert_eq!(s.timeout, Some(Duration::from_secs(60)));
        assert_eq!(s.retries, Some(2));
        assert_eq!(s.f2p, Some(vec!["t::a".to_string()]));
        assert_eq!(s.p2p, Some(vec!["t::b".to_string()]));
        // The environment adds up, the higher layer's value last (it wins when applied).
        assert_eq!(
            s.env,
            [
                ("A".to_string(), "entry".to_string()),
                ("B".to_string(), "entry".to_string()),
                ("A".to_string(), "task".to_string()),
            ]
        );
        let command = s.test_command().unwrap().unwrap();
        assert_eq!(command.ids(), crate::observe::IdSyntax::Go);

        // `check`: flags over the task file.
        let file = layer(|t| {
            t.runner = Some("go".into());
            t.ids = Some("go".into());
            t.test_patch_file = Some("/tp.diff".into());
            t.base = Some("main".into());
        });
        let flags = layer(|t| {
            t.test_cmd = Some("run {junit}".into());
            t.test_patch_file = Some("/flag.diff".into());
        });
        let s = flags.over(file);
        // A template from the flags takes neither the file's runner nor its ids.
        assert_eq!(
            (s.test_cmd.as_deref(), s.runner.as_deref(), s.ids.as_deref()),
            (Some("run {junit}"), None, None)
        );
        assert_eq!(s.test_patch_file, Some(PathBuf::from("/flag.diff")));
        assert_eq!(s.base.as_deref(), Some("main"));
        // Ids set beside no command apply to the command of a layer above.
        let s = layer(|t| t.test_cmd = Some("x {junit}".into()))
            .over(layer(|t| t.ids = Some("java".into())));
        assert_eq!(s.ids.as_deref(), Some("java"));
    }

    #[test]
    fn a_task_without_a_repository_is_named() {
        let task = layer(|t| {
            t.instance_id = Some("lost".into());
            t.repo = Some("o/r".into());
        });
        let e = Check::from_task(&task, &CheckOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no repository for `lost` (o/r): the task has no repo_path"
        );
    }
}
