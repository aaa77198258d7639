#!/usr/bin/env python3
"""Top-k overlap between two sets of PGraphRAG ranking files (e.g. BM25 against Contriever).

    python3 scripts/rank_overlap.py DIR_A DIR_B [--k 5]

Pairs files whose names match after the ranker suffix (`..._bm25.json` / `..._con.json`) and
prints, per file and side (user, neighbour), the mean |top-k(A) ∩ top-k(B)| / min(k, |list|) over
lists with at least two candidates ranked, by doc_id.
"""
import argparse, json, os, re

ap = argparse.ArgumentParser()
ap.add_argument("a"); ap.add_argument("b"); ap.add_argument("--k", type=int, default=5)
args = ap.parse_args()
key = lambda f: re.sub(r"_[a-z0-9-]+\.json$", "", f)
bfiles = {key(f): f for f in os.listdir(args.b) if f.endswith(".json")}
print(f"| file | user overlap@{args.k} | neighbour overlap@{args.k} | lists |")
print("|---|---:|---:|---:|")
for f in sorted(os.listdir(args.a)):
    if not f.endswith(".json") or key(f) not in bfiles:
        continue
    A = json.load(open(os.path.join(args.a, f))); B = json.load(open(os.path.join(args.b, bfiles[key(f)])))
    res = {}
    for side in ("user_ratings", "neighbor_ratings"):
        tot = n = 0
        for ra, rb in zip(A, B):
            assert ra["user_id"] == rb["user_id"], f"{f}: records out of order"
            ia = [e["doc_id"] for e in ra[side]][: args.k]; ib = [e["doc_id"] for e in rb[side]][: args.k]
            m = min(len(ia), len(ib))
            if m >= 2:
                tot += len(set(ia) & set(ib)) / m; n += 1
        res[side] = (tot / n if n else float("nan"), n)
    print(f"| {key(f)} | {res['user_ratings'][0]:.3f} | {res['neighbor_ratings'][0]:.3f} | {res['user_ratings'][1]} / {res['neighbor_ratings'][1]} |")
