//! Differentiable building blocks of the llama forward pass: the frozen linear layer (whose
//! backward pass skips the weight's gradient), RMSNorm, interleaved RoPE, causal masks and
//! seeded dropout.

use std::sync::Arc;

use candle_core::{CpuStorage, CustomOp1, CustomOp2, D, DType, Device, Layout, Shape, Tensor};
use pgraphrag_llm::LlamaDims;
use pgraphrag_retrieval::dense::PackedMatrix;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

/// A frozen weight `W` (`[out, in]`, row-major as in the GGUF) and, on a CPU with the packed
/// AVX-512/AVX2 product ([`PackedMatrix`]), `W` packed for the forward product `x · Wᵀ` and
/// `Wᵀ` packed for the backward one `g · W`. Cloning shares the packs.
#[derive(Clone)]
pub(crate) struct Frozen {
    /// The weight as a tensor (merging, export, the GPU path).
    pub w: Tensor,
    packed: Option<Arc<[PackedMatrix; 2]>>,
}

impl Frozen {
    /// Packs `w` where the packed product applies (an f32 CPU tensor whose two dimensions
    /// are multiples of 32, on a CPU with AVX2 + FMA); elsewhere the plain tensor.
    pub fn new(w: Tensor) -> candle_core::Result<Self> {
        let (out, inp) = w.dims2()?;
        if !w.device().is_cpu() || w.dtype() != DType::F32 {
            return Ok(Frozen { w, packed: None });
        }
        let data: Vec<f32> = w.flatten_all()?.to_vec1()?;
        let Some(fwd) = PackedMatrix::new(&data, out, inp).map_err(candle_core::Error::wrap)?
        else {
            return Ok(Frozen { w, packed: None });
        };
        let Some(bwd) =
            PackedMatrix::transposed(&data, out, inp).map_err(candle_core::Error::wrap)?
        else {
            return Ok(Frozen { w, packed: None });
        };
        Ok(Frozen {
            w,
            packed: Some(Arc::new([fwd, bwd])),
        })
    }
}

impl Frozen {
    /// `y (m × out) = x (m × in) · Wᵀ` on the CPU: the packed tiles, else the `gemm` crate
    /// over `W`'s values, on the current rayon pool.
    pub fn forward_cpu(&self, x: &[f32], m: usize) -> candle_core::Result<Vec<f32>> {
        self.new_product(x, m, false)
    }

    /// `dx (m × in) = g (m × out) · W` on the CPU, as [`Frozen::forward_cpu`].
    pub fn backward_cpu(&self, g: &[f32], m: usize) -> candle_core::Result<Vec<f32>> {
        self.new_product(g, m, true)
    }

    /// `x · Wᵀ` (`back`: `x · W`) for `m` rows as a new vector: on the packed tiles written
    /// once, else zeroed and computed by [`Frozen::product`].
    fn new_product(&self, x: &[f32], m: usize, back: bool) -> candle_core::Result<Vec<f32>> {
        if let Some(p) = &self.packed {
            return p[usize::from(back)]
                .matmul_t_new(x, m)
                .map_err(candle_core::Error::wrap);
        }
        let (out, inp) = self.w.dims2()?;
        let mut y = crate::fused::zeroed(m * if back { inp } else { out });
        self.product(x, m, (out, inp), back, false, &mut y)?;
        Ok(y)
    }

    /// `dx (m × in) += g (m × out) · W` on the CPU (the gradient of an input several frozen
    /// layers read), as [`Frozen::forward_cpu`].
    pub fn backward_cpu_add(&self, g: &[f32], m: usize, dx: &mut [f32]) -> candle_core::Result<()> {
        let dims = self.w.dims2()?;
        self.product(g, m, dims, true, true, dx)
    }

