//! [`ProfileRanker`]: the user and neighbour lists and the random review of one target.

use pgraphrag_core::{Entry, RankedEntry, RankedProfile, Scored};
use pgraphrag_graph::{
    ItemId, ProfileSource, ReviewId, ReviewLookup, ReviewSet, Scope, SourcedProfile, UserDirectory,
    UserItemGraph,
};

use super::{
    CandidateRanker, DuplicateTexts, EmptyDocs, ProfileOptions, PyRandom, RandomReview,
    SingleNeighbor,
};
use crate::{Error, Result};

/// Whether two reviews have the same `f"{title} {text}"` document, without building it.
fn same_title_text(a: &pgraphrag_core::Entry, b: &pgraphrag_core::Entry) -> bool {
    fn parts(e: &pgraphrag_core::Entry) -> (&str, &str) {
        (
            e.title.as_deref().unwrap_or("None"),
            e.text.as_deref().unwrap_or("None"),
        )
    }
    let (at, ax) = parts(a);
    let (bt, bx) = parts(b);
    if at.len() + ax.len() != bt.len() + bx.len() {
        return false;
    }
    let ai = at.bytes().chain(std::iter::once(b' ')).chain(ax.bytes());
    let bi = bt.bytes().chain(std::iter::once(b' ')).chain(bx.bytes());
    ai.eq(bi)
}

/// The graph review `r` as a profile entry with `score`.
fn resolve<G: ReviewLookup + ?Sized>(graph: &G, r: ReviewId, score: Option<f64>) -> RankedEntry {
    let review = graph.review(r);
    RankedEntry {
        entry: review.entry.clone(),
        item: review.item.clone(),
        score,
    }
}

/// Ranks PGraphRAG profiles; see the [module documentation](super).
#[derive(Debug, Clone)]
pub struct ProfileRanker<R> {
    ranker: R,
    opts: ProfileOptions,
    rng: Option<PyRandom>,
}

impl<R: CandidateRanker> ProfileRanker<R> {
    /// A ranker with `opts`; the random generator is seeded here, once.
    pub fn new(ranker: R, opts: ProfileOptions) -> Self {
        let rng = match opts.random {
            RandomReview::Off => None,
            RandomReview::Python { seed } => Some(PyRandom::new(seed)),
        };
        ProfileRanker { ranker, opts, rng }
    }

    /// The options.
    pub fn options(&self) -> &ProfileOptions {
        &self.opts
    }

    /// The underlying candidate ranker.
    pub fn ranker_mut(&mut self) -> &mut R {
        &mut self.ranker
    }

