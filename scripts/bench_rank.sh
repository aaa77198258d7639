#!/usr/bin/env bash
# Times `pgraphrag rank` (release build) against scripts/bench_rank.py (the notebook's ranking in
# Python: nltk word_tokenize + rank_bm25) on the 12 PGraphRAG dev task files (4 splits x 3 tasks),
# in one run on the same machine, prints both wall-clock times and their ratio, then checks that
# both wrote the same rankings.
#
#   scripts/bench_rank.sh [--limit N]     # N users per file (quick); omit for the full run
#   PGRAPHRAG_BIN=path/to/pgraphrag scripts/bench_rank.sh ...   # time a prebuilt release binary
#
# Needs: cargo, python3 with nltk 3.9.1, rank-bm25 0.2.2, numpy; the shared data
# (PGRAPHRAG_DATA, default ../shared/data next to the repo root; NLTK_DATA defaults to its nltk/).
set -euo pipefail
LIMIT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --limit) LIMIT="$2"; shift 2 ;;
    *) echo "usage: $0 [--limit N]" >&2; exit 2 ;;
  esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${PGRAPHRAG_DATA:-$ROOT/../shared/data}
[[ -f "$DATA/pgraphrag/amazon_dev.json" ]] || { echo "no PGraphRAG splits under $DATA/pgraphrag; set PGRAPHRAG_DATA" >&2; exit 1; }
export NLTK_DATA=${NLTK_DATA:-$DATA/nltk}
if [[ -n "${PGRAPHRAG_BIN:-}" ]]; then
  BIN=$PGRAPHRAG_BIN   # a prebuilt release binary
else
  (cd "$ROOT" && cargo build --release -q -p pgraphrag-cli)
  BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/pgraphrag
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Wall clock is the headline; user+sys CPU seconds are printed too (steadier on a busy machine).
TIMEFORMAT='%R %U %S'
echo "== pgraphrag rank (release), limit=${LIMIT:-all}: one run per split, its 3 tasks in one invocation"
mkdir -p "$OUT/rust"
# Like the Python reference, each split is loaded once and ranked for its three tasks.
read -r RUST RUST_U RUST_S < <({ time {
for ds in amazon b2w gap hotel; do
  "$BIN" rank --split "$DATA/pgraphrag/${ds}_dev.json" --task text,title,rating --retriever bm25 --top 5 \
    ${LIMIT:+--limit "$LIMIT"} --out "$OUT/rust" 2>/dev/null
done
} ; } 2>&1)
printf "rust   %.3f s wall, %.3f s cpu\n" "$RUST" "$(echo "$RUST_U + $RUST_S" | bc -l)"

echo "== scripts/bench_rank.py (Python reference), limit=${LIMIT:-all}"
# numpy's SIMD argsort orders ties differently from its portable introsort (which `pgraphrag rank`
# ports); disable the dispatch targets so the agreement check below compares like with like.
NPY_DISABLE_CPU_FEATURES=$(python3 -c "import numpy as np; m = np._core._multiarray_umath; print(' '.join(f for f in m.__cpu_dispatch__ if m.__cpu_features__.get(f)))")
export NPY_DISABLE_CPU_FEATURES
read -r PY PY_U PY_S < <({ time python3 "$ROOT/scripts/bench_rank.py" --data "$DATA" ${LIMIT:+--limit "$LIMIT"} --out "$OUT/py" >"$OUT/py.log" ; } 2>&1)
sed 's/^/  /' "$OUT/py.log"
printf "python %.3f s wall, %.3f s cpu\n" "$PY" "$(echo "$PY_U + $PY_S" | bc -l)"
printf "RATIO python/rust = %.1fx wall, %.1fx cpu\n" "$(echo "$PY / $RUST" | bc -l)" \
  "$(echo "($PY_U + $PY_S) / ($RUST_U + $RUST_S)" | bc -l)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== agreement (per ranked list: same doc_ids in order; same scores to 1e-9)"
python3 - "$OUT/rust" "$OUT/py" <<'PY'
import json, os, sys
rd, pd = sys.argv[1], sys.argv[2]
tot = same_ids = same_scores = recs = same_random = 0
for f in sorted(os.listdir(pd)):
    r = json.load(open(os.path.join(rd, f))); p = json.load(open(os.path.join(pd, f)))
    assert len(r) == len(p), f
    for a, b in zip(r, p):
        recs += 1
        same_random += (a["random_review"] or {}).get("doc_id") == (b["random_review"] or {}).get("doc_id")
        for key in ("user_ratings", "neighbor_ratings"):
            x, y = a[key], b[key]
            tot += 1
            same_ids += [e["doc_id"] for e in x] == [e["doc_id"] for e in y]
            sx = [e.get("score") for e in x]; sy = [e.get("score") for e in y]
            same_scores += len(sx) == len(sy) and all((u is None and v is None) or (u is not None and v is not None and abs(u - v) <= 1e-9 * max(1, abs(v))) for u, v in zip(sx, sy))
print(f"lists {tot}: identical doc_ids {same_ids} ({100*same_ids/tot:.2f}%), identical scores {same_scores} ({100*same_scores/tot:.2f}%)")
print(f"records {recs}: identical random_review {same_random} ({100*same_random/recs:.2f}%)")
PY
