//! The native engine's side of LoRA adapters ([`crate::LoraAdapter`]): setting one, and
//! adding its updates to the outputs of the stacked projections in [`NativeLlama::step`].

use super::NativeLlama;
use crate::error::Result;
use crate::lora::{LoraAdapter, LoraTarget};

impl NativeLlama {
    /// Applies `adapter` from now on (`None`: the stored weights alone), after checking that
    /// it fits the model. Forgets the KV caches of earlier prompts, computed without it.
    pub(crate) fn set_adapter(&mut self, adapter: Option<LoraAdapter>) -> Result<()> {
        if let Some(a) = &adapter {
            a.check(&self.cfg, self.layers.len())?;
        }
        self.lora = adapter;
        self.clear_prefixes();
        self.reset();
        Ok(())
    }

    /// Adds block `li`'s updates of `targets` to `y`, the `t` rows (of `stride` values) of a
    /// stacked projection of the `t` rows of `x`: each target's block of outputs starts at
    /// its offset (Q at 0, K after Q, …). Nothing happens without an adapter.
    pub(super) fn add_lora(
        &self,
        li: usize,
        targets: &[(LoraTarget, usize)],
        x: &[f32],
        t: usize,
        y: &mut [f32],
        stride: usize,
    ) {
        let Some(a) = &self.lora else {
            return;
        };
        for &(tg, offset) in targets {
            if let Some(u) = a.get(li, tg) {
                u.add_to(x, t, y, stride, offset);
            }
        }
    }
}
