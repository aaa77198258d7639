#!/usr/bin/env python3
"""Speed of `pgraphrag metrics` (release build) against the Python stack, in one run.

Builds 2,500 prediction/reference pairs from the PGraphRAG dev splits (review texts of other
users on the same item, and titles against titles), then times, on the same machine:

* ours:   target/release/pgraphrag metrics --pairs P --out O   (all cores, WordNet load included)
* python: rouge-score 0.1.2 RougeScorer(rouge1/2/L/Lsum) + nltk 3.9.1 single_meteor_score over
          word_tokenize + sacrebleu.sentence_bleu, one process (WordNet load included)

and prints both wall times, the ratio, and the largest difference between the two outputs.
Usage: scripts/bench_metrics.sh  (or python3 scripts/bench_metrics.py [--n 2500] [--threads T])
Needs: wordnet-base (/usr/share/wordnet), PGRAPHRAG_DATA or ../shared/data, the release binary
(CARGO_TARGET_DIR honoured).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts", "fixtures"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2500)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--example", action="store_true",
                    help="time the library example `score_pairs` (same code path, no CLI) instead of the CLI")
    args = ap.parse_args()
    import metrics_golden as mg  # builds the NLTK_DATA folder under /tmp and sets NLTK_DATA

    pairs = []
    for ds in ["amazon", "hotel", "gap", "b2w"]:
        pairs += mg.same_item_pairs(ds, args.n // 4 * 2 // 3 + 1, args.n // 4 // 3 + 1)
    pairs = pairs[: args.n]
    tmp = tempfile.mkdtemp(prefix="bench_metrics_")
    inp, out = os.path.join(tmp, "pairs.jsonl"), os.path.join(tmp, "ours.jsonl")
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
    if not os.path.exists(exe):
        sys.exit(f"{exe} missing: {hint}")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    ours = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    ours_cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

    c0 = time.process_time()
    t0 = time.perf_counter()
    import nltk
    import sacrebleu
    from nltk.translate.meteor_score import single_meteor_score
    from rouge_score import rouge_scorer

    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    py = []
    for _, p, r in pairs:
        s = sc.score(r, p)
        py.append(
            [s["rouge1"].fmeasure, s["rouge2"].fmeasure, s["rougeL"].fmeasure, s["rougeLsum"].fmeasure,
             single_meteor_score(nltk.word_tokenize(r), nltk.word_tokenize(p)),
             sacrebleu.sentence_bleu(p, [r]).score]
        )
    python = time.perf_counter() - t0
    python_cpu = time.process_time() - c0

    names = ["rouge1", "rouge2", "rougeL", "rougeLsum", "meteor", "bleu"]
    diff = 0.0
    with open(out) as f:
        for line, want in zip(f, py):
            got = json.loads(line)
            diff = max(diff, max(abs(got[k] - w) for k, w in zip(names, want)))
    print(f"pairs: {len(pairs)}  cores: {os.cpu_count()}")
    print(f"ours ({os.path.basename(exe)}, release): wall {ours:.3f} s, cpu {ours_cpu:.3f} s")
    print(f"python (rouge-score + nltk meteor + sacrebleu): wall {python:.3f} s, cpu {python_cpu:.3f} s")
    print(f"speed-up: wall {python / ours:.1f}x, cpu {python_cpu / ours_cpu:.1f}x"
          f"  (load average {os.getloadavg()[0]:.1f}; on a busy machine the cpu ratio is the fair one)")
    print(f"max |ours - python| over all pairs and metrics: {diff:.3g}")


if __name__ == "__main__":
    main()
