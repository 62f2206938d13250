//! The administrators' Analytics figures as JSON and as CSV (issue 15, point 8): the
//! same report the Analytics page shows, over the last `days` days or an explicit
//! `from`–`until` range. What is not a date or a whole number in range is a 400
//! (`bad_parameter`); real dates that make no range to show are a 422 (`bad_range`);
//! each message says what to change, never a fault. Handlers parse, call the backend, and map; the CSV
//! text is made by [`csv`], pure.

use crate::http::api::{ApiError, openapi};
use crate::state::AppState;
use app::protocol::{Analytics, AnalyticsDay, AnalyticsQuery, ErrorCode};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;

/// The query string as a range request: `days`, `from`, `until` (other keys are ignored).
fn range(query: Result<Query<HashMap<String, String>>, QueryRejection>) -> Result<AnalyticsQuery, ApiError> {
    let bad = |m: &str| ApiError::new(ErrorCode::BadParameter, m);
    let Ok(Query(q)) = query else {
        return Err(bad(
            "The query string could not be read; use days=N or from=YYYY-MM-DD&until=YYYY-MM-DD.",
        ));
    };
    let days = match q.get("days").map(|v| v.trim()) {
        None => None,
        Some(v) => Some(
            v.parse::<u32>()
                .ok()
                .filter(|d| (1..=crate::store::ANALYTICS_MAX_DAYS as u32).contains(d))
                .ok_or_else(|| bad("days must be a whole number from 1 to 366."))?,
        ),
    };
    Ok(AnalyticsQuery {
        days,
        from: q.get("from").cloned(),
        until: q.get("until").cloned(),
    })
}

/// Everyone's figures over a range of days.
#[utoipa::path(
    get,
    path = "/api/v1/admin/analytics",
    operation_id = "analytics",
    summary = "Clarification, answer and feedback figures per day and in total (administrators)",
    params(
        ("days" = Option<u32>, Query, minimum = 1, maximum = 366, description = "The last N days, today included (default 30)"),
        ("from" = Option<String>, Query, format = Date, description = "First day (YYYY-MM-DD, UTC); not with `days`"),
        ("until" = Option<String>, Query, format = Date, description = "Last day, included (YYYY-MM-DD, UTC; default today); needs `from`; at most 366 days after it")
    ),
    responses(
        (status = 200, description = "The figures", body = Analytics),
        (status = 400, description = "`bad_parameter`: `from` or `until` is not a date written YYYY-MM-DD, or `days` is not a whole number from 1 to 366", body = app::protocol::ApiError),
        (status = 422, description = "`bad_range`: the dates make no range to show: `from` after `until`, more than 366 days, `until` without `from`, `days` with `from`, or a year outside 1970–9998", body = app::protocol::ApiError),
        openapi::Signed,
        openapi::AdminOnly
    )
)]
#[tracing::instrument(skip_all)]
pub async fn report(
    State(state): State<AppState>,
    crate::auth::AdminUser(user): crate::auth::AdminUser,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = range(query)?;
    Ok(Json(state.backend.analytics(&user, q).await?).into_response())
}

/// The per-day figures and the totals as CSV.
#[utoipa::path(
    get,
    path = "/api/v1/admin/analytics.csv",
    operation_id = "analytics_csv",
    summary = "The per-day figures and the totals as CSV, with a header row (administrators)",
    params(
        ("days" = Option<u32>, Query, minimum = 1, maximum = 366, description = "The last N days, today included (default 30)"),
        ("from" = Option<String>, Query, format = Date, description = "First day (YYYY-MM-DD, UTC); not with `days`"),
        ("until" = Option<String>, Query, format = Date, description = "Last day, included (YYYY-MM-DD, UTC; default today); needs `from`; at most 366 days after it")
    ),
    responses(
        (status = 200, description = "One row per day, oldest first, then a `total` row (RFC 4180: comma-separated, CRLF line ends, quoted where needed)", content_type = "text/csv", body = String),
        (status = 400, description = "`bad_parameter`: a date or `days` that breaks the schema", body = app::protocol::ApiError),
        (status = 422, description = "`bad_range`: dates that make no range to show", body = app::protocol::ApiError),
        openapi::Signed,
        openapi::AdminOnly
    )
)]
#[tracing::instrument(skip_all)]
pub async fn report_csv(
    State(state): State<AppState>,
    crate::auth::AdminUser(user): crate::auth::AdminUser,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = range(query)?;
    let a = state.backend.analytics(&user, q).await?;
    let name = format!(
        "attachment; filename=\"clarion-analytics-{}-to-{}.csv\"",
        a.since, a.until
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (header::CONTENT_DISPOSITION, name),
        ],
        csv(&a),
    )
        .into_response())
}

