//! A chart for an answer where one fits: horizontal bars for a count or aggregate by
//! group, a line for a trend over time. Plain SVG, written as markup into the figure (see
//! [`Chart`]), so it renders on the server (visible before hydration, printable) and
//! needs no chart library.
//!
//! Chooses nothing clever: one label column (and a second text column, which groups the
//! bars too) and the figures, the numeric columns that are not record keys (`id`,
//! `….id`, `…_id`: never drawn).
//!
//! - One figure, or figures in different units (which share no scale), or a table with
//!   other columns besides: the first figure alone, as a single series.
//! - 2–[`MAX_FIGURES`] figures in one unit in a grouped result (each group on one row,
//!   no column but the label(s), the figures and record keys): every figure, on one
//!   scale, with a legend. Bars are grouped, one bar per figure in each group, a fill
//!   each in table order; a trend is one line per figure (dashed differently too).
//!
//! Size: a bar chart draws at most [`MAX_BARS`] bars, counting groups × figures — 20
//! groups of one figure, 10 of two, 6 of three, 5 of four. A result with more is read
//! as a table: it gets no chart (never a chart of some of its figures, which would
//! read as the whole answer). A line has no such cap.

use super::results::{format_number, header, is_id, is_numeric, label};
use crate::protocol::{ResultColumn, ResultTable};
use leptos::prelude::*;
use serde_json::Value;
use std::fmt::Write;

/// What the chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartSpec {
    /// Bars (`false`) or a line over time (`true`).
    pub line: bool,
    /// The label column's header (both groupings' for two, "care setting and etiology").
    pub label_title: String,
    /// The groups (or periods) in table order, one per drawn row.
    pub labels: Vec<String>,
    /// The figures drawn: one, or 2–[`MAX_FIGURES`] side by side in one unit.
    pub series: Vec<Series>,
    /// Unit of the values (every figure's).
    pub unit: Option<String>,
}

/// One figure (a numeric column) of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The column's label ("Open wounds").
    pub title: String,
    /// The column's header as the table shows it, with its unit ("Mean area (cm²)").
    pub heading: String,
    /// One value per label; `None` where that row has none for this figure (a
    /// one-figure chart leaves such rows out).
    pub values: Vec<Option<f64>>,
}

impl ChartSpec {
    /// What the chart shows, naming every figure: "Open wounds and healed wounds by
    /// etiology".
    pub fn title(&self) -> String {
        let figures = match self.series.as_slice() {
            [] => String::new(),
            [one] => one.title.clone(),
            [first, rest @ ..] => {
                let mut rest: Vec<String> = rest.iter().map(|s| s.title.to_lowercase()).collect();
                let last = rest.pop().unwrap_or_default();
                let mut out = first.title.clone();
                for r in rest {
                    out.push_str(", ");
                    out.push_str(&r);
                }
                format!("{out} and {last}")
            }
        };
        format!("{figures} by {}", self.label_title.to_lowercase())
    }
}

/// Most bars drawn (groups × figures); a longer grouped result is better read as a table.
const MAX_BARS: usize = 20;

/// Most figures drawn side by side; a table with more is a record list or a report.
pub const MAX_FIGURES: usize = 4;

/// A figure's colours: bar fill (and a line's points), line stroke, legend swatch and
/// line dashes; a chart of one figure draws it in the first. Every hue is at least 3:1
/// against the white card (WCAG 1.4.11): teal-600 3.7, amber-700 5.0, indigo-600 6.5,
/// fuchsia-700 6.3. The hues follow Okabe and Ito's colour-blind-safe set (bluish
/// green, orange, blue, reddish purple); the legend, the order within each group and
/// the dashes of lines say which is which without colour.
struct Hue {
    fill: &'static str,
    stroke: &'static str,
    swatch: &'static str,
    dash: Option<&'static str>,
}

const PALETTE: [Hue; MAX_FIGURES] = [
    Hue {
        fill: "fill-teal-600",
        stroke: "stroke-teal-600",
        swatch: "bg-teal-600",
        dash: None,
    },
    Hue {
        fill: "fill-amber-700",
        stroke: "stroke-amber-700",
        swatch: "bg-amber-700",
        dash: Some("6 3"),
    },
    Hue {
        fill: "fill-indigo-600",
        stroke: "stroke-indigo-600",
        swatch: "bg-indigo-600",
        dash: Some("2 3"),
    },
    Hue {
        fill: "fill-fuchsia-700",
        stroke: "stroke-fuchsia-700",
        swatch: "bg-fuchsia-700",
        dash: Some("8 3 2 3"),
    },
];

/// A column's unit, `None` when it has none (or an empty one).
fn unit_of(c: &ResultColumn) -> Option<&str> {
    c.unit.as_deref().filter(|u| !u.is_empty())
}

