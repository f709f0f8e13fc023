//! The agent loop: feedback for a model, hidden tests (P2P only, redaction), and the MCP tool
//! spoken to over stdio, all on real repositories with real pytest.

use crate::setup::{BIN, CheckArgs, Fixture, example, helper_json};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn task() -> String {
    example("task.toml").display().to_string()
}

fn patch(name: &str) -> String {
    example(&format!("patches/{name}.diff"))
        .display()
        .to_string()
}

#[test]
fn feedback_says_what_to_fix_and_nothing_else() {
    let f = Fixture::calc();
    let run = f.run(
        &CheckArgs::new()
            .task(task())
            .repo(".")
            .patch(patch("regression"))
            .format("feedback"),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let text = &run.stdout;
    assert!(text.starts_with("Regression: "), "{text}");
    let broke = text
        .find("Your patch broke 1 test(s)")
        .expect("broken section");
    let failing = text
        .find("Still failing: 2 of 2 target test(s)")
        .expect("f2p section");
    assert!(broke < failing, "what the patch broke comes first:\n{text}");
    assert!(
        text.contains("tests/test_calc.py::test_sub\n    assert -2 == 2"),
        "{text}"
    );
    assert!(
        text.contains("at calc.py:25 (a file your patch changed)"),
        "{text}"
    );
    // Nothing the agent cannot act on: no grid, no timings, no test broken at base.
    for noise in ["Timings", "all P2P", "test_platform_quirk", "Warnings"] {
        assert!(!text.contains(noise), "{noise} in:\n{text}");
    }
}

#[test]
fn feedback_groups_a_collection_error_and_puts_it_first() {
    let f = Fixture::calc();
    let broken = f.scratch_file(
        "syntax.diff",
        "--- a/calc.py\n+++ b/calc.py\n@@ -6,3 +6,3 @@ def add(a, b):\n \n \n-def sub(a, b):\n+def sub(a, b)\n",
    );
    let run = f.run(
        &CheckArgs::new()
            .task(task())
            .repo(".")
            .patch(&broken)
            .format("feedback"),
    );
    let text = &run.stdout;
    assert!(text.starts_with("Regression: "), "{text}\n{}", run.stderr);
    let head = text
        .find("did not run (not collected")
        .expect("collection section");
    assert!(
        !text[..head].contains("  - "),
        "collection errors come first:\n{text}"
    );
    // Seven tests fail to collect for one reason: listed once, with the error.
    assert_eq!(text.matches("SyntaxError").count(), 1, "{text}");
    assert!(text.contains(" and 2 more"), "{text}");
}

#[test]
fn feedback_is_bounded() {
    let f = Fixture::calc();
    let run = f.run(
        &CheckArgs::new()
            .task(task())
            .repo(".")
            .patch(patch("regression"))
            .format("feedback")
            .flag("--max-bytes", "260"),
    );
    let text = &run.stdout;
    assert!(text.len() <= 260, "{} bytes:\n{text}", text.len());
    assert!(text.starts_with("Regression: "), "{text}");
    assert!(text.contains("more not shown"), "{text}");
}

/// The outcome line is there at any bound, cut but never dropped.
#[test]
fn feedback_always_has_the_outcome() {
    let f = Fixture::calc();
    for bound in ["1", "12", "40"] {
        let run = f.run(
            &CheckArgs::new()
                .task(task())
                .repo(".")
                .patch(patch("regression"))
                .format("feedback")
                .flag("--max-bytes", bound),
        );
        assert!(
            run.stdout.starts_with("Regression"),
            "{bound}: {}",
            run.stdout
        );
        assert_eq!(run.stdout.lines().count(), 1, "{bound}: {}", run.stdout);
    }
}

/// Where a test's message no longer fits, its id still does.
#[test]
fn feedback_keeps_ids_before_dropping_entries() {
    let f = Fixture::calc();
    let feedback = |bound: usize| {
        f.run(
            &CheckArgs::new()
                .task(task())
                .repo(".")
                .patch(patch("regression"))
                .format("feedback")
                .flag("--max-bytes", bound.to_string()),
        )
        .stdout
    };
    let full = feedback(4096);
    let entry = "  - tests/test_calc.py::test_sub\n";
    let end = full.find(entry).expect("the broken test") + entry.len();
    // Room for the entry's id, and 40 bytes kept for the closing note, but not its message.
    let text = feedback(end + 40 + 4);
    assert!(text.contains(entry), "{text}");
    assert!(!text.contains("assert -2 == 2"), "{text}");
}

/// Protected edits are said; a task's id that names no test says what it may have meant.
#[test]
fn feedback_says_protected_edits_and_did_you_mean() {
    let f = Fixture::calc();
    let edit = f.diff_of(
        "tests.diff",
        &[(
            "tests/test_calc.py",
            &format!(
                "{}\n# mine\n",
                std::fs::read_to_string(f.repo.join("tests/test_calc.py")).unwrap()
            ),
        )],
    );
    let run = |extra: &[&str]| {
        f.run(
            &CheckArgs::new()
                .runner("pytest")
                .patch(&edit)
                .format("feedback")
                .f2p("tests/test_calc.py::test_ad")
                .p2p("tests/test_calc.py::test_sub")
                .args(extra),
        )
        .stdout
    };
    let reverted = run(&["--on-protected-edit", "revert"]);
    assert!(
        reverted.contains("Your edits to tests/test_calc.py were not graded"),
        "{reverted}"
    );
    assert!(
        reverted.contains("tests/test_calc.py::test_ad (did you mean tests/test_calc.py::test_add"),
        "{reverted}"
    );
    let kept = run(&["--on-protected-edit", "warn"]);
    assert!(
        kept.contains("Your patch edits tests/test_calc.py, which are tests"),
        "{kept}"
    );
}

#[test]
fn p2p_only_is_about_breakage_never_resolved() {
    let f = Fixture::calc();
    let p2p = [
        "--p2p",
        "tests/test_calc.py::test_add",
        "--p2p",
        "tests/test_calc.py::test_sub",
    ];
    let resolved = patch("resolved");
    let regression = patch("regression");
    let run = |format: &str, p: &str| {
        f.run(
            &CheckArgs::new()
                .runner("pytest")
                .format(format)
                .patch(p)
                .args(&p2p),
        )
    };
    let ok = run("json", &resolved);
    assert_eq!(
        (ok.outcome(), ok.code),
        ("no-breakage".into(), 0),
        "{}",
        ok.stdout
    );
    let bad = run("json", &regression);
    assert_eq!((bad.outcome(), bad.code), ("breaking".into(), 1));
    let human = run("human", &regression);
    assert!(human.stdout.starts_with("Breaking: "), "{}", human.stdout);
    assert!(
        human.stdout.contains("F2P  none given (hidden)"),
        "{}",
        human.stdout
    );
}

#[test]
fn redaction_hides_the_hidden_files_a_candidate_edit_collided_with() {
    // The candidate writes its own tests/test_errors.py, the hidden tests' file: the verdict
    // says edits were overridden, but not which hidden file took their place.
    let f = Fixture::calc();
    let fake = f.scratch_file(
        "fake.diff",
        "diff --git a/tests/test_errors.py b/tests/test_errors.py\nnew file mode 100644\n\
         --- /dev/null\n+++ b/tests/test_errors.py\n@@ -0,0 +1,2 @@\n\
         +def test_mine():\n+    pass\n",
    );
    for format in ["json", "human", "feedback"] {
        let run = f.run(
            &CheckArgs::new()
                .task(task())
                .repo(".")
                .patch(&fake)
                .format(format)
                .arg("--redact-f2p"),
        );
        assert!(
            !run.stdout.contains("test_errors"),
            "{format}:\n{}",
            run.stdout
        );
        if format == "json" {
            let v = run.json();
            assert_eq!(
                v["patch"]["overridden_files"],
                serde_json::json!(["hidden-test-file-1"])
            );
        }
    }
}

#[test]
fn redacted_output_never_shows_the_hidden_tests() {
    let f = Fixture::calc();
    for format in ["json", "human", "feedback"] {
        let run = f.run(
            &CheckArgs::new()
                .task(task())
                .repo(".")
                .patch(patch("work-in-progress"))
                .format(format)
                .arg("--redact-f2p"),
        );
        // The hidden test file and the F2P test names appear nowhere.
        for secret in ["test_errors", "raises", "DID NOT RAISE"] {
            assert!(
                !run.stdout.contains(secret),
                "{format}: {secret} in:\n{}",
                run.stdout
            );
        }
        if format == "json" {
            let v = run.json();
            assert_eq!(
                (v["f2p"]["passing"].as_u64(), v["f2p"]["total"].as_u64()),
                (Some(1), Some(2))
            );
            assert_eq!(v["outcome"], "work-in-progress");
            assert_eq!(v["redacted"], true);
            assert_eq!(v["tests"][0]["id"], "hidden-f2p-1");
        }
        if format == "feedback" {
            assert!(
                run.stdout
                    .contains("1 of 2 hidden target test(s) still fail"),
                "{}",
                run.stdout
            );
            // P2P breakage stays fully visible.
            assert!(
                run.stdout.contains("tests/test_calc.py::test_add"),
                "{}",
                run.stdout
            );
        }
    }
}

/// A client speaking MCP (JSON-RPC over newline-delimited stdio) to `patchgrade mcp`.
struct Client {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Client {
    /// A server for the example task.
    fn start(f: &Fixture, extra: &[&str]) -> Client {
        let task = task();
        let mut args = vec!["--task", &task, "--repo", "."];
        args.extend(extra);
        Client::spawn(f, &args)
    }

    /// A server for the task these arguments give.
    fn spawn(f: &Fixture, args: &[&str]) -> Client {
        let mut child = Command::new(BIN)
            .arg("mcp")
            .args(args)
            .env("TMPDIR", &f.tmp)
            .env("XDG_CACHE_HOME", f.cache_home())
            .current_dir(&f.repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("patchgrade mcp starts");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        Client {
            child,
            out,
            next: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.out.read_line(&mut line).expect("read");
            assert!(n > 0, "server closed stdout before answering {method}");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{method}: {message:#}");
                return message["result"].clone();
            }
        }
    }

    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.child.stdin.take());
        self.child.wait().expect("exit")
    }
}

fn initialize(client: &mut Client) {
    let init = client.request(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "patchgrade-test", "version": "0"}
        }),
    );
    assert_eq!(init["serverInfo"]["name"], "patchgrade");
    assert!(init["capabilities"]["tools"].is_object(), "{init:#}");
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

