//! The non-generation pipeline of one example (the recipe the grid and the export share): past
//! documents → ranked entries of each ranker → keywords → weak labels, each stage optional,
//! with the seconds spent per stage.
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use pgraphrag_core::Progress;
use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_corpora::multistage::Example;
use pgraphrag_stages::multistage::{
    AuthorDoc, ContextCut, ContextRanker, Idf, Keywords, PastDoc, RankedContext, SnippetSimilarity,
    SummaryWeakLabel, SynthesisWeakLabel, Synthesizer, WordFilter, WordMatcher, gold_snippets,
    summary_weak_label, synthesis_weak_label,
};
use serde::Serialize;

use super::RankerName;
use super::start::stage_error;
use crate::{Error, Result};

/// An example's past documents `D_t` (its `context`, oldest first) as the stages take them.
///
/// ```
/// use pgraphrag_corpora::{lamp::SplitName, multistage::{ContextDoc, Example}};
/// let ex = Example { id: "m2".into(), author: "kim".into(), split: SplitName::Train, time: 9,
///     immediate_context: "x".into(), target: "x y".into(),
///     context: vec![ContextDoc { doc_id: "m1".into(), time: 3, text: "Old".into() }] };
/// let past = pgraphrag_eval::multistage::past_docs(&ex);
/// assert_eq!((past[0].doc_id.as_str(), past[0].time, past[0].text.as_str()), ("m1", 3, "Old"));
/// ```
pub fn past_docs(example: &Example) -> Vec<PastDoc> {
    example
        .context
        .iter()
        .map(|c| PastDoc::new(c.doc_id.clone(), c.time, c.text.clone()))
        .collect()
}

/// The distinct documents of the training split, deduplicated by doc id, with their authors:
/// every train example's context documents (title and body, as the builder wrote them) in
/// first-appearance order, then the targets that are no train example's context document
/// (their body: the builder keeps no title with a target). A document that is both keeps its
/// context text. The document set of [`train_idf`] and of the author-distinction pairs.
///
/// ```
/// use pgraphrag_corpora::{lamp::SplitName, multistage::{ContextDoc, Example}};
/// let c = |id: &str| ContextDoc { doc_id: id.into(), time: 0, text: format!("T\n{id}") };
/// let ex = |id: &str, split, ctx: Vec<ContextDoc>| Example { id: id.into(), author: "a".into(), split,
///     time: 1, immediate_context: "T\n".into(), target: id.into(), context: ctx };
/// let examples = [ex("d2", SplitName::Train, vec![c("d0"), c("d1")]),
///                 ex("d3", SplitName::Train, vec![c("d0"), c("d1"), c("d2")]),
///                 ex("x9", SplitName::Test, vec![c("x0")])];
/// let docs = pgraphrag_eval::multistage::train_documents(&examples);
/// let ids: Vec<&str> = docs.iter().map(|d| d.doc_id).collect();
/// assert_eq!(ids, ["d0", "d1", "d2", "d3"]);
/// assert_eq!((docs[2].text, docs[3].text), ("T\nd2", "d3"));
/// ```
pub fn train_documents(examples: &[Example]) -> Vec<AuthorDoc<'_>> {
    let train = || examples.iter().filter(|e| e.split == SplitName::Train);
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for e in train() {
        for c in &e.context {
            if seen.insert(&c.doc_id) {
                out.push(AuthorDoc {
                    author: &e.author,
                    doc_id: &c.doc_id,
                    text: &c.text,
                });
            }
        }
    }
    for e in train() {
        if seen.insert(&e.id) {
            out.push(AuthorDoc {
                author: &e.author,
                doc_id: &e.id,
                text: &e.target,
            });
        }
    }
    out
}

/// The IDF table of the synthesis stages (l.118, 122), built once over [`train_documents`]:
/// every distinct document of the training split, past documents and targets (the default
/// reading of `pgraphrag_stages::multistage::Idf`, natural-log `ln(N / df)`). No train example
/// is an [`Error::InvalidInput`].
///
/// ```
/// use pgraphrag_corpora::{lamp::SplitName, multistage::{ContextDoc, Example}};
/// let ex = Example { id: "d1".into(), author: "a".into(), split: SplitName::Train, time: 1,
///     immediate_context: "tea".into(), target: "tea time".into(),
///     context: vec![ContextDoc { doc_id: "d0".into(), time: 0, text: "tea and jam".into() }] };
/// let idf = pgraphrag_eval::multistage::train_idf(&[ex]).unwrap();
/// assert_eq!((idf.documents(), idf.df("tea"), idf.df("jam")), (2, 2, 1));
/// ```
pub fn train_idf(examples: &[Example]) -> Result<Idf> {
    let docs = train_documents(examples);
    if docs.is_empty() {
        return Err(Error::InvalidInput(
            "the examples have no train split: the IDF table is built over its documents".into(),
        ));
    }
    Idf::from_documents(docs.iter().map(|d| d.text))
        .map_err(|e| Error::InvalidInput(pgraphrag_core::error_chain(&e)))
}

