//! K-RagRec's graph encoder and projector (or the `-encoding` variant's soft prompt) trained
//! on recsys rows, resumably (`pgraphrag train kragrec`; `docs/train.md`).
use std::path::PathBuf;

use pgraphrag_core::Progress;
use pgraphrag_recsys::{ExactIndex, KgRetriever, PromptStyle};
use pgraphrag_train::{
    Ablation, GnnConfig, GraphEncoder, GraphFeatures, Kragrec, KragrecExample, KragrecPrompt,
    Llama, Lora, LoraConfig, SoftPrompt, SoftTokens,
};
use serde::{Deserialize, Serialize};

use super::data::{DataSpec, retrieval_cache_path, retrieve_rows, slice};
use crate::{Error, Result, TrainSettings, training};

/// Encoder size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GnnSize {
    /// 2 layers, hidden 128, 4 heads, projector 256.
    #[default]
    Small,
    /// The paper's 4 layers, hidden 1024, 4 heads, projector 2048.
    Paper,
}

/// Trains K-RagRec's encoder on a range of rows: retrieval as the KG-Text method does it
/// (cached per row), the released `train.py` prompt around the graph token, the
/// cross-entropy of the answer letter through the frozen LLM.
///
/// ```
/// use pgraphrag_runs::kragrec::{DataSpec, GnnSize, TrainSpec};
/// let data = DataSpec::ml1m("data/ml-100k", "data/ml1m", "models/minilm", "runs/kg.index");
/// let spec = TrainSpec::released(data.clone(), "models/llm.gguf", "runs/enc.safetensors", "runs/enc.ckpt");
/// assert_eq!((spec.start, spec.rows, spec.m), (0, 9000, 20));
/// assert_eq!(TrainSpec::paper(data, "m", "o", "c").gnn, GnnSize::Paper);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainSpec {
    /// Rows, KG, encoder and index.
    pub data: DataSpec,
    /// The frozen LLM: a llama-architecture GGUF.
    pub model: PathBuf,
    /// Where the trained encoder (or soft prompt) is written when the run ends.
    pub out: PathBuf,
    /// The retrieval cache (default: [`TrainSpec::out`] with `.retrieval.json`).
    pub retrieval_cache: Option<PathBuf>,
    /// First row index of the training range (ML-1M: rows 0..9000 are the released training
    /// rows, 9000..10000 the test rows).
    pub start: usize,
    /// Rows in the training range.
    pub rows: usize,
    /// Train on at most this many rows (the first of the range that have sub-graphs, unless
    /// [`TrainSpec::all_rows`]).
    pub max_rows: Option<usize>,
    /// Validation rows: the next this many usable rows after the training rows.
    pub val_rows: usize,
    /// Also train on rows the popularity gate gives no sub-graph.
    pub all_rows: bool,
    /// Candidates per row.
    pub m: usize,
    /// Candidate sampling seed (the evaluation's).
    pub sample_seed: u64,
    /// Instruction wording.
    pub style: PromptStyle,
    /// One mean soft token (the released code) or one per sub-graph (the paper).
    pub per_subgraph_tokens: bool,
    /// Encoder size.
    pub gnn: GnnSize,
    /// The ablated variant trained (the paper's appendix A.6).
    #[serde(with = "crate::names")]
    pub ablation: Ablation,
    /// Also train LoRA adapters on the LLM (rank 8, alpha 16, dropout 0.1 on q and v) and
    /// write them here.
    pub lora_out: Option<PathBuf>,
    /// The training run.
    pub train: TrainSettings,
}

/// What a [`TrainSpec`] run did.
#[derive(Debug, Clone)]
pub struct TrainReport {
    /// Training rows.
    pub train_rows: usize,
    /// Validation rows.
    pub val_rows: usize,
    /// `after N steps …`.
    pub summary: String,
}

impl TrainSpec {
    /// The released code's setting: its training prompt, one mean soft token, the small
    /// encoder, ML-1M rows 0..9000 at M = 20, seed 2025.
    pub fn released(
        data: DataSpec,
        model: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
        checkpoint: impl Into<PathBuf>,
    ) -> TrainSpec {
        TrainSpec {
            data,
            model: model.into(),
            out: out.into(),
            retrieval_cache: None,
            start: 0,
            rows: 9000,
            max_rows: None,
            val_rows: 0,
            all_rows: false,
            m: 20,
            sample_seed: 2025,
            style: PromptStyle::ReleasedTrain,
            per_subgraph_tokens: false,
            gnn: GnnSize::Small,
            ablation: Ablation::Full,
            lora_out: None,
            train: TrainSettings::new(checkpoint),
        }
    }

    /// The paper's setting: one soft token per sub-graph and the paper's encoder size;
    /// otherwise [`TrainSpec::released`].
    pub fn paper(
        data: DataSpec,
        model: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
        checkpoint: impl Into<PathBuf>,
    ) -> TrainSpec {
        TrainSpec {
            per_subgraph_tokens: true,
            gnn: GnnSize::Paper,
            ..TrainSpec::released(data, model, out, checkpoint)
        }
    }

