//! rank_bm25's fit of a long candidate list kept for reuse ([`ListFit`]), and its scores for
//! the list minus a few documents ([`FitScratch::list_scores`]), bit for bit those of
//! [`FitScratch::scores`] on the same documents.
//!
//! PGraphRAG fits BM25 on each candidate list: a user's profile without the target item's
//! reviews, or an item's reviews without the target user's. Fitting walks every token of the
//! list, so a popular item's neighbour side (thousands of reviews) costs milliseconds per
//! query. A [`ListFit`] is made once per version of a list (the live index keeps one beside
//! each long user or item list, made by the first reader after a change): its document
//! frequencies in first-appearance order and one postings list per term. A query over the list
//! minus a few documents then costs the list's vocabulary (the idf sum, which rank_bm25 takes in
//! first-appearance order, so it is summed again in the reduced list's order) plus the
//! postings of the query's terms, instead of every token.

use super::Bm25Params;
use super::fit::FitScratch;
use super::formula;

/// One term of a fitted list, in first-appearance order.
#[derive(Debug, Clone, Copy)]
struct TermStat {
    term: u32,
    /// Kept documents holding it.
    df: u32,
    /// The first kept document holding it, and the term's index in that document's terms.
    first: u32,
    at: u32,
}

/// The fit of one candidate list: for its documents with tokens ("kept"), their lengths, and
/// for each term its document frequency, first appearance and postings.
#[derive(Debug, Default)]
pub(crate) struct ListFit {
    lens: Vec<u32>,
    /// Each kept document's index in the list.
    at: Vec<u32>,
    num_doc: u128,
    order: Vec<TermStat>,
    /// `(term id, index into order)`, by term id.
    index: Vec<(u32, u32)>,
    /// The postings of `order[i]`: `post[offsets[i]..offsets[i + 1]]`, `(kept document, tf)`
    /// in document order.
    offsets: Vec<u32>,
    post: Vec<(u32, u32)>,
}

