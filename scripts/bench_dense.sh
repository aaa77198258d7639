#!/usr/bin/env bash
# Dense encoder speed, Rust (native forward pass; candle too with BACKENDS=native,candle)
# against PyTorch (sentence-transformers), same texts, same thread count, one run:
#   scripts/bench_dense.sh [N_TEXTS=512] [THREADS=2] [BATCH=32] [N_QUERIES=200]
# Env: BACKENDS (default "native"; e.g. "native,candle" also times candle), PYTHON, CPU (default
# auto; CPU=avx2 caps both sides at AVX2 on an AVX-512 machine, as an AVX2-only CPU runs them: our
# kernels through PGRAPHRAG_BENCH_CPU, PyTorch through ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS
# and DNNL_MAX_CPU_ISA); PRECISION (default "f32"; e.g. "f32,int8" also times the int8 encoder, and
# prints its cosine to f32 on the same texts); REPS (default 1: timed repetitions of our encoders,
# interleaved, median reported); TORCH=0 skips timing PyTorch (our figures only, no torch needed).
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
if [ "${TORCH:-1}" = 0 ]; then
  BENCH_DENSE_FILES_ONLY=1 "${PYTHON_FILES:-python3}" scripts/bench_dense.py "$TMP" "$N" "$NQ" "$THREADS" "$BATCH" | tee "$TMP/py.txt"
else
  "$PYTHON" scripts/bench_dense.py "$TMP" "$N" "$NQ" "$THREADS" "$BATCH" | tee "$TMP/py.txt"
fi
echo "loadavg_between=$(cut -d' ' -f1-3 /proc/loadavg)"
PGRAPHRAG_BENCH_TEXTS="$TMP/texts.jsonl" PGRAPHRAG_BENCH_QUERIES="$TMP/queries.jsonl" \
  PGRAPHRAG_BENCH_BATCH="$BATCH" PGRAPHRAG_BENCH_BACKENDS="${BACKENDS:-native}" \
  PGRAPHRAG_BENCH_PRECISION="${PRECISION:-f32}" PGRAPHRAG_BENCH_REPS="${REPS:-1}" \
  cargo bench -q -p pgraphrag-retrieval --bench dense | tee "$TMP/rs.txt"
echo "loadavg_after=$(cut -d' ' -f1-3 /proc/loadavg)"
get() { sed -n "s/^.*\b$1=\([^ ]*\).*$/\1/p" "$2" | head -1; }
py=$(get torch_texts_per_s "$TMP/py.txt"); rs=$(get rust_texts_per_s "$TMP/rs.txt")
echo "== summary: threads=$THREADS batch=$BATCH texts=$N queries=$NQ"
echo "torch_texts_per_s=${py:-not_timed} rust_texts_per_s=$rs ($(get rust_backend "$TMP/rs.txt"))"
[ -n "$py" ] && echo "speed_ratio_rust_over_torch=$(python3 -c "print(round($rs / $py, 3))")"
# Every other encoder timed (BACKENDS x PRECISION), against PyTorch and against the first.
for key in $(sed -n 's/^\(rust_[a-z0-9_]*\)_texts_per_s=.*/\1/p' "$TMP/rs.txt"); do
  v=$(get "${key}_texts_per_s" "$TMP/rs.txt")
  echo "${key}_texts_per_s=$v ($(get "${key}_backend" "$TMP/rs.txt")) over_first=$(python3 -c "print(round($v / $rs, 3))")" \
       "${py:+over_torch=$(python3 -c "print(round($v / $py, 3))")}"
done
grep -h '^int8_cosine' "$TMP/rs.txt" || true
for k in query_cached query_with_encoding; do
  torch=""
  [ -n "$py" ] && torch="torch p50=$(get torch_${k}_p50_ms "$TMP/py.txt") p99=$(get torch_${k}_p99_ms "$TMP/py.txt") ms; "
  echo "$k: ${torch}rust ($(get rust_backend "$TMP/rs.txt")) p50=$(get ${k}_p50_ms "$TMP/rs.txt") p99=$(get ${k}_p99_ms "$TMP/rs.txt") ms"
done
