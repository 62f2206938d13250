//! The rows of an answer: a paged table with a sticky header, numbers right-aligned
//! with their units, and a CSV download built in the browser (no server round trip).
//!
//! Pure presentation: formats what the server sent, never recomputes it.

use crate::protocol::{ResultColumn, ResultTable};
use leptos::prelude::*;
use serde_json::Value;

/// Rows per page of the results table.
pub const PAGE_SIZE: usize = 50;

/// True for columns whose cells are numbers (right-aligned, charted).
pub fn is_numeric(c: &ResultColumn) -> bool {
    matches!(c.kind.as_str(), "integer" | "real") && !is_id(c)
}

/// True for identifier columns (shown as-is, never grouped or charted).
pub fn is_id(c: &ResultColumn) -> bool {
    c.label == "id" || c.name == "id" || c.name.ends_with(".id") || c.name.ends_with("_id")
}

/// The column's label as a heading: capitalised, and "name"/"id" said of what
/// ("clinics.name" → "Clinic", "wounds.id" → "Wound ID").
pub fn label(c: &ResultColumn) -> String {
    let entity = c.name.split_once('.').map(|(t, _)| {
        let t = t.strip_suffix('s').unwrap_or(t).replace('_', " ");
        let mut ch = t.chars();
        ch.next()
            .map(|f| f.to_uppercase().chain(ch).collect::<String>())
            .unwrap_or_default()
    });
    match (c.label.as_str(), entity) {
        ("name" | "full name", Some(e)) => e,
        ("id", Some(e)) => format!("{e} ID"),
        _ => {
            let mut ch = c.label.chars();
            ch.next()
                .map(|f| f.to_uppercase().chain(ch).collect())
                .unwrap_or_default()
        }
    }
}

/// A column header with its unit ("Area (cm²)"), said once: a label that already ends
/// with it ("Maximum pain score (points)") is kept as it is.
pub fn header(c: &ResultColumn) -> String {
    let l = label(c);
    match &c.unit {
        Some(u) if !u.is_empty() && !l.ends_with(&format!("({u})")) => format!("{l} ({u})"),
        _ => l,
    }
}

/// Groups thousands: 12345 → "12,345".
pub fn group_thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// A number as a clinician reads it: integers grouped, reals to one decimal place
/// (two below 10), no trailing ".0".
pub fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return group_thousands(v as i64);
    }
    let s = if v.abs() < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    };
    let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    match s.split_once('.') {
        Some((int, frac)) => match int.parse::<i64>() {
            Ok(i) if int != "-0" => format!("{}.{frac}", group_thousands(i)),
            _ => s.clone(),
        },
        None => s,
    }
}

/// One cell as text, with the column's unit after numbers.
pub fn cell_text(c: &ResultColumn, v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::Bool(b) => if *b { "Yes" } else { "No" }.into(),
        Value::Number(n) if is_id(c) => n.to_string(),
        Value::Number(n) => {
            let s = n.as_f64().map(format_number).unwrap_or_else(|| n.to_string());
            match &c.unit {
                Some(u) if !u.is_empty() => format!("{s} {u}"),
                _ => s,
            }
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The table as RFC 4180 CSV (header row with units, raw values). A text cell
/// that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`,
/// a tab or a carriage return) is prefixed with `'`, so opening the file never
/// executes data (OWASP's CSV-injection rule); numbers stay numbers.
pub fn to_csv(t: &ResultTable) -> String {
    fn text(s: &str) -> String {
        if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
            field(&format!("'{s}"))
        } else {
            field(s)
        }
    }
    fn field(s: &str) -> String {
        let s = s.to_string();
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s
        }
    }
    let mut out = t
        .columns
        .iter()
        .map(|c| text(&header(c)))
        .collect::<Vec<_>>()
        .join(",");
    out.push_str("\r\n");
    for row in &t.rows {
        let line = row
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                Value::String(s) => text(s),
                other => field(&other.to_string()),
            })
            .collect::<Vec<_>>()
            .join(",");
        out.push_str(&line);
        out.push_str("\r\n");
    }
    out
}