/// The columns of the CSV, in order.
pub const CSV_HEADER: &[&str] = &[
    "date",
    "questions",
    "clarified",
    "clarification_rate",
    "answers",
    "auto_resolved",
    "auto_resolved_by_preference",
    "answered_after_round",
    "median_time_to_answer_ms",
    "p90_time_to_answer_ms",
    "answers_revised",
    "accept_without_edit_rate",
    "rounds",
    "rounds_answered",
    "rounds_abandoned",
    "rounds_open",
    "abandonment_rate",
    "repeat_rounds",
    "repeat_clarification_rate",
    "answers_with_2_or_more_pills",
    "pill_coverage",
    "pills_shown",
    "pills_clicked",
    "pill_click_through",
];

/// One CSV field: quoted (with inner quotes doubled) when it holds a comma, a quote or
/// a line break; a text starting with `=`, `+`, `-` or `@` gets a leading `'` so a
/// spreadsheet never reads it as a formula.
pub fn field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) && s.parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

fn rate(r: Option<f64>) -> String {
    r.map(|r| format!("{r:.4}")).unwrap_or_default()
}

fn opt(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn row(label: &str, d: &AnalyticsDay) -> Vec<String> {
    vec![
        label.to_owned(),
        d.questions.to_string(),
        d.clarified.to_string(),
        rate(d.clarification_rate()),
        (d.auto_resolved + d.answered_after_round).to_string(),
        d.auto_resolved.to_string(),
        d.auto_resolved_by_preference.to_string(),
        d.answered_after_round.to_string(),
        opt(d.median_ms),
        opt(d.p90_ms),
        d.answers_revised.to_string(),
        rate(d.accept_without_edit_rate()),
        d.rounds.to_string(),
        d.rounds_answered.to_string(),
        d.rounds_abandoned.to_string(),
        d.rounds_open.to_string(),
        rate(d.abandonment_rate()),
        d.repeat_rounds.to_string(),
        rate(d.repeat_clarification_rate()),
        d.pill_answers_two_plus.to_string(),
        rate(d.pill_coverage()),
        d.pills_shown.to_string(),
        d.pills_clicked.to_string(),
        rate(d.pill_click_through()),
    ]
}

/// The report as CSV: a header row, one row per day (oldest first), a `total` row.
/// Rates are shares in [0, 1] with four decimals, empty without a denominator.
pub fn csv(a: &Analytics) -> String {
    let mut out = String::new();
    let mut line = |cells: Vec<String>| {
        let cells: Vec<String> = cells.iter().map(|c| field(c)).collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    };
    line(CSV_HEADER.iter().map(|h| (*h).to_owned()).collect());
    for d in &a.days {
        line(row(&d.date, d));
    }
    line(row("total", &a.totals));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_quotes_or_line_breaks_are_quoted_and_formulas_defused() {
        assert_eq!(field("12"), "12");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"large\""), "\"say \"\"large\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(field("-3"), "-3", "a negative number stays a number");
        assert_eq!(field(""), "");
    }

    #[test]
    fn the_csv_has_a_header_a_row_per_day_and_a_total_row_of_the_same_width() {
        let day = |date: &str, questions: i64, clarified: i64| AnalyticsDay {
            date: date.into(),
            questions,
            clarified,
            auto_resolved: questions - clarified,
            median_ms: Some(40),
            ..AnalyticsDay::default()
        };
        let a = Analytics {
            since: "2026-03-01".into(),
            until: "2026-03-02".into(),
            totals: day("2026-03-02", 3, 1),
            days: vec![day("2026-03-01", 0, 0), day("2026-03-02", 3, 1)],
            ..Analytics::default()
        };
        let text = csv(&a);
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(
            lines.len(),
            5,
            "header, two days, total, and the empty end: {text}"
        );
        assert_eq!(lines[0], CSV_HEADER.join(","));
        assert!(lines[1].starts_with("2026-03-01,0,0,,0,"), "{}", lines[1]);
        assert!(
            lines[3].starts_with("total,3,1,0.3333,2,2,0,0,40,"),
            "{}",
            lines[3]
        );
        for l in &lines[..4] {
            assert_eq!(l.split(',').count(), CSV_HEADER.len(), "{l}");
        }
        assert_eq!(lines[4], "");
    }
}