    /// `y (+)= x · Wᵀ` (`back`: `x · W`) for `m` rows, `W` being `(out, inp)`.
    fn product(
        &self,
        x: &[f32],
        m: usize,
        (out, inp): (usize, usize),
        back: bool,
        acc: bool,
        y: &mut [f32],
    ) -> candle_core::Result<()> {
        let (k, n) = if back { (out, inp) } else { (inp, out) };
        if x.len() != m * k || y.len() != m * n {
            candle_core::bail!(
                "frozen product: {} values for {m} rows of {k}, {} for rows of {n}",
                x.len(),
                y.len()
            );
        }
        if let Some(p) = &self.packed {
            let p = &p[usize::from(back)];
            let r = if acc {
                p.matmul_t_add(x, m, y)
            } else {
                p.matmul_t(x, m, y)
            };
            return r.map_err(candle_core::Error::wrap);
        }
        let (storage, layout) = self.w.storage_and_layout();
        let (candle_core::Storage::Cpu(CpuStorage::F32(w)), Some((a, b))) =
            (&*storage, layout.contiguous_offsets())
        else {
            candle_core::bail!("frozen product: a contiguous f32 CPU weight only");
        };
        let w = &w[a..b];
        // W is out × in, row-major: as the right operand, Wᵀ (in × out) has row stride 1 and
        // column stride in; W itself row stride in and column stride 1.
        let (rs, cs) = if back { (inp, 1) } else { (1, inp) };
        // SAFETY: x holds m × k values, w out × in, y m × n (checked above).
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                y.as_mut_ptr(),
                1,
                n as isize,
                acc,
                x.as_ptr(),
                1,
                k as isize,
                w.as_ptr(),
                cs as isize,
                rs as isize,
                if acc { 1.0 } else { 0.0 },
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::Rayon(rayon::current_num_threads()),
            )
        };
        Ok(())
    }
}

/// `x · Wᵀ` for a frozen `W` and `x` of shape `[..., in]`. candle's matmul backward computes
/// the gradient of both operands; for a frozen weight the second one (`out × in` per call, the
/// largest cost of a backward pass over a big vocabulary) is wasted. Here the backward pass is
/// `∂L/∂x = ∂L/∂y · W` only. On a CPU with the packed product both directions run on the
/// packed AVX-512/AVX2 tiles ([`Frozen`]); elsewhere (other CPUs, CUDA) the product is
/// candle's, computed detached and re-attached to `x` by [`AttachGrad`]; on other devices
/// candle's plain product.
pub(crate) fn frozen_linear(x: &Tensor, w: &Frozen) -> candle_core::Result<Tensor> {
    let (out, inp) = w.w.dims2()?;
    let dims = x.dims().to_vec();
    let Some((&last, lead)) = dims.split_last() else {
        candle_core::bail!("linear layer input is a scalar");
    };
    if last != inp {
        candle_core::bail!("linear layer takes {inp} inputs, got shape {dims:?}");
    }
    let n: usize = lead.iter().product();
    let mut out_dims = lead.to_vec();
    out_dims.push(out);
    let x2 = x.reshape((n, inp))?;
    if let Some(packed) = &w.packed
        && x.device().is_cpu()
        && x.dtype() == DType::F32
    {
        return x2
            .contiguous()?
            .apply_op1(PackedLinear {
                packed: packed.clone(),
            })?
            .reshape(out_dims);
    }
    let tracked = x.track_op();
    if !tracked || !(x.device().is_cpu() || x.device().is_cuda()) {
        return x2.matmul(&w.w.t()?)?.reshape(out_dims);
    }
    let y = x2.detach().matmul(&w.w.t()?)?;
    x2.apply_op2(
        &y,
        AttachGrad {
            grad: Grad::FrozenLinear(w.w.clone()),
        },
    )?
    .reshape(out_dims)
}

/// `y = x · Wᵀ` on the packed tiles; backward `∂L/∂x = ∂L/∂y · W` on the packed `Wᵀ`
/// ([`PackedProduct`]).
struct PackedLinear {
    packed: Arc<[PackedMatrix; 2]>,
}

impl CustomOp1 for PackedLinear {
    fn name(&self) -> &'static str {
        "frozen-linear-packed"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        packed_product(&self.packed[0], s, l)
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        _res: &Tensor,
        grad_res: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let g = grad_res.contiguous()?.apply_op1_no_bwd(&PackedProduct {
            packed: self.packed.clone(),
        })?;
        Ok(Some(g))
    }
}

/// `g · W` (`[n, out]` → `[n, in]`) on the packed `Wᵀ`, without a backward pass of its own.
struct PackedProduct {
    packed: Arc<[PackedMatrix; 2]>,
}

impl CustomOp1 for PackedProduct {
    fn name(&self) -> &'static str {
        "frozen-linear-packed-backward"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        packed_product(&self.packed[1], s, l)
    }
}

