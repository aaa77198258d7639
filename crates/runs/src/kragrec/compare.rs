//! The K-RagRec tables recomputed from rows files alone (no model, no index): ACC and
//! Recall@k with bootstrap intervals for every (method, M) the files hold, and, for each pair
//! `A:B`, A against B on the rows both scored (paired per row: the ACC difference, its 95%
//! paired bootstrap interval and the paired t-test). The metrics are the library's
//! (`pgraphrag_recsys::summarize`, `ScoredRow::paired`); the numbers are printed by
//! `pgraphrag_eval::markdown_value`, the results tables' one formatter.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pgraphrag_eval::{RunDir, markdown_p, markdown_value};
use pgraphrag_metrics::stats::{paired_bootstrap, paired_t_test};
use pgraphrag_recsys::{Method, MethodSummary, ScoredRow, summarize};
use serde::{Deserialize, Serialize};

use super::data::RESULT_FILES;
use crate::{Error, Result};

/// Resamples and seed of every interval (as the evaluation's table and the LaMP comparisons).
const RESAMPLES: usize = 1000;
const SEED: u32 = 0;

/// Recomputes the K-RagRec tables of rows files (`pgraphrag recsys compare`).
///
/// ```
/// use pgraphrag_runs::kragrec::CompareSpec;
/// let spec = CompareSpec {
///     rows: vec!["runs/rows.jsonl".into()],
///     pairs: vec![("popularity".into(), "kg-text".into())],
/// };
/// assert!(spec.run().is_err()); // no such file
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareSpec {
    /// Rows files of [`super::EvalSpec`] or [`super::AdapterSpec`] runs; a (row, method, M)
    /// in two of them is refused.
    pub rows: Vec<PathBuf>,
    /// `(A, B)`: method A against method B at every M both have, on the rows both scored.
    pub pairs: Vec<(String, String)>,
}

/// The tables of a [`CompareSpec`] run.
#[derive(Debug, Clone)]
pub struct CompareReport {
    /// `results.md`: the headline, the summary table and the paired comparisons.
    pub markdown: String,
    /// `results.json`: the same figures.
    pub json: serde_json::Value,
}

impl CompareReport {
    /// Writes `results.md` and `results.json` into `dir`, each atomically.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let dir = RunDir::new(dir);
        dir.write(RESULT_FILES[0], self.markdown.as_bytes())?;
        dir.write_json(RESULT_FILES[1], &self.json)?;
        Ok(())
    }
}

impl CompareSpec {
    /// Reads the rows files and computes the tables.
    pub fn run(&self) -> Result<CompareReport> {
        let mut groups: BTreeMap<(String, usize), Vec<ScoredRow>> = BTreeMap::new();
        let mut files = Vec::new();
        for path in &self.rows {
            files.push(format!(
                "`{}`",
                path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into_owned()
                )
            ));
            for r in read_rows(path)? {
                groups
                    .entry((r.method.clone(), r.candidates.len()))
                    .or_default()
                    .push(r);
            }
        }
        for ((method, m), rows) in groups.iter_mut() {
            rows.sort_by_key(|r| r.row);
            if let Some(w) = rows.windows(2).find(|w| w[0].row == w[1].row) {
                return Err(Error::Setting(format!(
                    "row {} of {method} at M = {m} is in the rows files twice",
                    w[0].row
                )));
            }
        }
        let all: Vec<ScoredRow> = groups.values().flatten().cloned().collect();
        let summary = summarize(&all, &[3, 5, 10], RESAMPLES, 0.95, SEED)?;
        let mut paired = Vec::new();
        for (x, y) in &self.pairs {
            paired.extend(compare(&groups, x, y)?);
        }
        let mut a_first = BTreeMap::new();
        for (key, rows) in &groups {
            let mut n = 0;
            for r in rows {
                n += usize::from(r.ranking()?.first() == Some(&0));
            }
            a_first.insert(key.clone(), n);
        }
        let markdown = render(&headline(&groups)?, &files, &summary, &a_first, &paired);
        let a_first: Vec<_> = a_first
            .iter()
            .map(|((method, m), n)| serde_json::json!({ "method": method, "m": m, "a_first": n }))
            .collect();
        let json = serde_json::json!({ "summary": summary, "a_first": a_first, "paired": paired });
        Ok(CompareReport { markdown, json })
    }
}

