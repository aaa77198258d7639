//! One step of the network over one prompt or a batch of decoding sequences: embeddings,
//! RMSNorm, the linear layers (row kernels, 8-bit activations, `gemm` or the packed prompt
//! kernels), RoPE, attention and the SiLU-gated MLP.

use gemm::Parallelism;
use rayon::prelude::*;

use super::formats::{QK, QRows};
use super::{GEMM_MIN_ROWS, Linear, NativeLlama, Seq, prefill, q8};
use crate::gguf::options::Prefill;
use crate::lora::LoraTarget;

impl NativeLlama {
    /// Runs `tokens` on the single sequence (appending to its KV cache) and returns the
    /// logits after the last token.
    pub(crate) fn forward(&mut self, tokens: &[u32]) -> std::result::Result<Vec<f32>, String> {
        let end = self.seq.len + tokens.len();
        self.ensure_rope(end);
        let mut seq = std::mem::take(&mut self.seq);
        let pool = self.pool.clone();
        let prefill = tokens.len() > 1;
        let r = pool.install(|| self.step(&mut [&mut seq], &[tokens], prefill));
        self.seq = seq;
        r.map(|mut v| v.pop().unwrap_or_default())
    }

    /// Extends the RoPE tables to cover positions `0..n`, computed as candle does:
    /// `θ_i = 1 / base^(2i/d)` and `angle = pos · θ_i` in f32.
    pub(super) fn ensure_rope(&mut self, n: usize) {
        let half = self.cfg.rope_dim / 2;
        let have = self.cos.len() / half.max(1);
        if have >= n || half == 0 {
            return;
        }
        let d = self.cfg.rope_dim as f32;
        let theta: Vec<f32> = (0..half)
            .map(|i| 1f32 / self.cfg.rope_base.powf((2 * i) as f32 / d))
            .collect();
        let n = n.max(have * 2).max(512);
        for pos in have..n {
            for &t in &theta {
                let a = pos as f32 * t;
                self.cos.push(a.cos());
                self.sin.push(a.sin());
            }
        }
    }

    pub(super) fn rms_norm(&self, x: &[f32], w: &[f32], out: &mut [f32]) {
        for (xr, or) in x
            .chunks_exact(self.cfg.n_embd)
            .zip(out.chunks_exact_mut(self.cfg.n_embd))
        {
            let ss: f32 = xr.iter().map(|v| v * v).sum();
            let m = (ss / self.cfg.n_embd as f32 + self.cfg.eps).sqrt();
            for ((o, &v), &a) in or.iter_mut().zip(xr).zip(w) {
                *o = v / m * a;
            }
        }
    }

    /// `y (t × rows) = x (t × cols) · Wᵀ`: one sequence's prompt (the packed row-wise kernel,
    /// or `gemm` on the f32 copy) or one token of each of `t` sequences (the stored blocks).
    pub(super) fn linear(&self, lin: &Linear, x: &[f32], t: usize, prompt: bool, y: &mut [f32]) {
        let (rows, cols) = (lin.q.rows, lin.q.cols);
        debug_assert_eq!(x.len(), t * cols);
        debug_assert_eq!(y.len(), t * rows);
        if let (true, Some(p)) = (prompt, &lin.packed) {
            prefill::matmul(self.pk.block, p, x, t, y);
        } else if prompt && t >= GEMM_MIN_ROWS {
            // SAFETY: the pointers cover t×cols, rows×cols and t×rows f32 values with the
            // strides given (row-major x and y, W read as its transpose).
            unsafe {
                gemm::gemm(
                    t,
                    rows,
                    cols,
                    y.as_mut_ptr(),
                    1,
                    rows as isize,
                    false,
                    x.as_ptr(),
                    1,
                    cols as isize,
                    lin.dense.as_ptr(),
                    cols as isize,
                    1,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    Parallelism::Rayon(0),
                );
            }
        } else {
            self.matvecs(&lin.q, lin.i8.as_ref(), x, t, y);
        }
    }

