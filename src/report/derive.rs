//! A task derived from its gold patch (`derive`), as a task file, a SWE-bench row or one line.

use super::error::RenderError;
use crate::check::Derived;
use serde::Serialize;

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

/// The task file, headed by its one-line summary.
pub fn task(d: &Derived) -> Result<String, RenderError> {
    let task = TaskOut {
        instance_id: d.instance_id.as_deref(),
        base: &d.base_commit,
        runner: d.runner.map(|p| p.name()),
        test_cmd: d.test_cmd.as_deref(),
        ids: d.test_cmd.as_ref().and(d.ids.map(|s| s.name())),
        setup_cmd: d.setup_cmd.as_deref(),
        test_patch: d.test_patch.as_deref(),
        f2p: &d.f2p,
        p2p: &d.p2p,
    };
    Ok(format!(
        "# patchgrade derive: {}\n{}",
        line(d),
        toml::to_string(&task)?
    ))
}

/// A SWE-bench dataset row, which keeps both lists as JSON-encoded strings.
pub fn swebench_row(d: &Derived, gold: &str) -> Result<String, RenderError> {
    let row = serde_json::json!({
        "instance_id": d.instance_id.clone().unwrap_or_default(),
        "base_commit": d.base_commit,
        "patch": gold,
        "test_patch": d.test_patch.clone().unwrap_or_default(),
        "FAIL_TO_PASS": serde_json::to_string(&d.f2p)?,
        "PASS_TO_PASS": serde_json::to_string(&d.p2p)?,
    });
    Ok(format!("{row}\n"))
}

/// One line for people: the counts, and what was left out.
pub fn line(d: &Derived) -> String {
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
