//! No sandbox: the commands run on the host, as the user, in the checkout.

use super::backend::{Backend, Confined, Env, Pending};
use super::paths::Paths;
use crate::run::Limits;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The host, unconfined.
#[derive(Debug)]
pub(super) struct Host;

impl Backend for Host {
    fn name(&self) -> &'static str {
        "none"
    }

    fn image(&self) -> Option<&str> {
        None
    }

    fn cache_key(&self) -> String {
        self.name().to_string()
    }

    fn seed_place(&self) -> String {
        "host".into()
    }

    /// Never: the candidate's code ran beside it as the same user and could have disturbed it.
    fn may_keep(&self) -> bool {
        false
    }

    fn tools_on_host(&self) -> bool {
        true
    }

    fn open<'a>(
        &'a self,
        _: &'a mut Paths,
        _: bool,
        _: Limits,
    ) -> Pending<'a, Result<Box<dyn Confined>, String>> {
        Box::pin(async { Ok(Box::new(Host) as Box<dyn Confined>) })
    }
}

impl Confined for Host {
    fn workdir(&self, paths: &Paths) -> PathBuf {
        paths.workdir.clone()
    }

    fn out_dir(&self, paths: &Paths) -> PathBuf {
        paths.out.clone()
    }

    fn scripts_dir(&self, paths: &Paths) -> PathBuf {
        paths.scripts.clone()
    }

    fn argv(
        &self,
        _: &Paths,
        script: &Path,
        env: Env,
        _: bool,
        _: &[PathBuf],
    ) -> (Vec<OsString>, Env) {
        (vec!["sh".into(), script.into()], env)
    }

    fn on_host(&self) -> bool {
        true
    }

    /// The host's network is not taken away.
    fn end_setup(&self, _: bool) -> Pending<'_, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }

    /// Nothing is hidden on the host.
    fn hidden_hint(&self, _: &Paths, _: &str) -> String {
        String::new()
    }

    /// The command's process group is gone already.
    fn settle(&self) -> Pending<'_, ()> {
        Box::pin(async {})
    }
}
