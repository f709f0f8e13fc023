//! `derive` (a task's lists from its gold patch) and `list` (the ids in JUnit reports): the
//! commands that help write tasks.

use super::check::{TaskArgs, build, read_input};
use super::{EXIT_USAGE, stdout};
use anyhow::{Context, Result};
use clap::ValueEnum;
use patchgrade::{Derived, IdSyntax, Preset, TestStatus};
use serde::Serialize;
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

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DeriveFormat {
    Task,
    Swebench,
    Json,
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

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    Text,
    Json,
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
    eprintln!("patchgrade: derive: {}", summary(&derived));
    let text = match render(&derived, args.format, &String::from_utf8_lossy(&gold)) {
        Ok(text) => text,
        Err(e) => return usage(e),
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

/// One line for people: the counts, and what was left out.
fn summary(d: &Derived) -> String {
    format!(
        "{} fail-to-pass, {} pass-to-pass from {} run(s) per side; left out: {} unstable, {} \
         broken by the gold patch, {} that no id names alone",
        d.f2p.len(),
        d.p2p.len(),
        d.runs,
        d.unstable.len(),
        d.broken_by_gold.len(),
        d.not_exact.len()
    )
}

/// A task file `check --task` reads: the runner (or command), the base, the test patch
/// inline, and the lists.
#[derive(Serialize)]
struct TaskOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    instance_id: Option<&'a str>,
    base: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    runner: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    test_cmd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ids: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    setup_cmd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    test_patch: Option<&'a str>,
    f2p: &'a [String],
    p2p: &'a [String],
}

fn render(d: &Derived, format: DeriveFormat, gold: &str) -> Result<String> {
    Ok(match format {
        DeriveFormat::Json => format!("{}\n", serde_json::to_string_pretty(d)?),
        DeriveFormat::Task => {
            let task = TaskOut {
                instance_id: d.instance_id.as_deref(),
                base: &d.base_commit,
                runner: d.runner.map(Preset::name),
                test_cmd: d.test_cmd.as_deref(),
                ids: d.test_cmd.as_ref().and(d.ids.map(IdSyntax::name)),
                setup_cmd: d.setup_cmd.as_deref(),
                test_patch: d.test_patch.as_deref(),
                f2p: &d.f2p,
                p2p: &d.p2p,
            };
            format!(
                "# patchgrade derive: {}\n{}",
                summary(d),
                toml::to_string(&task).context("cannot write the task as TOML")?
            )
        }
        DeriveFormat::Swebench => {
            // The dataset keeps both lists as JSON-encoded strings.
            let row = serde_json::json!({
                "instance_id": d.instance_id.clone().unwrap_or_default(),
                "base_commit": d.base_commit,
                "patch": gold,
                "test_patch": d.test_patch.clone().unwrap_or_default(),
                "FAIL_TO_PASS": serde_json::to_string(&d.f2p)?,
                "PASS_TO_PASS": serde_json::to_string(&d.p2p)?,
            });
            format!("{row}\n")
        }
    })
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
    let text = match args.format {
        ListFormat::Json => format!("{}\n", serde_json::to_string_pretty(&listed)?),
        // Only ids that name one test: a line here is safe to put in a task.
        ListFormat::Text => listed
            .iter()
            .filter(|l| l.exact)
            .map(|l| format!("{}\n", l.id))
            .collect(),
    };
    let hidden = listed.iter().filter(|l| !l.exact).count();
    if hidden > 0 && args.format == ListFormat::Text {
        eprintln!(
            "patchgrade: list: {hidden} test(s) left out: their id names more than one test in \
             these reports (--format json shows them)"
        );
    }
    stdout(&text)
}