/// `x · Pᵀ` for the packed `p` (`n × k`) and a contiguous f32 `x` of `[m, k]`.
fn packed_product(
    p: &PackedMatrix,
    s: &CpuStorage,
    l: &Layout,
) -> candle_core::Result<(CpuStorage, Shape)> {
    let (m, k) = l.shape().dims2()?;
    if k != p.cols() {
        candle_core::bail!(
            "packed product: {k} inputs for a {}x{} matrix",
            p.rows(),
            p.cols()
        );
    }
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("packed product: the input must be contiguous");
    };
    let CpuStorage::F32(v) = s else {
        candle_core::bail!("packed product: f32 only");
    };
    let mut y = vec![0f32; m * p.rows()];
    p.matmul_t(&v[a..b], m, &mut y)
        .map_err(candle_core::Error::wrap)?;
    Ok((CpuStorage::F32(y), Shape::from((m, p.rows()))))
}

/// Returns its second argument (a value computed detached from the first) unchanged; its
/// backward pass gives the first argument the gradient `grad` says and the second none.
struct AttachGrad {
    grad: Grad,
}

/// The gradients [`AttachGrad`] attaches.
enum Grad {
    /// Of `y = x · Wᵀ` (`x` `[n, in]`, `W` frozen): `g · W`.
    FrozenLinear(Tensor),
    /// Of `y = softmax(z)` over the last dimension: `y ⊙ (g − Σ g ⊙ y)`.
    Softmax,
}

impl CustomOp2 for AttachGrad {
    fn name(&self) -> &'static str {
        match self.grad {
            Grad::FrozenLinear(_) => "frozen-linear",
            Grad::Softmax => "softmax-grad",
        }
    }

    fn cpu_fwd(
        &self,
        _s1: &CpuStorage,
        _l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        pass_on_cpu(s2, l2)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        _s1: &candle_core::CudaStorage,
        _l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> candle_core::Result<(candle_core::CudaStorage, Shape)> {
        pass_on_cuda(s2, l2)
    }

    fn bwd(
        &self,
        _arg1: &Tensor,
        _arg2: &Tensor,
        y: &Tensor,
        g: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let dx = match &self.grad {
            Grad::FrozenLinear(w) => g.contiguous()?.matmul(w)?,
            Grad::Softmax => {
                let dot = (g * y)?.sum_keepdim(D::Minus1)?;
                (g.broadcast_sub(&dot)? * y)?
            }
        };
        Ok((Some(dx), None))
    }
}

/// RMSNorm over the last dimension, `x / sqrt(mean(x²) + eps) · w`, as the native engine; `w`
/// is frozen. On the CPU one fused op ([`crate::fused::RmsNorm`]), elsewhere candle's ops.
pub(crate) fn rms_norm(x: &Tensor, w: &Tensor, eps: f32) -> candle_core::Result<Tensor> {
    if x.device().is_cpu() && x.dtype() == DType::F32 {
        let op = crate::fused::RmsNorm {
            w: Arc::new(w.to_vec1()?),
            eps,
        };
        return x.contiguous()?.apply_op1(op);
    }
    let d = x.dim(D::Minus1)?;
    let ms = (x.sqr()?.sum_keepdim(D::Minus1)? / d as f64)?;
    let denom = (ms + eps as f64)?.sqrt()?;
    x.broadcast_div(&denom)?.broadcast_mul(w)
}

/// Causal grouped-query attention of one layer as candle's chain (RoPE, `Q·Kᵀ`, the causal
/// softmax, `P·V`): `q` (`[b·t, n_head·head_dim]`), `k` and `v` (`[b·t, n_kv_head·head_dim]`),
/// token-major as the projections produce them, to the `[b·t, n_head·head_dim]` input of the
/// output projection. RoPE (the `[≥ t, half, 1]` tables of [`rope_tables`]) rotates queries
/// and keys when `dims.rope_dim > 0`; query head `h = kv·group + j` reads key/value head `kv`.
/// The GPU path; on the CPU [`crate::attention`] computes the same inside the fused block.
pub(crate) fn attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    (b, t): (usize, usize),
    c: &LlamaDims,
    (cos, sin): (&Tensor, &Tensor),
) -> candle_core::Result<Tensor> {
    let scale = 1.0 / (c.head_dim as f64).sqrt();
    let (n, qd) = (b * t, c.n_head * c.head_dim);
    let group = c.n_head / c.n_kv_head;
    let heads = |y: &Tensor, nh: usize| {
        y.reshape((b, t, nh, c.head_dim))?
            .transpose(1, 2)?
            .contiguous()
    };
    let (mut q, mut k) = (heads(q, c.n_head)?, heads(k, c.n_kv_head)?);
    let v = heads(v, c.n_kv_head)?;
    if c.rope_dim > 0 {
        q = rope(&q, cos, sin)?;
        k = rope(&k, cos, sin)?;
    }
    // Query heads h = kv·group + j share KV head kv: [b, kv, group·t, head_dim].
    let q = q.reshape((b, c.n_kv_head, group * t, c.head_dim))?;
    let p = causal_softmax(&q.matmul(&k.t()?)?, scale)?;
    p.matmul(&v)?
        .reshape((b, c.n_head, t, c.head_dim))?
        .transpose(1, 2)?
        .reshape((n, qd))
}

