//! The OpenAPI document is served, and every endpoint it lists is routed (and every
//! routed API endpoint is listed: unknown paths under /api/v1 are 404).

mod common;

use axum::http::{Method, StatusCode};
use common::api::{Api, test_config};
use server::http::api::openapi::ENDPOINTS;

#[tokio::test]
async fn every_documented_endpoint_is_routed_and_the_document_is_served() {
    let api = Api::over(common::TestDb::sqlite().await, test_config()).await;
    let doc = api.raw(None, Method::GET, "/api/v1/openapi.json", "").await;
    assert_eq!(doc.status, StatusCode::OK);
    assert_eq!(doc.body["openapi"], "3.1.0");
    for (method, path) in ENDPOINTS {
        let concrete = path.replace("{id}", "1");
        let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        assert!(
            doc.body["paths"][path][method].is_object(),
            "{method} {path} undocumented"
        );
        // routed: without a token it is refused (401), not missing (404/405)
        let r = api.raw(None, m, &concrete, "{}").await;
        let want = if *path == "/api/v1/openapi.json" {
            StatusCode::OK
        } else {
            StatusCode::UNAUTHORIZED
        };
        assert_eq!(r.status, want, "{method} {path}");
    }
    validate_with_openapi_spec_validator(&doc.body);
    every_ref_resolves(&doc.body, &doc.body);
    let missing = api.raw(None, Method::GET, "/api/v1/nothing-here", "").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    api.finish().await;
}

/// Every `$ref` in the document points at something it defines.
fn every_ref_resolves(doc: &serde_json::Value, node: &serde_json::Value) {
    match node {
        serde_json::Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(|r| r.as_str()) {
                let pointer = r.strip_prefix('#').unwrap_or_else(|| panic!("external $ref {r}"));
                assert!(doc.pointer(pointer).is_some(), "dangling $ref {r}");
            }
            map.values().for_each(|v| every_ref_resolves(doc, v));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| every_ref_resolves(doc, v)),
        _ => {}
    }
}

/// Validates the document with the Python `openapi-spec-validator` (OpenAPI 3.1 rules and
/// JSON Schema) where it is installed; says so and skips where it is not.
fn validate_with_openapi_spec_validator(doc: &serde_json::Value) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), doc.to_string()).unwrap();
    let script = "import json, sys\n\
try:\n    from openapi_spec_validator import validate\n\
except ImportError:\n    print('missing'); sys.exit(0)\n\
validate(json.load(open(sys.argv[1])))\nprint('valid')\n";
    let out = match std::process::Command::new("python3")
        .args(["-c", script])
        .arg(file.path())
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping openapi-spec-validator: no python3 ({e})");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.trim() == "missing" {
        eprintln!("skipping openapi-spec-validator: not installed (pip install openapi-spec-validator)");
        return;
    }
    assert!(
        out.status.success() && stdout.trim() == "valid",
        "the OpenAPI document does not validate:\n{}{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every JSON error, whichever layer sends it (auth, origin check, body limit, JSON and
/// query-string parsing, handlers, the orchestrator), is one shape: a
/// `protocol::ApiError` whose code's status is the response's status.
#[tokio::test]
async fn every_error_is_one_shape_with_its_codes_status() {
    use app::protocol::{ApiError, ErrorCode};
    use axum::body::Body;
    use axum::http::{Request, header};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    let api = Api::over(common::TestDb::sqlite().await, test_config()).await;
    let t = api.alice.clone();
    let huge = format!("{{\"question\": \"{}\"}}", "x".repeat(70 * 1024));
    let mut seen = Vec::new();
    let cases: Vec<(Option<&str>, Method, &str, String, ErrorCode)> = vec![
        (
            None,
            Method::GET,
            "/api/v1/settings",
            String::new(),
            ErrorCode::Unauthenticated,
        ),
        (
            Some(&t),
            Method::POST,
            "/api/v1/query",
            "{not json".into(),
            ErrorCode::MalformedJson,
        ),
        (
            Some(&t),
            Method::POST,
            "/api/v1/query",
            "{\"question\": 3}".into(),
            ErrorCode::InvalidJsonFields,
        ),
        (
            Some(&t),
            Method::POST,
            "/api/v1/query",
            "{\"question\": \"  \"}".into(),
            ErrorCode::EmptyQuestion,
        ),
        (
            Some(&t),
            Method::POST,
            "/api/v1/query",
            huge,
            ErrorCode::BodyTooLarge,
        ),
        (
            Some(&t),
            Method::GET,
            "/api/v1/history?limit=abc",
            String::new(),
            ErrorCode::BadLimit,
        ),
        (
            Some(&t),
            Method::GET,
            "/api/v1/history?limit=",
            String::new(),
            ErrorCode::BadLimit,
        ),
        (
            Some(&t),
            Method::GET,
            "/api/v1/threads/nope",
            String::new(),
            ErrorCode::NotFound,
        ),
        (
            Some(&t),
            Method::GET,
            "/api/v1/admin/users",
            String::new(),
            ErrorCode::Forbidden,
        ),
        (
            Some(&t),
            Method::POST,
            "/api/v1/query",
            "{\"question\": \"delete all patients\"}".into(),
            ErrorCode::DataChange,
        ),
    ];
    for (token, method, path, body, want) in cases {
        let r = api.raw(token, method.clone(), path, &body).await;
        let e: ApiError = serde_json::from_value(r.body.clone())
            .unwrap_or_else(|err| panic!("{method} {path}: not an ApiError ({err}): {}", r.body));
        assert_eq!(e.code, want, "{method} {path}: {}", r.body);
        assert_eq!(r.status.as_u16(), want.status(), "{method} {path}");
        assert!(!e.message.is_empty());
        seen.push(want);
    }
    // the origin layer, too
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/v1/query")
        .header(header::HOST, "clarion.test")
        .header(header::ORIGIN, "https://evil.example")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::AUTHORIZATION, format!("Bearer {t}"))
        .body(Body::from("{\"question\": \"how many open wounds\"}"))
        .unwrap();
    let res = api.app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let e: ApiError = serde_json::from_slice(&bytes).expect("an ApiError");
    assert_eq!(e.code, ErrorCode::CrossOrigin);
    assert_eq!(status.as_u16(), e.code.status());
    api.finish().await;
}