/// Percent-encodes text for a `data:` URL.
pub fn data_url(mime: &str, text: &str) -> String {
    let mut out = format!("data:{mime};charset=utf-8,");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~ ,:;()".contains(&b) {
            out.push(if b == b' ' { '+' } else { b as char });
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    // '+' is not a space in data URLs: encode spaces as %20 instead.
    out.replace('+', "%20")
}

/// The paged results table with its CSV download.
#[component]
pub fn ResultsTable(
    /// The rows to show.
    table: ResultTable,
    /// File name for the CSV download (without extension).
    #[prop(into)]
    file_name: String,
) -> impl IntoView {
    let table = StoredValue::new(table);
    let total = table.with_value(|t| t.rows.len());
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let (page, set_page) = signal(0usize);
    let download = NodeRef::<leptos::html::A>::new();
    let truncated = table.with_value(|t| t.truncated);

    let head = table.with_value(|t| {
        t.columns
            .iter()
            .map(|c| {
                let align = if is_numeric(c) { "text-right" } else { "text-left" };
                view! {
                    <th scope="col" class=format!("sticky top-0 z-10 whitespace-nowrap border-b border-slate-200 bg-slate-50 px-3 py-2 text-xs font-semibold uppercase tracking-wide text-slate-600 {align}")>
                        {header(c)}
                    </th>
                }
            })
            .collect_view()
    });

    let body = move || {
        let p = page.get();
        table.with_value(|t| {
            t.rows
                .iter()
                .skip(p * PAGE_SIZE)
                .take(PAGE_SIZE)
                .map(|row| {
                    let cells = t
                        .columns
                        .iter()
                        .zip(row.iter())
                        .map(|(c, v)| {
                            let align = if is_numeric(c) {
                                "text-right tabular-nums"
                            } else {
                                "text-left"
                            };
                            view! {
                                <td class=format!("whitespace-nowrap px-3 py-1.5 text-slate-800 {align}")>{cell_text(c, v)}</td>
                            }
                        })
                        .collect_view();
                    view! { <tr class="border-b border-slate-100 last:border-0 even:bg-slate-50/50">{cells}</tr> }
                })
                .collect_view()
        })
    };

    let range = move || {
        if total == 0 {
            return "No rows".to_string();
        }
        let p = page.get();
        let from = p * PAGE_SIZE + 1;
        let to = ((p + 1) * PAGE_SIZE).min(total);
        if pages > 1 {
            format!("Rows {from}–{to} of {}", group_thousands(total as i64))
        } else if total == 1 {
            "1 row".into()
        } else {
            format!("{} rows", group_thousands(total as i64))
        }
    };

    let file = format!("{}.csv", file_name);
    view! {
        <div class="flex flex-col gap-2" data-testid="results">
            <div
                class="max-h-[26rem] overflow-auto rounded-lg border border-slate-200 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600"
                tabindex="0"
                role="region"
                aria-label="Result rows"
            >
                <table class="min-w-full border-collapse text-sm">
                    <thead>
                        <tr>{head}</tr>
                    </thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            <div class="flex flex-wrap items-center justify-between gap-2 text-xs text-slate-600">
                <span data-testid="row-range" aria-live="polite">
                    {range}
                    {truncated.then_some(" · more rows matched than the row limit; narrow the question to see them all")}
                </span>
                <div class="flex items-center gap-2">
                    <Show when=move || { pages > 1 }>
                        <nav aria-label="Result pages" class="flex items-center gap-1">
                            <button
                                type="button"
                                class="rounded-md border border-slate-300 bg-white px-2.5 py-1 font-medium text-slate-700 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 disabled:cursor-not-allowed disabled:opacity-50"
                                disabled=move || page.get() == 0
                                on:click=move |_| set_page.update(|p| *p = p.saturating_sub(1))
                            >
                                "Previous"
                            </button>
                            <span class="px-1 tabular-nums">{move || format!("Page {} of {pages}", page.get() + 1)}</span>
                            <button
                                type="button"
                                class="rounded-md border border-slate-300 bg-white px-2.5 py-1 font-medium text-slate-700 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 disabled:cursor-not-allowed disabled:opacity-50"
                                disabled=move || { page.get() + 1 >= pages }
                                on:click=move |_| set_page.update(|p| *p = (*p + 1).min(pages - 1))
                            >
                                "Next"
                            </button>
                        </nav>
                    </Show>
                    <a
                        node_ref=download
                        href="#"
                        download={file}
                        class="rounded-md border border-slate-300 bg-white px-2.5 py-1 font-medium text-slate-700 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600"
                        on:click=move |_| {
                            // Built on demand so large tables do not double the page's HTML.
                            if let Some(a) = download.get() {
                                a.set_href(&table.with_value(|t| data_url("text/csv", &to_csv(t))));
                            }
                        }
                    >
                        "Download CSV"
                    </a>
                </div>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(kind: &str, unit: Option<&str>) -> ResultColumn {
        ResultColumn {
            name: "x".into(),
            label: "X".into(),
            kind: kind.into(),
            unit: unit.map(Into::into),
        }
    }

    #[test]
    fn a_unit_the_label_already_says_is_not_said_twice() {
        let mut c = col("real", Some("points"));
        c.label = "Maximum pain score (points)".into();
        assert_eq!(header(&c), "Maximum pain score (points)");
        c.label = "Pain score".into();
        assert_eq!(header(&c), "Pain score (points)");
    }

    #[test]
    fn numbers_read_like_a_clinician_writes_them() {
        assert_eq!(format_number(12345.0), "12,345");
        assert_eq!(format_number(12.04), "12");
        assert_eq!(format_number(3.456), "3.46");
        assert_eq!(format_number(1234.56), "1,234.6");
        assert_eq!(format_number(-2.5), "-2.5");
        assert_eq!(
            cell_text(&col("real", Some("cm²")), &serde_json::json!(14.26)),
            "14.3 cm²"
        );
        assert_eq!(cell_text(&col("text", None), &Value::Null), "—");
    }

    #[test]
    fn csv_quotes_what_needs_quoting_and_keeps_units_in_the_header() {
        let t = ResultTable {
            columns: vec![col("text", None), col("real", Some("cm²"))],
            rows: vec![vec![serde_json::json!("a, \"b\""), serde_json::json!(1.5)]],
            row_count: 1,
            truncated: false,
            ..Default::default()
        };
        assert_eq!(to_csv(&t), "X,X (cm²)\r\n\"a, \"\"b\"\"\",1.5\r\n");
        assert!(data_url("text/csv", "a b\n").ends_with(",a%20b%0A"));
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_run_are_neutralised_and_numbers_are_not() {
        let t = ResultTable {
            columns: vec![col("text", None), col("real", None)],
            rows: vec![
                vec![
                    serde_json::json!("=HYPERLINK(\"http://x\")"),
                    serde_json::json!(-1.5),
                ],
                vec![serde_json::json!("+1"), serde_json::json!(2)],
                vec![serde_json::json!("-2"), serde_json::json!(3)],
                vec![serde_json::json!("@SUM(A1)"), serde_json::json!(4)],
                vec![serde_json::json!("\tx"), serde_json::json!(5)],
                vec![serde_json::json!("plain"), serde_json::json!(6)],
            ],
            row_count: 6,
            truncated: false,
            ..Default::default()
        };
        let csv = to_csv(&t);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[1], "\"'=HYPERLINK(\"\"http://x\"\")\",-1.5");
        assert_eq!(lines[2], "'+1,2");
        assert_eq!(lines[3], "'-2,3");
        assert_eq!(lines[4], "'@SUM(A1),4");
        assert_eq!(lines[5], "'\tx,5");
        assert_eq!(lines[6], "plain,6");
    }
}
