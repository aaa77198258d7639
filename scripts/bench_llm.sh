#!/usr/bin/env bash
# Speed of pgraphrag-llm (native engine and candle) against llama.cpp on the same GGUF file and thread count, in
# one run: prompt-processing (pp) and greedy decode (tg) tokens/s and their ratios.
#
#   scripts/bench_llm.sh [MODEL] [THREADS]      (defaults: models/SmolLM2-135M-Instruct.Q4_1.gguf, 2)
#   NATIVE_ONLY=1 skips the two candle rows; TG, REPS override the defaults.
#   Rows: llama.cpp; native (default: 8-bit activations when decoding, as llama.cpp and candle);
#   native-f32 (f32 activations); native-gemm (the gemm crate for prompts instead of the row-wise
#   kernels); native-avx2 (on AVX-512 CPUs: the AVX2 kernels only); candle as stored; candle with Q8_0
#   weights.
#
# llama.cpp comes from the prebuilt PyPI wheel `cyllama==0.2.18` (installed into .cache/bench-venv
# on first use). Both engines get the same prompt (a ChatML-formatted raw prompt of ~400 tokens),
# the same thread count, up to TG=64 greedy tokens, 3 repetitions each, interleaved; the best
# repetition of each is compared (the machine may be shared).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODEL="${1:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
THREADS="${2:-2}"
TG="${TG:-64}"
REPS="${REPS:-3}"
[ -f "$MODEL" ] || { echo "bench_llm: $MODEL missing; run scripts/fetch-llms.sh --smollm-only" >&2; exit 1; }

VENV="$ROOT/.cache/bench-venv"
if ! "$VENV/bin/python" -c 'import cyllama' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --no-deps --only-binary=:all: cyllama==0.2.18
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
# PROFILE=dev reuses a test build (dependencies are opt-level 3 there too; the hot loops are candle's).
PROFILE="${PROFILE:-release}"
if [ "$PROFILE" = dev ]; then
  (cd "$ROOT" && cargo build -q -p pgraphrag-llm --example bench_llm)
  BIN="$CARGO_TARGET_DIR/debug/examples/bench_llm"
else
  (cd "$ROOT" && cargo build -q --release -p pgraphrag-llm --example bench_llm)
  BIN="$CARGO_TARGET_DIR/release/examples/bench_llm"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK/prompt.txt" <<'PY'
import sys
doc = ("Rome was founded, according to legend, in 753 BC by Romulus. Over the following centuries "
       "it grew from a small settlement on the Tiber into the capital of an empire that stretched "
       "from Britain to Mesopotamia. Its republic gave way to emperors under Augustus, and its roads, "
       "laws, aqueducts and language shaped Europe for two thousand years. ") * 4
user = f"Here are some notes:\n{doc}\nUsing the notes, write a detailed essay of at least 500 words about the history of Rome."
sys.stdout = open(sys.argv[1], "w")
print("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
      f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n", end="")
PY

export RAYON_NUM_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS"
# On an AVX-512 CPU, also time the engine capped at its AVX2 kernels (`native-avx2`): what an AVX2-only
# CPU runs. The llama.cpp wheel is an AVX2 + FMA build (no AVX-512 or VNNI instructions), so that row
# against llama.cpp's is AVX2 code against AVX2 code on one CPU. AVX2_ROW= (empty) skips it.
AVX2_ROW="${AVX2_ROW-$(grep -qw avx512f /proc/cpuinfo 2>/dev/null && echo 1 || true)}"
: > "$WORK/results.jsonl"
for r in $(seq 1 "$REPS"); do
  "$VENV/bin/python" "$ROOT/scripts/bench_llm.py" --model "$MODEL" --prompt-file "$WORK/prompt.txt" \
      --threads "$THREADS" --tg "$TG" --reps 1 >> "$WORK/results.jsonl"
  "$BIN" --model "$MODEL" --prompt-file "$WORK/prompt.txt" --tg "$TG" --reps 1 --engine native >> "$WORK/results.jsonl"
  "$BIN" --model "$MODEL" --prompt-file "$WORK/prompt.txt" --tg "$TG" --reps 1 --engine native --f32-activations >> "$WORK/results.jsonl"
  "$BIN" --model "$MODEL" --prompt-file "$WORK/prompt.txt" --tg "$TG" --reps 1 --engine native --prefill gemm >> "$WORK/results.jsonl"
  if [ -n "$AVX2_ROW" ]; then
    "$BIN" --model "$MODEL" --prompt-file "$WORK/prompt.txt" --tg "$TG" --reps 1 --engine native --avx2-kernels >> "$WORK/results.jsonl"
  fi
  if [ -z "${NATIVE_ONLY:-}" ]; then
    "$BIN" --model "$MODEL" --prompt-file "$WORK/prompt.txt" --tg "$TG" --reps 1 --engine candle >> "$WORK/results.jsonl"
    "$BIN" --model "$MODEL" --prompt-file "$WORK/prompt.txt" --tg "$TG" --reps 1 --engine candle --q8 >> "$WORK/results.jsonl"
  fi
done

python3 - "$WORK/results.jsonl" "$MODEL" "$THREADS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = {}
for r in rows:
    b = best.setdefault(r["engine"], {"pp": 0.0, "tg": 0.0, "pp_tokens": r["pp_tokens"], "tg_tokens": r["tg_tokens"], "text": r["text"]})
    b["pp"] = max(b["pp"], r["pp_tok_s"]); b["tg"] = max(b["tg"], r["tg_tok_s"])
ref = best["llama.cpp"]
print(f"model {sys.argv[2]}, {sys.argv[3]} threads, best of {len(rows)//len(best)} interleaved runs")
print(f"{'engine':<12} {'pp tokens':>9} {'pp tok/s':>9} {'tg tokens':>9} {'tg tok/s':>9} {'pp ratio':>8} {'tg ratio':>8}")
for name, b in best.items():
    print(f"{name:<12} {b['pp_tokens']:>9} {b['pp']:>9.1f} {b['tg_tokens']:>9} {b['tg']:>9.1f} {b['pp']/ref['pp']:>8.2f} {b['tg']/ref['tg']:>8.2f}")
for name, b in best.items():
    print(f"  {name} greedy text starts: {b['text'][:80]!r}")
PY