/// The chart that fits `t`, if any: a label column (text or date) and its figures,
/// 2–20 bars for bars or 2+ dates for a line. Row lists (one row per record) get none.
/// Which figures are drawn, and how many bars fit: see the module's documentation.
pub fn chart_for(t: &ResultTable) -> Option<ChartSpec> {
    let label_col = t
        .columns
        .iter()
        .position(|c| matches!(c.kind.as_str(), "text" | "date"))?;
    let figures: Vec<usize> = (0..t.columns.len())
        .filter(|&i| is_numeric(&t.columns[i]))
        .collect();
    let value = *figures.first()?;
    let lc = &t.columns[label_col];
    let line = lc.kind == "date"
        || ["month", "week", "year", "day", "quarter"]
            .iter()
            .any(|k| lc.name.contains(k));
    // a second text column groups the bars too ("etiology" within "care setting"): each
    // bar says both, or the same label would stand for different groups
    // (also beside a period: "per month by clinic" is bars of both, or none when too many,
    // never one line through every clinic's months)
    let second = (label_col + 1..t.columns.len()).find(|&i| i != value && t.columns[i].kind == "text");
    let line = line && second.is_none();
    let text = |r: &Vec<Value>, i: usize| -> Option<String> {
        Some(match r.get(i)? {
            Value::Null => "(none)".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let group = |r: &Vec<Value>| -> Option<String> {
        match second {
            Some(s) => Some(format!("{} · {}", text(r, s)?, text(r, label_col)?)),
            None => text(r, label_col),
        }
    };
    // several figures side by side: in one unit (one scale), in a grouped result — no
    // column but the groupings, the figures and record keys, and each group on one row
    let several = (2..=MAX_FIGURES).contains(&figures.len())
        && figures
            .iter()
            .all(|&i| unit_of(&t.columns[i]) == unit_of(&t.columns[value]))
        && t.columns
            .iter()
            .enumerate()
            .all(|(i, c)| i == label_col || Some(i) == second || figures.contains(&i) || is_id(c))
        && {
            let groups: Vec<String> = t.rows.iter().filter_map(group).collect();
            (1..groups.len()).all(|i| !groups[..i].contains(&groups[i]))
        };
    // A table with many columns is a record list, not a grouped result.
    if !several && t.columns.len() > 3 {
        return None;
    }
    let drawn = if several { &figures[..] } else { &figures[..1] };
    let mut labels = Vec::new();
    let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); drawn.len()];
    for r in &t.rows {
        let Some(l) = group(r) else { continue };
        let row: Vec<Option<f64>> = drawn.iter().map(|&i| r.get(i).and_then(Value::as_f64)).collect();
        // a row with no figure to draw is left out
        if row.iter().all(Option::is_none) {
            continue;
        }
        labels.push(l);
        for (s, v) in values.iter_mut().zip(row) {
            s.push(v);
        }
    }
    let label_title = match second {
        Some(s) => format!(
            "{} and {}",
            label(&t.columns[s]).to_lowercase(),
            label(lc).to_lowercase()
        ),
        None => label(lc),
    };
    let fits = if line {
        labels.len() >= 2
    } else {
        labels.len() >= 2 && labels.len() * drawn.len() <= MAX_BARS
    };
    fits.then(|| ChartSpec {
        line,
        label_title,
        labels,
        series: drawn
            .iter()
            .zip(values)
            .map(|(&i, values)| Series {
                title: label(&t.columns[i]),
                heading: header(&t.columns[i]),
                values,
            })
            .collect(),
        unit: unit_of(&t.columns[value]).map(str::to_owned),
    })
}

fn with_unit(v: f64, unit: &Option<String>) -> String {
    match unit {
        Some(u) => format!("{} {u}", format_number(v)),
        None => format_number(v),
    }
}

/// Shortens a label to fit beside its bar.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

/// Width of the bar chart's label gutter and the most characters a label may keep in it.
fn label_gutter(labels: &[String]) -> (f64, usize) {
    const PX_PER_CHAR: f64 = 7.0;
    const MAX_W: f64 = 260.0;
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let w = (longest as f64 * PX_PER_CHAR + 14.0).clamp(80.0, MAX_W);
    (w, ((MAX_W - 14.0) / PX_PER_CHAR) as usize)
}

/// The largest value drawn (at least the smallest positive number: the scale's top).
fn top(spec: &ChartSpec) -> f64 {
    spec.series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0_f64, |m, v| m.max(*v))
        .max(f64::MIN_POSITIVE)
}

/// Width of every chart's view box.
const W: f64 = 640.0;

/// The chart for `spec`: its title, a legend when it draws several figures, and the
/// SVG. One figure is a single series (teal bars, or a line); several each have their
/// own colour (and dashes, for lines).
#[component]
pub fn Chart(spec: ChartSpec) -> impl IntoView {
    view! { <figure class="rounded-lg border border-slate-200 bg-white p-3" data-testid="chart" inner_html=markup(&spec)></figure> }
}

