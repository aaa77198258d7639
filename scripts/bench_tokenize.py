#!/usr/bin/env python3
"""Time nltk 3.9.1 `word_tokenize(text.lower())` against pgraphrag-text on the same texts, in one
run, and check that the outputs are identical.

Texts: `f"{title} {text}"` of the first N reviews (default 2,500) over the four PGraphRAG dev
splits, in file order (the documents PGraphRAG's BM25 tokenizes).

Usage: python3 scripts/bench_tokenize.py [--n 2500] [--all] [--mode word_lower]
  --all   use every review of the four splits (a full parity check; prints mismatches)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("PGRAPHRAG_DATA") or os.path.join(ROOT, "..", "shared", "data")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2500)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--mode", default="word_lower", choices=["word", "word_lower", "sent_en", "sent_pt"])
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="pgraphrag_nltk_")
    shutil.copytree(os.path.join(DATA, "nltk", "tokenizers", "punkt_tab", "english"),
                    os.path.join(d, "tokenizers", "punkt_tab", "english"))
    os.environ["NLTK_DATA"] = d
    import nltk
    nltk.data.path[:] = [d]
    from nltk.tokenize import sent_tokenize, word_tokenize

    texts = []
    for split in ["amazon", "b2w", "gap", "hotel"]:
        for u in json.load(open(os.path.join(DATA, "pgraphrag", f"{split}_dev.json"), encoding="utf-8")):
            for r in u["profile"]:
                texts.append(f"{r.get('title')} {r.get('text')}")
    if not a.all:
        texts = texts[: a.n]
    if a.mode == "sent_pt":
        sys.exit("sent_pt needs the Portuguese reference; see scripts/fixtures/text_tokenize.py")
    py = {
        "word": word_tokenize,
        "word_lower": lambda t: word_tokenize(t.lower()),
        "sent_en": sent_tokenize,
    }[a.mode]
    py("warm up. Mr. Smith.")
    t0 = time.perf_counter()
    expected = [py(t) for t in texts]
    t_py = time.perf_counter() - t0

    subprocess.check_call(["cargo", "build", "-q", "--release", "-p", "pgraphrag-text", "--example", "tokenize_json"], cwd=ROOT)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    exe = os.path.join(target, "release", "examples", "tokenize_json")
    with tempfile.TemporaryDirectory() as tmp:
        inp, outp = os.path.join(tmp, "in.json"), os.path.join(tmp, "out.json")
        json.dump(texts, open(inp, "w", encoding="utf-8"), ensure_ascii=False)
        t_rs = float(subprocess.check_output([exe, a.mode, inp, outp]).decode().strip())
        got = json.load(open(outp, encoding="utf-8"))
    bad = [i for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    print(f"texts: {len(texts)}  mode: {a.mode}")
    print(f"nltk 3.9.1: {t_py:.3f} s   pgraphrag-text: {t_rs:.4f} s   speed-up: {t_py / t_rs:.1f}x")
    print(f"identical outputs: {len(texts) - len(bad)}/{len(texts)}")
    for i in bad[:10]:
        print(f"MISMATCH {i}: {texts[i]!r}\n  nltk: {expected[i]}\n  ours: {got[i]}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
