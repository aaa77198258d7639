//! The predictors: each a pure function of one [`Example`], the information a grid row has.
use pgraphrag_core::{Language, TieOrder};
use pgraphrag_prompt::extract::parse_rating;
use pgraphrag_retrieval::sparse::{Bm25Builder, Bm25Retriever};
use serde::Serialize;

use crate::{Error, Result};

/// One earlier review (or LaMP profile item) a baseline may copy from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Earlier {
    /// Its input for the task: the review text (titles), the title (review text), `"{title}
    /// {text}"` (ratings); a LaMP item's article, abstract or e-mail body.
    pub input: String,
    /// Its output for the task (title, review text, rating, headline, subject); `None` when
    /// missing or empty, so it is never copied.
    pub output: Option<String>,
    /// The whole review as a retrieval document (`"{title} {text}"` without placeholders).
    pub document: String,
    /// When it was written, if known, as a number that sorts by time (Unix seconds, or
    /// `YYYYMMDD` for LaMP's dates).
    pub time: Option<i64>,
}

/// What one grid row sees: the target's input and the two pools PGraphRAG retrieves from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Example {
    /// The row's id (the PGraphRAG user id, the LaMP question id).
    pub id: String,
    /// The target's input for the task (see [`Earlier::input`]).
    pub input: String,
    /// The user's earlier reviews or profile items, in the source's order (for PGraphRAG, the
    /// order of the user's profile in the split).
    pub history: Vec<Earlier>,
    /// Other users' reviews of the same item, in the source's order (empty for LaMP).
    pub neighbors: Vec<Earlier>,
}

impl Example {
    fn pool(&self, pool: Pool) -> &[Earlier] {
        match pool {
            Pool::User => &self.history,
            Pool::Neighbors => &self.neighbors,
        }
    }
}

/// Which of an [`Example`]'s pools a predictor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Pool {
    /// [`Example::history`]: the user's own earlier reviews.
    User,
    /// [`Example::neighbors`]: other users' reviews of the same item.
    Neighbors,
}

/// What the target's input is matched against when picking the most similar pool entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MatchOn {
    /// [`Earlier::input`]: the input of the earlier review (the text against earlier texts).
    Input,
    /// [`Earlier::document`]: the whole earlier review, as the grid's profile ranker sees it.
    Document,
}

/// Whose BM25 picks the most similar entry: the tokenization of the grid the baseline sits
/// beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub enum Bm25Rule {
    /// PGraphRAG's ([`Bm25Retriever::pgraphrag`]: `nltk.word_tokenize(text.lower())`).
    #[default]
    Pgraphrag,
    /// LaMP's ([`Bm25Retriever::lamp`]: `str.split()`, as the LaMP grid ranks profiles).
    Lamp,
}

/// A baseline predictor. [`Predictor::predict`] returns `None` when the row lacks what the
/// predictor needs (no earlier output, no neighbour, an empty input); the
/// [`NamedBaseline`] then answers its fallback.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Predictor {
    /// The same answer for every row.
    Constant(String),
    /// The input's first `k` words (Python's `str.split()`), joined by one space.
    FirstWords(usize),
    /// The input's first sentence (NLTK's Punkt for the language, as `pgraphrag_text`).
    FirstSentence(Language),
    /// The input itself (for review text: the title).
    Input,
    /// The user's latest earlier output: the greatest [`Earlier::time`]; entries without a
    /// time (PGraphRAG's splits store none) count in pool order, the first being the latest.
    Latest,
    /// The output of the pool entry most similar to the input: rank_bm25's BM25Okapi with the
    /// grid's tokenization ([`Bm25Rule`]) fitted on the pool's entries that have an output,
    /// ties to the first in pool order. As in rank_bm25, a
    /// word found in half the entries or more weighs (almost) nothing, so with two entries, or
    /// an input sharing no word with any entry, every score is 0 and the first entry wins.
    MostSimilar {
        /// The pool searched.
        pool: Pool,
        /// What the input is matched against.
        on: MatchOn,
        /// Whose BM25.
        rule: Bm25Rule,
    },
    /// The input, a space, then [`Predictor::MostSimilar`]'s output (for review text: the
    /// title plus a neighbour's review of the same item). Without a pool entry, `None`.
    InputPlus {
        /// The pool searched.
        pool: Pool,
        /// What the input is matched against.
        on: MatchOn,
        /// Whose BM25.
        rule: Bm25Rule,
    },
    /// The mean of the pool's ratings (each output read with [`parse_rating`]).
    MeanRating(Pool),
    /// [`Predictor::MeanRating`] rounded to the nearest whole rating, halves up: a label, as
    /// LaMP-3 asks for (a reading that takes the first label of an answer would read `4.6` as
    /// `4`).
    MeanLabel(Pool),
    /// The most common of the pool's ratings; ties go to the higher rating.
    ModeRating(Pool),
}

