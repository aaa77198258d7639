//! The user-item graph (`UserItemGraph`), its reviews, scopes and options, and the crate's error.
use std::collections::HashMap;

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use pgraphrag_core::{Entry, ItemId};
use serde::{Deserialize, Serialize};

/// Errors of `pgraphrag-graph`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph cannot hold more reviews than `u32::MAX`.
    #[error("the graph is full: at most {max} reviews (u32 review ids); split the corpus")]
    Full {
        /// The limit.
        max: usize,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What happens when the same user reviews the same item twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Duplicates {
    /// Keep every review (the clean choice; the library default).
    #[default]
    KeepAll,
    /// The released notebook's dict semantics: the later review replaces the earlier one in
    /// place (same position in every profile, the later review's content and `doc_id`).
    Overwrite,
}

/// Options of a [`UserItemGraph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GraphOptions {
    /// Repeated (user, item) pairs.
    pub duplicates: Duplicates,
}

impl GraphOptions {
    /// The released notebook's semantics: [`Duplicates::Overwrite`].
    pub fn notebook() -> Self {
        GraphOptions {
            duplicates: Duplicates::Overwrite,
        }
    }
}

/// A profile scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The user's reviews of other items.
    User,
    /// Other users' reviews of the target item (`pgraphrag_prompt::pgraphrag::Mode::Neighbor`'s
    /// spelling; serialised as `neighbors`, as before).
    #[serde(rename = "neighbors", alias = "neighbor")]
    Neighbor,
    /// Both: user reviews first, then neighbour reviews.
    Both,
}

/// Position of a review in the graph (its insertion slot). Profiles list reviews in slot
/// order, which is the order the notebook's dict iterates in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ReviewId(pub u32);

impl ReviewId {
    /// The slot as an index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A review stored in the graph: the [`Entry`] plus its typed [`ItemId`].
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// The review (`entry.id` is the notebook's `doc_id`; `entry.item` is the item id's text).
    pub entry: Entry,
    /// The item id with its JSON type.
    pub item: ItemId,
}

/// A node of the bipartite graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A user (review author).
    User(String),
    /// An item.
    Item(ItemId),
}

/// The bipartite user-item graph. Edges go user → item, one per stored review, weighted by
/// the review's [`ReviewId`].
#[derive(Debug, Clone, Default)]
pub struct UserItemGraph {
    opts: GraphOptions,
    graph: DiGraph<Node, ReviewId>,
    /// User name -> (node, position in `user_order`).
    users: HashMap<String, (NodeIndex, usize)>,
    user_order: Vec<NodeIndex>,
    items: HashMap<ItemId, NodeIndex>,
    pairs: HashMap<(NodeIndex, NodeIndex), ReviewId>,
    reviews: Vec<Review>,
    overwritten: usize,
}

/// What [`UserItemGraph::insert_keyed`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// A new review slot.
    New(ReviewId),
    /// An existing (user, item) slot was overwritten ([`Duplicates::Overwrite`]).
    Overwrote(ReviewId),
}

impl Inserted {
    /// The slot written.
    pub fn id(self) -> ReviewId {
        match self {
            Inserted::New(r) | Inserted::Overwrote(r) => r,
        }
    }
}

impl UserItemGraph {
    /// An empty graph.
    pub fn new(opts: GraphOptions) -> Self {
        UserItemGraph {
            opts,
            ..Default::default()
        }
    }

    /// Builds a graph from entries (item ids taken as strings from `entry.item`).
    pub fn from_entries(
        entries: impl IntoIterator<Item = Entry>,
        opts: GraphOptions,
    ) -> Result<Self> {
        let mut g = UserItemGraph::new(opts);
        for e in entries {
            g.try_insert(e)?;
        }
        Ok(g)
    }

    /// The options the graph was built with.
    pub fn options(&self) -> GraphOptions {
        self.opts
    }

