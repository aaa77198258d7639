#!/usr/bin/env bash
# Issue 18's "fine-tuning pays" recipe on one PGraphRAG dev split and task (docs/results/finetune):
# export the bench's own prompts with gold answers for users 200-349 (none_k1 and both_k1),
# train a LoRA adapter on them, evaluate the 200 evaluated users (0-199) with the adapter, and
# compare against the zero-shot table (scripts/finetune_compare.py) and, for ratings, the
# constant answers `pgraphrag bench` appends to results.md.
#
#   scripts/finetune.sh SPLIT TASK [OUT]   e.g. scripts/finetune.sh gap rating
#   SPLIT: amazon | b2w | gap | hotel; TASK: rating | title | text (text: 100 evaluated users,
#   as the zero-shot tables, and examples of up to 640 tokens, since reviews are long).
#   PGRAPHRAG: the binary (default: the newer of target/release/pgraphrag and target/debug/pgraphrag);
#   PGRAPHRAG_DATA: the shared data folder (default ../shared/data); MODEL: the GGUF.
#   MODES: the evaluated modes (default none,user,neighbor,both,random for ratings, none,both
#   for titles); EPOCHS: training epochs (default 1; a checkpoint of a shorter run with the same
#   settings continues into the next epochs). Every step is skipped when its output exists, so
#   a killed run resumes.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SPLIT="${1:?usage: scripts/finetune.sh SPLIT TASK [OUT]}"
TASK="${2:?usage: scripts/finetune.sh SPLIT TASK [OUT]}"
OUT="${3:-$ROOT/runs/finetune/${SPLIT}_${TASK}}"
DATA="${PGRAPHRAG_DATA:-$ROOT/../shared/data}"
MODEL="${MODEL:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
. "$ROOT/scripts/pgraphrag_bin.sh"
pgraphrag_bin "$ROOT" finetune
SPLIT_FILE="$DATA/pgraphrag/${SPLIT}_dev.json"
[ -f "$SPLIT_FILE" ] || { echo "finetune: $SPLIT_FILE missing (set PGRAPHRAG_DATA)" >&2; exit 1; }
[ -f "$MODEL" ] || { echo "finetune: $MODEL missing; run scripts/fetch-llms.sh --smollm-only" >&2; exit 1; }
case "$TASK" in
  rating) PREFILL=rowwise; DEFAULT_MODES=none,user,neighbor,both,random; LIMIT=200; MAX_TOKENS=400 ;;
  title) PREFILL=gemm; DEFAULT_MODES=none,both; LIMIT=200; MAX_TOKENS=400 ;;
  text) PREFILL=rowwise; DEFAULT_MODES=none,both; LIMIT=100; MAX_TOKENS=640 ;;
  *) echo "finetune: TASK must be rating, title or text" >&2; exit 1 ;;
esac
MODES="${MODES:-$DEFAULT_MODES}"
mkdir -p "$OUT"
log() { echo "[finetune $SPLIT $TASK $(date -u +%H:%M:%S)] $*"; }

if [ ! -s "$OUT/train.jsonl" ]; then
  log "exporting training prompts (users 200-349)"
  "$BIN" bench --split "$SPLIT_FILE" --task "$TASK" --skip 200 --limit 150 \
    --modes none,both --ks 1 --out "$OUT/export" \
    --export-prompts "$OUT/train.jsonl.part" --quiet
  mv "$OUT/train.jsonl.part" "$OUT/train.jsonl"
fi
if [ ! -s "$OUT/lora.safetensors" ]; then
  log "training the LoRA adapter"
  "$BIN" train lora --model "$MODEL" --train "$OUT/train.jsonl" \
    --out "$OUT/lora.safetensors" --checkpoint "$OUT/ckpt.safetensors" \
    --lr 1e-3 --batch-size 4 --epochs "${EPOCHS:-1}" --max-tokens "$MAX_TOKENS" --checkpoint-every 5 --seed 0 \
    2>&1 | tee -a "$OUT/train.log"
fi
if [ ! -s "$OUT/bench/results.csv" ]; then
  log "evaluating $MODES (k = 1, $LIMIT users) with the adapter"
  "$BIN" bench --split "$SPLIT_FILE" --task "$TASK" --limit "$LIMIT" \
    --activations f32 --prefill "$PREFILL" --modes "$MODES" --ks 1 \
    --adapter "$OUT/lora.safetensors" --cache "$OUT/cache.sqlite" --out "$OUT/bench" --quiet
fi
log "comparing"
python3 "$ROOT/scripts/finetune_compare.py" --task "$TASK" \
  --finetuned "$OUT/bench" --zeroshot "$ROOT/docs/results/${SPLIT}_dev_${TASK}.csv" \
  | tee "$OUT/compare.md"
