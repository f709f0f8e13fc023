//! The seam a sandbox backend implements: what the pipeline asks of a resolved sandbox
//! ([`Backend`]) and what a side's jail asks of it once open ([`Confined`]).

use super::paths::Paths;
use crate::run::Limits;
use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

/// A backend's answer that takes a while (starting a container, taking its network away).
pub(super) type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A command's environment: variables to set, and names it must not inherit.
pub(super) type Env = (Vec<(String, String)>, Vec<String>);

/// A resolved sandbox, as the pipeline asks of it. Each backend answers in its own file.
pub(super) trait Backend: Sync {
    /// `none`, `bwrap`, `docker` or `podman`.
    fn name(&self) -> &'static str;

    /// The image its commands run in, as the user named it (a container's).
    fn image(&self) -> Option<&str>;

    /// Where the runs happen, as a cache key says it.
    fn cache_key(&self) -> String;

    /// Where a build seed was made, as its key says it.
    fn seed_place(&self) -> String;

    /// Whether what ran in it may be kept for later runs (a baseline, a coverage map, a build
    /// seed).
    fn may_keep(&self) -> bool;

    /// Whether its jails have a gate ([`Confined::gated`]).
    fn has_gate(&self) -> bool {
        false
    }

    /// Whether the commands run the host's toolchain, whose versions a cache key must probe.
    fn tools_on_host(&self) -> bool;

    /// Open a side's confinement: widen `paths` with what the backend shows besides the side's
    /// own directories, and start what must run for the side's commands. `network`: whether
    /// any of its commands (the setup, or the tests) get the network.
    fn open<'a>(
        &'a self,
        paths: &'a mut Paths,
        network: bool,
        limits: Limits,
    ) -> Pending<'a, Result<Box<dyn Confined>, String>>;
}

/// A side's open confinement, as its jail asks of it.
pub(super) trait Confined: Send + Sync + std::fmt::Debug {
    /// The checkout, as the commands see it.
    fn workdir(&self, paths: &Paths) -> PathBuf;

    /// The report directory, as the commands see it.
    fn out_dir(&self, paths: &Paths) -> PathBuf;

    /// The scripts directory, as the commands see it.
    fn scripts_dir(&self, paths: &Paths) -> PathBuf;

    /// The command line running `script` (a file of the scripts directory, on the host),
    /// with the network if `network`, and the environment the program itself gets; `writable`:
    /// host directories this command alone may write besides the checkout.
    fn argv(
        &self,
        paths: &Paths,
        script: &Path,
        env: Env,
        network: bool,
        writable: &[PathBuf],
    ) -> (Vec<OsString>, Env);

    /// `argv` (from [`Confined::argv`]) made to build its sandbox, then wait until a byte can
    /// be read from descriptor `fd` (or it is closed) before it runs anything; `None` where the
    /// backend has no such gate.
    fn gated(&self, _argv: &[OsString], _fd: std::os::fd::RawFd) -> Option<Vec<OsString>> {
        None
    }

    /// Whether its commands are host processes, which get the host's limits and inherit only
    /// the named variables (a container engine's client keeps the user's; the container has
    /// its own limits).
    fn on_host(&self) -> bool;

    /// Done with the setup command, which had the network: take it away unless `keep` (the
    /// tests may have it).
    fn end_setup(&self, keep: bool) -> Pending<'_, Result<(), String>>;

    /// Of the paths a failed command's output names, why those the host has are hidden here
    /// and how to show them; empty when nothing is hidden.
    fn hidden_hint(&self, paths: &Paths, output: &str) -> String;

    /// After a command that did not end by itself: kill what it left running.
    fn settle(&self) -> Pending<'_, ()>;
}
