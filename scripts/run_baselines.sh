#!/usr/bin/env bash
# Regenerates docs/results/baselines/: the answers without an LLM (`pgraphrag baselines`) on the
# rows of the committed grids in docs/results/ (the four PGraphRAG dev splits; titles and ratings
# on the first 200 users, review text on the first 100, as scripts/run_results.sh runs them), and
# README.md: the strongest baseline of each split and task against the best cell of its grid.
#
#   scripts/run_baselines.sh            # a few seconds; no model, no generation
#
# Per split and task: <ds>_dev_<task>.md / .csv (the table, its notes) and
# <ds>_dev_<task>.predictions.jsonl.gz (every baseline's answer and its scores per user, for
# paired tests; `gzip -n`, so rerunning gives the same bytes).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}"
LIMIT="${LIMIT:-200}"
TEXT_LIMIT="${TEXT_LIMIT:-100}"
DATASETS="${DATASETS:-amazon b2w gap hotel}"
TASKS="${TASKS:-title rating text}"
BIN="${BIN:-${CARGO_TARGET_DIR:-target}/debug/pgraphrag}"
OUT=docs/results/baselines

if [ -z "${NO_BUILD:-}" ]; then
  cargo build -p pgraphrag-cli
fi
mkdir -p "$OUT" runs/baselines
for ds in $DATASETS; do
  for task in $TASKS; do
    n="$LIMIT"; [ "$task" = text ] && n="$TEXT_LIMIT"
    run="runs/baselines/${ds}-${task}"
    "$BIN" baselines --split "$DATA/pgraphrag/${ds}_dev.json" --task "$task" --limit "$n" \
      --out "$run" > /dev/null
    cp "$run/results.md" "$OUT/${ds}_dev_${task}.md"
    cp "$run/results.csv" "$OUT/${ds}_dev_${task}.csv"
    gzip -n -9 -c "$run/predictions.jsonl" > "$OUT/${ds}_dev_${task}.predictions.jsonl.gz"
  done
done
python3 - "$OUT" <<'PY'
import csv, os, sys
out = sys.argv[1]
def table(path):
    with open(path) as f:
        r = list(csv.reader(f))
    return r[0], {row[0]: [float(x) for x in row[1:]] for row in r[1:]}
lines = ["| split | task | metric | best grid cell | strongest baseline | baseline − grid |",
         "|---|---|---|---|---|---:|"]
for ds in ("amazon", "b2w", "gap", "hotel"):
    for task in ("title", "text", "rating"):
        grid_csv, base_csv = f"docs/results/{ds}_dev_{task}.csv", f"{out}/{ds}_dev_{task}.csv"
        if not (os.path.exists(grid_csv) and os.path.exists(base_csv)):
            continue
        gh, grid = table(grid_csv)
        bh, base = table(base_csv)
        lower = gh[1] in ("MAE", "RMSE")
        pick = min if lower else max
        # The first column decides (ROUGE-1 or MAE); ties go to the first row.
        g = pick(grid, key=lambda k: grid[k][0])
        b = pick(base, key=lambda k: base[k][0])
        cols = "/".join(gh[1:])
        fmt = lambda v: " / ".join(f"{x:.3f}" for x in v)
        lines.append(f"| {ds} | {task} | {cols} | `{g}` {fmt(grid[g])} | `{b}` {fmt(base[b])} | "
                     f"{base[b][0] - grid[g][0]:+.3f} |")
head = open(f"{out}/NOTES.md").read() if os.path.exists(f"{out}/NOTES.md") else ""
marker = "<!-- comparison -->"
body = "\n".join(lines) + "\n"
readme = head.replace(marker, body) if marker in head else head + "\n" + body
open(f"{out}/README.md", "w").write(readme)
PY
echo "wrote $OUT/README.md" >&2
