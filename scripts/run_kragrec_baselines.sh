#!/usr/bin/env bash
# docs/results/kragrec/baselines/: the no-LLM baselines of K-RagRec (popularity, history,
# random) on the rows and candidate sets of the committed tables, and the position-debiased
# letter scoring (`+cyclic`) against the plain one on ML-100K rows 0-99 (issue 36).
#
#   scripts/run_kragrec_baselines.sh          # score what is missing, then remake the tables
#   NO_LLM=1 scripts/run_kragrec_baselines.sh # skip the LLM rows (they take about 25 minutes)
#   CHECK=1 scripts/run_kragrec_baselines.sh  # only recompute the tables from the committed
#                                             # rows files; exit 1 on any byte difference
#
# Per folder NAME: NAME.rows.jsonl.gz (`recsys eval`'s rows file, `gzip -n`), its settings
# manifest NAME.rows.jsonl.config.json, compare.args (what `recsys compare` reads: `rows FILE`
# relative to the baselines folder, `pair A:B`), and results.md / results.json made by
# `pgraphrag recsys compare` from the rows files alone. Runs are resumable (runs/kragrec-baselines).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-${CARGO_TARGET_DIR:-target}/debug/pgraphrag}"
OUT=docs/results/kragrec/baselines
RUNS=runs/kragrec-baselines
ML1M="${ML1M:-${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}/movielens-1m}"

# Recomputes OUT/NAME/results.{md,json} from the committed rows (into a temporary folder with
# CHECK=1, then compared).
tables() {
  local tmp status=0
  tmp=$(mktemp -d)
  for dir in "$OUT"/*/; do
    name=$(basename "$dir")
    args=()
    while read -r kind value; do
      case "$kind" in
        rows) gzip -dc "$OUT/$value" > "$tmp/$(basename "$value" .gz)"
              args+=(--rows "$tmp/$(basename "$value" .gz)") ;;
        pair) args+=(--pair "$value") ;;
        ''|'#'*) ;;
        *) echo "$dir/compare.args: unknown line $kind" >&2; exit 2 ;;
      esac
    done < "$dir/compare.args"
    "$BIN" recsys compare "${args[@]}" --out "$tmp/$name" > /dev/null
    for f in results.md results.json; do
      if [ -n "${CHECK:-}" ]; then
        cmp -s "$tmp/$name/$f" "$dir/$f" || { echo "$dir$f differs from a recomputation" >&2; status=1; }
      else
        cp "$tmp/$name/$f" "$dir/$f"
      fi
    done
  done
  rm -rf "$tmp"
  return $status
}

if [ -n "${CHECK:-}" ]; then
  tables
  exit
fi
if [ -z "${NO_BUILD:-}" ]; then
  . scripts/features.sh
  cargo build -q --workspace --locked --features "$PGRAPHRAG_FEATURES" --bin pgraphrag
fi
scripts/fetch-corpora.sh > /dev/null
C="--ml100k models/corpora/ml-100k --encoder models/all-MiniLM-L6-v2 \
   --index $RUNS/ml100k-minilm-mean.bin --model models/SmolLM2-135M-Instruct.Q4_1.gguf"
mkdir -p "$RUNS"
[ -f "$RUNS/ml100k-minilm-mean.bin" ] || "$BIN" recsys index --ml100k models/corpora/ml-100k \
  --encoder models/all-MiniLM-L6-v2 --out "$RUNS/ml100k-minilm-mean.bin" --quiet
NOLLM=popularity,history,random
# The committed tables' rows: ML-100K users 1-500 (docs/results/kragrec/ml100k), every ML-100K
# user (--rows 1000 keeps all 943), ML-1M rows 9000-9999 (docs/results/kragrec/ml1m); seed 2025.
# shellcheck disable=SC2086
{
  "$BIN" recsys eval --dataset ml100k $C --rows 500 --methods $NOLLM --out "$RUNS/ml100k/ml100k.rows.jsonl" --quiet
  "$BIN" recsys eval --dataset ml100k $C --rows 1000 --methods $NOLLM --out "$RUNS/ml100k-943/ml100k-943.rows.jsonl" --quiet
  "$BIN" recsys eval --dataset ml1m --ml1m "$ML1M" $C --start 9000 --rows 1000 --methods $NOLLM \
    --out "$RUNS/ml1m/ml1m.rows.jsonl" --quiet
  # Rows 0-99: the plain and the debiased LLM methods at M = 10 (every rotation is a cached
  # prompt, rotation 0 the plain one), the plain ones at M = 20, and the no-LLM ones at both.
  D="$RUNS/debias/debias.rows.jsonl"
  "$BIN" recsys eval --dataset ml100k $C --rows 100 --methods $NOLLM --out "$D" --quiet
  if [ -z "${NO_LLM:-}" ]; then
    "$BIN" recsys eval --dataset ml100k $C --rows 100 --m 10 \
      --methods none,kg-text,none+cyclic,kg-text+cyclic,kaping,kaping+cyclic --out "$D" --quiet
    "$BIN" recsys eval --dataset ml100k $C --rows 100 --m 20 --methods none,kg-text,kaping --out "$D" --quiet
  fi
} > /dev/null
for name in ml100k ml100k-943 ml1m debias; do
  mkdir -p "$OUT/$name"
  gzip -n -9 -c "$RUNS/$name/$name.rows.jsonl" > "$OUT/$name/$name.rows.jsonl.gz"
  cp "$RUNS/$name/$name.rows.jsonl.config.json" "$OUT/$name/"
done
tables
echo "wrote $OUT" >&2
