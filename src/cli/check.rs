//! `check`, `grade` and `mcp`: one candidate patch, reports already produced, and the check as
//! an agent's tool. Their flags become one task layer over the task file, and the library's
//! one conversion ([`patchgrade::Check::from_task`]) makes the check.

use super::{CommandArgs, EXIT_USAGE, PatchArgs, ReuseArgs, explain, stdout};
use anyhow::{Context, Result};
use clap::ValueEnum;
use clap::builder::TypedValueParser;
use patchgrade::report::{self, VerdictFormat};
use patchgrade::task::{TaskFile, parse_env, parse_id_file};
use patchgrade::{Check, FromReports, IdSyntax, Outcome, Preset, Verdict};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code for outcome `error`.
const EXIT_ERROR: u8 = 3;

#[derive(clap::Args)]
pub struct GradeArgs {
    /// Report after the patch: a file or a directory of reports (repeatable).
    #[arg(long, value_name = "PATH", required = true)]
    junit: Vec<PathBuf>,
    /// Report at base: a file or a directory (repeatable). Without it every P2P failure is
    /// blamed on the patch.
    #[arg(long, value_name = "PATH")]
    base_junit: Vec<PathBuf>,
    #[command(flatten)]
    tests: TestIdArgs,
    /// The runner that wrote the reports (gives the id syntax).
    #[arg(long, value_name = "NAME")]
    runner: Option<String>,
    /// Id syntax, when it is not the runner's [default: pytest]
    #[arg(long, value_name = "SYNTAX")]
    ids: Option<String>,
    /// Whose rules grade the reports: patchgrade or swebench [default: patchgrade]
    #[arg(long, value_name = "SCORING")]
    scoring: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

/// The requested tests.
#[derive(clap::Args)]
pub struct TestIdArgs {
    /// A fail-to-pass test id (repeatable).
    #[arg(long = "f2p", value_name = "ID")]
    f2p: Vec<String>,
    /// A pass-to-pass test id (repeatable).
    #[arg(long = "p2p", value_name = "ID")]
    p2p: Vec<String>,
    /// File of fail-to-pass ids: one per line, or a JSON array.
    #[arg(long, value_name = "FILE")]
    f2p_file: Option<PathBuf>,
    /// File of pass-to-pass ids: one per line, or a JSON array.
    #[arg(long, value_name = "FILE")]
    p2p_file: Option<PathBuf>,
}

/// One list of ids, or `None` where the flags give none.
type IdList = Option<Vec<String>>;

impl TestIdArgs {
    /// The F2P and P2P lists these flags give (`None`: they give none, so a lower layer's
    /// list stands). Flags and an id file together make one list.
    fn lists(self) -> Result<(IdList, IdList)> {
        Ok((
            ids(self.f2p, self.f2p_file.as_deref())?,
            ids(self.p2p, self.p2p_file.as_deref())?,
        ))
    }
}

/// How the verdict is written, for every subcommand that produces one.
#[derive(clap::Args)]
pub struct OutputArgs {
    /// Output format: human (a summary with the grid, for people), json (the whole verdict,
    /// for programs), feedback (what to fix, bounded in size, for a language model).
    #[arg(
        long,
        default_value = "human",
        value_parser = clap::builder::PossibleValuesParser::new(["human", "json", "feedback"])
            .try_map(|s| s.parse::<VerdictFormat>())
    )]
    format: VerdictFormat,
    /// Also write the graded tests as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    junit_out: Option<PathBuf>,
    /// Size bound of `--format feedback`, in bytes.
    #[arg(long, value_name = "N", default_value_t = report::DEFAULT_MAX_BYTES)]
    max_bytes: usize,
    /// Withhold the F2P ids and messages (hidden tests), keeping their counts.
    #[arg(long)]
    redact_f2p: bool,
    /// Outcomes that exit 0 (comma list).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "resolved,no-breakage",
        value_delimiter = ','
    )]
    accept: Vec<Outcome>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Baseline {
    Run,
    Skip,
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The candidate patch (unified diff); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    patch: Option<PathBuf>,
    #[command(flatten)]
    task: TaskArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[cfg(feature = "mcp")]
#[derive(clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    task: TaskArgs,
    /// Size bound of the feedback text, in bytes.
    #[arg(long, value_name = "N", default_value_t = report::DEFAULT_MAX_BYTES)]
    max_bytes: usize,
    /// Withhold the F2P ids and messages (hidden tests) from the agent, keeping their counts.
    #[arg(long)]
    redact_f2p: bool,
    /// Answer with the feedback text only: the verdict stays in the structured content, and
    /// the agent's context does not get its JSON as a second text block.
    #[arg(long)]
    feedback_only: bool,
}

