//! `RecentDoc` (paper l.200): the recency baseline, and the recency order every ranker hands
//! its retriever.
use super::doc::{PastDoc, recency_order};
use super::entries::{ContextCut, PastEntry, RankedContext, whole};
use super::ranking::ContextRanker;
use crate::Result;

/// `RecentDoc` (l.200): the most recent past documents first, unscored.
///
/// Its [`ContextRanker::ranked_context`] stops reading documents once the cut is full.
///
/// ```
/// use pgraphrag_stages::multistage::{ContextRanker, PastDoc, RecentDoc};
/// let past = [PastDoc::new("a", 1, "old"), PastDoc::new("b", 2, "new")];
/// let e = RecentDoc.rank("anything", &past).unwrap();
/// assert_eq!((e[0].text.as_str(), e[0].score), ("new", None));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecentDoc;

impl ContextRanker for RecentDoc {
    fn rank(&self, _context: &str, past: &[PastDoc]) -> Result<Vec<PastEntry>> {
        Ok(recency_order(past)
            .into_iter()
            .map(|i| whole(past, i, None))
            .collect())
    }

    fn ranked_context(
        &self,
        _context: &str,
        past: &[PastDoc],
        cut: &ContextCut,
    ) -> Result<RankedContext> {
        // Only as many documents as can contribute a character (the cut never reads further).
        let mut room = cut.max_chars;
        let mut entries = Vec::new();
        for i in recency_order(past) {
            if room == 0 {
                break;
            }
            let n = past[i].text.chars().count();
            if n > 0 {
                room = room.saturating_sub(n + cut.joiner.chars().count());
            }
            entries.push(whole(past, i, None));
        }
        let mut ranked = cut.apply(entries);
        // Count the documents never read as dropped too, as the plain cut would.
        ranked.dropped = past.iter().filter(|d| !d.text.is_empty()).count() - ranked.entries.len();
        Ok(ranked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_doc_fast_path_matches_the_plain_cut() {
        let past: Vec<PastDoc> = (0..50)
            .map(|i| PastDoc::new(format!("d{i}"), i, "x".repeat(97 + i as usize)))
            .collect();
        for max in [0, 1, 97, 98, 99, 250, 2500, 100_000] {
            let cut = ContextCut::new(max);
            assert_eq!(
                RecentDoc.ranked_context("", &past, &cut).unwrap(),
                cut.apply(RecentDoc.rank("", &past).unwrap()),
                "max {max}"
            );
        }
    }
}
