#!/usr/bin/env python3
"""Times PyTorch (sentence-transformers, CPU) encoding of real reviews and writes the texts and
query cases that the Rust bench (crates/retrieval/benches/dense.rs) reads. Driven by
scripts/bench_dense.sh, which prints the ratio. Prints key=value lines."""
import json
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("PGRAPHRAG_DATA", os.path.join(ROOT, "..", "shared", "data"))
MODEL = os.environ.get("PGRAPHRAG_MINILM", os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))


def doc(r):
    t = r.get("title") or "None"
    x = r.get("text") or "None"
    return f"{t} {x}"


def main():
    out_dir, n_texts, n_queries, threads, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(42)
    with open(os.path.join(DATA, "pgraphrag", "amazon_dev.json")) as f:
        users = json.load(f)
    all_docs = sorted({doc(r) for u in users for r in u["profile"]})
    texts = rng.sample(all_docs, min(n_texts, len(all_docs)))
    with open(os.path.join(out_dir, "texts.jsonl"), "w") as f:
        for t in texts:
            f.write(json.dumps({"text": t}) + "\n")
    # Query cases: the target's text against the reviews of the same product by other users
    # (PGraphRAG's neighbour list for title generation).
    by_pid = {}
    for u in users:
        for r in u["profile"]:
            by_pid.setdefault(r["pid"], []).append((u["id"], r))
    cases = []
    for u in rng.sample(users, len(users)):
        tgt = u["profile"][0]
        docs = [doc(r) for uid, r in by_pid.get(tgt["pid"], []) if uid != u["id"]]
        if docs:
            cases.append({"query": tgt.get("text") or "None", "docs": docs})
        if len(cases) == n_queries:
            break
    with open(os.path.join(out_dir, "queries.jsonl"), "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    if os.environ.get("BENCH_DENSE_FILES_ONLY"):
        return  # only the inputs of the Rust bench

    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    st = SentenceTransformer(MODEL, device="cpu")
    st.max_seq_length = 512
    st.encode(texts[:batch], batch_size=batch)  # warm-up
    t = time.perf_counter()
    e = st.encode(texts, batch_size=batch, convert_to_numpy=True)
    secs = time.perf_counter() - t
    import sentence_transformers

    m0 = st[0]
    flat = getattr(m0, "can_flatten_inputs", False)
    attn = getattr(getattr(m0, "auto_model", None), "config", None)
    attn = getattr(attn, "_attn_implementation", "?")
    print(f"torch_version={torch.__version__} sentence_transformers={sentence_transformers.__version__} "
          f"threads={torch.get_num_threads()} attn={attn}")
    # sentence-transformers sorts the inputs by character length (longest first) and pads each
    # batch to its longest text; with flattened (padding-free) inputs it interleaves instead.
    print(f"torch_sorts_by_length=True torch_padding_free={bool(flat)} max_seq_length={st.max_seq_length}")
    print(f"torch_texts={len(e)}")
    print(f"torch_encode_s={secs:.3f}")
    print(f"torch_texts_per_s={len(e) / secs:.2f}", flush=True)
    # PyTorch query latency with document embeddings precomputed (the same cases).
    import numpy as np

    # Every case's documents encoded once, up front (the cache the Rust side warms).
    uniq = sorted({d for c in cases for d in c["docs"]})
    emb = dict(zip(uniq, st.encode(uniq, batch_size=batch, convert_to_numpy=True)))
    # (b) including encoding the query; (a) the query embedding cached too (scoring + top 5).
    lat_b, lat_a = [], []
    for c in cases:
        d = np.stack([emb[x] for x in c["docs"]])
        t = time.perf_counter()
        q = st.encode([c["query"]], convert_to_numpy=True)[0]
        s = d @ q / (np.linalg.norm(d, axis=1) * np.linalg.norm(q) + 1e-12)
        np.argsort(-s)[:5]
        lat_b.append((time.perf_counter() - t) * 1e3)
    qemb = st.encode([c["query"] for c in cases], batch_size=batch, convert_to_numpy=True)
    for c, q in zip(cases, qemb):
        t = time.perf_counter()
        d = np.stack([emb[x] for x in c["docs"]])
        s = d @ q / (np.linalg.norm(d, axis=1) * np.linalg.norm(q) + 1e-12)
        np.argsort(-s)[:5]
        lat_a.append((time.perf_counter() - t) * 1e3)
    for name, lat in (("torch_query_with_encoding", lat_b), ("torch_query_cached", lat_a)):
        lat.sort()
        print(f"{name}_p50_ms={lat[round((len(lat) - 1) * 0.5)]:.3f}")
        print(f"{name}_p99_ms={lat[round((len(lat) - 1) * 0.99)]:.3f}")


if __name__ == "__main__":
    main()
