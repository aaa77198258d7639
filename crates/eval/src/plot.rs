//! Results tables as SVG bar charts (no plotting dependency: the SVG is written directly).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::{Error, Result, ResultRow, ResultsTable};

/// Bar colours for k = 1, 2, 4, … (colour-blind-safe, in the order the k values appear).
const COLOURS: [&str; 6] = [
    "#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377",
];
const PANEL_W: f64 = 420.0;
const PANEL_H: f64 = 280.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 58.0;
const BOTTOM: f64 = 40.0;
/// Most metric panels a chart draws.
const MAX_PANELS: usize = 8;
/// Most mode groups a panel draws (the first in table order): bars stay a few pixels wide.
const MAX_GROUPS: usize = 24;
/// Most k values a panel draws (the smallest): one colour each.
const MAX_KS: usize = COLOURS.len();

/// What a chart draws: the groups (modes, table order), the series (k values, ascending), each
/// (mode, k) cell's row (the first with that label), the panels, and what was left out.
struct Layout<'a> {
    groups: Vec<&'a str>,
    ks: Vec<(u32, &'a str)>,
    cells: HashMap<(&'a str, &'a str), &'a ResultRow>,
    columns: usize,
    note: Option<String>,
}

impl ResultsTable {
    /// Reads a table back from the CSV that [`ResultsTable::to_csv`] writes (`mode_k,<metric>…`,
    /// one row per grid cell). The CSV does not hold the user count or the unparsed count, so
    /// those are 0 in the rows read. Empty and `nan` cells read as NaN.
    ///
    /// ```
    /// let t = pgraphrag_eval::ResultsTable::from_csv("t", "mode_k,MAE,RMSE\nboth_k1,1.5,2.121\n").unwrap();
    /// assert_eq!(t.columns, ["MAE", "RMSE"]);
    /// assert_eq!(t.rows[0].values, [1.5, 2.121]);
    /// assert!(pgraphrag_eval::ResultsTable::from_csv("t", "mode_k,MAE\nboth_k1,x\n").is_err());
    /// ```
    pub fn from_csv(title: impl Into<String>, csv: &str) -> Result<Self> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(csv.as_bytes());
        // The 1-based line of a record: the reader's position is where it started reading,
        // before the blank lines it skips (and its line count leaves them out). Positions only
        // grow, so the newlines are counted once, from the last position asked for.
        let bytes = csv.as_bytes();
        let counted = std::cell::Cell::new((0usize, 1usize));
        let line_of = |pos: Option<&csv::Position>| {
            pos.map_or(0, |p| {
                let mut start = (p.byte() as usize).min(bytes.len());
                while start < bytes.len() && matches!(bytes[start], b'\n' | b'\r') {
                    start += 1;
                }
                let (from, line) = counted.get();
                let line = if start >= from {
                    line + bytes[from..start].iter().filter(|&&b| b == b'\n').count()
                } else {
                    1 + bytes[..start].iter().filter(|&&b| b == b'\n').count()
                };
                counted.set((start, line));
                line
            })
        };
        // Records with their 1-based line, blank lines skipped.
        let mut records = reader.records().filter_map(|r| match r {
            Ok(rec) if rec.iter().all(str::is_empty) => None,
            Ok(rec) => Some(Ok((line_of(rec.position()), rec))),
            Err(e) => Some(Err(Error::InvalidInput(format!(
                "results CSV line {}: {e}",
                line_of(e.position())
            )))),
        });
        let (h, header) = records
            .next()
            .ok_or_else(|| Error::InvalidInput("results CSV is empty".into()))??;
        let mut head = header.iter();
        if head.next() != Some("mode_k") {
            return Err(Error::InvalidInput(format!(
                "results CSV line {h}: expected a header starting with `mode_k`, found `{}`",
                pgraphrag_data::shown(&header.iter().collect::<Vec<_>>().join(","))
            )));
        }
        let columns: Vec<String> = head.map(str::to_string).collect();
        if columns.is_empty() {
            return Err(Error::InvalidInput(format!(
                "results CSV line {h}: no metric columns after `mode_k`"
            )));
        }
        let mut rows = Vec::new();
        for r in records {
            let (line, rec) = r?;
            if rec.len() != columns.len() + 1 {
                return Err(Error::InvalidInput(format!(
                    "results CSV line {line}: {} cells, expected {} (`{}`)",
                    rec.len(),
                    columns.len() + 1,
                    pgraphrag_data::shown(&rec.iter().collect::<Vec<_>>().join(","))
                )));
            }
            let values = rec
                .iter()
                .skip(1)
                .map(|c| match c {
                    "" | "nan" | "NaN" => Ok(f64::NAN),
                    c => c.parse::<f64>().map_err(|_| {
                        Error::InvalidInput(format!(
                            "results CSV line {line}: `{}` is not a number",
                            pgraphrag_data::shown(c)
                        ))
                    }),
                })
                .collect::<Result<Vec<_>>>()?;
            rows.push(ResultRow {
                config: rec[0].to_string(),
                n: 0,
                values,
                unparsed: 0,
            });
        }
        Ok(ResultsTable {
            title: title.into(),
            columns,
            rows,
        })
    }

    /// A grouped bar chart as a standalone SVG document: one panel per metric column, one group
    /// of bars per mode (`none`, `user`, `neighbor`, `both`, `random`, in table order), one bar
    /// per k, each bar labelled with its value (and a tooltip), and a dashed line at the
    /// no-retrieval row (`none_*`) when there is one. Panel headings say whether higher or lower
    /// is better (MAE and RMSE are lower-is-better). NaN values get no bar.
    ///
    /// ```
    /// let t = pgraphrag_eval::ResultsTable::from_csv(
    ///     "amazon titles",
    ///     "mode_k,ROUGE-1\nnone_k1,0.063\nboth_k1,0.075\nboth_k2,0.069\n",
    /// ).unwrap();
    /// let svg = t.to_svg();
    /// assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    /// assert!(svg.contains("both_k2: 0.069"));
    /// ```
    pub fn to_svg(&self) -> String {
        let layout = self.layout();
        let ks = &layout.ks;
        let ncol = layout.columns.max(1);
        let width = PANEL_W * ncol as f64;
        let note_h = if layout.note.is_some() { 18.0 } else { 0.0 };
        let height = PANEL_H + 24.0 + note_h;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
        );
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="18" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
            width / 2.0,
            esc(&self.title)
        );
        // Legend: one swatch per k.
        let legend_w = 70.0 * ks.len() as f64;
        for (i, (_, k)) in ks.iter().enumerate() {
            let x = width / 2.0 - legend_w / 2.0 + 70.0 * i as f64;
            let _ = writeln!(
                s,
                r#"<rect x="{x}" y="28" width="12" height="12" fill="{}"/><text x="{}" y="38">k = {}</text>"#,
                COLOURS[i % COLOURS.len()],
                x + 16.0,
                esc(k)
            );
        }
        for (c, name) in self.columns.iter().take(ncol).enumerate() {
            self.panel(&mut s, c, name, &layout, PANEL_W * c as f64);
        }
        if let Some(note) = &layout.note {
            let _ = writeln!(
                s,
                r##"<text class="note" x="8" y="{:.1}" fill="#a00">{}</text>"##,
                height - 6.0,
                esc(note)
            );
        }
        s.push_str("</svg>\n");
        s
    }

    /// What [`ResultsTable::to_svg`] leaves out of a table too large to draw legibly, in the
    /// words of the note it writes at the chart's foot (`None` when everything is drawn): at
    /// most 8 metric panels, 24 mode groups (the first in table order) and 6 k values (the
    /// smallest), so a chart stays small whatever the table's size.
    ///
    /// ```
    /// let rows: String = (0..100).map(|i| format!("m{i}_k1,0.5\n")).collect();
    /// let t = pgraphrag_eval::ResultsTable::from_csv("t", &format!("mode_k,MAE\n{rows}")).unwrap();
    /// let note = t.chart_note().unwrap();
    /// assert_eq!(note, "chart shows the first 24 of 100 modes; every row is in the table");
    /// assert!(t.to_svg().contains(&note));
    /// ```
    pub fn chart_note(&self) -> Option<String> {
        self.layout().note
    }

    /// The groups, k values and cells the chart draws, found in one pass over the rows.
    fn layout(&self) -> Layout<'_> {
        let mut groups: Vec<&str> = Vec::new();
        let mut seen_groups = HashSet::new();
        let mut ks: Vec<(u32, &str)> = Vec::new();
        let mut seen_ks = HashSet::new();
        let mut cells: HashMap<(&str, &str), &ResultRow> = HashMap::new();
        for r in &self.rows {
            let (mode, k) = split_config(&r.config);
            if seen_groups.insert(mode) {
                groups.push(mode);
            }
            if seen_ks.insert(k) {
                ks.push((k.parse().unwrap_or(u32::MAX), k));
            }
            cells.entry((mode, k)).or_insert(r);
        }
        ks.sort();
        let mut cut = Vec::new();
        for (what, shown, all) in [
            (
                "metrics",
                MAX_PANELS.min(self.columns.len()),
                self.columns.len(),
            ),
            ("modes", MAX_GROUPS.min(groups.len()), groups.len()),
            ("k values", MAX_KS.min(ks.len()), ks.len()),
        ] {
            if shown < all {
                let which = if what == "k values" {
                    "smallest"
                } else {
                    "first"
                };
                cut.push(format!("the {which} {shown} of {all} {what}"));
            }
        }
        groups.truncate(MAX_GROUPS);
        ks.truncate(MAX_KS);
        Layout {
            columns: self.columns.len().min(MAX_PANELS),
            groups,
            ks,
            cells,
            note: (!cut.is_empty())
                .then(|| format!("chart shows {}; every row is in the table", cut.join(", "))),
        }
    }

    fn panel(&self, s: &mut String, col: usize, name: &str, layout: &Layout<'_>, x0: f64) {
        let (groups, ks) = (&layout.groups, &layout.ks);
        let lower = matches!(name.to_ascii_uppercase().as_str(), "MAE" | "RMSE");
        let plot_w = PANEL_W - LEFT - RIGHT;
        let plot_h = PANEL_H - TOP - BOTTOM;
        let (px, py) = (x0 + LEFT, 24.0 + TOP);
        // The bars drawn, per group: (series index, row).
        let bars: Vec<Vec<(usize, &ResultRow)>> = groups
            .iter()
            .map(|mode| {
                ks.iter()
                    .enumerate()
                    .filter_map(|(i, (_, k))| layout.cells.get(&(*mode, *k)).map(|r| (i, *r)))
                    .collect()
            })
            .collect();
        let max = bars
            .iter()
            .flatten()
            .filter_map(|(_, r)| r.values.get(col).copied())
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let (top, step) = nice_axis(max);
        let y = |v: f64| py + plot_h - (v / top).clamp(0.0, 1.0) * plot_h;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="12" font-weight="bold">{} ({} is better)</text>"#,
            px + plot_w / 2.0,
            py - 10.0,
            esc(name),
            if lower { "lower" } else { "higher" }
        );
        // Grid lines and y tick labels.
        let mut t = 0.0;
        while t <= top + step * 1e-6 {
            let yy = y(t);
            let _ = writeln!(
                s,
                r##"<line x1="{px}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#444">{}</text>"##,
                px + plot_w,
                px - 4.0,
                yy + 4.0,
                tick_label(t, step)
            );
            t += step;
        }
        let _ = writeln!(
            s,
            r##"<line x1="{px}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
            py + plot_h,
            px + plot_w,
            py + plot_h
        );
        // The no-retrieval baseline as a dashed reference line across the panel.
        if let Some(v) = self
            .rows
            .iter()
            .find(|r| split_config(&r.config).0 == "none")
            .and_then(|r| r.values.get(col).copied())
            .filter(|v| v.is_finite())
        {
            let _ = writeln!(
                s,
                r##"<line class="baseline" x1="{px}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#555" stroke-dasharray="4 3"><title>no retrieval: {v:.3}</title></line>"##,
                y(v),
                px + plot_w,
                y(v)
            );
        }
        let group_w = plot_w / groups.len().max(1) as f64;
        let bar_w = group_w * 0.8 / ks.len().max(1) as f64;
        for (g, (mode, bars)) in groups.iter().zip(&bars).enumerate() {
            let gx = px + group_w * g as f64 + (group_w - bar_w * bars.len() as f64) / 2.0;
            for (j, (i, r)) in bars.iter().enumerate() {
                let Some(v) = r.values.get(col).copied().filter(|v| v.is_finite()) else {
                    continue;
                };
                let bx = gx + bar_w * j as f64;
                let _ = writeln!(
                    s,
                    r#"<rect x="{bx:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {v:.3}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="8">{}</text>"#,
                    y(v),
                    (bar_w - 1.0).max(1.0),
                    (py + plot_h - y(v)).max(0.0),
                    COLOURS[i % COLOURS.len()],
                    esc(&r.config),
                    bx + bar_w / 2.0,
                    y(v) - 2.0,
                    value_label(v)
                );
            }
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                px + group_w * (g as f64 + 0.5),
                py + plot_h + 16.0,
                esc(mode)
            );
        }
    }
}