/// The summary weak label's settings (l.104–106): the gold is the target's snippets, the
/// candidates the snippets of `ranker`'s entries ([`RankedContext::snippets`]), scored by
/// `similarity` (the paper reuses the dense retriever's embeddings: `DenseSimilarity(&dense)`,
/// cosine with MiniLM here), joined by `joiner` (one space).
#[derive(Clone, Copy)]
pub struct SummaryLabeler<'a> {
    /// Whose entries are the candidates.
    pub ranker: RankerName,
    /// Snippet similarity.
    pub similarity: &'a dyn SnippetSimilarity,
    /// What joins the selected snippets.
    pub joiner: &'a str,
}

impl<'a> SummaryLabeler<'a> {
    /// Candidates from `ranker`, scored by `similarity`, joined by one space.
    pub fn new(ranker: RankerName, similarity: &'a dyn SnippetSimilarity) -> Self {
        SummaryLabeler {
            ranker,
            similarity,
            joiner: " ",
        }
    }
}

/// The synthesis weak label's settings (l.122–130): target words from `ranker`'s joined
/// entries, `filter` (stopwords, IDF ≥ 1.5 over [`train_idf`]) on both sides, `matcher`
/// (identical words and WordNet synonyms; no word vectors are shipped), no cap by default.
#[derive(Clone)]
pub struct SynthesisLabeler<'a> {
    /// Whose entries give the target words.
    pub ranker: RankerName,
    /// Stopwords and the IDF floor.
    pub filter: WordFilter<'a>,
    /// When two words match.
    pub matcher: WordMatcher<'a>,
    /// The most words kept (`None`: all, as the paper).
    pub max_words: Option<usize>,
}

impl<'a> SynthesisLabeler<'a> {
    /// Target words from `ranker`, no cap.
    pub fn new(ranker: RankerName, filter: WordFilter<'a>, matcher: WordMatcher<'a>) -> Self {
        SynthesisLabeler {
            ranker,
            filter,
            matcher,
            max_words: None,
        }
    }
}

/// What the non-generation stages made of one example.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The example's id.
    pub id: String,
    /// Its past documents `D_t`.
    pub past: Vec<PastDoc>,
    /// Per ranker, in the [`Preparer`]'s order: the ranked entries joined and cut (`E_t`).
    pub ranked: Vec<(RankerName, RankedContext)>,
    /// The context-independent keywords (`SynCtxInd`, l.118), when asked for.
    pub keywords: Option<Vec<String>>,
    /// The summary weak label `Join(L_t)`, when asked for.
    pub summary_label: Option<SummaryWeakLabel>,
    /// The synthesis weak label `Join(T_t)`, when asked for.
    pub synthesis_label: Option<SynthesisWeakLabel>,
}

impl Prepared {
    /// The ranked entries of `ranker`, if it ran.
    pub fn ranked(&self, ranker: RankerName) -> Option<&RankedContext> {
        self.ranked
            .iter()
            .find(|(r, _)| *r == ranker)
            .map(|(_, c)| c)
    }
}

/// Seconds spent per stage, summed over examples.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StageTimes {
    /// Examples prepared.
    pub examples: usize,
    /// Per ranker (by name): ranking and cutting.
    pub ranking: BTreeMap<String, f64>,
    /// The context-independent keywords.
    pub keywords: f64,
    /// The summary weak label (snippets and similarities).
    pub summary_label: f64,
    /// The synthesis weak label (word matching).
    pub synthesis_label: f64,
}

impl StageTimes {
    /// All stages together.
    ///
    /// ```
    /// let mut t = pgraphrag_eval::multistage::StageTimes::default();
    /// t.ranking.insert("RankDocBM25".into(), 1.5);
    /// t.keywords = 0.5;
    /// assert_eq!(t.total(), 2.0);
    /// ```
    pub fn total(&self) -> f64 {
        self.ranking.values().sum::<f64>()
            + self.keywords
            + self.summary_label
            + self.synthesis_label
    }
}