    /// `y_v = W · x_v` for `n` vectors (row-major `n × cols` in, `n × rows` out) with the
    /// stored blocks (or their 8-bit-activation repacking `w8`, when given); rows are split
    /// across the rayon pool and each block of weights is read once for all vectors.
    pub(super) fn matvecs(
        &self,
        w: &QRows,
        w8: Option<&q8::I8Rows>,
        x: &[f32],
        n: usize,
        y: &mut [f32],
    ) {
        let rows_per_task = (w.rows / (rayon::current_num_threads() * 4)).clamp(16, 1024);
        let mut tmp = Vec::new();
        let out: &mut [f32] = if n == 1 {
            y
        } else {
            tmp.resize(w.rows * n, 0f32);
            &mut tmp
        };
        if let Some(w8) = w8 {
            let mut qx = q8::QuantX::default();
            qx.quantize(x, w.cols, n);
            let f = self.k8;
            out.par_chunks_mut(rows_per_task * n)
                .enumerate()
                .for_each(|(c, o)| f(w8, c * rows_per_task, &qx, n, o));
        } else {
            let xsum: Vec<f32> = x.chunks_exact(QK).map(|c| c.iter().sum()).collect();
            let f = self.k.rows_dot;
            out.par_chunks_mut(rows_per_task * n)
                .enumerate()
                .for_each(|(c, o)| f(w, c * rows_per_task, x, &xsum, n, o));
        }
        if n > 1 {
            for (r, vals) in tmp.chunks_exact(n).enumerate() {
                for (v, &val) in vals.iter().enumerate() {
                    y[v * w.rows + r] = val;
                }
            }
        }
    }

    pub(super) fn rope(&self, x: &mut [f32], n_heads: usize, pos: usize) {
        let half = self.cfg.rope_dim / 2;
        let cos = &self.cos[pos * half..(pos + 1) * half];
        let sin = &self.sin[pos * half..(pos + 1) * half];
        for h in x.chunks_exact_mut(self.cfg.head_dim).take(n_heads) {
            for i in 0..half {
                let (a, b) = (h[2 * i], h[2 * i + 1]);
                h[2 * i] = a * cos[i] - b * sin[i];
                h[2 * i + 1] = a * sin[i] + b * cos[i];
            }
        }
    }

