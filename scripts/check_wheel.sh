#!/usr/bin/env bash
# The deployment install, as a user without torch gets it: build the wheel, install it into a fresh venv
# (its dependencies from the package registry; no torch), fetch a model from this repository's copy,
# translate and classify, and load a shipped config by name. Fails when the wheel is over 5 MB, torch got installed, or a command fails.
# CI runs it before `make test` (.ci/run); by hand: scripts/check_wheel.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${1:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$PYTHON -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" . >/dev/null
wheel=$(ls "$work"/dist/attnkit-*.whl)
size=$(stat -c %s "$wheel")
echo "wheel: $(basename "$wheel"), $((size / 1024)) KB"
test "$size" -lt $((5 * 1024 * 1024)) || { echo "wheel over 5 MB" >&2; exit 1; }
$PYTHON -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$wheel"
if "$work/venv/bin/python" -c "import torch" 2>/dev/null; then echo "torch was installed" >&2; exit 1; fi
export ATTNKIT_HOME="$work/home"
cd "$work"  # nothing from the repository on the path
# the default translator (enfr-transformer's int8 export) and its reranking channel model (fren-rnn)
"$work/venv/bin/attnkit" fetch enfr-transformer fren-rnn reviews-han digits-captioner --from "$OLDPWD/src/attnkit"
out=$("$work/venv/bin/attnkit" translate "The cat sits on the mat.")
echo "translate: $out"
test "$out" = "Le chat s'est assis sur le tapis."
"$work/venv/bin/attnkit" classify "I love this dress, it fits perfectly." --json >/dev/null
caption=$("$work/venv/bin/attnkit" caption "$OLDPWD/tests/fixtures/captions/img0.png")
echo "caption: $caption"
test "${caption%%$'\t'*}" = "five two"
"$work/venv/bin/python" -c "from attnkit.config import load_config; load_config('toy-copy')"
# --engine ray without the ray extra: one line naming the extra, exit 2, before any work
rc=0; msg=$("$work/venv/bin/attnkit" translate --engine ray "Hi." 2>&1) || rc=$?
test "$rc" = 2 || { echo "--engine ray without Ray: exit $rc ($msg)" >&2; exit 1; }
case "$msg" in *"pip install 'attnkit[ray]'"*) ;; *) echo "--engine ray without Ray: $msg" >&2; exit 1 ;; esac
echo "torch-free install: fetch, translate, classify and caption work"
