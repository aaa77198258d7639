//! [`Snapshot`]: one immutable state of a [`super::ProfileIndex`], and the writes that make
//! the next one.
//!
//! Every map is persistent (`imbl`): cloning a snapshot copies one pointer per map, and a write
//! copies only the paths it changes, so the writer builds the next state beside the one readers
//! hold. A user's or an item's document list is one shared vector, copied whole when it
//! changes (its length is one profile).

use std::sync::{Arc, OnceLock};

use imbl::HashMap;

use super::doc::{Prepared, StoredDoc};
use crate::sparse::fit::with_scratch;
use crate::sparse::list_fit::ListFit;

/// Documents in index order (by [`StoredDoc::seq`]).
type DocList = Arc<DocEntry>;

/// One user's or item's documents, and (for long lists) their BM25 fit, made by the first
/// reader that needs it and shared by every snapshot holding this version of the list.
#[derive(Default)]
pub(crate) struct DocEntry {
    docs: Vec<Arc<StoredDoc>>,
    fit: OnceLock<ListFit>,
}

impl Clone for DocEntry {
    /// The documents only: a copy is made to be changed, so its fit would be stale.
    fn clone(&self) -> Self {
        DocEntry {
            docs: self.docs.clone(),
            fit: OnceLock::new(),
        }
    }
}

impl std::fmt::Debug for DocEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocEntry")
            .field("docs", &self.docs)
            .field("fitted", &self.fit.get().is_some())
            .finish()
    }
}

impl DocEntry {
    /// The terms of the `d`-th document with tokens (`fit` is this list's).
    pub(crate) fn kept_terms(&self, fit: &ListFit, d: u32) -> &[(u32, u32)] {
        &self.docs[fit.list_index(d)].terms
    }

    /// The list's BM25 fit, once the writer made it.
    pub(crate) fn fit(&self) -> Option<&ListFit> {
        self.fit.get()
    }

    /// Makes the list's fit if it has at least `min_docs` documents and none yet.
    fn refit(&self, min_docs: usize, terms: usize) {
        if self.docs.len() >= min_docs && self.fit.get().is_none() {
            let docs = self.docs.iter().map(|d| (d.len, &d.terms[..]));
            let fit = with_scratch(|sc| ListFit::build(docs, sc, terms));
            // Only this index's writer makes fits, under its lock: the cell is empty.
            let _ = self.fit.set(fit);
        }
    }
}

/// One side of a target's profile: the candidates, and the list they were taken from with the
/// documents left out (their indices among the list's documents with tokens, and their terms).
pub(crate) struct Side<'a> {
    pub(crate) cands: Vec<&'a Arc<StoredDoc>>,
    pub(crate) list: Option<&'a DocEntry>,
    pub(crate) excluded: Vec<(u32, &'a [(u32, u32)])>,
}

impl<'a> Side<'a> {
    /// The documents of `list` for which `keep` holds.
    fn of(list: Option<&'a DocList>, keep: impl Fn(&StoredDoc) -> bool) -> Side<'a> {
        let mut side = Side {
            cands: Vec::new(),
            list: list.map(|l| &**l),
            excluded: Vec::new(),
        };
        let mut kept = 0u32;
        for d in list.map_or(&[][..], |l| &l.docs[..]) {
            let stays = keep(d);
            if stays {
                side.cands.push(d);
            }
            if d.len > 0 {
                if !stays {
                    side.excluded.push((kept, &d.terms[..]));
                }
                kept += 1;
            }
        }
        side
    }
}

/// The writer's own bookkeeping, outside the snapshots (changed in place, never copied): for
/// each token id, the token and how many documents contain it.
pub(crate) type Counts = std::collections::HashMap<u32, (Arc<str>, u32)>;

/// A consistent, immutable view of the index at one generation. Readers hold it as long as
/// they like; writes never change it.
///
/// ```
/// use pgraphrag_retrieval::live::{Document, ProfileIndex};
/// let index = ProfileIndex::default();
/// let before = index.snapshot();
/// index.upsert(Document { user: "ann".into(), id: "1".into(), text: "hello".into(), ..Default::default() }).unwrap();
/// assert_eq!((before.generation(), before.num_documents()), (0, 0));
/// let now = index.snapshot();
/// assert_eq!((now.generation(), now.num_documents()), (1, 1));
/// assert_eq!(now.document("ann", "1").unwrap().text(), "hello");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub(crate) generation: u64,
    next_seq: u64,
    documents: usize,
    users: HashMap<Arc<str>, DocList>,
    items: HashMap<Arc<str>, DocList>,
    /// Token -> id, for the tokens some document has: a token no document has any more is
    /// removed, so deleted text leaves nothing behind; ids are never reused. (How many
    /// documents have each token is the writer's business: [`Counts`].)
    vocab: HashMap<Arc<str>, u32>,
    /// One past the largest token id ever given.
    pub(crate) id_bound: usize,
    /// The dimension of the stored embeddings, once one is stored.
    pub(crate) dim: Option<usize>,
    /// The user and item lists the writer changed since the last publication (`true` for an
    /// item), whose fits it makes once the new snapshot is published. Empty in every
    /// published snapshot.
    touched: Vec<(bool, Arc<str>)>,
}