impl Predictor {
    /// The prediction for `example`, or `None` when it lacks what this predictor needs.
    ///
    /// ```
    /// use pgraphrag_eval::baselines::{Example, Predictor};
    /// let ex = Example { input: "Great soap. Smells nice.".into(), ..Default::default() };
    /// assert_eq!(Predictor::FirstWords(1).predict(&ex).unwrap().as_deref(), Some("Great"));
    /// assert_eq!(Predictor::Latest.predict(&ex).unwrap(), None); // no history
    /// ```
    pub fn predict(&self, example: &Example) -> Result<Option<String>> {
        Ok(match self {
            Predictor::Constant(c) => Some(c.clone()),
            Predictor::FirstWords(k) => non_empty(first_words(&example.input, *k)),
            Predictor::FirstSentence(lang) => non_empty(first_sentence(&example.input, *lang)),
            Predictor::Input => non_empty(example.input.trim().to_string()),
            Predictor::Latest => latest(&example.history).map(str::to_string),
            Predictor::MostSimilar { pool, on, rule } => {
                most_similar(&example.input, example.pool(*pool), *on, *rule)?
                    .and_then(|e| e.output.clone())
            }
            Predictor::InputPlus { pool, on, rule } => {
                most_similar(&example.input, example.pool(*pool), *on, *rule)?
                    .and_then(|e| e.output.as_deref())
                    .map(|o| format!("{} {o}", example.input.trim()).trim().to_string())
            }
            Predictor::MeanRating(pool) => mean_rating(example.pool(*pool)).map(rating_answer),
            Predictor::MeanLabel(pool) => {
                mean_rating(example.pool(*pool)).map(|m| rating_answer((m + 0.5).floor()))
            }
            Predictor::ModeRating(pool) => mode_rating(example.pool(*pool)).map(rating_answer),
        })
    }
}

/// A predictor with its table name and the predictor that answers where it has nothing to go
/// on (a constant, or for review text the title alone); the answer is empty where neither has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedBaseline {
    /// The row label in the results table (`first_10_words`, `user_mean`, …).
    pub name: String,
    /// The predictor.
    pub predictor: Predictor,
    /// What answers where [`NamedBaseline::predictor`] returns `None`.
    pub fallback: Option<Predictor>,
}

impl NamedBaseline {
    /// A baseline without fallback (the empty answer where the predictor has nothing).
    pub fn new(name: impl Into<String>, predictor: Predictor) -> Self {
        NamedBaseline {
            name: name.into(),
            predictor,
            fallback: None,
        }
    }

    /// The same baseline with `fallback` answering where the predictor has nothing.
    pub fn or(mut self, fallback: Predictor) -> Self {
        self.fallback = Some(fallback);
        self
    }

