//! Validation: every input of a check checked, and resolved into the one [`Plan`] the stages
//! read, before anything is created.

use super::Error;
use super::builder::Check;
use super::plan::Plan;
use crate::judge::verdict::TaskInfo;
use crate::run::preset::{self, is_test_file};
use crate::run::{Sandbox, TestCommand};
use crate::task::validate_ids;
use crate::workspace::{Patch, Source};
use std::path::PathBuf;
use std::sync::Arc;

impl Check {
    /// Check the task's inputs (repository, base, test patch, ids, command, sandbox) and run
    /// nothing: what a server does when it starts, so that a bad task is said once, at start,
    /// and not at every call.
    pub fn validate_task(&self) -> Result<(), Error> {
        self.validate().map(|_| ())
    }

    /// Check every input before anything is created.
    pub(super) fn validate(&self) -> Result<Plan, Error> {
        let (f2p, p2p) = validate_ids(&self.settings.f2p, &self.settings.p2p)?;
        self.validate_inputs(f2p, p2p)
    }

    /// Check every input but the ids, which are given checked.
    pub(super) fn validate_inputs(
        &self,
        f2p: Vec<String>,
        p2p: Vec<String>,
    ) -> Result<Plan, Error> {
        let command = self.settings.command.clone().ok_or(Error::NoCommand)?;
        if self.settings.timeout.is_zero() {
            return Err(Error::ZeroTimeout);
        }
        if self.settings.limits.memory == 0 || self.settings.limits.pids == 0 {
            return Err(Error::ZeroLimit);
        }
        for (path, writable) in &self.settings.sandbox_paths {
            if std::fs::symlink_metadata(path).is_err() {
                let flag = if *writable {
                    "--sandbox-rw"
                } else {
                    "--sandbox-ro"
                };
                return Err(Error::SandboxPath {
                    path: path.clone(),
                    flag,
                });
            }
        }
        let parse = |(origin, text): &(String, Vec<u8>)| {
            Patch::parse(text).map_err(|reason| Error::Patch {
                origin: origin.clone(),
                reason,
            })
        };
        let candidate = parse(&self.settings.patch)?;
        let test_patch = match &self.settings.test_patch {
            Some(tp) => parse(tp)?,
            None => None,
        };
        if self.settings.repo.to_str().is_none() {
            return Err(Error::NotUtf8(self.settings.repo.clone()));
        }
        let source = Source::resolve(&self.settings.repo, &self.settings.base)?;
        // The test patch's test files, which some runners run whole (SWE-bench's directives).
        let test_files = match (&test_patch, command.runs_test_files()) {
            (Some(tp), true) => tp
                .files()
                .iter()
                .filter(|f| is_test_file(f))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let memo = self.settings.cache.as_ref().map(|c| c.dir().join("probes"));
        let sandbox = Sandbox::resolve(
            self.settings.sandbox,
            self.settings.image.as_deref(),
            self.settings.image_workdir.as_deref(),
            memo.as_deref(),
        )?;
        let shown = self
            .settings
            .sandbox_paths
            .iter()
            .map(|(p, w)| (std::path::absolute(p).unwrap_or_else(|_| p.clone()), *w))
            .collect();
        // Every runner's test files and configuration are protected, whichever runs: a
        // candidate has no reason to edit another runner's either.
        let protection = self
            .settings
            .protection
            .with(&preset::protected_globs(), &preset::runner_sections())?;
        Ok(Plan {
            settings: self.settings.clone(),
            protection: Arc::new(protection),
            host_paths: self.host_paths(&command, &source),
            shown,
            sandbox,
            source,
            candidate,
            test_patch,
            command,
            test_files,
            downstream: None,
            f2p,
            p2p,
        })
    }

    /// The names of the variables the commands get from the user: those of the environment
    /// that pass, and `--env`'s; never their values.
    pub(super) fn env_names(&self, plan: &Plan) -> Vec<String> {
        let names = plan.pass_env_for();
        let mut passed: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .filter(|k| crate::run::process::passes(&names, k))
            .chain(self.settings.env.iter().map(|(k, _)| k.clone()))
            .collect();
        passed.sort();
        passed.dedup();
        passed
    }

    /// The host paths the user named: in the test and setup commands, `--python`, the
    /// `--env` values, and where the base tree's links point.
    fn host_paths(&self, command: &TestCommand, source: &Source) -> Vec<PathBuf> {
        let python = self.settings.python.as_deref().and_then(|p| p.to_str());
        let texts = [command.template().as_str()]
            .into_iter()
            .chain(self.settings.setup_cmd.as_deref())
            .chain(python)
            .chain(self.settings.env.iter().map(|(_, v)| v.as_str()));
        let mut paths = crate::run::sandbox::named_in(texts);
        paths.extend(source.absolute_link_targets());
        paths
    }

    pub(super) fn task_info(&self, plan: &Plan) -> TaskInfo {
        TaskInfo {
            instance_id: self.settings.instance_id.clone(),
            repo: Some(plan.source.repo_dir.clone()),
            repo_name: self.settings.repo_name.clone(),
            base: Some(self.settings.base.clone()),
            base_commit: Some(plan.source.commit.to_string()),
            test_cmd: Some(plan.command.template().as_str().to_string()),
            ids: plan.command.ids(),
        }
    }
}
