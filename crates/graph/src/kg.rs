//! A typed knowledge graph (KG) on [`petgraph`]: entities and relations with text
//! attributes, `k`-hop ego sub-graphs and triples as text — the graph K-RagRec retrieves from.
//!
//! Entities are keyed by an opaque string (a Freebase MID such as `m.0bln8`); each may carry a
//! *name* (a movie title for the entities a recommender links to its items). Every entity also
//! has a *role*, a label derived from the relations it takes part in, which stands in for the
//! text of an entity without a name (see [`KnowledgeGraph::add_triple`] for the rule). An
//! entity's text ([`Entity::text`]) is its name, or its role when it has none.
//!
//! Relations are keyed by their id (`film.film.directed_by`) and carry a readable text made by
//! [`relation_text`] (`"film directed by"`).
//!
//! ```
//! use pgraphrag_graph::kg::KnowledgeGraph;
//!
//! let mut kg = KnowledgeGraph::new();
//! kg.add_triple("m.matrix", "film.film.directed_by", "m.wachowski").unwrap();
//! kg.add_triple("m.matrix", "film.film.genre", "m.scifi").unwrap();
//! kg.add_triple("m.wachowski", "film.director.film", "m.bound").unwrap();
//! let matrix = kg.find("m.matrix").unwrap();
//! kg.set_name(matrix, "The Matrix");
//!
//! let ego = kg.ego(matrix, 1);
//! assert_eq!(ego.nodes.len(), 3);
//! let t = ego.triples(&kg);
//! assert_eq!((t[0].head, t[0].relation, t[0].tail), ("The Matrix", "film directed by", "director"));
//! // The director heads a `film.director.*` relation, so their role is "director".
//! assert_eq!(kg.entity(kg.find("m.wachowski").unwrap()).text(), "director");
//! assert_eq!(kg.ego(matrix, 2).edges.len(), 3);
//! ```
use std::collections::{HashMap, VecDeque};

use petgraph::Direction;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

/// Errors of the knowledge graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KgError {
    /// More entities, relations or edges than the `u32` indices hold.
    #[error("the knowledge graph is full: at most {max} {what} (u32 indices); split the graph")]
    Full {
        /// `"entities"`, `"relations"` or `"edges"`.
        what: &'static str,
        /// The limit.
        max: usize,
    },
    /// A key is empty (after trimming).
    #[error("empty {what} key in triple ({head:?}, {relation:?}, {tail:?})")]
    EmptyKey {
        /// `"head"`, `"relation"` or `"tail"`.
        what: &'static str,
        /// The head key as given.
        head: String,
        /// The relation key as given.
        relation: String,
        /// The tail key as given.
        tail: String,
    },
}

/// An entity's position in a [`KnowledgeGraph`] (dense, in order of first appearance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityId(pub u32);

/// A relation's position in a [`KnowledgeGraph`] (dense, in order of first appearance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelationId(pub u32);

impl EntityId {
    /// The position as an index.
    ///
    /// ```
    /// assert_eq!(pgraphrag_graph::kg::EntityId(3).index(), 3);
    /// ```
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl RelationId {
    /// The position as an index.
    ///
    /// ```
    /// assert_eq!(pgraphrag_graph::kg::RelationId(2).index(), 2);
    /// ```
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An entity: its key, optional name and role label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    /// The key (a Freebase MID in the MovieLens KG).
    pub key: String,
    /// A name, when one is known (a linked movie's title).
    pub name: Option<String>,
    /// The role label (see [`KnowledgeGraph::add_triple`]).
    pub role: String,
    /// Whether `role` came from a relation the entity heads (stronger than a tail position).
    role_from_head: bool,
}

impl Entity {
    /// The entity's text: its name, else its role label.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// let (h, _, t) = kg.add_triple("m.1", "film.film.language", "m.2").unwrap();
    /// kg.set_name(h, "Heat");
    /// assert_eq!((kg.entity(h).text(), kg.entity(t).text()), ("Heat", "language"));
    /// ```
    pub fn text(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.role)
    }
}

