//! What the K-RagRec runs share: the data spec, the rows file's settings and report, the
//! data, KG, encoder and index setup, and the cached per-row retrieval.
use std::path::{Path, PathBuf};

use pgraphrag_core::Progress;
use pgraphrag_eval::{Resumed, RowsFile, RunDir};
use pgraphrag_recsys::{
    Aggregation, Dataset, EvalData, HopVectors, IndexOptions, KgRetriever, MethodSummary, Ml1m,
    Ml100k, MovieKg, Retrieval, Row, ScoredRow, build_kg, summarize,
};
use pgraphrag_retrieval::dense::{BertEncoder, EncoderOptions, Precision};
use pgraphrag_train::{Ablation, CachedRetrieval, RetrievalCache, retrieve_row};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Message passing of the index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexAggregation {
    /// The paper's parameter-free mean with relation vectors (default).
    #[default]
    Mean,
    /// The released code's untrained sym-normalised GCN (seed 0).
    Released,
}

impl From<IndexAggregation> for Aggregation {
    fn from(a: IndexAggregation) -> Self {
        match a {
            IndexAggregation::Mean => Aggregation::Mean,
            IndexAggregation::Released => Aggregation::ReleasedGcn { seed: 0 },
        }
    }
}

/// Which rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DatasetName {
    /// MovieLens-100K leave-one-out rows.
    Ml100k,
    /// The MovieLens-1M slice's rows (the released evaluation's).
    Ml1m,
}

/// Where a run's rows, KG, encoder and index come from.
///
/// ```
/// use pgraphrag_runs::kragrec::{DataSpec, DatasetName};
/// let d = DataSpec::ml1m("data/ml-100k", "data/ml1m", "models/all-MiniLM-L6-v2", "runs/kg.index");
/// assert_eq!(d.dataset, DatasetName::Ml1m);
/// let json = serde_json::to_value(&d)?;
/// assert_eq!((json["dataset"].as_str(), json["encoder_precision"].as_str()), (Some("ml1m"), Some("f32")));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataSpec {
    /// Which rows.
    pub dataset: DatasetName,
    /// The ML-100K folder (`ml-100k.inter`, `.item`, `.kg`, `.link`); its KG serves both
    /// datasets.
    pub ml100k: PathBuf,
    /// The ML-1M slice folder (`movies.dat`, `test_filtered.csv`, `movies_id_name.txt`);
    /// needed for [`DatasetName::Ml1m`].
    pub ml1m: Option<PathBuf>,
    /// The BERT encoder folder (retrieval queries, node and relation features).
    pub encoder: PathBuf,
    /// The encoder's linear layers (int8: quantized at load; its vectors and index are keyed
    /// apart from f32's).
    #[serde(with = "crate::names")]
    pub encoder_precision: Precision,
    /// The index file: loaded when it exists, else built and saved there.
    pub index: PathBuf,
    /// Message passing when the index is built.
    pub aggregation: IndexAggregation,
}

impl DataSpec {
    /// The ML-1M slice's rows, f32 encoder, the paper's mean aggregation.
    pub fn ml1m(
        ml100k: impl Into<PathBuf>,
        ml1m: impl Into<PathBuf>,
        encoder: impl Into<PathBuf>,
        index: impl Into<PathBuf>,
    ) -> DataSpec {
        DataSpec {
            dataset: DatasetName::Ml1m,
            ml100k: ml100k.into(),
            ml1m: Some(ml1m.into()),
            encoder: encoder.into(),
            encoder_precision: Precision::F32,
            index: index.into(),
            aggregation: IndexAggregation::Mean,
        }
    }

    /// ML-100K leave-one-out rows, f32 encoder, the paper's mean aggregation.
    pub fn ml100k(
        ml100k: impl Into<PathBuf>,
        encoder: impl Into<PathBuf>,
        index: impl Into<PathBuf>,
    ) -> DataSpec {
        DataSpec {
            dataset: DatasetName::Ml100k,
            ml100k: ml100k.into(),
            ml1m: None,
            encoder: encoder.into(),
            encoder_precision: Precision::F32,
            index: index.into(),
            aggregation: IndexAggregation::Mean,
        }
    }
}