/// One paired comparison: A − B in ACC over the rows both scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Paired {
    /// Method A.
    pub a: String,
    /// Method B.
    pub b: String,
    /// Candidates per row.
    pub m: usize,
    /// Rows both scored.
    pub rows: usize,
    /// A's ACC on them.
    pub acc_a: f64,
    /// B's ACC on them.
    pub acc_b: f64,
    /// A − B.
    pub delta: f64,
    /// 95% percentile interval of A − B over paired bootstrap resamples of the rows.
    pub interval: [f64; 2],
    /// Two-sided paired t-test p of the per-row differences (NaN when all are equal).
    pub p_value: f64,
}

fn read_rows(path: &Path) -> Result<Vec<ScoredRow>> {
    let text = std::fs::read_to_string(path)
        .map_err(Error::input(format!("reading {}", path.display())))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                Error::Setting(format!(
                    "{} line {}: not a row of `recsys eval` ({e})",
                    path.display(),
                    i + 1
                ))
            })
        })
        .collect()
}

/// `A:B`: the two method names of a comparison.
///
/// ```
/// use pgraphrag_runs::kragrec::parse_pair;
/// assert_eq!(parse_pair("popularity:kg-text")?, ("popularity".into(), "kg-text".into()));
/// assert!(parse_pair("none:none").is_err());
/// # Ok::<(), pgraphrag_runs::Error>(())
/// ```
pub fn parse_pair(s: &str) -> Result<(String, String)> {
    match s.split_once(':') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() && a != b => {
            Ok((a.to_string(), b.to_string()))
        }
        _ => Err(Error::Setting(format!(
            "pair {s:?}: two different method names, `A:B`"
        ))),
    }
}

/// A against B at every M both have (largest M first), paired per row (`groups`: (method,
/// M) → rows).
fn compare(
    groups: &BTreeMap<(String, usize), Vec<ScoredRow>>,
    a: &str,
    b: &str,
) -> Result<Vec<Paired>> {
    let mut out = Vec::new();
    for ((method, m), rows_a) in groups.range((a.to_string(), 0)..) {
        if method != a {
            break;
        }
        let Some(rows_b) = groups.get(&(b.to_string(), *m)) else {
            continue;
        };
        let pairs = ScoredRow::paired(rows_a, rows_b)?;
        if pairs.is_empty() {
            continue;
        }
        let mut ha = Vec::with_capacity(pairs.len());
        let mut hb = Vec::with_capacity(pairs.len());
        for (x, y) in &pairs {
            ha.push(f64::from(u8::from(x.hit(1)?)));
            hb.push(f64::from(u8::from(y.hit(1)?)));
        }
        let boot = paired_bootstrap(&ha, &hb, RESAMPLES, 0.95, SEED)?;
        let p_value = if pairs.len() < 2 {
            f64::NAN
        } else {
            paired_t_test(&ha, &hb)?.p_value
        };
        let n = pairs.len() as f64;
        out.push(Paired {
            a: a.to_string(),
            b: b.to_string(),
            m: *m,
            rows: pairs.len(),
            acc_a: ha.iter().sum::<f64>() / n,
            acc_b: hb.iter().sum::<f64>() / n,
            delta: boot.delta,
            interval: [boot.interval.low, boot.interval.high],
            p_value,
        });
    }
    out.sort_by_key(|p| std::cmp::Reverse(p.m));
    if out.is_empty() {
        return Err(Error::Setting(format!(
            "pair {a}:{b}: the rows files have no row that both methods scored at the same M"
        )));
    }
    Ok(out)
}