impl Snapshot {
    /// The generation: 0 for an empty index, one more after every acknowledged write.
    pub fn generation(&self) -> u64 {
        self.generation
    }
    /// How many documents.
    pub fn num_documents(&self) -> usize {
        self.documents
    }
    /// How many users have at least one document.
    pub fn num_users(&self) -> usize {
        self.users.len()
    }
    /// How many items have at least one document.
    pub fn num_items(&self) -> usize {
        self.items.len()
    }
    /// How many distinct BM25 tokens the documents have.
    pub fn num_tokens(&self) -> usize {
        self.vocab.len()
    }
    /// Whether `user` has a document.
    pub fn has_user(&self, user: &str) -> bool {
        self.users.contains_key(user)
    }
    /// Whether `item` has a document.
    pub fn has_item(&self, item: &str) -> bool {
        self.items.contains_key(item)
    }
    /// The documents of `user`, in index order (empty for an unknown user).
    pub fn user_documents(&self, user: &str) -> &[Arc<StoredDoc>] {
        self.users.get(user).map_or(&[], |v| v.docs.as_slice())
    }
    /// The documents about `item`, in index order (empty for an unknown item).
    pub fn item_documents(&self, item: &str) -> &[Arc<StoredDoc>] {
        self.items.get(item).map_or(&[], |v| v.docs.as_slice())
    }
    /// The document `id` of `user`.
    pub fn document(&self, user: &str, id: &str) -> Option<&Arc<StoredDoc>> {
        self.user_documents(user).iter().find(|d| &*d.id == id)
    }
    /// The users in no particular order.
    pub fn users(&self) -> impl Iterator<Item = &str> + '_ {
        self.users.keys().map(|u| &**u)
    }

    /// The token ids of `tokens` (in order, duplicates kept; unknown tokens left out).
    pub(crate) fn token_ids(&self, tokens: &[String]) -> Vec<u32> {
        tokens
            .iter()
            .filter_map(|t| self.vocab.get(t.as_str()).copied())
            .collect()
    }

    /// The user side of a profile: `user`'s documents about anything but `item`.
    pub(crate) fn user_side(&self, user: &str, item: Option<&str>) -> Side<'_> {
        Side::of(self.users.get(user), |d| {
            item.is_none() || d.item.as_deref() != item
        })
    }

    /// The neighbour side: other users' documents about `item`.
    pub(crate) fn neighbor_side(&self, user: &str, item: &str) -> Side<'_> {
        Side::of(self.items.get(item), |d| &*d.user != user)
    }

    // --- writes (on the writer's private copy) ---

    /// Interns `tokens`, counting each distinct token once for the new document. Only a token
    /// new to the index changes the (persistent) vocabulary; counts change in `counts` alone.
    fn intern(&mut self, counts: &mut Counts, tokens: &[String]) -> Box<[(u32, u32)]> {
        let mut terms: Vec<(u32, u32)> = Vec::new();
        let mut local: std::collections::HashMap<&str, usize> = Default::default();
        for t in tokens {
            if let Some(&at) = local.get(t.as_str()) {
                terms[at].1 += 1;
                continue;
            }
            let id = match self.vocab.get(t.as_str()) {
                Some(&id) => {
                    if let Some((_, n)) = counts.get_mut(&id) {
                        *n += 1;
                    }
                    id
                }
                None => {
                    let id = self.id_bound as u32;
                    self.id_bound += 1;
                    let token: Arc<str> = Arc::from(t.as_str());
                    self.vocab.insert(token.clone(), id);
                    counts.insert(id, (token, 1));
                    id
                }
            };
            local.insert(t, terms.len());
            terms.push((id, 1));
        }
        terms.into_boxed_slice()
    }

    /// Drops one document's claim on each of its tokens; a token no document has any more
    /// leaves the vocabulary.
    fn release(&mut self, counts: &mut Counts, doc: &StoredDoc) {
        for &(id, _) in doc.terms.iter() {
            let gone = match counts.get_mut(&id) {
                Some((token, n)) => {
                    *n -= 1;
                    (*n == 0).then(|| token.clone())
                }
                None => None,
            };
            if let Some(token) = gone {
                counts.remove(&id);
                self.vocab.remove(&*token);
            }
        }
    }

    /// Creates or replaces one document; true when it was created.
    pub(crate) fn upsert(&mut self, counts: &mut Counts, p: Prepared) -> bool {
        let terms = self.intern(counts, &p.tokens);
        let user: Arc<str> = Arc::from(p.doc.user.as_str());
        let old = self.document(&p.doc.user, &p.doc.id).cloned();
        let seq = match &old {
            Some(o) => o.seq,
            None => {
                self.next_seq += 1;
                self.next_seq - 1
            }
        };
        let doc = Arc::new(StoredDoc {
            user: user.clone(),
            id: Arc::from(p.doc.id.as_str()),
            item: p.doc.item.as_deref().map(Arc::from),
            title: p.doc.title,
            text: p.doc.text,
            rating: p.doc.rating,
            time: p.doc.time,
            seq,
            len: p.tokens.len(),
            terms,
            embedding: p.embedding,
        });
        if let Some(old) = &old {
            self.release(counts, old);
            self.detach_item(old);
        } else {
            self.documents += 1;
        }
        put(&mut self.users, &user, &doc);
        self.touched.push((false, user.clone()));
        if let Some(item) = &doc.item {
            put(&mut self.items, item, &doc);
            self.touched.push((true, item.clone()));
        }
        old.is_none()
    }

    /// Removes one document (known to exist).
    pub(crate) fn remove(&mut self, counts: &mut Counts, doc: &Arc<StoredDoc>) {
        self.release(counts, doc);
        self.detach_item(doc);
        take(&mut self.users, &doc.user, doc.seq);
        self.touched.push((false, doc.user.clone()));
        self.documents -= 1;
    }

    fn detach_item(&mut self, doc: &StoredDoc) {
        if let Some(item) = &doc.item {
            take(&mut self.items, item, doc.seq);
            self.touched.push((true, item.clone()));
        }
    }

    /// Starts the next generation; returns the lists changed since the last one, for
    /// [`Snapshot::refit`] once published.
    pub(crate) fn bump(&mut self) -> Vec<(bool, Arc<str>)> {
        self.generation += 1;
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        touched
    }

    /// Makes the BM25 fits of the `touched` lists that are at least `min_docs` long (the
    /// writer, right after publishing this snapshot).
    pub(crate) fn refit(&self, touched: &[(bool, Arc<str>)], min_docs: usize) {
        for (is_item, key) in touched {
            let map = if *is_item { &self.items } else { &self.users };
            if let Some(entry) = map.get(&**key) {
                entry.refit(min_docs, self.id_bound);
            }
        }
    }
}

/// Inserts or replaces `doc` (by seq) in the list under `key`.
fn put(map: &mut HashMap<Arc<str>, DocList>, key: &Arc<str>, doc: &Arc<StoredDoc>) {
    let list = map.entry(key.clone()).or_default();
    let entry = Arc::make_mut(list);
    entry.fit = OnceLock::new();
    let v = &mut entry.docs;
    match v.binary_search_by_key(&doc.seq, |d| d.seq) {
        Ok(i) => v[i] = doc.clone(),
        Err(i) => v.insert(i, doc.clone()),
    }
}

/// Removes the document with `seq` from the list under `key` (and the key once empty).
fn take(map: &mut HashMap<Arc<str>, DocList>, key: &str, seq: u64) {
    let empty = match map.get_mut(key) {
        Some(list) => {
            let entry = Arc::make_mut(list);
            entry.fit = OnceLock::new();
            let v = &mut entry.docs;
            if let Ok(i) = v.binary_search_by_key(&seq, |d| d.seq) {
                v.remove(i);
            }
            v.is_empty()
        }
        None => false,
    };
    if empty {
        map.remove(key);
    }
}
