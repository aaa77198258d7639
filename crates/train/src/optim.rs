//! AdamW with a state that can be saved and restored.

use candle_core::{Tensor, Var};
pub use candle_nn::ParamsAdamW;

use crate::error::{Ctx, Result, TrainError};

/// AdamW (decoupled weight decay) computing exactly what `candle_nn::AdamW` computes, update
/// for update, but with its moments and step count readable and settable, so a checkpoint
/// can hold them and a resumed run continues bit for bit. (candle's optimizer keeps its
/// state private.)
///
/// ```
/// use candle_core::{Device, Tensor, Var};
/// use pgraphrag_train::{AdamW, ParamsAdamW};
/// let w = Var::new(&[1.0f32, -2.0], &Device::Cpu)?;
/// let mut opt = AdamW::new(vec![w.clone()], ParamsAdamW { lr: 0.1, ..Default::default() })?;
/// let loss = w.as_tensor().sqr()?.sum_all()?;
/// let g = loss.backward()?;
/// opt.step(&[g.get(w.as_tensor()).cloned()])?;
/// assert_eq!(opt.steps(), 1);
/// assert!(w.as_tensor().to_vec1::<f32>()?[0] < 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AdamW {
    params: ParamsAdamW,
    vars: Vec<Var>,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    t: u64,
}

impl AdamW {
    /// An optimizer over `vars` (f32), moments at zero.
    pub fn new(vars: Vec<Var>, params: ParamsAdamW) -> Result<Self> {
        let zeros = |v: &Var| v.as_tensor().zeros_like().ctx(|| "AdamW moments".into());
        let m = vars.iter().map(zeros).collect::<Result<Vec<_>>>()?;
        let v = vars.iter().map(zeros).collect::<Result<Vec<_>>>()?;
        Ok(AdamW {
            params,
            vars,
            m,
            v,
            t: 0,
        })
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &ParamsAdamW {
        &self.params
    }

    /// Optimizer steps taken.
    pub fn steps(&self) -> u64 {
        self.t
    }

    /// One update with `grads[i]` the gradient of the `i`-th variable (`None`: no gradient,
    /// the variable and its moments are left as they are, as candle does).
    pub fn step(&mut self, grads: &[Option<Tensor>]) -> Result<()> {
        if grads.len() != self.vars.len() {
            return Err(TrainError::Input(format!(
                "{} gradients for {} variables",
                grads.len(),
                self.vars.len()
            )));
        }
        self.t += 1;
        let p = &self.params;
        let (lr, b1, b2) = (p.lr, p.beta1, p.beta2);
        let lr_lambda = lr * p.weight_decay;
        let scale_m = 1f64 / (1f64 - b1.powi(self.t as i32));
        let scale_v = 1f64 / (1f64 - b2.powi(self.t as i32));
        for (i, g) in grads.iter().enumerate() {
            let Some(g) = g else { continue };
            let theta = &self.vars[i];
            let upd = || -> candle_core::Result<(Tensor, Tensor, Tensor)> {
                let next_m = ((&self.m[i] * b1)? + (g * (1.0 - b1))?)?;
                let next_v = ((&self.v[i] * b2)? + (g.sqr()? * (1.0 - b2))?)?;
                let m_hat = (&next_m * scale_m)?;
                let v_hat = (&next_v * scale_v)?;
                let next_theta = (theta.as_tensor() * (1f64 - lr_lambda))?;
                let adjusted = (m_hat / (v_hat.sqrt()? + p.eps)?)?;
                let next_theta = (next_theta - (adjusted * lr)?)?;
                Ok((next_m, next_v, next_theta))
            };
            let (nm, nv, nt) = upd().ctx(|| format!("AdamW update of variable {i}"))?;
            theta
                .set(&nt)
                .ctx(|| format!("AdamW update of variable {i}"))?;
            self.m[i] = nm;
            self.v[i] = nv;
        }
        Ok(())
    }

    /// The first and second moments, one pair per variable, and the step count.
    pub fn state(&self) -> (&[Tensor], &[Tensor], u64) {
        (&self.m, &self.v, self.t)
    }

    /// Restores moments and step count saved from [`AdamW::state`] (same shapes).
    pub fn set_state(&mut self, m: Vec<Tensor>, v: Vec<Tensor>, t: u64) -> Result<()> {
        if m.len() != self.vars.len() || v.len() != self.vars.len() {
            return Err(TrainError::Input(format!(
                "optimizer state for {} / {} variables, the optimizer has {}",
                m.len(),
                v.len(),
                self.vars.len()
            )));
        }
        for (i, var) in self.vars.iter().enumerate() {
            if m[i].dims() != var.dims() || v[i].dims() != var.dims() {
                return Err(TrainError::Input(format!(
                    "optimizer state of variable {i} is {:?}/{:?}, the variable {:?}",
                    m[i].dims(),
                    v[i].dims(),
                    var.dims()
                )));
            }
        }
        self.m = m;
        self.v = v;
        self.t = t;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;
    use candle_nn::Optimizer;

    /// Three updates on a small quadratic: bit-identical parameters to candle's AdamW.
    #[test]
    fn updates_are_candles_bit_for_bit() {
        let dev = Device::Cpu;
        let init = [0.5f32, -1.25, 2.0, 0.1];
        let a = Var::new(&init, &dev).unwrap();
        let b = Var::new(&init, &dev).unwrap();
        let params = ParamsAdamW {
            lr: 0.05,
            weight_decay: 0.1,
            ..Default::default()
        };
        let mut ours = AdamW::new(vec![a.clone()], params.clone()).unwrap();
        let mut theirs = candle_nn::AdamW::new(vec![b.clone()], params).unwrap();
        let target = Tensor::new(&[1.0f32, 2.0, -3.0, 0.0], &dev).unwrap();
        for _ in 0..3 {
            let la = (a.as_tensor() - &target)
                .unwrap()
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap();
            let ga = la.backward().unwrap();
            ours.step(&[ga.get(a.as_tensor()).cloned()]).unwrap();
            let lb = (b.as_tensor() - &target)
                .unwrap()
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap();
            theirs.backward_step(&lb).unwrap();
        }
        let (x, y) = (
            a.as_tensor().to_vec1::<f32>().unwrap(),
            b.as_tensor().to_vec1::<f32>().unwrap(),
        );
        assert_eq!(
            x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_ne!(x, init.to_vec());
    }
}
