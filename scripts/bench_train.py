"""The PyTorch side of scripts/bench_train.sh: the LoRA training step of
crates/train/examples/bench_train.rs (same weights, same initial adapter, same batch, same
loss), timed on the CPU with the same thread count, or on a CUDA GPU.

    python bench_train.py EXPORT_DIR THREADS STEPS [DEVICE]

DEVICE is a torch device (default cpu; `cuda` or `cuda:N` for a GPU, where matrix products stay in
full f32: TF32 is off, as candle's default). Each step ends with `loss.item()`, which waits for the
GPU, as the Rust side's `to_scalar` does.

EXPORT_DIR is what `bench_train --export` wrote: weights.safetensors (the GGUF's weights
dequantized to f32 by pgraphrag-llm), lora.safetensors (the initial adapter: A seeded, B zero) and
batch.json (dimensions and the token windows). The model is written out in plain torch with the
native engine's semantics (RMSNorm, interleaved RoPE, grouped-query attention through
scaled_dot_product_attention, SiLU-gated MLP, tied output); LoRA as PEFT's (rank 8, alpha 16,
dropout 0.1 on q and v); AdamW lr 1e-4, no weight decay. One JSON line on stdout.
"""
import json
import sys
import time

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

out_dir, threads, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
DEV = torch.device(sys.argv[4] if len(sys.argv) > 4 else "cpu")
torch.set_num_threads(threads)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.manual_seed(0)
cfg = json.load(open(f"{out_dir}/batch.json"))
d = cfg["dims"]
W = load_file(f"{out_dir}/weights.safetensors", device=str(DEV))
A0 = load_file(f"{out_dir}/lora.safetensors", device=str(DEV))
E, H, KV, HD, NL = d["n_embd"], d["n_head"], d["n_kv_head"], d["head_dim"], d["n_layer"]
RD, EPS = d["rope_dim"], d["eps"]
RANK, ALPHA, DROP = 8, 16.0, 0.1
SCALE = ALPHA / RANK

lora = {}
for name, t in A0.items():
    p = torch.nn.Parameter(t.clone())
    lora[name] = p
params = [lora[k] for k in sorted(lora)]


def rms(x, w):
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w.reshape(-1)


def rope_tables(t):
    half = RD // 2
    theta = 1.0 / (torch.tensor(d["rope_base"], dtype=torch.float32) ** (torch.arange(half, dtype=torch.float32) * 2 / RD))
    ang = (torch.arange(t, dtype=torch.float32)[:, None] * theta[None, :]).to(DEV)
    return ang.cos(), ang.sin()


def rope(x, cos, sin):  # x [b, h, t, hd], interleaved pairs over the first RD values
    xr = x[..., :RD].reshape(*x.shape[:-1], RD // 2, 2)
    x0, x1 = xr[..., 0], xr[..., 1]
    y = torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], -1).flatten(-2)
    return torch.cat([y, x[..., RD:]], -1) if RD < HD else y


def proj(x, i, name, train):
    y = x @ W[f"blk.{i}.{name}"].T
    a = lora.get(f"blk.{i}.{name}.lora_a")
    if a is not None:
        b = lora[f"blk.{i}.{name}.lora_b"]
        xd = F.dropout(x, DROP, training=train)
        y = y + (xd @ a.T @ b.T) * SCALE
    return y


def hidden(ids, train):
    b, t = ids.shape
    x = W["token_embd"][ids]
    cos, sin = rope_tables(t)
    for i in range(NL):
        h = rms(x, W[f"blk.{i}.attn_norm"])
        q = proj(h, i, "attn_q", train).view(b, t, H, HD).transpose(1, 2)
        k = proj(h, i, "attn_k", train).view(b, t, KV, HD).transpose(1, 2)
        v = proj(h, i, "attn_v", train).view(b, t, KV, HD).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + proj(att.transpose(1, 2).reshape(b, t, H * HD), i, "attn_output", train)
        h = rms(x, W[f"blk.{i}.ffn_norm"])
        g, u = proj(h, i, "ffn_gate", train), proj(h, i, "ffn_up", train)
        x = x + proj(F.silu(g) * u, i, "ffn_down", train)
    return rms(x, W["output_norm"])


ex = cfg["examples"]
T = max(len(e["prompt"]) + len(e["answer"]) for e in ex)
ids = torch.zeros(len(ex), T, dtype=torch.long)
rows, targets = [], []
for i, e in enumerate(ex):
    seq = e["prompt"] + e["answer"]
    ids[i, : len(seq)] = torch.tensor(seq)
    for j, a in enumerate(e["answer"]):
        rows.append(i * T + len(e["prompt"]) - 1 + j)
        targets.append(a)
ids = ids.to(DEV)
rows, targets = torch.tensor(rows, device=DEV), torch.tensor(targets, device=DEV)


def loss_fn(train):
    h = hidden(ids, train).reshape(-1, E)[rows]
    logits = h @ W["token_embd"].T
    return F.cross_entropy(logits, targets)


with torch.no_grad():
    loss0 = loss_fn(False).item()
opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8)
times, losses = [], []
for step in range(steps + 1):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(True)
    loss.backward()
    opt.step()
    losses.append(loss.item())
    if step > 0:  # the first step warms up
        times.append(time.perf_counter() - t0)
times.sort()
median = times[len(times) // 2]
print(json.dumps({
    "impl": f"pytorch-{torch.__version__}", "device": str(DEV), "threads": threads, "batch": len(ex), "seq": T,
    "loss0": loss0, "losses": losses, "step_s_best": round(times[0], 4),
    "step_s_median": round(median, 4), "tokens_per_s": round(len(ex) * T / median, 1),
}))
