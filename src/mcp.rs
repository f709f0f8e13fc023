//! `patchgrade mcp`: the check as a Model Context Protocol tool, served over stdio.
//!
//! The task (repository, base, hidden tests, ids, runner) is fixed when the server starts; an
//! agent calls `check_patch` with its patch after each edit and gets the feedback text (what
//! to fix) and the verdict JSON (everything, for programs).

use crate::check::{Check, DownstreamMode};
use crate::report::{self, VerdictFormat};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router,
};
use serde::Deserialize;

/// How the server answers.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Withhold the F2P ids and messages (the hidden tests) from the agent.
    pub redact_f2p: bool,
    /// Size bound of the feedback text.
    pub max_bytes: usize,
    /// Leave the verdict's JSON out of the text content (it stays the structured content).
    pub feedback_only: bool,
}

/// The arguments of `check_patch`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(transform = no_default)]
pub struct CheckPatchArgs {
    /// The candidate patch: a unified diff (`git diff` output) against the task's base.
    pub patch: String,
    /// Fail-to-pass test ids, replacing the task's (its pass-to-pass ids stay).
    // Typed as a plain array: clients that read `["array", "null"]` send the value as a string.
    #[schemars(with = "Vec<String>", default = "no_ids")]
    pub f2p: Option<Vec<String>>,
    /// Pass-to-pass test ids, replacing the task's (its fail-to-pass ids stay).
    #[schemars(with = "Vec<String>", default = "no_ids")]
    pub p2p: Option<Vec<String>>,
    /// Also run the tests outside the task's lists that exercise what the patch changes, and
    /// report those it breaks first: `auto` (coverage at base, else imports), `coverage`,
    /// `imports` or `off` (default: the task's).
    #[serde(default)]
    pub downstream: Option<DownstreamArg>,
}

/// How `check_patch` finds downstream tests.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DownstreamArg {
    /// Coverage at base for Python, else imports.
    Auto,
    /// Coverage at base only.
    Coverage,
    /// The imports of the changed modules only.
    Imports,
    /// None.
    Off,
}

/// Makes the lists optional in the schema; [`no_default`] takes the value it implies out.
fn no_ids() -> Vec<String> {
    Vec::new()
}

/// The lists have no default in the schema: a client that fills in defaults would send `[]`,
/// which replaces the task's list with none, where leaving it out keeps the task's.
fn no_default(schema: &mut schemars::Schema) {
    if let Some(props) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
        for list in ["f2p", "p2p"] {
            if let Some(prop) = props.get_mut(list).and_then(|p| p.as_object_mut()) {
                prop.remove("default");
            }
        }
    }
}

/// The MCP server: one task, one tool.
#[derive(Clone)]
pub struct Server {
    task: Check,
    options: Options,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Server {
    /// A server for the task `task` (a check without its patch).
    pub fn new(task: Check, options: Options) -> Server {
        Server {
            task,
            options,
            tool_router: Self::tool_router(),
        }
    }

    /// Grade a patch against the task.
    #[tool(
        title = "Check a patch",
        output_schema = rmcp::handler::server::common::schema_for_output::<crate::Verdict>(),
        annotations(
            title = "Check a patch",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        ),
        description = "Grade a candidate patch against the task's tests before submitting it: \
                       applies it to a clean checkout, runs the tests with and without it, and \
                       returns what to fix (tests the patch broke, target tests still failing, \
                       tests that could not be collected) followed by the full verdict as JSON. \
                       The outcome `resolved` (or `no-breakage` when the target tests are \
                       hidden) means the patch is ready."
    )]
    async fn check_patch(
        &self,
        Parameters(args): Parameters<CheckPatchArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut check = self.task.clone().patch("patch", args.patch);
        // A list the call gives replaces that list alone; the other stays the task's.
        if let Some(f2p) = args.f2p {
            check = check.replace_f2p(f2p);
        }
        if let Some(p2p) = args.p2p {
            check = check.replace_p2p(p2p);
        }
        if let Some(mode) = args.downstream {
            check = check.downstream(match mode {
                DownstreamArg::Auto => DownstreamMode::Auto,
                DownstreamArg::Coverage => DownstreamMode::Coverage,
                DownstreamArg::Imports => DownstreamMode::Imports,
                DownstreamArg::Off => DownstreamMode::Off,
            });
        }
        // Bad input is the caller's to fix: a tool error it can read, not a protocol error.
        // A cancelled call (`notifications/cancelled`, or the server shutting down) drops the
        // check: its process groups are killed and its checkouts removed, as for `check`.
        let run = tokio::select! {
            run = check.run() => run,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
        };
        let mut verdict = match run {
            Ok(v) => v,
            Err(e) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    e.to_string(),
                )]));
            }
        };
        if self.options.redact_f2p {
            check.redact(&mut verdict);
        }
        let json = serde_json::to_value(&verdict)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let render = |format| {
            report::render(&verdict, format)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))
        };
        let feedback = VerdictFormat::Feedback {
            max_bytes: self.options.max_bytes,
        };
        let mut content = vec![ContentBlock::text(render(feedback)?)];
        if !self.options.feedback_only {
            content.push(ContentBlock::text(render(VerdictFormat::Json)?));
        }
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(json);
        Ok(result)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("patchgrade", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Call check_patch with your patch (git diff output) before you submit. Fix what \
                 the feedback lists, and submit when the outcome is resolved (or no-breakage).",
            )
    }
}

/// Serve on stdin/stdout until the client closes the connection.
///
/// The lines go through a filter on their way in: a line that is not JSON gets the JSON-RPC
/// parse error (-32700, id null) that the specification asks for, where the transport alone
/// would drop it unanswered. One task writes stdout, so no two messages interleave.
pub async fn serve(server: Server) -> std::io::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const BUFFER: usize = 1 << 16;
    let (to_server, server_in) = tokio::io::duplex(BUFFER);
    let (server_out, from_server) = tokio::io::duplex(BUFFER);
    let (errors_tx, mut errors_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut to_server = to_server;
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            if serde_json::from_str::<serde::de::IgnoredAny>(&line).is_err() {
                let _ = errors_tx.send(parse_error());
                continue;
            }
            let framed = format!("{line}\n");
            if to_server.write_all(framed.as_bytes()).await.is_err() {
                break;
            }
        }
        // Dropping the pipe is the end of input for the server.
    });
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        let mut from_server = BufReader::new(from_server).lines();
        let mut errors_open = true;
        loop {
            let line = tokio::select! {
                line = from_server.next_line() => match line {
                    Ok(Some(line)) => line,
                    _ => break,
                },
                error = errors_rx.recv(), if errors_open => match error {
                    Some(error) => error,
                    None => {
                        errors_open = false;
                        continue;
                    }
                },
            };
            let framed = format!("{line}\n");
            if stdout.write_all(framed.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let running = server
        .serve((server_in, server_out))
        .await
        .map_err(std::io::Error::other)?;
    let quit = running.waiting().await.map_err(std::io::Error::other);
    reader.abort();
    let _ = writer.await;
    quit.map(|_| ())
}

/// The JSON-RPC 2.0 answer to a line that is not JSON.
fn parse_error() -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": "Parse error: the line is not JSON"}
    })
    .to_string()
}
