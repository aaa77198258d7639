//! The inference-only methods (none, kg-text, kaping, each optionally `+cyclic`) and the
//! no-LLM baselines (random, popularity, history), scored into a resumable rows file.
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use pgraphrag_core::Progress;
use pgraphrag_eval::Resumed;
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_recsys::{
    Aggregation, CachedScorer, Done, EvalConfig, ExactIndex, GgufLetterScorer, Kaping, KgRetriever,
    LetterScorer, Method, PromptStyle, Recommender, Retrieval, ScoreCache, ScoredRow, Wrap,
    evaluate,
};
use serde::{Deserialize, Serialize};

use super::data::{
    DataSpec, IndexAggregation, Report, RunConfig, encoder, load_data, open_index, report, resume,
    slice,
};
use crate::{Error, Result};

/// Retrieval settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetrievalPreset {
    /// The paper's ([`Retrieval::paper`]).
    #[default]
    Paper,
    /// The released code's ([`Retrieval::released`]).
    Released,
}

impl RetrievalPreset {
    /// The settings.
    pub fn retrieval(self) -> Retrieval {
        match self {
            RetrievalPreset::Paper => Retrieval::paper(),
            RetrievalPreset::Released => Retrieval::released(),
        }
    }

    /// `paper` or `released`.
    pub fn name(self) -> &'static str {
        match self {
            RetrievalPreset::Paper => "paper",
            RetrievalPreset::Released => "released",
        }
    }
}

/// Scores the inference-only methods and baselines on a range of rows
/// (`pgraphrag recsys eval`), appending to a rows file that a rerun resumes.
///
/// ```
/// use pgraphrag_recsys::{Method, PromptStyle};
/// use pgraphrag_runs::kragrec::{DataSpec, EvalSpec};
/// let data = DataSpec::ml1m("data/ml-100k", "data/ml1m", "models/minilm", "runs/kg.index");
/// let spec = EvalSpec::paper(data.clone(), "models/llm.gguf", "runs/rows.jsonl", 9000, 1000);
/// assert_eq!(spec.m, [20, 10]);
/// assert_eq!(spec.methods[0], Method::NoKnowledge);
/// assert_eq!(EvalSpec::released(data, "m", "o", 0, 1).style, PromptStyle::ReleasedEval);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalSpec {
    /// Rows, KG, encoder and index.
    pub data: DataSpec,
    /// The GGUF model that scores the option letters.
    pub model: PathBuf,
    /// The rows file (JSON lines): appended to; what it holds is not scored again.
    pub out: PathBuf,
    /// The score cache (SQLite); default: the rows file with `.scores.sqlite` appended.
    pub cache: Option<PathBuf>,
    /// First row index (the released evaluation uses ML-1M rows 9000..10000).
    pub start: usize,
    /// Number of rows.
    pub rows: usize,
    /// Candidate-set sizes.
    pub m: Vec<usize>,
    /// Methods.
    pub methods: Vec<Method>,
    /// Instruction wording.
    pub style: PromptStyle,
    /// How the instruction reaches the model.
    pub wrap: Wrap,
    /// Retrieval settings.
    pub retrieval: RetrievalPreset,
    /// Candidate sampling seed.
    pub seed: u64,
    /// Triples in a KG-Text prompt, and KAPING's k.
    pub max_triples: usize,
}

impl EvalSpec {
    /// The paper's setting: M = 20 and 10, the methods none, kg-text, kaping and random, the
    /// paper's prompt and retrieval, chat wrapping, seed 2025, 10 triples.
    pub fn paper(
        data: DataSpec,
        model: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
        start: usize,
        rows: usize,
    ) -> EvalSpec {
        EvalSpec {
            data,
            model: model.into(),
            out: out.into(),
            cache: None,
            start,
            rows,
            m: vec![20, 10],
            methods: vec![
                Method::NoKnowledge,
                Method::KgText,
                Method::Kaping,
                Method::Random,
            ],
            style: PromptStyle::Paper,
            wrap: Wrap::Chat,
            retrieval: RetrievalPreset::Paper,
            seed: 2025,
            max_triples: 10,
        }
    }

