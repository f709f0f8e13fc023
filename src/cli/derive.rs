//! `derive` (a task's lists from its gold patch) and `list` (the ids in JUnit reports): the
//! commands that help write tasks.

use super::check::{TaskArgs, build, read_input};
use super::{EXIT_USAGE, stdout};
use anyhow::{Context, Result};
use patchgrade::TestStatus;
use patchgrade::report::{self, DeriveFormat, DerivedTask, ListFormat};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code when a run could not be judged (as `check`'s `error`).
const EXIT_ERROR: u8 = 3;

#[derive(clap::Args)]
pub struct DeriveArgs {
    /// The gold patch: the fix the task's tests are derived from.
    #[arg(long, value_name = "FILE")]
    gold: PathBuf,
    #[command(flatten)]
    task: TaskArgs,
    /// What to write: a task file (TOML), a SWE-bench row (JSON), or all that was observed
    /// (JSON, with the tests left out and why).
    #[arg(long, value_enum, default_value = "task")]
    format: DeriveFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// JUnit reports (files, or directories of them), read as one.
    #[arg(required = true, value_name = "REPORT")]
    junit: Vec<PathBuf>,
    /// The id syntax (a runner name or classname.name) [default: the runner's, else pytest]
    #[arg(long, value_name = "SYNTAX")]
    ids: Option<String>,
    /// The runner that wrote the reports, for its id syntax.
    #[arg(long, value_name = "NAME")]
    runner: Option<String>,
    /// Only the tests of this status: passed, failed, error, skipped, flaky.
    #[arg(long, value_name = "STATUS")]
    status: Option<String>,
    /// One id per line (for --f2p-file), or JSON with statuses.
    #[arg(long, value_enum, default_value = "text")]
    format: ListFormat,
}

pub async fn derive(args: DeriveArgs) -> ExitCode {
    let gold = match read_input(&args.gold) {
        Ok(gold) => gold,
        Err(e) => return usage(e),
    };
    if let Some(out) = &args.out
        && let Err(e) = super::check::writable(Some(out))
    {
        return usage(e);
    }
    let derived = match build(args.task) {
        Ok((check, _)) => check
            .patch(args.gold.display().to_string(), gold.clone())
            .derive()
            .await
            .map_err(super::explain),
        Err(e) => Err(e),
    };
    let derived = match derived {
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    if let Some(e) = &derived.error {
        eprintln!("patchgrade: derive: {}", e.message.trim_end());
        return ExitCode::from(EXIT_ERROR);
    }
    let gold = String::from_utf8_lossy(&gold);
    let task = DerivedTask {
        derived: &derived,
        gold: &gold,
    };
    let rendered = report::render(&task, DeriveFormat::Line)
        .and_then(|line| Ok((line, report::render(&task, args.format)?)));
    let text = match rendered {
        Ok((line, text)) => {
            eprintln!("patchgrade: derive: {line}");
            text
        }
        Err(e) => return usage(e.into()),
    };
    let written = match &args.out {
        Some(path) => patchgrade::write_atomically(path, text.as_bytes())
            .with_context(|| format!("{}: cannot write", path.display())),
        None => stdout(&text),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage(e),
    }
}

fn usage(e: anyhow::Error) -> ExitCode {
    eprintln!("patchgrade: error: {e:#}");
    ExitCode::from(EXIT_USAGE)
}

pub fn list(args: ListArgs) -> Result<()> {
    let syntax = super::check::id_syntax(args.ids.as_deref(), args.runner.as_deref())?;
    let status: Option<TestStatus> = match &args.status {
        Some(s) => Some(
            serde_json::from_value(serde_json::Value::String(s.clone()))
                .ok()
                .filter(|s| *s != TestStatus::Missing)
                .with_context(|| {
                    format!("--status {s}: not a status (passed, failed, error, skipped, flaky)")
                })?,
        ),
        None => None,
    };
    let listed: Vec<_> = patchgrade::list_ids(&args.junit, syntax)?
        .into_iter()
        .filter(|l| status.is_none_or(|s| l.status == s))
        .collect();
    let text = report::render(listed.as_slice(), args.format)?;
    let hidden = listed.iter().filter(|l| !l.exact).count();
    if hidden > 0 && args.format == ListFormat::Text {
        eprintln!(
            "patchgrade: list: {hidden} test(s) left out: their id names more than one test in \
             these reports (--format json shows them)"
        );
    }
    stdout(&text)
}
