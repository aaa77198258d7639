//! K-RagRec as the commands share it (`recsys index`, `recsys eval` with and without
//! `--adapter`, `train kragrec`): the dataset, index and aggregation flags, the output checks
//! made before anything loads, the data, KG, encoder and index setup, the cached per-row
//! retrieval, and the rows file's settings, resumption and ACC/Recall report.
use std::path::{Path, PathBuf};

use anyhow::Context;
use pgraphrag_core::Progress;
use pgraphrag_eval::{Resumed, RowsFile, RunDir};
use pgraphrag_recsys::{
    Aggregation, Dataset, EvalData, HopVectors, IndexOptions, KgRetriever, MethodSummary, Ml1m,
    Ml100k, MovieKg, Retrieval, Row, ScoredRow, build_kg, summarize,
};
use pgraphrag_retrieval::dense::{BertEncoder, EncoderOptions};
use pgraphrag_train::{Ablation, CachedRetrieval, RetrievalCache, retrieve_row};
use serde::{Deserialize, Serialize};

use crate::error::{OrUsage, usage};
use crate::progress::Bar;

/// Message passing of the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum AggregationArg {
    /// The paper's parameter-free mean with relation vectors (default).
    Mean,
    /// The released code's untrained sym-normalised GCN (seed 0).
    Released,
}

impl From<AggregationArg> for Aggregation {
    fn from(a: AggregationArg) -> Self {
        match a {
            AggregationArg::Mean => Aggregation::Mean,
            AggregationArg::Released => Aggregation::ReleasedGcn { seed: 0 },
        }
    }
}

/// Which rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum DatasetArg {
    /// MovieLens-100K leave-one-out rows.
    Ml100k,
    /// The MovieLens-1M slice's rows.
    Ml1m,
}

/// The sentence encoder at `dir` (normalised vectors, `precision`'s linear layers) and its
/// fingerprint; a folder that does not load is bad input.
pub(crate) fn encoder(
    dir: &Path,
    precision: pgraphrag_retrieval::dense::Precision,
) -> anyhow::Result<(BertEncoder, String)> {
    let e = BertEncoder::load_with(
        dir,
        EncoderOptions {
            normalize: true,
            precision,
            ..EncoderOptions::default()
        },
    )
    .with_context(|| format!("loading the encoder {}", dir.display()))
    .or_usage()?;
    let id = e.fingerprint()?;
    Ok((e, id))
}

/// What a rows file was made with; kept next to it (`ROWS.config.json`) so that a resumed
/// run cannot mix settings.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunConfig {
    pub dataset: DatasetArg,
    pub model: String,
    pub encoder: String,
    pub aggregation: AggregationArg,
    pub style: String,
    pub wrap: String,
    pub retrieval: String,
    pub seed: u64,
    pub max_triples: usize,
}

/// Summarises `rows` (ACC and Recall@3/5/10 with bootstrap intervals), prints the table and,
/// with `results`, writes it there as `results.md` and `results.json` (with `config`).
pub(crate) fn report(
    rows: &[ScoredRow],
    dataset: Dataset,
    config: &RunConfig,
    what: &str,
    results: Option<&Path>,
) -> anyhow::Result<()> {
    let summary = summarize(rows, &[3, 5, 10], 1000, 0.95, 0)?;
    let table = render(&summary, dataset, config, what);
    print!("{table}");
    if let Some(dir) = results {
        let dir = RunDir::new(dir);
        dir.write("results.md", table.as_bytes())?;
        dir.write_json(
            "results.json",
            &serde_json::json!({ "config": config, "summary": summary }),
        )?;
    }
    Ok(())
}

/// The rows file `out` of a run with `config`, resumed ([`RowsFile::resume`]: other settings
/// refused, a torn last line cut off); other settings, or a file that is not a rows file, is
/// bad usage.
pub(crate) fn resume(out: &Path, config: &RunConfig) -> anyhow::Result<Resumed<ScoredRow>> {
    use pgraphrag_eval::Error;
    let resumed = RowsFile::resume(out, config).map_err(|e| match e {
        Error::OtherSettings { .. } | Error::Manifest { .. } | Error::RowsLine { .. } => {
            usage(format!("{e}; pass another --out"))
        }
        e => anyhow::Error::new(e).context(format!("resuming {}", out.display())),
    })?;
    if resumed.torn {
        eprintln!(
            "{}: dropped a torn last line (an interrupted write; its unit is scored again)",
            out.display()
        );
    }
    Ok(resumed)
}