/// What a rows file was made with; kept next to it (`ROWS.config.json`) so that a resumed
/// run cannot mix settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Which rows.
    pub dataset: DatasetName,
    /// The scorer's identity.
    pub model: String,
    /// The encoder's fingerprint.
    pub encoder: String,
    /// The index's message passing.
    pub aggregation: IndexAggregation,
    /// The instruction wording.
    pub style: String,
    /// How the instruction reaches the model.
    pub wrap: String,
    /// The retrieval settings.
    pub retrieval: String,
    /// The candidate sampling seed.
    pub seed: u64,
    /// Triples in a KG-Text prompt, and KAPING's k.
    pub max_triples: usize,
}

/// What an evaluation run ([`super::EvalSpec`], [`super::AdapterSpec`]) scored and its table.
#[derive(Debug, Clone)]
pub struct Report {
    /// Every row of the requested range, methods and M: earlier runs' and this one's.
    pub rows: Vec<ScoredRow>,
    /// ACC and Recall@3/5/10 per (method, M), with 95% bootstrap intervals.
    pub summary: Vec<MethodSummary>,
    /// The settings of the rows file.
    pub config: RunConfig,
    /// The Markdown table of [`Report::summary`].
    pub table: String,
    /// Units (row, method, M) scored by this run.
    pub scored: usize,
    /// Units already in the rows file.
    pub already: usize,
    /// Scores answered by the score cache.
    pub cache_hits: usize,
    /// Seconds spent scoring.
    pub seconds: f64,
}

impl Report {
    /// Writes `results.md` (the table) and `results.json` (settings and summary) into `dir`,
    /// each atomically.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let dir = RunDir::new(dir);
        dir.write("results.md", self.table.as_bytes())?;
        dir.write_json(
            "results.json",
            &serde_json::json!({ "config": self.config, "summary": self.summary }),
        )?;
        Ok(())
    }
}

/// The files [`Report::write`] writes.
pub const RESULT_FILES: [&str; 2] = ["results.md", "results.json"];

/// Triples recorded per row (as the KG-Text method's prompt gets).
pub const MAX_TRIPLES: usize = 10;

/// The report of `rows` (ACC and Recall@3/5/10 with bootstrap intervals) and its table.
pub(super) fn report(
    rows: Vec<ScoredRow>,
    dataset: Dataset,
    config: RunConfig,
    what: &str,
    counts: [usize; 3],
    seconds: f64,
) -> Result<Report> {
    let summary = summarize(&rows, &[3, 5, 10], 1000, 0.95, 0)?;
    let table = render(&summary, dataset, &config, what);
    let [scored, already, cache_hits] = counts;
    Ok(Report {
        rows,
        summary,
        config,
        table,
        scored,
        already,
        cache_hits,
        seconds,
    })
}

/// The rows file `out` of a run with `config`, resumed ([`RowsFile::resume`]: other settings
/// refused, a torn last line cut off and noted).
pub(super) fn resume(
    out: &Path,
    config: &RunConfig,
    progress: &dyn Progress,
) -> Result<Resumed<ScoredRow>> {
    use pgraphrag_eval::Error as E;
    let resumed = RowsFile::resume(out, config).map_err(|e| match e {
        E::OtherSettings { .. } | E::Manifest { .. } | E::RowsLine { .. } => {
            Error::Setting(format!("{e}; pass another rows file (out)"))
        }
        e => Error::work(format!("resuming {}", out.display()))(e),
    })?;
    if resumed.torn {
        progress.note(&format!(
            "{}: dropped a torn last line (an interrupted write; its unit is scored again)",
            out.display()
        ));
    }
    Ok(resumed)
}

