//! A trained K-RagRec encoder (or soft prompt, with LoRA adapters or not) scored on a range
//! of rows into the recsys rows file and tables.
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use pgraphrag_core::Progress;
use pgraphrag_recsys::{KgRetriever, PromptStyle, ScoredRow};
use pgraphrag_train::{
    Ablation, GraphEncoder, GraphFeatures, GraphTokens, KragrecPrompt, Llama, SoftPrompt,
    kragrec_letter_scores, kragrec_scored_row, letter_log_probs,
};
use serde::{Deserialize, Serialize};

use super::data::{
    DataSpec, MAX_TRIPLES, Report, RunConfig, report, resume, retrieval_cache_path, slice,
};
use crate::{Error, Result};

/// Scores a trained K-RagRec encoder (`pgraphrag recsys eval --adapter`): its soft token
/// after `<s>[INST]`, the released training prompt, the paper's retrieval (or the ablated
/// variant's it was trained as), appending to a resumable rows file.
///
/// ```
/// use pgraphrag_runs::kragrec::{AdapterSpec, DataSpec};
/// let data = DataSpec::ml1m("data/ml-100k", "data/ml1m", "models/minilm", "runs/kg.index");
/// let spec = AdapterSpec::new(data, "runs/enc.safetensors", "models/llm.gguf", "runs/rows.jsonl", 9000, 1000);
/// assert_eq!((spec.m.as_slice(), spec.seed), (&[20, 10][..], 2025));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdapterSpec {
    /// Rows, KG, encoder and index.
    pub data: DataSpec,
    /// The trained encoder (or soft prompt, for [`Ablation::NoEncoding`]).
    pub adapter: PathBuf,
    /// Its base model (GGUF).
    pub model: PathBuf,
    /// The rows file (JSON lines): appended to; what it holds is not scored again.
    pub out: PathBuf,
    /// The retrieval cache (default: the rows file with `.retrieval.json`).
    pub retrieval_cache: Option<PathBuf>,
    /// First row index.
    pub start: usize,
    /// Number of rows.
    pub rows: usize,
    /// Candidate-set sizes.
    pub m: Vec<usize>,
    /// Instruction wording (what the encoder was trained with).
    pub style: PromptStyle,
    /// The ablated variant it was trained as.
    #[serde(with = "crate::names")]
    pub ablation: Ablation,
    /// LoRA adapters trained with it, applied to every row (method `lora w/ k-ragrec`).
    pub lora: Option<PathBuf>,
    /// Candidate sampling seed.
    pub seed: u64,
}

impl AdapterSpec {
    /// K-RagRec itself, the released training prompt, M = 20 and 10, seed 2025.
    pub fn new(
        data: DataSpec,
        adapter: impl Into<PathBuf>,
        model: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
        start: usize,
        rows: usize,
    ) -> AdapterSpec {
        AdapterSpec {
            data,
            adapter: adapter.into(),
            model: model.into(),
            out: out.into(),
            retrieval_cache: None,
            start,
            rows,
            m: vec![20, 10],
            style: PromptStyle::ReleasedTrain,
            ablation: Ablation::Full,
            lora: None,
            seed: 2025,
        }
    }

