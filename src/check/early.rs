//! A side's sandbox built while its checkout is still being written: the first command
//! started ahead, held at the sandbox's gate, and let through once the checkout is ready.
//!
//! bwrap takes about 10 ms to build a sandbox (its namespaces, a hundred mounts), which on a
//! sub-second suite is most of what a check adds besides the checkout; the two need not wait
//! for each other. Only where the first command is the tests (no setup, no download step, no
//! pool slot, whose reset decides what the sandbox must show) and the backend has a gate.

use super::plan::Plan;
use crate::run::preset::FetchStep;
use crate::run::sandbox::Paths;
use crate::run::{Jail, process};
use std::path::{Path, PathBuf};

/// A side's sandbox, open, with its first command waiting at the gate.
pub(super) struct Early {
    /// Declared first: dropped unreleased (the checkout failed, the patch did not apply),
    /// it is killed before anything else of the side goes.
    pub(super) gated: process::Gated,
    pub(super) jail: Jail,
    pub(super) env: (Vec<(String, String)>, Vec<String>),
}

impl Plan {
    /// Whether a side's first command can start before its checkout is written: it is the
    /// tests (no setup, no download step, no pool slot, whose reset decides what the sandbox
    /// must show), and the sandbox has a gate.
    pub(super) fn starts_early(&self) -> bool {
        let downloads = matches!(
            self.command.fetch().map(|f| f.step),
            Some(FetchStep::Script(_))
        );
        self.sandbox.has_gate()
            && self.settings.setup_cmd.is_none()
            && self.settings.pool.is_none()
            && !downloads
    }

    /// Open the side's sandbox in `dir` (its checkout to be `dir/work`) and start its test
    /// command at the gate. `None` where it [`starts_early`](Plan::starts_early) not, or
    /// could not: the side then starts as it would have.
    ///
    /// The command starts outside its control groups, which a launcher joins meanwhile (the
    /// kernel's wait at a first join, see `Launcher`); it is moved into them as soon as the
    /// launcher is in, still while the checkout is written.
    pub(super) async fn early_start(&self, dir: &Path, hidden: &[PathBuf]) -> Option<Box<Early>> {
        if !self.starts_early() {
            return None;
        }
        let job = self.tests_job();
        let workdir = dir.join("work");
        // The sandbox binds the checkout's directory: it exists, empty, before it is written.
        std::fs::create_dir_all(&workdir).ok()?;
        let paths: Paths = self.paths(dir, &workdir, hidden);
        // Its groups, joined by a launcher's thread while the sandbox is built.
        let launcher = self.launcher()?;
        let (jail, env) = self.open_jail(paths, false, &job).await.ok()?;
        // The first attempt's command as `Attempts` makes it, but its script, written at
        // release.
        let spec = jail
            .launch("test", env.clone(), false, &[], &self.pass_env_for())
            .spec(
                String::new(),
                &workdir,
                self.settings.timeout,
                (dir, "test"),
                None,
            );
        let gated = process::prestart(&spec, launcher, |fd| jail.gated(&spec.argv, fd)).await;
        Some(Box::new(Early {
            gated: gated.ok()??,
            jail,
            env,
        }))
    }
}
