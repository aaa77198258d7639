//! The live index against indexes rebuilt from scratch: any sequence of creates, updates,
//! deletes and queries (BM25, dense and hybrid, every scope), sequential or with reader
//! threads running beside the writer, gives exactly the rankings of an index built anew from
//! the documents of the generation each read saw; BM25 also gives exactly the rankings of
//! the batch `ProfileRanker` with `CachedBm25` on a graph of those documents.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pgraphrag_core::{DocText, Embeddings, Encoder, Entry, ItemId, TieOrder};
use pgraphrag_graph::{GraphOptions, Scope, UserItemGraph};
use pgraphrag_retrieval::live::{
    Context, ContextRequest, Document, IndexOptions, ProfileIndex, RetrieverKind,
};
use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, RandomReview};
use pgraphrag_retrieval::sparse::Bm25Builder;
use proptest::prelude::*;

const WORDS: [&str; 9] = [
    "soap", "lavender", "dry", "skin", "great", "hair", "the", "none", ".",
];

/// A test double: each text as counts of hashed words in 6 dimensions (plus a constant, so no
/// vector is zero).
struct Hashed;
impl Encoder for Hashed {
    fn encode(&self, texts: &[&str]) -> pgraphrag_core::Result<Embeddings> {
        let mut v = Vec::new();
        for t in texts {
            let mut row = [0.25f32; 6];
            for w in t.split_whitespace() {
                let h = w
                    .bytes()
                    .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b.into()));
                row[(h % 6) as usize] += 1.0 + (h % 3) as f32;
            }
            v.extend(row);
        }
        Embeddings::new(6, v)
    }
    fn dim(&self) -> Option<usize> {
        Some(6)
    }
}

#[derive(Debug, Clone)]
enum Op {
    Upsert(Document),
    Remove(String, String),
    RemoveUser(String),
    Query(ContextRequest),
}

fn words(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(0..WORDS.len(), 0..max)
        .prop_map(|w| w.iter().map(|&i| WORDS[i]).collect::<Vec<_>>().join(" "))
}

fn user() -> impl Strategy<Value = String> {
    (0..4u8).prop_map(|u| format!("u{u}"))
}

fn item() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(0.85, (0..3u8).prop_map(|i| format!("p{i}")))
}

fn op() -> impl Strategy<Value = Op> {
    op_with(4)
}

/// Operations on document ids `0..ids` of each user.
fn op_with(ids: u8) -> impl Strategy<Value = Op> {
    let upsert = (user(), 0..ids, item(), prop::option::of(words(3)), words(6)).prop_map(
        |(user, id, item, title, text)| {
            Op::Upsert(Document {
                user,
                id: id.to_string(),
                item,
                title,
                text,
                ..Default::default()
            })
        },
    );
    let scope = prop_oneof![
        Just(None),
        Just(Some(Scope::User)),
        Just(Some(Scope::Neighbor)),
        Just(Some(Scope::Both)),
    ];
    let retriever = prop_oneof![
        Just(RetrieverKind::Bm25),
        Just(RetrieverKind::Dense),
        Just(RetrieverKind::Hybrid),
    ];
    let query = (user(), item(), words(4), scope, 1..4usize, retriever).prop_map(
        |(user, item, query, scope, k, retriever)| {
            Op::Query(ContextRequest {
                user,
                item,
                query,
                scope,
                k,
                retriever,
            })
        },
    );
    prop_oneof![
        6 => upsert,
        1 => (user(), 0..ids).prop_map(|(u, d)| Op::Remove(u, d.to_string())),
        1 => user().prop_map(Op::RemoveUser),
        4 => query,
    ]
}

fn new_index() -> ProfileIndex {
    ProfileIndex::default()
        .with_encoder(Arc::new(Hashed))
        .unwrap()
}

/// The documents of one generation, in the index's order (creation order; updates in place).
#[derive(Debug, Clone, Default)]
struct Model {
    docs: Vec<Document>,
}

impl Model {
    fn upsert(&mut self, d: Document) {
        match self
            .docs
            .iter_mut()
            .find(|x| x.user == d.user && x.id == d.id)
        {
            Some(x) => *x = d,
            None => self.docs.push(d),
        }
    }
    fn remove(&mut self, user: &str, id: &str) {
        self.docs.retain(|x| !(x.user == user && x.id == id));
    }
    fn remove_user(&mut self, user: &str) {
        self.docs.retain(|x| x.user != user);
    }
    /// An index built from scratch from these documents.
    fn rebuild(&self) -> ProfileIndex {
        let index = new_index();
        for d in &self.docs {
            index.upsert(d.clone()).unwrap();
        }
        index
    }
}

