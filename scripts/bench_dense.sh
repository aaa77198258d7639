#!/usr/bin/env bash
# Dense encoder speed, Rust (native forward pass; candle too with BACKENDS=native,candle)
# against PyTorch (sentence-transformers), same texts, same thread count, one run:
#   scripts/bench_dense.sh [N_TEXTS=512] [THREADS=2] [BATCH=32] [N_QUERIES=200]
# Env: BACKENDS (default "native"; e.g. "native,candle" also times candle), PYTHON, CPU (default
# auto; CPU=avx2 caps both sides at AVX2 on an AVX-512 machine, as an AVX2-only CPU runs them: our
# kernels through PGRAPHRAG_BENCH_CPU, PyTorch through ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS
# and DNNL_MAX_CPU_ISA).
# Needs: scripts/fetch-minilm.sh; a Python with torch + sentence-transformers in $PYTHON
# (default /tmp/venv-dense/bin/python); the PGraphRAG dev data ($PGRAPHRAG_DATA).
# Prints key=value lines, then a summary: throughput of both sides and their ratio, and query
# latency p50/p99 (a) against cached document and query embeddings (scoring + top 5) and
# (b) including encoding the query.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-512}"; THREADS="${2:-2}"; BATCH="${3:-32}"; NQ="${4:-200}"
PYTHON="${PYTHON:-/tmp/venv-dense/bin/python}"
export PGRAPHRAG_DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" RAYON_NUM_THREADS="$THREADS"
export PGRAPHRAG_BENCH_CPU="${CPU:-auto}"
if [ "$PGRAPHRAG_BENCH_CPU" = avx2 ]; then
  export ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 DNNL_MAX_CPU_ISA=AVX2
fi
echo "cpu=$PGRAPHRAG_BENCH_CPU"
# Build first, so compiling never overlaps a timed section.
cargo bench -q -p pgraphrag-retrieval --bench dense --no-run
echo "loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" scripts/bench_dense.py "$TMP" "$N" "$NQ" "$THREADS" "$BATCH" | tee "$TMP/py.txt"
echo "loadavg_between=$(cut -d' ' -f1-3 /proc/loadavg)"
PGRAPHRAG_BENCH_TEXTS="$TMP/texts.jsonl" PGRAPHRAG_BENCH_QUERIES="$TMP/queries.jsonl" \
  PGRAPHRAG_BENCH_BATCH="$BATCH" PGRAPHRAG_BENCH_BACKENDS="${BACKENDS:-native}" \
  cargo bench -q -p pgraphrag-retrieval --bench dense | tee "$TMP/rs.txt"
echo "loadavg_after=$(cut -d' ' -f1-3 /proc/loadavg)"
get() { sed -n "s/^.*\b$1=\([^ ]*\).*$/\1/p" "$2" | head -1; }
py=$(get torch_texts_per_s "$TMP/py.txt"); rs=$(get rust_texts_per_s "$TMP/rs.txt")
echo "== summary: threads=$THREADS batch=$BATCH texts=$N queries=$NQ"
echo "torch_texts_per_s=$py rust_texts_per_s=$rs ($(get rust_backend "$TMP/rs.txt"))"
echo "speed_ratio_rust_over_torch=$(python3 -c "print(round($rs / $py, 3))")"
for k in query_cached query_with_encoding; do
  echo "$k: torch p50=$(get torch_${k}_p50_ms "$TMP/py.txt") p99=$(get torch_${k}_p99_ms "$TMP/py.txt") ms;" \
       "rust p50=$(get ${k}_p50_ms "$TMP/rs.txt") p99=$(get ${k}_p99_ms "$TMP/rs.txt") ms"
done
