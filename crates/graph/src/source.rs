//! Where profiles come from: the in-memory [`UserItemGraph`] or a database.
//!
//! * [`ProfileSource`]: one required method, [`ProfileSource::profile`], returning exactly what
//!   [`UserItemGraph::profile`] returns (same reviews, same order, same duplicate handling),
//!   with the reviews themselves; [`ProfileSource::profiles`] is the batched fast path a
//!   remote source overrides (one round trip per shard instead of one per request).
//! * [`UserDirectory`]: the users in first-appearance order and every review of one of them,
//!   which is what the random review of a ranked profile needs.
//! * [`ReviewLookup`]: reviews by slot, what a ranker reads; [`ReviewSet`] holds reviews
//!   fetched from a source under their slots.
//!
//! Slots ([`ReviewId`]) are the graph's: a source that stores the graph's slots (as the
//! PostgreSQL store of `pgraphrag-store` does) hands out the same ids as the graph.
//!
//! ```
//! use pgraphrag_core::Entry;
//! use pgraphrag_graph::{GraphOptions, ItemId, ProfileSource, Scope, UserItemGraph};
//! let e = |id, u: &str, i: &str| Entry { id, author: u.into(), item: i.into(), ..Default::default() };
//! let g = UserItemGraph::from_entries([e(0, "a", "p"), e(1, "b", "p"), e(2, "a", "q")], GraphOptions::default()).unwrap();
//! let p = ProfileSource::profile(&g, "a", &ItemId::from("p"), Scope::Both).unwrap();
//! let ids: Vec<usize> = p.iter().map(|(_, r)| r.entry.id).collect();
//! assert_eq!(ids, vec![2, 1]);
//! ```

use std::collections::HashMap;
use std::convert::Infallible;

use crate::user_item::{Review, ReviewId, Scope, UserItemGraph};
use pgraphrag_core::ItemId;

/// A profile as a source returns it: each review with its slot, in slot order (user reviews
/// first for [`Scope::Both`]).
pub type SourcedProfile = Vec<(ReviewId, Review)>;

/// One profile to fetch: the arguments of [`ProfileSource::profile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileRequest<'a> {
    /// The target user.
    pub user: &'a str,
    /// The target item (with its JSON type).
    pub item: &'a ItemId,
    /// The scope.
    pub scope: Scope,
}

/// A source of profiles. Implemented by [`UserItemGraph`] and by the PostgreSQL store of
/// `pgraphrag-store` (feature `postgres`).
///
/// ```
/// use pgraphrag_core::Entry;
/// use pgraphrag_graph::{GraphOptions, ItemId, ProfileRequest, ProfileSource, Scope, UserItemGraph};
/// let e = |id, u: &str, i: &str| Entry { id, author: u.into(), item: i.into(), ..Default::default() };
/// let g = UserItemGraph::from_entries([e(0, "a", "p"), e(1, "b", "p")], GraphOptions::default()).unwrap();
/// let item = ItemId::from("p");
/// let reqs = [ProfileRequest { user: "a", item: &item, scope: Scope::Neighbor }];
/// let got = g.profiles(&reqs).unwrap();
/// assert_eq!(got[0][0].1.entry.author, "b");
/// ```
pub trait ProfileSource {
    /// What can go wrong fetching (`Infallible` for the in-memory graph).
    type Error: std::error::Error + Send + Sync + 'static;

    /// The profile of `user` for the target `item` in `scope`: exactly the reviews, order and
    /// duplicate handling of [`UserItemGraph::profile`], with their slots.
    fn profile(
        &self,
        user: &str,
        item: &ItemId,
        scope: Scope,
    ) -> Result<SourcedProfile, Self::Error>;

    /// Several profiles at once, in request order. The default asks [`Self::profile`] for
    /// each; remote sources fetch a whole batch in a few round trips.
    fn profiles(
        &self,
        requests: &[ProfileRequest<'_>],
    ) -> Result<Vec<SourcedProfile>, Self::Error> {
        requests
            .iter()
            .map(|r| self.profile(r.user, r.item, r.scope))
            .collect()
    }
}

/// The users of a source in first-appearance order, and every review of one of them: what
/// the notebook's random review (`random.choice` over the other users, then over their
/// reviews) reads.
///
/// ```
/// use pgraphrag_core::Entry;
/// use pgraphrag_graph::{GraphOptions, UserDirectory, UserItemGraph};
/// let e = |id, u: &str, i: &str| Entry { id, author: u.into(), item: i.into(), ..Default::default() };
/// let g = UserItemGraph::from_entries([e(0, "b", "p"), e(1, "a", "p")], GraphOptions::default()).unwrap();
/// assert_eq!(UserDirectory::num_users(&g).unwrap(), 2);
/// assert_eq!(UserDirectory::user_at(&g, 1).unwrap().as_deref(), Some("a"));
/// assert_eq!(UserDirectory::user_position(&g, "b").unwrap(), Some(0));
/// assert_eq!(UserDirectory::user_reviews(&g, "a").unwrap().len(), 1);
/// ```
pub trait UserDirectory {
    /// What can go wrong fetching.
    type Error: std::error::Error + Send + Sync + 'static;
    /// How many distinct users.
    fn num_users(&self) -> Result<usize, Self::Error>;
    /// The position of `user` in first-appearance order (`None`: no such user).
    fn user_position(&self, user: &str) -> Result<Option<usize>, Self::Error>;
    /// The user at `position` in first-appearance order.
    fn user_at(&self, position: usize) -> Result<Option<String>, Self::Error>;
    /// Every review of `user`, in slot order.
    fn user_reviews(&self, user: &str) -> Result<SourcedProfile, Self::Error>;

