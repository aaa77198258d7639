//! The native CPU forward pass of BERT ([`super::EncoderBackend::Native`], the CPU default).
//!
//! Same maths as `transformers`' `BertModel` in eval mode (and candle's port of it), organised
//! for speed on a CPU:
//!
//! * **Padding-free**: the tokens of every text of a batch are concatenated into one
//!   `[total_tokens, hidden]` matrix for every linear layer, LayerNorm and GELU; only attention
//!   works per text, at the text's own length. This gives the same result as padding and
//!   masking (the mask makes padded positions irrelevant to the real ones) without computing
//!   the padded positions at all.
//! * **Weights** are copied once, at load, into f32 buffers laid out for the matrix multiply
//!   (Q, K and V fused into one matrix).
//! * **Matrix multiplies**: an AVX-512 kernel with the bias (and the GELU) fused in where the
//!   CPU has AVX-512F (run-time detection), the `gemm` crate elsewhere and for attention.
//!   With [`super::Precision::Int8`] the linear layers run on int8 weights and activations
//!   instead ([`super::quant`]).
//! * **Element-wise** GELU (vectorised `erf`), softmax (vectorised `exp`) and residual +
//!   LayerNorm in one pass (see [`super::kernels`]).
//! * **No allocation per op**: the activations live in scratch buffers reused across layers
//!   and batches.
//! * **Threads**: a private rayon pool of `RAYON_NUM_THREADS` threads (default: every core),
//!   over rows for linear layers and over (text, head) pairs for attention.

use std::sync::{Arc, Mutex, OnceLock};

use candle_core::{DType, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{Config, HiddenAct};
use gemm::Parallelism;
use pgraphrag_core::simd::SendPtr;
use rayon::prelude::*;

use super::encoder::Pooling;
use super::kernels::{Act, Kernels};
use super::matmul::NR;
use super::qmatmul::QKernels;
use super::quant::{QBuf, QuantLin};
use crate::{Error, Result};

/// A linear layer: `y = x·Wᵀ + b`.
struct Lin {
    /// `out × in` as stored by PyTorch (gemm path), or packed panels (AVX-512/AVX2 path);
    /// empty when quantized.
    w: Vec<f32>,
    packed: bool,
    b: Vec<f32>,
    inp: usize,
    out: usize,
    /// The int8 weights ([`super::Precision::Int8`]).
    q: Option<QuantLin>,
}

impl Lin {
    /// From PyTorch's `out × in` weight; quantized with int8 kernels (`qk`), else packed when
    /// the kernels have a packed matrix multiply.
    fn new(
        k: &Kernels,
        qk: Option<&QKernels>,
        w: Vec<f32>,
        b: Vec<f32>,
        out: usize,
        inp: usize,
    ) -> Lin {
        if qk.is_some() {
            return Lin {
                q: Some(QuantLin::new(&w, b, out, inp)),
                w: Vec::new(),
                packed: false,
                b: Vec::new(),
                inp,
                out,
            };
        }
        let packed = k.matmul.is_some() && out.is_multiple_of(NR);
        let w = if packed {
            super::matmul::pack_panels(&w, out, inp)
        } else {
            w
        };
        Lin {
            w,
            packed,
            b,
            inp,
            out,
            q: None,
        }
    }
}

struct Ln {
    g: Vec<f32>,
    b: Vec<f32>,
}

struct Layer {
    qkv: Lin,
    attn_out: Lin,
    ln1: Ln,
    inter: Lin,
    down: Lin,
    ln2: Ln,
}

/// Activations reused across layers and batches.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    qkv: Vec<f32>,
    ctx: Vec<f32>,
    tmp: Vec<f32>,
    inter: Vec<f32>,
    /// The quantized input of an int8 linear layer.
    q: QBuf,
}

/// BERT weights in f32 and the forward pass over them.
pub(crate) struct NativeBert {
    hidden: usize,
    heads: usize,
    head_dim: usize,
    eps: f32,
    act: Act,
    vocab: usize,
    max_pos: usize,
    type_vocab: usize,
    word: Vec<f32>,
    pos: Vec<f32>,
    typ: Vec<f32>,
    emb_ln: Ln,
    layers: Vec<Layer>,
    /// `pooler.dense` (`tanh(W·h_CLS + b)`), when the checkpoint has it.
    pooler: Option<Lin>,
    k: Kernels,
    /// The int8 kernels, when the linear layers are quantized.
    qk: Option<QKernels>,
    pool: Arc<rayon::ThreadPool>,
    scratch: Mutex<Scratch>,
}