/// What is graded against: everything but the candidate patch.
#[derive(clap::Args)]
pub struct TaskArgs {
    /// Task file (TOML or JSON; SWE-bench instances accepted unchanged). Flags override it.
    #[arg(long, value_name = "FILE")]
    task: Option<PathBuf>,
    /// The git repository [default: .]
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// The base revision [default: HEAD]
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// The hidden test patch, applied after the candidate.
    #[arg(long, value_name = "FILE")]
    test_patch: Option<PathBuf>,
    #[command(flatten)]
    tests: TestIdArgs,
    #[command(flatten)]
    command: CommandArgs,
    #[command(flatten)]
    apply: PatchArgs,
    /// Environment variable for the commands, KEY=VALUE (repeatable; {workdir} expands).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Command run before the tests of every run: in each fresh checkout, and in a
    /// --workdir-pool slot before every use ({workdir} expands).
    #[arg(long, value_name = "CMD")]
    setup_cmd: Option<String>,
    /// Run --setup-cmd once per --workdir-pool slot and base commit, not before every use
    /// (for a setup that depends on the base only, such as `npm ci`).
    #[arg(long)]
    setup_once: bool,
    /// Run the tests on the unpatched base too, so P2P tests broken there are not blamed.
    #[arg(long, value_enum, default_value = "run")]
    baseline: Baseline,
    /// Keep the checkouts and logs under DIR.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    #[command(flatten)]
    reuse: ReuseArgs,
}

pub async fn check(mut args: CheckArgs) -> ExitCode {
    let output = std::mem::replace(
        &mut args.output,
        OutputArgs {
            format: VerdictFormat::Human,
            junit_out: None,
            max_bytes: 0,
            redact_f2p: false,
            accept: Vec::new(),
        },
    );
    if let Err(e) = writable(output.junit_out.as_deref()) {
        eprintln!("patchgrade: error: {e:#}");
        return ExitCode::from(EXIT_USAGE);
    }
    let verdict = match with_patch(args.patch, args.task) {
        Ok(check) => check.run().await.map_err(explain).map(|mut v| {
            if output.redact_f2p {
                check.redact(&mut v);
            }
            v
        }),
        Err(e) => Err(e),
    };
    emit(verdict, &output)
}

