//! The kernel bodies of row-wise prompt processing, written once: the register tile (the
//! plain-Rust [`Vectorised`] one; the arch files add intrinsic tiles), the task body [`block`]
//! over a panel, the attention row, and the portable kernel set. The arch files ([`super::x86`],
//! `super::arm`) compile these bodies for their targets; [`super`] picks a set at run time.

use crate::native::kernels::softmax;

/// Output columns of one packed panel.
pub(crate) const NR: usize = 32;
/// Inputs per block of a panel (`KC·NR` floats, 16 KiB).
pub(super) const KC: usize = 128;

/// One task: rows `0..n` (`n ≤ RB`, row stride `cols`) of `x` against one panel of `cols`
/// inputs, into `acc` (`n × NR`, zeroed by the caller). `MR` rows share a tile.
///
/// # Safety
/// `x` must hold `n` rows of `cols` floats; `panel` `cols·NR` floats; `acc` `n·NR` floats.
#[inline(always)]
pub(super) unsafe fn block<T: Tile, const MR: usize>(
    x: *const f32,
    cols: usize,
    n: usize,
    panel: &[f32],
    acc: &mut [f32],
) {
    let mut k0 = 0;
    while k0 < cols {
        let kc = KC.min(cols - k0);
        let pan = &panel[k0 * NR..(k0 + kc) * NR];
        let mut r = 0;
        // SAFETY (all tiles): rows r.. of x exist and have kc floats from k0 (the contract).
        unsafe {
            while r + MR <= n {
                T::tile::<MR>(x.add(r * cols + k0), cols, kc, pan, &mut acc[r * NR..]);
                r += MR;
            }
            while r + 4 <= n {
                T::tile::<4>(x.add(r * cols + k0), cols, kc, pan, &mut acc[r * NR..]);
                r += 4;
            }
            while r < n {
                T::tile::<1>(x.add(r * cols + k0), cols, kc, pan, &mut acc[r * NR..]);
                r += 1;
            }
        }
        k0 += kc;
    }
}

/// The register tile a [`block`] is built from: [`Vectorised`] (plain Rust that LLVM
/// vectorises) or a hand-written one, with the same fused multiply-add chain per element.
pub(super) trait Tile {
    /// `acc[i·NR + j] += Σ_{kk<kc} a[i·lda + kk] · panel[kk·NR + j]` for `i < R`, one fused
    /// multiply-add per input, in input order.
    ///
    /// # Safety
    /// `a` must hold `R` rows of at least `kc` floats at stride `lda`; `panel` `kc·NR` floats;
    /// `acc` `R·NR` floats; the CPU has the features the implementation is compiled for.
    unsafe fn tile<const R: usize>(
        a: *const f32,
        lda: usize,
        kc: usize,
        panel: &[f32],
        acc: &mut [f32],
    );
}

/// The tile in plain Rust (`f32::mul_add` over `NR`-wide arrays).
pub(super) struct Vectorised;

impl Tile for Vectorised {
    #[inline(always)]
    unsafe fn tile<const R: usize>(
        a: *const f32,
        lda: usize,
        kc: usize,
        panel: &[f32],
        acc: &mut [f32],
    ) {
        let mut c = [[0f32; NR]; R];
        for i in 0..R {
            c[i].copy_from_slice(&acc[i * NR..(i + 1) * NR]);
        }
        for (kk, w) in panel.chunks_exact(NR).take(kc).enumerate() {
            let w: &[f32; NR] = w.try_into().expect("NR-wide chunk");
            for i in 0..R {
                // SAFETY: row i has at least kc floats (the contract).
                let av = unsafe { *a.add(i * lda + kk) };
                for j in 0..NR {
                    c[i][j] = av.mul_add(w[j], c[i][j]);
                }
            }
        }
        for i in 0..R {
            acc[i * NR..(i + 1) * NR].copy_from_slice(&c[i]);
        }
    }
}

/// Signature of a compiled [`block`].
pub(crate) type Block = unsafe fn(*const f32, usize, usize, &[f32], &mut [f32]);

/// Keys scored together by [`attend_row_generic`] (8 independent 16-lane chains).
pub(crate) const KB: usize = 128;

/// One query row of causal attention over `l = s.len()` positions, with the keys transposed:
/// `kt[d·lp + j]` is dimension `d` of key `j` (`lp` a multiple of [`KB`], zero-padded).
/// `s_j = scale · Σ_d q_d·k_jd` (one fused multiply-add chain over `d`), softmax, then `o_d =
/// Σ_j p_j·v_jd` (one chain over `j`), `v_j = vc[j·stride + off..][..q.len()]`. Each value
/// depends only on this row's inputs and its own `l`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn attend_row_generic(
    q: &[f32],
    kt: &[f32],
    lp: usize,
    vc: &[f32],
    stride: usize,
    off: usize,
    scale: f32,
    s: &mut [f32],
    o: &mut [f32],
) {
    let (hd, l) = (q.len(), s.len());
    let mut j0 = 0;
    while j0 < l {
        let mut acc = [0f32; KB];
        for (d, &qd) in q.iter().enumerate() {
            let row: &[f32; KB] = kt[d * lp + j0..d * lp + j0 + KB]
                .try_into()
                .expect("KB keys");
            for x in 0..KB {
                acc[x] = qd.mul_add(row[x], acc[x]);
            }
        }
        for (sj, &a) in s[j0..].iter_mut().zip(&acc) {
            *sj = a * scale;
        }
        j0 += KB;
    }
    softmax(s);
    o.fill(0.0);
    for (j, &p) in s.iter().enumerate() {
        let v = &vc[j * stride + off..j * stride + off + hd];
        for (od, &vd) in o.iter_mut().zip(v) {
            *od = p.mul_add(vd, *od);
        }
    }
}

/// Signature of [`attend_row_generic`] and its compiled variants.
pub(crate) type AttendRow =
    fn(&[f32], &[f32], usize, &[f32], usize, usize, f32, &mut [f32], &mut [f32]);

/// The compiled kernels of row-wise prompt processing.
#[derive(Clone, Copy)]
pub(crate) struct Kernels {
    /// The matrix multiply's task body.
    pub block: Block,
    /// One query row of attention.
    pub attend: AttendRow,
}

/// The portable block (exact FMA via `f32::mul_add`; slow where the CPU lacks FMA).
///
/// # Safety
/// As [`block`].
unsafe fn block_plain(x: *const f32, cols: usize, n: usize, p: &[f32], acc: &mut [f32]) {
    // SAFETY: forwarded contract.
    unsafe { block::<Vectorised, 4>(x, cols, n, p, acc) }
}

/// The portable kernels.
pub(super) fn plain() -> Kernels {
    Kernels {
        block: block_plain,
        attend: |q, kt, lp, vc, st, off, sc, s, o| {
            attend_row_generic(q, kt, lp, vc, st, off, sc, s, o)
        },
    }
}