    /// Every review of the user at `position` (`None`: no user there):
    /// [`Self::user_at`], then [`Self::user_reviews`]. A remote source answers in one round
    /// trip.
    fn user_reviews_at(&self, position: usize) -> Result<Option<SourcedProfile>, Self::Error> {
        match self.user_at(position)? {
            Some(user) => self.user_reviews(&user).map(Some),
            None => Ok(None),
        }
    }
}

fn sourced(g: &UserItemGraph, ids: Vec<ReviewId>) -> SourcedProfile {
    ids.into_iter().map(|r| (r, g.review(r).clone())).collect()
}

impl ProfileSource for UserItemGraph {
    type Error = Infallible;
    fn profile(
        &self,
        user: &str,
        item: &ItemId,
        scope: Scope,
    ) -> Result<SourcedProfile, Infallible> {
        Ok(sourced(
            self,
            UserItemGraph::profile(self, user, item, scope),
        ))
    }
}

impl UserDirectory for UserItemGraph {
    type Error = Infallible;
    fn num_users(&self) -> Result<usize, Infallible> {
        Ok(UserItemGraph::num_users(self))
    }
    fn user_position(&self, user: &str) -> Result<Option<usize>, Infallible> {
        Ok(UserItemGraph::user_position(self, user))
    }
    fn user_at(&self, position: usize) -> Result<Option<String>, Infallible> {
        Ok(UserItemGraph::user_at(self, position).map(str::to_string))
    }
    fn user_reviews(&self, user: &str) -> Result<SourcedProfile, Infallible> {
        Ok(sourced(self, UserItemGraph::user_reviews(self, user)))
    }
}

/// Reviews by slot: what a ranker reads while it ranks candidate lists.
pub trait ReviewLookup {
    /// The review in slot `r`. Panics if `r` was not handed out by this lookup (as
    /// [`UserItemGraph::review`] does).
    fn review(&self, r: ReviewId) -> &Review;
    /// One past the largest slot this lookup may hold (sizes per-slot caches).
    fn slot_bound(&self) -> usize;
}

impl ReviewLookup for UserItemGraph {
    fn review(&self, r: ReviewId) -> &Review {
        UserItemGraph::review(self, r)
    }
    fn slot_bound(&self) -> usize {
        self.num_reviews()
    }
}

/// Reviews fetched from a [`ProfileSource`], kept under their slots.
///
/// ```
/// use pgraphrag_core::Entry;
/// use pgraphrag_graph::{ItemId, Review, ReviewId, ReviewLookup, ReviewSet};
/// let mut set = ReviewSet::default();
/// let review = Review { entry: Entry { id: 7, ..Default::default() }, item: ItemId::from("p") };
/// let ids = set.extend(vec![(ReviewId(41), review)]);
/// assert_eq!(ids, vec![ReviewId(41)]);
/// assert_eq!(set.review(ReviewId(41)).entry.id, 7);
/// assert_eq!(set.slot_bound(), 42);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReviewSet {
    reviews: HashMap<ReviewId, Review>,
    bound: usize,
}

impl ReviewSet {
    /// Adds `reviews` (a later copy of a slot replaces an earlier one) and returns their slots
    /// in the order given.
    pub fn extend(&mut self, reviews: SourcedProfile) -> Vec<ReviewId> {
        let mut ids = Vec::with_capacity(reviews.len());
        for (r, review) in reviews {
            self.bound = self.bound.max(r.index() + 1);
            self.reviews.insert(r, review);
            ids.push(r);
        }
        ids
    }

    /// The review in slot `r`, if held.
    pub fn get(&self, r: ReviewId) -> Option<&Review> {
        self.reviews.get(&r)
    }

    /// How many reviews are held.
    pub fn len(&self) -> usize {
        self.reviews.len()
    }

    /// Whether no review is held.
    pub fn is_empty(&self) -> bool {
        self.reviews.is_empty()
    }
}

impl ReviewLookup for ReviewSet {
    fn review(&self, r: ReviewId) -> &Review {
        match self.reviews.get(&r) {
            Some(review) => review,
            None => panic!("review slot {} is not in this ReviewSet", r.0),
        }
    }
    fn slot_bound(&self) -> usize {
        self.bound
    }
}