/// A relation: its key and readable text ([`relation_text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    /// The key (`film.film.directed_by`).
    pub key: String,
    /// The readable text (`film directed by`).
    pub text: String,
}

/// One directed KG edge: `head --relation--> tail`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KgEdge {
    /// The edge's position (file order of the triples).
    pub id: u32,
    /// The head entity.
    pub head: EntityId,
    /// The relation.
    pub relation: RelationId,
    /// The tail entity.
    pub tail: EntityId,
}

/// A triple as text, borrowed from the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TripleText<'a> {
    /// The head entity's text.
    pub head: &'a str,
    /// The relation's text.
    pub relation: &'a str,
    /// The tail entity's text.
    pub tail: &'a str,
}

/// The readable text of a relation id: its last two dot-separated parts (Freebase's type and
/// property) with underscores turned into spaces, joined by a space; an id without a dot keeps
/// its one part. Freebase ids are `domain.type.property` and the type usually repeats the
/// domain, so the domain is dropped.
///
/// ```
/// use pgraphrag_graph::kg::relation_text;
/// assert_eq!(relation_text("film.film.directed_by"), "film directed by");
/// assert_eq!(relation_text("film.film_genre.films_in_this_genre"), "film genre films in this genre");
/// assert_eq!(relation_text("likes"), "likes");
/// ```
pub fn relation_text(key: &str) -> String {
    let parts: Vec<&str> = key.split('.').filter(|p| !p.is_empty()).collect();
    let tail = if parts.len() >= 2 {
        &parts[parts.len() - 2..]
    } else {
        &parts[..]
    };
    words(&tail.join(" "))
}

/// Underscores to spaces, whitespace collapsed.
fn words(s: &str) -> String {
    s.replace('_', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The role a relation gives its head: the type part (the second-to-last dot part).
fn head_role(key: &str) -> String {
    let parts: Vec<&str> = key.split('.').filter(|p| !p.is_empty()).collect();
    match parts.len() {
        0 => String::new(),
        1 => words(parts[0]),
        n => words(parts[n - 2]),
    }
}

/// The role a relation gives its tail: the property part (the last dot part).
fn tail_role(key: &str) -> String {
    key.split('.')
        .rfind(|p| !p.is_empty())
        .map(words)
        .unwrap_or_default()
}

/// The `k`-hop ego sub-graph of a centre entity ([`KnowledgeGraph::ego`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgoGraph {
    /// The centre.
    pub centre: EntityId,
    /// The number of hops.
    pub hops: usize,
    /// Every entity within `hops` hops (edges followed in either direction) with its distance,
    /// by distance, then by id; the centre comes first at distance 0.
    pub nodes: Vec<(EntityId, usize)>,
    /// Every edge with an endpoint at distance below `hops`, by edge id.
    pub edges: Vec<KgEdge>,
}

impl EgoGraph {
    /// The sub-graph's triples as text, in edge order.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// let (h, _, _) = kg.add_triple("a", "x.film.country", "b").unwrap();
    /// let t = kg.ego(h, 1).triples(&kg);
    /// assert_eq!((t[0].head, t[0].relation, t[0].tail), ("film", "film country", "country"));
    /// ```
    pub fn triples<'a>(&self, kg: &'a KnowledgeGraph) -> Vec<TripleText<'a>> {
        self.edges.iter().map(|e| kg.triple_text(e)).collect()
    }
}

/// A directed, typed knowledge graph with text attributes. Triples are added one at a time;
/// repeated triples are kept (each is an edge).
#[derive(Debug, Clone, Default)]
pub struct KnowledgeGraph {
    graph: DiGraph<Entity, RelationId>,
    relations: Vec<Relation>,
    entity_by_key: HashMap<String, EntityId>,
    relation_by_key: HashMap<String, RelationId>,
}

