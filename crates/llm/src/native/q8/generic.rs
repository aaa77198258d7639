//! The 8-bit path's data and its portable kernel, written once: the repacked weights
//! ([`I8Rows`]), the quantized activations ([`QuantX`]) and [`rows_dot_generic`], the
//! definition every SIMD kernel in the arch files ([`super::x86`], `super::arm`) reproduces bit
//! for bit; [`super`] picks a kernel at run time.

use crate::native::formats::{QData, QK, QRows, f16_bits};
use crate::native::kernels::{MAX_VECS, hsum16};

/// The storage kinds the 8-bit path handles.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    /// 4-bit unsigned weights with a scale and a minimum per block.
    Q41,
    /// 8-bit signed weights with a scale per block.
    Q80,
}

/// A weight matrix repacked for the 8-bit activation kernels.
pub(crate) struct I8Rows {
    /// Blocks per row, rounded up to an even number (padding blocks are zero).
    pub(super) nbp: usize,
    pub(super) kind: Kind,
    /// `Q4_1`: 32 bytes of nibbles per pair (the two blocks' bytes as stored); `Q8_0`: 64
    /// reordered bytes per pair.
    pub(super) qs: Vec<u8>,
    /// `rows × nbp` block scales (f16 bits, as stored: the kernels are bound by reading
    /// weights, so the repacking adds no bytes).
    pub(super) d: Vec<u16>,
    /// `rows × nbp` block minimums (`Q4_1` only; f16 bits).
    pub(super) m: Vec<u16>,
}

impl I8Rows {
    /// Repacks `q`; `None` when its rows are not `Q4_1` or `Q8_0` blocks.
    pub(crate) fn from_qrows(q: &QRows) -> Option<I8Rows> {
        let nb = q.cols / QK;
        let nbp = nb.div_ceil(2) * 2;
        let (kind, bytes_per_pair) = match &q.data {
            QData::Q41(_) => (Kind::Q41, 32),
            QData::Q80(_) => (Kind::Q80, 64),
            QData::F32(_) => return None,
        };
        let mut qs = vec![0u8; q.rows * nbp / 2 * bytes_per_pair];
        let mut d = vec![0u16; q.rows * nbp];
        let mut m = if kind == Kind::Q41 {
            vec![0u16; q.rows * nbp]
        } else {
            Vec::new()
        };
        for r in 0..q.rows {
            for b in 0..nb {
                let (pair, second) = (b / 2, b % 2);
                let base = (r * nbp / 2 + pair) * bytes_per_pair;
                match &q.data {
                    QData::Q41(v) => {
                        let blk = &v[r * nb + b];
                        qs[base + 16 * second..base + 16 * second + 16].copy_from_slice(&blk.qs);
                        d[r * nbp + b] = blk.d;
                        m[r * nbp + b] = blk.m;
                    }
                    QData::Q80(v) => {
                        let blk = &v[r * nb + b];
                        for j in 0..16 {
                            qs[base + 16 * second + j] = blk.qs[j] as u8;
                            qs[base + 32 + 16 * second + j] = blk.qs[j + 16] as u8;
                        }
                        d[r * nbp + b] = blk.d;
                    }
                    QData::F32(_) => unreachable!("returned above"),
                }
            }
        }
        Some(I8Rows {
            nbp,
            kind,
            qs,
            d,
            m,
        })
    }

    /// The 64 weights of pair `p` of row `r` in lane order, widened to i32.
    #[inline(always)]
    pub(super) fn pair(&self, r: usize, p: usize) -> [i32; 64] {
        let mut w = [0i32; 64];
        match self.kind {
            Kind::Q41 => {
                let q = &self.qs[(r * self.nbp / 2 + p) * 32..][..32];
                for j in 0..32 {
                    w[j] = (q[j] & 0x0F) as i32;
                    w[32 + j] = (q[j] >> 4) as i32;
                }
            }
            Kind::Q80 => {
                let q = &self.qs[(r * self.nbp / 2 + p) * 64..][..64];
                for j in 0..64 {
                    w[j] = q[j] as i8 as i32;
                }
            }
        }
        w
    }
}

/// Activation vectors quantized for [`I8Rows`] of one column count.
#[derive(Default)]
pub(crate) struct QuantX {
    pub(super) nbp: usize,
    /// `nvec × nbp × 32` values in lane order.
    pub(super) q: Vec<i8>,
    /// `nvec × nbp` block scales.
    pub(super) dx: Vec<f32>,
    /// `nvec × nbp/2 × 16`: each pair's scales spread over its lanes.
    pub(super) dpat: Vec<f32>,
    /// `nvec × nbp` exact f32 block sums (for `Q4_1`'s minimums).
    pub(super) xsum: Vec<f32>,
}

