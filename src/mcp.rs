//! `patchgrade mcp`: the check as a Model Context Protocol tool, served over stdio.
//!
//! The task (repository, base, hidden tests, ids, runner) is fixed when the server starts; an
//! agent calls `check_patch` with its patch after each edit and gets the feedback text (what
//! to fix) and the verdict JSON (everything, for programs).

use crate::check::Check;
use crate::report;
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
}

/// The arguments of `check_patch`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CheckPatchArgs {
    /// The candidate patch: a unified diff (`git diff` output) against the task's base.
    pub patch: String,
    /// Fail-to-pass test ids, replacing the task's (its pass-to-pass ids stay).
    #[serde(default)]
    pub f2p: Option<Vec<String>>,
    /// Pass-to-pass test ids, replacing the task's (its fail-to-pass ids stay).
    #[serde(default)]
    pub p2p: Option<Vec<String>>,
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
            verdict.redact_f2p();
        }
        let json = serde_json::to_value(&verdict)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut result = CallToolResult::success(vec![
            ContentBlock::text(report::feedback(&verdict, self.options.max_bytes)),
            ContentBlock::text(report::json(&verdict)),
        ]);
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
pub async fn serve(server: Server) -> std::io::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