#[test]
fn mcp_check_patch_over_stdio() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let mut client = Client::start(&f, &[]);
    initialize(&mut client);

    let tools = client.request("tools/list", json!({}));
    let tool = &tools["tools"][0];
    assert_eq!(tool["name"], "check_patch");
    assert_eq!(
        tool["inputSchema"]["required"],
        json!(["patch"]),
        "{tool:#}"
    );
    // Plain arrays with no default (a client filling in `[]` would drop the task's list).
    for list in ["f2p", "p2p"] {
        let prop = &tool["inputSchema"]["properties"][list];
        assert_eq!(prop["type"], "array", "{tool:#}");
        assert!(prop.get("default").is_none(), "{tool:#}");
    }
    assert_eq!(tool["title"], "Check a patch");
    // The structured content's schema is the verdict's, as shipped.
    let shipped: Value = serde_json::from_slice(
        &std::fs::read(crate::setup::root().join("schemas/verdict.schema.json")).unwrap(),
    )
    .unwrap();
    let keys = |schema: &Value| -> Vec<String> {
        let mut keys: Vec<String> = schema["properties"]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        keys.sort();
        keys
    };
    assert_eq!(keys(&tool["outputSchema"]), keys(&shipped), "{tool:#}");
    let output_schema = jsonschema::validator_for(&tool["outputSchema"]).expect("a schema");
    let hints = &tool["annotations"];
    assert_eq!(
        (
            &hints["readOnlyHint"],
            &hints["idempotentHint"],
            &hints["openWorldHint"]
        ),
        (&json!(true), &json!(true), &json!(false)),
        "{tool:#}"
    );

    // A line that is not JSON gets JSON-RPC's parse error, and the server goes on.
    {
        let stdin = client.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "this is not JSON").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        client.out.read_line(&mut line).unwrap();
        let error: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
        assert_eq!(error["error"]["code"], -32700, "{error:#}");
        assert!(error["id"].is_null(), "{error:#}");
    }

    let diff = std::fs::read_to_string(patch("regression")).unwrap();
    let result = client.request(
        "tools/call",
        json!({"name": "check_patch", "arguments": {"patch": diff}}),
    );
    assert_eq!(result["isError"], false, "{result:#}");
    let feedback = result["content"][0]["text"].as_str().unwrap();
    assert!(feedback.starts_with("Regression: "), "{feedback}");
    assert!(
        feedback.contains("tests/test_calc.py::test_sub"),
        "{feedback}"
    );
    let verdict: Value =
        serde_json::from_str(result["content"][1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(verdict["outcome"], "regression");
    assert_eq!(result["structuredContent"]["outcome"], "regression");
    crate::setup::conforms(&result["structuredContent"]);
    assert!(output_schema.is_valid(&result["structuredContent"]));

    // Ids given with the call replace the task's.
    let fix = std::fs::read_to_string(patch("resolved")).unwrap();
    let result = client.request(
        "tools/call",
        json!({"name": "check_patch", "arguments": {
            "patch": fix, "f2p": [], "p2p": ["tests/test_calc.py::test_add"]}}),
    );
    assert_eq!(
        result["structuredContent"]["outcome"], "no-breakage",
        "{result:#}"
    );

    // One list given replaces that list alone: the task's P2P ids still grade the regression.
    let result = client.request(
        "tools/call",
        json!({"name": "check_patch", "arguments": {
            "patch": diff, "f2p": ["tests/test_errors.py::test_divide_by_zero_raises"]}}),
    );
    assert_eq!(
        result["structuredContent"]["outcome"], "regression",
        "{result:#}"
    );
    assert_eq!(result["structuredContent"]["f2p"]["total"], 1, "{result:#}");

    // Bad input is a tool error the agent can read, and the server keeps serving.
    let result = client.request(
        "tools/call",
        json!({"name": "check_patch", "arguments": {"patch": "this is not a diff"}}),
    );
    assert_eq!(result["isError"], true, "{result:#}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("patch"),
        "{result:#}"
    );

    assert!(client.finish().success());
    f.assert_untouched(&before);
}

/// `--feedback-only`: the text is the feedback alone; the verdict is the structured content.
#[test]
fn mcp_feedback_only_leaves_the_json_text_out() {
    let f = Fixture::calc();
    let mut client = Client::start(&f, &["--feedback-only"]);
    initialize(&mut client);
    let diff = std::fs::read_to_string(patch("regression")).unwrap();
    let result = client.request(
        "tools/call",
        json!({"name": "check_patch", "arguments": {"patch": diff}}),
    );
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{result:#}");
    assert!(
        content[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Regression: ")
    );
    assert_eq!(result["structuredContent"]["outcome"], "regression");
    assert!(client.finish().success());
}

#[test]
fn mcp_redacts_hidden_tests() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let mut client = Client::start(&f, &["--redact-f2p"]);
    initialize(&mut client);
    let diff = std::fs::read_to_string(patch("work-in-progress")).unwrap();
    let result = client.request(
        "tools/call",
        json!({"name": "check_patch", "arguments": {"patch": diff}}),
    );
    let all = result.to_string();
    assert!(!all.contains("test_errors"), "{all}");
    assert_eq!(result["structuredContent"]["f2p"]["total"], 2);
    assert!(client.finish().success());
    f.assert_untouched(&before);
}

#[test]
fn agent_loop_example_stops_at_the_resolving_patch() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let script = crate::setup::root().join("examples/agent_loop.py");
    let out = Command::new("python3")
        .arg(&script)
        .args([
            "--patchgrade",
            BIN,
            ".",
            &task(),
            &patch("regression"),
            &patch("resolved"),
            &patch("no-op"),
        ])
        .env("TMPDIR", &f.tmp)
        .env("XDG_CACHE_HOME", f.cache_home())
        .current_dir(&f.repo)
        .output()
        .expect("python3 runs");
    f.assert_untouched(&before);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("attempt 1: ") && stdout.contains(": regression"),
        "{stdout}"
    );
    assert!(
        stdout.contains("feedback for the model:\n  Regression: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("attempt 2: ") && stdout.contains(": resolved\nsubmit this patch"),
        "{stdout}"
    );
    assert!(!stdout.contains("attempt 3"), "{stdout}");
}

#[test]
fn submit_hook_grades_the_working_tree_and_blocks_a_regression() {
    let f = Fixture::calc();
    let hook = crate::setup::root().join("examples/submit_hook.sh");
    let bin_dir = std::path::Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |f: &Fixture| {
        Command::new("bash")
            .arg(&hook)
            .env("PATCHGRADE_TASK", task())
            .env("PATH", &path)
            .env("TMPDIR", &f.tmp)
            .env("XDG_CACHE_HOME", f.cache_home())
            .current_dir(&f.repo)
            .output()
            .expect("hook runs")
    };
    // The agent's edit: the regression, made in the working tree.
    crate::setup::git(&f.repo, &["apply", &patch("regression")]);
    let before = f.snapshot();
    let out = run(&f);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.starts_with("Regression: "), "{stdout}");
    f.assert_untouched(&before);
    // After a fix in the working tree (a new file included), the hook lets it through.
    crate::setup::git(&f.repo, &["checkout", "--", "."]);
    crate::setup::git(&f.repo, &["apply", &patch("resolved")]);
    let before = f.snapshot();
    let out = run(&f);
    f.assert_untouched(&before);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ready to submit"), "{stdout}");

    // The agent commits its fix and adds a binary file: the hook grades everything since the
    // task's base (not the new HEAD, which would be an empty patch), the binary file with its
    // content.
    let base = String::from_utf8(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&f.repo)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let example_task = std::fs::read_to_string(task()).unwrap();
    let hidden = crate::setup::example("patches/hidden-tests.diff");
    let pinned = f.scratch_file(
        "pinned.toml",
        &format!(
            "base = \"{}\"\n{}",
            base.trim(),
            example_task.replace(
                "\"patches/hidden-tests.diff\"",
                &format!("\"{}\"", hidden.display())
            )
        ),
    );
    crate::setup::git(&f.repo, &["add", "--all"]);
    crate::setup::git(&f.repo, &["commit", "--quiet", "-m", "the agent's fix"]);
    std::fs::write(f.repo.join("logo.bin"), b"\x89PNG\0\0binary").unwrap();
    let before = f.snapshot();
    let out = Command::new("bash")
        .arg(&hook)
        .env("PATCHGRADE_TASK", &pinned)
        .env("PATH", &path)
        .env("TMPDIR", &f.tmp)
        .env("XDG_CACHE_HOME", f.cache_home())
        .current_dir(&f.repo)
        .output()
        .expect("hook runs");
    f.assert_untouched(&before);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("Resolved: "), "{stdout}");
}

