//! [`Snapshot`]: one immutable state of a [`super::ProfileIndex`], and the writes that make
//! the next one.
//!
//! Every map is persistent (`imbl`): cloning a snapshot copies one pointer per map, and a write
//! copies only the paths it changes, so the writer builds the next state beside the one readers
//! hold. A user's or an item's document list is one shared vector, copied whole when it
//! changes (its length is one profile).

use std::sync::Arc;

use imbl::HashMap;

use super::doc::{Prepared, StoredDoc};

/// Documents in index order (by [`StoredDoc::seq`]).
type DocList = Arc<Vec<Arc<StoredDoc>>>;

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
        self.users.get(user).map_or(&[], |v| v.as_slice())
    }
    /// The documents about `item`, in index order (empty for an unknown item).
    pub fn item_documents(&self, item: &str) -> &[Arc<StoredDoc>] {
        self.items.get(item).map_or(&[], |v| v.as_slice())
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
    pub(crate) fn user_side(&self, user: &str, item: Option<&str>) -> Vec<&Arc<StoredDoc>> {
        self.user_documents(user)
            .iter()
            .filter(|d| item.is_none() || d.item.as_deref() != item)
            .collect()
    }

    /// The neighbour side: other users' documents about `item`.
    pub(crate) fn neighbor_side(&self, user: &str, item: &str) -> Vec<&Arc<StoredDoc>> {
        self.item_documents(item)
            .iter()
            .filter(|d| &*d.user != user)
            .collect()
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
        if let Some(item) = &doc.item {
            put(&mut self.items, item, &doc);
        }
        old.is_none()
    }

    /// Removes one document (known to exist).
    pub(crate) fn remove(&mut self, counts: &mut Counts, doc: &Arc<StoredDoc>) {
        self.release(counts, doc);
        self.detach_item(doc);
        take(&mut self.users, &doc.user, doc.seq);
        self.documents -= 1;
    }

    fn detach_item(&mut self, doc: &StoredDoc) {
        if let Some(item) = &doc.item {
            take(&mut self.items, item, doc.seq);
        }
    }

    /// Starts the next generation.
    pub(crate) fn bump(&mut self) {
        self.generation += 1;
    }
}

/// Inserts or replaces `doc` (by seq) in the list under `key`.
fn put(map: &mut HashMap<Arc<str>, DocList>, key: &Arc<str>, doc: &Arc<StoredDoc>) {
    let list = map.entry(key.clone()).or_default();
    let v = Arc::make_mut(list);
    match v.binary_search_by_key(&doc.seq, |d| d.seq) {
        Ok(i) => v[i] = doc.clone(),
        Err(i) => v.insert(i, doc.clone()),
    }
}

/// Removes the document with `seq` from the list under `key` (and the key once empty).
fn take(map: &mut HashMap<Arc<str>, DocList>, key: &str, seq: u64) {
    let empty = match map.get_mut(key) {
        Some(list) => {
            let v = Arc::make_mut(list);
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
