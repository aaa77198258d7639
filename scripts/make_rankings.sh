#!/usr/bin/env bash
# Writes the 12 PGraphRAG dev ranking files (4 splits x 3 tasks) with `pgraphrag rank` and prints
# sanity statistics per file.
#
#   scripts/make_rankings.sh OUTDIR [extra `pgraphrag rank` flags, e.g. --retriever bm25-lucene or --clean]
#
# Files are named like the released ones: OUTDIR/RANKING-<ds>_dev_<reviewText|reviewTitle|reviewRating>_<ranker>.json
# (ranker = bm25 unless --retriever says otherwise). They are outputs: do not commit them.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 OUTDIR [pgraphrag rank flags]" >&2; exit 2; }
OUTDIR=$1; shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${PGRAPHRAG_DATA:-$ROOT/../shared/data}
mkdir -p "$OUTDIR"
(cd "$ROOT" && cargo build --release -q -p pgraphrag-cli)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/pgraphrag
RANKER=bm25
prev=""
for a in "$@"; do [[ "$prev" == "--retriever" ]] && RANKER=$a; prev=$a; done
declare -A NAME=([text]=reviewText [title]=reviewTitle [rating]=reviewRating)
for ds in amazon b2w gap hotel; do
  for task in text title rating; do
    "$BIN" rank --split "$DATA/pgraphrag/${ds}_dev.json" --task "$task" "$@" \
      --out "$OUTDIR/RANKING-${ds}_dev_${NAME[$task]}_${RANKER}.json"
  done
done
python3 - "$OUTDIR" <<'PY'
import json, math, os, sys
d = sys.argv[1]
print(f"{'file':45s} {'users':>5s} {'u>0':>5s} {'mean_u':>6s} {'n>0':>5s} {'mean_n':>6s} {'rand':>5s} {'unscored_n':>10s} {'sorted':>6s}")
for f in sorted(os.listdir(d)):
    if not f.startswith("RANKING-") or not f.endswith(".json"):
        continue
    recs = json.load(open(os.path.join(d, f)))
    ok = True
    for r in recs:
        for key in ("user_ratings", "neighbor_ratings"):
            s = [e["score"] for e in r[key] if "score" in e]
            ok &= all(math.isfinite(x) for x in s) and all(s[i] >= s[i + 1] for i in range(len(s) - 1)) and len(r[key]) <= 5
    n = len(recs)
    print(f"{f:45s} {n:5d} {sum(1 for r in recs if r['user_ratings']):5d} "
          f"{sum(len(r['user_ratings']) for r in recs)/n:6.2f} {sum(1 for r in recs if r['neighbor_ratings']):5d} "
          f"{sum(len(r['neighbor_ratings']) for r in recs)/n:6.2f} {sum(1 for r in recs if r['random_review']):5d} "
          f"{sum(1 for r in recs for e in r['neighbor_ratings'] if 'score' not in e):10d} {str(ok):>6s}")
PY