impl KnowledgeGraph {
    /// An empty graph.
    ///
    /// ```
    /// let kg = pgraphrag_graph::kg::KnowledgeGraph::new();
    /// assert_eq!((kg.entity_count(), kg.edge_count()), (0, 0));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the triple `head --relation--> tail` (keys trimmed), creating entities and the
    /// relation on first sight; returns their ids.
    ///
    /// **Role labels.** An entity's role is the *type* part of the first relation it heads
    /// (`film.director.film` → `"director"`, `film.film.genre` → `"film"`,
    /// `film.film_genre.films_in_this_genre` → `"film genre"`); an entity that heads no
    /// relation takes the *property* part of the first relation it is the tail of
    /// (`film.film.language` → `"language"`, `film.film.award_nomination` →
    /// `"award nomination"`). Freebase names a property's head type in its id, so the head
    /// rule is exact and the tail rule is the best the id tells. Underscores become spaces.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// let (_, _, d) = kg.add_triple("m.1", "film.film.directed_by", "m.2").unwrap();
    /// assert_eq!(kg.entity(d).role, "directed by"); // only a tail so far
    /// kg.add_triple("m.2", "film.director.film", "m.1").unwrap();
    /// assert_eq!(kg.entity(d).role, "director"); // a head role wins
    /// assert!(kg.add_triple("", "r", "m.1").is_err());
    /// ```
    pub fn add_triple(
        &mut self,
        head: &str,
        relation: &str,
        tail: &str,
    ) -> Result<(EntityId, RelationId, EntityId), KgError> {
        let (h, r, t) = (head.trim(), relation.trim(), tail.trim());
        for (what, key) in [("head", h), ("relation", r), ("tail", t)] {
            if key.is_empty() {
                return Err(KgError::EmptyKey {
                    what,
                    head: head.to_string(),
                    relation: relation.to_string(),
                    tail: tail.to_string(),
                });
            }
        }
        if self.graph.edge_count() >= u32::MAX as usize - 1 {
            return Err(KgError::Full {
                what: "edges",
                max: u32::MAX as usize - 1,
            });
        }
        let rel = self.relation_id(r)?;
        let hid = self.entity_id(h)?;
        let tid = self.entity_id(t)?;
        {
            let e = &mut self.graph[NodeIndex::new(hid.index())];
            if !e.role_from_head {
                e.role = head_role(r);
                e.role_from_head = true;
            }
        }
        {
            let e = &mut self.graph[NodeIndex::new(tid.index())];
            if e.role.is_empty() && !e.role_from_head {
                e.role = tail_role(r);
            }
        }
        self.graph.add_edge(
            NodeIndex::new(hid.index()),
            NodeIndex::new(tid.index()),
            rel,
        );
        Ok((hid, rel, tid))
    }

    fn relation_id(&mut self, key: &str) -> Result<RelationId, KgError> {
        if let Some(&id) = self.relation_by_key.get(key) {
            return Ok(id);
        }
        let id = u32::try_from(self.relations.len()).map_err(|_| KgError::Full {
            what: "relations",
            max: u32::MAX as usize,
        })?;
        self.relations.push(Relation {
            key: key.to_string(),
            text: relation_text(key),
        });
        self.relation_by_key.insert(key.to_string(), RelationId(id));
        Ok(RelationId(id))
    }

    fn entity_id(&mut self, key: &str) -> Result<EntityId, KgError> {
        if let Some(&id) = self.entity_by_key.get(key) {
            return Ok(id);
        }
        if self.graph.node_count() >= u32::MAX as usize - 1 {
            return Err(KgError::Full {
                what: "entities",
                max: u32::MAX as usize - 1,
            });
        }
        let n = self.graph.add_node(Entity {
            key: key.to_string(),
            name: None,
            role: String::new(),
            role_from_head: false,
        });
        let id = EntityId(n.index() as u32);
        self.entity_by_key.insert(key.to_string(), id);
        Ok(id)
    }

    /// Sets an entity's name (its text from then on). An id not in the graph is ignored and
    /// `false` returned.
    ///
    /// ```
    /// use pgraphrag_graph::kg::{EntityId, KnowledgeGraph};
    /// let mut kg = KnowledgeGraph::new();
    /// let (h, _, _) = kg.add_triple("m.1", "r", "m.2").unwrap();
    /// assert!(kg.set_name(h, "Toy Story"));
    /// assert!(!kg.set_name(EntityId(9), "nobody"));
    /// ```
    pub fn set_name(&mut self, id: EntityId, name: &str) -> bool {
        match self.graph.node_weight_mut(NodeIndex::new(id.index())) {
            Some(e) => {
                e.name = Some(name.to_string());
                true
            }
            None => false,
        }
    }

