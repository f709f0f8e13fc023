#!/usr/bin/env bash
# A submit hook for SWE-agent / mini-swe-agent style harnesses.
#
# Those harnesses end an episode when the model runs `submit`; the diff of the working tree
# is the prediction. Run this hook instead (or from the harness's submit command) in the
# task's repository: it grades the current diff against the base and, unless the outcome is
# acceptable, prints the feedback and exits 1 so the agent keeps working.
#
#   PATCHGRADE_TASK=task.toml examples/submit_hook.sh            # task file with ids, runner
#   PATCHGRADE_ARGS='--redact-f2p' ...                           # hide the hidden tests
#
# The repository is never modified: patchgrade applies the diff in its own checkout.
set -euo pipefail
: "${PATCHGRADE_TASK:?set PATCHGRADE_TASK to the task file}"
patch=$(mktemp)
trap 'rm -f "$patch"' EXIT
# Everything the agent changed since the base, new files included, without touching the index.
base=$(git rev-parse HEAD)
git diff "$base" > "$patch"
git ls-files --others --exclude-standard -z | while IFS= read -r -d '' f; do
    git diff --no-index -- /dev/null "$f" >> "$patch" || true
done
# shellcheck disable=SC2086
if patchgrade check --task "$PATCHGRADE_TASK" --repo . --base "$base" --patch "$patch" \
    --format feedback ${PATCHGRADE_ARGS:-}; then
    echo "patchgrade: ready to submit"
else
    status=$?
    echo "patchgrade: not submitted; fix the above and submit again" >&2
    exit "$status"
fi