/// A context as comparable values: (user, doc id, score bits) per side.
type Flat = (Vec<(String, String, u64)>, Vec<(String, String, u64)>);
fn flat(c: &Context) -> Flat {
    let side = |hits: &[pgraphrag_retrieval::live::Hit]| {
        hits.iter()
            .map(|h| {
                (
                    h.doc.user().to_string(),
                    h.doc.id().to_string(),
                    h.score.to_bits(),
                )
            })
            .collect()
    };
    (side(&c.user), side(&c.neighbors))
}

/// A read a reader made: the generation it saw, the request and what it got.
type Seen = (u64, ContextRequest, Result<Flat, String>);

/// What a read gives, as comparable values (errors by their message).
fn outcome(index: &ProfileIndex, req: &ContextRequest) -> Result<Flat, String> {
    index
        .context(req)
        .map(|c| flat(&c))
        .map_err(|e| e.to_string())
}

/// The batch ranker's BM25 rankings on a graph of the model's documents, as a flat context.
fn batch_bm25(model: &Model, req: &ContextRequest) -> Flat {
    let entries = model.docs.iter().enumerate().map(|(i, d)| Entry {
        id: i,
        author: d.user.clone(),
        // A document about no item is nobody's neighbour: give it an item nobody targets.
        item: d.item.clone().unwrap_or_else(|| format!("\u{0}{i}")),
        title: d.title.clone(),
        text: Some(d.text.clone()),
        rating: d.rating,
        time: d.time,
    });
    let g = UserItemGraph::from_entries(entries, GraphOptions::default()).unwrap();
    let bm25 = CachedBm25::pgraphrag()
        .with_doc_text(DocText::Clean)
        .with_tie_order(TieOrder::InputOrder);
    let opts = ProfileOptions {
        k: req.k,
        random: RandomReview::Off,
        ..ProfileOptions::default()
    };
    let item = ItemId::from(req.item.clone().unwrap_or_default());
    let p = ProfileRanker::new(bm25, opts)
        .rank(&g, &req.user, &item, &req.query)
        .unwrap();
    let side = |v: &[pgraphrag_core::RankedEntry]| {
        v.iter()
            .map(|r| {
                let d = &model.docs[r.entry.id];
                (d.user.clone(), d.id.clone(), r.score.unwrap().to_bits())
            })
            .collect()
    };
    (side(&p.user), side(&p.neighbors))
}

fn check_sequential(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let index = new_index();
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Upsert(d) => {
                if index.upsert(d.clone()).is_ok() {
                    model.upsert(d);
                }
            }
            Op::Remove(u, d) => {
                if index.remove(&u, &d).is_ok() {
                    model.remove(&u, &d);
                }
            }
            Op::RemoveUser(u) => {
                if index.remove_user(&u).is_ok() {
                    model.remove_user(&u);
                }
            }
            Op::Query(req) => {
                let live = outcome(&index, &req);
                prop_assert_eq!(&live, &outcome(&model.rebuild(), &req), "{:?}", req);
                if let (Ok(live), RetrieverKind::Bm25, Some(Scope::Both), Some(_)) =
                    (&live, req.retriever, req.scope, &req.item)
                {
                    prop_assert_eq!(live, &batch_bm25(&model, &req), "{:?}", req);
                }
            }
        }
    }
    prop_assert_eq!(index.snapshot().num_documents(), model.docs.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn sequential_writes_and_reads_match_a_rebuilt_index(ops in prop::collection::vec(op(), 1..60)) {
        check_sequential(ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Lists long enough for the index to keep their BM25 fit (64 documents and more), edited
    /// and read in any order: still the rebuilt index's and the batch ranker's rankings.
    #[test]
    fn long_lists_keep_exact_scores_through_edits(
        load in prop::collection::vec((user(), 0..60u8, item(), 0..97usize, 1..8usize), 220..320),
        ops in prop::collection::vec(op_with(60), 20..80),
        queries in prop::collection::vec((user(), 0..3u8, 0..97usize, 1..5usize, 1..6usize), 30),
    ) {
        let mut all: Vec<Op> = load
            .into_iter()
            .map(|(user, id, item, seed, len)| {
                let text = varied_text(seed, len);
                Op::Upsert(Document { user, id: id.to_string(), item, text, ..Default::default() })
            })
            .collect();
        // Reads in the larger vocabulary, BM25 over both sides (checked against the batch
        // ranker too), between the edits.
        let reads = queries.into_iter().map(|(user, item, seed, len, k)| {
            Op::Query(ContextRequest {
                user,
                item: Some(format!("p{item}")),
                query: varied_text(seed, len),
                k,
                ..Default::default()
            })
        });
        let mut edits = ops.into_iter();
        for read in reads {
            all.push(read);
            all.extend(edits.by_ref().take(3));
        }
        all.extend(edits);
        check_sequential(all)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// One writer applies the writes while three readers query; every read equals the
    /// rebuilt index of the generation it reports.
    #[test]
    fn concurrent_reads_match_the_generation_they_saw(
        writes in prop::collection::vec(op(), 20..120),
        queries in prop::collection::vec(op(), 30..60),
    ) {
        let queries: Vec<ContextRequest> = queries
            .into_iter()
            .filter_map(|o| match o { Op::Query(q) => Some(q), _ => None })
            .collect();
        let index = new_index();
        let states: Mutex<HashMap<u64, Model>> = Mutex::new(HashMap::from([(0, Model::default())]));
        let seen: Mutex<Vec<Seen>> = Mutex::default();
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut model = Model::default();
                for op in &writes {
                    let g = match op {
                        Op::Upsert(d) => index.upsert(d.clone()).ok().map(|w| {
                            model.upsert(d.clone());
                            w.generation
                        }),
                        Op::Remove(u, d) => index.remove(u, d).ok().inspect(|_| model.remove(u, d)),
                        Op::RemoveUser(u) => index
                            .remove_user(u)
                            .ok()
                            .map(|r| { model.remove_user(u); r.generation }),
                        Op::Query(_) => None,
                    };
                    if let Some(g) = g {
                        states.lock().unwrap().insert(g, model.clone());
                    }
                }
            });
            for t in 0..3 {
                let (index, queries, seen) = (&index, &queries, &seen);
                s.spawn(move || {
                    for round in 0..4 {
                        for q in queries.iter().skip((t + round) % 3) {
                            let snap = index.snapshot();
                            let got = index.context_at(&snap, q).map(|c| flat(&c)).map_err(|e| e.to_string());
                            seen.lock().unwrap().push((snap.generation(), q.clone(), got));
                        }
                    }
                });
            }
        });
        let states = states.into_inner().unwrap();
        let mut rebuilt: HashMap<u64, ProfileIndex> = HashMap::new();
        for (g, q, got) in seen.into_inner().unwrap() {
            let index = rebuilt.entry(g).or_insert_with(|| states[&g].rebuild());
            prop_assert_eq!(&got, &outcome(index, &q), "generation {} {:?}", g, q);
        }
    }
}

