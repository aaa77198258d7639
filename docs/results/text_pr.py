#!/usr/bin/env python3
"""ROUGE-1 precision, recall and output length per PGraphRAG config of one review-text run.

Reads the RANKING and OUTPUT files that `pgraphrag bench` wrote into runs/results/<ds>-text and
scores the raw outputs (no answer extraction) with rouge-score's ROUGE-1 (no stemmer, as the
tables use). Used for the review-text readings in NOTES.md.

    python3 docs/results/text_pr.py amazon   # needs: pip install rouge-score
"""
import glob
import json
import statistics
import sys

from rouge_score import rouge_scorer

ds = sys.argv[1]
base = sys.argv[2] if len(sys.argv) > 2 else f"runs/results/{ds}-text"
scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
ranking = json.load(open(f"{base}/RANKING-{ds}_dev_reviewText_bm25.json"))
gold = {r["user_id"]: r["user_review_text"] for r in ranking}
print(f"gold: median {statistics.median(len(g.split()) for g in gold.values())} words")
print("config         P      R      median words")
for path in sorted(glob.glob(f"{base}/OUTPUT-*.json")):
    outs = json.load(open(path))
    p = r = 0.0
    for o in outs:
        s = scorer.score(gold[o["user_id"]], o["output"])["rouge1"]
        p += s.precision
        r += s.recall
    words = statistics.median(len(o["output"].split()) for o in outs)
    cfg = path.rsplit("bm25-", 1)[-1][:-5]
    print(f"{cfg:<14} {p / len(outs):.3f}  {r / len(outs):.3f}  {words}")
