//! The subcommands beyond `check`, `grade` and `mcp`, kept out of `main.rs` so it stays a
//! dispatcher, and the flags they share with `check`.

pub mod offline;

use anyhow::{Context, Result, bail};
use std::time::Duration;

/// How the tests are run: shared by `check`, `mcp` and `batch` (where they are the default for
/// tasks that set none).
#[derive(clap::Args)]
pub struct CommandArgs {
    /// Preset test runner: pytest, unittest, nextest, go, jest, vitest, mocha, node, ctest,
    /// phpunit, maven, gradle.
    #[arg(long, value_name = "NAME")]
    pub runner: Option<String>,
    /// Test command template with {tests}, {junit} and {workdir}.
    #[arg(long, value_name = "TEMPLATE")]
    pub test_cmd: Option<String>,
    /// Id syntax of a custom --test-cmd: a runner name or classname.name [default: the
    /// runner's, else pytest]
    #[arg(long, value_name = "SYNTAX")]
    pub ids: Option<String>,
    /// Run tests that did not pass again, up to N times; one that then passes is flaky.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retries: usize,
    /// Timeout per command (setup, tests), e.g. 90s, 30m [default: 30m]
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

impl CommandArgs {
    /// `--timeout`, parsed and checked.
    pub fn timeout(&self) -> Result<Option<Duration>> {
        let Some(text) = &self.timeout else {
            return Ok(None);
        };
        let t = patchgrade::task::parse_duration(text).map_err(anyhow::Error::msg)?;
        if t.is_zero() {
            bail!("--timeout must be greater than zero");
        }
        Ok(Some(t))
    }
}

/// How the candidate is applied: shared by `check`, `mcp` and `batch`.
#[derive(clap::Args)]
pub struct PatchArgs {
    /// Apply the candidate exactly or not at all: no fallback with offset and fuzz.
    #[arg(long)]
    pub strict_apply: bool,
    /// Also protect paths matching GLOB (repeatable), beyond the default test, test-config and
    /// CI files.
    #[arg(long = "protect", value_name = "GLOB")]
    pub protect: Vec<String>,
    /// A candidate edit to a protected path: warn, revert (put back before the tests) or
    /// reject (patch-failed).
    #[arg(long, value_name = "ACTION", default_value = "warn")]
    pub on_protected_edit: String,
}

impl PatchArgs {
    /// The protection these flags ask for.
    pub fn protection(&self) -> Result<patchgrade::protect::Protection> {
        let action = self.on_protected_edit.parse().map_err(anyhow::Error::msg)?;
        Ok(patchgrade::protect::Protection::new(&self.protect, action)?)
    }
}

/// What is kept between runs (baselines, checkouts): shared by `check`, `mcp` and `batch`.
#[derive(clap::Args)]
pub struct ReuseArgs {
    /// Baseline cache: repeated checks of one task run its baseline once [default: check and
    /// mcp: $XDG_CACHE_HOME/patchgrade, else ~/.cache/patchgrade; batch: OUT/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<std::path::PathBuf>,
    /// Run the baseline even when the cache holds it, and store nothing.
    #[arg(long, conflicts_with = "cache_dir")]
    pub no_cache: bool,
    /// Keep checkouts in DIR between runs and reset one before each use, instead of making a
    /// fresh checkout each time (ignored build output stays).
    #[arg(long, value_name = "DIR")]
    pub workdir_pool: Option<std::path::PathBuf>,
}

impl ReuseArgs {
    /// The cache these flags ask for: `--cache-dir`, else `default`; none with `--no-cache`.
    pub fn cache(
        &self,
        default: Option<std::path::PathBuf>,
    ) -> Option<std::sync::Arc<patchgrade::BaselineCache>> {
        if self.no_cache {
            return None;
        }
        let dir = self.cache_dir.clone().or(default)?;
        Some(std::sync::Arc::new(patchgrade::BaselineCache::new(dir)))
    }

    /// The pool of reusable checkouts, if asked for.
    pub fn pool(&self) -> Option<patchgrade::WorkdirPool> {
        self.workdir_pool.clone().map(patchgrade::WorkdirPool::new)
    }
}

/// Write a command's output to stdout. A closed pipe or a full disk is an error to report, not
/// a panic (`print!` panics).
pub fn stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("stdout: cannot write")
}
