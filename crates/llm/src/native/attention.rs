//! Attention: one query per sequence while decoding, and causal attention over a prompt
//! (row-wise, whose rows do not depend on each other, or with `gemm`).

use gemm::Parallelism;
use pgraphrag_core::simd::SendPtr;
use rayon::prelude::*;

use super::kernels::softmax;
use super::{NativeLlama, prefill};

impl NativeLlama {
    /// Attention of one new query per sequence (row `i` of `qkv` belongs to sequence `i`, whose
    /// K/V cache already holds the new position): one task per (sequence, query head), or per
    /// (sequence, KV head) running its group's query heads in one pass over the cached keys and
    /// values when there are many sequences; one score buffer per thread. Each head computes
    /// exactly what the single-query case of [`Self::attention`] does, whatever the grouping.
    pub(super) fn attend_decode(
        &self,
        qkv: &[f32],
        caches: &[(&[f32], &[f32])],
        scale: f32,
        out: &mut [f32],
    ) {
        let c = self.cfg;
        let (hd, q_dim, kv_dim) = (c.head_dim, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let qkv_dim = q_dim + 2 * kv_dim;
        let group = c.n_head / c.n_kv_head;
        // A whole group per task only when there are enough tasks to keep every thread busy
        // (one sequence of SmolLM2-135M: 3 groups on 2 threads is slower than 9 heads).
        let per = if caches.len() * c.n_kv_head >= 4 * rayon::current_num_threads() {
            group
        } else {
            1
        };
        let tasks_per_seq = c.n_head / per;
        out.par_chunks_mut(per * hd).enumerate().for_each_init(
            Vec::new,
            |s: &mut Vec<f32>, (i, o)| {
                let (si, t) = (i / tasks_per_seq, i % tasks_per_seq);
                let (kc, vc) = caches[si];
                let h0 = t * per;
                let q = &qkv[si * qkv_dim + h0 * hd..si * qkv_dim + (h0 + per) * hd];
                let n = per * (kc.len() / kv_dim);
                if s.len() < n {
                    s.resize(n, 0.0);
                }
                let off = (h0 / group) * hd;
                (self.k.attend)(q, kc, vc, kv_dim, off, hd, scale, &mut s[..n], o);
            },
        );
    }

    /// [`Self::attention`] for [`Prefill::Rowwise`](crate::Prefill::Rowwise): each (query,
    /// head) pair is computed over its causal positions by [`prefill::Kernels::attend`] (keys
    /// transposed once per KV head), so a row's result does not depend on the other rows of
    /// the call.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention_rowwise(
        &self,
        qkv: &[f32],
        kc: &[f32],
        vc: &[f32],
        t: usize,
        p0: usize,
        scale: f32,
        out: &mut [f32],
    ) {
        let c = self.cfg;
        let (hd, q_dim, kv_dim) = (c.head_dim, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let qkv_dim = q_dim + 2 * kv_dim;
        let group = c.n_head / c.n_kv_head;
        debug_assert_eq!(out.len(), t * q_dim);
        let l = p0 + t;
        let kts: Vec<(Vec<f32>, usize)> = (0..c.n_kv_head)
            .into_par_iter()
            .map(|kvh| prefill::transpose_keys(kc, l, kv_dim, kvh * hd, hd))
            .collect();
        let attend = self.pk.attend;
        out.par_chunks_mut(hd)
            .enumerate()
            .for_each_init(Vec::new, |s: &mut Vec<f32>, (idx, o)| {
                let (i, h) = (idx / c.n_head, idx % c.n_head);
                let n = p0 + i + 1;
                if s.len() < n {
                    s.resize(n, 0.0);
                }
                let q = &qkv[i * qkv_dim + h * hd..i * qkv_dim + (h + 1) * hd];
                let (kt, lp) = &kts[h / group];
                attend(
                    q,
                    kt,
                    *lp,
                    vc,
                    kv_dim,
                    (h / group) * hd,
                    scale,
                    &mut s[..n],
                    o,
                );
            });
    }

    /// Causal grouped-query attention of the `t > 1` new queries of one sequence against its
    /// cache (`p0` earlier positions plus the `t` new ones).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention(
        &self,
        qkv: &[f32],
        kc: &[f32],
        vc: &[f32],
        t: usize,
        p0: usize,
        scale: f32,
        out: &mut [f32],
    ) {
        let c = self.cfg;
        let (hd, q_dim, kv_dim) = (c.head_dim, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let qkv_dim = q_dim + 2 * kv_dim;
        let group = c.n_head / c.n_kv_head;
        let l = p0 + t;
        let out_ptr = SendPtr::new(out.as_mut_ptr());
        (0..c.n_head).into_par_iter().for_each(|h| {
            let kvh = h / group;
            let mut s = vec![0f32; t * l];
            // S = Q_h · K_hᵀ · scale   (t × l)
            // SAFETY: every pointer/stride pair stays inside its buffer: q rows of qkv_dim,
            // cache rows of kv_dim (l rows), s is t×l.
            unsafe {
                gemm::gemm(
                    t,
                    l,
                    hd,
                    s.as_mut_ptr(),
                    1,
                    l as isize,
                    false,
                    qkv.as_ptr().add(h * hd),
                    1,
                    qkv_dim as isize,
                    kc.as_ptr().add(kvh * hd),
                    kv_dim as isize,
                    1,
                    0.0,
                    scale,
                    false,
                    false,
                    false,
                    Parallelism::None,
                );
            }
            for (i, row) in s.chunks_exact_mut(l).enumerate() {
                let n = p0 + i + 1;
                softmax(&mut row[..n]);
                row[n..].fill(0.0);
            }
            // O_h = P · V_h   (t × hd), written into columns h·hd.. of out.
            // SAFETY: heads write disjoint column ranges of `out` (t × q_dim).
            unsafe {
                gemm::gemm(
                    t,
                    hd,
                    l,
                    out_ptr.get().add(h * hd),
                    1,
                    q_dim as isize,
                    false,
                    s.as_ptr(),
                    1,
                    l as isize,
                    vc.as_ptr().add(kvh * hd),
                    1,
                    kv_dim as isize,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    Parallelism::None,
                );
            }
        });
    }
}
