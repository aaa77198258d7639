//! K-RagRec's flags as the commands share them (`recsys index`, `recsys eval` with and
//! without `--adapter`, `train kragrec`), their mapping to `pgraphrag_runs::kragrec`'s
//! specs, the output checks made before anything loads, and the report's rendering.
use std::path::{Path, PathBuf};

use pgraphrag_runs::kragrec::{DataSpec, DatasetName, IndexAggregation, RESULT_FILES, Report};

use crate::error::usage;

/// Message passing of the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AggregationArg {
    /// The paper's parameter-free mean with relation vectors (default).
    Mean,
    /// The released code's untrained sym-normalised GCN (seed 0).
    Released,
}

impl From<AggregationArg> for IndexAggregation {
    fn from(a: AggregationArg) -> Self {
        match a {
            AggregationArg::Mean => IndexAggregation::Mean,
            AggregationArg::Released => IndexAggregation::Released,
        }
    }
}

/// Which rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DatasetArg {
    /// MovieLens-100K leave-one-out rows.
    Ml100k,
    /// The MovieLens-1M slice's rows.
    Ml1m,
}

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

impl DataArgs {
    /// The spec these flags say; `--dataset ml1m` needs `--ml1m`.
    pub(crate) fn spec(&self) -> anyhow::Result<DataSpec> {
        let dataset = match self.dataset {
            DatasetArg::Ml100k => DatasetName::Ml100k,
            DatasetArg::Ml1m if self.ml1m.is_none() => {
                return Err(usage(
                    "--dataset ml1m needs --ml1m DIR (the MovieLens-1M slice)",
                ));
            }
            DatasetArg::Ml1m => DatasetName::Ml1m,
        };
        Ok(DataSpec {
            dataset,
            ml100k: self.ml100k.clone(),
            ml1m: self.ml1m.clone(),
            encoder: self.encoder.clone(),
            encoder_precision: self.encoder_precision,
            index: self.index.clone(),
            aggregation: self.aggregation.into(),
        })
    }
}

/// Prints an evaluation's counts and table and, with `results`, writes them there.
pub(crate) fn show(report: &Report, out: &Path, results: Option<&Path>) -> anyhow::Result<()> {
    eprintln!(
        "scored {} units in {:.1} s ({} from the score cache); {} were already in {}",
        report.scored,
        report.seconds,
        report.cache_hits,
        report.already,
        out.display()
    );
    print!("{}", report.table);
    if let Some(dir) = results {
        report.write(dir)?;
    }
    Ok(())
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
        crate::output::folder("--results", dir, &RESULT_FILES, &all.list())?;
    }
    for &(flag, path) in outputs {
        let Some(path) = path else { continue };
        let others: Vec<_> = all.list().into_iter().filter(|(f, _)| *f != flag).collect();
        crate::output::file(flag, path, &others)?;
    }
    Ok(())
}