/// The figure's contents as markup, every text escaped. A chart is static: written as
/// one string into one element it costs the browser bundle little more than that
/// string's pieces, where a view tree of its dozen element kinds cost ~10 KB gzip of
/// the 350 KiB budget (each view type brings its own build, hydrate and rebuild code).
/// The server renders the same string; hydration leaves it as it is.
fn markup(spec: &ChartSpec) -> String {
    let title = spec.title();
    let several = spec.series.len() > 1;
    let mut out = String::from(r#"<figcaption class="mb-2 text-xs font-medium text-slate-600">"#);
    esc(&mut out, &title);
    out.push_str("</figcaption>");
    if several {
        legend(&mut out, spec);
    }
    let mut marks = String::new();
    let (h, desc) = if spec.line {
        line_marks(&mut marks, spec, &title)
    } else {
        bar_marks(&mut marks, spec)
    };
    // One figure: its values (or its trend) are the accessible name, as they always
    // were; several: the title names every figure and a description gives the values.
    let _ = write!(
        out,
        r#"<svg viewBox="0 0 {W} {h}" class="block h-auto w-full max-w-3xl" role="img" aria-label=""#
    );
    esc(&mut out, if several { &title } else { &desc });
    out.push_str(if spec.line {
        r#"">"#
    } else {
        r#"" preserveAspectRatio="xMinYMin meet">"#
    });
    if several {
        out.push_str("<desc>");
        esc(&mut out, &desc);
        out.push_str("</desc>");
    }
    out.push_str(&marks);
    out.push_str("</svg>");
    out
}

/// Appends `s` as text or a quoted attribute's value (labels are the warehouse's data).
fn esc(out: &mut String, s: &str) {
    crate::html::escape_into(out, s);
}

/// Appends a tooltip, `<title>`, saying `s`.
fn title(out: &mut String, s: &str) {
    out.push_str("<title>");
    esc(out, s);
    out.push_str("</title>");
}

/// Appends a `<text>` at (x, y) with the further attributes `attrs`, a tooltip if any,
/// and its words.
fn text(out: &mut String, x: f64, y: f64, attrs: &str, tip: Option<&str>, words: &str) {
    let _ = write!(out, r#"<text x="{x:.1}" y="{y:.1}" {attrs}>"#);
    if let Some(t) = tip {
        title(out, t);
    }
    esc(out, words);
    out.push_str("</text>");
}

/// The key to a chart of several figures: each figure's swatch (its bar fill, or its
/// line with its dashes) and its column header as the table shows it.
fn legend(out: &mut String, spec: &ChartSpec) {
    out.push_str(r#"<ul class="mb-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-700" aria-label="Legend" data-testid="chart-legend">"#);
    for (s, hue) in spec.series.iter().zip(&PALETTE) {
        out.push_str(r#"<li class="flex items-center gap-1.5" data-testid="chart-legend-item">"#);
        if spec.line {
            let _ = write!(
                out,
                r#"<svg width="20" height="10" viewBox="0 0 20 10" class="shrink-0" aria-hidden="true"><line x1="1" y1="5" x2="19" y2="5" class="{}" stroke-width="2"{}></line></svg>"#,
                hue.stroke,
                dashes(hue)
            );
        } else {
            let _ = write!(
                out,
                r#"<span class="inline-block h-3 w-3 shrink-0 rounded-sm {}" aria-hidden="true"></span>"#,
                hue.swatch
            );
        }
        esc(out, &s.heading);
        out.push_str("</li>");
    }
    out.push_str("</ul>");
}

/// A line's `stroke-dasharray` attribute, if its figure is dashed.
fn dashes(hue: &Hue) -> String {
    hue.dash
        .map(|d| format!(r#" stroke-dasharray="{d}""#))
        .unwrap_or_default()
}

/// "Venous leg ulcer — Open wounds: 12": what a bar or point says.
fn tip(group: &str, figure: &str, v: Option<f64>, unit: &Option<String>) -> String {
    format!("{group} — {figure}: {}", value_text(v, unit))
}

fn value_text(v: Option<f64>, unit: &Option<String>) -> String {
    v.map_or_else(|| "no value".to_string(), |v| with_unit(v, unit))
}

/// The figures of one row in words: "open wounds 12, healed wounds 5", or the value
/// alone when there is one figure.
fn row_text(spec: &ChartSpec, row: usize) -> String {
    spec.series
        .iter()
        .map(|s| {
            let v = value_text(s.values[row], &spec.unit);
            if spec.series.len() == 1 {
                v
            } else {
                format!("{} {v}", s.title.to_lowercase())
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Appends horizontal bars, one per figure in each group, in table order, on one scale,
/// each with its value beside it (a dash where it has none) and a tooltip saying group,
/// figure and value. Returns the chart's height and its values in words.
fn bar_marks(out: &mut String, spec: &ChartSpec) -> (f64, String) {
    const VALUE_W: f64 = 90.0;
    let figures = spec.series.len();
    // One figure: a 26 px row, its bar 18 px high. Several: 16 px a bar (12 px high),
    // the groups 10 px apart.
    let (slot, pad, gap, value_attrs) = if figures == 1 {
        (26.0, 4.0, 0.0, r#"class="fill-slate-600" font-size="12""#)
    } else {
        (16.0, 2.0, 10.0, r#"class="fill-slate-600" font-size="11""#)
    };
    // The label gutter fits the longest label (about 7 px a character at 12 px), within
    // 80–260 px; longer labels are shortened with "…" and keep the full text as a tooltip.
    let (label_w, label_chars) = label_gutter(&spec.labels);
    let max = top(spec);
    let group_h = slot * figures as f64 + gap;
    let span = W - label_w - VALUE_W;
    let mut desc = Vec::new();
    for (i, l) in spec.labels.iter().enumerate() {
        desc.push(format!("{l}: {}", row_text(spec, i)));
        let y0 = 2.0 + i as f64 * group_h + gap / 2.0;
        out.push_str("<g>");
        text(
            out,
            label_w - 8.0,
            y0 + slot * figures as f64 / 2.0 + 4.0,
            r#"text-anchor="end" class="fill-slate-700" font-size="12""#,
            Some(l),
            &clip(l, label_chars),
        );
        for (k, (s, hue)) in spec.series.iter().zip(&PALETTE).enumerate() {
            let y = y0 + k as f64 * slot;
            let tooltip = tip(l, &s.title, s.values[i], &spec.unit);
            let value_y = y + slot / 2.0 + 4.0;
            match s.values[i] {
                Some(v) => {
                    let w = (v.max(0.0) / max * span).max(1.0);
                    let _ = write!(
                        out,
                        r#"<rect x="{label_w:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" rx="3" class="{}">"#,
                        y + pad,
                        slot - 2.0 * pad,
                        hue.fill
                    );
                    title(out, &tooltip);
                    out.push_str("</rect>");
                    let value = with_unit(v, &spec.unit);
                    text(out, label_w + w + 6.0, value_y, value_attrs, None, &value);
                }
                // no value: no bar, a dash saying so
                None => text(out, label_w + 6.0, value_y, value_attrs, Some(&tooltip), "—"),
            }
        }
        out.push_str("</g>");
    }
    (group_h * spec.labels.len() as f64 + 4.0, desc.join("; "))
}

/// Appends one line per figure over the periods, on one scale, each in its colour and
/// dashes, broken where a period has no value, each point with a tooltip saying period,
/// figure and value. Returns the chart's height and the trend in words.
fn line_marks(out: &mut String, spec: &ChartSpec, name: &str) -> (f64, String) {
    // height, and the left, right, top and bottom margins
    const H: f64 = 220.0;
    const L: f64 = 56.0;
    const R: f64 = 16.0;
    const T: f64 = 12.0;
    const B: f64 = 28.0;
    const SMALL: &str = r#"class="fill-slate-500" font-size="11""#;
    let labels = &spec.labels;
    let n = labels.len();
    let max = top(spec);
    let x = |i: usize| L + (W - L - R) * i as f64 / (n.max(2) - 1) as f64;
    let y = |v: f64| T + (H - T - B) * (1.0 - v.max(0.0) / max);
    let top_value = with_unit(max, &spec.unit);
    let _ = write!(
        out,
        r#"<line x1="{L}" y1="{}" x2="{}" y2="{}" class="stroke-slate-300" stroke-width="1"></line><line x1="{L}" y1="{T}" x2="{}" y2="{T}" class="stroke-slate-100" stroke-width="1"></line>"#,
        H - B,
        W - R,
        H - B,
        W - R
    );
    let scale = format!(r#"text-anchor="end" {SMALL}"#);
    text(out, L - 6.0, T + 4.0, &scale, None, &top_value);
    text(out, L - 6.0, H - B + 4.0, &scale, None, "0");
    for (s, hue) in spec.series.iter().zip(&PALETTE) {
        out.push_str("<g>");
        // runs of consecutive periods with a value: one polyline each
        let mut run: Vec<String> = Vec::new();
        for i in 0..=n {
            match s.values.get(i).copied().flatten() {
                Some(v) => run.push(format!("{:.1},{:.1}", x(i), y(v))),
                None => {
                    if run.len() > 1 {
                        let _ = write!(
                            out,
                            r#"<polyline points="{}" fill="none" class="{}" stroke-width="2" stroke-linejoin="round"{}></polyline>"#,
                            run.join(" "),
                            hue.stroke,
                            dashes(hue)
                        );
                    }
                    run.clear();
                }
            }
        }
        for (i, v) in s.values.iter().enumerate() {
            if let Some(v) = *v {
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" class="{}">"#,
                    x(i),
                    y(v),
                    hue.fill
                );
                title(out, &tip(&labels[i], &s.title, Some(v), &spec.unit));
                out.push_str("</circle>");
            }
        }
        out.push_str("</g>");
    }
    // First, middle and last labels on the time axis.
    let mut ticks = vec![0, n / 2, n - 1];
    ticks.dedup();
    for i in ticks {
        let anchor = if i == 0 {
            "start"
        } else if i == n - 1 {
            "end"
        } else {
            "middle"
        };
        let attrs = format!(r#"text-anchor="{anchor}" {SMALL}"#);
        text(out, x(i), H - 8.0, &attrs, None, &labels[i]);
    }
    let desc = format!(
        "{} from {} to {}; highest {top_value}",
        match spec.series.as_slice() {
            [one] => one.title.as_str(),
            _ => name,
        },
        labels.first().map(String::as_str).unwrap_or(""),
        labels.last().map(String::as_str).unwrap_or(""),
    );
    (H, desc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ResultColumn;
    use serde_json::json;

    /// The first figure's (label, value) pairs, rows without a value left out.
    fn points(spec: &ChartSpec) -> Vec<(String, f64)> {
        let values = spec.series.first().map(|s| &s.values[..]).unwrap_or_default();
        spec.labels
            .iter()
            .zip(values)
            .filter_map(|(l, v)| Some((l.clone(), (*v)?)))
            .collect()
    }

    fn col(name: &str, kind: &str) -> ResultColumn {
        ResultColumn {
            name: name.into(),
            label: name.into(),
            kind: kind.into(),
            unit: None,
        }
    }

    #[test]
    fn counts_by_group_get_bars_and_dates_get_a_line() {
        let mut t = ResultTable {
            columns: vec![col("clinic", "text"), col("count", "integer")],
            rows: vec![vec![json!("A"), json!(3)], vec![json!("B"), json!(5)]],
            row_count: 2,
            truncated: false,
            ..Default::default()
        };
        let bars = chart_for(&t).unwrap();
        assert!(!bars.line);
        assert_eq!(points(&bars), vec![("A".into(), 3.0), ("B".into(), 5.0)]);
        t.columns[0] = col("month", "text");
        assert!(chart_for(&t).unwrap().line);
    }

    #[test]
    fn bars_grouped_by_two_columns_say_both() {
        let t = ResultTable {
            columns: vec![
                col("etiology", "text"),
                col("care setting", "text"),
                col("count", "integer"),
            ],
            rows: vec![
                vec![json!("VLU"), json!("Community"), json!(3)],
                vec![json!("VLU"), json!("Hospital"), json!(5)],
            ],
            row_count: 2,
            truncated: false,
            ..Default::default()
        };
        let bars = chart_for(&t).unwrap();
        assert_eq!(
            points(&bars),
            vec![("Community · VLU".into(), 3.0), ("Hospital · VLU".into(), 5.0)]
        );
        assert_eq!(bars.label_title, "care setting and etiology");
    }

    #[test]
    fn periods_beside_another_grouping_are_bars_of_both_never_one_line() {
        let row = |m: &str, c: &str, n: i64| vec![json!(m), json!(c), json!(n)];
        let mut t = ResultTable {
            columns: vec![
                col("month", "text"),
                col("clinic", "text"),
                col("count", "integer"),
            ],
            rows: vec![
                row("2026-01-01", "A", 3),
                row("2026-01-01", "B", 4),
                row("2026-02-01", "A", 5),
            ],
            row_count: 3,
            truncated: false,
            ..Default::default()
        };
        let chart = chart_for(&t).unwrap();
        assert!(!chart.line);
        assert_eq!(points(&chart)[0], ("A · 2026-01-01".into(), 3.0));
        // more groups than bars: the table alone
        t.rows = (0..30)
            .map(|i| row(&format!("2026-{:02}-01", i % 12 + 1), &format!("C{i}"), i))
            .collect();
        t.row_count = 30;
        assert!(chart_for(&t).is_none());
    }

    #[test]
    fn a_record_list_or_a_single_number_gets_no_chart() {
        let single = ResultTable {
            columns: vec![col("count", "integer")],
            rows: vec![vec![json!(3)]],
            row_count: 1,
            truncated: false,
            ..Default::default()
        };
        assert!(chart_for(&single).is_none());
        let records = ResultTable {
            columns: vec![
                col("patient", "text"),
                col("area", "real"),
                col("site", "text"),
                col("status", "text"),
            ],
            rows: vec![vec![json!("a"), json!(1), json!("s"), json!("o")]; 3],
            row_count: 3,
            truncated: false,
            ..Default::default()
        };
        assert!(chart_for(&records).is_none());
    }

    #[test]
    fn the_label_gutter_fits_the_longest_label_and_never_exceeds_its_cap() {
        let pts = |l: &str| vec![l.to_string(), "A".to_string()];
        let (w, _) = label_gutter(&pts("Lakeview"));
        assert!((70.0..=120.0).contains(&w), "{w}");
        let long = "Northside Community Wound & Lymphoedema Clinic";
        let (w, keep) = label_gutter(&pts(long));
        assert_eq!(w, 260.0);
        // What is kept fits the gutter (with the ellipsis) at about 7 px a character.
        assert!(clip(long, keep).chars().count() as f64 * 7.0 <= w - 8.0);
        assert!(clip(long, keep).ends_with('…'));
    }

    fn table(columns: Vec<ResultColumn>, rows: Vec<Vec<serde_json::Value>>) -> ResultTable {
        ResultTable {
            row_count: rows.len() as u32,
            columns,
            rows,
            truncated: false,
            ..Default::default()
        }
    }

    fn with_unit(mut c: ResultColumn, unit: &str) -> ResultColumn {
        c.unit = Some(unit.into());
        c
    }

    /// "one row per etiology with the number of open wounds and the number of healed
    /// wounds", as the server sends it.
    fn open_and_healed() -> ResultTable {
        table(
            vec![
                col("etiology", "text"),
                col("open wounds", "integer"),
                col("healed wounds", "integer"),
            ],
            vec![
                vec![json!("Venous leg ulcer"), json!(12), json!(30)],
                vec![json!("Diabetic foot ulcer"), json!(7), json!(0)],
                vec![json!("Burn"), json!(2), json!(5)],
            ],
        )
    }

    #[test]
    fn two_figures_by_group_are_two_series_with_their_own_values() {
        let spec = chart_for(&open_and_healed()).unwrap();
        assert!(!spec.line);
        assert_eq!(spec.labels, ["Venous leg ulcer", "Diabetic foot ulcer", "Burn"]);
        assert_eq!(spec.series.len(), 2, "{spec:?}");
        assert_eq!(spec.series[0].title, "Open wounds");
        assert_eq!(spec.series[0].values, [Some(12.0), Some(7.0), Some(2.0)]);
        assert_eq!(spec.series[1].title, "Healed wounds");
        assert_eq!(spec.series[1].heading, "Healed wounds");
        assert_eq!(spec.series[1].values, [Some(30.0), Some(0.0), Some(5.0)]);
        assert_eq!(spec.title(), "Open wounds and healed wounds by etiology");
        // three figures are listed as such
        let mut t = open_and_healed();
        t.columns.push(col("amputations", "integer"));
        for r in &mut t.rows {
            r.push(json!(1));
        }
        assert_eq!(
            chart_for(&t).unwrap().title(),
            "Open wounds, healed wounds and amputations by etiology"
        );
    }

    #[test]
    fn figures_in_different_units_draw_only_the_first_as_before() {
        let area = with_unit(col("mean area", "real"), "cm²");
        let days = with_unit(col("mean days open", "real"), "days");
        let both = table(
            vec![col("etiology", "text"), area.clone(), days],
            vec![
                vec![json!("VLU"), json!(14.5), json!(40)],
                vec![json!("DFU"), json!(3.25), json!(21)],
            ],
        );
        let first_alone = table(
            vec![col("etiology", "text"), area],
            vec![vec![json!("VLU"), json!(14.5)], vec![json!("DFU"), json!(3.25)]],
        );
        let spec = chart_for(&both).unwrap();
        assert_eq!(spec.series.len(), 1);
        assert_eq!(spec.unit.as_deref(), Some("cm²"));
        assert_eq!(Some(spec), chart_for(&first_alone));
        // one unit and none are different units too
        let mut t = open_and_healed();
        t.columns[2].unit = Some("wounds".into());
        assert_eq!(chart_for(&t).unwrap().series.len(), 1);
    }

    #[test]
    fn record_keys_are_never_a_figure() {
        let mut t = open_and_healed();
        t.columns.insert(2, col("clinics.id", "integer"));
        for (i, r) in t.rows.iter_mut().enumerate() {
            r.insert(2, json!(100 + i));
        }
        let spec = chart_for(&t).unwrap();
        let titles: Vec<&str> = spec.series.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(titles, ["Open wounds", "Healed wounds"]);
        assert_eq!(spec.series[1].values, [Some(30.0), Some(0.0), Some(5.0)]);
        // a key beside one figure: that figure alone, as before
        let rate = table(
            vec![
                col("clinics.name", "text"),
                col("rate", "real"),
                col("clinics.id", "integer"),
            ],
            vec![
                vec![json!("A"), json!(40.0), json!(1)],
                vec![json!("B"), json!(55.5), json!(2)],
            ],
        );
        let spec = chart_for(&rate).unwrap();
        assert_eq!(spec.series.len(), 1);
        assert_eq!(points(&spec), vec![("A".into(), 40.0), ("B".into(), 55.5)]);
    }

    #[test]
    fn a_one_figure_spec_is_as_it_was() {
        let t = table(
            vec![col("clinic", "text"), with_unit(col("mean area", "real"), "cm²")],
            vec![
                vec![json!("A"), json!(3.5)],
                vec![json!(null), json!(5)],
                // a row without its figure is left out
                vec![json!("C"), json!(null)],
            ],
        );
        assert_eq!(
            chart_for(&t),
            Some(ChartSpec {
                line: false,
                label_title: "Clinic".into(),
                labels: vec!["A".into(), "(none)".into()],
                series: vec![Series {
                    title: "Mean area".into(),
                    heading: "Mean area (cm²)".into(),
                    values: vec![Some(3.5), Some(5.0)],
                }],
                unit: Some("cm²".into()),
            })
        );
        assert_eq!(chart_for(&t).unwrap().title(), "Mean area by clinic");
    }

    /// The chart's markup as the server renders it (HTML needs the `ssr` feature).
    #[cfg(feature = "ssr")]
    fn rendered(t: &ResultTable) -> String {
        view! { <Chart spec=chart_for(t).unwrap() /> }.to_html()
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn a_one_figure_chart_draws_a_bar_and_its_value_per_group_and_no_legend() {
        // as before charts drew several figures, but for the bars' tooltips and
        // coordinates written to a tenth of a pixel throughout
        let t = table(
            vec![
                col("etiology", "text"),
                with_unit(col("mean area", "real"), "cm²"),
            ],
            vec![vec![json!("VLU"), json!(3.25)], vec![json!("DFU"), json!(12.5)]],
        );
        assert_eq!(
            rendered(&t),
            concat!(
                r#"<figure data-testid="chart" class="rounded-lg border border-slate-200 bg-white p-3">"#,
                r#"<figcaption class="mb-2 text-xs font-medium text-slate-600">Mean area by etiology</figcaption>"#,
                r#"<svg viewBox="0 0 640 56" class="block h-auto w-full max-w-3xl" role="img" aria-label="VLU: 3.25 cm²; DFU: 12.5 cm²" preserveAspectRatio="xMinYMin meet">"#,
                r#"<g><text x="72.0" y="19.0" text-anchor="end" class="fill-slate-700" font-size="12"><title>VLU</title>VLU</text>"#,
                r#"<rect x="80.0" y="6.0" width="122.2" height="18.0" rx="3" class="fill-teal-600"><title>VLU — Mean area: 3.25 cm²</title></rect>"#,
                r#"<text x="208.2" y="19.0" class="fill-slate-600" font-size="12">3.25 cm²</text></g>"#,
                r#"<g><text x="72.0" y="45.0" text-anchor="end" class="fill-slate-700" font-size="12"><title>DFU</title>DFU</text>"#,
                r#"<rect x="80.0" y="32.0" width="470.0" height="18.0" rx="3" class="fill-teal-600"><title>DFU — Mean area: 12.5 cm²</title></rect>"#,
                r#"<text x="556.0" y="45.0" class="fill-slate-600" font-size="12">12.5 cm²</text></g>"#,
                "</svg></figure>"
            )
        );
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn the_warehouse_s_words_are_escaped_in_the_markup() {
        let t = table(
            vec![col("clinic", "text"), col("count", "integer")],
            vec![
                vec![json!(r#"<img src=x onerror="alert(1)"> & Co"#), json!(3)],
                vec![json!("B"), json!(5)],
            ],
        );
        let html = rendered(&t);
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains(r#"aria-label="&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; Co: 3; B: 5""#),
            "{html}"
        );
        assert!(
            html.contains(r#"<title>&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; Co</title>"#),
            "{html}"
        );
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn a_line_of_one_figure_and_lines_of_two_broken_where_a_month_has_no_value() {
        let month = |m: u32, new: i64, healed: Option<i64>| {
            vec![json!(format!("2026-0{m}-01")), json!(new), json!(healed)]
        };
        let t = table(
            vec![
                col("month", "text"),
                col("new wounds", "integer"),
                col("healed wounds", "integer"),
            ],
            vec![
                month(1, 3, Some(1)),
                month(2, 5, Some(2)),
                month(3, 4, None),
                month(4, 6, Some(6)),
            ],
        );
        let two = rendered(&t);
        assert!(
            two.contains(r#"role="img" aria-label="New wounds and healed wounds by month">"#),
            "{two}"
        );
        assert!(
            two.contains(
                "<desc>New wounds and healed wounds by month from 2026-01-01 to 2026-04-01; highest 6</desc>"
            ),
            "{two}"
        );
        assert_eq!(
            two.matches("data-testid=\"chart-legend-item\"").count(),
            2,
            "{two}"
        );
        // the legend's swatches: teal solid, amber dashed
        assert_eq!(
            two.matches(r#"class="stroke-teal-600" stroke-width="2">"#)
                .count(),
            1,
            "{two}"
        );
        assert_eq!(
            two.matches(r#"class="stroke-amber-700" stroke-width="2" stroke-dasharray="6 3">"#)
                .count(),
            1,
            "{two}"
        );
        // new wounds: one line through four months; healed wounds: January to February,
        // April a point alone
        assert!(
            two.contains(r#"<polyline points="56.0,102.0 245.3,42.0 434.7,72.0 624.0,12.0" fill="none" class="stroke-teal-600" stroke-width="2" stroke-linejoin="round">"#),
            "{two}"
        );
        assert!(
            two.contains(r#"<polyline points="56.0,162.0 245.3,132.0" fill="none" class="stroke-amber-700" stroke-width="2" stroke-linejoin="round" stroke-dasharray="6 3">"#),
            "{two}"
        );
        assert_eq!(two.matches("<polyline ").count(), 2, "{two}");
        assert_eq!(two.matches(r#"r="3" class="fill-teal-600""#).count(), 4, "{two}");
        assert_eq!(two.matches(r#"r="3" class="fill-amber-700""#).count(), 3, "{two}");
        assert!(
            two.contains("<title>2026-04-01 — Healed wounds: 6</title></circle>"),
            "{two}"
        );
        // one figure: one line, no legend, the trend as its name (as before)
        let mut t = t;
        t.columns.pop();
        for r in &mut t.rows {
            r.pop();
        }
        let one = rendered(&t);
        assert!(
            one.contains(r#"role="img" aria-label="New wounds from 2026-01-01 to 2026-04-01; highest 6">"#),
            "{one}"
        );
        assert!(!one.contains("chart-legend") && !one.contains("<desc>"), "{one}");
        assert_eq!(one.matches("<polyline ").count(), 1, "{one}");
        assert_eq!(one.matches("<circle ").count(), 4, "{one}");
        assert!(
            one.contains(r#"text-anchor="end" class="fill-slate-500" font-size="11">2026-04-01</text>"#),
            "{one}"
        );
    }

    #[test]
    fn grouped_bars_count_every_figure_against_the_cap() {
        let rows = |n: usize| {
            (0..n)
                .map(|i| vec![json!(format!("G{i}")), json!(i), json!(2 * i)])
                .collect::<Vec<_>>()
        };
        let mut t = open_and_healed();
        t.rows = rows(10);
        assert_eq!(chart_for(&t).unwrap().series.len(), 2, "10 groups × 2 = 20 bars");
        t.rows = rows(11);
        assert_eq!(
            chart_for(&t),
            None,
            "22 bars: the table alone, not half the figures"
        );
        // one figure: 20 groups, as before
        t.columns.pop();
        t.rows = (0..20).map(|i| vec![json!(format!("G{i}")), json!(i)]).collect();
        assert_eq!(chart_for(&t).unwrap().labels.len(), 20);
    }

    #[test]
    fn two_figures_over_months_are_two_lines_and_beside_a_second_grouping_grouped_bars() {
        let t = table(
            vec![
                col("month", "text"),
                col("new wounds", "integer"),
                col("healed wounds", "integer"),
            ],
            vec![
                vec![json!("2026-01-01"), json!(3), json!(1)],
                vec![json!("2026-02-01"), json!(5), json!(null)],
                vec![json!("2026-03-01"), json!(4), json!(6)],
            ],
        );
        let spec = chart_for(&t).unwrap();
        assert!(spec.line);
        assert_eq!(spec.series.len(), 2);
        assert_eq!(spec.series[1].values, [Some(1.0), None, Some(6.0)]);
        assert_eq!(spec.title(), "New wounds and healed wounds by month");
        // etiology within care setting, two figures: four columns, still a grouped result
        let t = table(
            vec![
                col("etiology", "text"),
                col("care setting", "text"),
                col("open wounds", "integer"),
                col("healed wounds", "integer"),
            ],
            vec![
                vec![json!("VLU"), json!("Community"), json!(3), json!(4)],
                vec![json!("VLU"), json!("Hospital"), json!(5), json!(6)],
            ],
        );
        let spec = chart_for(&t).unwrap();
        assert!(!spec.line);
        assert_eq!(spec.labels, ["Community · VLU", "Hospital · VLU"]);
        assert_eq!(spec.series[1].values, [Some(4.0), Some(6.0)]);
    }

    #[test]
    fn a_record_list_with_two_figures_is_not_read_as_groups() {
        // the same label on two rows: records, not groups; the first figure as before
        let t = table(
            vec![
                col("etiology", "text"),
                col("length", "real"),
                col("width", "real"),
            ],
            vec![
                vec![json!("VLU"), json!(3), json!(2)],
                vec![json!("VLU"), json!(5), json!(1)],
            ],
        );
        assert_eq!(chart_for(&t).unwrap().series.len(), 1);
        // another column besides: a record list, no chart (as before)
        let t = table(
            vec![
                col("patient", "text"),
                col("length", "real"),
                col("width", "real"),
                col("status", "boolean"),
            ],
            vec![
                vec![json!("a"), json!(3), json!(2), json!(true)],
                vec![json!("b"), json!(5), json!(1), json!(false)],
            ],
        );
        assert_eq!(chart_for(&t), None);
    }

    // rendered as the server renders it (HTML needs the `ssr` feature)
    #[cfg(feature = "ssr")]
    #[test]
    fn a_chart_of_two_figures_names_both_draws_both_and_has_a_legend() {
        let html = rendered(&open_and_healed());
        assert!(
            html.contains(r#"role="img" aria-label="Open wounds and healed wounds by etiology""#),
            "{html}"
        );
        assert_eq!(
            html.matches("<rect ").count(),
            6,
            "two bars for each of 3 groups: {html}"
        );
        assert_eq!(html.matches("fill-teal-600").count(), 3, "{html}");
        assert_eq!(html.matches("fill-amber-700").count(), 3, "{html}");
        assert!(
            html.contains("<title>Venous leg ulcer — Healed wounds: 30</title>"),
            "{html}"
        );
        assert!(
            html.contains("Venous leg ulcer: open wounds 12, healed wounds 30"),
            "{html}"
        );
        let legend = &html[html.find(r#"data-testid="chart-legend""#).unwrap()..];
        let legend = &legend[..legend.find("</ul>").unwrap()];
        assert!(
            legend.contains("Open wounds") && legend.contains("Healed wounds"),
            "{legend}"
        );
        assert!(
            legend.contains("bg-teal-600") && legend.contains("bg-amber-700"),
            "{legend}"
        );
        // a group without one of its figures: no bar for it, a dash saying so
        let mut t = open_and_healed();
        t.rows[2][2] = json!(null);
        let gap = rendered(&t);
        assert_eq!(gap.matches("<rect ").count(), 5, "{gap}");
        assert!(
            gap.contains("<title>Burn — Healed wounds: no value</title>—</text></g>"),
            "{gap}"
        );
        assert!(
            gap.contains("Burn: open wounds 2, healed wounds no value</desc>"),
            "{gap}"
        );
    }
}