    /// The entity with this key.
    ///
    /// ```
    /// use pgraphrag_graph::kg::{EntityId, KnowledgeGraph};
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "r", "m.2").unwrap();
    /// assert_eq!((kg.find("m.2"), kg.find("m.3")), (Some(EntityId(1)), None));
    /// ```
    pub fn find(&self, key: &str) -> Option<EntityId> {
        self.entity_by_key.get(key.trim()).copied()
    }

    /// The relation with this key.
    ///
    /// ```
    /// use pgraphrag_graph::kg::{KnowledgeGraph, RelationId};
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "film.film.genre", "m.2").unwrap();
    /// assert_eq!(kg.find_relation("film.film.genre"), Some(RelationId(0)));
    /// ```
    pub fn find_relation(&self, key: &str) -> Option<RelationId> {
        self.relation_by_key.get(key.trim()).copied()
    }

    /// The entity `id`. Panics if `id` is not of this graph (ids come from this graph).
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// let (h, _, _) = kg.add_triple("m.1", "r", "m.2").unwrap();
    /// assert_eq!(kg.entity(h).key, "m.1");
    /// ```
    pub fn entity(&self, id: EntityId) -> &Entity {
        &self.graph[NodeIndex::new(id.index())]
    }

    /// The entity `id`, or `None` when the graph has no such entity.
    ///
    /// ```
    /// use pgraphrag_graph::kg::{EntityId, KnowledgeGraph};
    /// assert!(KnowledgeGraph::new().get_entity(EntityId(0)).is_none());
    /// ```
    pub fn get_entity(&self, id: EntityId) -> Option<&Entity> {
        self.graph.node_weight(NodeIndex::new(id.index()))
    }

    /// The relation `id`. Panics if `id` is not of this graph (ids come from this graph).
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// let (_, r, _) = kg.add_triple("m.1", "film.film.country", "m.2").unwrap();
    /// assert_eq!(kg.relation(r).text, "film country");
    /// ```
    pub fn relation(&self, id: RelationId) -> &Relation {
        &self.relations[id.index()]
    }

    /// Every relation, by id.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "a.b.c", "m.2").unwrap();
    /// assert_eq!(kg.relations()[0].key, "a.b.c");
    /// ```
    pub fn relations(&self) -> &[Relation] {
        &self.relations
    }

    /// The number of entities.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "r", "m.1").unwrap();
    /// assert_eq!(kg.entity_count(), 1);
    /// ```
    pub fn entity_count(&self) -> usize {
        self.graph.node_count()
    }

    /// The number of edges (triples added, repeats included).
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "r", "m.2").unwrap();
    /// kg.add_triple("m.1", "r", "m.2").unwrap();
    /// assert_eq!(kg.edge_count(), 2);
    /// ```
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// Every entity id, in order.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "r", "m.2").unwrap();
    /// assert_eq!(kg.entity_ids().count(), 2);
    /// ```
    pub fn entity_ids(&self) -> impl Iterator<Item = EntityId> + '_ {
        self.graph
            .node_indices()
            .map(|n| EntityId(n.index() as u32))
    }

    /// Every edge, by edge id (the order the triples were added in).
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "r", "m.2").unwrap();
    /// let e = kg.edges().next().unwrap();
    /// assert_eq!((kg.entity(e.head).key.as_str(), kg.entity(e.tail).key.as_str()), ("m.1", "m.2"));
    /// ```
    pub fn edges(&self) -> impl Iterator<Item = KgEdge> + '_ {
        self.graph.edge_indices().filter_map(|e| self.edge(e))
    }

    fn edge(&self, e: EdgeIndex) -> Option<KgEdge> {
        let (h, t) = self.graph.edge_endpoints(e)?;
        Some(KgEdge {
            id: e.index() as u32,
            head: EntityId(h.index() as u32),
            relation: *self.graph.edge_weight(e)?,
            tail: EntityId(t.index() as u32),
        })
    }

    /// Whether the graph has the edge `head --relation--> tail` with this edge id.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "r", "m.2").unwrap();
    /// let e = kg.edges().next().unwrap();
    /// assert!(kg.contains_edge(&e));
    /// assert!(!kg.contains_edge(&pgraphrag_graph::kg::KgEdge { head: e.tail, tail: e.head, ..e }));
    /// ```
    pub fn contains_edge(&self, edge: &KgEdge) -> bool {
        self.edge(EdgeIndex::new(edge.id as usize)).as_ref() == Some(edge)
    }

    /// The text of an edge's triple.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "film.film.genre", "m.2").unwrap();
    /// let t = kg.triple_text(&kg.edges().next().unwrap());
    /// assert_eq!((t.head, t.relation, t.tail), ("film", "film genre", "genre"));
    /// ```
    pub fn triple_text(&self, edge: &KgEdge) -> TripleText<'_> {
        TripleText {
            head: self.entity(edge.head).text(),
            relation: &self.relation(edge.relation).text,
            tail: self.entity(edge.tail).text(),
        }
    }

    /// The `hops`-hop ego sub-graph of `centre`: every entity within `hops` hops of it
    /// (edges followed in either direction, as the released code's undirected networkx graph
    /// does) and every edge with an endpoint at distance below `hops`. Those edges are exactly
    /// the ones an `hops`-layer message-passing GNN reads to represent the centre, and at
    /// `hops = 1` they are the centre's incident edges (the released code's first-order
    /// sub-graph). Edges between two entities both at distance `hops` are left out (PyG's
    /// `k_hop_subgraph` would keep them). `hops = 0` gives the centre alone. An unknown centre
    /// gives an empty sub-graph.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// let (a, _, b) = kg.add_triple("a", "r", "b").unwrap();
    /// kg.add_triple("c", "r", "b").unwrap();
    /// kg.add_triple("c", "r", "d").unwrap();
    /// let ego = kg.ego(a, 2);
    /// let keys: Vec<&str> = ego.nodes.iter().map(|&(n, _)| kg.entity(n).key.as_str()).collect();
    /// assert_eq!(keys, ["a", "b", "c"]);
    /// assert_eq!(ego.edges.len(), 2); // c -> d starts at distance 2
    /// assert_eq!(kg.ego(a, 0).edges.len(), 0);
    /// ```
    pub fn ego(&self, centre: EntityId, hops: usize) -> EgoGraph {
        let mut ego = EgoGraph {
            centre,
            hops,
            nodes: Vec::new(),
            edges: Vec::new(),
        };
        if self.get_entity(centre).is_none() {
            return ego;
        }
        let mut dist: HashMap<NodeIndex, usize> = HashMap::new();
        let mut queue = VecDeque::new();
        let start = NodeIndex::new(centre.index());
        dist.insert(start, 0);
        queue.push_back(start);
        let mut edges: Vec<EdgeIndex> = Vec::new();
        while let Some(n) = queue.pop_front() {
            let d = dist[&n];
            if d >= hops {
                continue;
            }
            for dir in [Direction::Outgoing, Direction::Incoming] {
                for e in self.graph.edges_directed(n, dir) {
                    edges.push(e.id());
                    let other = if dir == Direction::Outgoing {
                        e.target()
                    } else {
                        e.source()
                    };
                    if let std::collections::hash_map::Entry::Vacant(v) = dist.entry(other) {
                        v.insert(d + 1);
                        queue.push_back(other);
                    }
                }
            }
        }
        // An edge between two entities below `hops` (or a self-loop) is seen twice.
        edges.sort_unstable();
        edges.dedup();
        ego.edges = edges.into_iter().filter_map(|e| self.edge(e)).collect();
        let mut nodes: Vec<(EntityId, usize)> = dist
            .into_iter()
            .map(|(n, d)| (EntityId(n.index() as u32), d))
            .collect();
        nodes.sort_unstable_by_key(|&(n, d)| (d, n));
        ego.nodes = nodes;
        ego
    }
}
