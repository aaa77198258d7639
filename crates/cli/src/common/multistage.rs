//! What `multistage run` and `multistage export` share: the examples file, the dense
//! retriever and its warm-up, WordNet, and the five context rankers.
use std::path::Path;

use anyhow::Context;
use pgraphrag_core::Progress;
use pgraphrag_corpora::multistage::{Example, read_examples};
use pgraphrag_eval::multistage::RankerName;
use pgraphrag_retrieval::dense::DenseRetriever;
use pgraphrag_stages::multistage::{
    ContextRanker, RankDocBM25, RankDocBySnpt, RankDocs, RankSnippet, RecentDoc,
};

use crate::error::{OrUsage, usage};

/// Reads an examples file (bad input: exit code 2).
pub(crate) fn load_examples(path: &Path) -> anyhow::Result<Vec<Example>> {
    read_examples(path)
        .with_context(|| {
            format!(
                "reading the examples {} (write them with `pgraphrag multistage build`)",
                path.display()
            )
        })
        .or_usage()
}

/// The dense retriever over the MiniLM folder `dir` at `precision`, its embeddings cached in
/// `cache` (keyed by the encoder and its precision).
pub(crate) fn load_dense(
    dir: &Path,
    precision: pgraphrag_retrieval::dense::Precision,
    cache: Option<&Path>,
) -> anyhow::Result<DenseRetriever> {
    if !dir.join("config.json").is_file() {
        return Err(usage(format!(
            "no dense encoder at {} (scripts/fetch-minilm.sh fetches MiniLM; or pass --encoder DIR)",
            dir.display()
        )));
    }
    let mut b = DenseRetriever::builder(dir).precision(precision);
    if let Some(c) = cache {
        b = b.cache(c);
    }
    b.build()
        .with_context(|| format!("loading the dense encoder {}", dir.display()))
}

/// What the dense stages will read, encoded up front ([`warm_dense`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Warm {
    /// The past documents whole (RankDocDense).
    pub docs: bool,
    /// Their snippets (RankSnippet, RankDocBySnpt, the summary weak label's candidates).
    pub snippets: bool,
    /// The immediate contexts (the dense rankers' queries).
    pub queries: bool,
    /// The targets' snippets (the summary weak label's gold).
    pub gold: bool,
}

impl Warm {
    /// What `rankers` and (with `labels`) the summary weak label read.
    pub(crate) fn for_stages(rankers: &[RankerName], labels: bool) -> Warm {
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
pub(crate) fn warm_dense(
    dense: &DenseRetriever,
    examples: &[Example],
    warm: Warm,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
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
        .context("encoding the past documents")?;
    Ok(())
}

/// WordNet from `--wordnet`, else from the METEOR search list; missing is bad input.
pub(crate) fn load_wordnet(
    dir: Option<&Path>,
) -> anyhow::Result<&'static pgraphrag_metrics::wordnet::WordNet> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => crate::wordnet::locate()
            .context("the synthesis weak label needs WordNet 3.0 (scripts/fetch-wordnet.sh, or --wordnet DIR)")
            .or_usage()?,
    };
    pgraphrag_metrics::wordnet::WordNet::global_in(&dir)
        .with_context(|| format!("loading WordNet from {}", dir.display()))
        .or_usage()
}

/// The three dense rankers over one retriever: RankDocDense, RankSnippet, RankDocBySnpt.
struct DenseRankers<'d> {
    docs: RankDocs<&'d DenseRetriever>,
    snippets: RankSnippet<&'d DenseRetriever>,
    by_snippets: RankDocBySnpt<&'d DenseRetriever>,
}

/// The five rankers over one dense retriever (`None`: BM25 and recency only).
pub(crate) struct Rankers<'d> {
    bm25: RankDocBM25,
    dense: Option<DenseRankers<'d>>,
}

impl<'d> Rankers<'d> {
    pub(crate) fn new(dense: Option<&'d DenseRetriever>) -> Self {
        Rankers {
            bm25: RankDocBM25::bm25(),
            dense: dense.map(|d| DenseRankers {
                docs: RankDocs::new(d),
                snippets: RankSnippet::new(d),
                by_snippets: RankDocs::by_snippets(d),
            }),
        }
    }

    /// The named rankers; a dense one without the retriever is a usage error.
    pub(crate) fn pick(
        &self,
        names: &[RankerName],
    ) -> anyhow::Result<Vec<(RankerName, &dyn ContextRanker)>> {
        names
            .iter()
            .map(|&n| {
                let r: &dyn ContextRanker = match (n, &self.dense) {
                    (RankerName::RecentDoc, _) => &RecentDoc,
                    (RankerName::RankDocBM25, _) => &self.bm25,
                    (RankerName::RankDocDense, Some(d)) => &d.docs,
                    (RankerName::RankSnippet, Some(d)) => &d.snippets,
                    (RankerName::RankDocBySnpt, Some(d)) => &d.by_snippets,
                    (n, None) => return Err(usage(format!("{n} needs the dense encoder"))),
                };
                Ok((n, r))
            })
            .collect()
    }
}
