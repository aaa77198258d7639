//! Following a store that several `serve` processes share: the follower, a background thread that a [`crate::Service`] runs on such a store to apply
//! the other processes' writes to its indexes.
//!
//! The follower is state-based: a change only names the (tenant, user) it touched, and the
//! follower makes the index's copy of that user equal to what the store holds *now* (documents
//! removed, created or replaced; the summary taken when it matches the documents). Replaying a
//! change is therefore harmless, a change read late cannot undo a newer one, and the follower
//! holds the tenant's write order while it reads and applies, so a local write can never be
//! overwritten by an older copy. It skips the changes its own process made (they are already
//! in the index: the process that took a write sees it on its very next read).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::Duration;

use pgraphrag_retrieval::live::{Document, StoredDoc};

use crate::Result;
use crate::service::{Inner, Tenant};
use crate::store::{Cursor, DocumentStore, Loaded, StoredSummary, UserData};
use crate::summaries::{UserSummary, fingerprint};

/// Changes read per round; a full round is followed at once by the next.
const BATCH: usize = 512;
/// The pause after a failed round.
const RETRY: Duration = Duration::from_millis(250);

/// Starts the follower of `inner`'s store from `cursor` (read before the indexes were
/// loaded). It stops by itself once the service is dropped (within one wait of the store).
pub(crate) fn spawn(inner: &Arc<Inner>, cursor: Cursor) -> Result<()> {
    let weak = Arc::downgrade(inner);
    let store = Arc::clone(&inner.store);
    std::thread::Builder::new()
        .name("pgraphrag-follow".into())
        .spawn(move || run(weak, store, cursor))?;
    Ok(())
}

fn run(service: Weak<Inner>, store: Arc<dyn DocumentStore>, mut cursor: Cursor) {
    let mut failing = false;
    loop {
        let Some(inner) = service.upgrade() else {
            return;
        };
        let more = match step(&inner, store.as_ref(), &mut cursor) {
            Ok(more) => {
                if failing {
                    tracing::info!("following the shared store again");
                }
                failing = false;
                more
            }
            Err(e) => {
                // Once per outage; the same batch is read again after a pause (not at the
                // next notification: other users' writes may go on while a shard is down).
                if !failing {
                    tracing::warn!(error = %e, "following the shared store failed; retrying");
                }
                failing = true;
                drop(inner);
                std::thread::sleep(RETRY);
                continue;
            }
        };
        drop(inner);
        if !more && let Err(e) = store.wait_for_changes() {
            if !failing {
                tracing::warn!(error = %e, "waiting for the shared store's changes failed");
            }
            failing = true;
            std::thread::sleep(RETRY);
        }
    }
}

/// Reads one batch of changes and applies the other processes' ones; the cursor moves only
/// once the whole batch is applied. Answers whether a full batch was read (more may wait).
fn step(inner: &Inner, store: &dyn DocumentStore, cursor: &mut Cursor) -> Result<bool> {
    let batch = store.changes(cursor, BATCH)?;
    for name in &batch.reload {
        let Some(tenant) = inner.tenants.get(name) else {
            continue;
        };
        tracing::warn!(
            tenant = %name,
            "the shared store's change log no longer holds every change since this process \
             last followed it; reloading the tenant"
        );
        let _order = tenant.write_order();
        let at = store
            .cursor(std::slice::from_ref(name))?
            .and_then(|c| c.get(name))
            .unwrap_or(0);
        reload(tenant, store.load()?, name);
        cursor.set(name, at);
    }
    let mut seen = HashSet::new();
    for c in &batch.changes {
        if c.own || batch.reload.contains(&c.tenant) || cursor.get(&c.tenant) >= Some(c.id) {
            continue;
        }
        let Some(tenant) = inner.tenants.get(&c.tenant) else {
            continue;
        };
        if seen.insert((c.tenant.as_str(), c.user.as_str())) {
            let _order = tenant.write_order();
            let data = store.user_data(&c.tenant, &c.user)?;
            reconcile(tenant, &c.tenant, &c.user, data);
        }
    }
    for c in &batch.changes {
        cursor.advance(&c.tenant, c.id);
    }
    Ok(batch.changes.len() >= BATCH)
}

