//! Evaluation rows: a user, their history and the target item.
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::ml100k::Interaction;

/// One evaluation row: the user, their history (oldest first) and the target item, which is
/// never in the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// The user id.
    pub user: u32,
    /// The history items, oldest first.
    pub history: Vec<u32>,
    /// The target item.
    pub target: u32,
}

/// What [`leave_one_out`] built and skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaveOneOut {
    /// One row per kept user, by user id.
    pub rows: Vec<Row>,
    /// Distinct users seen.
    pub users: usize,
    /// Users skipped for having fewer than `history_len + 1` distinct items.
    pub skipped_short: usize,
    /// Repeated (user, item) interactions dropped (the earliest one is kept).
    pub repeats_dropped: usize,
}

/// Leave-one-out rows, the paper's rule: per user, the interactions sorted by timestamp
/// (ties keep file order: a stable sort on the timestamp alone), the last item is the target and
/// the `history_len` items before it the history, oldest first. A repeated (user, item)
/// interaction keeps its earliest occurrence (none in ML-100K), so the target is never in the
/// history. Users with fewer than `history_len + 1` distinct items are counted in
/// `skipped_short` and get no row.
///
/// ```
/// use pgraphrag_recsys::{leave_one_out, Interaction};
/// let x = |user, item, timestamp| Interaction { user, item, rating: 4.0, timestamp, line: 0 };
/// let data = [x(1, 10, 5), x(1, 11, 3), x(1, 12, 3), x(1, 13, 9), x(2, 10, 1)];
/// let loo = leave_one_out(&data, 2);
/// assert_eq!(loo.rows.len(), 1);
/// // 11 and 12 tie at time 3 and keep file order.
/// assert_eq!((loo.rows[0].history.clone(), loo.rows[0].target), (vec![12, 10], 13));
/// assert_eq!((loo.users, loo.skipped_short), (2, 1));
/// ```
pub fn leave_one_out(interactions: &[Interaction], history_len: usize) -> LeaveOneOut {
    let mut by_user: BTreeMap<u32, Vec<&Interaction>> = BTreeMap::new();
    for x in interactions {
        by_user.entry(x.user).or_default().push(x);
    }
    let mut out = LeaveOneOut {
        users: by_user.len(),
        ..Default::default()
    };
    for (user, mut xs) in by_user {
        xs.sort_by_key(|x| x.timestamp);
        let mut seen = BTreeSet::new();
        let items: Vec<u32> = xs
            .iter()
            .filter_map(|x| seen.insert(x.item).then_some(x.item))
            .collect();
        out.repeats_dropped += xs.len() - items.len();
        if items.len() < history_len + 1 {
            out.skipped_short += 1;
            continue;
        }
        let n = items.len();
        out.rows.push(Row {
            user,
            history: items[n - 1 - history_len..n - 1].to_vec(),
            target: items[n - 1],
        });
    }
    out
}
