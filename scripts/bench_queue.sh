#!/usr/bin/env bash
# Throughput of the JetStream work queue against the in-process path (docs/queue.md): ranks every
# user of a split with `pgraphrag rank` (in process), then through the queue with 1 and 3
# `pgraphrag worker` processes (units of CHUNK users), checks that the exported ranking files are
# byte-identical to the in-process one, and prints users/s and the ratios.
#   scripts/bench_queue.sh [SPLIT] [TASK]
#   PROFILES=postgres://... DATASET=name scripts/bench_queue.sh SPLIT [TASK]
#       ranks from the PostgreSQL profile store instead: `pgraphrag rank --store` in process, and
#       `queue submit rank --profiles --dataset` for the workers (SPLIT is the file the dataset
#       was loaded from; the in-memory ranking of it is timed too and must be byte-identical)
# Env: BIN (default target/debug/pgraphrag: `cargo build -p pgraphrag-cli --features jetstream`, the
# dev profile the main job uses; both paths run the same binary), CHUNK (100),
# WORKERS ("1 3"), OUT (runs/queue-bench), NO_RANDOM=1 (no random review on both paths: units
# then need no replay of the random stream), LIMIT (rank only the first N users). Starts the cluster with scripts/cluster_nats.sh if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}"
SPLIT="${1:-$DATA/pgraphrag/amazon_dev.json}"
TASK="${2:-title}"
BIN="${BIN:-target/debug/pgraphrag}"
CHUNK="${CHUNK:-100}"
WORKERS="${WORKERS:-1 3}"
OUT="${OUT:-runs/queue-bench}"
EXTRA=()
[ "${NO_RANDOM:-0}" = 1 ] && EXTRA=(--no-random)
[ -n "${LIMIT:-}" ] && EXTRA+=(--limit "$LIMIT")
SOURCE=(--split "$SPLIT")
[ -n "${PROFILES:-}" ] && SOURCE=(--profiles "$PROFILES" --dataset "${DATASET:?DATASET names the dataset of PROFILES}")
if [ ! -x "$BIN" ]; then
  echo "no $BIN: cargo build -p pgraphrag-cli --features jetstream" >&2
  exit 2
fi
scripts/cluster_nats.sh status >/dev/null 2>&1 || scripts/cluster_nats.sh start
# shellcheck disable=SC1091
. runs/cluster/env.sh
rm -rf "$OUT"
mkdir -p "$OUT"
now() { date +%s.%N; }
users=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$SPLIT")
[ -n "${LIMIT:-}" ] && [ "$LIMIT" -lt "$users" ] && users=$LIMIT

t0=$(now)
"$BIN" rank --split "$SPLIT" --task "$TASK" "${EXTRA[@]}" --out "$OUT/direct.json" --quiet 2>/dev/null
t1=$(now)
direct=$(echo "$t1 - $t0" | bc -l)
printf 'in-process: %d users in %.2f s (%.0f users/s)\n' "$users" "$direct" "$(echo "$users / $direct" | bc -l)"
if [ -n "${PROFILES:-}" ]; then
  mv "$OUT/direct.json" "$OUT/memory.json"
  t0=$(now)
  "$BIN" rank --store "$PROFILES" --dataset "$DATASET" --split "$SPLIT" --task "$TASK" "${EXTRA[@]}" \
    --out "$OUT/direct.json" --quiet 2>/dev/null
  t1=$(now)
  cmp "$OUT/memory.json" "$OUT/direct.json"
  memory=$direct
  direct=$(echo "$t1 - $t0" | bc -l)
  printf 'in-process from the store: %.2f s (%.0f users/s, %.2fx in memory); output identical\n' \
    "$direct" "$(echo "$users / $direct" | bc -l)" "$(echo "$memory / $direct" | bc -l)"
fi

for w in $WORKERS; do
  store="$OUT/w$w.sqlite"
  s0=$(now)
  job=$("$BIN" queue submit rank "${SOURCE[@]}" --task "$TASK" --store "$store" --chunk "$CHUNK" "${EXTRA[@]}" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['job'])")
  s1=$(now)
  pids=()
  for i in $(seq 1 "$w"); do
    "$BIN" worker --drain --quiet --name "bench-w$i" > "$OUT/w$w-$i.json" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  s2=$(now)
  "$BIN" queue export --store "$store" --job "$job" --out "$OUT/w$w.json" 2>/dev/null
  cmp "$OUT/direct.json" "$OUT/w$w.json"
  submit=$(echo "$s1 - $s0" | bc -l)
  run=$(echo "$s2 - $s1" | bc -l)
  printf '%d worker(s): submit %.2f s, run %.2f s (%.0f users/s, %.2fx the in-process path above; with submit %.2fx); output identical\n' \
    "$w" "$submit" "$run" "$(echo "$users / $run" | bc -l)" "$(echo "$direct / $run" | bc -l)" \
    "$(echo "$direct / ($run + $submit)" | bc -l)"
  "$BIN" queue status --store "$store" | grep "^job $job"
done
