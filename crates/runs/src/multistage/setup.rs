//! What the multistage runs share: the examples file, the dense retriever and its warm-up,
//! WordNet and the five context rankers.
use std::path::Path;

use pgraphrag_core::Progress;
use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_corpora::multistage::{Example, read_examples};
use pgraphrag_eval::multistage::RankerName;
use pgraphrag_retrieval::dense::{DenseRetriever, Precision};
use pgraphrag_stages::multistage::{
    ContextRanker, RankDocBM25, RankDocBySnpt, RankDocs, RankSnippet, RecentDoc,
};

use crate::{Error, Result};

/// Reads an examples file.
pub(super) fn load_examples(path: &Path) -> Result<Vec<Example>> {
    read_examples(path).map_err(Error::input(format!(
        "reading the examples {} (write them with `pgraphrag multistage build`)",
        path.display()
    )))
}

/// The examples of `split` among `all` (read from `path`), in file order, the first `limit` of
/// them; none is an error naming the file and the split.
pub(super) fn split_examples(
    all: &[Example],
    path: &Path,
    split: SplitName,
    limit: Option<usize>,
) -> Result<Vec<Example>> {
    let mut examples: Vec<Example> = all.iter().filter(|e| e.split == split).cloned().collect();
    if let Some(n) = limit {
        examples.truncate(n);
    }
    if examples.is_empty() {
        return Err(Error::Setting(format!(
            "{} has no {} examples",
            path.display(),
            split.as_str()
        )));
    }
    Ok(examples)
}

/// The dense retriever over the MiniLM folder `dir` at `precision`, its embeddings cached in
/// `cache` (keyed by the encoder and its precision).
pub(super) fn load_dense(
    dir: &Path,
    precision: Precision,
    cache: Option<&Path>,
) -> Result<DenseRetriever> {
    if !dir.join("config.json").is_file() {
        return Err(Error::Setting(format!(
            "no dense encoder at {} (scripts/fetch-minilm.sh fetches MiniLM; or name another encoder folder)",
            dir.display()
        )));
    }
    let mut b = DenseRetriever::builder(dir).precision(precision);
    if let Some(c) = cache {
        b = b.cache(c);
    }
    b.build().map_err(Error::work(format!(
        "loading the dense encoder {}",
        dir.display()
    )))
}

/// What the dense stages will read, encoded up front ([`warm_dense`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Warm {
    /// The past documents whole (RankDocDense).
    docs: bool,
    /// Their snippets (RankSnippet, RankDocBySnpt, the summary weak label's candidates).
    snippets: bool,
    /// The immediate contexts (the dense rankers' queries).
    queries: bool,
    /// The targets' snippets (the summary weak label's gold).
    gold: bool,
}

impl Warm {
    /// What `rankers` and (with `labels`) the summary weak label read.
    pub(super) fn for_stages(rankers: &[RankerName], labels: bool) -> Warm {
        Warm {
            docs: rankers.contains(&RankerName::RankDocDense),
            snippets: labels
                || rankers.contains(&RankerName::RankSnippet)
                || rankers.contains(&RankerName::RankDocBySnpt),
            queries: rankers.iter().any(|r| r.is_dense()),
            gold: labels,
        }
    }
}

/// Encodes what `warm` names, in length-sorted batches, and keeps it in memory (each distinct
/// text once), so the stages only look vectors up.
pub(super) fn warm_dense(
    dense: &DenseRetriever,
    examples: &[Example],
    warm: Warm,
    progress: &dyn Progress,
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    let mut texts: Vec<String> = Vec::new();
    let mut push = |t: String| {
        if seen.insert(t.clone()) {
            texts.push(t);
        }
    };
    for e in examples {
        if warm.queries {
            push(e.immediate_context.clone());
        }
        for c in &e.context {
            if warm.docs {
                push(c.text.clone());
            }
            if warm.snippets {
                for s in pgraphrag_text::snippets(&c.text, 250) {
                    push(s);
                }
            }
        }
        if warm.gold {
            for s in pgraphrag_text::snippets(&e.target, 250) {
                push(s);
            }
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    dense
        .warm(&refs, progress)
        .map_err(Error::work("encoding the past documents"))
}

/// WordNet 3.0 from `dir`.
pub(super) fn load_wordnet(dir: &Path) -> Result<&'static pgraphrag_metrics::wordnet::WordNet> {
    pgraphrag_metrics::wordnet::WordNet::global_in(dir).map_err(Error::input(format!(
        "loading WordNet from {}",
        dir.display()
    )))
}

/// The three dense rankers over one retriever: RankDocDense, RankSnippet, RankDocBySnpt.
pub(super) struct DenseRankers<'d> {
    docs: RankDocs<&'d DenseRetriever>,
    snippets: RankSnippet<&'d DenseRetriever>,
    by_snippets: RankDocBySnpt<&'d DenseRetriever>,
}

/// The five rankers over one dense retriever (`None`: BM25 and recency only).
pub(super) struct Rankers<'d> {
    bm25: RankDocBM25,
    dense: Option<DenseRankers<'d>>,
}

impl<'d> Rankers<'d> {
    pub(super) fn new(dense: Option<&'d DenseRetriever>) -> Self {
        Rankers {
            bm25: RankDocBM25::bm25(),
            dense: dense.map(|d| DenseRankers {
                docs: RankDocs::new(d),
                snippets: RankSnippet::new(d),
                by_snippets: RankDocs::by_snippets(d),
            }),
        }
    }

    /// The named rankers; a dense one without the retriever is a setting error.
    pub(super) fn pick(
        &self,
        names: &[RankerName],
    ) -> Result<Vec<(RankerName, &dyn ContextRanker)>> {
        names
            .iter()
            .map(|&n| {
                let r: &dyn ContextRanker = match (n, &self.dense) {
                    (RankerName::RecentDoc, _) => &RecentDoc,
                    (RankerName::RankDocBM25, _) => &self.bm25,
                    (RankerName::RankDocDense, Some(d)) => &d.docs,
                    (RankerName::RankSnippet, Some(d)) => &d.snippets,
                    (RankerName::RankDocBySnpt, Some(d)) => &d.by_snippets,
                    (n, None) => {
                        return Err(Error::Setting(format!("{n} needs the dense encoder")));
                    }
                };
                Ok((n, r))
            })
            .collect()
    }
}
