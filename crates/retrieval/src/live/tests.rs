//! Unit tests of the live index: validation, writes, deletes, and the dense path with a test
//! encoder.

use std::sync::Arc;

use pgraphrag_core::{Embeddings, Encoder};
use pgraphrag_graph::Scope;

use super::*;
use crate::Error;

fn doc(user: &str, id: &str, item: Option<&str>, text: &str) -> Document {
    Document {
        user: user.into(),
        id: id.into(),
        item: item.map(Into::into),
        text: text.into(),
        ..Default::default()
    }
}

fn req(user: &str, item: Option<&str>, query: &str, scope: Option<Scope>) -> ContextRequest {
    ContextRequest {
        user: user.into(),
        item: item.map(Into::into),
        query: query.into(),
        scope,
        k: 5,
        ..Default::default()
    }
}

/// A test double: counts of four words.
struct Words;
impl Encoder for Words {
    fn encode(&self, texts: &[&str]) -> pgraphrag_core::Result<Embeddings> {
        let words = ["soap", "lavender", "dry", "hair"];
        let v = texts
            .iter()
            .flat_map(|t| words.map(|w| t.to_lowercase().matches(w).count() as f32 + 0.1));
        Embeddings::new(4, v.collect())
    }
    fn dim(&self) -> Option<usize> {
        Some(4)
    }
}

#[test]
fn index_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<ProfileIndex>();
    check::<Snapshot>();
    check::<Context>();
}

