//! The vectorized bound pass over a node's dense quantized columns.

/// Dense columns of a node: (all columns, reviews per column, first review of the chunk).
pub(super) type ColChunk<'a> = (&'a [u8], usize, usize);

/// One chunk of the bound pass over a node's dense columns: `bound[i] (+)= Σ w ·
/// col[start + i]` over the query's (column, weight) pairs `cols` (`=` for the first when
/// `init`), then every review with `bound >= cut` is pushed to `cands` with its bound. Uses
/// AVX2 where available.
pub(super) fn dense_bounds(
    bound: &mut [f32],
    all: ColChunk<'_>,
    cols: &[(usize, f32)],
    init: bool,
    cut: f32,
    cands: &mut Vec<(f32, u32)>,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above); the function only needs it.
            unsafe { dense_bounds_avx2(bound, all, cols, init, cut, cands) };
            return;
        }
    }
    dense_bounds_generic(bound, all, cols, init, cut, cands);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dense_bounds_avx2(
    bound: &mut [f32],
    all: ColChunk<'_>,
    cols: &[(usize, f32)],
    init: bool,
    cut: f32,
    cands: &mut Vec<(f32, u32)>,
) {
    dense_bounds_generic(bound, all, cols, init, cut, cands);
}

#[inline(always)]
fn dense_bounds_generic(
    bound: &mut [f32],
    (all, n, start): ColChunk<'_>,
    cols: &[(usize, f32)],
    init: bool,
    cut: f32,
    cands: &mut Vec<(f32, u32)>,
) {
    const GROUP: usize = 32;
    let len = bound.len();
    for (i, &(c, wf)) in cols.iter().enumerate() {
        let col = &all[c * n + start..c * n + start + len];
        if i == 0 && init {
            for (x, &q) in bound.iter_mut().zip(col) {
                *x = wf * f32::from(q);
            }
        } else {
            for (x, &q) in bound.iter_mut().zip(col) {
                *x += wf * f32::from(q);
            }
        }
    }
    for (g, group) in bound.chunks(GROUP).enumerate() {
        let hit = group.iter().fold(0u32, |a, &x| a | u32::from(x >= cut));
        if hit == 0 {
            continue;
        }
        for (i, &x) in group.iter().enumerate() {
            if x >= cut {
                cands.push((x, (start + g * GROUP + i) as u32));
            }
        }
    }
}