/// The private worker pool, shared by every native encoder of the process (so that loading
/// several models does not multiply threads). Its size is `RAYON_NUM_THREADS` when set, else
/// the number of cores.
fn shared_pool() -> Result<Arc<rayon::ThreadPool>> {
    static POOL: OnceLock<Arc<rayon::ThreadPool>> = OnceLock::new();
    if let Some(p) = POOL.get() {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("pgraphrag-bert-{i}"))
        .build()
        .map_err(|e| Error::Compute(format!("cannot start the encoder's worker threads: {e}")))?;
    Ok(POOL.get_or_init(|| Arc::new(p)).clone())
}

fn to_vec(t: Tensor) -> candle_core::Result<Vec<f32>> {
    t.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()
}

impl NativeBert {
    /// Copies the weights out of `vb` (rooted where `embeddings.*` and `encoder.*` live).
    /// Errors are candle's (a missing tensor or a shape that does not match `config`); the
    /// caller adds the file name. `k`: the kernels (those of [`Kernels::for_cpu`]; tests also run the portable and AVX2
    /// ones on an AVX-512 machine); `qk`: int8 kernels to quantize the linear layers with
    /// (`None`: f32).
    pub(crate) fn load_with_kernels(
        vb: &VarBuilder,
        config: &Config,
        k: Kernels,
        qk: Option<QKernels>,
    ) -> std::result::Result<Self, String> {
        let pool = shared_pool().map_err(|e| e.to_string())?;
        let h = config.hidden_size;
        let inter = config.intermediate_size;
        let e = |e: candle_core::Error| e.to_string();
        let get = |shape: &[usize], name: &str| -> std::result::Result<Vec<f32>, String> {
            vb.get(shape, name).and_then(to_vec).map_err(e)
        };
        let get_ln = |p: &str| -> std::result::Result<Ln, String> {
            // LayerNorm weights are `weight`/`bias`, or `gamma`/`beta` in old TF ports.
            let (g, b) = if vb.contains_tensor(&format!("{p}.weight")) {
                ("weight", "bias")
            } else if vb.contains_tensor(&format!("{p}.gamma")) {
                ("gamma", "beta")
            } else {
                ("weight", "bias")
            };
            Ok(Ln {
                g: get(&[h], &format!("{p}.{g}"))?,
                b: get(&[h], &format!("{p}.{b}"))?,
            })
        };
        let lin = |ws, b, out, inp| Lin::new(&k, qk.as_ref(), ws, b, out, inp);
        let get_lin = |p: &str, out: usize, inp: usize| -> std::result::Result<Lin, String> {
            Ok(lin(
                get(&[out, inp], &format!("{p}.weight"))?,
                get(&[out], &format!("{p}.bias"))?,
                out,
                inp,
            ))
        };
        let word = get(&[config.vocab_size, h], "embeddings.word_embeddings.weight")?;
        let pos = get(
            &[config.max_position_embeddings, h],
            "embeddings.position_embeddings.weight",
        )?;
        let typ = get(
            &[config.type_vocab_size, h],
            "embeddings.token_type_embeddings.weight",
        )?;
        let emb_ln = get_ln("embeddings.LayerNorm")?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let mut qkv_w = Vec::with_capacity(3 * h * h);
            let mut qkv_b = Vec::with_capacity(3 * h);
            for part in ["query", "key", "value"] {
                qkv_w.extend(get(&[h, h], &format!("{p}.attention.self.{part}.weight"))?);
                qkv_b.extend(get(&[h], &format!("{p}.attention.self.{part}.bias"))?);
            }
            layers.push(Layer {
                qkv: lin(qkv_w, qkv_b, 3 * h, h),
                attn_out: get_lin(&format!("{p}.attention.output.dense"), h, h)?,
                ln1: get_ln(&format!("{p}.attention.output.LayerNorm"))?,
                inter: get_lin(&format!("{p}.intermediate.dense"), inter, h)?,
                down: get_lin(&format!("{p}.output.dense"), h, inter)?,
                ln2: get_ln(&format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(NativeBert {
            hidden: h,
            heads: config.num_attention_heads,
            head_dim: h / config.num_attention_heads,
            eps: config.layer_norm_eps as f32,
            act: match config.hidden_act {
                HiddenAct::Gelu => Act::GeluErf,
                HiddenAct::GeluApproximate => Act::GeluTanh,
                HiddenAct::Relu => Act::Relu,
            },
            vocab: config.vocab_size,
            max_pos: config.max_position_embeddings,
            type_vocab: config.type_vocab_size,
            word,
            pos,
            typ,
            emb_ln,
            layers,
            pooler: None,
            k,
            qk,
            pool,
            scratch: Mutex::new(Scratch::default()),
        })
    }

    /// Adds `{prefix}pooler.dense.*` (read from `vb`, the checkpoint's root).
    pub(crate) fn with_pooler(
        mut self,
        vb: &VarBuilder,
        prefix: &str,
        h: usize,
    ) -> std::result::Result<Self, String> {
        let get = |shape: &[usize], name: &str| -> std::result::Result<Vec<f32>, String> {
            vb.get(shape, name)
                .and_then(to_vec)
                .map_err(|e| e.to_string())
        };
        let w = get(&[h, h], &format!("{prefix}pooler.dense.weight"))?;
        let b = get(&[h], &format!("{prefix}pooler.dense.bias"))?;
        self.pooler = Some(Lin::new(&self.k, self.qk.as_ref(), w, b, h, h));
        Ok(self)
    }

    /// The instruction set of the kernels in use (`avx512`, `avx2` or `portable`), followed by
    /// the int8 tiles' (`int8 avx512-vnni`, `int8 avx2`, `int8 portable`) when quantized.
    pub(crate) fn kernels_name(&self) -> String {
        match &self.qk {
            Some(q) => format!("{}, int8 {}", self.k.name, q.name),
            None => self.k.name.to_string(),
        }
    }

    /// Encodes the texts given as `(token ids, token type ids)` with `pooling`; writes one
    /// `hidden`-long row per text into `out`.
    pub(crate) fn forward(
        &self,
        seqs: &[(&[u32], &[u32])],
        pooling: Pooling,
        out: &mut [f32],
    ) -> Result<()> {
        let h = self.hidden;
        debug_assert_eq!(out.len(), seqs.len() * h);
        let mut starts = Vec::with_capacity(seqs.len() + 1);
        let mut total = 0usize;
        for (ids, types) in seqs {
            if ids.len() != types.len() {
                return Err(Error::Compute(
                    "token ids and type ids differ in length".into(),
                ));
            }
            if ids.len() > self.max_pos {
                return Err(Error::InvalidInput(format!(
                    "a text of {} tokens exceeds the model's {} positions",
                    ids.len(),
                    self.max_pos
                )));
            }
            if let Some(bad) = ids.iter().find(|i| **i as usize >= self.vocab) {
                return Err(Error::InvalidInput(format!(
                    "token id {bad} is outside the model's vocabulary of {}",
                    self.vocab
                )));
            }
            if let Some(bad) = types.iter().find(|i| **i as usize >= self.type_vocab) {
                return Err(Error::InvalidInput(format!(
                    "token type {bad} is outside the model's {} types",
                    self.type_vocab
                )));
            }
            starts.push(total);
            total += ids.len();
        }
        starts.push(total);
        if total == 0 {
            out.fill(0.0);
            return Ok(());
        }
        // A concurrent call gets its own buffers instead of waiting.
        let mut local = Scratch::default();
        let mut guard = self.scratch.try_lock().ok();
        let s: &mut Scratch = match guard.as_deref_mut() {
            Some(s) => s,
            None => &mut local,
        };
        let inter = self.layers.first().map(|l| l.inter.out).unwrap_or(0);
        for (buf, n) in [
            (&mut s.x, total * h),
            (&mut s.qkv, total * 3 * h),
            (&mut s.ctx, total * h),
            (&mut s.tmp, total * h),
            (&mut s.inter, total * inter),
        ] {
            if buf.len() < n {
                buf.resize(n, 0.0);
            }
        }
        self.pool
            .install(|| self.run(seqs, &starts, total, s, pooling, out));
        Ok(())
    }

    fn run(
        &self,
        seqs: &[(&[u32], &[u32])],
        starts: &[usize],
        total: usize,
        s: &mut Scratch,
        pooling: Pooling,
        out: &mut [f32],
    ) {
        let h = self.hidden;
        let x = &mut s.x[..total * h];
        // Embeddings: word + token type + position, then LayerNorm.
        x.par_chunks_mut(h * 64).enumerate().for_each(|(c, rows)| {
            for (r, row) in rows.chunks_exact_mut(h).enumerate() {
                let t = c * 64 + r;
                let si = starts.partition_point(|&st| st <= t) - 1;
                let p = t - starts[si];
                let (ids, types) = seqs[si];
                let (w, ty) = (ids[p] as usize, types[p] as usize);
                let (we, te, pe) = (
                    &self.word[w * h..(w + 1) * h],
                    &self.typ[ty * h..(ty + 1) * h],
                    &self.pos[p * h..(p + 1) * h],
                );
                for i in 0..h {
                    row[i] = we[i] + te[i] + pe[i];
                }
            }
            (self.k.add_ln)(rows, &[], &self.emb_ln.g, &self.emb_ln.b, self.eps);
        });
        for layer in &self.layers {
            let qkv = &mut s.qkv[..total * 3 * h];
            self.linear(x, total, &layer.qkv, qkv, None, &mut s.q);
            let ctx = &mut s.ctx[..total * h];
            self.attention(qkv, starts, ctx);
            let tmp = &mut s.tmp[..total * h];
            self.linear(ctx, total, &layer.attn_out, tmp, None, &mut s.q);
            self.add_ln(x, tmp, &layer.ln1);
            let inter = &mut s.inter[..total * layer.inter.out];
            self.linear(x, total, &layer.inter, inter, Some(self.act), &mut s.q);
            self.linear(inter, total, &layer.down, tmp, None, &mut s.q);
            self.add_ln(x, tmp, &layer.ln2);
        }
        // Pooling.
        let n = seqs.len();
        match pooling {
            Pooling::Mean => {
                out.par_chunks_mut(h).enumerate().for_each(|(i, o)| {
                    let (a, b) = (starts[i], starts[i + 1]);
                    o.fill(0.0);
                    for row in x[a * h..b * h].chunks_exact(h) {
                        for (v, r) in o.iter_mut().zip(row) {
                            *v += *r;
                        }
                    }
                    // sentence-transformers clamps the token count at 1e-9.
                    let cnt = ((b - a) as f32).max(1e-9);
                    for v in o.iter_mut() {
                        *v /= cnt;
                    }
                });
            }
            Pooling::Cls | Pooling::Pooler => {
                for i in 0..n {
                    let a = starts[i];
                    if starts[i + 1] > a {
                        out[i * h..(i + 1) * h].copy_from_slice(&x[a * h..(a + 1) * h]);
                    } else {
                        out[i * h..(i + 1) * h].fill(0.0);
                    }
                }
                if pooling == Pooling::Pooler
                    && let Some(p) = &self.pooler
                {
                    let cls = out.to_vec();
                    self.linear(&cls, n, p, out, None, &mut s.q);
                    for v in out.iter_mut() {
                        *v = v.tanh();
                    }
                }
            }
        }
    }

    /// `x ← LayerNorm(x + y)`, in parallel over rows.
    fn add_ln(&self, x: &mut [f32], y: &[f32], ln: &Ln) {
        let h = self.hidden;
        x.par_chunks_mut(h * 32)
            .zip(y.par_chunks(h * 32))
            .for_each(|(xs, ys)| (self.k.add_ln)(xs, ys, &ln.g, &ln.b, self.eps));
    }

    /// `y (m × out) = act(x (m × in) · Wᵀ + b)`; `q` holds the quantized `x` of an int8 layer.
    fn linear(
        &self,
        x: &[f32],
        m: usize,
        lin: &Lin,
        y: &mut [f32],
        act: Option<Act>,
        q: &mut QBuf,
    ) {
        let (k, n) = (lin.inp, lin.out);
        let y = &mut y[..m * n];
        if let (Some(ql), Some(qk)) = (&lin.q, &self.qk) {
            let after = |seg: &mut [f32]| {
                if let Some(a) = act {
                    self.k.act(a, seg);
                }
            };
            super::quant::qlinear(qk, ql, x, m, q, y, Some(&after));
            return;
        }
        if let (true, Some(matmul)) = (lin.packed, self.k.matmul) {
            let after = |seg: &mut [f32]| {
                if let Some(a) = act {
                    self.k.act(a, seg);
                }
            };
            // SAFETY: `matmul` comes from kernels picked for this CPU's features; x holds
            // m×k, the panels k×n (n a multiple of NR), the bias n and y m×n floats.
            unsafe {
                super::packed::par_matmul(
                    matmul,
                    x,
                    m,
                    k,
                    n,
                    &lin.w,
                    &lin.b,
                    false,
                    y.as_mut_ptr(),
                    Some(&after),
                );
            }
            return;
        }
        for row in y.chunks_exact_mut(n) {
            row.copy_from_slice(&lin.b);
        }
        // SAFETY: x is m×k and y m×n row-major; W (n×k) is read as its transpose.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                y.as_mut_ptr(),
                1,
                n as isize,
                true,
                x.as_ptr(),
                1,
                k as isize,
                lin.w.as_ptr(),
                k as isize,
                1,
                1.0,
                1.0,
                false,
                false,
                false,
                if m * n * k >= 64 * 64 * 64 {
                    Parallelism::Rayon(0)
                } else {
                    Parallelism::None
                },
            );
        }
        if let Some(a) = act {
            y.par_chunks_mut(n * 16).for_each(|c| self.k.act(a, c));
        }
    }

    /// Multi-head self-attention of every text (its own length, no padding), in parallel
    /// over (text, head): `ctx = softmax(Q·Kᵀ/√d)·V`.
    fn attention(&self, qkv: &[f32], starts: &[usize], ctx: &mut [f32]) {
        let (h, heads, d) = (self.hidden, self.heads, self.head_dim);
        let n = starts.len() - 1;
        let scale = 1.0 / (d as f32).sqrt();
        let cp = SendPtr::new(ctx.as_mut_ptr());
        thread_local! {
            static SCORES: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        (0..n * heads).into_par_iter().for_each(|task| {
            let (si, hd) = (task / heads, task % heads);
            let (a, b) = (starts[si], starts[si + 1]);
            let len = b - a;
            if len == 0 {
                return;
            }
            SCORES.with(|sc| {
                let mut sc = sc.borrow_mut();
                if sc.len() < len * len {
                    sc.resize(len * len, 0.0);
                }
                let s = &mut sc[..len * len];
                let q = qkv[a * 3 * h + hd * d..].as_ptr();
                let kk = qkv[a * 3 * h + h + hd * d..].as_ptr();
                let v = qkv[a * 3 * h + 2 * h + hd * d..].as_ptr();
                // SAFETY: q, k, v address len rows of d floats at stride 3h inside qkv; s is
                // len×len; the ctx block (rows a..b, columns hd·d..hd·d+d) is written by
                // this task only.
                unsafe {
                    gemm::gemm(
                        len,
                        len,
                        d,
                        s.as_mut_ptr(),
                        1,
                        len as isize,
                        false,
                        q,
                        1,
                        3 * h as isize,
                        kk,
                        3 * h as isize,
                        1,
                        0.0,
                        scale,
                        false,
                        false,
                        false,
                        Parallelism::None,
                    );
                }
                (self.k.softmax)(s, len);
                unsafe {
                    gemm::gemm(
                        len,
                        d,
                        len,
                        cp.get().add(a * h + hd * d),
                        1,
                        h as isize,
                        false,
                        s.as_ptr(),
                        1,
                        len as isize,
                        v,
                        1,
                        3 * h as isize,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        Parallelism::None,
                    );
                }
            });
        });
    }
}

#[cfg(test)]
#[path = "native_tests.rs"]
mod tests;
