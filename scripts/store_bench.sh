#!/usr/bin/env bash
# Speed and scale of the PostgreSQL profile store against the in-memory graph, on a synthetic
# review graph (docs/store.md has the figures this printed):
#   scripts/cluster.sh start && . runs/cluster/env.sh
#   scripts/store_bench.sh split 1000000 [RANK_LIMIT]  # a 1M-review split: load time, profile
#                                                     # fetch p50/p99, ranking throughput, both ways
#   scripts/store_bench.sh jsonl 10000000             # load time of N reviews from review JSONL
# URL: $STORE_URL, default $PGRAPHRAG_PG_URL (single server); STORE_URL=$PGRAPHRAG_PG_SHARDED_URL
# for the sharded cluster. Files go to runs/store_bench/ (seeded: the same bytes every run).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
MODE="${1:?usage: $0 split|jsonl N [RANK_LIMIT]}"
N="${2:?usage: $0 split|jsonl N [RANK_LIMIT]}"
LIMIT="${3:-20000}"
URL="${STORE_URL:-${PGRAPHRAG_PG_URL:?start scripts/cluster.sh and source runs/cluster/env.sh}}"
OUT=runs/store_bench
mkdir -p "$OUT"
# The dev profile (dependencies and the hot crates optimised; see Cargo.toml) shares the test
# build; PGRAPHRAG_BIN=path skips the build (a binary built with --features postgres).
BIN="${PGRAPHRAG_BIN:-}"
if [ -z "$BIN" ]; then
  cargo build -q -p pgraphrag-cli --features postgres
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/pgraphrag"
fi
FILE="$OUT/synth_${N}.$([ "$MODE" = split ] && echo json || echo jsonl)"
if [ ! -s "$FILE" ]; then
  python3 - "$MODE" "$N" "$FILE" <<'PY'
import itertools, json, random, sys
mode, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(15)
users, items = max(1, n // 10), max(1, n // 20)
vocab = [f"w{i}" for i in range(5000)]
cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(vocab))))
def words(k):  # Zipf-like word frequencies (what choices(vocab, weights) draws, precomputed)
    return " ".join(rng.choices(vocab, cum_weights=cum, k=k))
def review():
    item = int(items * rng.random() ** 1.5)
    pid = item if item % 7 == 0 else f"i{item}"  # some integer ids, as in the real splits
    return {"title": words(rng.randint(2, 6)), "text": words(rng.randint(8, 30)),
            "rating": rng.randint(1, 5), "pid": pid}
left = n
with open(path, "w") as f:
    if mode == "split":
        f.write("[")
    for u in range(users):
        k = left if u == users - 1 else min(left, rng.randint(1, 19))
        if k <= 0:
            break
        left -= k
        revs = [review() for _ in range(k)]
        if mode == "split":
            f.write(("," if u else "") + json.dumps({"id": f"u{u}", "profile": revs}))
        else:
            for r in revs:
                f.write(json.dumps({"user": f"u{u}", "item": r["pid"], "title": r["title"],
                                    "text": r["text"], "rating": r["rating"]}) + "\n")
    if mode == "split":
        f.write("]")
PY
fi
ds="synth_${N}_${MODE}"
echo "== load $FILE into $URL as $ds"
if [ "$MODE" = split ]; then
  /usr/bin/time -f "load: %e s wall, %M KiB max RSS" "$BIN" store load --quiet --url "$URL" --split "$FILE" --dataset "$ds" --replace
  echo "== fetch and rank (first $LIMIT targets ranked)"
  "$BIN" store bench --quiet --url "$URL" --split "$FILE" --dataset "$ds" --fetches 2000 --limit "$LIMIT"
else
  /usr/bin/time -f "load: %e s wall, %M KiB max RSS" "$BIN" store load --quiet --url "$URL" --jsonl "$FILE" --dataset "$ds" --replace
fi
