#!/usr/bin/env bash
# Beyond the papers: cold-start item summaries in PGraphRAG prompts (docs/cold_start.md).
# For the first USERS users of each dev split, title task: summarise the target item's other
# reviews with SmolLM2 (offline, resumable store), then run both_k4 (the warm baseline),
# neighbor_k4 (no user history), isum_neighbor_k4 and isum_both_k4 through the generation
# cache, with paired t-tests against both_k4; tables into docs/results/cold_start/.
#
#   scripts/run_cold_start.sh [USERS]          (default 100)
#   BIN=path/to/pgraphrag DATASETS="amazon b2w gap hotel" scripts/run_cold_start.sh 100
#
# Every step is resumable: kill it and run it again, and only what is missing is computed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
USERS=${1:-100}
DATA=${PGRAPHRAG_DATA:-$ROOT/../shared/data}
DATASETS=${DATASETS:-amazon b2w gap hotel}
if [[ -z "${BIN:-}" ]]; then
  cargo build --release -q -p pgraphrag-cli
  BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/pgraphrag
fi
MODEL=${MODEL:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}
[[ -f "$MODEL" ]] || scripts/fetch-llms.sh --smollm-only
DOCS=docs/results/cold_start
mkdir -p "$DOCS" runs/cold_start
for ds in $DATASETS; do
  out=runs/cold_start/$ds
  echo "== $ds: $USERS users -> $out" >&2
  "$BIN" bench --split "$DATA/pgraphrag/${ds}_dev.json" --task title --limit "$USERS" \
    --model "$MODEL" --modes neighbor,both --ks 4 --item-summaries "$out/items.sqlite" \
    --out "$out" --quiet | tee "$out.log"
  for ext in md csv svg; do cp "$out/results.$ext" "$DOCS/${ds}_dev_title.$ext"; done
done