pub(super) fn render(
    summary: &[MethodSummary],
    dataset: Dataset,
    config: &RunConfig,
    what: &str,
) -> String {
    let mut s = format!(
        "K-RagRec {what} on {} ({}; prompt {}, wrap {}, retrieval {}, seed {}). \
         Bootstrap 95% intervals, 1,000 resamples of the rows.\n\n\
         | method | M | rows | with knowledge | chance (1/M) | ACC | R@3 | R@5 | R@10 |\n\
         |---|---:|---:|---:|---:|---|---|---|---|\n",
        dataset.name(),
        config.model,
        config.style,
        config.wrap,
        config.retrieval,
        config.seed
    );
    for m in summary {
        let cell = |v: f64, i: &[f64; 2]| format!("{v:.3} [{:.3}, {:.3}]", i[0], i[1]);
        let r = |k: usize| {
            m.recall
                .iter()
                .position(|(kk, _)| *kk == k)
                .map_or("–".to_string(), |j| {
                    cell(m.recall[j].1, &m.intervals[j + 1])
                })
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.3} | {} | {} | {} | {} |\n",
            m.method,
            m.m,
            m.rows,
            m.with_knowledge,
            1.0 / m.m as f64,
            cell(m.acc, &m.intervals[0]),
            r(3),
            r(5),
            r(10)
        ));
    }
    s
}

/// The sentence encoder at `dir` (normalised vectors, `precision`'s linear layers) and its
/// fingerprint.
pub(crate) fn encoder(dir: &Path, precision: Precision) -> Result<(BertEncoder, String)> {
    let e = BertEncoder::load_with(
        dir,
        EncoderOptions {
            normalize: true,
            precision,
            ..EncoderOptions::default()
        },
    )
    .map_err(Error::input(format!(
        "loading the encoder {}",
        dir.display()
    )))?;
    let id = e.fingerprint()?;
    Ok((e, id))
}

/// Everything loaded for K-RagRec rows.
pub(super) struct Loaded {
    pub(super) kg: MovieKg,
    pub(super) data: EvalData,
    pub(super) enc: BertEncoder,
    pub(super) enc_id: String,
    pub(super) vectors: HopVectors,
}

/// The ML-100K KG and the rows of `dataset` (ML-1M needs its folder).
pub(crate) fn load_data(
    dataset: DatasetName,
    ml100k: &Path,
    ml1m: Option<&Path>,
) -> Result<(MovieKg, EvalData)> {
    let ml = Ml100k::load(ml100k).map_err(Error::invalid)?;
    let kg = build_kg(&ml)?;
    let data = match dataset {
        DatasetName::Ml100k => EvalData::ml100k(&ml, &kg)?,
        DatasetName::Ml1m => {
            let dir = ml1m.ok_or_else(|| {
                Error::Setting(
                    "the ml1m dataset needs the MovieLens-1M slice's folder (ml1m)".into(),
                )
            })?;
            EvalData::ml1m(&Ml1m::load(dir).map_err(Error::invalid)?, &ml, &kg)?
        }
    };
    Ok((kg, data))
}

impl DataSpec {
    /// Loads the dataset, the KG, the sentence encoder and the index (built and saved when
    /// missing).
    pub(super) fn load(&self, progress: &dyn Progress) -> Result<Loaded> {
        let (kg, data) = load_data(self.dataset, &self.ml100k, self.ml1m.as_deref())?;
        let (enc, enc_id) = encoder(&self.encoder, self.encoder_precision)?;
        let vectors = open_index(&self.index, self.aggregation, &enc, &enc_id, &kg, progress)?;
        Ok(Loaded {
            kg,
            data,
            enc,
            enc_id,
            vectors,
        })
    }
}