    /// Adds a review whose item id is `entry.item` as a string. Panics only past `u32::MAX`
    /// reviews; use [`UserItemGraph::try_insert`] to get an error instead.
    pub fn insert(&mut self, entry: Entry) -> ReviewId {
        match self.try_insert(entry) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Adds a review whose item id is `entry.item` as a string.
    pub fn try_insert(&mut self, entry: Entry) -> Result<ReviewId> {
        let item = ItemId::Str(entry.item.clone());
        self.insert_keyed(entry, item).map(Inserted::id)
    }

    /// Adds a review about `item` (its JSON-typed id; `entry.item` should be its text).
    pub fn insert_keyed(&mut self, entry: Entry, item: ItemId) -> Result<Inserted> {
        let u = match self.users.get(&entry.author) {
            Some(&(u, _)) => u,
            None => {
                let u = self.graph.add_node(Node::User(entry.author.clone()));
                self.users
                    .insert(entry.author.clone(), (u, self.user_order.len()));
                self.user_order.push(u);
                u
            }
        };
        let i = match self.items.get(&item) {
            Some(&i) => i,
            None => {
                let i = self.graph.add_node(Node::Item(item.clone()));
                self.items.insert(item.clone(), i);
                i
            }
        };
        if self.opts.duplicates == Duplicates::Overwrite
            && let Some(&r) = self.pairs.get(&(u, i))
        {
            self.reviews[r.index()] = Review { entry, item };
            self.overwritten += 1;
            return Ok(Inserted::Overwrote(r));
        }
        if self.reviews.len() >= u32::MAX as usize {
            return Err(Error::Full {
                max: u32::MAX as usize,
            });
        }
        let r = ReviewId(self.reviews.len() as u32);
        self.reviews.push(Review { entry, item });
        self.graph.add_edge(u, i, r);
        self.pairs.entry((u, i)).or_insert(r);
        Ok(Inserted::New(r))
    }

    /// The review in slot `r`. Panics if `r` did not come from this graph.
    pub fn review(&self, r: ReviewId) -> &Review {
        &self.reviews[r.index()]
    }

    /// All stored reviews in slot order.
    pub fn reviews(&self) -> &[Review] {
        &self.reviews
    }

    /// How many reviews are stored (after overwrites).
    pub fn num_reviews(&self) -> usize {
        self.reviews.len()
    }

    /// How many inserts overwrote an earlier review ([`Duplicates::Overwrite`] only).
    pub fn num_overwritten(&self) -> usize {
        self.overwritten
    }

    /// How many distinct users.
    pub fn num_users(&self) -> usize {
        self.users.len()
    }

    /// How many distinct items.
    pub fn num_items(&self) -> usize {
        self.items.len()
    }

    /// Users in order of first appearance.
    pub fn users(&self) -> impl Iterator<Item = &str> + '_ {
        self.user_order.iter().map(|&n| match &self.graph[n] {
            Node::User(u) => u.as_str(),
            Node::Item(_) => unreachable!("user_order holds user nodes only"),
        })
    }

    /// Position of `user` in [`UserItemGraph::users`] (first-appearance order).
    ///
    /// ```
    /// use pgraphrag_core::{Entry, ItemId};
    /// use pgraphrag_graph::{GraphOptions, UserItemGraph};
    /// let mut g = UserItemGraph::new(GraphOptions::default());
    /// for (i, u) in ["b", "a", "b"].iter().enumerate() {
    ///     g.insert(Entry { id: i, author: u.to_string(), item: format!("p{i}"), ..Default::default() });
    /// }
    /// assert_eq!(g.user_position("a"), Some(1));
    /// assert_eq!(g.user_at(0), Some("b"));
    /// assert_eq!(g.user_position("z"), None);
    /// ```
    pub fn user_position(&self, user: &str) -> Option<usize> {
        self.users.get(user).map(|&(_, p)| p)
    }

    /// The user at position `i` of [`UserItemGraph::users`].
    pub fn user_at(&self, i: usize) -> Option<&str> {
        self.user_order.get(i).and_then(|&n| match &self.graph[n] {
            Node::User(u) => Some(u.as_str()),
            Node::Item(_) => None,
        })
    }

    /// Whether `user` has any review.
    pub fn has_user(&self, user: &str) -> bool {
        self.users.contains_key(user)
    }

    /// The underlying petgraph graph (nodes [`Node`], edges user → item weighted by
    /// [`ReviewId`]).
    pub fn graph(&self) -> &DiGraph<Node, ReviewId> {
        &self.graph
    }

