#!/usr/bin/env bash
# The summary-augmented LaMP grid in the paper's own regime: the downstream model fine-tuned per
# cell (docs/results/lamp/README.md, "Fine-tuned"). Per cell of Table 3:
#   1. export the cell's supervised examples (`lamp grid --export-training`) from the builder's
#      train split, questions OFFSET..OFFSET+NTRAIN (the evaluated questions are 0..EVAL-1, the
#      zero-shot table's and the baselines' rows, so no evaluated question is trained on),
#      and its validation examples from the dev split (its first NVAL questions; 0: all of it);
#   2. train a LoRA adapter (`train lora`) for up to EPOCHS epochs, validating on the dev examples
#      every EVAL_EVERY steps; the adapter kept is the one of the lowest validation loss (the epoch
#      count is chosen on validation, never on the evaluated questions);
#   3. answer the evaluated questions with it (`lamp grid --adapter`), greedy, as the zero-shot grid.
# Then `lamp rescore` writes one table of the fine-tuned cells into docs/results/lamp/NAME-ft/.
#
#   scripts/run_lamp_finetune.sh NAME          NAME: ml100k | gap (LaMP-3)
#   CONFIGS=base_k0,base_k1,base_k4,sum_k0,sum_k1  NTRAIN=200 NVAL=0 EVAL=300 EPOCHS=2 LR=1e-3
#   ORDER=sum_k1,base_k4,...  (the order the cells are trained in; default CONFIGS)
#   BIN=path/to/pgraphrag MODEL=...gguf RUNS=runs/lamp
#
# Every step is resumable: outputs that exist are kept, training resumes from its checkpoint,
# summaries and answers come from their stores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NAME=${1:?usage: $0 ml100k|gap}
CONFIGS=${CONFIGS:-base_k0,base_k1,base_k4,sum_k0,sum_k1}
NTRAIN=${NTRAIN:-200}
NVAL=${NVAL:-0}
EVAL=${EVAL:-300}
OFFSET=${OFFSET:-$EVAL}
EPOCHS=${EPOCHS:-2}
LR=${LR:-1e-3}
EVAL_EVERY=${EVAL_EVERY:-25}
DATA=${PGRAPHRAG_DATA:-$ROOT/../shared/data}
MODEL=${MODEL:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}
RUNS=${RUNS:-$ROOT/runs/lamp}
. scripts/pgraphrag_bin.sh
pgraphrag_bin "$ROOT" run_lamp_finetune
[[ -f "$MODEL" ]] || scripts/fetch-llms.sh --smollm-only
scripts/fetch-corpora.sh >/dev/null
case "$NAME" in
  ml100k) TASK=LaMP-3; FROM=models/corpora/ml-100k ;;
  gap)    TASK=LaMP-3; FROM=$DATA/pgraphrag/gap_dev.json ;;
  *) echo "run_lamp_finetune: unknown NAME $NAME (ml100k or gap)" >&2; exit 2 ;;
esac
log() { echo "[lamp-ft $NAME $(date -u +%H:%M:%S)] $*"; }
TASKDIR=$RUNS/$NAME
FT=$RUNS/$NAME-ft
mkdir -p "$FT"
[[ -f $TASKDIR/train_questions.json ]] || "$BIN" corpus lamp --task $TASK --from "$FROM" --out "$TASKDIR"

# The three question sets, cut from the builder's splits (the golds stay in the outputs files,
# which are keyed by question id).
python3 - "$TASKDIR" "$FT" "$EVAL" "$OFFSET" "$NTRAIN" "$NVAL" <<'PY'
import json, sys
src, dst, n_eval, offset, n_train, n_val = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
train = json.load(open(f"{src}/train_questions.json"))
dev = json.load(open(f"{src}/dev_questions.json"))
if offset < n_eval or offset + n_train > len(train):
    sys.exit(f"the train split has {len(train)} questions: OFFSET {offset} + NTRAIN {n_train} "
             f"must fit after the {n_eval} evaluated ones")
n_val = n_val or len(dev)
if n_val > len(dev):
    sys.exit(f"the dev split has {len(dev)} questions, fewer than NVAL {n_val}")
import os
for name, rows in [("eval", train[:n_eval]), ("train", train[offset:offset + n_train]),
                   ("val", dev[:n_val])]:
    with open(f"{dst}/{name}_questions.json.tmp", "w") as f:
        json.dump(rows, f)
    os.replace(f"{dst}/{name}_questions.json.tmp", f"{dst}/{name}_questions.json")
PY

# Summaries of every user of the three sets (one store; greedy, as scripts/run_lamp.sh makes them).
# `--export` writes every summary of the store (this model and prompt), so the last set's export
# holds all three sets' users.
SUMMARIES=$FT/summaries.jsonl
if [[ ! -s $SUMMARIES ]]; then
  for set in eval train val; do
    log "summarising the $set users"
    "$BIN" summarize --input "$FT/${set}_questions.json" --task $TASK --model "$MODEL" \
      --store "$FT/summaries.sqlite" --summary-scope user --max-new-tokens 64 \
      --export "$FT/summaries-$set.jsonl" --journal "$FT/summarize-$set.journal"
  done
  mv "$FT/summaries-val.jsonl" "$SUMMARIES"
fi

grid() { # grid SET OUTPUTS CELL ARGS...: the zero-shot grid's settings on one question set
  local set=$1 outputs=$2 cell=$3
  shift 3
  "$BIN" lamp grid --questions "$FT/${set}_questions.json" --outputs "$TASKDIR/$outputs" --task $TASK \
    --model "$MODEL" --summaries "$SUMMARIES" --summary-scope user --configs "$cell" --seeds 0 \
    --temperature 0 --reading first-label --cache "$FT/cache.sqlite" "$@"
}
GRID=$FT/grid
mkdir -p "$GRID"
ORDER=${ORDER:-$CONFIGS}
for cell in ${ORDER//,/ }; do
  [[ -s $FT/train-$cell.jsonl ]] || grid train train_outputs.json "$cell" --export-training "$FT/train-$cell.jsonl"
  [[ -s $FT/val-$cell.jsonl ]] || grid val dev_outputs.json "$cell" --export-training "$FT/val-$cell.jsonl"
  if [[ ! -s $FT/$cell.safetensors ]]; then
    log "training $cell"
    "$BIN" train lora --model "$MODEL" --train "$FT/train-$cell.jsonl" --val "$FT/val-$cell.jsonl" \
      --out "$FT/$cell.safetensors" --checkpoint "$FT/$cell.ckpt.safetensors" --epochs "$EPOCHS" \
      --lr "$LR" --eval-every "$EVAL_EVERY" --checkpoint-every 5 --seed 0 --quiet \
      2>&1 | tee "$FT/train-$cell.log"
  fi
  log "answering the evaluated questions with the $cell adapter"
  grid eval train_outputs.json "$cell" --adapter "$FT/$cell.safetensors" --out "$FT/out-$cell"
  cp "$FT/out-$cell/$cell-seed0_outputs.json" "$GRID/"
done
OUT=docs/results/lamp/$NAME-ft
mkdir -p "$OUT"
"$BIN" lamp rescore --questions "$TASKDIR/train_questions.json" --outputs "$TASKDIR/train_outputs.json" \
  --task $TASK --limit "$EVAL" --reading first-label --configs "$CONFIGS" --seeds 0 --grid "$GRID" --out "$OUT"
cp "$GRID"/*-seed0_outputs.json "$OUT/"
log "done: $OUT/results.md"
