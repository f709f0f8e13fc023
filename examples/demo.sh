#!/usr/bin/env bash
# The bundled example: builds a git repository from examples/calc/project in a temporary
# directory, then grades every candidate patch in examples/calc/patches with `patchgrade check`.
# Needs Rust and Python 3; pytest goes into .venv (scripts/pyenv).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
example="$root/examples/calc"
export PATH="$("$root/scripts/pyenv"):$PATH"

# Cargo builds where CARGO_TARGET_DIR says, when it is set.
patchgrade="${CARGO_TARGET_DIR:-$root/target}/release/patchgrade"
if [ ! -x "$patchgrade" ]; then
    echo "Building patchgrade (release; a few minutes the first time)..." >&2
fi
cargo build --quiet --release --manifest-path "$root/Cargo.toml"

repo=$(mktemp -d "${TMPDIR:-/tmp}/patchgrade-demo.XXXXXX")
trap 'rm -rf "$repo"' EXIT
cp -R "$example/project/." "$repo"
git -C "$repo" init --quiet
git -C "$repo" add --all
git -C "$repo" -c user.name=demo -c user.email=demo@example.invalid commit --quiet -m "calc: base"

failed=0
echo "Grading each patch in examples/calc/patches against $repo"
echo
printf '%-28s %-20s %s\n' "patch" "outcome" "exit"
for patch in resolved breaking-resolved partially-resolved work-in-progress no-op regression empty patch-failed; do
  set +e
  outcome=$("$patchgrade" check --task "$example/task.toml" --repo "$repo" \
    --patch "$example/patches/$patch.diff" --format json \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["outcome"])')
  code=${PIPESTATUS[0]}
  set -e
  printf '%-28s %-20s %s\n' "$patch.diff" "$outcome" "$code"
  # Each patch is named for the outcome it shows (empty.diff: empty-patch).
  expected=$patch
  [ "$patch" = empty ] && expected=empty-patch
  [ "$outcome" = "$expected" ] || { echo "demo: $patch.diff graded $outcome, not $expected" >&2; failed=1; }
done

echo
echo "The full report for regression.diff:"
echo
"$patchgrade" check --task "$example/task.toml" --repo "$repo" \
  --patch "$example/patches/regression.diff" || true
exit "$failed"