impl QuantX {
    /// Quantizes the `nvec` vectors of `x` (`nvec × cols`, `cols` a multiple of 32): per block,
    /// `d = max|x|/127`, `q = round(x/d)` (half away from zero), as ggml's `Q8` formats.
    pub(crate) fn quantize(&mut self, x: &[f32], cols: usize, nvec: usize) {
        let nb = cols / QK;
        let nbp = nb.div_ceil(2) * 2;
        self.nbp = nbp;
        self.q.clear();
        self.q.resize(nvec * nbp * QK, 0);
        self.dx.clear();
        self.dx.resize(nvec * nbp, 0.0);
        self.xsum.clear();
        self.xsum.resize(nvec * nbp, 0.0);
        self.dpat.clear();
        self.dpat.resize(nvec * nbp / 2 * 16, 0.0);
        for v in 0..nvec {
            for b in 0..nb {
                let xs = &x[v * cols + b * QK..v * cols + (b + 1) * QK];
                let amax = xs.iter().fold(0f32, |a, &y| a.max(y.abs()));
                let d = amax / 127.0;
                let id = if d > 0.0 { 1.0 / d } else { 0.0 };
                let (pair, second) = (b / 2, b % 2);
                let base = (v * nbp / 2 + pair) * 64;
                for j in 0..QK {
                    let q = (xs[j] * id).round().clamp(-127.0, 127.0) as i8;
                    let at = if j < 16 {
                        base + 16 * second + j
                    } else {
                        base + 32 + 16 * second + (j - 16)
                    };
                    self.q[at] = q;
                }
                self.dx[v * nbp + b] = d;
                self.xsum[v * nbp + b] = xs.iter().sum();
            }
            for p in 0..nbp / 2 {
                let pat = &mut self.dpat[(v * nbp / 2 + p) * 16..][..16];
                for (l, s) in pat.iter_mut().enumerate() {
                    *s = self.dx[v * nbp + 2 * p + (l / 4) % 2];
                }
            }
        }
    }
}

/// `out[i·nvec + v] = row(r0 + i) · x_v` on the 8-bit path.
pub(crate) type RowsDotI8 = fn(&I8Rows, usize, &QuantX, usize, &mut [f32]);

/// The portable kernel (the definition the others reproduce bit for bit).
#[inline(always)]
pub(super) fn rows_dot_generic(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &mut [f32]) {
    let (nbp, npair) = (w.nbp, w.nbp / 2);
    debug_assert_eq!(x.nbp, nbp);
    for (i, o) in out.chunks_exact_mut(nvec).enumerate() {
        let r = r0 + i;
        for v0 in (0..nvec).step_by(MAX_VECS) {
            let n = (nvec - v0).min(MAX_VECS);
            let mut acc = [[0f32; 16]; MAX_VECS];
            for p in 0..npair {
                let wp = w.pair(r, p);
                let (da, db) = (
                    f16_bits(w.d[r * nbp + 2 * p]),
                    f16_bits(w.d[r * nbp + 2 * p + 1]),
                );
                for k in 0..n {
                    let v = v0 + k;
                    let xq = &x.q[(v * npair + p) * 64..][..64];
                    let (sa, sb) = (da * x.dx[v * nbp + 2 * p], db * x.dx[v * nbp + 2 * p + 1]);
                    for l in 0..16 {
                        let mut s = 0i32;
                        for t in 0..4 {
                            s += wp[4 * l + t] * xq[4 * l + t] as i32;
                        }
                        let sc = if (l / 4) % 2 == 0 { sa } else { sb };
                        acc[k][l] = (s as f32).mul_add(sc, acc[k][l]);
                    }
                }
            }
            for k in 0..n {
                let v = v0 + k;
                let mut r_val = hsum16(&acc[k]);
                if w.kind == Kind::Q41 {
                    let mut off = [0f32; 16];
                    for b in 0..nbp {
                        off[b % 16] =
                            f16_bits(w.m[r * nbp + b]).mul_add(x.xsum[v * nbp + b], off[b % 16]);
                    }
                    r_val += hsum16(&off);
                }
                o[v] = r_val;
            }
        }
    }
}

/// The buffer sizes every SIMD kernel reads within (checked once per call, not per load).
pub(super) fn check_sizes(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &[f32]) {
    let (nbp, npair) = (w.nbp, w.nbp / 2);
    let rows = out.len() / nvec;
    assert!(x.nbp == nbp && x.q.len() >= nvec * nbp * QK && x.dpat.len() >= nvec * npair * 16);
    assert!(w.d.len() >= (r0 + rows) * nbp);
    let bytes = if w.kind == Kind::Q41 { 32 } else { 64 };
    assert!(w.qs.len() >= (r0 + rows) * npair * bytes);
    if w.kind == Kind::Q41 {
        assert!(w.m.len() >= (r0 + rows) * nbp && x.xsum.len() >= nvec * nbp);
    }
}