/// The non-generation pipeline: rankers (each over the example's past documents with its
/// immediate context as the query, cut by [`ContextCut::paper`]), and optionally keywords and
/// the two weak labels. See the module example in [`crate::multistage`].
#[derive(Clone)]
pub struct Preparer<'a> {
    /// The rankers, by name.
    pub rankers: Vec<(RankerName, &'a dyn ContextRanker)>,
    /// How ranked entries become one string (the paper: 2,500 characters, l.90).
    pub cut: ContextCut,
    /// The context-independent keywords (`Keywords::new(WordFilter::paper(&idf))`), if wanted.
    pub keywords: Option<Keywords<'a>>,
    /// The summary weak label, if wanted.
    pub summary_label: Option<SummaryLabeler<'a>>,
    /// The synthesis weak label, if wanted.
    pub synthesis_label: Option<SynthesisLabeler<'a>>,
}

impl<'a> Preparer<'a> {
    /// Ranking only, with the paper's cut.
    pub fn new(rankers: Vec<(RankerName, &'a dyn ContextRanker)>) -> Self {
        Preparer {
            rankers,
            cut: ContextCut::paper(),
            keywords: None,
            summary_label: None,
            synthesis_label: None,
        }
    }

    /// Also the context-independent keywords.
    pub fn with_keywords(mut self, keywords: Keywords<'a>) -> Self {
        self.keywords = Some(keywords);
        self
    }

    /// Also the summary weak label.
    pub fn with_summary_label(mut self, labeler: SummaryLabeler<'a>) -> Self {
        self.summary_label = Some(labeler);
        self
    }

    /// Also the synthesis weak label.
    pub fn with_synthesis_label(mut self, labeler: SynthesisLabeler<'a>) -> Self {
        self.synthesis_label = Some(labeler);
        self
    }

    /// Checks that every labeler's ranker is one of the rankers and no ranker is given twice.
    fn check(&self) -> Result<()> {
        for (i, (r, _)) in self.rankers.iter().enumerate() {
            if self.rankers[..i].iter().any(|(q, _)| q == r) {
                return Err(Error::InvalidInput(format!("ranker {r} is given twice")));
            }
        }
        let wanted = [
            self.summary_label.as_ref().map(|l| ("summary", l.ranker)),
            self.synthesis_label
                .as_ref()
                .map(|l| ("synthesis", l.ranker)),
        ];
        for (what, r) in wanted.into_iter().flatten() {
            if !self.rankers.iter().any(|(q, _)| *q == r) {
                return Err(Error::InvalidInput(format!(
                    "the {what} weak label reads the entries of {r}, which is not among the rankers"
                )));
            }
        }
        Ok(())
    }

    /// One example through every configured stage, adding the seconds to `times`.
    pub fn prepare(&self, example: &Example, times: &mut StageTimes) -> Result<Prepared> {
        self.check()?;
        self.prepare_checked(example, times)
    }

    fn prepare_checked(&self, ex: &Example, times: &mut StageTimes) -> Result<Prepared> {
        let id = ex.id.as_str();
        let past = past_docs(ex);
        let mut ranked = Vec::with_capacity(self.rankers.len());
        for (name, ranker) in &self.rankers {
            let t = Instant::now();
            let r = ranker
                .ranked_context(&ex.immediate_context, &past, &self.cut)
                .map_err(|e| stage_error(id, name.name(), e))?;
            *times.ranking.entry(name.name().to_string()).or_insert(0.0) +=
                t.elapsed().as_secs_f64();
            ranked.push((*name, r));
        }
        let of = |r: RankerName| {
            ranked
                .iter()
                .find(|(q, _)| *q == r)
                .map(|(_, c)| c)
                .expect("checked: the labeler's ranker ran")
        };
        let keywords = match &self.keywords {
            Some(k) => {
                let t = Instant::now();
                let w = k
                    .important_words("", "", &past)
                    .map_err(|e| stage_error(id, "keywords", e))?;
                times.keywords += t.elapsed().as_secs_f64();
                Some(w)
            }
            None => None,
        };
        let summary_label = match &self.summary_label {
            Some(l) => {
                let t = Instant::now();
                let gold = gold_snippets(&ex.target);
                let gold: Vec<&str> = gold.iter().map(String::as_str).collect();
                let cands = of(l.ranker).snippets();
                let cands: Vec<&str> = cands.iter().map(String::as_str).collect();
                let label = summary_weak_label(&gold, &cands, l.similarity, l.joiner)
                    .map_err(|e| stage_error(id, "summary weak label", e))?;
                times.summary_label += t.elapsed().as_secs_f64();
                Some(label)
            }
            None => None,
        };
        let synthesis_label = match &self.synthesis_label {
            Some(l) => {
                let t = Instant::now();
                let label = synthesis_weak_label(
                    &ex.target,
                    &of(l.ranker).text,
                    &past,
                    &l.filter,
                    &l.matcher,
                    l.max_words,
                )
                .map_err(|e| stage_error(id, "synthesis weak label", e))?;
                times.synthesis_label += t.elapsed().as_secs_f64();
                Some(label)
            }
            None => None,
        };
        times.examples += 1;
        Ok(Prepared {
            id: ex.id.clone(),
            past,
            ranked,
            keywords,
            summary_label,
            synthesis_label,
        })
    }

    /// Every example in order, reporting examples to `progress`; the stage times summed.
    pub fn prepare_all(
        &self,
        examples: &[Example],
        progress: &dyn Progress,
    ) -> Result<(Vec<Prepared>, StageTimes)> {
        self.check()?;
        let mut times = StageTimes::default();
        for (name, _) in &self.rankers {
            times.ranking.insert(name.name().to_string(), 0.0);
        }
        progress.start(examples.len() as u64, "examples");
        let mut out = Vec::with_capacity(examples.len());
        for ex in examples {
            match self.prepare_checked(ex, &mut times) {
                Ok(p) => out.push(p),
                Err(e) => {
                    progress.finish();
                    return Err(e);
                }
            }
            progress.advance(1);
        }
        progress.finish();
        Ok((out, times))
    }
}

#[cfg(test)]
mod tests {
    use pgraphrag_corpora::multistage::ContextDoc;
    use pgraphrag_stages::multistage::{RankDocBM25, RecentDoc};

