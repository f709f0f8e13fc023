//! The `patchgrade` command line: its arguments, the flags several commands share, and the
//! dispatch to each command. Flag names live here only: the library's errors name its inputs,
//! and [`explain`] adds the flags that give them.

pub mod check;
pub mod derive;
pub mod harness;
mod log;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use patchgrade::task::{RequestError, TaskFile, parse_duration};
use patchgrade::{Error, Protection};
use std::process::ExitCode;

/// Exit code for bad input or usage.
pub const EXIT_USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "patchgrade",
    version,
    about = "Grade a candidate patch from what its tests actually do"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Say less on stderr: no progress, no summary after a batch, no notes
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Say what patchgrade does on stderr: checkouts, commands, cache hits (-vv: more)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Colour the human output: auto (on a terminal, unless NO_COLOR is set), always, never
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    color: Color,
}

/// When the human output is coloured.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

/// What every command reads of the global flags.
#[derive(Debug, Clone, Copy, Default)]
pub struct Globals {
    /// `-q`: no progress, summaries or notes on stderr.
    pub quiet: bool,
    /// Colour the human output on stdout.
    pub color: bool,
}

static GLOBALS: std::sync::OnceLock<Globals> = std::sync::OnceLock::new();

/// The global flags of this run.
pub fn globals() -> Globals {
    GLOBALS.get().copied().unwrap_or_default()
}

#[derive(Subcommand)]
enum Command {
    /// Apply a patch in a temporary checkout, run the tests (and a baseline), classify.
    Check(Box<check::CheckArgs>),
    /// Classify from JUnit reports that were already produced (CI ran the tests).
    Grade(Box<check::GradeArgs>),
    /// Serve the check as an MCP tool (`check_patch`) over stdio, for one task.
    #[cfg(feature = "mcp")]
    Mcp(Box<check::McpArgs>),
    /// Grade many tasks' predictions into an output directory (SWE-bench formats).
    Batch(Box<harness::BatchArgs>),
    /// The outcome distribution of a batch output directory.
    Report(harness::ReportArgs),
    /// Two batch runs compared task by task: transitions and paired tests.
    Compare(harness::CompareArgs),
    /// Join the output directories of a sharded run.
    Merge(harness::MergeArgs),
    /// Read an evaluation another harness ran into a results directory, without rerunning.
    #[command(subcommand)]
    Import(harness::ImportCommand),
    /// Build a task from its gold patch: F2P and P2P as observed at base and with the fix.
    Derive(Box<derive::DeriveArgs>),
    /// The ids of the tests in JUnit reports, in a runner's syntax, for writing tasks.
    List(derive::ListArgs),
    /// Print the JSON Schema of a document patchgrade writes: verdict, report or compare.
    Schema(harness::SchemaArgs),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `patchgrade man > patchgrade.1`.
    Man,
}

/// Parse the command line and run the command.
pub fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("patchgrade: error: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    runtime.block_on(dispatch())
}

async fn dispatch() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version are output; a usage error is bad input, and bad input is one
        // line naming the input and the problem.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("patchgrade: {}", one_line(&e.render().to_string()));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let color = match cli.color {
        Color::Always => true,
        Color::Never => false,
        // https://no-color.org: set and not empty turns colour off.
        Color::Auto => {
            use std::io::IsTerminal;
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let _ = GLOBALS.set(Globals {
        quiet: cli.quiet,
        color,
    });
    log::install(cli.verbose);
    match cli.command {
        Command::Check(args) => stoppable(check::check(*args)).await,
        Command::Grade(args) => check::grade(*args),
        // A signal drops the server, and with it every call's checks (see `stoppable`).
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => stoppable(check::mcp(*args)).await,
        Command::Batch(args) => {
            stoppable(async {
                match harness::batch(*args).await {
                    Ok(true) => ExitCode::SUCCESS,
                    Ok(false) => ExitCode::from(1),
                    Err(e) => usage_error(e),
                }
            })
            .await
        }
        Command::Report(args) => gated(harness::report(args)),
        Command::Compare(args) => gated(harness::compare(args)),
        Command::Merge(args) => plain(harness::merge(args)),
        Command::Import(command) => plain(harness::import(command)),
        Command::Derive(args) => stoppable(derive::derive(*args)).await,
        Command::List(args) => plain(derive::list(args)),
        Command::Schema(args) => plain(harness::schema(args)),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut command, "patchgrade", &mut out);
            plain(stdout(&String::from_utf8_lossy(&out)))
        }
        Command::Man => {
            let mut out = Vec::new();
            let man = clap_mangen::Man::new(<Cli as clap::CommandFactory>::command());
            let rendered = man
                .render(&mut out)
                .context("cannot render the manual page");
            plain(rendered.and_then(|()| stdout(&String::from_utf8_lossy(&out))))
        }
    }
}

