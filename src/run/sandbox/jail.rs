//! One side's confinement: where its checkout, reports and scripts are, as the host and as
//! the commands see them, and the command line that runs a script there.

use super::container::{self, Container};
use super::paths::Paths;
use super::{Sandbox, bwrap};
use crate::run::Limits;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

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

/// A side's sandbox, open for its commands.
#[derive(Debug)]
pub struct Jail {
    inside: Inside,
    paths: Paths,
    network: bool,
    limits: Limits,
}

/// Where a jail's commands run.
#[derive(Debug)]
enum Inside {
    Host,
    Bwrap,
    /// The container is removed when the jail is dropped.
    Container(super::Image, Container),
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
        if *sandbox == Sandbox::Bwrap {
            let inherited = std::env::var_os("PATH").unwrap_or_default();
            let dirs = paths
                .tools
                .iter()
                .cloned()
                .chain(std::env::split_paths(&inherited));
            let path = std::env::join_paths(dirs).unwrap_or(inherited);
            paths
                .readonly
                .extend(bwrap::path_tools(&path, &paths.hidden));
            let named = bwrap::named_paths(&paths.named, &paths.hidden);
            paths.readonly.extend(named);
        }
        // Only what exists can be covered, or brought back (a file too: a virtualenv's
        // `pyvenv.cfg`, a script the command names).
        paths.hidden.retain(|p| p.is_dir());
        paths.readonly.retain(|p| p.exists());
        let inside = match sandbox {
            Sandbox::None => Inside::Host,
            Sandbox::Bwrap => Inside::Bwrap,
            Sandbox::Container(image) => Inside::Container(
                image.clone(),
                Container::start(image, &paths, network || setup, limits).await?,
            ),
        };
        Ok(Jail {
            inside,
            paths,
            network,
            limits,
        })
    }

    /// The checkout, as the commands see it (what `{workdir}` becomes).
    pub fn workdir(&self) -> PathBuf {
        match &self.inside {
            Inside::Container(image, _) => image.workdir.clone(),
            Inside::Bwrap => bwrap::workdir_inside(&self.paths),
            Inside::Host => self.paths.workdir.clone(),
        }
    }

    /// A file of the report directory: its path on the host, and as the commands see it (what
    /// `{junit}` becomes).
    pub fn out(&self, name: &str) -> (PathBuf, PathBuf) {
        let host = self.paths.out.join(name);
        match &self.inside {
            Inside::Container(..) => (host, Path::new(container::OUT).join(name)),
            Inside::Host | Inside::Bwrap => (host.clone(), host),
        }
    }

    /// Write a runner's own files into the scripts directory, read-only to the commands;
    /// returns that directory as the commands see it.
    pub fn support(&self, files: &[(&str, &str)]) -> std::io::Result<String> {
        for (name, text) in files {
            std::fs::write(self.paths.scripts.join(name), text)?;
        }
        Ok(match &self.inside {
            Inside::Container(..) => container::SCRIPTS.to_string(),
            Inside::Host | Inside::Bwrap => self.paths.scripts.display().to_string(),
        })
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
        let (argv, env) = match &self.inside {
            Inside::Container(image, container) => {
                let seen = Path::new(container::SCRIPTS).join(format!("{name}.sh"));
                // The engine's client keeps the user's environment; the task's goes inside.
                let argv = container.exec_argv(&seen, &image.workdir, &env.0);
                (argv, (Vec::new(), Vec::new()))
            }
            Inside::Bwrap => {
                let argv = bwrap::argv(&self.paths, &file, network, writable);
                (argv, env)
            }
            Inside::Host => (vec!["sh".into(), file.clone().into()], env),
        };
        let (limits, pass_env) = match &self.inside {
            Inside::Container(..) => (None, None),
            Inside::Host | Inside::Bwrap => (Some(self.limits), Some(pass_env.to_vec())),
        };
        Launch {
            script_file: file,
            argv,
            env,
            limits,
            pass_env,
        }
    }

    /// Done with the setup command: the tests lose the network it had.
    pub async fn end_setup(&self) -> Result<(), String> {
        match &self.inside {
            Inside::Container(_, c) if !self.network => c.disconnect().await,
            _ => Ok(()),
        }
    }

    /// What a failed command's output names that exists on the host but that this sandbox
    /// hides, with why and how to show it; empty when nothing is hidden (as on the host).
    pub fn hidden_hint(&self, output: &str) -> String {
        let Inside::Bwrap = self.inside else {
            return String::new();
        };
        let hidden = bwrap::hidden_paths(&self.paths, &super::named_in([output]));
        if hidden.is_empty() {
            return String::new();
        }
        let names: Vec<String> = hidden.iter().map(|p| p.display().to_string()).collect();
        format!(
            "\n(the bwrap sandbox hides {}, which the host has: the commands get a private \
             /tmp and an empty home (your toolchains' directories come back read-only) and do \
             not see patchgrade's own directories, so that code under test cannot reach other \
             runs or your files there; show a path with --sandbox-ro PATH or --sandbox-rw \
             PATH, or run with --sandbox none)",
            names.join(", ")
        )
    }

    /// After a command that did not end by itself (timed out, or its client was killed):
    /// nothing it started may still run. (On the host and in bwrap its process group and
    /// namespace are gone already; in a container a command that ends kills what it left.)
    pub async fn settle(&self) {
        if let Inside::Container(_, c) = &self.inside {
            c.settle().await;
        }
    }
}