#[cfg(feature = "mcp")]
pub async fn mcp(args: McpArgs) -> ExitCode {
    let options = patchgrade::mcp::Options {
        redact_f2p: args.redact_f2p,
        max_bytes: args.max_bytes,
        feedback_only: args.feedback_only,
    };
    let task = build(args.task).and_then(|(task, _)| {
        task.validate_task()?;
        Ok(task)
    });
    let served = match task {
        Ok(task) => patchgrade::mcp::serve(patchgrade::mcp::Server::new(task, options))
            .await
            .map_err(anyhow::Error::from),
        Err(e) => Err(e),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("patchgrade: error: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// The task's check with the candidate patch (from the flag, else the task file).
fn with_patch(patch: Option<PathBuf>, task: TaskArgs) -> Result<Check> {
    let (check, from_task) = build(task)?;
    let patch = patch
        .or(from_task)
        .context("no candidate patch: give --patch FILE (or - for stdin)")?;
    Ok(check.patch(patch.display().to_string(), read_input(&patch)?))
}

pub fn grade(args: GradeArgs) -> ExitCode {
    let verdict = (|| -> Result<Verdict> {
        writable(args.output.junit_out.as_deref())?;
        let syntax = id_syntax(args.ids.as_deref(), args.runner.as_deref())?;
        let (f2p, p2p) = args.tests.lists()?;
        let job = FromReports {
            junit: args.junit,
            base_junit: args.base_junit,
            f2p: f2p.unwrap_or_default(),
            p2p: p2p.unwrap_or_default(),
            ids: syntax,
            instance_id: None,
            scoring: args.scoring.as_deref().unwrap_or("patchgrade").parse()?,
        };
        job.run().map_err(explain)
    })();
    emit(verdict, &args.output)
}

/// The id syntax from `--ids`, else the runner's, else pytest's.
pub(super) fn id_syntax(ids: Option<&str>, runner: Option<&str>) -> Result<IdSyntax> {
    Ok(match (ids, runner) {
        (Some(ids), _) => ids.parse()?,
        (None, Some(runner)) => runner.parse::<Preset>()?.id_syntax(),
        (None, None) => IdSyntax::Pytest,
    })
}

/// Print a verdict (or the bad-input error) and pick the exit code.
fn emit(verdict: Result<Verdict>, output: &OutputArgs) -> ExitCode {
    let mut verdict = match verdict {
        Ok(v) => v,
        Err(e) => {
            eprintln!("patchgrade: error: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    // `grade` has no test patch to look for: its F2P tests are withheld.
    if output.redact_f2p && !verdict.redacted {
        verdict.redact_f2p();
    }
    let format = output.format.bounded(output.max_bytes);
    let text = match report::render(&verdict, format) {
        Ok(text) if format == VerdictFormat::Human => super::painted(text, verdict.outcome),
        Ok(text) => text,
        Err(e) => {
            eprintln!("patchgrade: error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Err(e) = stdout(&text) {
        eprintln!("patchgrade: error: {e:#}");
        return ExitCode::from(EXIT_USAGE);
    }
    if let Some(Err(e)) = output
        .junit_out
        .as_ref()
        .map(|path| write_junit(&verdict, path))
    {
        eprintln!("patchgrade: error: {e:#}");
        return ExitCode::from(EXIT_USAGE);
    }
    ExitCode::from(exit_code(&verdict, &output.accept))
}

fn exit_code(verdict: &Verdict, accept: &[Outcome]) -> u8 {
    if accept.contains(&verdict.outcome) {
        0
    } else if verdict.outcome == Outcome::Error {
        EXIT_ERROR
    } else {
        1
    }
}

fn write_junit(verdict: &Verdict, path: &Path) -> Result<()> {
    let xml = report::render(verdict, VerdictFormat::Junit)?;
    patchgrade::write_atomically(path, xml.as_bytes())
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// The check the flags and the task file describe, without its patch, and the task file's
/// patch file if it names one: the flags are a layer over the task file, over the defaults
/// (the repository in the current directory).
pub(super) fn build(args: TaskArgs) -> Result<(Check, Option<PathBuf>)> {
    let file = match &args.task {
        Some(path) => TaskFile::load(path)?,
        None => TaskFile::default(),
    };
    let (f2p, p2p) = args.tests.lists()?;
    let env = args
        .env
        .iter()
        .map(|kv| parse_env(kv))
        .collect::<Result<Vec<_>, _>>()?;
    let flags = TaskFile {
        repo_path: args.repo,
        base: args.base,
        test_patch_file: args.test_patch,
        f2p,
        p2p,
        env,
        setup_cmd: args.setup_cmd,
        setup_once: args.setup_once.then_some(true),
        ..args.command.layer()?
    };
    let defaults = TaskFile {
        repo_path: Some(PathBuf::from(".")),
        ..TaskFile::default()
    };
    let task = TaskFile::stack([flags, file, defaults]);
    let options = patchgrade::CheckOptions {
        cache: args.reuse.cache(patchgrade::BaselineCache::default_dir()),
        pool: args.reuse.pool(),
        strict_apply: args.apply.strict_apply,
        protection: Some(args.apply.protection()?),
    };
    let mut check = Check::from_task(&task, &options)
        .map_err(explain)?
        .baseline(args.baseline == Baseline::Run);
    if let Some(dir) = args.keep {
        check = check.keep(dir);
    }
    Ok((check, task.patch_file))
}

/// An output file's directory exists, checked before anything runs: a verdict that cannot
/// be written after minutes of tests is input that should have been refused first.
pub(super) fn writable(path: Option<&Path>) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "--junit-out {}: {} is not a directory",
            path.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Ids from flags and an id file, as one list; `None` when neither gives any.
fn ids(flags: Vec<String>, file: Option<&Path>) -> Result<IdList> {
    let mut ids = flags;
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        ids.extend(parse_id_file(&text).with_context(|| path.display().to_string())?);
    } else if ids.is_empty() {
        return Ok(None);
    }
    Ok(Some(ids))
}

pub(super) fn read_input(path: &Path) -> Result<Vec<u8>> {
    if path == Path::new("-") {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .context("stdin: cannot read")?;
        return Ok(buf);
    }
    std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))
}