pub(crate) fn render(
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

/// Triples recorded per row (as the KG-Text method's prompt gets).
pub(crate) const MAX_TRIPLES: usize = 10;

/// Where the K-RagRec rows come from: the flags `train kragrec` and `recsys eval` share.
#[derive(clap::Args, Debug)]
pub(crate) struct DataArgs {
    /// Which rows: ML-100K leave-one-out or the ML-1M slice.
    #[arg(long, value_enum, default_value = "ml1m")]
    pub dataset: DatasetArg,
    /// The ML-100K folder (its KG serves both datasets).
    #[arg(long)]
    pub ml100k: PathBuf,
    /// The ML-1M slice folder (movies.dat, test_filtered.csv, movies_id_name.txt).
    #[arg(long)]
    pub ml1m: Option<PathBuf>,
    /// BERT encoder folder (retrieval queries, node and relation features).
    #[arg(long)]
    pub encoder: PathBuf,
    /// The encoder's linear layers: f32, or int8 (quantized at load, about twice as fast
    /// with AVX-512 VNNI; its vectors and index are keyed apart from f32's).
    #[arg(long, default_value = "f32")]
    pub encoder_precision: pgraphrag_retrieval::dense::Precision,
    /// The index file: loaded when it exists, else built and saved there.
    #[arg(long)]
    pub index: PathBuf,
    /// Message passing when the index is built.
    #[arg(long, value_enum, default_value = "mean")]
    pub aggregation: AggregationArg,
}

/// The files a K-RagRec command reads or keeps, with their flags, for the output checks
/// ([`crate::output`]) made before anything is loaded.
#[derive(Clone, Default)]
pub(crate) struct Inputs(Vec<(&'static str, PathBuf)>);

impl Inputs {
    /// The ML-100K files in `ml100k` and the ML-1M slice's files in `ml1m`.
    pub(crate) fn dataset(ml100k: &Path, ml1m: Option<&Path>) -> Inputs {
        let mut v: Vec<(&'static str, PathBuf)> = pgraphrag_recsys::ML100K_FILES
            .iter()
            .map(|f| ("--ml100k", ml100k.join(f)))
            .collect();
        if let Some(d) = ml1m {
            for f in ["movies.dat", "test_filtered.csv", "movies_id_name.txt"] {
                v.push(("--ml1m", d.join(f)));
            }
        }
        Inputs(v)
    }

    /// These inputs and `path` of `flag`, when given.
    pub(crate) fn with(mut self, flag: &'static str, path: Option<&Path>) -> Inputs {
        if let Some(p) = path {
            self.0.push((flag, p.to_path_buf()));
        }
        self
    }

    /// As [`crate::output::file`] takes them.
    pub(crate) fn list(&self) -> Vec<crate::output::Input<'_>> {
        self.0.iter().map(|(f, p)| (*f, p.as_path())).collect()
    }
}

/// Checks, before anything is loaded, the outputs of `recsys eval` and `train kragrec`:
/// `--index` (written when it is not a file yet) against the inputs, each of `outputs` (flag, path)
/// against the inputs, the index and the other outputs, and the `--results` folder's files.
pub(crate) fn check_outputs(
    inputs: Inputs,
    index: &Path,
    outputs: &[(&'static str, Option<&Path>)],
    results: Option<&Path>,
) -> anyhow::Result<()> {
    if !index.is_file() {
        // Built and saved there; an existing index (through a link too) is only read.
        crate::output::file("--index", index, &inputs.list())?;
    }
    let mut all = inputs.with("--index", Some(index));
    for &(flag, path) in outputs {
        all = all.with(flag, path);
    }
    if let Some(dir) = results {
        let files = ["results.md", "results.json"];
        crate::output::folder("--results", dir, &files, &all.list())?;
    }
    for &(flag, path) in outputs {
        let Some(path) = path else { continue };
        let others: Vec<_> = all.list().into_iter().filter(|(f, _)| *f != flag).collect();
        crate::output::file(flag, path, &others)?;
    }
    Ok(())
}

/// Everything loaded for K-RagRec rows.
pub(crate) struct Loaded {
    pub kg: MovieKg,
    pub data: EvalData,
    pub enc: BertEncoder,
    pub enc_id: String,
    pub vectors: HopVectors,
}

/// The ML-100K KG and the rows of `dataset` (ML-1M needs its folder, `--ml1m`).
pub(crate) fn load_data(
    dataset: DatasetArg,
    ml100k: &Path,
    ml1m: Option<&Path>,
) -> anyhow::Result<(MovieKg, EvalData)> {
    let ml = Ml100k::load(ml100k).or_usage()?;
    let kg = build_kg(&ml)?;
    let data = match dataset {
        DatasetArg::Ml100k => EvalData::ml100k(&ml, &kg)?,
        DatasetArg::Ml1m => {
            let dir = ml1m
                .ok_or_else(|| usage("--dataset ml1m needs --ml1m DIR (the MovieLens-1M slice)"))?;
            EvalData::ml1m(&Ml1m::load(dir).or_usage()?, &ml, &kg)?
        }
    };
    Ok((kg, data))
}

/// Loads the dataset, the KG, the sentence encoder and the index (built and saved when
/// missing).
pub(crate) fn load(a: &DataArgs, bar: &Bar) -> anyhow::Result<Loaded> {
    let (kg, data) = load_data(a.dataset, &a.ml100k, a.ml1m.as_deref())?;
    let (enc, enc_id) = encoder(&a.encoder, a.encoder_precision)?;
    let vectors = open_index(&a.index, a.aggregation, &enc, &enc_id, &kg, bar)?;
    Ok(Loaded {
        kg,
        data,
        enc,
        enc_id,
        vectors,
    })
}

/// The index at `path`, or built (with `aggregation`) and saved there.
pub(crate) fn open_index(
    path: &Path,
    aggregation: AggregationArg,
    enc: &BertEncoder,
    enc_id: &str,
    kg: &MovieKg,
    bar: &Bar,
) -> anyhow::Result<HopVectors> {
    if path.exists() {
        return HopVectors::load(path, enc_id, &kg.graph, Some(enc.dim())).or_usage();
    }
    let opts = IndexOptions {
        aggregation: aggregation.into(),
        ..IndexOptions::default()
    };
    let v = HopVectors::build(&kg.graph, enc, enc_id, &opts, bar)?;
    v.save(path)?;
    eprintln!("built and saved the index {}", path.display());
    Ok(v)
}

/// What the features and retrieval were made with: the encoder file's `features` and part of
/// the retrieval cache's key.
pub(crate) fn features_id(l: &Loaded) -> String {
    format!("{}|{}|hop0", l.enc_id, l.vectors.aggregation().name())
}

/// What a trained encoder (or soft prompt) records as its features: [`features_id`], and the
/// ablated variant unless it is K-RagRec itself, so evaluating it with another variant's
/// retrieval is refused.
pub(crate) fn adapter_features(l: &Loaded, ablation: Ablation) -> String {
    match ablation {
        Ablation::Full => features_id(l),
        a => format!("{}|ablation{}", features_id(l), a.name()),
    }
}

/// The retrieval cache's key: settings, index and KG identity.
pub(crate) fn cache_key(l: &Loaded, retrieval: &Retrieval) -> String {
    format!(
        "{}|{}|kg{:016x}|{:?}|triples{MAX_TRIPLES}",
        features_id(l),
        l.data.dataset.name(),
        l.vectors.kg_fingerprint(),
        retrieval
    )
}

/// Each of `rows`' retrieval, from `cache` or retrieved (and saved every 100 rows and at the
/// end, so an interrupted run keeps what it retrieved).
pub(crate) fn retrieve_rows(
    retriever: &KgRetriever<'_>,
    data: &EvalData,
    rows: &[(usize, Row)],
    cache: &mut RetrievalCache,
    bar: &Bar,
) -> anyhow::Result<Vec<CachedRetrieval>> {
    bar.start(rows.len() as u64, "rows retrieved");
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
                .with_context(|| format!("row {i}"))?;
                cache.insert(*i, r.clone());
                r
            }
        };
        out.push(r);
        if n % 100 == 99 {
            cache.save()?;
        }
        bar.advance(1);
    }
    cache.save()?;
    bar.finish();
    Ok(out)
}

/// The retrieval cache next to `out` (`OUT.retrieval.json`) unless given.
pub(crate) fn cache_path(given: Option<&Path>, out: &Path) -> PathBuf {
    given.map(Path::to_path_buf).unwrap_or_else(|| {
        let mut p = out.as_os_str().to_owned();
        p.push(".retrieval.json");
        p.into()
    })
}