/// How an MCP server is stopped in the middle of a call.
#[derive(Clone, Copy, PartialEq)]
enum Stop {
    Term,
    StdinClosed,
    Cancelled,
}

/// Stop a server while a call's tests hang (both runs, each with a grandchild): no test
/// process survives, no checkout is left, and a cancelled call leaves the server serving.
fn mcp_stopped_mid_call(stop: Stop) {
    let tag = match stop {
        Stop::Term => "mcp-term",
        Stop::StdinClosed => "mcp-eof",
        Stop::Cancelled => "mcp-cancel",
    };
    let (f, patch, marker, cmd) = crate::setup::hanging(tag);
    let before = f.snapshot();
    let mut client = Client::spawn(&f, &["--repo", ".", "--test-cmd", &cmd, "--p2p", "t"]);
    initialize(&mut client);
    let diff = std::fs::read_to_string(&patch).unwrap();
    client.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": {"name": "check_patch", "arguments": {"patch": diff}}}));
    crate::setup::wait_for_processes(&marker, "time.sleep", 2);
    // The tests' processes, not the server, whose own command line holds the marker too.
    let tests = || -> Vec<String> {
        crate::setup::processes_with(&marker)
            .into_iter()
            .filter(|p| !p.contains(" mcp "))
            .collect()
    };
    let gone = || {
        let started = std::time::Instant::now();
        while !tests().is_empty() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "processes survived: {:?}",
                tests()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    match stop {
        Stop::Term => {
            let pid = client.child.id().to_string();
            let killed = Command::new("kill").args(["-TERM", &pid]).status();
            assert!(killed.unwrap().success());
            let status = client.child.wait().unwrap();
            assert_eq!(status.code(), Some(143));
        }
        Stop::StdinClosed => {
            let status = client.finish();
            assert!(status.success(), "{status:?}");
        }
        Stop::Cancelled => {
            client.send(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 99, "reason": "the agent moved on"}}),
            );
            gone();
            // The server is still there for the next call.
            let tools = client.request("tools/list", json!({}));
            assert_eq!(tools["tools"][0]["name"], "check_patch");
            assert!(client.finish().success());
        }
    }
    gone();
    f.assert_untouched(&before);
}

