//! The loaded network: the native engine or, with the `candle` feature, one of candle's
//! quantized models, behind one forward / reset interface that [`super::GgufModel`] dispatches
//! to.

use crate::native::NativeLlama;

/// An error of a forward pass, before it gets its context.
pub(super) type ForwardError = Box<dyn std::error::Error + Send + Sync>;

pub(super) enum Weights {
    Native(Box<NativeLlama>),
    #[cfg(feature = "candle")]
    Candle(Box<crate::candle::CandleWeights>),
}

impl Weights {
    /// Logits (f32, one per vocabulary entry) of the last of `ids`, fed at positions `pos..`.
    pub(super) fn forward(
        &mut self,
        ids: &[u32],
        #[allow(unused_variables)] pos: usize,
    ) -> std::result::Result<Vec<f32>, ForwardError> {
        match self {
            Weights::Native(m) => m.forward(ids).map_err(Into::into),
            #[cfg(feature = "candle")]
            Weights::Candle(m) => m.forward(ids, pos).map_err(Into::into),
        }
    }
    /// The native engine, when it is the one running.
    pub(super) fn native_mut(&mut self) -> Option<&mut NativeLlama> {
        match self {
            Weights::Native(m) => Some(m),
            #[cfg(feature = "candle")]
            Weights::Candle(_) => None,
        }
    }
    pub(super) fn reset(&mut self) {
        match self {
            Weights::Native(m) => m.reset(),
            #[cfg(feature = "candle")]
            Weights::Candle(m) => m.reset(),
        }
    }
}
