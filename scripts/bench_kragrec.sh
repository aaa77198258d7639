#!/usr/bin/env bash
# K-RagRec retrieval speed, Rust (pgraphrag-recsys, native MiniLM) against the Python reference
# (scripts/kragrec_reference.py: sentence-transformers on torch CPU, torch sparse message passing,
# cosine top-k), same rows, same thread count, one run:
#   scripts/bench_kragrec.sh [ROWS=200] [THREADS=2]
# Env: PYTHON (default .cache/ms-ref-venv/bin/python; its docstring gives the pip line),
#      ML100K (default models/corpora/ml-100k, from scripts/fetch-corpora.sh),
#      MODEL (default models/all-MiniLM-L6-v2, from scripts/fetch-minilm.sh),
#      AGGREGATION (mean | released; default mean), PY_STYLE (batched | released; default
#      batched: see the reference's docstring), PROFILE (1 = also time the phases; default 1),
#      OUT (a folder to keep the JSON and the logs in; default a temporary one),
#      PRECISION (our encoder's linear layers: f32 or int8; default f32).
# Prints both sides' key=value lines, then a summary: index build, per-row p50/p99/mean for the
# paper's popularity gate and without it, the ratios Python / Rust, what the gate saves on each
# side, and how often both sides retrieve the same sub-graphs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS="${1:-200}"; THREADS="${2:-2}"
PYTHON="${PYTHON:-.cache/ms-ref-venv/bin/python}"
ML100K="${ML100K:-models/corpora/ml-100k}"; MODEL="${MODEL:-models/all-MiniLM-L6-v2}"
AGGREGATION="${AGGREGATION:-mean}"; PY_STYLE="${PY_STYLE:-batched}"; PROFILE="${PROFILE:-1}"
for f in "$ML100K/ml-100k.kg" "$MODEL/config.json"; do
  [ -e "$f" ] || { echo "missing $f (scripts/fetch-corpora.sh, scripts/fetch-minilm.sh)" >&2; exit 2; }
done
[ -x "$PYTHON" ] || { echo "no Python at $PYTHON (see scripts/kragrec_reference.py for the venv)" >&2; exit 2; }
# Absolute: cargo runs the bench binary from crates/recsys.
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; TMP="$(cd "$OUT" && pwd)"; else TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT; fi
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" RAYON_NUM_THREADS="$THREADS"
export TOKENIZERS_PARALLELISM=false
# Build first, so compiling never overlaps a timed section.
CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" cargo bench -q -p pgraphrag-recsys --bench kragrec_retrieval --no-run
echo "loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" scripts/kragrec_reference.py run --data "$ML100K" --model "$MODEL" --rows "$ROWS" \
  --threads "$THREADS" --aggregation "$AGGREGATION" --style "$PY_STYLE" --out "$TMP/py.json" \
  2> >(grep -v -e '^Loading weights' -e 'Sparse invariant' -e 'sparse_coo_tensor' >&2) | tee "$TMP/py.txt"
echo "loadavg_between=$(cut -d' ' -f1-3 /proc/loadavg)"
PGRAPHRAG_BENCH_ML100K="$ML100K" PGRAPHRAG_BENCH_MODEL="$MODEL" PGRAPHRAG_BENCH_ROWS="$ROWS" \
  PGRAPHRAG_BENCH_OUT="$TMP/rs.json" PGRAPHRAG_BENCH_AGGREGATION="$AGGREGATION" \
  PGRAPHRAG_BENCH_PROFILE="$PROFILE" PGRAPHRAG_BENCH_PRECISION="${PRECISION:-f32}" \
  cargo bench -q -p pgraphrag-recsys --bench kragrec_retrieval | tee "$TMP/rs.txt"
echo "loadavg_after=$(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" scripts/kragrec_reference.py compare "$TMP/py.json" "$TMP/rs.json" | tee "$TMP/agree.txt"

get() { sed -n "s/^.*\b$1=\([^ ]*\).*$/\1/p" "$2" | head -1; }
ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{a / b:.1f}x' if b > 0 else '-')" "$1" "$2"; }
echo "== summary: rows=$ROWS threads=$THREADS aggregation=$AGGREGATION python_style=$PY_STYLE ($(get rs_backend "$TMP/rs.txt"))"
py=$(get py_index_build_s "$TMP/py.txt"); rs=$(get rs_index_build_s "$TMP/rs.txt")
echo "index_build_s: python=$py rust=$rs python/rust=$(ratio "$py" "$rs")"
for g in paper none; do
  for m in p50 p99 mean active_p50 active_p99; do
    py=$(get "py_${g}_${m}_ms" "$TMP/py.txt"); rs=$(get "rs_${g}_${m}_ms" "$TMP/rs.txt")
    echo "gate=$g ${m}_ms: python=$py rust=$rs python/rust=$(ratio "$py" "$rs")"
  done
  echo "gate=$g rows_with_retrieval=$(get "rs_${g}_rows_with_retrieval" "$TMP/rs.txt") items_retrieved_for=$(get "rs_${g}_items" "$TMP/rs.txt")"
done
for side in py rs; do
  echo "gate_saving[$side]: mean per row $(get "${side}_none_mean_ms" "$TMP/$side.txt") ms without the gate," \
       "$(get "${side}_paper_mean_ms" "$TMP/$side.txt") ms with it: $(get "${side}_gate_speedup" "$TMP/$side.txt")x faster," \
       "saving $(get "${side}_gate_saving" "$TMP/$side.txt")"
done
for g in paper none; do
  echo "agreement gate=$g: same kept list $(get "agree_${g}_same_kept_list" "$TMP/agree.txt")," \
       "same kept set $(get "agree_${g}_same_kept_set" "$TMP/agree.txt"), sub-graph overlap $(get "agree_${g}_subgraph_overlap" "$TMP/agree.txt")" \
       "(rows with retrieval: $(get "agree_${g}_rows_with_retrieval" "$TMP/agree.txt"))"
done
