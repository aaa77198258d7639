#!/usr/bin/env bash
# Dense encoder speed, Rust (candle) against PyTorch (sentence-transformers), same texts, same
# thread count, one run:
#   scripts/bench_dense.sh [N_TEXTS=512] [THREADS=2] [BATCH=32] [N_QUERIES=200]
# Needs: scripts/fetch-minilm.sh; a Python with torch + sentence-transformers in $PYTHON
# (default /tmp/venv-dense/bin/python); the PGraphRAG dev data ($PGRAPHRAG_DATA).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-512}"; THREADS="${2:-2}"; BATCH="${3:-32}"; NQ="${4:-200}"
PYTHON="${PYTHON:-/tmp/venv-dense/bin/python}"
export PGRAPHRAG_DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" RAYON_NUM_THREADS="$THREADS"
# Build first, so compiling never overlaps a timed section.
cargo bench -q -p pgraphrag-retrieval --bench dense --no-run
echo "loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" scripts/bench_dense.py "$TMP" "$N" "$NQ" "$THREADS" "$BATCH" | tee "$TMP/py.txt"
PGRAPHRAG_BENCH_TEXTS="$TMP/texts.jsonl" PGRAPHRAG_BENCH_QUERIES="$TMP/queries.jsonl" \
  PGRAPHRAG_BENCH_BATCH="$BATCH" \
  cargo bench -q -p pgraphrag-retrieval --bench dense | tee "$TMP/rs.txt"
py=$(sed -n 's/^torch_texts_per_s=//p' "$TMP/py.txt"); rs=$(sed -n 's/^rust_texts_per_s=//p' "$TMP/rs.txt")
echo "loadavg_after=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "threads=$THREADS batch=$BATCH texts=$N"
echo "speed_ratio_rust_over_torch=$(python3 -c "print(round($rs / $py, 3))")"
