#!/usr/bin/env python3
"""A minimal agent loop around patchgrade (no model needed).

An agent proposes a patch, patchgrade grades it before submission, and the agent reacts to
what broke. Here the "agent" just cycles through candidate patches, as a model would revise
its patch; where a model would read the feedback, this script prints it.

    examples/agent_loop.py REPO TASK PATCH...

Stops at the first patch whose outcome is `resolved` (or `no-breakage` when the target tests
are hidden). Exit 0 if one was found, 1 otherwise.
"""
import json
import subprocess
import sys


def grade(patchgrade, repo, task, patch, fmt):
    run = subprocess.run(
        [patchgrade, "check", "--task", task, "--repo", repo, "--patch", patch,
         "--format", fmt],
        capture_output=True, text=True,
    )
    if run.returncode == 2:  # bad input: nothing was run
        raise SystemExit(f"patchgrade: {run.stderr.strip()}")
    return run.stdout


def main(argv):
    if len(argv) < 4:
        raise SystemExit(__doc__)
    patchgrade = "patchgrade"
    if argv[1] == "--patchgrade":
        patchgrade, argv = argv[2], argv[:1] + argv[3:]
    repo, task, patches = argv[1], argv[2], argv[3:]
    for attempt, patch in enumerate(patches, 1):
        verdict = json.loads(grade(patchgrade, repo, task, patch, "json"))
        outcome = verdict["outcome"]
        print(f"attempt {attempt}: {patch}: {outcome}")
        if outcome in ("resolved", "no-breakage"):
            print("submit this patch")
            return 0
        # What a model would read next: the feedback text, bounded in size. (The JSON above
        # has the same facts; --format feedback spares a second run in a real loop.)
        feedback = grade(patchgrade, repo, task, patch, "feedback")
        print("feedback for the model:")
        print("  " + feedback.strip().replace("\n", "\n  "))
    print("no patch resolved the task")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
