#!/usr/bin/env python3
"""Side-by-side table of a fine-tuned bench run against the zero-shot table (scripts/finetune.sh).

Reads two `pgraphrag bench` results.csv files (mode_k plus metric columns) and prints, for the
cells of the fine-tuned run, each metric zero-shot and fine-tuned; for ratings it then prints
the fine-tuned run's constant-answer section of results.md (computed by `pgraphrag bench`).
No metric is computed here.

    finetune_compare.py --task rating --finetuned DIR --zeroshot CSV
"""
import argparse
import csv
import pathlib
import sys


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"finetune_compare: {path} has no rows")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True, choices=["rating", "title", "text"])
    ap.add_argument("--finetuned", required=True, help="the fine-tuned bench's --out folder")
    ap.add_argument("--zeroshot", required=True, help="the zero-shot results CSV")
    a = ap.parse_args()
    out = pathlib.Path(a.finetuned)
    tuned = read(out / "results.csv")
    zero = {r["mode_k"]: r for r in read(a.zeroshot)}
    cols = [c for c in tuned[0] if c != "mode_k"]
    head = "| mode_k |" + "".join(f" zero-shot {c} | **LoRA {c}** |" for c in cols)
    print(head)
    print("|---|" + "---:|---:|" * len(cols))
    for r in tuned:
        z = zero.get(r["mode_k"])
        cells = "".join(
            f" {z[c] if z and c in z else '–'} | **{r[c]}** |" for c in cols
        )
        print(f"| {r['mode_k']} |{cells}")
    if a.task == "rating":
        md = (out / "results.md").read_text()
        i = md.find("\nConstant answers")
        if i >= 0:
            print(md[i:])


if __name__ == "__main__":
    main()
