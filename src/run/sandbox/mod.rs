//! Sandboxes: where a test command runs (on the host, in bubblewrap, or in a container of the
//! task's image) and what it can reach there.
//!
//! Takes the user's [`SandboxChoice`] (and image) and hands on a resolved [`Sandbox`]; for each
//! side of a check a [`Jail`] turns a script into the command line that runs it confined.
//!
//! - [`backend`]: the seam a backend implements, what the pipeline asks of a resolved sandbox
//!   and what a [`Jail`] asks of it once open.
//! - [`host`]: no sandbox.
//! - [`bwrap`]: the host's tree read-only, the checkout and the report directory writable, a
//!   private `/tmp`, no network, every process dying with the run.
//! - [`container`]: a docker or podman container of an [`Image`], one per side, reused by its
//!   commands.
//! - [`jail`]: [`Jail`], one side's confinement, and [`jail::Launch`], one command in it.
//! - [`paths`]: [`Paths`], a side's directories on the host, which every backend confines to.
//!
//! A new backend is a file implementing [`backend`]'s two traits, a [`Sandbox`] variant that
//! [`Sandbox::backend`] maps to it, and its [`SandboxChoice`].

mod backend;
mod bwrap;
mod container;
mod host;
mod jail;
mod paths;

pub use container::{Engine, Image};
pub use jail::Jail;
pub use paths::Paths;

use backend::Backend;

use crate::util::names::Named;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the image's checkout goes when the user does not say: SWE-bench's images keep their
/// environment, editable installs included, at `/testbed`.
pub const DEFAULT_IMAGE_WORKDIR: &str = "/testbed";

/// What the user asked for (`--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxChoice {
    /// A container when an image is given, else bubblewrap when it works here, else none
    /// (with an `unsandboxed` warning).
    #[default]
    Auto,
    /// On the host, as the user.
    None,
    /// In bubblewrap.
    Bwrap,
    /// In a docker container of the image.
    Docker,
    /// In a podman container of the image.
    Podman,
}

impl Named for SandboxChoice {
    const NAMES: &'static [(&'static str, SandboxChoice)] = &[
        ("auto", SandboxChoice::Auto),
        ("none", SandboxChoice::None),
        ("bwrap", SandboxChoice::Bwrap),
        ("docker", SandboxChoice::Docker),
        ("podman", SandboxChoice::Podman),
    ];
}

/// Where the commands of a check run, resolved and checked to work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sandbox {
    /// On the host.
    None,
    /// In bubblewrap.
    Bwrap,
    /// In a container.
    Container(Image),
}

/// Where a check's commands ran, as its verdict records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct Isolation {
    /// `none`, `bwrap`, `docker` or `podman`.
    pub sandbox: String,
    /// The image, for a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Whether the tests had the network (`--network`).
    #[serde(default)]
    pub network: bool,
    /// The variables the commands got from the user, by name (their values are never
    /// recorded): those of the environment that pass (`PATH`, the user, language, time,
    /// certificate authorities, what the runner needs, `--pass-env`), and `--env`'s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
}

/// Why the sandbox asked for cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// Its program is missing or does not work on this machine.
    #[error("sandbox {sandbox} does not work here: {reason}")]
    Unavailable {
        /// Which one.
        sandbox: &'static str,
        /// What trying it said.
        reason: String,
    },
    /// A container sandbox with no image.
    #[error("sandbox {0} runs the tests in a container image, and no image is given")]
    NeedsImage(&'static str),
    /// An image with a sandbox that is not a container.
    #[error("image `{image}` needs a container, and the sandbox is {sandbox}")]
    ImageWithoutContainer {
        /// The image.
        image: String,
        /// The sandbox chosen.
        sandbox: &'static str,
    },
    /// The image is not in the engine's store (it is never pulled behind the user's back).
    #[error("image `{image}` is not present in {engine}: pull or build it first ({reason})")]
    NoImage {
        /// The image.
        image: String,
        /// docker or podman.
        engine: &'static str,
        /// What the engine said.
        reason: String,
    },
    /// The image's workdir is not an absolute path.
    #[error("image workdir `{0}` is not an absolute path")]
    RelativeWorkdir(String),
}

impl Sandbox {
    /// The backend that answers for it: the one place a variant is matched.
    fn backend(&self) -> &dyn Backend {
        match self {
            Sandbox::None => &host::Host,
            Sandbox::Bwrap => &bwrap::Bwrap,
            Sandbox::Container(image) => image,
        }
    }

    /// Where the runs happen, as a cache key says it: the sandbox's name, or a container's
    /// engine and image id (the name can be moved to another image).
    pub fn cache_key(&self) -> String {
        self.backend().cache_key()
    }

    /// Where a build seed was made, as its key says it: the host's tools (in bubblewrap or
    /// not), or an image's.
    pub fn seed_place(&self) -> String {
        self.backend().seed_place()
    }

    /// Whether what ran in it may be kept for later runs (a baseline, a coverage map, a build
    /// seed): not on the host, where the candidate's code ran beside it as the same user and
    /// could have disturbed it.
    pub fn may_keep(&self) -> bool {
        self.backend().may_keep()
    }

    /// Whether a command can be started before its checkout is written, held at a gate
    /// ([`Jail::gated`]).
    pub fn has_gate(&self) -> bool {
        self.backend().has_gate()
    }

    /// Whether the commands run the host's toolchain, whose versions a cache key must probe
    /// (an image's id keys its own).
    pub fn tools_on_host(&self) -> bool {
        self.backend().tools_on_host()
    }

