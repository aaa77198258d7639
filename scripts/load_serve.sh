#!/usr/bin/env bash
# The service's load test (issue 35), loopback only and bounded in time: 100k real reviews in the
# embedded store, 100 writes/s streaming (each read back at once), 64 connections calling
# POST /v1/context (scope both, k = 4), per retriever:
#   1. closed loop: every connection sends when answered (the throughput ceiling);
#   2. open loop at --rate requests/s in all (default 1,000): p50/p99 counted from when each
#      request was due.
# Dense and hybrid embed every review at start with all-MiniLM-L6-v2 (many minutes for 100k on 2 cores):
# DENSE_REVIEWS sets their corpus size (default 100000); PRECISION=int8 loads the encoder with
# int8 linear layers (default f32).
#   scripts/load_serve.sh                 # bm25, dense, hybrid
#   RETRIEVERS=bm25 SECONDS_EACH=10 scripts/load_serve.sh
# Needs the PGraphRAG dev splits ($PGRAPHRAG_DATA, default ../shared/data) and, for dense and
# hybrid, models/all-MiniLM-L6-v2 (scripts/fetch_models.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}/pgraphrag"
REVIEWS="${REVIEWS:-100000}"
DENSE_REVIEWS="${DENSE_REVIEWS:-$REVIEWS}"
SECONDS_EACH="${SECONDS_EACH:-20}"
RATE="${RATE:-1000}"
RETRIEVERS="${RETRIEVERS:-bm25,dense,hybrid}"
cargo build -q --locked -p pgraphrag-serve --example serve_load
bin=target/debug/examples/serve_load
common=(--data "$DATA" --connections 64 --writes-per-sec 100 --seconds "$SECONDS_EACH")
if [[ ",$RETRIEVERS," == *",bm25,"* ]]; then
  echo "== bm25, $REVIEWS reviews: closed loop, then $RATE requests/s"
  "$bin" "${common[@]}" --reviews "$REVIEWS" --retrievers bm25 --rates "closed,$RATE"
fi
dense=$(echo "$RETRIEVERS" | tr ',' '\n' | grep -v '^bm25$' | paste -sd, || true)
if [ -n "$dense" ]; then
  enc=models/all-MiniLM-L6-v2
  [ -f "$enc/model.safetensors" ] || { echo "load_serve: $enc is missing: run scripts/fetch_models.sh" >&2; exit 1; }
  echo "== $dense, $DENSE_REVIEWS reviews: closed loop, then $RATE requests/s"
  "$bin" "${common[@]}" --reviews "$DENSE_REVIEWS" --retrievers "$dense" --encoder "$enc" \
    --rates "closed,$RATE" --precision "${PRECISION:-f32}"
fi
