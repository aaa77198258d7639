#!/usr/bin/env bash
# Times the multistage writing pipeline's stages other than generation (ranking, keywords, the
# summary and synthesis weak labels) per target: `pgraphrag multistage export` against the Python
# reference scripts/multistage_reference.py (rank_bm25 0.2.2, nltk 3.9.1 word_tokenize / Punkt /
# WordNet, sentence-transformers over torch), on the same examples and the same thread count, in
# one run; then compares what both computed. See docs/multistage_speed.md.
#
#   scripts/bench_multistage.sh [--examples FILE | --corpus FILE] [--limit N] [--threads N]
#                               [--rankers LIST] [--label-ranker R]
#
#   --examples FILE   an examples.jsonl of `pgraphrag multistage build`
#   --corpus FILE     or a corpus (AuthoredDoc JSONL) to build one from (default the
#                     SpamAssassin mail corpus, runs/multistage/mail.jsonl or runs/lamp/mail.jsonl)
#   --limit N         only the first N train examples (default 20); 0 = every train example.
#                     The slice is written to a file both sides read, so the IDF table is built
#                     over the slice's train documents on both sides
#   --threads N       OMP / MKL / OpenBLAS / torch / RAYON threads on both sides (default 2)
#   --rankers LIST    comma-separated rankers to time (default all five:
#                     RecentDoc,RankDocBM25,RankDocDense,RankSnippet,RankDocBySnpt); ours runs
#                     `export --ranker R` once per ranker, the reference all of them in one run
#   --label-ranker R  whose entries both weak labels read (default RankDocBM25, as export's)
#
# Env: PGRAPHRAG_BIN (a prebuilt binary; default: cargo build --release, target/release/pgraphrag),
#      PRECISION (our encoder's linear layers: f32 or int8; default f32),
#      MS_REF_VENV (the reference's venv, default .cache/ms-ref-venv; made here when missing, from
#      PyPI by package name and pinned versions: about 5 GiB, torch's CUDA wheels included, since
#      PyPI's Linux torch wheel is the CUDA build; the CPU is all that runs), PYTHON (the python3
#      that makes the venv), PGRAPHRAG_DATA (NLTK's punkt_tab under its nltk/), WORDNET_DIR.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXAMPLES=""; CORPUS="$ROOT/runs/multistage/mail.jsonl"; LIMIT=20; THREADS=2
[[ -f "$CORPUS" ]] || CORPUS="$ROOT/runs/lamp/mail.jsonl"
RANKERS="RecentDoc,RankDocBM25,RankDocDense,RankSnippet,RankDocBySnpt"; LABEL=RankDocBM25
while [[ $# -gt 0 ]]; do
  case "$1" in
    --examples) EXAMPLES="$2"; shift 2 ;;
    --corpus) CORPUS="$2"; shift 2 ;;
    --limit) LIMIT="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --rankers) RANKERS="$2"; shift 2 ;;
    --label-ranker) LABEL="$2"; shift 2 ;;
    *) sed -n '2,22p' "$0" >&2; exit 2 ;;
  esac
done
[[ ",$RANKERS," == *",$LABEL,"* ]] || { echo "--label-ranker $LABEL must be one of --rankers" >&2; exit 2; }
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" \
  RAYON_NUM_THREADS="$THREADS" TOKENIZERS_PARALLELISM=false
export PGRAPHRAG_DATA=${PGRAPHRAG_DATA:-$ROOT/../shared/data}
MODEL="$ROOT/models/all-MiniLM-L6-v2"
[[ -f "$MODEL/config.json" ]] || { echo "no MiniLM at $MODEL: scripts/fetch-minilm.sh" >&2; exit 1; }
WN=${WORDNET_DIR:-$ROOT/models/wordnet}
[[ -f "$WN/index.noun" ]] || WN=/usr/share/wordnet
[[ -f "$WN/index.noun" ]] || { echo "no WordNet 3.0: scripts/fetch-wordnet.sh" >&2; exit 1; }

# ---- the reference's environment (pinned; made once) -------------------------------------------
VENV=${MS_REF_VENV:-$ROOT/.cache/ms-ref-venv}
PINS=(torch==2.15.0 sentence-transformers==6.2.0 transformers==5.24.0 tokenizers==0.23.3
      huggingface_hub==2.4.0 safetensors==0.8.0 numpy==2.4.6 scipy==1.17.1 scikit-learn==1.9.1
      rank-bm25==0.2.2 nltk==3.9.1 regex==2026.11.19 tqdm==4.70.1 joblib==1.6.0 click==8.5.1)
if ! "$VENV/bin/python" -c "import torch, sentence_transformers, rank_bm25, nltk" 2>/dev/null; then
  echo "== making the reference's venv $VENV (PyPI, pinned: ${PINS[*]})"
  "${PYTHON:-python3}" -m venv "$VENV"
  "$VENV/bin/pip" install --no-cache-dir -q "${PINS[@]}"
