#!/usr/bin/env python3
"""llama.cpp side of scripts/bench_llm.sh: prompt processing and greedy decode speed.

Runs llama.cpp through the prebuilt `cyllama` wheel (pip `cyllama==0.2.18`, which links
llama.cpp statically; no compiler needed). Prints one JSON line per repetition:
{"engine": "llama.cpp", "pp_tokens", "pp_tok_s", "tg_tokens", "tg_tok_s", "text"}.

Protocol (identical to crates/llm/examples/bench_llm.rs): tokenize PROMPT exactly as the model
would (no BOS for SmolLM2), process it in one batch (pp), then greedily generate up to TG tokens
one at a time, stopping at an end-of-generation token (tg: the tokens after the first, over their
time), with the KV cache cleared per run.
"""
import argparse
import json
import time

import cyllama.llama.llama_cpp as cy

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True)
ap.add_argument("--prompt-file", required=True)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--tg", type=int, default=64)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--tokens-out", default=None, help="write the prompt's token ids here (JSON)")
a = ap.parse_args()

cy.disable_logging()
cy.ggml_backend_load_all()
mp = cy.LlamaModelParams()
mp.n_gpu_layers = 0
model = cy.LlamaModel(a.model, mp)
vocab = model.get_vocab()
prompt = open(a.prompt_file, encoding="utf-8").read()
toks = vocab.tokenize(prompt, add_special=True, parse_special=True)
if a.tokens_out:
    json.dump(toks, open(a.tokens_out, "w"))

cp = cy.LlamaContextParams()
cp.n_ctx = len(toks) + a.tg + 8
cp.n_batch = max(len(toks), 1)
cp.n_ubatch = max(len(toks), 1)
cp.n_threads = a.threads
cp.n_threads_batch = a.threads
cp.no_perf = False
ctx = cy.LlamaContext(model, cp)

for rep in range(a.reps):
    ctx.kv_cache_clear()
    sp = cy.LlamaSamplerChainParams()
    smpl = cy.LlamaSampler(sp)
    smpl.add_greedy()
    t0 = time.perf_counter()
    ctx.decode(cy.llama_batch_get_one(toks))
    tok = smpl.sample(ctx, -1)
    t1 = time.perf_counter()
    out = [tok]
    pos = len(toks)
    for _ in range(a.tg - 1):
        if vocab.is_eog(tok):
            out.pop()
            break
        ctx.decode(cy.llama_batch_get_one([tok], pos))
        pos += 1
        tok = smpl.sample(ctx, -1)
        out.append(tok)
    t2 = time.perf_counter()
    text = "".join(vocab.token_to_piece(t, special=True) for t in out)
    print(json.dumps({
        "engine": "llama.cpp", "rep": rep, "pp_tokens": len(toks), "pp_tok_s": len(toks) / (t1 - t0),
        "tg_tokens": len(out), "tg_tok_s": (len(out) - 1) / (t2 - t1), "text": text,
    }), flush=True)
