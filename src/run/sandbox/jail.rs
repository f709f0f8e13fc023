//! One side's confinement: where its checkout, reports and scripts are, as the host and as
//! the commands see them, and the command line that runs a script there. What differs by
//! backend is asked of its [`Confined`].

use super::Sandbox;
use super::backend::Confined;
use super::paths::Paths;
use crate::run::{Limits, process};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One command, ready for [`process::run`](crate::run::process::run).
#[derive(Debug, Clone)]
pub struct Launch {
    /// Where its script is to be written.
    pub script_file: PathBuf,
    /// The program and its arguments, which run that script.
    pub argv: Vec<OsString>,
    /// Variables for the program's environment, and those it must not inherit.
    pub env: (Vec<(String, String)>, Vec<String>),
    /// The limits its process gets on the host (`None` in a container, which has its own).
    pub limits: Option<Limits>,
    /// The variables it inherits ([`process::Spec::pass_env`](crate::run::process::Spec)):
    /// the given names on the host and in bwrap; everything for a container engine's client,
    /// whose command inside gets the task's variables alone.
    pub pass_env: Option<Vec<String>>,
}

impl Launch {
    /// The command, ready to run `script` in `cwd` for at most `timeout`, its logs
    /// `dir/log.stdout.log` and `dir/log.stderr.log`; `hold`: a descriptor it keeps open.
    pub fn spec(
        self,
        script: String,
        cwd: &Path,
        timeout: Duration,
        (dir, log): (&Path, &str),
        hold: Option<std::os::fd::RawFd>,
    ) -> process::Spec {
        process::Spec {
            script,
            script_file: self.script_file,
            argv: self.argv,
            cwd: cwd.to_path_buf(),
            env: self.env.0,
            env_remove: self.env.1,
            timeout,
            stdout: dir.join(format!("{log}.stdout.log")),
            stderr: dir.join(format!("{log}.stderr.log")),
            hold_open: hold,
            limits: self.limits,
            pass_env: self.pass_env,
        }
    }
}

/// A side's sandbox, open for its commands.
#[derive(Debug)]
pub struct Jail {
    /// The backend's side of it (a container is removed when this is dropped).
    inside: Box<dyn Confined>,
    paths: Paths,
    network: bool,
    limits: Limits,
}

impl Jail {
    /// Open a side's sandbox. `network`: whether its tests get the network; `setup`: whether a
    /// setup command runs first, which always gets it (it installs what the tests need).
    pub async fn open(
        sandbox: &Sandbox,
        mut paths: Paths,
        network: bool,
        setup: bool,
        limits: Limits,
    ) -> Result<Jail, String> {
        for dir in [&paths.out, &paths.scripts] {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let inside = sandbox
            .backend()
            .open(&mut paths, network || setup, limits)
            .await?;
        // Only what exists can be covered, or brought back (a file too: a virtualenv's
        // `pyvenv.cfg`, a script the command names).
        paths.hidden.retain(|p| p.is_dir());
        paths.readonly.retain(|p| p.exists());
        Ok(Jail {
            inside,
            paths,
            network,
            limits,
        })
    }

    /// The checkout, as the commands see it (what `{workdir}` becomes).
    pub fn workdir(&self) -> PathBuf {
        self.inside.workdir(&self.paths)
    }

    /// A file of the report directory: its path on the host, and as the commands see it (what
    /// `{junit}` becomes).
    pub fn out(&self, name: &str) -> (PathBuf, PathBuf) {
        let seen = self.inside.out_dir(&self.paths).join(name);
        (self.paths.out.join(name), seen)
    }

    /// Write a runner's own files into the scripts directory, read-only to the commands;
    /// returns that directory as the commands see it.
    pub fn support(&self, files: &[(&str, &str)]) -> std::io::Result<String> {
        for (name, text) in files {
            std::fs::write(self.paths.scripts.join(name), text)?;
        }
        Ok(self.inside.scripts_dir(&self.paths).display().to_string())
    }

    /// How to run a script, written to the scripts directory as `name.sh`, with the network
    /// if `network` (the setup command) or if the tests may have it; `writable`: host
    /// directories it alone may write besides the checkout (a preset's dependency cache, for
    /// its download step; a container has its own).
    pub fn launch(
        &self,
        name: &str,
        env: (Vec<(String, String)>, Vec<String>),
        network: bool,
        writable: &[PathBuf],
        pass_env: &[String],
    ) -> Launch {
        let file = self.paths.scripts.join(format!("{name}.sh"));
        let network = network || self.network;
        let (argv, env) = self.inside.argv(&self.paths, &file, env, network, writable);
        let on_host = self.inside.on_host();
        Launch {
            script_file: file,
            argv,
            env,
            limits: on_host.then_some(self.limits),
            pass_env: on_host.then(|| pass_env.to_vec()),
        }
    }

    /// A command line of [`Jail::launch`] made to wait for a byte on descriptor `fd` once its
    /// sandbox is built ([`process::prestart`](crate::run::process::prestart)); `None` where
    /// the backend has no such gate.
    pub fn gated(&self, argv: &[OsString], fd: std::os::fd::RawFd) -> Option<Vec<OsString>> {
        self.inside.gated(argv, fd)
    }

    /// Done with the setup command: the tests lose the network it had.
    pub async fn end_setup(&self) -> Result<(), String> {
        self.inside.end_setup(self.network).await
    }

    /// What a failed command's output names that exists on the host but that this sandbox
    /// hides, with why and how to show it; empty when nothing is hidden (as on the host).
    pub fn hidden_hint(&self, output: &str) -> String {
        self.inside.hidden_hint(&self.paths, output)
    }

    /// After a command that did not end by itself (timed out, or its client was killed):
    /// nothing it started may still run. (On the host and in bwrap its process group and
    /// namespace are gone already; in a container a command that ends kills what it left.)
    pub async fn settle(&self) {
        self.inside.settle().await;
    }
}