/// Texts over a larger vocabulary (so that idfs spread and scores are positive), from a seed.
fn varied_text(seed: usize, len: usize) -> String {
    (0..len)
        .map(|j| format!("w{}", (seed * 31 + j * j * 17 + j) % 97))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The live index's BM25 sides of a user with hundreds of documents and of an item with
/// hundreds of reviews (both long enough for the index to keep their fit) equal the batch
/// ranker's, score for score, before and after edits.
#[test]
fn long_profiles_match_the_batch_ranker() {
    let index = ProfileIndex::new(IndexOptions::default()).unwrap();
    let mut model = Model::default();
    let put = |model: &mut Model, d: Document| {
        index.upsert(d.clone()).unwrap();
        model.upsert(d);
    };
    for i in 0..600 {
        put(
            &mut model,
            Document {
                user: format!("u{}", i % 3),
                id: i.to_string(),
                // Every fourth review is about "hot", an item with 150 reviews.
                item: Some(if i % 4 == 0 {
                    "hot".into()
                } else {
                    format!("p{}", i % 50)
                }),
                text: varied_text(i, i % 9 + 1),
                ..Default::default()
            },
        );
    }
    let req = |user: &str, item: &str| ContextRequest {
        user: user.into(),
        item: Some(item.into()),
        query: "w3 w40 w77 w3 w12".into(),
        k: 10,
        ..Default::default()
    };
    let check = |index: &ProfileIndex, model: &Model| {
        for (u, i) in [
            ("u0", "p3"),
            ("u0", "hot"),
            ("u1", "hot"),
            ("u9", "hot"),
            ("u2", "p7"),
        ] {
            let Ok(c) = index.context(&req(u, i)) else {
                assert_eq!(u, "u9", "only the unknown user fails");
                continue;
            };
            let live = flat(&c);
            assert_eq!(live.0.len(), 10);
            assert!(live.0.iter().any(|e| f64::from_bits(e.2) > 0.0), "{live:?}");
            assert_eq!(live, batch_bm25(model, &req(u, i)), "{u} {i}");
        }
    };
    check(&index, &model);
    // Edits of documents in the long lists (the first ones, whose terms appear first).
    for i in [0, 4, 8, 3] {
        put(
            &mut model,
            Document {
                user: format!("u{}", i % 3),
                id: i.to_string(),
                item: Some("hot".into()),
                text: varied_text(i + 1000, 5),
                ..Default::default()
            },
        );
    }
    index.remove("u1", "1").unwrap();
    model.remove("u1", "1");
    check(&index, &model);
}
