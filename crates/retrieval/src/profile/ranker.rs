//! [`ProfileRanker`]: the user and neighbour lists and the random review of one target.

use pgraphrag_core::{Entry, RankedEntry, RankedProfile, Scored};
use pgraphrag_graph::{ItemId, ReviewId, Scope, UserItemGraph};

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
fn resolve(graph: &UserItemGraph, r: ReviewId, score: Option<f64>) -> RankedEntry {
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
    pub fn rank_list(
        &mut self,
        graph: &UserItemGraph,
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
        let k = Some(self.opts.k);
        let wrap = |side: &'static str| {
            move |source| Error::Profile {
                side,
                user: user.to_string(),
                item: item.to_string(),
                source,
            }
        };
        let mine = graph.profile(user, item, Scope::User);
        let user_hits = self
            .rank_list(graph, query, &mine, k)
            .map_err(wrap("user"))?
            .into_iter()
            .map(|s| resolve(graph, s.item, Some(s.score)))
            .collect();
        let theirs = graph.profile(user, item, Scope::Neighbor);
        let neighbors =
            if theirs.len() == 1 && self.opts.single_neighbor == SingleNeighbor::Unranked {
                vec![resolve(graph, theirs[0], None)]
            } else {
                self.rank_list(graph, query, &theirs, k)
                    .map_err(wrap("neighbour"))?
                    .into_iter()
                    .map(|s| resolve(graph, s.item, Some(s.score)))
                    .collect()
            };
        let random = self
            .random_review(graph, user)
            .map_err(wrap("random"))?
            .map(|r| resolve(graph, r, None));
        Ok(RankedProfile {
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
        })
    }

    fn random_review(
        &mut self,
        graph: &UserItemGraph,
        user: &str,
    ) -> pgraphrag_core::Result<Option<ReviewId>> {
        if self.rng.is_none() {
            return Ok(None);
        }
        // The notebook's `[uid for uid in user_list if uid != user_id]`, indexed without
        // materialising it.
        let own = graph.user_position(user);
        let n_others = graph.num_users() - usize::from(own.is_some());
        let Some(rng) = self.rng.as_mut() else {
            return Ok(None);
        };
        let Some(i) = rng.choice(n_others) else {
            return Ok(None);
        };
        let i = match own {
            Some(p) if i >= p => i + 1,
            _ => i,
        };
        let Some(other) = graph.user_at(i) else {
            return Ok(None);
        };
        let reviews = graph.user_reviews(other);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::WithRetriever;
    use pgraphrag_core::Retriever;
    use pgraphrag_graph::GraphOptions;

    /// Scores each document by its length, ties in input order.
    struct ByLen;
    impl Retriever for ByLen {
        fn rank(
            &self,
            _q: &str,
            docs: &[&str],
            k: Option<usize>,
        ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
            Ok(pgraphrag_core::top_k(
                &docs.iter().map(|d| d.len() as f64).collect::<Vec<_>>(),
                k,
                pgraphrag_core::TieOrder::InputOrder,
            ))
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
