#!/usr/bin/env python3
"""Speed of `pgraphrag metrics` (release build) against the Python stack, in one run.

Builds 2,500 prediction/reference pairs from the PGraphRAG dev splits (review texts of other
users on the same item, and titles against titles), then, on the same machine, repeats
(`--reps`, default 3) and interleaves:

* ours:   target/release/pgraphrag metrics --pairs P --out O
          (a whole invocation: process start, WordNet load, all cores, output and summary)
* python: a whole invocation of this script in `--python-worker` mode: interpreter start,
          imports, rouge-score 0.1.2 RougeScorer(rouge1/2/L/Lsum) + nltk 3.9.1
          single_meteor_score over word_tokenize (WordNet loaded on first use) +
          sacrebleu.sentence_bleu, one process (Python is single-threaded), scores written out.

It prints the median wall time of each side and their ratio, the ratio against session 1's
narrower Python figure (the scoring loop only: imports and WordNet load excluded, which favours
Python), per-metric ratios (ours on ONE thread, `profile_parts` example, against the same
metric's share of the Python loop; WordNet load counted in METEOR on both sides), and the
largest difference between the two outputs.

Usage: scripts/bench_metrics.sh  (or python3 scripts/bench_metrics.py [--n 2500] [--reps 3]
       [--threads T] [--example])
Needs: wordnet-base (/usr/share/wordnet), PGRAPHRAG_DATA or ../shared/data, the release binary
and the profile_parts example (CARGO_TARGET_DIR honoured; scripts/bench_metrics.sh builds both).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = ["rouge1", "rouge2", "rougeL", "rougeLsum", "meteor", "bleu"]


def python_worker(inp, out, timing):
    """The Python stack, scoring `inp` into `out`; per-part seconds go to `timing` (JSON)."""
    t0 = time.perf_counter()
    import nltk
    import sacrebleu
    from nltk.corpus import wordnet
    from nltk.translate.meteor_score import single_meteor_score
    from rouge_score import rouge_scorer

    t_import = time.perf_counter() - t0
    pairs = []
    with open(inp) as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                pairs.append((d["id"], d["prediction"], d["reference"]))
    t0 = time.perf_counter()
    wordnet.ensure_loaded()  # what the first METEOR call would do; timed on its own
    t_wordnet = time.perf_counter() - t0
    # The scoring loop as session 1 wrote it, with a clock around each metric.
    c0 = time.process_time()
    t0 = time.perf_counter()
    part = {"rouge": 0.0, "meteor": 0.0, "bleu": 0.0}
    clock = time.perf_counter
    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    py = []
    for _, p, r in pairs:
        a = clock()
        s = sc.score(r, p)
        b = clock()
        met = single_meteor_score(nltk.word_tokenize(r), nltk.word_tokenize(p))
        c = clock()
        bleu = sacrebleu.sentence_bleu(p, [r]).score
        d = clock()
        part["rouge"] += b - a
        part["meteor"] += c - b
        part["bleu"] += d - c
        py.append([s["rouge1"].fmeasure, s["rouge2"].fmeasure, s["rougeL"].fmeasure,
                   s["rougeLsum"].fmeasure, met, bleu])
    t_loop = time.perf_counter() - t0
    cpu_loop = time.process_time() - c0
    with open(out, "w") as f:
        for (i, _, _), row in zip(pairs, py):
            f.write(json.dumps({"id": i, **dict(zip(NAMES, row))}) + "\n")
    with open(timing, "w") as f:
        json.dump({"import": t_import, "wordnet_load": t_wordnet,
                   "loop": t_loop, "loop_cpu": cpu_loop, **part}, f)


def timed(cmd, env=None):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2500)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--example", action="store_true",
                    help="time the library example `score_pairs` (same code path, no CLI) instead of the CLI")
    ap.add_argument("--python-worker", nargs=3, metavar=("PAIRS", "OUT", "TIMING"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.python_worker:
        python_worker(*args.python_worker)
        return
    sys.path.insert(0, os.path.join(REPO, "scripts", "fixtures"))
    import metrics_golden as mg  # builds the NLTK_DATA folder under /tmp and sets NLTK_DATA

    pairs = []
    for ds in ["amazon", "hotel", "gap", "b2w"]:
        pairs += mg.same_item_pairs(ds, args.n // 4 * 2 // 3 + 1, args.n // 4 // 3 + 1)
    pairs = pairs[: args.n]
    tmp = tempfile.mkdtemp(prefix="bench_metrics_")
    inp = os.path.join(tmp, "pairs.jsonl")
    out, pyout, pytime = (os.path.join(tmp, x) for x in ["ours.jsonl", "python.jsonl", "python.json"])
    with open(inp, "w") as f:
        for i, (_, p, r) in enumerate(pairs):
            f.write(json.dumps({"id": i, "prediction": p, "reference": r}, ensure_ascii=False) + "\n")

    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    if args.example:
        exe = os.path.join(target, "release", "examples", "score_pairs")
        cmd = [exe, inp, out]
        hint = "cargo build --release -p pgraphrag-metrics --example score_pairs"
    else:
        exe = os.path.join(target, "release", "pgraphrag")
        cmd = [exe, "metrics", "--pairs", inp, "--out", out]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        hint = "cargo build --release -p pgraphrag-cli"
    parts_exe = os.path.join(target, "release", "examples", "profile_parts")
    for e, h in [(exe, hint), (parts_exe, "cargo build --release -p pgraphrag-metrics --example profile_parts")]:
        if not os.path.exists(e):
            sys.exit(f"{e} missing: {h}")
    pycmd = [sys.executable, os.path.abspath(__file__), "--python-worker", inp, pyout, pytime]
    env = dict(os.environ)  # carries NLTK_DATA

    rows = []
    for rep in range(args.reps):
        load = os.getloadavg()[0]
        ours = timed(cmd)
        py_wall = timed(pycmd, env)
        with open(pytime) as f:
            pt = json.load(f)
        ours_parts = json.loads(subprocess.run([parts_exe, inp], check=True, capture_output=True,
                                               text=True).stdout.strip().splitlines()[-1])
        rows.append((ours, py_wall, pt, ours_parts, load))
        print(f"rep {rep + 1}: ours {ours:.3f} s, python {py_wall:.2f} s (loop {pt['loop']:.2f} s)"
              f" -> {py_wall / ours:.1f}x   (load average {load:.2f})", flush=True)

    med = statistics.median
    ours = med(r[0] for r in rows)
    py_wall = med(r[1] for r in rows)
    py_loop = med(r[2]["loop"] for r in rows)
    print(f"\npairs: {len(pairs)}  cores: {os.cpu_count()}  reps: {args.reps} (medians below)")
    print(f"ours ({os.path.basename(exe)}, whole invocation):        wall {ours:.3f} s")
    print(f"python (whole invocation):                  wall {py_wall:.3f} s"
          f"  (imports {med(r[2]['import'] for r in rows):.2f} s,"
          f" WordNet load {med(r[2]['wordnet_load'] for r in rows):.2f} s, loop {py_loop:.2f} s)")
    print(f"speed-up, whole invocations:                {med(r[1] / r[0] for r in rows):.1f}x")
    print(f"speed-up, python loop only (session 1):     {med(r[2]['loop'] / r[0] for r in rows):.1f}x"
          "  (excludes Python's imports and WordNet load; favours Python)")
    print("per metric (ours on one thread, in process; WordNet load inside METEOR on both sides):")
    for k in ["rouge", "meteor", "bleu"]:
        o = med(r[3][k] for r in rows)
        p = med(r[2][k] + (r[2]["wordnet_load"] if k == "meteor" else 0.0) for r in rows)
        print(f"  {k:<7} ours {o:8.4f} s  python {p:8.3f} s  {med((r[2][k] + (r[2]['wordnet_load'] if k == 'meteor' else 0.0)) / r[3][k] for r in rows):7.1f}x")
    print(f"load average during the reps: {', '.join(f'{r[4]:.2f}' for r in rows)}")

    diff = 0.0
    with open(out) as f, open(pyout) as g:
        for a, b in zip(f, g):
            x, y = json.loads(a), json.loads(b)
            diff = max(diff, max(abs(x[k] - y[k]) for k in NAMES))
    print(f"max |ours - python| over all pairs and metrics: {diff:.3g}")


if __name__ == "__main__":
    main()