    /// The answer for `example` and whether the predictor had nothing to go on (the answer is
    /// then the fallback's, or empty).
    ///
    /// ```
    /// use pgraphrag_eval::baselines::{Example, NamedBaseline, Pool, Predictor};
    /// let b = NamedBaseline::new("user_mean", Predictor::MeanRating(Pool::User))
    ///     .or(Predictor::Constant("5".into()));
    /// assert_eq!(b.answer(&Example::default()).unwrap(), ("5".to_string(), true));
    /// ```
    pub fn answer(&self, example: &Example) -> Result<(String, bool)> {
        if let Some(a) = self.predictor.predict(example)? {
            return Ok((a, false));
        }
        let fallback = match &self.fallback {
            Some(f) => f.predict(example)?,
            None => None,
        };
        Ok((fallback.unwrap_or_default(), true))
    }
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// The first `k` words of `text` (Python's `str.split()`), joined by one space.
///
/// ```
/// use pgraphrag_eval::baselines::first_words;
/// assert_eq!(first_words("  a b\tc d ", 3), "a b c");
/// assert_eq!(first_words("one", 10), "one");
/// assert_eq!(first_words("", 10), "");
/// ```
pub fn first_words(text: &str, k: usize) -> String {
    pgraphrag_text::py::split(text)
        .take(k)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first sentence of `text` (NLTK's `sent_tokenize` for `language`), or `""` for a blank
/// text.
///
/// ```
/// use pgraphrag_core::Language;
/// use pgraphrag_eval::baselines::first_sentence;
/// assert_eq!(first_sentence("Works well. Would buy again.", Language::English), "Works well.");
/// assert_eq!(first_sentence("no full stop", Language::English), "no full stop");
/// assert_eq!(first_sentence("  ", Language::English), "");
/// ```
pub fn first_sentence(text: &str, language: Language) -> String {
    pgraphrag_text::sent_tokenize(text, language)
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// The output of the latest entry of `pool` that has one (see [`Predictor::Latest`]).
///
/// ```
/// use pgraphrag_eval::baselines::{Earlier, latest};
/// let e = |o: &str, t| Earlier { output: Some(o.into()), time: t, ..Default::default() };
/// assert_eq!(latest(&[e("old", Some(1)), e("new", Some(9))]), Some("new"));
/// assert_eq!(latest(&[e("first", None), e("second", None)]), Some("first"));
/// assert_eq!(latest(&[]), None);
/// ```
pub fn latest(pool: &[Earlier]) -> Option<&str> {
    pool.iter()
        .filter_map(|e| e.output.as_deref().map(|o| (e.time, o)))
        // `max_by_key` keeps the last of equal keys; walking backwards keeps the first.
        .rev()
        .max_by_key(|(t, _)| *t)
        .map(|(_, o)| o)
}

/// The entry of `pool` (among those with an output) most similar to `input` by BM25 (see
/// [`Predictor::MostSimilar`]); `None` when no entry has an output.
///
/// ```
/// use pgraphrag_eval::baselines::{Bm25Rule, Earlier, MatchOn, most_similar};
/// let e = |i: &str, o: &str| Earlier { input: i.into(), output: Some(o.into()), ..Default::default() };
/// let pool = [e("the battery died fast", "Bad battery"), e("lovely soft fabric", "Soft"),
///             e("arrived late", "Late")];
/// let best = most_similar("fabric is soft", &pool, MatchOn::Input, Bm25Rule::Pgraphrag).unwrap().unwrap();
/// assert_eq!(best.output.as_deref(), Some("Soft"));
/// let best = most_similar("fabric is soft", &pool, MatchOn::Input, Bm25Rule::Lamp).unwrap().unwrap();
/// assert_eq!(best.output.as_deref(), Some("Soft"));
/// ```
pub fn most_similar<'a>(
    input: &str,
    pool: &'a [Earlier],
    on: MatchOn,
    rule: Bm25Rule,
) -> Result<Option<&'a Earlier>> {
    let cands: Vec<&Earlier> = pool.iter().filter(|e| e.output.is_some()).collect();
    if cands.len() <= 1 {
        return Ok(cands.first().copied());
    }
    let docs: Vec<&str> = cands
        .iter()
        .map(|e| match on {
            MatchOn::Input => e.input.as_str(),
            MatchOn::Document => e.document.as_str(),
        })
        .collect();
    let scores = match rule {
        Bm25Rule::Pgraphrag => Bm25Retriever::pgraphrag()
            .with_tie_order(TieOrder::InputOrder)
            .scores(input, &docs),
        Bm25Rule::Lamp => Bm25Retriever::lamp()
            .with_tie_order(TieOrder::InputOrder)
            .scores(input, &docs),
    }
    .map_err(|e| Error::InvalidInput(format!("BM25 over a baseline pool: {e}")))?;
    let top = pgraphrag_core::top_k(&scores, Some(1), TieOrder::InputOrder);
    Ok(top.first().map(|s| cands[s.item]))
}

/// The pool's ratings: each output read with [`parse_rating`] (1–5), unreadable ones skipped.
fn ratings(pool: &[Earlier]) -> Vec<f64> {
    pool.iter()
        .filter_map(|e| e.output.as_deref().and_then(parse_rating))
        .collect()
}

/// The mean of the pool's ratings (see [`Predictor::MeanRating`]); `None` without any.
///
/// ```
/// use pgraphrag_eval::baselines::{Earlier, mean_rating};
/// let e = |o: &str| Earlier { output: Some(o.into()), ..Default::default() };
/// assert_eq!(mean_rating(&[e("5"), e("4"), e("no")]), Some(4.5));
/// assert_eq!(mean_rating(&[]), None);
/// ```
pub fn mean_rating(pool: &[Earlier]) -> Option<f64> {
    let r = ratings(pool);
    (!r.is_empty()).then(|| r.iter().sum::<f64>() / r.len() as f64)
}

/// The most common of the pool's ratings, the higher on a tie (see
/// [`Predictor::ModeRating`]); `None` without any.
///
/// ```
/// use pgraphrag_eval::baselines::{Earlier, mode_rating};
/// let e = |o: &str| Earlier { output: Some(o.into()), ..Default::default() };
/// assert_eq!(mode_rating(&[e("2"), e("2"), e("5")]), Some(2.0));
/// assert_eq!(mode_rating(&[e("2"), e("5")]), Some(5.0));
/// ```
pub fn mode_rating(pool: &[Earlier]) -> Option<f64> {
    let mut counts: Vec<(f64, usize)> = Vec::new();
    for r in ratings(pool) {
        match counts.iter_mut().find(|(v, _)| *v == r) {
            Some((_, n)) => *n += 1,
            None => counts.push((r, 1)),
        }
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)))
        .map(|(v, _)| v)
}

