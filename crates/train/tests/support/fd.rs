//! Central finite differences against backward gradients (shared by the gradient tests).

#![allow(dead_code)]

use candle_core::{Device, Tensor, Var};

pub fn flat(t: &Tensor) -> Vec<f32> {
    t.flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

/// Central differences of `loss` along coordinates of `var` against `grad`. Returns the
/// largest |gradient| checked (so a caller can make sure the check was not vacuous).
pub fn fd_check(loss: &dyn Fn() -> f32, var: &Var, grad: &Tensor, what: &str, n: usize) -> f32 {
    let base = flat(var.as_tensor());
    let g = flat(grad);
    assert_eq!(base.len(), g.len());
    let eps = 1e-2f32;
    let mut biggest = 0f32;
    let step = (base.len() / n).max(1);
    for i in (0..base.len()).step_by(step).take(n) {
        let set = |v: f32| {
            let mut p = base.clone();
            p[i] = v;
            var.set(&Tensor::from_vec(p, var.shape().clone(), &Device::Cpu).unwrap())
                .unwrap();
        };
        set(base[i] + eps);
        let lp = loss();
        set(base[i] - eps);
        let lm = loss();
        set(base[i]);
        let fd = (lp - lm) / (2.0 * eps);
        let tol = 2e-3 + 3e-2 * g[i].abs().max(fd.abs());
        assert!(
            (fd - g[i]).abs() <= tol,
            "{what}[{i}]: finite difference {fd} vs backward {}",
            g[i]
        );
        biggest = biggest.max(g[i].abs());
    }
    biggest
}
