//! [`PgDocuments`]' writes (one transaction each, logged and notified), the change log's
//! pruning, and the [`DocumentStore`] implementation.

use std::time::{Duration, Instant};

use pgraphrag_store::postgres as pg;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, IsolationLevel, Row};

use super::{PgDocuments, PgError, PgResult, READ_ADVICE, SELECT_DOC, lock};
use crate::store::{Change, Changes, Cursor, DocumentStore, Loaded, UserData, Write};

impl PgDocuments {
    /// One write in one transaction: the advisory lock of the tenant, the change, its log row
    /// and notification. Answers the documents (or summary) changed; an error says whether it
    /// came from the commit (whose outcome is then unknown when the connection broke).
    fn write(
        &self,
        client: &mut Client,
        tenant: &str,
        write: &Write,
    ) -> Result<usize, (postgres::Error, bool)> {
        let mut tx = client.transaction().map_err(|e| (e, false))?;
        let n = self
            .write_in(&mut tx, tenant, write)
            .map_err(|e| (e, false))?;
        tx.commit().map_err(|e| (e, true))?;
        Ok(n)
    }

    fn write_in(
        &self,
        tx: &mut postgres::Transaction<'_>,
        tenant: &str,
        write: &Write,
    ) -> Result<usize, postgres::Error> {
        let s = &self.opts.schema;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))",
            &[s, &tenant],
        )?;
        let (n, logged, kind, user, doc) = match write {
            Write::Upsert(d) => {
                let p: [&(dyn postgres::types::ToSql + Sync); 8] = [
                    &tenant, &d.user, &d.id, &d.item, &d.title, &d.text, &d.rating, &d.time,
                ];
                let updated = tx.execute(
                    &format!(
                        "UPDATE {s}.documents SET item = $4, title = $5, body = $6, \
                         rating = $7, time = $8 \
                         WHERE tenant = $1 AND user_id = $2 AND doc_id = $3"
                    ),
                    &p,
                )?;
                if updated == 0 {
                    tx.execute(
                        &format!(
                            "INSERT INTO {s}.documents (tenant, user_id, doc_id, seq, item, \
                             title, body, rating, time) VALUES ($1, $2, $3, \
                             nextval('{s}.document_seq'), $4, $5, $6, $7, $8)"
                        ),
                        &p,
                    )?;
                }
                (1, 1, "upsert", &d.user, Some(&d.id))
            }
            Write::Remove { user, doc } => {
                let n = tx.execute(
                    &format!(
                        "DELETE FROM {s}.documents \
                         WHERE tenant = $1 AND user_id = $2 AND doc_id = $3"
                    ),
                    &[&tenant, user, doc],
                )?;
                (n, n, "remove", user, Some(doc))
            }
            Write::RemoveUser { user } => {
                let n = tx.execute(
                    &format!("DELETE FROM {s}.documents WHERE tenant = $1 AND user_id = $2"),
                    &[&tenant, user],
                )?;
                let m = tx.execute(
                    &format!("DELETE FROM {s}.summaries WHERE tenant = $1 AND user_id = $2"),
                    &[&tenant, user],
                )?;
                (n, n + m, "remove_user", user, None)
            }
            Write::Summary(sum) => {
                tx.execute(
                    &format!(
                        "INSERT INTO {s}.summaries (tenant, user_id, body, fingerprint) \
                         VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, user_id) DO UPDATE \
                         SET body = EXCLUDED.body, fingerprint = EXCLUDED.fingerprint"
                    ),
                    &[&tenant, &sum.user, &sum.text, &(sum.fingerprint as i64)],
                )?;
                (1, 1, "summary", &sum.user, None)
            }
        };
        if logged > 0 {
            tx.execute(
                &format!(
                    "INSERT INTO {s}.changes (tenant, user_id, origin, kind, doc_id) \
                     VALUES ($1, $2, $3, $4, $5)"
                ),
                &[&tenant, user, &self.origin, &kind, &doc],
            )?;
            tx.execute("SELECT pg_notify($1, $2)", &[&self.channel(), &tenant])?;
        }
        Ok(n as usize)
    }

    /// Deletes the log's changes older than the retention (at most once a minute), recording
    /// in `horizon` the last id pruned per tenant. A failure only postpones it.
    fn prune(&self, client: &mut Client) {
        {
            let mut last = lock(&self.last_prune);
            let every = (self.opts.retention / 2).min(Duration::from_secs(60));
            if last.elapsed() < every {
                return;
            }
            *last = Instant::now();
        }
        let s = &self.opts.schema;
        let r = client.execute(
            &format!(
                "WITH gone AS (DELETE FROM {s}.changes \
                   WHERE at < now() - make_interval(secs => $1) RETURNING tenant, id) \
                 INSERT INTO {s}.horizon (tenant, through) \
                 SELECT tenant, max(id) FROM gone GROUP BY tenant \
                 ON CONFLICT (tenant) DO UPDATE \
                 SET through = greatest({s}.horizon.through, EXCLUDED.through)"
            ),
            &[&self.opts.retention.as_secs_f64()],
        );
        if let Err(e) = r {
            tracing::warn!(error = %pg::driver_message(&e), "pruning the change log");
        }
    }

    fn tenants_and_positions(after: &Cursor) -> (Vec<&str>, Vec<i64>) {
        after.iter().map(|(t, id)| (t, id as i64)).unzip()
    }
}

