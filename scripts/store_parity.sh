#!/usr/bin/env bash
# Parity of the PostgreSQL profile store: the 12 dev ranking files (4 splits x 3 tasks, as
# scripts/make_rankings.sh writes them) from the in-memory graph and from `pgraphrag rank
# --store`, on one server ($PGRAPHRAG_PG_URL) and on the sharded cluster
# ($PGRAPHRAG_PG_SHARDED_URL), compared byte for byte. Start the cluster first:
#   scripts/cluster.sh start && . runs/cluster/env.sh && scripts/store_parity.sh [OUTDIR] [rank flags]
# Prints one line per file and layout with the ranking time; exits 1 on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
OUT="${1:-runs/store_parity}"; shift || true
DATA="${PGRAPHRAG_DATA:-$ROOT/../shared/data}"
: "${PGRAPHRAG_PG_URL:?start scripts/cluster.sh and source runs/cluster/env.sh}"
: "${PGRAPHRAG_PG_SHARDED_URL:?start scripts/cluster.sh and source runs/cluster/env.sh}"
# The dev profile (dependencies and the hot crates optimised; see Cargo.toml) shares the test
# build; PGRAPHRAG_BIN=path skips the build (a binary built with --features postgres).
BIN="${PGRAPHRAG_BIN:-}"
if [ -z "$BIN" ]; then
  cargo build -q -p pgraphrag-cli --features postgres
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/pgraphrag"
fi
mkdir -p "$OUT/memory" "$OUT/single" "$OUT/sharded"
declare -A NAME=([text]=reviewText [title]=reviewTitle [rating]=reviewRating)
declare -A URL=([single]="$PGRAPHRAG_PG_URL" [sharded]="$PGRAPHRAG_PG_SHARDED_URL")
clean=""
for a in "$@"; do [ "$a" = --clean ] && clean=--clean; done
fail=0
for ds in amazon b2w gap hotel; do
  split="$DATA/pgraphrag/${ds}_dev.json"
  for layout in single sharded; do
    "$BIN" store load --quiet --url "${URL[$layout]}" --split "$split" --replace $clean
  done
  for task in text title rating; do
    f="RANKING-${ds}_dev_${NAME[$task]}_bm25.json"
    t0=$(date +%s%N)
    "$BIN" rank --quiet --split "$split" --task "$task" "$@" --out "$OUT/memory/$f" 2>/dev/null
    line="$f memory $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    for layout in single sharded; do
      t0=$(date +%s%N)
      "$BIN" rank --quiet --store "${URL[$layout]}" --split "$split" --task "$task" "$@" \
        --out "$OUT/$layout/$f" 2>/dev/null
      ms=$(( ($(date +%s%N) - t0) / 1000000 ))
      if cmp -s "$OUT/memory/$f" "$OUT/$layout/$f"; then verdict=identical; else verdict=DIFFERENT; fail=1; fi
      line="$line | $layout $ms ms $verdict"
    done
    echo "$line"
  done
done
if [ "$fail" = 0 ]; then echo "12 files x 2 layouts: byte-identical"; else echo "some files differ" >&2; fi
exit "$fail"
