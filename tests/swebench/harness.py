"""SWE-bench's own grading and reporting code (the `swebench` package from PyPI), called the
way its harness calls it, for the tests that check patchgrade against it.

    harness.py grade ROWS_JSON TEST_OUTPUT
        get_eval_report of each dataset row (instance_id, repo, version, FAIL_TO_PASS,
        PASS_TO_PASS) against one test log; prints the list of reports.
    harness.py evaluate SPEC_JSON
        writes logs/run_evaluation/<run_id>/<model>/<instance_id>/ as run_instance writes it
        (report.json, test_output.txt, run_instance.log) for each instance of the spec, in the
        current directory, then prints make_run_report's report.

A spec: {"run_id", "dataset": [rows], "predictions": [...], "runs": {instance_id:
{"test_output": text}, the same with "timed_out": seconds (the harness's timeout), or
{"apply_output": text}}}; a prediction without a run is not run.
"""

import contextlib
import io
import json
import sys

from swebench.harness.constants import (
    APPLY_PATCH_FAIL,
    APPLY_PATCH_PASS,
    LOG_INSTANCE,
    LOG_REPORT,
    LOG_TEST_OUTPUT,
    MAP_REPO_TO_EXT,
    RUN_EVALUATION_LOG_DIR,
)
from swebench.harness.grading import get_eval_report
from swebench.harness.reporting import make_run_report
from swebench.harness.test_spec.test_spec import TestSpec
from swebench.harness.docker_build import close_logger, setup_logger


def spec(row):
    # The fields get_eval_report reads; make_test_spec would also build the images' scripts,
    # which needs the network for some repositories.
    return TestSpec(
        instance_id=row["instance_id"],
        repo=row["repo"],
        version=row["version"],
        repo_script_list=[],
        eval_script_list=[],
        env_script_list=[],
        arch="x86_64",
        FAIL_TO_PASS=row["FAIL_TO_PASS"],
        PASS_TO_PASS=row["PASS_TO_PASS"],
        language=MAP_REPO_TO_EXT[row["repo"]],
        docker_specs={},
        namespace=None,
    )


def evaluate(spec_json):
    run_id = spec_json["run_id"]
    rows = {r["instance_id"]: r for r in spec_json["dataset"]}
    predictions = {p["instance_id"]: p for p in spec_json["predictions"]}
    for instance_id, run in spec_json["runs"].items():
        pred = predictions[instance_id]
        model = pred.get("model_name_or_path", "None").replace("/", "__")
        log_dir = RUN_EVALUATION_LOG_DIR / run_id / model / instance_id
        log_dir.mkdir(parents=True, exist_ok=True)
        logger = setup_logger(instance_id, log_dir / LOG_INSTANCE)
        if "apply_output" in run:
            # run_instance logs this and raises: no report.json.
            logger.info(f"{APPLY_PATCH_FAIL}:\n{run['apply_output']}")
            close_logger(logger)
            continue
        logger.info(f"{APPLY_PATCH_PASS}:\n")
        test_output_path = log_dir / LOG_TEST_OUTPUT
        test_output_path.write_text(run["test_output"])
        if "timed_out" in run:
            # run_instance appends this and raises EvaluationError: no report.json.
            with open(test_output_path, "a") as f:
                f.write(f"\n\nTimeout error: {run['timed_out']} seconds exceeded.")
            logger.info(f"Test timed out after {run['timed_out']} seconds.")
            close_logger(logger)
            continue
        report = get_eval_report(
            test_spec=spec(rows[instance_id]),
            prediction=pred,
            test_log_path=test_output_path,
            include_tests_status=True,
        )
        with open(log_dir / LOG_REPORT, "w") as f:
            f.write(json.dumps(report, indent=4))
        close_logger(logger)
    with contextlib.redirect_stdout(io.StringIO()):
        path = make_run_report(predictions, spec_json["dataset"], run_id, client=None)
    print(open(path).read())


def main(argv):
    if argv[1] == "grade":
        rows = json.load(open(argv[2]))
        reports = [
            get_eval_report(
                spec(row),
                {"instance_id": row["instance_id"], "model_name_or_path": "m", "model_patch": "x"},
                argv[3],
                include_tests_status=True,
            )
            for row in rows
        ]
        print(json.dumps(reports, indent=4))
    elif argv[1] == "evaluate":
        evaluate(json.load(open(argv[2])))
    else:
        sys.exit(f"unknown command {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