/// Whether `e` broke this client's own connection (rather than the coordinator's to a shard).
pub(super) fn own_connection(e: &postgres::Error) -> bool {
    e.is_closed()
        || e.as_db_error().is_none()
        || e.code().is_some_and(|c| c.code().starts_with("57P"))
}

const WRITE_ADVICE: &str = "the write was not stored (reads are still answered from memory)";

impl DocumentStore for PgDocuments {
    fn load(&self) -> crate::Result<Loaded> {
        let s = &self.opts.schema;
        let mut guard = self.connection(&self.reader, true)?;
        let client = guard.as_mut().expect("connected above");
        let read = |c: &mut Client| -> Result<(Vec<Row>, Vec<Row>), postgres::Error> {
            let mut tx = c
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let docs = tx.query(
                &format!("SELECT tenant, {SELECT_DOC} FROM {s}.documents ORDER BY seq"),
                &[],
            )?;
            let sums = tx.query(
                &format!(
                    "SELECT tenant, user_id, body, fingerprint FROM {s}.summaries \
                     ORDER BY tenant, user_id"
                ),
                &[],
            )?;
            tx.commit()?;
            Ok((docs, sums))
        };
        let (docs, sums) = read(client).map_err(|e| {
            self.failed(
                client,
                None,
                "loading every document".into(),
                e,
                READ_ADVICE,
            )
        })?;
        let mut loaded = Loaded::default();
        for row in &docs {
            loaded
                .documents
                .push((self.col(row, 0, "documents")?, self.document(row, 1)?));
        }
        for row in &sums {
            loaded
                .summaries
                .push((self.col(row, 0, "summaries")?, self.summary(row, 1)?));
        }
        Ok(loaded)
    }

    fn apply(&self, tenant: &str, write: &Write) -> crate::Result<usize> {
        let user = match write {
            Write::Upsert(d) => &d.user,
            Write::Remove { user, .. } | Write::RemoveUser { user } => user,
            Write::Summary(s) => &s.user,
        };
        let what = match write {
            Write::Upsert(d) => format!(
                "writing document {:?} of user {user:?} (tenant {tenant:?})",
                d.id
            ),
            Write::Remove { doc, .. } => {
                format!("deleting document {doc:?} of user {user:?} (tenant {tenant:?})")
            }
            Write::RemoveUser { .. } => format!("deleting user {user:?} (tenant {tenant:?})"),
            Write::Summary(_) => {
                format!("storing the summary of user {user:?} (tenant {tenant:?})")
            }
        };
        let mut retried = false;
        loop {
            let mut guard = self.connection(&self.writer, false).map_err(|e| match e {
                PgError::Unavailable { problem, .. } => {
                    self.unavailable(what.clone(), problem, WRITE_ADVICE)
                }
                e => e,
            })?;
            let client = guard.as_mut().expect("connected above");
            match self.write(client, tenant, write) {
                Ok(n) => {
                    self.prune(client);
                    return Ok(n);
                }
                // The connection broke before the commit (the server restarted, say), so
                // nothing was stored: once more on a new connection.
                Err((e, false)) if !retried && pg::connection_lost(&e) => {
                    if own_connection(&e) {
                        *guard = None;
                    }
                    retried = true;
                }
                Err((e, at_commit)) => {
                    let advice = if at_commit && pg::connection_lost(&e) {
                        // The commit may have reached the server: let the follower check.
                        lock(&self.uncertain).insert((tenant.to_string(), user.clone()));
                        "the connection broke while committing, so the write may or may not be \
                         stored: retry it (writing the same again is harmless)"
                    } else {
                        WRITE_ADVICE
                    };
                    return Err(self
                        .failed(client, Some((tenant, user)), what, e, advice)
                        .into());
                }
            }
        }
    }

    fn cursor(&self, tenants: &[String]) -> crate::Result<Option<Cursor>> {
        let s = &self.opts.schema;
        let mut guard = self.connection(&self.reader, true)?;
        let client = guard.as_mut().expect("connected above");
        let rows = client
            .query(
                &format!(
                    "SELECT t.tenant, greatest(\
                       (SELECT max(id) FROM {s}.changes c WHERE c.tenant = t.tenant), \
                       (SELECT through FROM {s}.horizon h WHERE h.tenant = t.tenant), 0) \
                     FROM unnest($1::text[]) AS t(tenant)"
                ),
                &[&tenants],
            )
            .map_err(|e| {
                self.failed(
                    client,
                    None,
                    "reading the change log".into(),
                    e,
                    READ_ADVICE,
                )
            })?;
        let mut cursor = Cursor::default();
        for row in &rows {
            let id: i64 = self.col(row, 1, "changes")?;
            cursor.set(&self.col::<String>(row, 0, "changes")?, id.max(0) as u64);
        }
        Ok(Some(cursor))
    }