impl ListFit {
    /// Fits `docs` (token count, `(token id, count)` in first-appearance order; every id below
    /// `terms`), as [`FitScratch::scores`] takes them, with `scratch`'s arrays. Documents
    /// without tokens are not kept. Two passes over the tokens, no hashing.
    pub(crate) fn build<'a, I>(docs: I, scratch: &mut FitScratch, terms: usize) -> ListFit
    where
        I: Iterator<Item = (usize, &'a [(u32, u32)])> + Clone,
    {
        let mut fit = ListFit::default();
        let gen_ = scratch.next_list(terms);
        // Pass 1: lengths, document frequencies, first appearances; `tf[t]` = t's position.
        for (i, (len, doc_terms)) in docs.clone().enumerate() {
            if len == 0 {
                continue;
            }
            let d = fit.lens.len() as u32;
            fit.lens.push(len as u32);
            fit.at.push(i as u32);
            fit.num_doc += len as u128;
            for (at, &(t, _)) in doc_terms.iter().enumerate() {
                let tu = t as usize;
                if scratch.seen[tu] != gen_ {
                    scratch.seen[tu] = gen_;
                    scratch.tf[tu] = fit.order.len() as u32;
                    fit.order.push(TermStat {
                        term: t,
                        df: 0,
                        first: d,
                        at: at as u32,
                    });
                }
                fit.order[scratch.tf[tu] as usize].df += 1;
            }
        }
        // Pass 2: postings, laid out by the frequencies.
        fit.offsets.reserve(fit.order.len() + 1);
        fit.offsets.push(0);
        let mut total = 0u32;
        for s in &fit.order {
            total += s.df;
            fit.offsets.push(total);
        }
        let mut cursor: Vec<u32> = fit.offsets[..fit.order.len()].to_vec();
        fit.post = vec![(0, 0); total as usize];
        let mut d = 0u32;
        for (len, doc_terms) in docs {
            if len == 0 {
                continue;
            }
            for &(t, c) in doc_terms {
                let p = scratch.tf[t as usize] as usize;
                fit.post[cursor[p] as usize] = (d, c);
                cursor[p] += 1;
            }
            d += 1;
        }
        fit.index = fit
            .order
            .iter()
            .enumerate()
            .map(|(i, s)| (s.term, i as u32))
            .collect();
        fit.index.sort_unstable();
        fit
    }

    /// The position in `order` of term `t`, if the list has it.
    fn find(&self, t: u32) -> Option<usize> {
        self.index
            .binary_search_by_key(&t, |e| e.0)
            .ok()
            .map(|i| self.index[i].1 as usize)
    }

    /// How many documents with tokens.
    pub(crate) fn kept(&self) -> usize {
        self.lens.len()
    }

    /// The list index of kept document `d`.
    pub(crate) fn list_index(&self, d: u32) -> usize {
        self.at[d as usize] as usize
    }

    fn postings(&self, i: usize) -> &[(u32, u32)] {
        &self.post[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

impl FitScratch {
    /// rank_bm25's scores of `fit`'s kept documents minus `excluded` (kept indices, ascending,
    /// each with its terms), fitted on those documents alone, in kept order: what
    /// [`FitScratch::scores`] gives for the same documents, bit for bit. `terms_of(d)` gives
    /// kept document `d`'s terms (used to place a term whose first appearance was excluded).
    /// Requires [`super::fit::fast_params`]; every token id below `terms`.
    pub(crate) fn list_scores<'a>(
        &mut self,
        fit: &ListFit,
        excluded: &[(u32, &[(u32, u32)])],
        terms_of: impl Fn(u32) -> &'a [(u32, u32)],
        qids: &[u32],
        terms: usize,
        params: Bm25Params,
    ) -> Vec<f64> {
        let n = fit.kept() - excluded.len();
        if n == 0 {
            return Vec::new();
        }
        if qids.is_empty() {
            return vec![0.0; n];
        }
        let Bm25Params { k1, b, epsilon } = params;
        let is_out = |d: u32| excluded.binary_search_by_key(&d, |e| e.0).is_ok();
        // How many excluded documents hold each term (in `tf`, stamped by `seen`).
        let gen_ = self.next_list(terms);
        let mut num_doc = fit.num_doc;
        for &(d, doc_terms) in excluded {
            num_doc -= u128::from(fit.lens[d as usize]);
            for &(t, _) in doc_terms {
                let t = t as usize;
                if self.seen[t] != gen_ {
                    self.seen[t] = gen_;
                    self.tf[t] = 0;
                }
                self.tf[t] += 1;
            }
        }
        // The reduced list's terms in its first-appearance order: those whose first document
        // stays keep their place; those first seen in an excluded document move to their
        // first remaining one (found from the excluded documents' own terms, sorted by place).
        let mut moved: Vec<(u32, u32, u32)> = Vec::new();
        for &(d, doc_terms) in excluded {
            for &(t, _) in doc_terms {
                let i = fit
                    .find(t)
                    .expect("an excluded document's term is in the list");
                let s = fit.order[i];
                if s.first != d || s.df == self.tf[t as usize] {
                    continue; // first seen elsewhere (or here, once), or gone with them
                }
                let to = fit
                    .postings(i)
                    .iter()
                    .map(|p| p.0)
                    .find(|&d| !is_out(d))
                    .expect("a term with a remaining document frequency has a remaining posting");
                let at = terms_of(to)
                    .iter()
                    .position(|&(x, _)| x == t)
                    .expect("a posting's document holds its term") as u32;
                moved.push((to, at, t));
            }
        }
        moved.sort_unstable();
        let mut moved = moved.into_iter().peekable();
        let dgen = self.next_doc();
        self.order.clear();
        for s in &fit.order {
            let t = s.term as usize;
            let gone = if self.seen[t] == gen_ { self.tf[t] } else { 0 };
            let df = s.df - gone;
            if df == 0 {
                continue;
            }
            self.doc[t] = dgen;
            self.df[t] = df;
            if gone > 0 && is_out(s.first) {
                continue; // placed from `moved`
            }
            while let Some(m) = moved.next_if(|m| (m.0, m.1) < (s.first, s.at)) {
                self.order.push(m.2);
            }
            self.order.push(s.term);
        }
        self.order.extend(moved.map(|m| m.2));
        if self.order.is_empty() {
            return vec![0.0; n];
        }
        let avgdl = num_doc as f64 / n as f64;
        self.fit_idfs(n, epsilon);
        let mut scores = vec![0.0f64; fit.kept()];
        for &t in qids {
            if (t as usize) >= terms || self.doc[t as usize] != dgen {
                continue;
            }
            let w = self.idf[t as usize];
            if w == 0.0 {
                continue;
            }
            let Some(i) = fit.find(t) else { continue };
            for &(d, c) in fit.postings(i) {
                let norm = formula::length_norm(k1, b, f64::from(fit.lens[d as usize]), avgdl);
                scores[d as usize] += w * formula::tf_part(f64::from(c), k1, norm);
            }
        }
        if excluded.is_empty() {
            return scores;
        }
        let mut out = Vec::with_capacity(n);
        let mut ex = excluded.iter().map(|e| e.0).peekable();
        for (d, s) in scores.into_iter().enumerate() {
            if ex.peek() == Some(&(d as u32)) {
                ex.next();
            } else {
                out.push(s);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Documents as token counts and first-appearance term lists, from token id sequences.
    fn docs(raw: &[Vec<u32>]) -> Vec<(usize, Vec<(u32, u32)>)> {
        raw.iter()
            .map(|toks| {
                let mut terms: Vec<(u32, u32)> = Vec::new();
                for &t in toks {
                    match terms.iter_mut().find(|x| x.0 == t) {
                        Some(x) => x.1 += 1,
                        None => terms.push((t, 1)),
                    }
                }
                (toks.len(), terms)
            })
            .collect()
    }

    fn check(raw: &[Vec<u32>], out_mask: &[bool], q: &[u32], params: Bm25Params) {
        let docs = docs(raw);
        let terms = 40;
        let fit = ListFit::build(
            docs.iter().map(|(l, t)| (*l, &t[..])),
            &mut FitScratch::default(),
            terms,
        );
        let kept: Vec<&(usize, Vec<(u32, u32)>)> = docs.iter().filter(|d| d.0 > 0).collect();
        let excluded: Vec<(u32, &[(u32, u32)])> = kept
            .iter()
            .enumerate()
            .filter(|(i, _)| out_mask.get(*i).copied().unwrap_or(false))
            .map(|(i, d)| (i as u32, &d.1[..]))
            .collect();
        let remaining: Vec<(usize, &[(u32, u32)])> = kept
            .iter()
            .enumerate()
            .filter(|(i, _)| !out_mask.get(*i).copied().unwrap_or(false))
            .map(|(_, d)| (d.0, &d.1[..]))
            .collect();
        let mut a = FitScratch::default();
        let want = a.scores(remaining.iter().copied(), q, terms, params);
        let mut b = FitScratch::default();
        let got = b.list_scores(&fit, &excluded, |d| &kept[d as usize].1, q, terms, params);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&got),
            bits(&want),
            "docs {raw:?} out {out_mask:?} q {q:?}"
        );
    }

    #[test]
    fn a_moved_first_appearance_changes_the_idf_order() {
        // "7" first appears in document 0; without it, "7" comes after "3" and "5".
        let raw = vec![vec![7, 1], vec![3, 5, 7], vec![1, 1, 9], vec![]];
        let p = Bm25Params::default();
        check(&raw, &[true, false, false], &[7, 3, 1], p);
        check(&raw, &[false, true, false], &[7, 3, 9, 9], p);
        check(&raw, &[false, false, false], &[1], p);
        check(&raw, &[true, true, true], &[1], p);
        check(&raw, &[false, false, false], &[], p);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn equals_a_fit_of_the_remaining_documents(
            raw in prop::collection::vec(prop::collection::vec(0u32..12, 0..8), 1..14),
            out_mask in prop::collection::vec(prop::bool::weighted(0.3), 14),
            q in prop::collection::vec(0u32..14, 0..5),
            k1 in 0.5f64..2.0, b in 0.0f64..0.99, epsilon in 0.0f64..0.5,
        ) {
            check(&raw, &out_mask, &q, Bm25Params { k1, b, epsilon });
        }
    }
}