    /// One step over several sequences: either one sequence with any number of new tokens
    /// (`prompt`: prompt processing), or sequences with one new token each (decoding, batched
    /// when there are several). Appends to each sequence's KV cache and returns each
    /// sequence's logits after its last token. The RoPE tables must already cover the new
    /// positions ([`Self::reserve`]).
    pub(crate) fn step(
        &self,
        seqs: &mut [&mut Seq],
        tokens: &[&[u32]],
        prompt: bool,
    ) -> std::result::Result<Vec<Vec<f32>>, String> {
        let c = self.cfg;
        if seqs.len() != tokens.len() || seqs.is_empty() {
            return Err("one token list per sequence is needed".into());
        }
        if prompt && seqs.len() != 1 {
            return Err("a prompt step takes one sequence".into());
        }
        if !prompt && tokens.iter().any(|t| t.len() != 1) {
            return Err("decoding steps take exactly one token per sequence".into());
        }
        let t: usize = tokens.iter().map(|t| t.len()).sum();
        if t == 0 {
            return Err("no tokens to process".into());
        }
        for &id in tokens.iter().flat_map(|t| t.iter()) {
            if id as usize >= c.vocab {
                return Err(format!(
                    "token id {id} is outside the vocabulary of {}",
                    c.vocab
                ));
            }
        }
        let half = (c.rope_dim / 2).max(1);
        for (s, tk) in seqs.iter().zip(tokens) {
            if s.cache.len() != self.layers.len() {
                return Err("the sequence was made for another model".into());
            }
            if (s.len + tk.len()) * half > self.cos.len() && c.rope_dim > 0 {
                return Err(format!(
                    "position {} is beyond the prepared RoPE table",
                    s.len + tk.len()
                ));
            }
        }
        // Position of each row.
        let pos: Vec<usize> = seqs
            .iter()
            .zip(tokens)
            .flat_map(|(s, tk)| (0..tk.len()).map(move |i| s.len + i))
            .collect();
        let (q_dim, kv_dim) = (c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let qkv_dim = q_dim + 2 * kv_dim;
        let mut x = vec![0f32; t * c.n_embd];
        for (row, &id) in x
            .chunks_exact_mut(c.n_embd)
            .zip(tokens.iter().flat_map(|t| t.iter()))
        {
            self.tok_embd.dequant_row(id as usize, row);
        }
        let mut h = vec![0f32; t * c.n_embd];
        let mut qkv = vec![0f32; t * qkv_dim];
        let mut att = vec![0f32; t * q_dim];
        let mut proj = vec![0f32; t * c.n_embd];
        let mut gu = vec![0f32; t * 2 * c.n_ff];
        let mut act = vec![0f32; t * c.n_ff];
        let scale = 1f32 / (c.head_dim as f32).sqrt();
        for (li, layer) in self.layers.iter().enumerate() {
            self.rms_norm(&x, &layer.attn_norm, &mut h);
            self.linear(&layer.qkv, &h, t, prompt, &mut qkv);
            let qkv_parts = [
                (LoraTarget::Q, 0),
                (LoraTarget::K, q_dim),
                (LoraTarget::V, q_dim + kv_dim),
            ];
            self.add_lora(li, &qkv_parts, &h, t, &mut qkv, qkv_dim);
            for (row, &p) in qkv.chunks_exact_mut(qkv_dim).zip(&pos) {
                let (q, kv) = row.split_at_mut(q_dim);
                self.rope(q, c.n_head, p);
                self.rope(&mut kv[..kv_dim], c.n_kv_head, p);
            }
            let mut r0 = 0;
            for (s, tk) in seqs.iter_mut().zip(tokens) {
                let n = tk.len();
                let cache = &mut s.cache[li];
                for row in qkv[r0 * qkv_dim..(r0 + n) * qkv_dim].chunks_exact(qkv_dim) {
                    cache.k.extend_from_slice(&row[q_dim..q_dim + kv_dim]);
                    cache.v.extend_from_slice(&row[q_dim + kv_dim..]);
                }
                r0 += n;
            }
            if prompt && self.prefill == Prefill::Rowwise {
                let s = &mut seqs[0];
                let cache = &s.cache[li];
                self.attention_rowwise(&qkv, &cache.k, &cache.v, t, s.len, scale, &mut att);
            } else if t == seqs.len() {
                // One new token per sequence: every (sequence, head) pair in parallel.
                let caches: Vec<(&[f32], &[f32])> = seqs
                    .iter()
                    .map(|s| (&s.cache[li].k[..], &s.cache[li].v[..]))
                    .collect();
                self.attend_decode(&qkv, &caches, scale, &mut att);
            } else {
                let s = &mut seqs[0];
                let cache = &s.cache[li];
                self.attention(&qkv, &cache.k, &cache.v, t, s.len, scale, &mut att);
            }
            self.linear(&layer.wo, &att, t, prompt, &mut proj);
            self.add_lora(li, &[(LoraTarget::O, 0)], &att, t, &mut proj, c.n_embd);
            for (a, b) in x.iter_mut().zip(&proj) {
                *a += b;
            }
            self.rms_norm(&x, &layer.ffn_norm, &mut h);
            self.linear(&layer.gate_up, &h, t, prompt, &mut gu);
            let gu_parts = [(LoraTarget::Gate, 0), (LoraTarget::Up, c.n_ff)];
            self.add_lora(li, &gu_parts, &h, t, &mut gu, 2 * c.n_ff);
            for (row, a) in gu
                .chunks_exact(2 * c.n_ff)
                .zip(act.chunks_exact_mut(c.n_ff))
            {
                let (g, u) = row.split_at(c.n_ff);
                for ((o, &gv), &uv) in a.iter_mut().zip(g).zip(u) {
                    *o = gv / (1.0 + (-gv).exp()) * uv;
                }
            }
            self.linear(&layer.down, &act, t, prompt, &mut proj);
            self.add_lora(li, &[(LoraTarget::Down, 0)], &act, t, &mut proj, c.n_embd);
            for (a, b) in x.iter_mut().zip(&proj) {
                *a += b;
            }
        }
        // The last row of each sequence.
        let mut last = Vec::with_capacity(seqs.len() * c.n_embd);
        let mut r = 0;
        for (s, tk) in seqs.iter_mut().zip(tokens) {
            r += tk.len();
            s.len += tk.len();
            last.extend_from_slice(&x[(r - 1) * c.n_embd..r * c.n_embd]);
        }
        let mut hn = vec![0f32; last.len()];
        self.rms_norm(&last, &self.out_norm, &mut hn);
        let n = seqs.len();
        let mut logits = vec![0f32; n * c.vocab];
        let out = self.output.as_ref().unwrap_or(&self.tok_embd);
        self.matvecs(out, self.output_i8.as_ref(), &hn, n, &mut logits);
        Ok(logits.chunks_exact(c.vocab).map(|l| l.to_vec()).collect())
    }
}