/// `p = 0.012`, `p < 0.001` or `p –` (every row agrees).
fn p_phrase(p: f64) -> String {
    let p = markdown_p(p);
    match p.strip_prefix('<') {
        Some(rest) => format!("p < {rest}"),
        None => format!("p = {p}"),
    }
}

/// The first lines of `results.md` where the files hold LLM and no-LLM methods at the same M:
/// per M (largest first), the strongest no-LLM method (highest ACC over its rows) against
/// every LLM method on the rows both scored, and whether any beats it (A − B below 0 with the
/// paired t-test's p < 0.05). Both sides are picked on the evaluated rows.
fn headline(groups: &BTreeMap<(String, usize), Vec<ScoredRow>>) -> Result<String> {
    let uses_model = |name: &str| Method::parse(name).map(Method::uses_model).ok();
    let mut ms: Vec<usize> = groups.keys().map(|(_, m)| *m).collect();
    ms.sort_unstable_by(|a, b| b.cmp(a));
    ms.dedup();
    let mut s = String::new();
    for m in ms {
        let at_m = || groups.iter().filter(move |((_, mm), _)| *mm == m);
        let acc = |rows: &[ScoredRow]| -> Result<f64> {
            let hits = rows
                .iter()
                .map(|r| r.hit(1))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(hits.iter().filter(|h| **h).count() as f64 / rows.len() as f64)
        };
        let mut strongest: Option<(&str, f64)> = None;
        for ((name, _), rows) in at_m() {
            if uses_model(name) == Some(false) {
                let a = acc(rows)?;
                if strongest.is_none_or(|(_, b)| a > b) {
                    strongest = Some((name, a));
                }
            }
        }
        let Some((base, _)) = strongest else { continue };
        let mut versus = Vec::new();
        for ((name, _), rows) in at_m() {
            if uses_model(name) == Some(true)
                && !ScoredRow::paired(&groups[&(base.to_string(), m)], rows)?.is_empty()
            {
                versus.extend(
                    compare(groups, base, name)?
                        .into_iter()
                        .filter(|p| p.m == m),
                );
            }
        }
        let Some(best) = versus.iter().min_by(|x, y| x.delta.total_cmp(&y.delta)) else {
            continue;
        };
        let beaten: Vec<&str> = versus
            .iter()
            .filter(|p| p.delta < 0.0 && p.p_value < 0.05)
            .map(|p| p.b.as_str())
            .collect();
        let verdict = if beaten.is_empty() {
            format!("no LLM method beats `{base}` (of {})", versus.len())
        } else {
            format!("`{}` beat `{base}`", beaten.join("`, `"))
        };
        s.push_str(&format!(
            "**M = {m}**: the strongest no-LLM method is `{base}` (ACC {}); the best LLM method is \
             `{}` (ACC {}); `{base}` − `{}` = {} [{}, {}] in ACC on the {} rows both scored \
             (95% paired bootstrap), paired t-test {}: {verdict}.\n\n",
            markdown_value(best.acc_a),
            best.b,
            markdown_value(best.acc_b),
            best.b,
            markdown_value(best.delta),
            markdown_value(best.interval[0]),
            markdown_value(best.interval[1]),
            best.rows,
            p_phrase(best.p_value),
        ));
    }
    Ok(s)
}