fi
"$VENV/bin/python" - <<'PY'
import importlib.metadata as m
want = {"torch": "2.15.0", "sentence-transformers": "6.2.0", "rank-bm25": "0.2.2", "nltk": "3.9.1"}
got = {k: m.version(k) for k in want}
bad = {k: v for k, v in got.items() if not v.startswith(want[k])}
print("reference venv:", ", ".join(f"{k} {v}" for k, v in got.items()))
if bad:
    raise SystemExit(f"unexpected versions {bad} (want {want})")
PY

# ---- ours ----------------------------------------------------------------------------------------
if [[ -n "${PGRAPHRAG_BIN:-}" ]]; then
  BIN=$PGRAPHRAG_BIN
else
  (cd "$ROOT" && cargo build --release -q -p pgraphrag-cli)
  BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/pgraphrag
fi
"$BIN" multistage export --help >/dev/null 2>&1 || { echo "$BIN has no 'multistage export'" >&2; exit 1; }

if [[ -n "${KEEP:-}" ]]; then
  OUT=$KEEP; mkdir -p "$OUT"   # keep both sides' outputs there
else
  OUT=$(mktemp -d)
  trap 'rm -rf "$OUT"' EXIT
fi
if [[ -z "$EXAMPLES" ]]; then
  [[ -f "$CORPUS" ]] || { echo "no corpus $CORPUS (scripts/fetch-corpora.sh; pgraphrag corpus convert)" >&2; exit 1; }
  "$BIN" multistage build --corpus "$CORPUS" --out "$OUT/built" --quiet
  EXAMPLES="$OUT/built/examples.jsonl"
fi
# The slice both sides read: the first LIMIT train examples (export reads the train split only).
python3 - "$EXAMPLES" "$OUT/examples.jsonl" "$LIMIT" <<'PY'
import json, sys
src, dst, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
n = 0
with open(src) as f, open(dst, "w") as g:
    for line in f:
        if not line.strip() or json.loads(line)["split"] != "train":
            continue
        if limit and n >= limit:
            break
        g.write(line); n += 1
print(f"examples: {n} train examples of {src}")
PY

TIMEFORMAT='%R %U %S'
echo "loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg) threads=$THREADS"
IFS=, read -r -a RLIST <<<"$RANKERS"
# Ours: one export per ranker (export ranks with one ranker; its weak labels read that ranker, so
# the labels are taken from the --label-ranker run). No embedding cache, no author pairs.
for R in "${RLIST[@]}"; do
  { time "$BIN" multistage export --examples "$OUT/examples.jsonl" --out "$OUT/ours-$R.jsonl" \
      --ranker "$R" --encoder "$MODEL" --encoder-precision "${PRECISION:-f32}" --wordnet "$WN" --with-keywords --no-author-pairs --quiet \
      >"$OUT/ours-$R.log" 2>"$OUT/ours-$R.err" ; } 2>"$OUT/ours-$R.time" \
    || { cat "$OUT/ours-$R.err" >&2; exit 1; }
  echo "ours   $R: $(cat "$OUT/ours-$R.time") (wall user sys s)"
done
echo "loadavg_between=$(cut -d' ' -f1-3 /proc/loadavg)"
{ time "$VENV/bin/python" "$ROOT/scripts/multistage_reference.py" --examples "$OUT/examples.jsonl" \
    --out "$OUT/ref.jsonl" --threads "$THREADS" --model "$MODEL" --wordnet "$WN" \
    --rankers "$RANKERS" --label-ranker "$LABEL" >"$OUT/ref.log" 2>"$OUT/ref.err" ; } 2>"$OUT/ref.time" \
  || { cat "$OUT/ref.err" >&2; exit 1; }
echo "python all: $(cat "$OUT/ref.time") (wall user sys s)"
echo "loadavg_after=$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the comparison --------------------------------------------------------------------------------
python3 - "$OUT" "$RANKERS" "$LABEL" <<'PY'
import json, os, sys
out, rankers, label = sys.argv[1], sys.argv[2].split(","), sys.argv[3]

def stats_line(path):
    for line in open(path):
        if line.startswith("stats "):
            return json.loads(line[6:])
    raise SystemExit(f"no stats line in {path}")

ours = {r: stats_line(os.path.join(out, f"ours-{r}.log")) for r in rankers}
ref = stats_line(os.path.join(out, "ref.err"))
n = ours[label]["train_examples"]
assert n == ref["train_examples"], (n, ref["train_examples"])
osec = {r: ours[r]["seconds"] for r in rankers}
psec = ref["seconds"]

# Per target, milliseconds. Ours' labels and keywords from the --label-ranker run; each
# ranker's ranking (ranking + cut) from its own run.
rows = []
for r in rankers:
    rows.append((f"ranking {r}", osec[r]["ranking"][r], psec["ranking"][r]))
for k in ["keywords", "summary_label", "synthesis_label"]:
    rows.append((k, osec[label][k], psec[k]))
