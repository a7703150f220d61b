#!/usr/bin/env bash
# Train a reviews-han ensemble: K members of configs/reviews-han.yaml (seeds 12, 13, ...) on 2 cores.
#
#   bash scripts/train_han_ensemble.sh OUT_DIR [K=4] [--set key=value ...]
#
# Two members train at a time with one thread each (on 2 cores two 1-thread runs get ~1.5x the
# throughput of one 2-thread run); member 12 trains the word2vec vectors first and every other
# member reuses them (training.word2vec_vectors); each member's last 4 checkpoints are averaged;
# OUT_DIR/ensemble.pt holds them all and OUT_DIR/wall.json the wall time of the whole thing.
# ALT_WEIGHTING=none: members 13, 15, ... train with that class weighting instead of the config's.
set -euo pipefail
OUT=${1:?usage: train_han_ensemble.sh OUT_DIR [K] [--set key=value ...]}
K=${2:-4}
shift $(($# >= 2 ? 2 : 1))
BIN=${BIN:-.venv/bin}
EXTRA=("$@")
SHARED=(--set training.word2vec_epochs=0 --set "training.word2vec_vectors=$OUT/s12/word2vec.pt")
mkdir -p "$OUT"
start=$(date +%s)

member() {  # seed [--set ...]: train, then average the last 4 checkpoints
  local seed=$1
  shift
  "$BIN/attnkit" train configs/reviews-han.yaml --set "training.seed=$seed" --set training.threads=1 \
    --set "training.out_dir=$OUT/s$seed" --set training.progress=false "${EXTRA[@]}" "$@" \
    > "$OUT/s$seed.log" 2>&1 || { echo "member $seed failed: see $OUT/s$seed.log" >&2; return 1; }
  # shellcheck disable=SC2046
  "$BIN/attnkit" average $(ls "$OUT/s$seed"/step-*.pt | sort -V | tail -4) --out "$OUT/s$seed/avg4.pt" > /dev/null
}

slot() {  # seeds one after another
  for seed in "$@"; do
    [ -f "$OUT/s12/word2vec.pt" ] || SHARED=()
    if [ -n "${ALT_WEIGHTING:-}" ] && ((seed % 2)); then
      member "$seed" "${SHARED[@]}" --set "training.class_weighting=$ALT_WEIGHTING"
    else
      member "$seed" "${SHARED[@]}"
    fi
  done
}

seeds_a=() seeds_b=()
for ((i = 1; i < K; i++)); do
  if ((i % 2)); then seeds_b+=($((12 + i))); else seeds_a+=($((12 + i))); fi
done
(member 12 && slot "${seeds_a[@]}") &
first=$!
while [ ! -f "$OUT/s12/word2vec.pt" ]; do  # the second slot starts once the vectors exist
  if ! kill -0 "$first" 2> /dev/null; then  # the first slot ended without them (no word2vec in the config)
    wait "$first" || exit 1
    SHARED=()
    break
  fi
  sleep 1
done
slot "${seeds_b[@]}" &
second=$!
wait "$first"
wait "$second"
members=()
for ((i = 0; i < K; i++)); do members+=("$OUT/s$((12 + i))/avg4.pt"); done
"$BIN/attnkit" ensemble "${members[@]}" --out "$OUT/ensemble.pt"
minutes=$(python3 -c "print(round(($(date +%s) - $start) / 60, 2))")
printf '{"members": %d, "alt_weighting": "%s", "wall_minutes": %s}\n' "$K" "${ALT_WEIGHTING:-}" "$minutes" \
  > "$OUT/wall.json"
echo "$K members in $minutes minutes of wall time: $OUT/ensemble.pt"