#[test]
fn mcp_sigterm_mid_call_kills_the_tests_and_removes_the_checkouts() {
    mcp_stopped_mid_call(Stop::Term);
}

#[test]
fn mcp_stdin_closed_mid_call_kills_the_tests_and_removes_the_checkouts() {
    mcp_stopped_mid_call(Stop::StdinClosed);
}

#[test]
fn mcp_cancelled_call_kills_its_tests_and_the_server_goes_on() {
    mcp_stopped_mid_call(Stop::Cancelled);
}

/// A task that cannot be graded is said when the server starts, in one line, exit 2.
#[test]
fn mcp_checks_the_task_when_it_starts() {
    let f = Fixture::calc();
    let out = Command::new(BIN)
        .args([
            "mcp",
            "--repo",
            "no-such-dir",
            "--runner",
            "pytest",
            "--p2p",
            "t",
        ])
        .current_dir(&f.repo)
        .env("TMPDIR", &f.tmp)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no-such-dir"), "{stderr}");
}

/// The official MCP Python SDK's client (`mcp` from PyPI, `tests/mcp/client.py`) starts
/// `patchgrade mcp`, lists its tool, and calls it: the SDK checks the structured content
/// against the declared output schema, and the verdict comes back.
#[test]
fn the_official_mcp_python_client_calls_check_patch() {
    let Some(python) = crate::setup::mcp_python() else {
        return;
    };
    let f = Fixture::calc();
    let before = f.snapshot();
    let task = task();
    let seen = helper_json(
        Command::new(python)
            .arg(crate::setup::root().join("tests/mcp/client.py"))
            .arg(patch("regression"))
            .arg(BIN)
            .args(["mcp", "--task", &task, "--repo", "."])
            .env("TMPDIR", &f.tmp)
            .env("XDG_CACHE_HOME", f.cache_home())
            .current_dir(&f.repo),
    );
    assert_eq!(seen["server"], "patchgrade");
    assert_eq!(seen["tools"], json!(["check_patch"]));
    assert_eq!(seen["title"], "Check a patch");
    assert_eq!(seen["read_only"], true);
    assert_eq!(seen["output_schema"], true);
    assert_eq!(seen["input_required"], json!(["patch"]));
    assert_eq!(seen["is_error"], false);
    assert_eq!(seen["outcome"], "regression", "{seen:#}");
    assert!(
        seen["feedback"]
            .as_str()
            .unwrap()
            .contains("tests/test_calc.py::test_sub"),
        "{seen:#}"
    );
    f.assert_untouched(&before);
}