stage_o = sum(o for _, o, _ in rows); stage_p = sum(p for _, _, p in rows)
enc_o = min(osec[r]["encoder"] for r in rankers)   # the same warm-up in every run: the fastest
one_o = {k: osec[label][k] for k in ["load", "wordnet", "idf"]}
one_p = {k: psec[k] for k in ["load", "wordnet", "idf"]}
ms = lambda s: 1000.0 * s / n  # noqa: E731
ratio = lambda p, o: f"{p / o:8.1f}x" if o > 0 else "       -"  # noqa: E731
print(f"== time per target ({n} train examples), ms: ours | python | python/ours")
for name, o, p in rows:
    print(f"  {name:<24} {ms(o):10.3f} {ms(p):12.3f} {ratio(p, o)}")
print(f"  {'stages (sum above)':<24} {ms(stage_o):10.3f} {ms(stage_p):12.3f} {ratio(stage_p, stage_o)}")
print(f"  {'encoder warm-up':<24} {ms(enc_o):10.3f} {ms(psec['encoder']):12.3f} {ratio(psec['encoder'], enc_o)}"
      "   (model load + encoding every text the stages read, once)")
for k in ["load", "wordnet", "idf"]:
    print(f"  {k:<24} {ms(one_o[k]):10.3f} {ms(one_p[k]):12.3f} {ratio(one_p[k], one_o[k])}")
all_o = stage_o + enc_o + sum(one_o.values()); all_p = stage_p + psec["encoder"] + sum(one_p.values())
print(f"  {'all of it':<24} {ms(all_o):10.3f} {ms(all_p):12.3f} {ratio(all_p, all_o)}"
      f"   (python imports {psec['import']:.1f} s not counted)")
print(f"RATIO stages (ranking, keywords, weak labels) python/ours = {stage_p / stage_o:.1f}x")
print(f"RATIO stages + encoder + load + wordnet + idf python/ours = {all_p / all_o:.1f}x")

# ---- parity -----------------------------------------------------------------------------------------
def records(path):
    by = {}
    for line in open(path):
        d = json.loads(line)
        by.setdefault(d["id"], {})[d["task"]] = d
    return by

def section(prompt, name):
    """A section of the generation prompt ('past passages' is the last one)."""
    key = f"\n\n{name}: "
    i = prompt.find(key)
    if i < 0:
        return None
    rest = prompt[i + len(key):]
    if name == "past passages":
        return rest
    j = rest.find("\n\n")
    return rest if j < 0 else rest[:j]

refs = {}
for line in open(os.path.join(out, "ref.jsonl")):
    d = json.loads(line)
    if "id" in d:
        refs[d["id"]] = d
ids = list(refs)
print(f"== parity over {len(ids)} train examples (ours' records vs the reference)")
def entries(d, r):
    """The reference's kept entries of ranker r, as cut."""
    t, k, out_ = d["cut_text"][r], 0, []
    for n in d["cut_entry_chars"][r]:
        out_.append(t[k:k + n]); k += n + 2  # the blank-line joiner
    return out_

for r in rankers:
    o = records(os.path.join(out, f"ours-{r}.jsonl"))
    same = lead = kept = 0; diffs = []
    for i in ids:
        got = section(o[i]["generation"]["prompt"], "past passages")
        want = refs[i]["cut_text"][r]
        same += got == want
        # Leading entries in agreement: the longest k with ours = the reference's first k
        # entries followed by the joiner (or the end).
        es = entries(refs[i], r); k = 0
        while k < len(es) and got is not None and (got == "\n\n".join(es[:k + 1])
                                                    or got.startswith("\n\n".join(es[:k + 1]) + "\n\n")):
            k += 1
        lead += k; kept += len(es)
        if got != want and len(diffs) < 3:
            diffs.append(f"{i} (agree on {k} of {len(es)} entries)")
    print(f"  {r:<14} cut text identical {same}/{len(ids)}; leading entries in agreement {lead}/{kept}"
          + (f"; differ: {', '.join(diffs)}" if diffs else ""))
o = records(os.path.join(out, f"ours-{label}.jsonl"))
kw_same = sum(section(o[i]["generation"]["prompt"], "important words") == ", ".join(refs[i]["keywords"]) for i in ids)
sum_same = sum(o[i].get("summary", {}).get("target") == (refs[i]["summary_label"] or {}).get("text") for i in ids)
syn_same = sum(o[i].get("synthesis", {}).get("target") == refs[i]["synthesis_label"]["text"] for i in ids)
print(f"  keywords identical {kw_same}/{len(ids)}")
print(f"  summary weak label identical {sum_same}/{len(ids)} (over {label})")
print(f"  synthesis weak label identical {syn_same}/{len(ids)} (over {label})")
bad = [i for i in ids if o[i].get("synthesis", {}).get("target") != refs[i]["synthesis_label"]["text"]][:3]
for i in bad:
    a = o[i].get("synthesis", {}).get("target", "").split(", "); b = refs[i]["synthesis_label"]["text"].split(", ")
    print(f"    synthesis {i}: ours-only {sorted(set(a) - set(b))[:8]} python-only {sorted(set(b) - set(a))[:8]}")
bad = [i for i in ids if section(o[i]["generation"]["prompt"], "important words") != ", ".join(refs[i]["keywords"])][:3]
for i in bad:
    print(f"    keywords {i}: ours {section(o[i]['generation']['prompt'], 'important words')!r}\n"
          f"                python {', '.join(refs[i]['keywords'])!r}")
PY