    fn sorted_edges(
        &self,
        n: NodeIndex,
        dir: Direction,
        keep: impl Fn(NodeIndex) -> bool,
    ) -> Vec<ReviewId> {
        let mut v: Vec<ReviewId> = self
            .graph
            .edges_directed(n, dir)
            .filter(|e| {
                let other = if dir == Direction::Outgoing {
                    e.target()
                } else {
                    e.source()
                };
                keep(other)
            })
            .map(|e| *e.weight())
            .collect();
        v.sort_unstable();
        v
    }

    /// Every review by `user`, in slot order (empty for an unknown user).
    pub fn user_reviews(&self, user: &str) -> Vec<ReviewId> {
        match self.users.get(user) {
            Some(&(u, _)) => self.sorted_edges(u, Direction::Outgoing, |_| true),
            None => Vec::new(),
        }
    }

    /// Every review of `item`, in slot order (empty for an unknown item).
    pub fn item_reviews(&self, item: &ItemId) -> Vec<ReviewId> {
        match self.items.get(item) {
            Some(&i) => self.sorted_edges(i, Direction::Incoming, |_| true),
            None => Vec::new(),
        }
    }

    /// The reviews of `user` and the target `item` (normally one: the target review).
    pub fn target_reviews(&self, user: &str, item: &ItemId) -> Vec<ReviewId> {
        match (self.users.get(user), self.items.get(item)) {
            (Some(&(u, _)), Some(&i)) => self.sorted_edges(u, Direction::Outgoing, |t| t == i),
            _ => Vec::new(),
        }
    }

    /// The profile of `user` for the target `item` in `scope`, in slot order (user reviews
    /// first for [`Scope::Both`]). Never contains a review of `item` by `user`.
    pub fn profile(&self, user: &str, item: &ItemId, scope: Scope) -> Vec<ReviewId> {
        let u = self.users.get(user).map(|&(u, _)| u);
        let i = self.items.get(item).copied();
        let mine = || match u {
            Some(u) => self.sorted_edges(u, Direction::Outgoing, |t| Some(t) != i),
            None => Vec::new(),
        };
        let theirs = || match i {
            Some(i) => self.sorted_edges(i, Direction::Incoming, |s| Some(s) != u),
            None => Vec::new(),
        };
        match scope {
            Scope::User => mine(),
            Scope::Neighbor => theirs(),
            Scope::Both => {
                let mut v = mine();
                v.extend(theirs());
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: usize, u: &str, i: &str) -> Entry {
        Entry {
            id,
            author: u.into(),
            item: i.into(),
            ..Default::default()
        }
    }

    #[test]
    fn overwrite_keeps_position_takes_later_doc() {
        let mut g = UserItemGraph::new(GraphOptions::notebook());
        g.insert(e(0, "a", "p"));
        g.insert(e(1, "b", "p"));
        g.insert(e(2, "a", "p"));
        assert_eq!(g.num_reviews(), 2);
        assert_eq!(g.num_overwritten(), 1);
        let n: Vec<usize> = g
            .item_reviews(&"p".into())
            .iter()
            .map(|&r| g.review(r).entry.id)
            .collect();
        assert_eq!(n, vec![2, 1]);
    }

    #[test]
    fn keep_all_keeps_both_and_excludes_target_pair() {
        let mut g = UserItemGraph::new(GraphOptions::default());
        g.insert(e(0, "a", "p"));
        g.insert(e(1, "b", "p"));
        g.insert(e(2, "a", "p"));
        g.insert(e(3, "a", "q"));
        assert_eq!(g.num_reviews(), 4);
        assert_eq!(g.target_reviews("a", &"p".into()).len(), 2);
        let both: Vec<usize> = g
            .profile("a", &"p".into(), Scope::Both)
            .iter()
            .map(|&r| g.review(r).entry.id)
            .collect();
        assert_eq!(both, vec![3, 1]);
    }

    #[test]
    fn json_typed_ids_differ() {
        let mut g = UserItemGraph::new(GraphOptions::default());
        g.insert_keyed(e(0, "a", "7"), ItemId::Int(7)).unwrap();
        g.insert_keyed(e(1, "b", "7"), ItemId::from("7")).unwrap();
        assert_eq!(g.num_items(), 2);
        assert!(g.profile("a", &ItemId::Int(7), Scope::Neighbor).is_empty());
        assert_eq!(g.users().collect::<Vec<_>>(), vec!["a", "b"]);
    }
}