/// A rating as an answer: integral values without a decimal point (`4`), others in Rust's
/// shortest round-trip form (`4.333333333333333`), which the grid's rating parser reads whole.
fn rating_answer(r: f64) -> String {
    pgraphrag_prompt::pgraphrag::py_rating(Some(r))
}

/// The constant answer with the best mean `objective` (higher is better) against `golds`,
/// among `candidates` (the first on a tie), with that mean; `None` without candidates or golds.
///
/// Choose it on a validation slice, never on the rows it is then evaluated on.
///
/// ```
/// use pgraphrag_eval::baselines::best_constant_answer;
/// let golds = ["great", "great product", "bad"];
/// let same = |p: &str, g: &str| if p == g { 1.0 } else { 0.0 };
/// let (c, v) = best_constant_answer(&["bad", "great"], &golds, same).unwrap();
/// assert_eq!((c.as_str(), v), ("bad", 1.0 / 3.0)); // tie with "great": the first
/// ```
pub fn best_constant_answer<C: AsRef<str>, G: AsRef<str>>(
    candidates: &[C],
    golds: &[G],
    objective: impl Fn(&str, &str) -> f64,
) -> Option<(String, f64)> {
    if golds.is_empty() {
        return None;
    }
    let mut best: Option<(String, f64)> = None;
    for c in candidates {
        let c = c.as_ref();
        let mean = golds.iter().map(|g| objective(c, g.as_ref())).sum::<f64>() / golds.len() as f64;
        if best.as_ref().is_none_or(|(_, b)| mean > *b) {
            best = Some((c.to_string(), mean));
        }
    }
    best
}