/// Run until done or until SIGINT/SIGTERM. Returning from select drops the work: its process
/// groups are killed and its temporary checkouts removed before the process exits; results
/// already written stay as they are.
async fn stoppable(work: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    tokio::select! {
        code = work => code,
        signal = interrupted() => {
            eprintln!("patchgrade: {signal}: stopped, test processes killed, checkouts removed");
            ExitCode::from(if signal == "interrupted" { 130 } else { 143 })
        }
    }
}

fn usage_error(e: anyhow::Error) -> ExitCode {
    eprintln!("patchgrade: error: {e:#}");
    ExitCode::from(EXIT_USAGE)
}

/// A command with gates: 0, 1 when a gate failed, 2 for bad input.
fn gated(done: Result<bool>) -> ExitCode {
    match done {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => usage_error(e),
    }
}

fn plain(done: Result<()>) -> ExitCode {
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(e),
    }
}

async fn interrupted() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return "interrupted";
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "interrupted",
        _ = term.recv() => "terminated",
    }
}

/// clap's message folded into one line: the error and its tip, without the usage block.
fn one_line(message: &str) -> String {
    let parts: Vec<&str> = message
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:"))
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .collect();
    parts.join("; ")
}

/// A library error with the flags that give the input it names.
pub fn explain(e: Error) -> anyhow::Error {
    let hint = match &e {
        Error::NoCommand => "give --runner or --test-cmd",
        Error::Request(RequestError::NoIds) => {
            "give --f2p and/or --p2p (or FAIL_TO_PASS/PASS_TO_PASS in the task file)"
        }
        Error::ZeroTimeout => "--timeout must be greater than zero",
        Error::KeepExists(_) => "--keep needs a fresh directory",
        Error::NoRepository { .. } => "give --repo (or repo_path in the task file)",
        _ => return anyhow::Error::new(e),
    };
    anyhow::anyhow!("{e}: {hint}")
}

/// `--runner`'s help: every preset by name, and SWE-bench's pick.
fn runner_help() -> String {
    format!(
        "Preset test runner: {}; or swebench, which picks each task's from its repository as \
         SWE-bench's harness does",
        patchgrade::Preset::names()
    )
}

