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
#   PATCHGRADE_BASE=abc123 ...                                   # the base, if the task has none
#
# The repository is never modified: patchgrade applies the diff in its own checkout.
set -euo pipefail
: "${PATCHGRADE_TASK:?set PATCHGRADE_TASK to the task file}"
patch=$(mktemp)
trap 'rm -f "$patch"' EXIT
# The task's base, not HEAD: an agent that committed its work has HEAD past the base, and its
# diff from HEAD would be empty. PATCHGRADE_BASE, else the task file's `base_commit` or `base`
# (TOML or JSON), else HEAD.
base=${PATCHGRADE_BASE:-}
if [ -z "$base" ]; then
    base=$(sed -n -E 's/^[[:space:]]*"?(base_commit|base)"?[[:space:]]*[:=][[:space:]]*"([^"]+)".*/\2/p' \
        "$PATCHGRADE_TASK" | head -n 1)
fi
base=$(git rev-parse --verify "${base:-HEAD}^{commit}")
# Everything the agent changed since the base, committed or not, new files included, binary
# files with their content (`--binary`; without it git writes only "Binary files differ",
# which no one can apply), without touching the index.
git diff --binary "$base" > "$patch"
git ls-files --others --exclude-standard -z | while IFS= read -r -d '' f; do
    git diff --binary --no-index -- /dev/null "$f" >> "$patch" || true
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