/// The candidate constants of a text task: the distinct non-blank golds (trimmed), in order.
///
/// ```
/// use pgraphrag_eval::baselines::constant_candidates;
/// assert_eq!(constant_candidates(&["Great", " Great ", "", "Fine"]), vec!["Great", "Fine"]);
/// ```
pub fn constant_candidates<G: AsRef<str>>(golds: &[G]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    golds
        .iter()
        .map(|g| g.as_ref().trim())
        .filter(|g| !g.is_empty() && seen.insert(g.to_string()))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(input: &str, output: Option<&str>) -> Earlier {
        Earlier {
            input: input.into(),
            output: output.map(str::to_string),
            document: format!("{} {input}", output.unwrap_or(""))
                .trim()
                .to_string(),
            time: None,
        }
    }

    fn ex(input: &str, history: Vec<Earlier>, neighbors: Vec<Earlier>) -> Example {
        Example {
            id: "u".into(),
            input: input.into(),
            history,
            neighbors,
        }
    }

    #[test]
    fn first_words_and_sentence_of_empty_and_short_inputs() {
        let empty = ex("", vec![], vec![]);
        assert_eq!(Predictor::FirstWords(10).predict(&empty).unwrap(), None);
        let p = Predictor::FirstSentence(Language::English);
        assert_eq!(p.predict(&empty).unwrap(), None);
        let short = ex("Love it", vec![], vec![]);
        assert_eq!(
            Predictor::FirstWords(10)
                .predict(&short)
                .unwrap()
                .as_deref(),
            Some("Love it")
        );
        let two = ex("Muito bom. Recomendo a todos.", vec![], vec![]);
        let pt = Predictor::FirstSentence(Language::Portuguese);
        assert_eq!(pt.predict(&two).unwrap().as_deref(), Some("Muito bom."));
        assert_eq!(Predictor::FirstWords(0).predict(&two).unwrap(), None);
    }

    #[test]
    fn copies_skip_missing_outputs_and_empty_profiles_fall_back() {
        // An earlier review without a title is never copied.
        let h = vec![e("text a", None), e("text b", Some("Title B"))];
        let x = ex("text a", h, vec![]);
        assert_eq!(
            Predictor::Latest.predict(&x).unwrap().as_deref(),
            Some("Title B")
        );
        let sim = Predictor::MostSimilar {
            pool: Pool::User,
            on: MatchOn::Input,
            rule: Bm25Rule::Pgraphrag,
        };
        assert_eq!(sim.predict(&x).unwrap().as_deref(), Some("Title B"));
        // Empty profile: nothing, and the named baseline answers its fallback (or "").
        let none = ex("text", vec![], vec![]);
        assert_eq!(Predictor::Latest.predict(&none).unwrap(), None);
        assert_eq!(sim.predict(&none).unwrap(), None);
        let b = NamedBaseline::new("user_latest", Predictor::Latest);
        assert_eq!(b.answer(&none).unwrap(), (String::new(), true));
        assert_eq!(b.answer(&x).unwrap(), ("Title B".to_string(), false));
    }

    #[test]
    fn most_similar_matches_inputs_or_documents_and_ties_go_first() {
        let n = vec![
            e("shipping was slow", Some("Slow")),
            e("the colour is bright red", Some("Red")),
            e("arrived broken", Some("Broken")),
        ];
        let x = ex("bright red colour", vec![], n.clone());
        let on_input = Predictor::MostSimilar {
            pool: Pool::Neighbors,
            on: MatchOn::Input,
            rule: Bm25Rule::Pgraphrag,
        };
        assert_eq!(on_input.predict(&x).unwrap().as_deref(), Some("Red"));
        // No shared word: every score is 0, the first in pool order wins.
        let y = ex("zzz", vec![], n.clone());
        assert_eq!(on_input.predict(&y).unwrap().as_deref(), Some("Slow"));
        // Equal documents tie: the first.
        let twins = vec![e("same words", Some("A")), e("same words", Some("B"))];
        let z = ex("same", vec![], twins);
        assert_eq!(on_input.predict(&z).unwrap().as_deref(), Some("A"));
        // Matching on the document sees the earlier output too.
        let by_doc = Predictor::MostSimilar {
            pool: Pool::Neighbors,
            on: MatchOn::Document,
            rule: Bm25Rule::Pgraphrag,
        };
        let w = ex("broken", vec![], n);
        assert_eq!(by_doc.predict(&w).unwrap().as_deref(), Some("Broken"));
        // rank_bm25's idf with two entries: a word in one of them weighs nothing (floored at
        // ε times a zero mean idf), so every entry scores 0 and the first wins.
        let two = vec![e("red", Some("A")), e("blue", Some("B"))];
        assert_eq!(
            on_input
                .predict(&ex("blue", vec![], two))
                .unwrap()
                .as_deref(),
            Some("A")
        );
    }

    #[test]
    fn input_plus_neighbour() {
        let n = vec![e("Nice", Some("Fits well and feels soft."))];
        let x = ex("Nice shirt", vec![], n);
        let p = Predictor::InputPlus {
            pool: Pool::Neighbors,
            on: MatchOn::Document,
            rule: Bm25Rule::Pgraphrag,
        };
        assert_eq!(
            p.predict(&x).unwrap().as_deref(),
            Some("Nice shirt Fits well and feels soft.")
        );
        let alone = ex("Nice", vec![], vec![]);
        assert_eq!(p.predict(&alone).unwrap(), None);
        // Without a neighbour the named baseline falls back to the title.
        let b = NamedBaseline::new("title_neighbor_bm25", p.clone()).or(Predictor::Input);
        assert_eq!(b.answer(&alone).unwrap(), ("Nice".to_string(), true));
        // A missing title (empty input): the neighbour's review alone.
        let m = ex("", vec![], vec![e("x", Some("Good."))]);
        assert_eq!(p.predict(&m).unwrap().as_deref(), Some("Good."));
    }

    #[test]
    fn ratings_mean_mode_ties_and_fallbacks() {
        let r = |v: &str| e("", Some(v));
        let x = ex(
            "",
            vec![r("4"), r("2"), r("2"), r("4"), r("x")],
            vec![r("5")],
        );
        assert_eq!(
            Predictor::MeanRating(Pool::User)
                .predict(&x)
                .unwrap()
                .as_deref(),
            Some("3")
        );
        // 2 and 4 twice each: the higher.
        assert_eq!(
            Predictor::ModeRating(Pool::User)
                .predict(&x)
                .unwrap()
                .as_deref(),
            Some("4")
        );
        assert_eq!(
            Predictor::MeanRating(Pool::Neighbors)
                .predict(&x)
                .unwrap()
                .as_deref(),
            Some("5")
        );
        let thirds = ex("", vec![r("4"), r("4"), r("5")], vec![]);
        let mean = Predictor::MeanRating(Pool::User).predict(&thirds).unwrap();
        assert_eq!(parse_rating(&mean.unwrap()), Some(13.0 / 3.0));
        let b = NamedBaseline::new("item_mean", Predictor::MeanRating(Pool::Neighbors))
            .or(Predictor::Constant("4".into()));
        assert_eq!(
            b.answer(&ex("", vec![], vec![])).unwrap(),
            ("4".to_string(), true)
        );
    }

    #[test]
    fn constants_are_chosen_by_the_objective_first_on_ties() {
        let golds = ["good", "good", "bad"];
        let eq = |p: &str, g: &str| f64::from(u8::from(p == g));
        let c = constant_candidates(&golds);
        assert_eq!(c, vec!["good", "bad"]);
        assert_eq!(
            best_constant_answer(&c, &golds, eq).unwrap(),
            ("good".to_string(), 2.0 / 3.0)
        );
        assert_eq!(best_constant_answer::<&str, &str>(&[], &golds, eq), None);
        assert_eq!(best_constant_answer::<&str, &str>(&["a"], &[], eq), None);
        let x = ex("anything", vec![], vec![]);
        assert_eq!(
            Predictor::Constant("good".into())
                .predict(&x)
                .unwrap()
                .as_deref(),
            Some("good")
        );
    }

    #[test]
    fn latest_prefers_times_and_keeps_the_first_of_equal_times() {
        let t = |o: &str, time| Earlier {
            output: Some(o.into()),
            time,
            ..Default::default()
        };
        assert_eq!(latest(&[t("a", Some(5)), t("b", Some(5))]), Some("a"));
        // A dated entry is later than an undated one.
        assert_eq!(latest(&[t("a", None), t("b", Some(1))]), Some("b"));
    }
}