    use super::*;

    fn example() -> Example {
        let doc = |id: &str, time, text: &str| ContextDoc {
            doc_id: id.into(),
            time,
            text: text.into(),
        };
        Example {
            id: "d3".into(),
            author: "a".into(),
            split: SplitName::Train,
            time: 3,
            immediate_context: "Tea\nScones with tea".into(),
            target: "Scones with tea and jam. The jam was homemade.".into(),
            context: vec![
                doc("d0", 0, "Rain\nIt rained all day."),
                doc("d1", 1, "Tea\nTea and scones: a recipe, jam jars, jam."),
                doc("d2", 2, "Walk\nA long walk by the lake."),
            ],
        }
    }

    #[test]
    fn each_stage_is_optional_and_timed() {
        let ex = example();
        let (bm25, recent) = (RankDocBM25::bm25(), RecentDoc);
        let rankers: Vec<(RankerName, &dyn ContextRanker)> = vec![
            (RankerName::RankDocBM25, &bm25),
            (RankerName::RecentDoc, &recent),
        ];
        // Three documents would drop every word (ln 3 < 1.5): an IDF over more.
        let idf = Idf::from_documents(["jam", "a", "b", "c", "d", "e", "f", "g"]).unwrap();
        let sim = |a: &str, b: &str| a.split(' ').filter(|w| b.contains(w)).count() as f64;
        let p = Preparer::new(rankers.clone())
            .with_keywords(Keywords::new(WordFilter::paper(&idf)))
            .with_summary_label(SummaryLabeler::new(RankerName::RankDocBM25, &sim))
            .with_synthesis_label(SynthesisLabeler::new(
                RankerName::RecentDoc,
                WordFilter::paper(&idf),
                WordMatcher::new(),
            ));
        let (all, times) = p.prepare_all(std::slice::from_ref(&ex), &()).unwrap();
        let got = &all[0];
        assert_eq!(got.ranked.len(), 2);
        // BM25 puts the tea document first; recency the walk.
        assert!(
            got.ranked(RankerName::RankDocBM25)
                .unwrap()
                .text
                .starts_with("Tea\n")
        );
        assert!(
            got.ranked(RankerName::RecentDoc)
                .unwrap()
                .text
                .starts_with("Walk\n")
        );
        // Twice each, equal IDF: first occurrence.
        assert_eq!(got.keywords.as_ref().unwrap(), &["tea", "jam", "walk"]);
        assert!(got.summary_label.is_some() && got.synthesis_label.is_some());
        assert_eq!(times.examples, 1);
        assert_eq!(times.ranking.len(), 2);
        let bare = Preparer::new(rankers)
            .prepare(&ex, &mut StageTimes::default())
            .unwrap();
        assert!(bare.keywords.is_none() && bare.summary_label.is_none());
        assert!(bare.synthesis_label.is_none());
    }

    #[test]
    fn a_labeler_needs_its_ranker() {
        let bm25 = RankDocBM25::bm25();
        let sim = |_: &str, _: &str| 0.0;
        let p = Preparer::new(vec![(RankerName::RankDocBM25, &bm25 as &dyn ContextRanker)])
            .with_summary_label(SummaryLabeler::new(RankerName::RankSnippet, &sim));
        let e = p.prepare_all(&[example()], &()).unwrap_err();
        assert!(
            e.to_string().contains("RankSnippet, which is not among"),
            "{e}"
        );
    }
}