    /// Resolve the user's choice: check that it works here, and find the image. `memo`: where
    /// a probe that succeeded may be remembered for later processes (a directory of the
    /// cache; `None`: probe in every process).
    pub fn resolve(
        choice: SandboxChoice,
        image: Option<&str>,
        image_workdir: Option<&Path>,
        memo: Option<&Path>,
    ) -> Result<Sandbox, SandboxError> {
        let workdir = image_workdir.unwrap_or(Path::new(DEFAULT_IMAGE_WORKDIR));
        if !workdir.is_absolute() {
            return Err(SandboxError::RelativeWorkdir(workdir.display().to_string()));
        }
        let container = |engine: Engine| match image {
            Some(name) => {
                let id = engine.image_id(name)?;
                Ok(Sandbox::Container(Image {
                    engine,
                    name: name.to_string(),
                    id,
                    workdir: workdir.to_path_buf(),
                }))
            }
            None => Err(SandboxError::NeedsImage(engine.name())),
        };
        match (choice, image) {
            (SandboxChoice::Docker, _) => container(Engine::Docker),
            (SandboxChoice::Podman, _) => container(Engine::Podman),
            (SandboxChoice::Auto, Some(_)) => {
                // The engine that answers: docker first, as SWE-bench's images are docker's.
                match Engine::Docker.available() {
                    Ok(()) => container(Engine::Docker),
                    Err(docker) => match Engine::Podman.available() {
                        Ok(()) => container(Engine::Podman),
                        Err(podman) => Err(SandboxError::Unavailable {
                            sandbox: "docker or podman",
                            reason: format!("docker: {docker}; podman: {podman}"),
                        }),
                    },
                }
            }
            (SandboxChoice::None | SandboxChoice::Bwrap, Some(image)) => {
                Err(SandboxError::ImageWithoutContainer {
                    image: image.to_string(),
                    sandbox: choice.name(),
                })
            }
            (SandboxChoice::None, None) => Ok(Sandbox::None),
            (SandboxChoice::Bwrap, None) => match bwrap::available(memo) {
                Ok(()) => Ok(Sandbox::Bwrap),
                Err(reason) => Err(SandboxError::Unavailable {
                    sandbox: "bwrap",
                    reason,
                }),
            },
            (SandboxChoice::Auto, None) => Ok(match bwrap::available(memo) {
                Ok(()) => Sandbox::Bwrap,
                Err(_) => Sandbox::None,
            }),
        }
    }

    /// `none`, `bwrap`, `docker` or `podman`.
    pub fn name(&self) -> &'static str {
        self.backend().name()
    }

    /// What the verdict records.
    pub fn isolation(&self, network: bool) -> Isolation {
        Isolation {
            sandbox: self.name().to_string(),
            image: self.backend().image().map(str::to_string),
            network,
            env: Vec::new(),
        }
    }

    /// Why `auto` found no sandbox, when it did not: for the `unsandboxed` warning.
    pub fn why_bwrap_is_unavailable() -> Option<String> {
        bwrap::available(None).err()
    }
}

/// The absolute paths these texts name literally (a command, an `--env` value, a command's
/// output): each word that starts with `/`, words ending at spaces, quotes, shell operators,
/// `=` and `:` (`PYTHONPATH=/a:/b` names both). Trailing punctuation of prose (`/x/y:` in
/// `sh: 1: /x/y: not found`, `/x/y.`) is not part of the path.
pub fn named_in<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<PathBuf> {
    const SEPARATORS: &[char] = &[
        ' ', '\t', '\n', '\r', '"', '\'', '`', ';', '|', '&', '(', ')', '<', '>', '=', ':', ',',
        '[', ']', '{', '}',
    ];
    let mut found: Vec<PathBuf> = Vec::new();
    for text in texts {
        for word in text.split(SEPARATORS) {
            let word = word.trim_end_matches(['.', '!', '?']);
            if word.starts_with('/') && word.len() > 1 {
                let path = PathBuf::from(word);
                if !found.contains(&path) {
                    found.push(path);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::{Engine, Image, Sandbox, named_in};
    use std::path::PathBuf;

    #[test]
    fn each_backend_says_what_the_pipeline_asks() {
        let image = Sandbox::Container(Image {
            engine: Engine::Podman,
            name: "x:latest".into(),
            id: "sha256:1".into(),
            workdir: "/testbed".into(),
        });
        let answers = |s: &Sandbox| {
            (
                s.cache_key(),
                s.seed_place(),
                s.may_keep(),
                s.tools_on_host(),
            )
        };
        assert_eq!(
            answers(&Sandbox::None),
            ("none".into(), "host".into(), false, true)
        );
        assert_eq!(
            answers(&Sandbox::Bwrap),
            ("bwrap".into(), "host".into(), true, true)
        );
        assert_eq!(
            answers(&image),
            (
                "podman:sha256:1".into(),
                "podman:sha256:1".into(),
                true,
                false
            )
        );
    }

    #[test]
    fn paths_are_found_in_commands_values_and_messages() {
        let found = named_in([
            "/tmp/venv/bin/python -m pytest --rootdir={workdir} '/tmp/a b' {junit}",
            "PYTHONPATH=/tmp/x:/tmp/y:rel",
            "sh: 1: /tmp/run.sh: not found",
            "ls: cannot access '/tmp/z': No such file or directory.",
            "ln -s /tmp/deps/node_modules node_modules && echo /",
            "/tmp/x",
        ]);
        let want: Vec<PathBuf> = [
            "/tmp/venv/bin/python",
            "/tmp/a",
            "/tmp/x",
            "/tmp/y",
            "/tmp/run.sh",
            "/tmp/z",
            "/tmp/deps/node_modules",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(found, want);
    }
}
