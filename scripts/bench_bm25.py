#!/usr/bin/env python3
"""Time pgraphrag's Bm25Okapi against rank_bm25 0.2.2 on the same candidate lists, in one run.

Builds realistic candidate lists of 5, 50, 500 and 5,000 documents from the PGraphRAG dev
splits ($PGRAPHRAG_DATA/pgraphrag/*_dev.json; documents are f"{title} {text}", queries are
review titles, all tokenized with nltk.word_tokenize(x.lower())), times rank_bm25's
fit + get_scores on them, runs the criterion bench crates/retrieval/benches/bm25.rs on the very
same lists (BM25_BENCH_LISTS), and prints the per-list times and the speed-up.

Usage: PGRAPHRAG_DATA=/path/to/data python3 scripts/bench_bm25.py [--quick]
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("PGRAPHRAG_DATA", os.path.join(ROOT, "..", "shared", "data"))
os.environ.setdefault("NLTK_DATA", os.path.join(DATA, "nltk"))

import nltk  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402

SIZES = [5, 50, 500, 5000]
CASES = 10


def field(v):
    return v if v else "None"


def build_lists():
    docs, titles = [], []
    for ds in ["amazon", "b2w", "gap", "hotel"]:
        for u in json.load(open(os.path.join(DATA, "pgraphrag", f"{ds}_dev.json"), encoding="utf-8")):
            for r in u["profile"]:
                docs.append(f"{field(r.get('title'))} {field(r.get('text'))}")
                titles.append(field(r.get("title")))
    order = list(range(len(docs)))
    random.Random(0).shuffle(order)
    pool = [nltk.word_tokenize(docs[i].lower()) for i in order]
    qpool = [nltk.word_tokenize(titles[i].lower()) for i in order]
    sizes = []
    for n in SIZES:
        cases = []
        for c in range(CASES):
            start = (c * 997 * n) % (len(pool) - n)
            cases.append({"docs": pool[start:start + n], "query": qpool[(start + n) % len(qpool)]})
        sizes.append({"n": n, "cases": cases})
    return {"sizes": sizes}


def time_rank_bm25(size, min_seconds):
    def once():
        for c in size["cases"]:
            BM25Okapi(c["docs"]).get_scores(c["query"])
    once()  # warm-up
    runs, total, best = 0, 0.0, float("inf")
    while total < min_seconds or runs < 3:
        t = time.perf_counter()
        once()
        dt = time.perf_counter() - t
        best, total, runs = min(best, dt), total + dt, runs + 1
    return best / len(size["cases"]), total / runs / len(size["cases"])


def main():
    quick = "--quick" in sys.argv
    t0 = time.time()
    lists = build_lists()
    print(f"built {len(SIZES)}x{CASES} candidate lists in {time.time() - t0:.1f}s", flush=True)
    tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(lists, tmp)
    tmp.close()

    py = {}
    for size in lists["sizes"]:
        py[size["n"]] = time_rank_bm25(size, 0.5 if quick else 2.0)

    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    cmd = ["cargo", "bench", "-p", "pgraphrag-retrieval", "--no-default-features",
           "--bench", "bm25", "--"]
    if quick:
        cmd += ["--warm-up-time", "1", "--measurement-time", "2"]
    env = dict(os.environ, BM25_BENCH_LISTS=tmp.name)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)

    print()
    print("| docs per list | rank_bm25 (best / mean) | pgraphrag Bm25Okapi (mean) | speed-up (mean/mean) |")
    print("|---|---|---|---|")
    for n in SIZES:
        est = json.load(open(os.path.join(target, "criterion", "bm25_okapi_fit_score", str(n),
                                          "new", "estimates.json")))
        ours = est["mean"]["point_estimate"] / 1e9 / CASES
        best, mean = py[n]
        print(f"| {n} | {best * 1e6:,.1f} / {mean * 1e6:,.1f} µs | {ours * 1e6:,.2f} µs | "
              f"{mean / ours:,.1f}x |")
    os.unlink(tmp.name)


if __name__ == "__main__":
    main()