    /// Ranks `cands` with the configured quirks (empty documents, duplicate texts), keeping
    /// at most `k` (all when `None`): the reviews with their scores, best first.
    pub fn rank_list<G: ReviewLookup + ?Sized>(
        &mut self,
        graph: &G,
        query: &str,
        cands: &[ReviewId],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<ReviewId>>> {
        if cands.is_empty() {
            return Ok(Vec::new());
        }
        let kept: Vec<usize> = match self.opts.empty_docs {
            EmptyDocs::Keep => (0..cands.len()).collect(),
            EmptyDocs::Drop | EmptyDocs::DropMisaligned => (0..cands.len())
                .filter(|&i| !self.ranker.is_empty_doc(graph, cands[i]))
                .collect(),
        };
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        let sub: Vec<ReviewId> = kept.iter().map(|&i| cands[i]).collect();
        let ranked = self.ranker.rank_reviews(graph, query, &sub, k)?;
        let mut out = Vec::with_capacity(ranked.len());
        for s in ranked {
            if s.item >= sub.len() {
                return Err(pgraphrag_core::Error::InvalidInput(format!(
                    "the retriever returned index {} for {} documents",
                    s.item,
                    sub.len()
                )));
            }
            let mut pos = match self.opts.empty_docs {
                EmptyDocs::DropMisaligned => s.item,
                _ => kept[s.item],
            };
            if self.opts.duplicate_texts == DuplicateTexts::FirstOccurrence {
                let e = &graph.review(cands[pos]).entry;
                pos = cands[..pos]
                    .iter()
                    .position(|&r| same_title_text(&graph.review(r).entry, e))
                    .unwrap_or(pos);
            }
            out.push(Scored::new(cands[pos], s.score));
        }
        Ok(out)
    }

    /// Ranks the profile of `user` for the target `item` against `query` (see [`Task::query`](pgraphrag_core::Task::query)).
    ///
    /// The profile's `user_id` is `user` and its `target_item` is `item`; its `target` holds
    /// only the author and item id: set the target review's fields with
    /// [`RankedProfile::target`] (the ranker does not know which review is the target).
    pub fn rank(
        &mut self,
        graph: &UserItemGraph,
        user: &str,
        item: &ItemId,
        query: &str,
    ) -> Result<RankedProfile> {
        let mine = graph.profile(user, item, Scope::User);
        let theirs = graph.profile(user, item, Scope::Neighbor);
        let (user_hits, neighbors) = self.rank_sides(graph, user, item, query, &mine, &theirs)?;
        let mut random = None;
        if let Some(i) = self.draw_user(graph.num_users(), graph.user_position(user))
            && let Some(other) = graph.user_at(i)
        {
            let reviews = graph.user_reviews(other);
            random = self
                .draw_review(graph, reviews)
                .map_err(wrap("random", user, item))?
                .map(|r| resolve(graph, r, None));
        }
        Ok(assemble(user, item, user_hits, neighbors, random))
    }

    /// [`ProfileRanker::rank`] over any profile source (the in-memory graph, a database):
    /// the same ranked profile, the candidate lists fetched through
    /// [`ProfileSource::profile`] and the random review through [`UserDirectory`].
    ///
    /// ```
    /// use pgraphrag_core::Entry;
    /// use pgraphrag_graph::{GraphOptions, ItemId, UserItemGraph};
    /// use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker};
    /// let e = |id, u: &str, i: &str, t: &str| Entry { id, author: u.into(), item: i.into(), title: Some(t.into()), ..Default::default() };
    /// let g = UserItemGraph::from_entries([e(0, "a", "p", "soap"), e(1, "a", "q", "soap bar"), e(2, "b", "p", "shampoo")], GraphOptions::default()).unwrap();
    /// let item = ItemId::from("p");
    /// let a = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default()).rank(&g, "a", &item, "soap").unwrap();
    /// let b = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default()).rank_from(&g, "a", &item, "soap").unwrap();
    /// assert_eq!(a, b);
    /// ```
    pub fn rank_from<S>(
        &mut self,
        source: &S,
        user: &str,
        item: &ItemId,
        query: &str,
    ) -> Result<RankedProfile>
    where
        S: ProfileSource + UserDirectory + ?Sized,
    {
        let mine = ProfileSource::profile(source, user, item, Scope::User)
            .map_err(|e| wrap("user", user, item)(pgraphrag_core::Error::backend(e)))?;
        let theirs = ProfileSource::profile(source, user, item, Scope::Neighbor)
            .map_err(|e| wrap("neighbour", user, item)(pgraphrag_core::Error::backend(e)))?;
        self.rank_fetched(source, user, item, query, mine, theirs)
    }

    /// [`ProfileRanker::rank_from`] with the user (`mine`, [`Scope::User`]) and neighbour
    /// (`theirs`, [`Scope::Neighbor`]) candidate lists fetched already, e.g. for a batch of
    /// targets with [`ProfileSource::profiles`]; `directory` serves the random review.
    pub fn rank_fetched<D: UserDirectory + ?Sized>(
        &mut self,
        directory: &D,
        user: &str,
        item: &ItemId,
        query: &str,
        mine: SourcedProfile,
        theirs: SourcedProfile,
    ) -> Result<RankedProfile> {
        let mut set = ReviewSet::default();
        let mine = set.extend(mine);
        let theirs = set.extend(theirs);
        let (user_hits, neighbors) = self.rank_sides(&set, user, item, query, &mine, &theirs)?;
        let random = self
            .draw_random(directory, user, item, &mut set)?
            .map(|r| resolve(&set, r, None));
        Ok(assemble(user, item, user_hits, neighbors, random))
    }

    /// Advances the random review's stream past the target (`user`, `item`) exactly as
    /// ranking it would (the other user drawn, then one of their reviews), without ranking
    /// its candidate lists: what a worker that ranks users `i..j` of a split does for the
    /// users before `i`, so that its random reviews are the ones a whole-split run draws.
    /// Does nothing without a random review.
    ///
    /// ```
    /// use pgraphrag_core::Entry;
    /// use pgraphrag_graph::{GraphOptions, ItemId, UserItemGraph};
    /// use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker};
    /// let e = |id, u: &str, i: &str| Entry { id, author: u.into(), item: i.into(), title: Some("soap".into()), ..Default::default() };
    /// let g = UserItemGraph::from_entries([e(0, "a", "p"), e(1, "b", "q"), e(2, "c", "p"), e(3, "c", "r")], GraphOptions::default()).unwrap();
    /// let (p, q) = (ItemId::from("p"), ItemId::from("q"));
    /// let mut whole = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default());
    /// whole.rank(&g, "a", &p, "soap").unwrap();
    /// let second = whole.rank(&g, "b", &q, "soap").unwrap();
    /// let mut skipping = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default());
    /// skipping.skip(&g, "a", &p).unwrap();
    /// assert_eq!(skipping.rank(&g, "b", &q, "soap").unwrap(), second);
    /// ```
    pub fn skip<D: UserDirectory + ?Sized>(
        &mut self,
        directory: &D,
        user: &str,
        item: &ItemId,
    ) -> Result<()> {
        self.draw_random(directory, user, item, &mut ReviewSet::default())
            .map(|_| ())
    }

    /// The random review of a target: the other user drawn through `directory`, their
    /// reviews added to `set`, one of them drawn.
    fn draw_random<D: UserDirectory + ?Sized>(
        &mut self,
        directory: &D,
        user: &str,
        item: &ItemId,
        set: &mut ReviewSet,
    ) -> Result<Option<ReviewId>> {
        if self.rng.is_none() {
            return Ok(None);
        }
        let backend = |e| wrap("random", user, item)(pgraphrag_core::Error::backend(e));
        let n = directory.num_users().map_err(backend)?;
        let own = directory.user_position(user).map_err(backend)?;
        let Some(i) = self.draw_user(n, own) else {
            return Ok(None);
        };
        let Some(other) = directory.user_reviews_at(i).map_err(backend)? else {
            return Ok(None);
        };
        let reviews = set.extend(other);
        self.draw_review(&*set, reviews)
            .map_err(wrap("random", user, item))
    }

    /// The ranked user and neighbour lists of one target.
    fn rank_sides<G: ReviewLookup + ?Sized>(
        &mut self,
        graph: &G,
        user: &str,
        item: &ItemId,
        query: &str,
        mine: &[ReviewId],
        theirs: &[ReviewId],
    ) -> Result<(Vec<RankedEntry>, Vec<RankedEntry>)> {
        let k = Some(self.opts.k);
        let user_hits = self
            .rank_list(graph, query, mine, k)
            .map_err(wrap("user", user, item))?
            .into_iter()
            .map(|s| resolve(graph, s.item, Some(s.score)))
            .collect();
        let neighbors =
            if theirs.len() == 1 && self.opts.single_neighbor == SingleNeighbor::Unranked {
                vec![resolve(graph, theirs[0], None)]
            } else {
                self.rank_list(graph, query, theirs, k)
                    .map_err(wrap("neighbour", user, item))?
                    .into_iter()
                    .map(|s| resolve(graph, s.item, Some(s.score)))
                    .collect()
            };
        Ok((user_hits, neighbors))
    }

    /// The random review's other user: the notebook's
    /// `random.choice([uid for uid in user_list if uid != user_id])`, as a position in
    /// first-appearance order, indexed without materialising the list.
    fn draw_user(&mut self, num_users: usize, own: Option<usize>) -> Option<usize> {
        let rng = self.rng.as_mut()?;
        let n_others = num_users - usize::from(own.is_some());
        let i = rng.choice(n_others)?;
        Some(match own {
            Some(p) if i >= p => i + 1,
            _ => i,
        })
    }

    /// The random review among the other user's `reviews` (slot order): ranked with an empty
    /// query first when `random_via_ranker` (the notebook's path), then `random.choice`.
    fn draw_review<G: ReviewLookup + ?Sized>(
        &mut self,
        graph: &G,
        reviews: Vec<ReviewId>,
    ) -> pgraphrag_core::Result<Option<ReviewId>> {
        let pool: Vec<ReviewId> = if self.opts.random_via_ranker {
            self.rank_list(graph, "", &reviews, None)?
                .into_iter()
                .map(|s| s.item)
                .collect()
        } else {
            reviews
        };
        let Some(rng) = self.rng.as_mut() else {
            return Ok(None);
        };
        Ok(rng.choice(pool.len()).map(|j| pool[j]))
    }
}

/// Wraps a ranking error of one side of a target.
fn wrap<'a>(
    side: &'static str,
    user: &'a str,
    item: &'a ItemId,
) -> impl Fn(pgraphrag_core::Error) -> Error + 'a {
    move |source| Error::Profile {
        side,
        user: user.to_string(),
        item: item.to_string(),
        source,
    }
}

