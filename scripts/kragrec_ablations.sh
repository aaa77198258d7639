#!/usr/bin/env bash
# Issue 18's K-RagRec comparison on ML-1M (docs/results/kragrec): for each VARIANT, train the
# graph encoder (or the "-encoding" soft prompt, or K-RagRec with LoRA) on the first ROWS
# training rows with sub-graphs (ML-1M rows 0..9000), then score the 1,000 test rows
# 9000..9999 at M = 20 with the same candidate sets (seed 2025), and write the table.
#
#   scripts/kragrec_ablations.sh VARIANT...   e.g. scripts/kragrec_ablations.sh none -re-ranking lora
#   VARIANT: none (K-RagRec), -indexing, -popularity, -re-ranking, -encoding (the paper's
#   appendix A.6 ablations), or lora (the paper's "LoRA w/ K-RagRec").
#   OUT: the runs folder (default runs/kragrec); each variant gets OUT/abl<VARIANT> (OUT/train
#   for none, OUT/lora for lora) with its encoder, checkpoint, logs, rows and results.
#   ROWS: training rows (default 160), LR (3e-4), ACCUM (4), SEED (0), EPOCHS (1).
#   PGRAPHRAG: the binary (default: the newer of target/release/pgraphrag and target/debug/pgraphrag);
#   PGRAPHRAG_DATA: the shared data folder (default ../shared/data); MODELS: models/.
#   Every step is skipped when its output exists; a killed run resumes from its checkpoint and
#   its rows file.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -gt 0 ] || { echo "usage: scripts/kragrec_ablations.sh VARIANT..." >&2; exit 2; }
OUT="${OUT:-$ROOT/runs/kragrec}"
DATA="${PGRAPHRAG_DATA:-$ROOT/../shared/data}"
MODELS="${MODELS:-$ROOT/models}"
ROWS="${ROWS:-160}" LR="${LR:-3e-4}" ACCUM="${ACCUM:-4}" SEED="${SEED:-0}" EPOCHS="${EPOCHS:-1}"
. "$ROOT/scripts/pgraphrag_bin.sh"
pgraphrag_bin "$ROOT" kragrec_ablations
for need in "$MODELS/SmolLM2-135M-Instruct.Q4_1.gguf" "$MODELS/all-MiniLM-L6-v2" "$MODELS/corpora/ml-100k" "$DATA/movielens-1m"; do
  [ -e "$need" ] || { echo "kragrec_ablations: $need missing (scripts/fetch_models.sh; PGRAPHRAG_DATA)" >&2; exit 1; }
done
C1=(--ml100k "$MODELS/corpora/ml-100k" --encoder "$MODELS/all-MiniLM-L6-v2"
    --index "$OUT/ml100k-minilm-mean.bin" --model "$MODELS/SmolLM2-135M-Instruct.Q4_1.gguf"
    --ml1m "$DATA/movielens-1m")
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-2}"
log() { echo "[kragrec $(date -u +%H:%M:%S)] $*"; }
mkdir -p "$OUT"
for v in "$@"; do
  ablation="$v" lora=()
  case "$v" in
    none) dir="$OUT/train" ;;
    lora) dir="$OUT/lora" ablation=none ;;
    -indexing|-popularity|-re-ranking|-encoding) dir="$OUT/abl$v" ;;
    *) echo "kragrec_ablations: unknown variant $v" >&2; exit 2 ;;
  esac
  [ "$v" = lora ] && lora=(--lora-out "$dir/lora.safetensors")
  mkdir -p "$dir"
  if [ ! -f "$dir/encoder.safetensors" ]; then
    log "$v: training on $ROWS rows"
    "$BIN" train kragrec "${C1[@]}" --ablation="$ablation" "${lora[@]}" \
      --out "$dir/encoder.safetensors" --checkpoint "$dir/ckpt.safetensors" \
      --retrieval-cache "$dir/retrieval-train.json" --start 0 --rows 9000 --max-rows "$ROWS" \
      --epochs "$EPOCHS" --batch-size 1 --grad-accum "$ACCUM" --lr "$LR" --seed "$SEED" \
      --checkpoint-every 5 2> >(tee -a "$dir/train.log" >&2)
  fi
  eval_lora=()
  [ "$v" = lora ] && eval_lora=(--lora "$dir/lora.safetensors")
  log "$v: scoring test rows 9000..9999"
  "$BIN" recsys eval --dataset ml1m "${C1[@]}" --ablation="$ablation" "${eval_lora[@]}" \
    --adapter "$dir/encoder.safetensors" --out "$dir/rows.jsonl" --start 9000 --rows 1000 --m 20 \
    --results "$dir/results" 2> >(tee -a "$dir/eval.log" >&2)
done