/// How the tests are run: shared by `check`, `mcp` and `batch` (where they are the default for
/// tasks that set none).
#[derive(clap::Args)]
pub struct CommandArgs {
    // The list comes from the presets' registry, so a new runner is listed without an edit.
    #[arg(long, value_name = "NAME", help = runner_help())]
    pub runner: Option<String>,
    /// Run each task as SWE-bench's harness does (--runner swebench): its repository's runner,
    /// the test patch's test files, and with --sandbox docker|podman its SWE-bench image.
    #[arg(long, conflicts_with = "runner")]
    pub swebench: bool,
    /// The Python interpreter the commands run: its directory goes first on PATH (a
    /// virtualenv's bin/python; in a container, a path in the image).
    #[arg(long, value_name = "PATH")]
    pub python: Option<std::path::PathBuf>,
    /// Test command template with {tests}, {junit} and {workdir}.
    #[arg(long, value_name = "TEMPLATE")]
    pub test_cmd: Option<String>,
    /// Id syntax of a custom --test-cmd: a runner name or classname.name [default: the
    /// runner's, else pytest]
    #[arg(long, value_name = "SYNTAX")]
    pub ids: Option<String>,
    /// Run tests that did not pass again, up to N times; one that then passes is flaky
    /// [default: 0]
    // A negative value is a bad value, not another flag: say so about this flag.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub retries: Option<usize>,
    /// Timeout per command (setup, tests), e.g. 90s, 30m [default: 30m]
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub timeout: Option<String>,
    /// Where the commands run: auto (a container with --image, else bwrap if it works here,
    /// else none), none, bwrap, docker, podman [default: auto]
    #[arg(long, value_name = "SANDBOX", env = "PATCHGRADE_SANDBOX")]
    pub sandbox: Option<String>,
    /// Run the commands in a container of this local image (docker, else podman)
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Where the checkout is mounted in the image [default: /testbed]
    #[arg(long, value_name = "DIR")]
    pub image_workdir: Option<std::path::PathBuf>,
    /// Let the tests use the network (the setup command always may)
    #[arg(long)]
    pub network: bool,
    /// Show this host path read-only in the sandbox, which would hide it (bwrap's private
    /// /tmp) or lack it (a container); repeatable. Paths the commands, --python and --env
    /// name are shown without it
    #[arg(long, value_name = "PATH")]
    pub sandbox_ro: Vec<std::path::PathBuf>,
    /// Show this host path writable in the sandbox; repeatable
    #[arg(long, value_name = "PATH")]
    pub sandbox_rw: Vec<std::path::PathBuf>,
    /// Each command's memory limit, e.g. 256M, 2G [default: a quarter of this machine's
    /// memory, at least 1G, at most 8G]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub memory: Option<String>,
    /// Pass this variable of the environment to the commands (repeatable; LC_* for a
    /// prefix): only PATH, HOME, the user, language, time, the terminal, certificate
    /// authorities and what the runner needs pass by default
    #[arg(long, value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Each command's limit of processes and threads [default: 4096]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub pids: Option<u64>,
    /// Whose rules grade what was observed: patchgrade (its own) or swebench (SWE-bench's
    /// harness's, exactly); the verdict records the other's outcome where it differs
    /// [default: patchgrade]
    #[arg(long, value_name = "SCORING")]
    pub scoring: Option<String>,
    /// Also run and grade the tests outside the task's lists that exercise what the patch
    /// changes: auto (coverage at base for Python, else imports: Python, JavaScript, Rust),
    /// coverage, imports, off, or a file of ids [default: off]
    #[arg(long, value_name = "MODE|FILE")]
    pub downstream: Option<String>,
    /// Run at most N downstream tests (found by imports: test files, or Rust tests and test
    /// modules), the most concerned first [default: 100]
    #[arg(long, value_name = "N")]
    pub downstream_max: Option<usize>,
    /// Count downstream tests as P2P tests (a no-op that breaks them becomes a regression)
    #[arg(long)]
    pub downstream_counts_as_p2p: bool,
}

impl CommandArgs {
    /// These flags as a task layer (the fields they do not set stay unset).
    pub fn layer(&self) -> Result<TaskFile> {
        let timeout = match &self.timeout {
            Some(text) => Some(parse_duration(text).context("--timeout")?),
            None => None,
        };
        Ok(TaskFile {
            runner: if self.swebench {
                Some("swebench".into())
            } else {
                self.runner.clone()
            },
            python: self.python.clone(),
            test_cmd: self.test_cmd.clone(),
            ids: self.ids.clone(),
            timeout,
            retries: self.retries,
            sandbox: self.sandbox.clone(),
            image: self.image.clone(),
            image_workdir: self.image_workdir.clone(),
            network: self.network.then_some(true),
            sandbox_ro: self.sandbox_ro.clone(),
            sandbox_rw: self.sandbox_rw.clone(),
            memory: self.memory.clone(),
            pids: self.pids,
            pass_env: self.pass_env.clone(),
            scoring: self.scoring.clone(),
            downstream: self.downstream.clone(),
            downstream_max: self.downstream_max,
            downstream_counts_as_p2p: self.downstream_counts_as_p2p.then_some(true),
            ..TaskFile::default()
        })
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
    pub fn protection(&self) -> Result<Protection> {
        let action = self
            .on_protected_edit
            .parse()
            .context("--on-protected-edit")?;
        Protection::new(&self.protect, action)
            .map_err(|e| anyhow::anyhow!("--protect `{}`: {}", e.glob, e.reason))
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

/// The human output with its outcome (first line) coloured, when colour is on: green for
/// what passes, yellow for partial outcomes, red for breakage, bold for the rest.
pub fn painted(text: String, outcome: patchgrade::Outcome) -> String {
    use patchgrade::Outcome::*;
    if !globals().color {
        return text;
    }
    let code = match outcome {
        Resolved | NoBreakage => "1;32",
        PartiallyResolved | WorkInProgress | BreakingResolved => "1;33",
        Regression | Breaking => "1;31",
        _ => "1",
    };
    match text.split_once('\n') {
        Some((first, rest)) => format!("\x1b[{code}m{first}\x1b[0m\n{rest}"),
        None => format!("\x1b[{code}m{text}\x1b[0m"),
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