/// Code under test reads the hidden test file, applied beside it, and raises its text in a
/// P2P failure: without `--redact-f2p` the feedback shows it (the attack works); with it, no
/// output quotes a line of it, and the counts stay.
#[test]
fn redacted_output_withholds_a_failure_that_quotes_the_hidden_tests() {
    let f = Fixture::calc();
    let calc = std::fs::read_to_string(f.repo.join("calc.py")).unwrap();
    let leaking = calc.replace(
        "def add(a, b):\n    return a + b\n",
        "def add(a, b):\n    import pathlib\n    for p in sorted(pathlib.Path('tests').glob('test_*.py')):\n        \
         if 'raises' in p.read_text():\n            raise AssertionError(' | '.join(p.read_text().splitlines()))\n    return a + b\n",
    );
    assert_ne!(leaking, calc);
    let patch = f.diff_of("leak.diff", &[("calc.py", &leaking)]);
    let secret = "with pytest.raises(ValueError):";
    let run = |format: &str, redact: bool| {
        let mut args = CheckArgs::new()
            .task(task())
            .repo(".")
            .patch(&patch)
            .format(format);
        if redact {
            args = args.arg("--redact-f2p");
        }
        f.run(&args)
    };
    let open = run("feedback", false);
    assert!(open.stdout.contains(secret), "{}", open.stdout);
    for format in ["json", "human", "feedback"] {
        let out = run(format, true).stdout;
        for line in [secret, "def test_mean_of_nothing_raises():"] {
            assert!(!out.contains(line), "{format}: `{line}` in:\n{out}");
        }
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["outcome"], "regression", "{v:#}");
            let add = v["tests"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["id"] == "tests/test_calc.py::test_add")
                .unwrap();
            assert_eq!(add["effect"], "broken");
            assert_eq!(add["message"], "(withheld: it quotes the hidden tests)");
        }
    }
}