    /// Retrieves the rows (cached), builds the examples, trains, and writes the encoder (or
    /// soft prompt) and the LoRA adapters.
    pub fn run(&self, progress: &dyn Progress) -> Result<TrainReport> {
        let mut l = self.data.load(progress)?;
        slice(&mut l.data, self.start, self.rows)?;
        let retrieval = self.ablation.retrieval();
        let index = ExactIndex::new(&l.vectors);
        let retriever =
            KgRetriever::new(&l.kg.graph, &l.vectors, &index, &l.enc, retrieval.clone())?;
        let mut cache = l.retrieval_cache(
            &retrieval_cache_path(self.retrieval_cache.as_deref(), &self.out),
            &retrieval,
        )?;
        // Retrieve in chunks until enough usable rows are found.
        let want = self.max_rows.map(|m| m + self.val_rows);
        let mut usable = Vec::new();
        let mut scanned = 0;
        for chunk in l.data.rows.chunks(200) {
            let got = retrieve_rows(&retriever, &l.data, chunk, &mut cache, progress)?;
            scanned += chunk.len();
            for ((i, row), k) in chunk.iter().zip(got) {
                if self.all_rows || !k.centres.is_empty() {
                    usable.push((*i, row.clone(), k));
                }
            }
            if want.is_some_and(|w| usable.len() >= w) {
                break;
            }
        }
        if let Some(w) = want {
            usable.truncate(w);
        }
        let n_train = usable.len().saturating_sub(self.val_rows);
        if n_train == 0 {
            return Err(Error::Setting(format!(
                "{} usable rows in the {scanned} scanned, {} kept for validation: nothing to train on",
                usable.len(),
                self.val_rows
            )));
        }
        progress.note(&format!(
            "{} training and {} validation rows ({} rows scanned; {} cached retrievals)",
            n_train,
            usable.len() - n_train,
            scanned,
            cache.len()
        ));

        let device = pgraphrag_llm::candle_device(self.train.device)
            .map_err(Error::input("the training device"))?;
        let model = Llama::from_gguf(&self.model, &device).map_err(Error::input(format!(
            "loading {} for training",
            self.model.display()
        )))?;
        let prompt = KragrecPrompt::new(
            pgraphrag_llm::LlmTokenizer::from_gguf(&self.model)?,
            self.style,
        )?;
        let feats = GraphFeatures::new(&l.kg.graph, &l.vectors, &l.enc, retrieval.ego_hops)?;
        let sampler = l
            .data
            .sampler(self.m, self.sample_seed)
            .map_err(Error::invalid)?;
        let dim = feats.dim();
        let mut examples: Vec<KragrecExample> = Vec::with_capacity(usable.len());
        let mut tokens = 0usize;
        for (i, row, k) in &usable {
            let c = l.data.candidates(&sampler, *i, row)?;
            let facts = self.ablation.prompt_facts(&k.triples);
            let ex = prompt
                .example_with_facts(row, &c, &l.data.titles, feats.subgraphs(&k.centres)?, facts)
                .map_err(Error::work(format!("row {i}")))?;
            tokens += ex.prefix.len() + ex.rest.len();
            examples.push(ex);
        }
        let val = examples.split_off(n_train);
        let graphs = examples.iter().chain(&val).flat_map(|e| &e.graphs);
        let (mut n_graphs, mut nodes, mut edges, mut largest) = (0usize, 0usize, 0usize, 0usize);
        for g in graphs {
            n_graphs += 1;
            nodes += g.nodes.len() / dim;
            edges += g.edges.len();
            largest = largest.max(g.nodes.len() / dim);
        }
        progress.note(&format!(
            "prompts: {:.0} tokens on average; {n_graphs} sub-graphs, {nodes} nodes (largest {largest}), {edges} edges, {:.0} MB of features",
            tokens as f64 / usable.len() as f64,
            ((nodes + edges) * dim * 4) as f64 / 1e6
        ));

        let llm_dim = model.dims().n_embd;
        let mut gnn = match self.gnn {
            GnnSize::Small => GnnConfig::small(dim, llm_dim),
            GnnSize::Paper => GnnConfig::paper(dim, llm_dim),
        };
        gnn.tokens = if self.per_subgraph_tokens {
            SoftTokens::PerSubgraph
        } else {
            SoftTokens::Mean
        };
        let features = l.adapter_features(self.ablation);
        let seed = self.train.seed;
        // LoRA's A is drawn from a seed of its own, so the encoder's initial weights are the
        // same with and without it.
        let lora = match &self.lora_out {
            Some(_) => Some(
                Lora::new(&model, LoraConfig::kragrec(), seed.wrapping_add(1))
                    .map_err(Error::invalid)?,
            ),
            None => None,
        };
        let summary = if self.ablation == Ablation::NoEncoding {
            let n = match gnn.tokens {
                SoftTokens::Mean => 1,
                SoftTokens::PerSubgraph => retrieval.top_n,
            };
            let soft = SoftPrompt::new(&model, n, seed).map_err(Error::invalid)?;
            let job = Kragrec::new(&model, &soft, lora.as_ref())?;
            let (_, summary) = training::train(&self.train, &job, &examples, &val, progress)?;
            soft.save(&self.out, model.base_id(), &features)
                .map_err(Error::work(format!(
                    "writing the soft prompt {}",
                    self.out.display()
                )))?;
            summary
        } else {
            let encoder = GraphEncoder::new(gnn, seed, &device).map_err(Error::invalid)?;
            let job = Kragrec::new(&model, &encoder, lora.as_ref())?;
            let (_, summary) = training::train(&self.train, &job, &examples, &val, progress)?;
            encoder
                .save(&self.out, model.base_id(), &features)
                .map_err(Error::work(format!(
                    "writing the encoder {}",
                    self.out.display()
                )))?;
            summary
        };
        if let (Some(l), Some(path)) = (&lora, &self.lora_out) {
            l.save(path).map_err(Error::work(format!(
                "writing the LoRA adapters {}",
                path.display()
            )))?;
            progress.note(&format!("wrote {}", path.display()));
        }
        Ok(TrainReport {
            train_rows: n_train,
            val_rows: val.len(),
            summary,
        })
    }
}