/// A ranked profile from its parts.
fn assemble(
    user: &str,
    item: &ItemId,
    user_hits: Vec<RankedEntry>,
    neighbors: Vec<RankedEntry>,
    random: Option<RankedEntry>,
) -> RankedProfile {
    RankedProfile {
        user_id: user.to_string(),
        target: Entry {
            author: user.to_string(),
            item: item.to_string(),
            ..Default::default()
        },
        target_item: item.clone(),
        user: user_hits,
        neighbors,
        random,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::WithRetriever;
    use pgraphrag_core::Retriever;
    use pgraphrag_graph::GraphOptions;

    /// Scores each document by its length, ties in input order.
    struct ByLen;
    impl Retriever for ByLen {
        fn scores(&self, _q: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
            Ok(docs.iter().map(|d| d.len() as f64).collect())
        }
    }

    fn graph(docs: &[(&str, &str, &str, &str)]) -> UserItemGraph {
        let mut g = UserItemGraph::new(GraphOptions::default());
        for (i, (u, it, t, x)) in docs.iter().enumerate() {
            let f = |s: &str| (!s.is_empty()).then(|| s.to_string());
            g.insert(Entry {
                id: i,
                author: u.to_string(),
                item: it.to_string(),
                title: f(t),
                text: f(x),
                ..Default::default()
            });
        }
        g
    }

    #[test]
    fn misalignment_and_first_occurrence() {
        // Neighbours of p for user a: b (blank), c, d (same text as c), e (longest).
        let g = graph(&[
            ("a", "p", "q", "q"),
            ("b", "p", " ", " "),
            ("c", "p", "same", "text"),
            ("d", "p", "same", "text"),
            ("e", "p", "a much longer", "document here"),
        ]);
        let p = ItemId::from("p");
        let mut clean = ProfileRanker::new(
            WithRetriever(ByLen),
            ProfileOptions {
                random: RandomReview::Off,
                ..Default::default()
            },
        );
        let r = clean.rank(&g, "a", &p, "q").unwrap();
        let ids: Vec<usize> = r.neighbors.iter().map(|h| h.entry.id).collect();
        assert_eq!(ids, vec![4, 2, 3]);
        let mut nb = ProfileRanker::new(
            WithRetriever(ByLen),
            ProfileOptions {
                random: RandomReview::Off,
                ..ProfileOptions::notebook()
            },
        );
        let r = nb.rank(&g, "a", &p, "q").unwrap();
        // filtered docs [c, d, e] rank e(2), c(0), d(1); positions index the unfiltered
        // [b, c, d, e]: 2 -> d -> first occurrence c; 0 -> b; 1 -> c.
        let ids: Vec<usize> = r.neighbors.iter().map(|h| h.entry.id).collect();
        assert_eq!(ids, vec![2, 1, 2]);
    }

    #[test]
    fn single_neighbor_unranked_and_random_draws() {
        let g = graph(&[
            ("a", "p", "t", "x"),
            ("b", "p", "t2", "x2"),
            ("b", "q", "t3", "x3"),
        ]);
        let mut nb = ProfileRanker::new(WithRetriever(ByLen), ProfileOptions::notebook());
        let r = nb.rank(&g, "a", &ItemId::from("p"), "t").unwrap();
        assert_eq!(r.neighbors.len(), 1);
        assert_eq!(r.neighbors[0].score, None);
        assert!(r.user.is_empty());
        let rr = r.random.unwrap();
        assert_eq!(rr.entry.author, "b");
    }
}
