//! The hop-field sub-graph index of the ML-100K KG, built and saved.
use std::path::PathBuf;
use std::time::Instant;

use pgraphrag_core::Progress;
use pgraphrag_recsys::{HopVectors, IndexOptions, Ml100k, build_kg};
use pgraphrag_retrieval::dense::Precision;
use serde::{Deserialize, Serialize};

use super::data::{IndexAggregation, encoder};
use crate::{Error, Result};

/// Builds the index of every KG entity's 0-, 1- and 2-hop vectors and saves it
/// (`pgraphrag recsys index`).
///
/// ```
/// use pgraphrag_runs::kragrec::{IndexAggregation, IndexSpec};
/// let spec = IndexSpec::paper("data/ml-100k", "models/all-MiniLM-L6-v2", "runs/kg.index");
/// assert_eq!(spec.aggregation, IndexAggregation::Mean);
/// assert_eq!(IndexSpec::released("d", "e", "o").aggregation, IndexAggregation::Released);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexSpec {
    /// The ML-100K folder (`ml-100k.inter`, `.item`, `.kg`, `.link`).
    pub ml100k: PathBuf,
    /// The BERT encoder folder.
    pub encoder: PathBuf,
    /// The encoder's linear layers.
    #[serde(with = "crate::names")]
    pub encoder_precision: Precision,
    /// The index file written.
    pub out: PathBuf,
    /// Message passing.
    pub aggregation: IndexAggregation,
}

/// What an [`IndexSpec`] run built.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexReport {
    /// Entities indexed.
    pub entities: usize,
    /// The largest hop.
    pub max_hop: usize,
    /// Vector dimensions.
    pub dim: usize,
    /// The message passing's name.
    pub aggregation: String,
    /// Seconds spent building (encoding and message passing).
    pub seconds: f64,
}

impl IndexSpec {
    /// The paper's index: the parameter-free mean with relation vectors, f32 encoder.
    pub fn paper(
        ml100k: impl Into<PathBuf>,
        encoder: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
    ) -> IndexSpec {
        IndexSpec {
            ml100k: ml100k.into(),
            encoder: encoder.into(),
            encoder_precision: Precision::F32,
            out: out.into(),
            aggregation: IndexAggregation::Mean,
        }
    }

    /// The released code's index: its untrained GCN (seed 0).
    pub fn released(
        ml100k: impl Into<PathBuf>,
        encoder: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
    ) -> IndexSpec {
        IndexSpec {
            aggregation: IndexAggregation::Released,
            ..IndexSpec::paper(ml100k, encoder, out)
        }
    }

    /// Builds the index and saves it to [`IndexSpec::out`] (atomically).
    pub fn run(&self, progress: &dyn Progress) -> Result<IndexReport> {
        let ml = Ml100k::load(&self.ml100k).map_err(Error::invalid)?;
        let kg = build_kg(&ml)?;
        let (enc, id) = encoder(&self.encoder, self.encoder_precision)?;
        let t = Instant::now();
        let opts = IndexOptions {
            aggregation: self.aggregation.into(),
            ..IndexOptions::default()
        };
        let v = HopVectors::build(&kg.graph, &enc, &id, &opts, progress)?;
        let seconds = t.elapsed().as_secs_f64();
        v.save(&self.out)?;
        Ok(IndexReport {
            entities: v.entities(),
            max_hop: v.max_hop(),
            dim: v.dim(),
            aggregation: v.aggregation().name().to_string(),
            seconds,
        })
    }
}