/// `softmax(scale · scores + mask)` over the last dimension of the raw attention scores
/// (`[..., group·t, t]`), the mask hiding the keys after each query ([`causal_mask`]).
pub(crate) fn causal_softmax(scores: &Tensor, scale: f64) -> candle_core::Result<Tensor> {
    let t = scores.dim(D::Minus1)?;
    let rows = scores.dim(D::Minus2)?;
    if t == 0 || !rows.is_multiple_of(t) {
        candle_core::bail!(
            "attention scores {:?}: rows must be group x t",
            scores.dims()
        );
    }
    let mask = causal_mask(t, rows / t, scores.device())?;
    let z = (scores * scale)?.broadcast_add(&mask)?;
    if z.device().is_cuda() {
        return softmax_with_grad(&z);
    }
    candle_nn::ops::softmax(&z, D::Minus1)
}

/// `softmax(z)` over the last dimension in candle's fused kernel (which has no backward pass),
/// given the softmax's gradient `y ⊙ (g − Σ g ⊙ y)` by [`AttachGrad`]: one kernel forward and
/// four element-wise passes backward, against the five forward and about a dozen backward
/// passes of the chain `candle_nn::ops::softmax` builds.
pub(crate) fn softmax_with_grad(z: &Tensor) -> candle_core::Result<Tensor> {
    let z = z.contiguous()?;
    let y = candle_nn::ops::softmax_last_dim(&z.detach())?;
    z.apply_op2(
        &y,
        AttachGrad {
            grad: Grad::Softmax,
        },
    )
}

/// [`AttachGrad`]'s forward pass: a copy of its second argument's values.
fn pass_on_cpu(s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
    let Some((a, b)) = l2.contiguous_offsets() else {
        candle_core::bail!("the passed-on tensor must be contiguous");
    };
    match s2 {
        CpuStorage::F32(v) => Ok((CpuStorage::F32(v[a..b].to_vec()), l2.shape().clone())),
        _ => candle_core::bail!("f32 only"),
    }
}

/// [`pass_on_cpu`] on a GPU: `try_clone` copies the whole buffer, so the tensor must be all of it.
#[cfg(feature = "cuda")]
fn pass_on_cuda(
    s2: &candle_core::CudaStorage,
    l2: &Layout,
) -> candle_core::Result<(candle_core::CudaStorage, Shape)> {
    use candle_core::backend::BackendStorage;
    if !l2.is_contiguous() || l2.start_offset() != 0 {
        candle_core::bail!("the passed-on tensor must be a contiguous buffer");
    }
    Ok((s2.try_clone(l2)?, l2.shape().clone()))
}

/// `silu(g) · u` (candle's ops; on the CPU the fused block computes it).
pub(crate) fn swiglu(g: &Tensor, u: &Tensor) -> candle_core::Result<Tensor> {
    g.silu()? * u
}

/// cos and sin tables `[t, rope_dim/2]` for positions `0..t`, computed as the native engine
/// (and candle) computes them: `θ_i = 1 / base^(2i/d)`, `angle = pos · θ_i`, all in f32.
pub(crate) fn rope_tables(
    t: usize,
    rope_dim: usize,
    base: f32,
    dev: &Device,
) -> candle_core::Result<(Tensor, Tensor)> {
    let half = rope_dim / 2;
    let d = rope_dim as f32;
    let theta: Vec<f32> = (0..half)
        .map(|i| 1f32 / base.powf((2 * i) as f32 / d))
        .collect();
    let mut cos = Vec::with_capacity(t * half);
    let mut sin = Vec::with_capacity(t * half);
    for pos in 0..t {
        for &th in &theta {
            let a = pos as f32 * th;
            cos.push(a.cos());
            sin.push(a.sin());
        }
    }
    Ok((
        Tensor::from_vec(cos, (t, half, 1), dev)?,
        Tensor::from_vec(sin, (t, half, 1), dev)?,
    ))
}