/// The rows `start..start + count` of `data`; none is a setting error.
pub(super) fn slice(data: &mut EvalData, start: usize, count: usize) -> Result<()> {
    data.slice(start, count);
    if data.rows.is_empty() {
        return Err(Error::Setting(format!(
            "no rows in {}..{} of the {} dataset",
            start,
            start + count,
            data.dataset.name()
        )));
    }
    Ok(())
}

/// The index at `path`, or built (with `aggregation`) and saved there.
pub(super) fn open_index(
    path: &Path,
    aggregation: IndexAggregation,
    enc: &BertEncoder,
    enc_id: &str,
    kg: &MovieKg,
    progress: &dyn Progress,
) -> Result<HopVectors> {
    if path.exists() {
        return HopVectors::load(path, enc_id, &kg.graph, Some(enc.dim())).map_err(Error::invalid);
    }
    let opts = IndexOptions {
        aggregation: aggregation.into(),
        ..IndexOptions::default()
    };
    let v = HopVectors::build(&kg.graph, enc, enc_id, &opts, progress)?;
    v.save(path)?;
    progress.note(&format!("built and saved the index {}", path.display()));
    Ok(v)
}

impl Loaded {
    /// What the features and retrieval were made with: the encoder file's `features` and
    /// part of the retrieval cache's key.
    pub(super) fn features_id(&self) -> String {
        format!("{}|{}|hop0", self.enc_id, self.vectors.aggregation().name())
    }

    /// What a trained encoder (or soft prompt) records as its features: [`features_id`],
    /// and the ablated variant unless it is K-RagRec itself, so evaluating it with another
    /// variant's retrieval is refused.
    pub(super) fn adapter_features(&self, ablation: Ablation) -> String {
        match ablation {
            Ablation::Full => self.features_id(),
            a => format!("{}|ablation{}", self.features_id(), a.name()),
        }
    }

    /// The retrieval cache's key: settings, index and KG identity.
    pub(super) fn cache_key(&self, retrieval: &Retrieval) -> String {
        format!(
            "{}|{}|kg{:016x}|{:?}|triples{MAX_TRIPLES}",
            self.features_id(),
            self.data.dataset.name(),
            self.vectors.kg_fingerprint(),
            retrieval
        )
    }

    /// The retrieval cache at `path` for `retrieval`.
    pub(super) fn retrieval_cache(
        &self,
        path: &Path,
        retrieval: &Retrieval,
    ) -> Result<RetrievalCache> {
        RetrievalCache::open(path, &self.cache_key(retrieval)).map_err(Error::invalid)
    }
}

/// Each of `rows`' retrieval, from `cache` or retrieved (and saved every 100 rows and at the
/// end, so an interrupted run keeps what it retrieved).
pub(super) fn retrieve_rows(
    retriever: &KgRetriever<'_>,
    data: &EvalData,
    rows: &[(usize, Row)],
    cache: &mut RetrievalCache,
    progress: &dyn Progress,
) -> Result<Vec<CachedRetrieval>> {
    progress.start(rows.len() as u64, "rows retrieved");
    let mut out = Vec::with_capacity(rows.len());
    for (n, (i, row)) in rows.iter().enumerate() {
        let r = match cache.get(*i) {
            Some(r) => r.clone(),
            None => {
                let r = retrieve_row(
                    retriever,
                    &data.popularity,
                    &data.titles,
                    &row.history,
                    MAX_TRIPLES,
                )
                .map_err(Error::work(format!("retrieving row {i}")))?;
                cache.insert(*i, r.clone());
                r
            }
        };
        out.push(r);
        if n % 100 == 99 {
            cache.save()?;
        }
        progress.advance(1);
    }
    cache.save()?;
    progress.finish();
    Ok(out)
}

/// `given`, or the retrieval cache next to `out` (`OUT.retrieval.json`).
pub fn retrieval_cache_path(given: Option<&Path>, out: &Path) -> PathBuf {
    given.map(Path::to_path_buf).unwrap_or_else(|| {
        let mut p = out.as_os_str().to_owned();
        p.push(".retrieval.json");
        p.into()
    })
}