/// `both_k2` → (`both`, `2`); a label without `_k` is its own group with an empty k.
fn split_config(c: &str) -> (&str, &str) {
    match c.rsplit_once("_k") {
        Some((m, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => (m, k),
        _ => (c, ""),
    }
}

/// The axis top and tick step: 1, 2 or 5 × 10^n, four to ten ticks above `max` (> 0).
fn nice_axis(max: f64) -> (f64, f64) {
    if max.is_nan() || max <= 0.0 {
        return (1.0, 0.2);
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil().max(1.0) * step, step)
}

fn tick_label(t: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{t:.decimals$}")
}

fn value_label(v: f64) -> String {
    if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}").trim_start_matches('0').to_string()
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "mode_k,ROUGE-1,METEOR\nnone_k1,0.1,0.2\nuser_k1,0.2,0.3\nboth_k1,0.3,nan\nboth_k2,0.4,0.5\nrandom_k1,0.05,0.1\n";

    #[test]
    fn csv_round_trip() {
        let t = ResultsTable::from_csv("x", CSV).unwrap();
        assert_eq!(t.columns, ["ROUGE-1", "METEOR"]);
        assert_eq!(t.rows.len(), 5);
        assert!(t.rows[2].values[1].is_nan());
        let back = ResultsTable::from_csv("x", &t.to_csv()).unwrap();
        assert_eq!(back.rows[3].values, [0.4, 0.5]);
    }

    #[test]
    fn bad_csv_says_where() {
        let e = ResultsTable::from_csv("x", "mode_k,MAE\nboth_k1,1,2\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        let e = ResultsTable::from_csv("x", "\nconfig,MAE\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("line 2: expected a header starting with `mode_k`"),
            "{e}"
        );
        let e = ResultsTable::from_csv("x", "mode_k,MAE\n\n  \nboth_k1,x\n").unwrap_err();
        assert!(e.to_string().contains("line 4: `x` is not a number"), "{e}");
        assert!(ResultsTable::from_csv("x", "").is_err());
        assert!(ResultsTable::from_csv("x", "mode_k\n").is_err());
    }

    #[test]
    fn svg_has_one_bar_per_finite_value_scaled_to_the_axis() {
        let t = ResultsTable::from_csv("a <b>", CSV).unwrap();
        let svg = t.to_svg();
        // 5 ROUGE-1 bars + 4 METEOR bars (one NaN), plus 2 legend swatches and the background.
        assert_eq!(svg.matches("<rect").count(), 5 + 4 + 2 + 1);
        assert!(svg.contains("a &lt;b&gt;"));
        assert!(svg.contains("ROUGE-1 (higher is better)"));
        assert!(svg.contains("<title>both_k2: 0.400</title>"));
        assert!(!svg.contains("both_k1: NaN"));
        // One dashed no-retrieval line per panel, at none_k1's value.
        assert_eq!(svg.matches(r#"class="baseline""#).count(), 2);
        assert!(svg.contains("<title>no retrieval: 0.100</title>"));
        // The 0.4 bar fills the ROUGE-1 panel (axis top 0.4): its height is the whole plot.
        let plot_h = PANEL_H - TOP - BOTTOM;
        assert!(svg.contains(&format!(
            "height=\"{plot_h:.1}\" fill=\"#EE6677\"><title>both_k2"
        )));
        // Groups in table order.
        let pos = |m: &str| svg.find(&format!(">{m}</text>")).unwrap();
        assert!(
            pos("none") < pos("user") && pos("user") < pos("both") && pos("both") < pos("random")
        );
    }

    #[test]
    fn a_huge_table_is_read_and_drawn_in_linear_time_to_a_bounded_chart() {
        // 200,000 distinct cells in 40,000 modes and 5 k values, 3 metrics.
        let mut csv = String::from("mode_k,ROUGE-1,ROUGE-L,METEOR\n");
        for i in 0..200_000 {
            csv.push_str(&format!("m{}_k{},0.{i:06},0.5,nan\n", i / 5, 1 << (i % 5)));
        }
        let t0 = std::time::Instant::now();
        let t = ResultsTable::from_csv("big", &csv).unwrap();
        let svg = t.to_svg();
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            t0.elapsed()
        );
        assert_eq!(t.rows.len(), 200_000);
        let note = t.chart_note().unwrap();
        assert_eq!(
            note,
            "chart shows the first 24 of 40000 modes; every row is in the table"
        );
        assert!(svg.contains(r#"class="note""#) && svg.contains(&note));
        // 24 modes x 5 k values in 2 panels (METEOR is NaN), 5 swatches, the background.
        assert_eq!(svg.matches("<rect").count(), 2 * 24 * 5 + 5 + 1);
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
        // Lines are still counted right deep into the file.
        let e = ResultsTable::from_csv("big", &format!("{csv}\nlast_k1,x,1,1\n")).unwrap_err();
        assert!(e.to_string().contains("line 200003:"), "{e}");
        // Too many metrics and k values are cut too; a small table is drawn whole.
        let head: String = (0..10).map(|i| format!(",c{i}")).collect();
        let row: String = (1..=8)
            .map(|k| format!("both_k{k}{}\n", ",1".repeat(10)))
            .collect();
        let wide = ResultsTable::from_csv("w", &format!("mode_k{head}\n{row}")).unwrap();
        assert_eq!(
            wide.chart_note().unwrap(),
            "chart shows the first 8 of 10 metrics, the smallest 6 of 8 k values; every row is in the table"
        );
        assert!(
            ResultsTable::from_csv("x", CSV)
                .unwrap()
                .chart_note()
                .is_none()
        );
    }

    #[test]
    fn ratings_are_lower_is_better() {
        let t = ResultsTable::from_csv("r", "mode_k,MAE,RMSE\nnone_k1,2.4,3.0\n").unwrap();
        let svg = t.to_svg();
        assert!(svg.contains("MAE (lower is better)") && svg.contains("RMSE (lower is better)"));
    }

    #[test]
    fn axes_are_round() {
        let close = |(a, b): (f64, f64), (x, y): (f64, f64)| {
            assert!(
                (a - x).abs() < 1e-12 && (b - y).abs() < 1e-12,
                "({a}, {b}) != ({x}, {y})"
            );
        };
        close(nice_axis(0.4), (0.4, 0.1));
        close(nice_axis(0.157), (0.2, 0.05));
        close(nice_axis(2.94), (3.0, 1.0));
        close(nice_axis(0.0), (1.0, 0.2));
        close(nice_axis(f64::NAN), (1.0, 0.2));
        assert_eq!(split_config("both_k12"), ("both", "12"));
        assert_eq!(split_config("odd"), ("odd", ""));
        assert_eq!(value_label(0.135), ".135");
        assert_eq!(value_label(2.365), "2.37");
        assert_eq!(tick_label(0.1, 0.05), "0.10");
    }
}