    /// Scores every (row, M) unit the rows file lacks and reports the range's rows.
    pub fn run(&self, progress: &dyn Progress) -> Result<Report> {
        let mut l = self.data.load(progress)?;
        slice(&mut l.data, self.start, self.rows)?;
        let samplers = self
            .m
            .iter()
            .map(|&m| l.data.sampler(m, self.seed))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::invalid)?;
        let device = candle_core::Device::Cpu;
        let loading = || format!("loading {}", self.model.display());
        let model = Llama::from_gguf(&self.model, &device).map_err(Error::input(loading()))?;
        let mut native = pgraphrag_llm::GgufModel::load(
            &self.model,
            pgraphrag_llm::GgufOptions {
                activations: pgraphrag_llm::Activations::F32,
                ..Default::default()
            },
        )
        .map_err(Error::input(loading()))?;
        // LoRA w/ K-RagRec: the adapters on both paths (candle's forward pass and the native
        // engine's, for rows without soft tokens). The file is read once, checked against
        // the model already loaded.
        let lora = match &self.lora {
            Some(p) => {
                let what = || format!("the LoRA adapters {}", p.display());
                let lora = pgraphrag_train::Lora::load(&model, p).map_err(Error::input(what()))?;
                native
                    .set_adapter(Some(lora.to_adapter()?))
                    .map_err(Error::input(what()))?;
                Some(lora)
            }
            None => None,
        };
        let features = l.adapter_features(self.ablation);
        let loaded: pgraphrag_train::Result<Box<dyn GraphTokens>> =
            if self.ablation == Ablation::NoEncoding {
                SoftPrompt::load(&self.adapter, model.base_id(), &features, &device)
                    .map(|p| Box::new(p) as Box<dyn GraphTokens>)
            } else {
                GraphEncoder::load(&self.adapter, model.base_id(), &features, &device)
                    .map(|e| Box::new(e) as Box<dyn GraphTokens>)
            };
        let enc = loaded.map_err(Error::input(format!(
            "the adapter {}",
            self.adapter.display()
        )))?;
        let prompt = KragrecPrompt::new(
            pgraphrag_llm::LlmTokenizer::from_gguf(&self.model)?,
            self.style,
        )?;
        let config = RunConfig {
            dataset: self.data.dataset,
            model: match &self.lora {
                Some(p) => format!(
                    "k-ragrec:{}+lora:{}:{}",
                    self.adapter.display(),
                    p.display(),
                    model.base_id()
                ),
                None => format!("k-ragrec:{}:{}", self.adapter.display(), model.base_id()),
            },
            encoder: l.enc_id.clone(),
            aggregation: self.data.aggregation,
            style: self.style.name().into(),
            wrap: if self.ablation.facts_as_text() {
                "llama2-inst+soft-prompt+facts".into()
            } else {
                "llama2-inst+graph".into()
            },
            retrieval: match self.ablation {
                Ablation::Full => "paper".into(),
                ab => format!("paper {}", ab.name()),
            },
            seed: self.seed,
            max_triples: MAX_TRIPLES,
        };
        let pgraphrag_eval::Resumed {
            file: mut out,
            rows: earlier,
            ..
        } = resume(&self.out, &config, progress)?;
        let done: HashSet<(usize, usize)> = earlier
            .iter()
            .map(|r| (r.row, r.candidates.len()))
            .collect();
        let retrieval = self.ablation.retrieval();
        let index = pgraphrag_recsys::ExactIndex::new(&l.vectors);
        let retriever =
            KgRetriever::new(&l.kg.graph, &l.vectors, &index, &l.enc, retrieval.clone())?;
        let mut cache = l.retrieval_cache(
            &retrieval_cache_path(self.retrieval_cache.as_deref(), &self.out),
            &retrieval,
        )?;
        let knowledge =
            super::data::retrieve_rows(&retriever, &l.data, &l.data.rows, &mut cache, progress)?;
        let feats = GraphFeatures::new(&l.kg.graph, &l.vectors, &l.enc, retrieval.ego_hops)?;
        let t = Instant::now();
        let already = done.len();
        let mut all = earlier;
        let mut scored = 0usize;
        progress.start(l.data.rows.len() as u64, "rows");
        for ((i, row), k) in l.data.rows.iter().zip(&knowledge) {
            let mut graphs = None;
            for s in &samplers {
                if done.contains(&(*i, s.m())) {
                    continue;
                }
                let c = l.data.candidates(s, *i, row)?;
                if graphs.is_none() {
                    graphs = Some(feats.subgraphs(&k.centres)?);
                }
                let g = graphs.clone().unwrap_or_default();
                let facts = self.ablation.prompt_facts(&k.triples);
                let ex = prompt.example_with_facts(row, &c, &l.data.titles, g, facts)?;
                let letters = prompt.letter_ids(s.m())?;
                let scores = if ex.graphs.is_empty() {
                    // No soft token: the plain prompt, on the native engine's f32 path (its
                    // logits equal the candle forward pass's to ~1e-4, docs/train.md; several
                    // times faster).
                    let ids: Vec<u32> = ex.prefix.iter().chain(&ex.rest).copied().collect();
                    letter_log_probs(&native.next_token_logits(&ids)?, letters)
                } else {
                    kragrec_letter_scores(&model, enc.as_ref(), lora.as_ref(), &ex, letters)
                }
                .map_err(Error::work(format!("scoring row {i}")))?;
                let mut r = kragrec_scored_row(*i, row, &c, scores, k.triples.clone());
                r.method = match lora {
                    Some(_) => format!("lora w/ {}", self.ablation.method()),
                    None => self.ablation.method(),
                };
                out.append(&r)?;
                all.push(r);
                scored += 1;
            }
            progress.advance(1);
        }
        progress.finish();
        let seconds = t.elapsed().as_secs_f64();
        let wanted: HashSet<usize> = l.data.rows.iter().map(|(i, _)| *i).collect();
        all.retain(|r: &ScoredRow| wanted.contains(&r.row) && self.m.contains(&r.candidates.len()));
        report(
            all,
            l.data.dataset,
            config,
            "trained encoder",
            [scored, already, 0],
            seconds,
        )
    }
}