/// The Markdown of the summary and the comparisons (after `head`, [`headline`]'s lines);
/// `a_first`: per (method, M), the rows whose ranking puts option A first.
fn render(
    head: &str,
    files: &[String],
    summary: &[MethodSummary],
    a_first: &BTreeMap<(String, usize), usize>,
    paired: &[Paired],
) -> String {
    let cell = |v: f64, i: &[f64; 2]| {
        format!(
            "{} [{}, {}]",
            markdown_value(v),
            markdown_value(i[0]),
            markdown_value(i[1])
        )
    };
    let mut s = format!(
        "{head}K-RagRec rows of {}, recomputed by `pgraphrag recsys compare`. Intervals: 95% \
         percentile bootstrap, {RESAMPLES} resamples of the rows, seed {SEED}. Methods without a \
         model: random, popularity, history. A first: rows whose ranking puts option A first.\n\n\
         | method | M | rows | model | A first | chance (1/M) | ACC | R@3 | R@5 | R@10 |\n\
         |---|---:|---:|---|---:|---:|---|---|---|---|\n",
        files.join(", ")
    );
    for m in summary {
        let r = |k: usize| {
            m.recall
                .iter()
                .position(|(kk, _)| *kk == k)
                .map_or("–".to_string(), |j| {
                    cell(m.recall[j].1, &m.intervals[j + 1])
                })
        };
        let model = match Method::parse(&m.method) {
            Ok(x) if !x.uses_model() => "no",
            Ok(_) => "yes",
            Err(_) => "?",
        };
        s.push_str(&format!(
            "| {} | {} | {} | {model} | {} | {} | {} | {} | {} | {} |\n",
            m.method,
            m.m,
            m.rows,
            a_first
                .get(&(m.method.clone(), m.m))
                .map_or("–".to_string(), usize::to_string),
            markdown_value(1.0 / m.m as f64),
            cell(m.acc, &m.intervals[0]),
            r(3),
            r(5),
            r(10)
        ));
    }
    if !paired.is_empty() {
        s.push_str(
            "\nPaired per row (the rows both methods scored): ACC of A and B, A − B with its 95% \
             paired bootstrap interval, and the two-sided paired t-test p (– when every row \
             agrees).\n\n\
             | A | B | M | rows | ACC A | ACC B | A − B [95% CI] | p |\n\
             |---|---|---:|---:|---:|---:|---|---:|\n",
        );
        for p in paired {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                p.a,
                p.b,
                p.m,
                p.rows,
                markdown_value(p.acc_a),
                markdown_value(p.acc_b),
                cell(p.delta, &p.interval),
                markdown_p(p.p_value)
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(row: usize, method: &str, scores: Vec<f64>) -> ScoredRow {
        ScoredRow {
            row,
            user_id: 1,
            method: method.into(),
            history: vec![9],
            candidates: vec![1, 2, 3],
            target: 2,
            scores,
            retrieved: vec![],
        }
    }

    #[test]
    fn pairs_compare_the_rows_both_scored() {
        let mut g = BTreeMap::new();
        // A hits rows 0..4, B only row 0; B also scored row 9, which A did not.
        g.insert(
            ("popularity".to_string(), 3),
            (0..4)
                .map(|i| row(i, "popularity", vec![0.0, 1.0, 0.5]))
                .collect(),
        );
        let mut b: Vec<ScoredRow> = (1..4)
            .map(|i| row(i, "none", vec![1.0, 0.0, 0.5]))
            .collect();
        b.insert(0, row(0, "none", vec![0.0, 1.0, 0.0]));
        b.push(row(9, "none", vec![1.0, 0.0, 0.5]));
        g.insert(("none".to_string(), 3), b);
        let c = compare(&g, "popularity", "none").unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].rows, c[0].acc_a, c[0].acc_b, c[0].delta),
            (4, 1.0, 0.25, 0.75)
        );
        assert!(c[0].interval[0] > 0.0 && c[0].interval[1] <= 1.0);
        // Nothing in common is an error, not an empty table.
        assert!(compare(&g, "popularity", "kaping").is_err());
        assert!(parse_pair("none").is_err() && parse_pair("none:none").is_err());
        let head = headline(&g).unwrap();
        assert!(
            head.starts_with(
                "**M = 3**: the strongest no-LLM method is `popularity` (ACC 1.000); the best LLM \
                 method is `none` (ACC 0.250); `popularity` − `none` = 0.750 ["
            ),
            "{head}"
        );
        assert!(
            head.ends_with("no LLM method beats `popularity` (of 1).\n\n"),
            "{head}"
        );
        let md = render("", &["`x`".into()], &[], &BTreeMap::new(), &c);
        assert!(
            md.contains("| popularity | none | 3 | 4 | 1.000 | 0.250 | 0.750 ["),
            "{md}"
        );
    }
}
