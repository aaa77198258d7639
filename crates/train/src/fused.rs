//! Fused CPU kernels, with hand-written backward passes, for the element-wise parts of the
//! llama forward pass that candle would run as chains of small ops (each allocating its
//! output, and its backward pass padding and adding gradients): RMSNorm with a frozen weight,
//! interleaved RoPE, the causal softmax of the attention scores and the SwiGLU activation. Each
//! computes in f32 what [`crate::ops`]'s candle composition computes (to the order of its
//! sums); `tests/gradients.rs` checks their gradients by finite differences.

use std::sync::Arc;

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Shape, Tensor};

/// The contiguous f32 values of a CPU storage.
fn values<'a>(s: &'a CpuStorage, l: &Layout, op: &str) -> candle_core::Result<&'a [f32]> {
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("{op}: the input must be contiguous");
    };
    match s {
        CpuStorage::F32(v) => Ok(&v[a..b]),
        _ => candle_core::bail!("{op}: f32 only"),
    }
}

/// The contiguous f32 values of two storages of the same length.
fn pair<'a>(
    (s1, l1): (&'a CpuStorage, &Layout),
    (s2, l2): (&'a CpuStorage, &Layout),
    op: &str,
) -> candle_core::Result<(&'a [f32], &'a [f32])> {
    let (a, b) = (values(s1, l1, op)?, values(s2, l2, op)?);
    if a.len() != b.len() {
        candle_core::bail!("{op}: shapes {:?} and {:?}", l1.dims(), l2.dims());
    }
    Ok((a, b))
}

/// `x / sqrt(mean(x²) + eps) · w` over the last dimension, `w` frozen (no gradient).
pub(crate) struct RmsNorm {
    pub w: Arc<Vec<f32>>,
    pub eps: f32,
}

impl CustomOp1 for RmsNorm {
    fn name(&self) -> &'static str {
        "rms-norm"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = values(s, l, "rms-norm")?;
        let d = self.w.len();
        if d == 0 || !x.len().is_multiple_of(d) || l.dims().last() != Some(&d) {
            candle_core::bail!("rms-norm: {} weights for shape {:?}", d, l.dims());
        }
        let mut y = Vec::with_capacity(x.len());
        for row in x.chunks_exact(d) {
            let r = rms(row, self.eps);
            y.extend(row.iter().zip(self.w.iter()).map(|(v, w)| v / r * w));
        }
        Ok((CpuStorage::F32(y), l.shape().clone()))
    }

    fn bwd(
        &self,
        arg: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let g = grad.contiguous()?;
        let dx = arg.contiguous()?.apply_op2_no_bwd(
            &g,
            &RmsNormBackward {
                w: self.w.clone(),
                eps: self.eps,
            },
        )?;
        Ok(Some(dx))
    }
}

/// `sqrt(mean(x²) + eps)` of one row, as candle's `sqr`, `sum_keepdim`, `/ d`, `+ eps`,
/// `sqrt` chain computes it.
fn rms(row: &[f32], eps: f32) -> f32 {
    let ss: f32 = row.iter().map(|v| v * v).sum();
    (ss / row.len() as f32 + eps).sqrt()
}

/// The input gradient of [`RmsNorm`]: with `s = sqrt(mean(x²) + eps)` and `gw = g · w`,
/// `dx = gw / s − x · Σ(gw · x) / (d · s³)`.
struct RmsNormBackward {
    w: Arc<Vec<f32>>,
    eps: f32,
}

impl CustomOp2 for RmsNormBackward {
    fn name(&self) -> &'static str {
        "rms-norm-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, g) = pair((s1, l1), (s2, l2), "rms-norm backward")?;
        let d = self.w.len();
        if d == 0 || !x.len().is_multiple_of(d) {
            candle_core::bail!("rms-norm backward: {d} weights for shape {:?}", l1.dims());
        }
        let mut dx = Vec::with_capacity(x.len());
        for (xr, gr) in x.chunks_exact(d).zip(g.chunks_exact(d)) {
            let s = rms(xr, self.eps);
            let dot: f32 = xr
                .iter()
                .zip(gr)
                .zip(self.w.iter())
                .map(|((x, g), w)| g * w * x)
                .sum();
            let c = dot / (d as f32 * s * s * s);
            dx.extend(
                xr.iter()
                    .zip(gr)
                    .zip(self.w.iter())
                    .map(|((x, g), w)| g * w / s - x * c),
            );
        }
        Ok((CpuStorage::F32(dx), l1.shape().clone()))
    }
}

/// Interleaved RoPE on the first `2·half` values of each head of `x` (`[b, h, t, head_dim]`):
/// pairs `(x₂ᵢ, x₂ᵢ₊₁)` at position `p` become `(x₂ᵢ·cos − x₂ᵢ₊₁·sin, x₂ᵢ·sin + x₂ᵢ₊₁·cos)`
/// with `cos`/`sin` the `[positions ≥ t, half]` tables. Its backward pass is the rotation by
/// the opposite angle (the same op with `sin` negated).
pub(crate) struct Rope {
    pub cos: Arc<Vec<f32>>,
    pub sin: Arc<Vec<f32>>,
    pub half: usize,
}

