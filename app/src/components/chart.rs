//! A chart for an answer where one fits: horizontal bars for a count or aggregate by
//! group, a line for a trend over time. Plain SVG from the view tree, so it renders on
//! the server (visible before hydration, printable) and needs no chart library.
//!
//! Chooses nothing clever: one label column and the first numeric column.

use super::results::{format_number, is_numeric};
use crate::protocol::ResultTable;
use leptos::prelude::*;

/// What the chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartSpec {
    /// Bars (`false`) or a line over time (`true`).
    pub line: bool,
    /// The label column's header.
    pub label_title: String,
    /// The value column's header.
    pub value_title: String,
    /// Unit of the values.
    pub unit: Option<String>,
    /// (label, value) in table order.
    pub points: Vec<(String, f64)>,
}

/// Most bars drawn; a longer grouped result is better read as a table.
const MAX_BARS: usize = 20;

/// The chart that fits `t`, if any: a label column (text or date) and a numeric column,
/// 2–20 groups for bars or 2+ dates for a line. Row lists (one row per record) get none.
pub fn chart_for(t: &ResultTable) -> Option<ChartSpec> {
    let label = t
        .columns
        .iter()
        .position(|c| matches!(c.kind.as_str(), "text" | "date"))?;
    let value = t.columns.iter().position(is_numeric)?;
    // A table with many columns is a record list, not a grouped result.
    if t.columns.len() > 3 {
        return None;
    }
    let lc = &t.columns[label];
    let vc = &t.columns[value];
    let line = lc.kind == "date"
        || ["month", "week", "year", "day", "quarter"]
            .iter()
            .any(|k| lc.name.contains(k));
    // a second text column groups the bars too ("etiology" within "care setting"): each
    // bar says both, or the same label would stand for different groups
    // (also beside a period: "per month by clinic" is bars of both, or none when too many,
    // never one line through every clinic's months)
    let second = (label + 1..t.columns.len()).find(|&i| i != value && t.columns[i].kind == "text");
    let line = line && second.is_none();
    let text = |r: &Vec<serde_json::Value>, i: usize| -> Option<String> {
        Some(match r.get(i)? {
            serde_json::Value::Null => "(none)".to_string(),
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let points: Vec<(String, f64)> = t
        .rows
        .iter()
        .filter_map(|r| {
            let l = match second {
                Some(s) => format!("{} · {}", text(r, s)?, text(r, label)?),
                None => text(r, label)?,
            };
            Some((l, r.get(value)?.as_f64()?))
        })
        .collect();
    let label_title = match second {
        Some(s) => format!(
            "{} and {}",
            super::results::label(&t.columns[s]).to_lowercase(),
            super::results::label(lc).to_lowercase()
        ),
        None => super::results::label(lc),
    };
    let fits = if line {
        points.len() >= 2
    } else {
        (2..=MAX_BARS).contains(&points.len())
    };
    fits.then(|| ChartSpec {
        line,
        label_title,
        value_title: super::results::label(vc),
        unit: vc.unit.clone().filter(|u| !u.is_empty()),
        points,
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
fn label_gutter(points: &[(String, f64)]) -> (f64, usize) {
    const PX_PER_CHAR: f64 = 7.0;
    const MAX_W: f64 = 260.0;
    let longest = points.iter().map(|p| p.0.chars().count()).max().unwrap_or(0);
    let w = (longest as f64 * PX_PER_CHAR + 14.0).clamp(80.0, MAX_W);
    (w, ((MAX_W - 14.0) / PX_PER_CHAR) as usize)
}

/// The SVG chart for `spec`.
#[component]
pub fn Chart(spec: ChartSpec) -> impl IntoView {
    let title = format!("{} by {}", spec.value_title, spec.label_title.to_lowercase());
    let body = if spec.line {
        line_chart(&spec).into_any()
    } else {
        bar_chart(&spec).into_any()
    };
    view! {
        <figure class="rounded-lg border border-slate-200 bg-white p-3" data-testid="chart">
            <figcaption class="mb-2 text-xs font-medium text-slate-600">{title}</figcaption>
            {body}
        </figure>
    }
}

fn bar_chart(spec: &ChartSpec) -> impl IntoView + use<> {
    const W: f64 = 640.0;
    const ROW: f64 = 26.0;
    const VALUE_W: f64 = 90.0;
    // The label gutter fits the longest label (about 7 px a character at 12 px), within
    // 80–260 px; longer labels are shortened with "…" and keep the full text as a tooltip.
    let (label_w, label_chars) = label_gutter(&spec.points);
    let max = spec
        .points
        .iter()
        .map(|p| p.1)
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let h = ROW * spec.points.len() as f64 + 4.0;
    let span = W - label_w - VALUE_W;
    let desc = spec
        .points
        .iter()
        .map(|(l, v)| format!("{l}: {}", with_unit(*v, &spec.unit)))
        .collect::<Vec<_>>()
        .join("; ");
    let bars = spec
        .points
        .iter()
        .enumerate()
        .map(|(i, (l, v))| {
            let y = 2.0 + i as f64 * ROW;
            let w = (v.max(0.0) / max * span).max(1.0);
            view! {
                <g>
                    <text x={(label_w - 8.0).to_string()} y={format!("{:.1}", y + ROW / 2.0 + 4.0)} text-anchor="end" class="fill-slate-700" font-size="12">
                        <title>{l.clone()}</title>
                        {clip(l, label_chars)}
                    </text>
                    <rect x={label_w.to_string()} y={format!("{:.1}", y + 4.0)} width={format!("{w:.1}")} height={(ROW - 8.0).to_string()} rx="3" class="fill-teal-600"></rect>
                    <text x={format!("{:.1}", label_w + w + 6.0)} y={format!("{:.1}", y + ROW / 2.0 + 4.0)} class="fill-slate-600" font-size="12">
                        {with_unit(*v, &spec.unit)}
                    </text>
                </g>
            }
        })
        .collect_view();
    view! {
        <svg viewBox={format!("0 0 {W} {h}")} class="block h-auto w-full max-w-3xl" role="img" aria-label={desc} preserveAspectRatio="xMinYMin meet">
            {bars}
        </svg>
    }
}

fn line_chart(spec: &ChartSpec) -> impl IntoView + use<> {
    const W: f64 = 640.0;
    const H: f64 = 220.0;
    const L: f64 = 56.0;
    const R: f64 = 16.0;
    const T: f64 = 12.0;
    const B: f64 = 28.0;
    let n = spec.points.len();
    let max = spec
        .points
        .iter()
        .map(|p| p.1)
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let x = |i: usize| L + (W - L - R) * i as f64 / (n.max(2) - 1) as f64;
    let y = |v: f64| T + (H - T - B) * (1.0 - v.max(0.0) / max);
    let path = spec
        .points
        .iter()
        .enumerate()
        .map(|(i, (_, v))| format!("{:.1},{:.1}", x(i), y(*v)))
        .collect::<Vec<_>>()
        .join(" ");
    let desc = format!(
        "{} from {} to {}; highest {}",
        spec.value_title,
        spec.points.first().map(|p| p.0.as_str()).unwrap_or(""),
        spec.points.last().map(|p| p.0.as_str()).unwrap_or(""),
        with_unit(max, &spec.unit)
    );
    // First, middle and last labels on the time axis.
    let mut ticks = vec![0, n / 2, n - 1];
    ticks.dedup();
    let x_labels = ticks
        .into_iter()
        .map(|i| {
            let anchor = if i == 0 { "start" } else if i == n - 1 { "end" } else { "middle" };
            view! {
                <text x={format!("{:.1}", x(i))} y={(H - 8.0).to_string()} text-anchor={anchor} class="fill-slate-500" font-size="11">
                    {spec.points[i].0.clone()}
                </text>
            }
        })
        .collect_view();
    let dots = spec
        .points
        .iter()
        .enumerate()
        .map(|(i, (l, v))| {
            view! {
                <circle cx={format!("{:.1}", x(i))} cy={format!("{:.1}", y(*v))} r="3" class="fill-teal-700">
                    <title>{format!("{l}: {}", with_unit(*v, &spec.unit))}</title>
                </circle>
            }
        })
        .collect_view();
    view! {
        <svg viewBox={format!("0 0 {W} {H}")} class="block h-auto w-full max-w-3xl" role="img" aria-label={desc}>
            <line x1={L.to_string()} y1={(H - B).to_string()} x2={(W - R).to_string()} y2={(H - B).to_string()} class="stroke-slate-300" stroke-width="1"></line>
            <line x1={L.to_string()} y1={T.to_string()} x2={(W - R).to_string()} y2={T.to_string()} class="stroke-slate-100" stroke-width="1"></line>
            <text x={(L - 6.0).to_string()} y={(T + 4.0).to_string()} text-anchor="end" class="fill-slate-500" font-size="11">{with_unit(max, &spec.unit)}</text>
            <text x={(L - 6.0).to_string()} y={(H - B + 4.0).to_string()} text-anchor="end" class="fill-slate-500" font-size="11">"0"</text>
            <polyline points={path} fill="none" class="stroke-teal-600" stroke-width="2" stroke-linejoin="round"></polyline>
            {dots}
            {x_labels}
        </svg>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ResultColumn;
    use serde_json::json;

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
        assert_eq!(bars.points, vec![("A".into(), 3.0), ("B".into(), 5.0)]);
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
            bars.points,
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
        assert_eq!(chart.points[0], ("A · 2026-01-01".into(), 3.0));
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
        let pts = |l: &str| vec![(l.to_string(), 1.0), ("A".to_string(), 2.0)];
        let (w, _) = label_gutter(&pts("Lakeview"));
        assert!((70.0..=120.0).contains(&w), "{w}");
        let long = "Northside Community Wound & Lymphoedema Clinic";
        let (w, keep) = label_gutter(&pts(long));
        assert_eq!(w, 260.0);
        // What is kept fits the gutter (with the ellipsis) at about 7 px a character.
        assert!(clip(long, keep).chars().count() as f64 * 7.0 <= w - 8.0);
        assert!(clip(long, keep).ends_with('…'));
    }
}
