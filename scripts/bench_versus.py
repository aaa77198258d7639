#!/usr/bin/env python3
"""Times two builds of the `pgraphrag` binary against each other on the three speed paths a
refactor can slow: ranking (`pgraphrag rank`, four splits, three tasks each), metrics
(`pgraphrag metrics`, 20,000 pairs of real review texts) and generation (`pgraphrag bench` with
SmolLM2 and a fresh cache: every prompt generated). Repetitions are interleaved (A B, then B A)
and the medians compared; both builds must write identical files.

    scripts/bench_versus.py OLD_BINARY NEW_BINARY [--reps 5] [--rank-limit 2500] [--pairs 20000] [--bench-users 8]

Needs $PGRAPHRAG_DATA (or ../shared/data) and models/SmolLM2-135M-Instruct.Q4_1.gguf. Run it
on a quiet machine; it prints one line per path: median seconds of each build and NEW/OLD.
"""
import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rank-limit", type=int, default=2500)
    ap.add_argument("--bench-users", type=int, default=8)
    ap.add_argument("--pairs", type=int, default=20000)
    a = ap.parse_args()
    data = os.environ.get("PGRAPHRAG_DATA") or os.path.join(ROOT, "..", "shared", "data")
    splits = [os.path.join(data, "pgraphrag", f"{d}_dev.json") for d in ["amazon", "b2w", "gap", "hotel"]]
    model = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
    for p in splits + [model]:
        if not os.path.exists(p):
            sys.exit(f"missing {p} (set PGRAPHRAG_DATA; scripts/fetch-llms.sh --smollm-only)")
    tmp = tempfile.mkdtemp(prefix="bench-versus-")
    # --pairs pairs: each user's first review text of amazon_dev against the next user's,
    # cycling through the split.
    with open(splits[0]) as f:
        users = json.load(f)
    texts = [r.get("text") or "" for u in users for r in u.get("profile", [])[:1]]
    texts = [t for t in texts if t.strip()]
    pairs = os.path.join(tmp, "pairs.jsonl")
    with open(pairs, "w") as f:
        for i in range(a.pairs):
            p, r = texts[i % len(texts)], texts[(i + 1) % len(texts)]
            f.write(json.dumps({"id": i, "prediction": p, "reference": r}) + "\n")

    def paths(which):
        out = os.path.join(tmp, which)
        os.makedirs(out, exist_ok=True)
        return out

    def rank(binary, out):
        def go():
            for s in splits:
                subprocess.run([binary, "rank", "--split", s, "--task", "text,title,rating", "--limit",
                                str(a.rank_limit), "--out", out, "--quiet"], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t = time.perf_counter()
        go()
        return time.perf_counter() - t

    def metrics(binary, out):
        return run([binary, "metrics", "--pairs", pairs, "--out", os.path.join(out, "scores.jsonl"), "--quiet"])

    def bench(binary, out):
        cache = os.path.join(out, "cache.sqlite")
        if os.path.exists(cache):
            os.remove(cache)
        return run([binary, "bench", "--split", splits[0], "--task", "rating", "--model", model,
                    "--limit", str(a.bench_users), "--modes", "none,user", "--ks", "1",
                    "--cache", cache, "--out", out, "--quiet"])

    times = {k: {"old": [], "new": []} for k in ["rank", "metrics", "bench"]}
    for rep in range(a.reps):
        order = ["old", "new"] if rep % 2 == 0 else ["new", "old"]
        for name, f in [("rank", rank), ("metrics", metrics), ("bench", bench)]:
            for which in order:
                binary = a.old if which == "old" else a.new
                times[name][which].append(f(binary, paths(f"{name}-{which}")))
    for name in times:
        cmp = filecmp.dircmp(paths(f"{name}-old"), paths(f"{name}-new"))
        differ = [f for f in cmp.diff_files if not f.endswith(".sqlite")]
        o, n = statistics.median(times[name]["old"]), statistics.median(times[name]["new"])
        print(f"{name:8s} old {o:7.3f} s  new {n:7.3f} s  new/old {n / o:.3f}  "
              f"(reps {a.reps}; old {min(times[name]['old']):.3f}-{max(times[name]['old']):.3f}, "
              f"new {min(times[name]['new']):.3f}-{max(times[name]['new']):.3f}); "
              f"files {'identical' if not differ else 'DIFFER: ' + ', '.join(differ)}")


if __name__ == "__main__":
    main()
