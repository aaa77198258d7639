#!/usr/bin/env bash
# Speed of the offline summary job (`pgraphrag summarize`, docs/stages.md) on the local model, against
# llama.cpp's speed on the same GGUF file, thread count and a prompt of the same shape, in one run.
#
#   scripts/bench_summarize.sh [MODEL] [THREADS]   (defaults: models/SmolLM2-135M-Instruct.Q4_1.gguf, 2)
#   USERS (16), TWEETS per user (8), TG = --max-new-tokens (64), BATCH (8), REPS for llama.cpp (3: one before our job, the rest after);
#   PROFILE=dev reuses the test build (our LLM kernels and all dependencies are opt-level 3 there too);
#   BIN=path/to/pgraphrag uses that binary as it is (no build).
#
# Ours: a fresh store, USERS synthetic LaMP-7 users, the Table 2 LaMP-7 prompt, continuous batching
# (BATCH users per call); summaries/s and generated tokens/s over the job's wall time (prompt
# processing included; generated tokens = the stored summaries re-tokenized).
# llama.cpp (the prebuilt `cyllama==0.2.18` wheel, in the models/py venv as scripts/test.sh makes it):
# the first user's summary prompt, ChatML-formatted as SmolLM2's template does, processed in one
# batch then up to TG greedy tokens one at a time (scripts/bench_llm.py); its decode-only tokens/s and
# its one-sequence end-to-end tokens/s (prompt + decode time) are both printed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODEL="${1:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
THREADS="${2:-2}"
USERS="${USERS:-16}" TWEETS="${TWEETS:-8}" TG="${TG:-64}" BATCH="${BATCH:-8}" REPS="${REPS:-3}"
[ -f "$MODEL" ] || { echo "bench_summarize: $MODEL missing; run scripts/fetch-llms.sh --smollm-only" >&2; exit 1; }

cd "$ROOT"
if ! models/py/bin/python -c "import cyllama.llama.llama_cpp" 2>/dev/null; then
  python3 -m venv --system-site-packages models/py
  models/py/bin/python -m pip install -q --no-deps --disable-pip-version-check cyllama==0.2.18
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PROFILE="${PROFILE:-release}"
if [ -n "${BIN:-}" ]; then
  PROFILE="given ($BIN)"
elif [ "$PROFILE" = dev ]; then
  cargo build -q -p pgraphrag-cli; BIN="$CARGO_TARGET_DIR/debug/pgraphrag"
else
  cargo build -q --release -p pgraphrag-cli; BIN="$CARGO_TARGET_DIR/release/pgraphrag"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK" "$USERS" "$TWEETS" <<'PY'
import json, sys
work, users, tweets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
words = ("coffee monday weekend rain train late again finally sunshine pizza deadline meeting "
         "cat dog gym lol omg tired happy new song playlist game tonight tomorrow").split()
qs = []
for u in range(users):
    profile = []
    for t in range(tweets):
        w = [words[(u * 5 + t * 3 + i) % len(words)] for i in range(12)]
        profile.append({"id": f"{u}-{t}", "date": f"2021-05-{t + 1:02d}",
                        "text": f"ugh {' '.join(w)} #{w[0]} !!"})
    qs.append({"id": f"u{u}", "input": "Paraphrase the following tweet without any explanation before or after it: x",
               "profile": profile})
json.dump(qs, open(f"{work}/questions.json", "w"))
# The first user's prompt as the job builds it (instruction, entries most recent first, blank lines)
# in SmolLM2's ChatML with its default system prompt.
instr = ("Given this person's previous tweets, try to describe a template for their tweets. I want to take a "
         "generic sentence and rephrase it to sound like one of their tweets, with the same "
         "style/punctuation/capitalization/wording/tone/etc. as them. Only give me the template description, nothing else.")
entries = [f"Tweet: {p['text']}" for p in sorted(qs[0]["profile"], key=lambda p: p["date"], reverse=True)]
msg = "\n\n".join([instr] + entries)
open(f"{work}/prompt.txt", "w").write(
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    f"<|im_start|>user\n{msg}<|im_end|>\n<|im_start|>assistant\n")
PY

export RAYON_NUM_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS"
llama() {
  models/py/bin/python scripts/bench_llm.py --model "$MODEL" --prompt-file "$WORK/prompt.txt" \
      --threads "$THREADS" --tg "$TG" --reps "$1" >> "$WORK/llama.jsonl"
}
# llama.cpp before and after ours, so that a change in the machine's load shows in its spread.
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
: > "$WORK/llama.jsonl"
llama 1
T0=$(date +%s.%N)
"$BIN" summarize --input "$WORK/questions.json" --task LaMP-7 --model "$MODEL" --store "$WORK/s.sqlite" \
    --batch "$BATCH" --max-new-tokens "$TG" --context 2048 --quiet > "$WORK/ours.txt" 2> "$WORK/ours.err"
T1=$(date +%s.%N)
llama "$(( REPS > 1 ? REPS - 1 : 1 ))"
LOAD1="$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK" "$T0" "$T1" "$MODEL" "$THREADS" "$BATCH" "$TG" "$PROFILE" "$LOAD0" "$LOAD1" <<'PY'
import json, sys
work, t0, t1, model, threads, batch, tg, profile, load0, load1 = sys.argv[1:]
stats = next(json.loads(l[6:]) for l in open(f"{work}/ours.txt") if l.startswith("stats "))
rows = [json.loads(l) for l in open(f"{work}/llama.jsonl")]
best = max(rows, key=lambda r: r["tg_tok_s"])
e2e = max(r["tg_tokens"] / (r["pp_tokens"] / r["pp_tok_s"] + max(r["tg_tokens"] - 1, 0) / r["tg_tok_s"]) for r in rows)
print(f"model {model}, {threads} threads, --max-new-tokens {tg}, --batch {batch}, {profile} build; "
      f"load average {load0} before, {load1} after")
per_run = ", ".join("%.1f" % r["tg_tok_s"] for r in rows)
print(f"llama.cpp decode tok/s per run (first before ours): {per_run}")
print(f"ours:      {stats['computed']} summaries in {stats['seconds']:.1f}s (process {float(t1) - float(t0):.1f}s incl. load): "
      f"{stats['summaries_per_s']:.3f} summaries/s, {stats['generated_tokens']} tokens, {stats['generated_tokens_per_s']:.1f} generated tok/s "
      f"(entries kept {stats['entries_kept']}, dropped {stats['entries_dropped']})")
print(f"llama.cpp: prompt {best['pp_tokens']} tokens at {best['pp_tok_s']:.0f} tok/s; decode {best['tg_tokens']} tokens at "
      f"{best['tg_tok_s']:.1f} tok/s (best of {len(rows)}); one sequence end to end {e2e:.1f} tok/s")
print(f"ratio ours / llama.cpp decode: {stats['generated_tokens_per_s'] / best['tg_tok_s']:.2f}; "
      f"ours / llama.cpp one-sequence end to end: {stats['generated_tokens_per_s'] / e2e:.2f}")
PY