#[test]
fn bad_documents_get_typed_errors_and_change_nothing() {
    let index = ProfileIndex::default();
    let cases: Vec<(Document, &str)> = vec![
        (doc("", "1", None, "x"), "user"),
        (doc("a", " ", None, "x"), "id"),
        (doc("a", "1", Some(""), "x"), "item"),
        (doc("a", "1", None, "  "), "text"),
    ];
    for (d, field) in cases {
        match index.upsert(d) {
            Err(Error::EmptyField { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    for r in [f64::NAN, f64::INFINITY, -7.5, 5.5] {
        let d = Document {
            rating: Some(r),
            ..doc("a", "1", None, "x")
        };
        assert!(
            matches!(index.upsert(d), Err(Error::BadRating { .. })),
            "{r}"
        );
    }
    let twice = vec![doc("a", "1", None, "x"), doc("a", "1", None, "y")];
    assert!(matches!(
        index.upsert_batch(twice),
        Err(Error::DuplicateDocument { .. })
    ));
    // A batch with one bad document writes none of them.
    let mixed = vec![doc("a", "1", None, "x"), doc("", "2", None, "y")];
    assert!(index.upsert_batch(mixed).is_err());
    let s = index.snapshot();
    assert_eq!((s.generation(), s.num_documents()), (0, 0));
    // The rating range is an option.
    let wide = ProfileIndex::new(IndexOptions {
        ratings: Some((-10.0, 10.0)),
        ..Default::default()
    })
    .unwrap();
    let d = Document {
        rating: Some(-7.5),
        ..doc("a", "1", None, "x")
    };
    wide.upsert(d).unwrap();
    assert!(
        ProfileIndex::new(IndexOptions {
            ratings: Some((5.0, 1.0)),
            ..Default::default()
        })
        .is_err()
    );
}

#[test]
fn bad_requests_get_typed_errors() {
    let index = ProfileIndex::default();
    index.upsert(doc("a", "1", Some("p"), "soap")).unwrap();
    let zero = ContextRequest {
        k: 0,
        ..req("a", Some("p"), "soap", Some(Scope::Both))
    };
    assert!(matches!(index.context(&zero), Err(Error::ZeroK)));
    let unknown = req("zed", Some("p"), "soap", Some(Scope::User));
    assert!(matches!(
        index.context(&unknown),
        Err(Error::UnknownUser { .. })
    ));
    let no_item = req("a", None, "soap", Some(Scope::Neighbor));
    assert!(matches!(index.context(&no_item), Err(Error::MissingItem)));
    let bad_item = req("a", Some("q"), "soap", Some(Scope::Neighbor));
    assert!(matches!(
        index.context(&bad_item),
        Err(Error::UnknownItem { .. })
    ));
    let dense = ContextRequest {
        retriever: RetrieverKind::Dense,
        ..req("a", Some("p"), "soap", Some(Scope::Both))
    };
    assert!(matches!(
        index.context(&dense),
        Err(Error::NoEncoder { retriever: "dense" })
    ));
    assert!(matches!(
        index.remove("a", "9"),
        Err(Error::UnknownDocument { .. })
    ));
    assert!(matches!(
        index.remove_user("zed"),
        Err(Error::UnknownUser { .. })
    ));
    // No scope: nothing retrieved, and k does not matter.
    let none = ContextRequest {
        k: 0,
        ..req("a", None, "soap", None)
    };
    assert!(index.context(&none).unwrap().entries().next().is_none());
}

#[test]
fn an_edit_that_keeps_its_id_is_answered_from_the_new_text() {
    let index = ProfileIndex::default();
    index
        .upsert_batch(vec![
            doc("a", "1", Some("p"), "the soap"),
            doc("b", "1", Some("p"), "lavender soap"),
            doc("c", "1", Some("p"), "plain soap"),
            doc("d", "1", Some("p"), "a towel"),
        ])
        .unwrap();
    let r = req("a", Some("p"), "lavender", Some(Scope::Neighbor));
    assert_eq!(index.context(&r).unwrap().neighbors[0].doc.user(), "b");
    let w = index
        .upsert(doc("c", "1", Some("p"), "lavender lavender"))
        .unwrap();
    assert_eq!((w.created, w.replaced, w.generation), (0, 1, 2));
    let ctx = index.context(&r).unwrap();
    assert_eq!(ctx.neighbors[0].doc.user(), "c");
    // The update kept the document's place in the index's order.
    let s = index.snapshot();
    let order: Vec<&str> = s.item_documents("p").iter().map(|d| d.user()).collect();
    assert_eq!(order, ["a", "b", "c", "d"]);
}

#[test]
fn deletes_erase_documents_and_their_tokens() {
    let index = ProfileIndex::default();
    index
        .upsert_batch(vec![
            doc("a", "1", Some("p"), "common words zanzibar"),
            doc("a", "2", Some("q"), "common words"),
            doc("b", "1", Some("p"), "common words"),
        ])
        .unwrap();
    let tokens = index.snapshot().num_tokens();
    assert_eq!(tokens, 3);
    let gone = index.remove_user("a").unwrap();
    assert_eq!(
        (gone.documents, gone.token_lists, gone.embeddings),
        (2, 2, 0)
    );
    let s = index.snapshot();
    assert_eq!((s.num_documents(), s.num_users(), s.num_items()), (1, 1, 1));
    // "zanzibar" was only in a's documents: it left the vocabulary.
    assert_eq!(s.num_tokens(), 2);
    assert!(!s.has_user("a") && !s.has_item("q"));
    index.remove("b", "1").unwrap();
    let s = index.snapshot();
    assert_eq!(
        (s.num_documents(), s.num_tokens(), s.generation()),
        (0, 0, 3)
    );
}

#[test]
fn missing_titles_are_not_a_none_token() {
    let index = ProfileIndex::default();
    index
        .upsert_batch(vec![
            doc("a", "1", Some("p"), "x"),
            doc("b", "1", Some("p"), "a review"),
            doc("c", "1", Some("p"), "another review"),
        ])
        .unwrap();
    let ctx = index
        .context(&req("a", Some("p"), "none", Some(Scope::Neighbor)))
        .unwrap();
    assert!(ctx.neighbors.iter().all(|h| h.score == 0.0));
}

#[test]
fn dense_and_hybrid_rank_with_the_encoder() {
    let index = ProfileIndex::default()
        .with_encoder(Arc::new(Words))
        .unwrap();
    index
        .upsert_batch(vec![
            doc("a", "1", Some("p"), "my soap"),
            doc("b", "1", Some("p"), "dry dry skin"),
            doc("c", "1", Some("p"), "lavender soap"),
        ])
        .unwrap();
    for retriever in [RetrieverKind::Dense, RetrieverKind::Hybrid] {
        let r = ContextRequest {
            retriever,
            ..req("a", Some("p"), "dry", Some(Scope::Neighbor))
        };
        let ctx = index.context(&r).unwrap();
        assert_eq!(ctx.neighbors[0].doc.user(), "b", "{retriever:?}");
        assert_eq!(ctx.neighbors.len(), 2);
    }
    let removed = index.remove_user("b").unwrap();
    assert_eq!(removed.embeddings, 1);
    assert!(
        index
            .snapshot()
            .document("c", "1")
            .unwrap()
            .embedding()
            .is_some()
    );
}

#[test]
fn readers_keep_their_snapshot_while_writes_go_on() {
    let index = ProfileIndex::default();
    index.upsert(doc("a", "1", Some("p"), "soap")).unwrap();
    index.upsert(doc("b", "1", Some("p"), "soap")).unwrap();
    let held = index.snapshot();
    index.remove_user("b").unwrap();
    let r = req("a", Some("p"), "soap", Some(Scope::Neighbor));
    let old = index.context_at(&held, &r).unwrap();
    assert_eq!((old.generation, old.neighbors.len()), (2, 1));
    let now = index.context(&r).unwrap();
    assert_eq!((now.generation, now.neighbors.len()), (3, 0));
}