    /// The released evaluation's setting: its prompt and retrieval, otherwise
    /// [`EvalSpec::paper`].
    pub fn released(
        data: DataSpec,
        model: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
        start: usize,
        rows: usize,
    ) -> EvalSpec {
        EvalSpec {
            style: PromptStyle::ReleasedEval,
            retrieval: RetrievalPreset::Released,
            ..EvalSpec::paper(data, model, out, start, rows)
        }
    }

    /// The score cache's path: [`EvalSpec::cache`], or the rows file with
    /// `.scores.sqlite` appended.
    pub fn cache_path(&self) -> PathBuf {
        self.cache.clone().unwrap_or_else(|| {
            let mut p = self.out.clone().into_os_string();
            p.push(".scores.sqlite");
            p.into()
        })
    }

    /// Scores every (row, method, M) unit the rows file lacks, appending each as it is
    /// scored, and reports the range's rows of the requested methods and M.
    pub fn run(&self, progress: &dyn Progress) -> Result<Report> {
        let (kg, mut data) = load_data(
            self.data.dataset,
            &self.data.ml100k,
            self.data.ml1m.as_deref(),
        )?;
        slice(&mut data, self.start, self.rows)?;
        let samplers = self
            .m
            .iter()
            .map(|&m| data.sampler(m, self.seed))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::invalid)?;
        let (enc, enc_id) = encoder(&self.data.encoder, self.data.encoder_precision)?;
        let vectors = open_index(
            &self.data.index,
            self.data.aggregation,
            &enc,
            &enc_id,
            &kg,
            progress,
        )?;
        let model = GgufModel::load(&self.model, GgufOptions::default()).map_err(Error::input(
            format!("loading the model {}", self.model.display()),
        ))?;
        let scorer = GgufLetterScorer::new(model, self.wrap);
        let cache = ScoreCache::open(&self.cache_path()).map_err(Error::invalid)?;
        let scorer = CachedScorer::new(scorer, &cache);

        let config = RunConfig {
            dataset: self.data.dataset,
            model: LetterScorer::id(&scorer),
            encoder: enc_id.clone(),
            aggregation: match vectors.aggregation() {
                Aggregation::Mean => IndexAggregation::Mean,
                _ => IndexAggregation::Released,
            },
            style: self.style.name().into(),
            wrap: self.wrap.name().into(),
            retrieval: self.retrieval.name().into(),
            seed: self.seed,
            max_triples: self.max_triples,
        };
        let Resumed {
            file: mut rows_file,
            rows: earlier,
            ..
        } = resume(&self.out, &config, progress)?;
        let done: HashSet<Done> = earlier
            .iter()
            .map(|r| (r.row, r.method.clone(), r.candidates.len()))
            .collect();

        let index = ExactIndex::new(&vectors);
        let retriever = KgRetriever::new(
            &kg.graph,
            &vectors,
            &index,
            &enc,
            self.retrieval.retrieval(),
        )?;
        let kaping = Kaping::new(&kg.graph, &enc, self.max_triples)?;
        let prompts = EvalConfig {
            style: self.style,
            max_triples: self.max_triples,
            ..EvalConfig::default()
        };
        let rec = Recommender::over(&data, &retriever, &kaping, prompts);
        let t = Instant::now();
        let mut new_rows = Vec::new();
        let scored = evaluate(
            &rec,
            &data,
            &scorer,
            &self.methods,
            &samplers,
            &done,
            progress,
            &mut |r| {
                rows_file
                    .append(&r)
                    .map_err(|e| pgraphrag_recsys::Error::ScoreOutput {
                        problem: format!("a row that could not be written to the rows file ({e})"),
                    })?;
                new_rows.push(r);
                Ok(())
            },
        )
        .map_err(Error::work(format!(
            "evaluating into {}",
            self.out.display()
        )))?;
        let seconds = t.elapsed().as_secs_f64();
        let wanted: HashSet<usize> = data.rows.iter().map(|(i, _)| *i).collect();
        let names: HashSet<&str> = self.methods.iter().map(|m| m.name()).collect();
        let mut all: Vec<ScoredRow> = earlier;
        all.extend(new_rows);
        all.retain(|r| {
            wanted.contains(&r.row)
                && names.contains(r.method.as_str())
                && self.m.contains(&r.candidates.len())
        });
        report(
            all,
            data.dataset,
            config,
            "inference-only methods",
            [scored, done.len(), scorer.hits()],
            seconds,
        )
    }
}