impl CustomOp1 for Rope {
    fn name(&self) -> &'static str {
        "rope"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = values(s, l, "rope")?;
        let (_, _, t, hd) = l.shape().dims4()?;
        let half = self.half;
        if 2 * half > hd || self.cos.len() < t * half || self.sin.len() < t * half {
            candle_core::bail!(
                "rope: tables of {} values for {t} positions, head {hd}",
                self.cos.len()
            );
        }
        let mut y = x.to_vec();
        for (row_i, row) in y.chunks_exact_mut(hd).enumerate() {
            let p = row_i % t;
            let (cos, sin) = (
                &self.cos[p * half..(p + 1) * half],
                &self.sin[p * half..(p + 1) * half],
            );
            for i in 0..half {
                let (x0, x1) = (row[2 * i], row[2 * i + 1]);
                row[2 * i] = x0 * cos[i] - x1 * sin[i];
                row[2 * i + 1] = x0 * sin[i] + x1 * cos[i];
            }
        }
        Ok((CpuStorage::F32(y), l.shape().clone()))
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let back = Rope {
            cos: self.cos.clone(),
            sin: Arc::new(self.sin.iter().map(|s| -s).collect()),
            half: self.half,
        };
        Ok(Some(grad.contiguous()?.apply_op1_no_bwd(&back)?))
    }
}

/// `silu(g) · u`, the gated MLP's activation, `silu(g) = g / (1 + exp(−g))` as candle
/// computes it. Backward: `∂g = ∂a · u · σ(g) · (1 + g · (1 − σ(g)))`, `∂u = ∂a · silu(g)`.
pub(crate) struct SwiGlu;

/// `σ(g)`, as `1 / (1 + exp(−g))`.
fn sigmoid(g: f32) -> f32 {
    1.0 / (1.0 + (-g).exp())
}

/// `silu(g) = g / (1 + exp(−g))`, as candle computes it.
fn silu(g: f32) -> f32 {
    g / (1.0 + (-g).exp())
}

impl CustomOp2 for SwiGlu {
    fn name(&self) -> &'static str {
        "swiglu"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (g, u) = pair((s1, l1), (s2, l2), "swiglu")?;
        let a = g.iter().zip(u).map(|(g, u)| silu(*g) * u).collect();
        Ok((CpuStorage::F32(a), l1.shape().clone()))
    }

    fn bwd(
        &self,
        g: &Tensor,
        u: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let (g, u, da) = (g.contiguous()?, u.contiguous()?, grad.contiguous()?);
        let dg = g.apply_op3_no_bwd(&u, &da, &SwiGluBackward)?;
        // ∂u = ∂a · silu(g): the forward op itself on (g, ∂a).
        let du = g.apply_op2_no_bwd(&da, &SwiGlu)?;
        Ok((Some(dg), Some(du)))
    }
}

/// `∂g` of [`SwiGlu`] from `(g, u, ∂a)`.
struct SwiGluBackward;

impl candle_core::CustomOp3 for SwiGluBackward {
    fn name(&self) -> &'static str {
        "swiglu-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let op = "swiglu backward";
        let (g, u) = pair((s1, l1), (s2, l2), op)?;
        let (_, da) = pair((s1, l1), (s3, l3), op)?;
        let dg = g
            .iter()
            .zip(u)
            .zip(da)
            .map(|((g, u), da)| {
                let s = sigmoid(*g);
                da * u * s * (1.0 + g * (1.0 - s))
            })
            .collect();
        Ok((CpuStorage::F32(dg), l1.shape().clone()))
    }
}

/// Causal softmax of raw attention scores `s` (`[..., group·t, t]`, row `r` a query at
/// position `r mod t`): `P = softmax(scale · s + mask)` with keys after the query masked out,
/// as `scale`, the additive `-inf` mask of [`crate::ops::causal_mask`] and candle's softmax
/// compute it. Backward: `∂s = scale · P ⊙ (∂P − Σ_j ∂P_j P_j)`.
pub(crate) struct CausalSoftmax {
    pub scale: f32,
}

impl CustomOp1 for CausalSoftmax {
    fn name(&self) -> &'static str {
        "causal-softmax"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = values(s, l, "causal-softmax")?;
        let t = *l.dims().last().unwrap_or(&0);
        if t == 0 {
            candle_core::bail!("causal-softmax: empty rows, shape {:?}", l.dims());
        }
        let mut p = vec![0f32; x.len()];
        for (r, (xr, pr)) in x.chunks_exact(t).zip(p.chunks_exact_mut(t)).enumerate() {
            let seen = r % t + 1;
            let mut max = f32::NEG_INFINITY;
            for (pv, xv) in pr[..seen].iter_mut().zip(&xr[..seen]) {
                *pv = xv * self.scale;
                max = max.max(*pv);
            }
            let mut sum = 0f32;
            for pv in &mut pr[..seen] {
                *pv = (*pv - max).exp();
                sum += *pv;
            }
            for pv in &mut pr[..seen] {
                *pv /= sum;
            }
        }
        Ok((CpuStorage::F32(p), l.shape().clone()))
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let ds = res.contiguous()?.apply_op2_no_bwd(
            &grad.contiguous()?,
            &CausalSoftmaxBackward { scale: self.scale },
        )?;
        Ok(Some(ds))
    }
}

/// `∂s` of [`CausalSoftmax`] from `(P, ∂P)`.
struct CausalSoftmaxBackward {
    scale: f32,
}

impl CustomOp2 for CausalSoftmaxBackward {
    fn name(&self) -> &'static str {
        "causal-softmax-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (p, dp) = pair((s1, l1), (s2, l2), "causal-softmax backward")?;
        let t = *l1.dims().last().unwrap_or(&0);
        if t == 0 {
            candle_core::bail!("causal-softmax backward: empty rows, shape {:?}", l1.dims());
        }
        let mut ds = Vec::with_capacity(p.len());
        for (pr, dr) in p.chunks_exact(t).zip(dp.chunks_exact(t)) {
            let dot: f32 = pr.iter().zip(dr).map(|(p, d)| p * d).sum();
            ds.extend(pr.iter().zip(dr).map(|(p, d)| self.scale * p * (d - dot)));
        }
        Ok((CpuStorage::F32(ds), l1.shape().clone()))
    }
}
