//! Live personalization: one `ProfileIndex` shared by reader threads while a writer creates,
//! edits and deletes reviews of a real PGraphRAG split; every answer is checked.
//!
//! ```sh
//! cargo run -p pgraphrag-examples --example online -- ../shared/data/pgraphrag/hotel_dev.json
//! ```
//!
//! * The writer streams the split's reviews in (batches of 50), then edits some in place and
//!   deletes others, and finally erases one user.
//! * Three readers ask for PGraphRAG contexts (BM25, both scopes, k = 4) all along. Each
//!   answer must come from one snapshot: every entry is the very document that snapshot
//!   holds, and the target user is never their own neighbour.
//! * After an edit, the edited text is what the next read ranks; after the erasure the user is
//!   unknown; and at the end the live index answers exactly as an index rebuilt from its
//!   final documents.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::{Context as _, ensure};
use pgraphrag_data::{IdPolicy, load_split};
use pgraphrag_graph::Scope;
use pgraphrag_retrieval::live::{ContextRequest, Document, ProfileIndex};

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .context("usage: online SPLIT.json (a PGraphRAG split)")?;
    let split = load_split(path.as_ref())?;
    // The split's reviews as documents: doc ids are their positions in the user's profile.
    let mut docs = Vec::new();
    for u in &split.users {
        for (i, r) in u.profile.iter().enumerate() {
            let (title, text) = (r.title.clone(), r.text.clone().unwrap_or_default());
            if title.is_none() && text.trim().is_empty() {
                continue;
            }
            docs.push(Document {
                user: u.id.clone(),
                id: i.to_string(),
                item: Some(IdPolicy::Normalize.apply(&r.pid).to_string()),
                title,
                text,
                rating: r.rating,
                ..Default::default()
            });
        }
    }
    let targets: Vec<ContextRequest> = docs
        .iter()
        .step_by(7)
        .map(|d| ContextRequest {
            user: d.user.clone(),
            item: d.item.clone(),
            query: d.title.clone().unwrap_or_default(),
            scope: Some(Scope::Both),
            k: 4,
            ..Default::default()
        })
        .collect();

    let index = Arc::new(ProfileIndex::default());
    let done = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    let erased = docs.last().map(|d| d.user.clone()).unwrap_or_default();
    std::thread::scope(|s| -> anyhow::Result<()> {
        let readers: Vec<_> = (0..3)
            .map(|t| {
                let (index, targets, done, reads) = (&index, &targets, &done, &reads);
                s.spawn(move || -> anyhow::Result<()> {
                    let mut i = t;
                    while !done.load(Ordering::Relaxed) {
                        let req = &targets[i % targets.len()];
                        i += 3;
                        let snap = index.snapshot();
                        let Ok(ctx) = index.context_at(&snap, req) else {
                            continue; // the user has no document yet (or was erased)
                        };
                        ensure!(ctx.generation == snap.generation());
                        for h in ctx.entries() {
                            let stored = snap.document(h.doc.user(), h.doc.id());
                            ensure!(
                                stored.is_some_and(|d| Arc::ptr_eq(d, &h.doc)),
                                "an entry that is not in its snapshot"
                            );
                        }
                        ensure!(ctx.neighbors.iter().all(|h| h.doc.user() != req.user));
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        let written = (|| -> anyhow::Result<()> {
            for chunk in docs.chunks(50) {
                index.upsert_batch(chunk.to_vec())?;
            }
            // Edit every 11th review in place: the next read must answer with the new text.
            for d in docs.iter().step_by(11) {
                let edited = Document {
                    text: format!("{} zyzzyva", d.text),
                    ..d.clone()
                };
                index.upsert(edited)?;
                let req = ContextRequest {
                    user: d.user.clone(),
                    item: Some("\u{0}none".into()),
                    query: "zyzzyva".into(),
                    scope: Some(Scope::User),
                    k: 10_000,
                    ..Default::default()
                };
                let ctx = index.context(&req)?;
                let hit = ctx.user.iter().find(|h| h.doc.id() == d.id);
                ensure!(
                    hit.is_some_and(|h| h.doc.text().ends_with("zyzzyva")),
                    "a stale answer after editing document {:?} of user {:?}: {:?}",
                    d.id,
                    d.user,
                    ctx.user
                        .iter()
                        .map(|h| (
                            h.doc.id(),
                            h.doc.text().chars().rev().take(12).collect::<String>()
                        ))
                        .collect::<Vec<_>>()
                );
            }
            // Delete every 13th review, then erase one user.
            for d in docs.iter().step_by(13) {
                if index.snapshot().document(&d.user, &d.id).is_some() {
                    index.remove(&d.user, &d.id)?;
                }
            }
            let receipt = index.remove_user(&erased)?;
            println!(
                "erased user {erased:?}: {} documents, {} token lists, {} embeddings",
                receipt.documents, receipt.token_lists, receipt.embeddings
            );
            Ok(())
        })();
        done.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().expect("a reader panicked")?;
        }
        written
    })?;

    let snap = index.snapshot();
    println!(
        "{} documents written; generation {}: {} documents, {} users, {} items; {} checked reads",
        docs.len(),
        snap.generation(),
        snap.num_documents(),
        snap.num_users(),
        snap.num_items(),
        reads.load(Ordering::Relaxed)
    );
    let unknown = ContextRequest {
        user: erased.clone(),
        ..targets[0].clone()
    };
    ensure!(
        index.context(&unknown).is_err(),
        "the erased user still answers"
    );
    // The same answers as an index rebuilt from the final documents, in the same order.
    let mut finals: Vec<_> = snap
        .users()
        .flat_map(|u| snap.user_documents(u).iter().cloned())
        .collect();
    finals.sort_by_key(|d| d.seq());
    let rebuilt = ProfileIndex::default();
    for d in &finals {
        rebuilt.upsert(Document {
            user: d.user().into(),
            id: d.id().into(),
            item: d.item().map(Into::into),
            title: d.title().map(Into::into),
            text: d.text().into(),
            rating: d.rating(),
            time: d.time(),
        })?;
    }
    let mut compared = 0;
    for req in &targets {
        let (Ok(a), Ok(b)) = (index.context(req), rebuilt.context(req)) else {
            continue;
        };
        let ids = |c: &pgraphrag_retrieval::live::Context| -> Vec<(String, String, u64)> {
            c.entries()
                .map(|h| (h.doc.user().into(), h.doc.id().into(), h.score.to_bits()))
                .collect()
        };
        ensure!(ids(&a) == ids(&b), "live and rebuilt differ for {req:?}");
        compared += 1;
    }
    println!("{compared} contexts identical to a rebuilt index");
    Ok(())
}
