//! The author-distinction task of the multitask setting (paper l.144–150, 182): pairs of
//! passages, labelled `true` when one author wrote both.
use std::collections::{HashMap, HashSet};

use pgraphrag_text::py::Random;

use crate::{Error, Result};

/// A document that may enter a pair: its author, id and text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthorDoc<'a> {
    /// Who wrote it.
    pub author: &'a str,
    /// Its id.
    pub doc_id: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// One pair: indices into the documents given to [`author_pairs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthorPair {
    /// The anchor document `d_ui`.
    pub first: usize,
    /// The sampled document: `d_uj` (same author, `j ≠ i`) or `d_vk` (another author).
    pub second: usize,
    /// Whether one author wrote both: the label `true` / `false`.
    pub same_author: bool,
}

/// The pairs and what the sampler saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorPairs {
    /// The pairs, in sampling order.
    pub pairs: Vec<AuthorPair>,
    /// Documents left out because their author is excluded (validation or test, l.150).
    pub excluded_docs: usize,
    /// Documents that could be sampled.
    pub eligible_docs: usize,
    /// Their distinct authors.
    pub eligible_authors: usize,
}

/// `count` author-distinction pairs (l.146), half positive and half negative (`count − count/2`
/// positives, `count/2` negatives: the 1:1 mix), from the documents whose author is not in
/// `excluded_authors` (pass every author of the validation and test data, l.150).
///
/// Deterministic for a seed, with CPython's `random.Random(seed)` ([`pgraphrag_text::py::Random`],
/// bit-exact), drawing exactly as this Python does:
///
/// ```python
/// rng = random.Random(seed)
/// docs = [d for d in docs if d.author not in excluded]        # input order
/// groups = {}                                                 # authors in first-appearance order
/// for d in docs: groups.setdefault(d.author, []).append(d)
/// flat = [d for g in groups.values() for d in g]              # grouped by author
/// pool = [i for i, d in enumerate(flat) if len(groups[d.author]) >= 2]
/// labels = [True] * (count - count // 2) + [False] * (count // 2)
/// rng.shuffle(labels)
/// for same in labels:
///     if same:
///         a = pool[rng._randbelow(len(pool))]                 # anchor whose author has 2+ docs
///         s, e = range of a's author in flat
///         b = s + rng._randbelow(e - s - 1); b += b >= a      # another doc of the same author
///     else:
///         a = rng._randbelow(len(flat))                       # any anchor
///         s, e = range of a's author in flat
///         k = rng._randbelow(len(flat) - (e - s))             # uniform over other authors' docs
///         b = k if k < s else k + (e - s)
///     yield (flat[a], flat[b], same)
/// ```
///
/// Anchors are drawn with replacement; a negative partner is uniform over the other authors'
/// documents (a prolific author is drawn more often, as in "randomly sample another document
/// from another user", l.146). Errors ([`Error::AuthorPairs`]): positives wanted but no eligible
/// author has two documents, or negatives wanted but fewer than two eligible authors.
///
/// ```
/// use pgraphrag_stages::multistage::{AuthorDoc, author_pairs};
/// let d = |author, doc_id| AuthorDoc { author, doc_id, text: "…" };
/// let docs = [d("ann", "1"), d("bob", "2"), d("ann", "3"), d("cy", "4"), d("bob", "5")];
/// let p = author_pairs(&docs, &["cy"], 10, 42).unwrap();
/// assert_eq!(p.pairs.iter().filter(|x| x.same_author).count(), 5);
/// assert_eq!((p.excluded_docs, p.eligible_authors), (1, 2));
/// assert!(p.pairs.iter().all(|x| docs[x.first].author != "cy" && docs[x.second].author != "cy"));
/// assert_eq!(p, author_pairs(&docs, &["cy"], 10, 42).unwrap());
/// ```
pub fn author_pairs(
    docs: &[AuthorDoc<'_>],
    excluded_authors: &[&str],
    count: usize,
    seed: u64,
) -> Result<AuthorPairs> {
    let excluded: HashSet<&str> = excluded_authors.iter().copied().collect();
    let mut order: Vec<&str> = Vec::new();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut excluded_docs = 0;
    for (i, d) in docs.iter().enumerate() {
        if excluded.contains(d.author) {
            excluded_docs += 1;
            continue;
        }
        groups
            .entry(d.author)
            .or_insert_with(|| {
                order.push(d.author);
                Vec::new()
            })
            .push(i);
    }
    // `flat` groups the eligible documents by author; `span[g]` is author g's range in it.
    let mut flat: Vec<usize> = Vec::new();
    let mut span: Vec<(usize, usize)> = Vec::new();
    let mut group_of: Vec<usize> = Vec::new();
    for (g, a) in order.iter().enumerate() {
        let start = flat.len();
        flat.extend(&groups[a]);
        group_of.resize(flat.len(), g);
        span.push((start, flat.len()));
    }
    let pool: Vec<usize> = (0..flat.len())
        .filter(|&i| {
            let (s, e) = span[group_of[i]];
            e - s >= 2
        })
        .collect();
    let negatives = count / 2;
    let positives = count - negatives;
    let summary = || {
        format!(
            "{} eligible documents by {} authors ({excluded_docs} left out as excluded authors')",
            flat.len(),
            order.len()
        )
    };
    if positives > 0 && pool.is_empty() {
        return Err(Error::AuthorPairs(format!(
            "{positives} same-author pairs wanted, but no eligible author has two documents: {}",
            summary()
        )));
    }
    if negatives > 0 && order.len() < 2 {
        return Err(Error::AuthorPairs(format!(
            "{negatives} different-author pairs wanted, but fewer than two eligible authors: {}",
            summary()
        )));
    }
    let mut rng = Random::new(seed);
    let mut labels: Vec<bool> = std::iter::repeat_n(true, positives)
        .chain(std::iter::repeat_n(false, negatives))
        .collect();
    rng.shuffle(&mut labels);
    let below = |rng: &mut Random, n: usize| rng.randbelow(n as u64) as usize;
    let mut pairs = Vec::with_capacity(count);
    for same in labels {
        let (a, b) = if same {
            let a = pool[below(&mut rng, pool.len())];
            let (s, e) = span[group_of[a]];
            let mut b = s + below(&mut rng, e - s - 1);
            if b >= a {
                b += 1;
            }
            (a, b)
        } else {
            let a = below(&mut rng, flat.len());
            let (s, e) = span[group_of[a]];
            let k = below(&mut rng, flat.len() - (e - s));
            (a, if k < s { k } else { k + (e - s) })
        };
        pairs.push(AuthorPair {
            first: flat[a],
            second: flat[b],
            same_author: same,
        });
    }
    Ok(AuthorPairs {
        pairs,
        excluded_docs,
        eligible_docs: flat.len(),
        eligible_authors: order.len(),
    })
}
