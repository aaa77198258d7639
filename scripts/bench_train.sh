#!/usr/bin/env bash
# Training speed of pgraphrag-train against PyTorch on the CPU: the same LoRA step (K-RagRec's
# setting: rank 8, alpha 16, dropout 0.1 on q and v; forward, backward, AdamW) on the same model
# (the GGUF's weights dequantized to f32, exported by the Rust side), the same batch of real text
# and the same thread count. Prints both JSON lines, the initial losses (which must agree: same
# computation) and the speed ratio.
#
#   scripts/bench_train.sh [MODEL] [THREADS]   (defaults: models/SmolLM2-135M-Instruct.Q4_1.gguf, 2)
#   BATCH, SEQ, ANSWER, STEPS override 4, 128, 8, 5. REPS=N runs N interleaved rounds (Rust, then
#   PyTorch) and reports the median ratio. PROFILE=dev reuses a test build.
#   DEVICE=cuda (or cuda:N) runs both sides on that GPU: the Rust side is built with
#   `--features cuda` (a CUDA toolkit at build time). BIN=PATH runs a bench_train binary built
#   elsewhere instead of building one (the GPU machine has no Rust toolchain).
#   PYTHON: a Python with torch and safetensors (default: .cache/bench-train-venv, created on
#   first use with the CPU wheels of torch from download.pytorch.org).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODEL="${1:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
THREADS="${2:-2}"
BATCH="${BATCH:-4}" SEQ="${SEQ:-128}" ANSWER="${ANSWER:-8}" STEPS="${STEPS:-5}" REPS="${REPS:-1}"
DEVICE="${DEVICE:-cpu}"
FEATURES=()
[ "$DEVICE" = cpu ] || FEATURES=(--features cuda)
[ -f "$MODEL" ] || { echo "bench_train: $MODEL missing; run scripts/fetch-llms.sh --smollm-only" >&2; exit 1; }

PYTHON="${PYTHON:-$ROOT/.cache/bench-train-venv/bin/python}"
if ! "$PYTHON" -c 'import torch, safetensors' 2>/dev/null; then
  VENV="$ROOT/.cache/bench-train-venv"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --index-url https://download.pytorch.org/whl/cpu torch
  "$VENV/bin/pip" install -q safetensors numpy
  PYTHON="$VENV/bin/python"
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PROFILE="${PROFILE:-release}"
if [ -n "${BIN:-}" ]; then
  :
elif [ "$PROFILE" = dev ]; then
  (cd "$ROOT" && cargo build -q -p pgraphrag-train "${FEATURES[@]}" --example bench_train)
  BIN="$CARGO_TARGET_DIR/debug/examples/bench_train"
else
  (cd "$ROOT" && cargo build -q --release -p pgraphrag-train "${FEATURES[@]}" --example bench_train)
  BIN="$CARGO_TARGET_DIR/release/examples/bench_train"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export RAYON_NUM_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
# candle 0.11 runs element-wise ops on its own pool (CANDLE_NUM_THREADS, default RAYON_NUM_THREADS)
# beside the rayon threads of the matrix products. With candle's own products, one element-wise
# thread was 4x faster on 2 cores; since the frozen projections run on the packed tiles, THREADS
# element-wise threads are faster (docs/train.md, "Speed"). CANDLE_NUM_THREADS=1 compares.
export CANDLE_NUM_THREADS="${CANDLE_NUM_THREADS:-$THREADS}"
# REPS rounds, each the Rust side then PyTorch (interleaved, so both see the same machine);
# the ratio is reported per round and as the median over rounds.
for i in $(seq 1 "$REPS"); do
  "$BIN" --model "$MODEL" --batch "$BATCH" --seq "$SEQ" --answer "$ANSWER" --steps "$STEPS" --device "$DEVICE" --export "$WORK" > "$WORK/rust.$i.json"
  "$PYTHON" "$ROOT/scripts/bench_train.py" "$WORK" "$THREADS" "$STEPS" "$DEVICE" > "$WORK/torch.$i.json"
  cat "$WORK/rust.$i.json" "$WORK/torch.$i.json"
done
python3 - "$WORK" "$REPS" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
rounds = [tuple(json.load(open(f"{work}/{side}.{i}.json")) for side in ("rust", "torch")) for i in range(1, reps + 1)]
r, t = rounds[0]
print(f"initial loss: rust {r['loss0']:.6f} torch {t['loss0']:.6f} (|diff| {abs(r['loss0'] - t['loss0']):.2e})")
print(f"device: rust {r.get('device', 'cpu')}, torch {t.get('device', 'cpu')}")
ratios = []
for i, (r, t) in enumerate(rounds, 1):
    ratios.append(t["step_s_median"] / r["step_s_median"])
    print(f"round {i}: median step rust {r['step_s_median']:.3f} s, torch {t['step_s_median']:.3f} s, ratio {ratios[-1]:.3f}")
print(f"speed_ratio_rust_over_torch={statistics.median(ratios):.3f}")
PY
