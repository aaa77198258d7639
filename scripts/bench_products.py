"""PyTorch's f32 matrix products at the training step's shapes (SmolLM2-135M, 512 rows: the
q/o, k/v, gate/up and down projections forward, `x @ W.T`), in GFLOP/s on THREADS threads:
the reference for `pgraphrag-retrieval`'s packed product, whose probe times the same shapes
(`RAYON_NUM_THREADS=2 cargo test --release -p pgraphrag-retrieval --lib packed_gflops --
--ignored --nocapture`). Run the two one after the other.

    python scripts/bench_products.py [THREADS]   (a Python with torch: .cache/bench-train-venv)
"""
import sys
import time

import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.set_num_threads(threads)
m, total, flops = 512, 0.0, 0.0
for n, k in [(576, 576), (192, 576), (576, 192), (576, 1536), (1536, 576)]:
    x, w = torch.randn(m, k), torch.randn(n, k)
    for _ in range(3):
        x @ w.T
    reps = 20
    t = time.perf_counter()
    for _ in range(reps):
        x @ w.T
    s = time.perf_counter() - t
    total, flops = total + s, flops + 2 * m * n * k * reps
    print(f"torch m={m} n={n} k={k} threads={threads}: {2 * m * n * k * reps / s / 1e9:.1f} GFLOP/s")
print(f"all: {flops / total / 1e9:.1f} GFLOP/s")