    fn changes(&self, after: &Cursor, limit: usize) -> crate::Result<Changes> {
        let s = &self.opts.schema;
        let (tenants, positions) = Self::tenants_and_positions(after);
        let mut guard = self.connection(&self.reader, true)?;
        let client = guard.as_mut().expect("connected above");
        let read = |c: &mut Client| -> Result<(Vec<Row>, Vec<Row>), postgres::Error> {
            // One snapshot: a change pruned after it was read cannot look missing.
            let mut tx = c
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let changes = tx.query(
                &format!(
                    "SELECT c.id, c.tenant, c.user_id, c.origin FROM {s}.changes c \
                     JOIN unnest($1::text[], $2::int8[]) AS t(tenant, after) \
                       ON c.tenant = t.tenant AND c.id > t.after \
                     ORDER BY c.id LIMIT $3"
                ),
                &[&tenants, &positions, &(limit as i64)],
            )?;
            let pruned = tx.query(
                &format!(
                    "SELECT h.tenant FROM {s}.horizon h \
                     JOIN unnest($1::text[], $2::int8[]) AS t(tenant, after) \
                       ON h.tenant = t.tenant WHERE h.through > t.after"
                ),
                &[&tenants, &positions],
            )?;
            tx.commit()?;
            Ok((changes, pruned))
        };
        let (rows, pruned) = read(client).map_err(|e| {
            self.failed(
                client,
                None,
                "reading the change log".into(),
                e,
                READ_ADVICE,
            )
        })?;
        let mut out = Changes::default();
        let mut uncertain = lock(&self.uncertain);
        for row in &rows {
            let id: i64 = self.col(row, 0, "changes")?;
            let tenant: String = self.col(row, 1, "changes")?;
            let user: String = self.col(row, 2, "changes")?;
            let mine = self.col::<&str>(row, 3, "changes")? == self.origin;
            let own = mine && !uncertain.remove(&(tenant.clone(), user.clone()));
            out.changes.push(Change {
                id: id.max(0) as u64,
                tenant,
                user,
                own,
            });
        }
        for row in &pruned {
            out.reload.push(self.col(row, 0, "horizon")?);
        }
        Ok(out)
    }

    fn user_data(&self, tenant: &str, user: &str) -> crate::Result<UserData> {
        let s = &self.opts.schema;
        // The follower's connection waits for notifications most of the time (up to a poll
        // interval): another thread's read (a summary worker's) takes the writer's instead.
        let reader_busy = self.reader.try_lock().is_err();
        let mut guard = if reader_busy {
            self.connection(&self.writer, false)?
        } else {
            self.connection(&self.reader, true)?
        };
        let client = guard.as_mut().expect("connected above");
        let read = |c: &mut Client| -> Result<(Vec<Row>, Option<Row>), postgres::Error> {
            let docs = c.query(
                &format!(
                    "SELECT {SELECT_DOC} FROM {s}.documents \
                     WHERE tenant = $1 AND user_id = $2 ORDER BY seq"
                ),
                &[&tenant, &user],
            )?;
            let sum = c.query_opt(
                &format!(
                    "SELECT user_id, body, fingerprint FROM {s}.summaries \
                     WHERE tenant = $1 AND user_id = $2"
                ),
                &[&tenant, &user],
            )?;
            Ok((docs, sum))
        };
        let what = format!("reading user {user:?} (tenant {tenant:?})");
        let (docs, sum) = read(client)
            .map_err(|e| self.failed(client, Some((tenant, user)), what, e, READ_ADVICE))?;
        Ok(UserData {
            documents: docs
                .iter()
                .map(|r| self.document(r, 0))
                .collect::<PgResult<_>>()?,
            summary: sum.map(|r| self.summary(&r, 0)).transpose()?,
        })
    }

    fn wait_for_changes(&self) -> crate::Result<()> {
        if !self.opts.listen {
            std::thread::sleep(self.opts.poll);
            return Ok(());
        }
        let mut guard = match self.connection(&self.reader, true) {
            Ok(g) => g,
            Err(e) => {
                std::thread::sleep(self.opts.poll);
                return Err(e.into());
            }
        };
        let client = guard.as_mut().expect("connected above");
        let woke = client.notifications().timeout_iter(self.opts.poll).next();
        match woke {
            Ok(_) => {
                // Several writes, one read of the log: drop the notifications already here.
                let mut pending = client.notifications();
                while let Ok(Some(_)) = pending.iter().next() {}
                Ok(())
            }
            Err(e) => {
                drop(guard);
                std::thread::sleep(self.opts.poll);
                Err(self.query_err("waiting for changes")(e).into())
            }
        }
    }
}