/// Interleaved ("normal", llama.cpp's `LLM_ARCH_LLAMA`) RoPE on the first `rope_dim` values of
/// each head: pairs `(x₂ᵢ, x₂ᵢ₊₁)` rotated by `angle(pos, i)`. `x` is `[b, heads, t, head_dim]`,
/// `cos`/`sin` come from [`rope_tables`] (at least `t` positions). Candle's ops (on the CPU
/// the fused block computes it).
pub(crate) fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
    let (b, h, t, hd) = x.dims4()?;
    let half = cos.dim(1)?;
    let rd = half * 2;
    let cos = cos.narrow(0, 0, t)?;
    let sin = sin.narrow(0, 0, t)?;
    let xr = if rd == hd {
        x.clone()
    } else {
        x.narrow(3, 0, rd)?
    };
    let xr = xr.reshape((b, h, t, half, 2))?;
    let x0 = xr.narrow(4, 0, 1)?;
    let x1 = xr.narrow(4, 1, 1)?;
    let y0 = (x0.broadcast_mul(&cos)? - x1.broadcast_mul(&sin)?)?;
    let y1 = (x0.broadcast_mul(&sin)? + x1.broadcast_mul(&cos)?)?;
    let y = Tensor::cat(&[y0, y1], 4)?.reshape((b, h, t, rd))?;
    if rd == hd {
        Ok(y)
    } else {
        Tensor::cat(&[y, x.narrow(3, rd, hd - rd)?], 3)
    }
}

/// The additive causal mask for `group` query heads sharing a key head, stacked as
/// `[group·t, t]`: row `g·t + i` lets query `i` see keys `0..=i`.
pub(crate) fn causal_mask(t: usize, group: usize, dev: &Device) -> candle_core::Result<Tensor> {
    let mut m = Vec::with_capacity(group * t * t);
    for _ in 0..group {
        for i in 0..t {
            m.extend((0..t).map(|j| if j <= i { 0f32 } else { f32::NEG_INFINITY }));
        }
    }
    Tensor::from_vec(m, (group * t, t), dev)
}

/// Inverted dropout with a seeded mask: each value is kept with probability `1 − p` and scaled
/// by `1 / (1 − p)`. The mask depends only on `seed` and the shape, so a resumed run draws the
/// masks an uninterrupted one drew. On the CPU the mask comes from ChaCha8 on the host; on a
/// GPU from the device's generator (cuRAND) seeded with `seed` for this call, drawn where it is
/// used: drawing hundreds of millions of values per step on the host took 90% of a GPU step.
/// The GPU's masks are as reproducible, but not the CPU's.
pub(crate) fn dropout(x: &Tensor, p: f32, seed: u64) -> candle_core::Result<Tensor> {
    if p <= 0.0 {
        return Ok(x.clone());
    }
    let scale = 1.0 / (1.0 - p);
    if x.device().is_cuda() {
        x.device().set_seed(seed)?;
        let keep = Tensor::rand(0f32, 1f32, x.shape(), x.device())?.ge(p as f64)?;
        return x.mul(&(keep.to_dtype(x.dtype())? * scale as f64)?);
    }
    let mask = Tensor::from_vec(
        dropout_mask(x.elem_count(), p, seed),
        x.shape().clone(),
        x.device(),
    )?;
    x.mul(&mask)
}

/// The CPU dropout mask of [`dropout`]: `n` values, `1/(1 − p)` where a ChaCha8 stream seeded
/// with `seed` draws a uniform value `≥ p`, else 0, in order. Each uniform value takes one
/// 32-bit word of the stream, so blocks of the mask are drawn in parallel, each from its own
/// position in the one stream: the same values as one pass.
pub(crate) fn dropout_mask(n: usize, p: f32, seed: u64) -> Vec<f32> {
    const BLOCK: usize = 1 << 16;
    let scale = 1.0 / (1.0 - p);
    let mut mask = vec![0f32; n];
    mask.par_chunks_mut(BLOCK).enumerate().for_each(|(i, m)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_word_pos((i * BLOCK) as u128);
        for v in m {
            *v = if rng.random::<f32>() >= p { scale } else { 0.0 };
        }
    });
    mask
}

/// A 64-bit mix (SplitMix64's finaliser) to derive independent seeds from counters.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests;
