//! The administrators' Analytics through the real router (issue 15, point 8), on SQLite
//! and PostgreSQL: the JSON report and its CSV over `days` or a `from`–`until` range;
//! every bad range is a 400 `bad_parameter` (not a date, not a number in range) or a 422
//! `bad_range` (real dates that make no range) saying what to change, never a 500, on the
//! API and on the page; a question sent from a follow-up pill (`via: suggestion`) is
//! counted as a click; clinicians get 403.

mod common;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use chrono::Utc;
use common::api::{Api, test_config};
use http_body_util::BodyExt;
use serde_json::json;
use server::store::Role;
use tower::ServiceExt;

async fn each_backend(test: impl AsyncFn(&Api)) {
    for db in common::all_backends().await {
        let api = Api::start(db, test_config()).await;
        test(&api).await;
        api.finish().await;
    }
}

async fn admin(api: &Api) -> String {
    let (u, _) = api
        .state
        .store
        .ensure_user("root", "Root", Role::Admin, "a-password-123")
        .await
        .unwrap();
    api.state
        .auth
        .create_api_token(u.id, "tests", Utc::now(), None)
        .await
        .unwrap()
        .1
}

/// A GET as `token`: status, content type, body text.
async fn get(api: &Api, token: &str, path: &str) -> (StatusCode, String, String) {
    let req = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::HOST, "clarion.test")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Body::empty())
        .unwrap();
    let res = api.app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let ct = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = String::from_utf8_lossy(&res.into_body().collect().await.unwrap().to_bytes()).into_owned();
    (status, ct, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_and_its_csv_count_pill_clicks_and_refuse_bad_ranges_with_4xx() {
    each_backend(async |api| {
        let root = admin(api).await;
        let backend = api.db.db.backend();

        // A direct answer with its follow-up pills; one of them is clicked.
        let first = api
            .ask(json!({"question": "How many open wounds are there by clinic?"}))
            .await;
        assert_eq!(first.status, StatusCode::OK, "{}", first.body);
        let pills = first.body["suggestions"].as_array().unwrap().len().min(3) as i64;
        assert!(pills >= 1, "{}", first.body);
        let text = first.body["suggestions"][0]["text"].as_str().unwrap();
        let follow = api
            .ask(json!({"question": text, "thread_id": first.body["thread_id"], "via": "suggestion"}))
            .await;
        assert!(follow.status.is_success(), "{}", follow.body);
        let typed = api.ask(json!({"question": "how many patients"})).await;
        assert!(typed.status.is_success(), "{}", typed.body);
        let bad_via = api
            .ask(json!({"question": "how many patients", "via": "carrier pigeon"}))
            .await;
        assert_eq!(bad_via.status, StatusCode::BAD_REQUEST, "{}", bad_via.body);

        // JSON: clinicians are refused; the administrator gets the figures.
        let refused = api
            .call(&api.alice, Method::GET, "/api/v1/admin/analytics", None)
            .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        let r = api
            .call(&root, Method::GET, "/api/v1/admin/analytics?days=7", None)
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["days"].as_array().unwrap().len(), 7);
        let t = &r.body["totals"];
        assert_eq!(
            t["pills_clicked"], 1,
            "one question came from a pill; {backend:?} {t}"
        );
        assert!(t["pills_shown"].as_i64().unwrap() >= pills, "{t}");
        assert!(t["pill_answers"].as_i64().unwrap() >= 2, "{t}");
        assert!(t["median_ms"].as_i64().is_some(), "{t}");
        assert!(t["p90_ms"].as_i64().unwrap() >= t["median_ms"].as_i64().unwrap());
        assert_eq!(t["answers_revised"], 0);

        // An explicit range: today only.
        let today = Utc::now().date_naive();
        let one = api
            .call(
                &root,
                Method::GET,
                &format!("/api/v1/admin/analytics?from={today}&until={today}"),
                None,
            )
            .await;
        assert_eq!(one.status, StatusCode::OK, "{}", one.body);
        assert_eq!(one.body["since"], today.to_string());
        assert_eq!(one.body["days"].as_array().unwrap().len(), 1);
        assert_eq!(one.body["totals"]["pills_clicked"], 1);

        // Every bad range: what is not a date or a number in range is 400 bad_parameter,
        // real dates that make no range are 422 bad_range; the message says what to change.
        for (query, status, code, says) in [
            ("from=2026-13-01", 400, "bad_parameter", "YYYY-MM-DD"),
            ("from=yesterday", 400, "bad_parameter", "YYYY-MM-DD"),
            (
                "from=2026-03-01&until=2026-02-30",
                400,
                "bad_parameter",
                "YYYY-MM-DD",
            ),
            ("from=26-03-01", 400, "bad_parameter", "YYYY-MM-DD"),
            ("until=03/01/2026", 400, "bad_parameter", "YYYY-MM-DD"),
            ("from=", 400, "bad_parameter", "YYYY-MM-DD"),
            ("from=2026-03-01&until=", 400, "bad_parameter", "YYYY-MM-DD"),
            ("days=0", 400, "bad_parameter", "from 1 to 366"),
            ("days=367", 400, "bad_parameter", "from 1 to 366"),
            ("days=abc", 400, "bad_parameter", "from 1 to 366"),
            ("days=-1", 400, "bad_parameter", "from 1 to 366"),
            (
                "from=0001-01-01&until=0001-01-02",
                422,
                "bad_range",
                "from 1970 to 9998",
            ),
            (
                "from=2026-03-05&until=2026-03-01",
                422,
                "bad_range",
                "starts after it ends",
            ),
            (
                "from=2025-01-01&until=2026-03-01",
                422,
                "bad_range",
                "at most 366",
            ),
            ("until=2026-03-01", 422, "bad_range", "until needs from"),
            ("days=7&from=2026-03-01", 422, "bad_range", "either days or from"),
        ] {
            let r = api
                .call(
                    &root,
                    Method::GET,
                    &format!("/api/v1/admin/analytics?{query}"),
                    None,
                )
                .await;
            assert_eq!(r.status.as_u16(), status, "{query}: {}", r.body);
            assert_eq!(r.body["code"], code, "{query}");
            let m = r.body["message"].as_str().unwrap();
            assert!(m.contains(says), "{query}: {m}");
            let (csv_status, ct, _) = get(api, &root, &format!("/api/v1/admin/analytics.csv?{query}")).await;
            assert_eq!(csv_status.as_u16(), status, "csv {query}");
            assert!(ct.starts_with("application/json"), "csv errors are JSON: {ct}");
        }
        // 366 days is the most.
        let year = api
            .call(
                &root,
                Method::GET,
                "/api/v1/admin/analytics?from=2025-03-02&until=2026-03-02",
                None,
            )
            .await;
        assert_eq!(year.status, StatusCode::OK, "{}", year.body);
        assert_eq!(year.body["days"].as_array().unwrap().len(), 366);

        // CSV: a header row, a row per day, a total row with the same figures.
        let (status, ct, _) = get(api, &api.alice, "/api/v1/admin/analytics.csv").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(ct.starts_with("application/json"));
        let (status, ct, text) = get(api, &root, "/api/v1/admin/analytics.csv?days=7").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(ct, "text/csv; charset=utf-8");
        let lines: Vec<&str> = text.trim_end().split("\r\n").collect();
        assert_eq!(lines.len(), 1 + 7 + 1, "{text}");
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(header, server::http::api::analytics::CSV_HEADER);
        let total: Vec<&str> = lines[8].split(',').collect();
        assert_eq!(total[0], "total");
        assert_eq!(total.len(), header.len());
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        assert_eq!(total[col("pills_clicked")], "1");
        assert_eq!(total[col("questions")], t["questions"].to_string());
        assert_eq!(lines[7].split(',').next(), Some(today.to_string().as_str()));

        // The page: a bad range says what is wrong (400 / 422), with the form to fix it.
        let (status, html, _) = api
            .page(&root, Method::GET, "/analytics?from=not-a-date", None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(html.contains("from must be a date written YYYY-MM-DD"), "{html}");
        let (status, html, _) = api
            .page(
                &root,
                Method::GET,
                "/analytics?from=2026-03-05&until=2026-03-01",
                None,
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(html.contains("starts after it ends"), "{html}");
        assert!(html.contains("data-testid=\"range-form\""));
        let (status, html, _) = api
            .page(
                &root,
                Method::GET,
                &format!("/analytics?from={today}&until={today}"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            html.contains(&format!(
                "/api/v1/admin/analytics.csv?from={today}&amp;until={today}"
            )),
            "{html}"
        );
        assert!(html.contains("data-testid=\"day-table\""));
        assert!(html.contains("data-testid=\"chart-time-to-answer\""));
    })
    .await;
}