/// Whether the index's copy `have` is `want`.
fn same(have: Option<&Arc<StoredDoc>>, want: &Document) -> bool {
    have.is_some_and(|h| {
        h.item() == want.item.as_deref()
            && h.title() == want.title.as_deref()
            && h.text() == want.text
            && h.rating() == want.rating
            && h.time() == want.time
    })
}

/// Makes the index's copy of `user` equal to `data` (the caller holds the write order).
fn reconcile(tenant: &Tenant, name: &str, user: &str, data: UserData) {
    remove_missing(tenant, name, user, &data.documents);
    upsert_changed(tenant, name, data.documents);
    take_summary(tenant, user, data.summary);
}

/// Removes the index's documents of `user` that `stored` (the user's documents in the store)
/// does not hold.
fn remove_missing(tenant: &Tenant, name: &str, user: &str, stored: &[Document]) {
    let snap = tenant.index.snapshot();
    if stored.is_empty() {
        if snap.has_user(user)
            && let Err(e) = tenant.index.remove_user(user)
        {
            tracing::warn!(tenant = %name, user, error = %e, "following: removing a user");
        }
        return;
    }
    let keep: HashSet<&str> = stored.iter().map(|d| d.id.as_str()).collect();
    for d in snap.user_documents(user) {
        if !keep.contains(d.id())
            && let Err(e) = tenant.index.remove(user, d.id())
        {
            tracing::warn!(tenant = %name, user, doc = d.id(), error = %e, "following: removing");
        }
    }
}

/// Creates or replaces, in their order, the documents of `stored` that the index does not hold
/// as they are. A document the index refuses (one written by a process with other index
/// options) is skipped with a warning rather than stopping the follower.
fn upsert_changed(tenant: &Tenant, name: &str, stored: Vec<Document>) {
    let snap = tenant.index.snapshot();
    let changed: Vec<Document> = stored
        .into_iter()
        .filter(|d| !same(snap.document(&d.user, &d.id), d))
        .collect();
    if changed.is_empty() || tenant.index.upsert_batch(changed.clone()).is_ok() {
        return;
    }
    for d in changed {
        let what = format!("{}/{}", d.user, d.id);
        if let Err(e) = tenant.index.upsert(d) {
            tracing::warn!(
                tenant = %name, doc = %what, error = %e,
                "following: the index refused a document another process wrote"
            );
        }
    }
}

/// Takes `stored` as `user`'s summary when it summarises the documents the index now holds;
/// otherwise the summary held stays until the writing process stores the new one. A user
/// without documents has none.
fn take_summary(tenant: &Tenant, user: &str, stored: Option<StoredSummary>) {
    let snap = tenant.index.snapshot();
    let docs = snap.user_documents(user);
    let mut summaries = tenant.summaries.write().unwrap_or_else(|e| e.into_inner());
    if docs.is_empty() {
        summaries.remove(user);
    } else if let Some(s) = stored
        && fingerprint(docs) == s.fingerprint
    {
        summaries.insert(
            user.to_string(),
            UserSummary {
                text: s.text,
                as_of_generation: snap.generation(),
                fingerprint: s.fingerprint,
            },
        );
    }
}

/// Makes the whole tenant equal to `loaded`'s copy of it (the caller holds the write order):
/// new documents are created in the store's order.
fn reload(tenant: &Tenant, loaded: Loaded, name: &str) {
    let mut users: BTreeMap<String, UserData> = BTreeMap::new();
    let mut all = Vec::new();
    for (t, d) in loaded.documents {
        if t == name {
            users
                .entry(d.user.clone())
                .or_default()
                .documents
                .push(d.clone());
            all.push(d);
        }
    }
    for (t, s) in loaded.summaries {
        if t == name
            && let Some(u) = users.get_mut(&s.user)
        {
            u.summary = Some(s);
        }
    }
    let held: Vec<String> = tenant
        .index
        .snapshot()
        .users()
        .map(str::to_string)
        .collect();
    for u in held {
        let stored = users.get(&u).map_or(&[][..], |d| &d.documents[..]);
        remove_missing(tenant, name, &u, stored);
        if stored.is_empty() {
            take_summary(tenant, &u, None);
        }
    }
    upsert_changed(tenant, name, all);
    for (u, data) in users {
        take_summary(tenant, &u, data.summary);
    }
}
