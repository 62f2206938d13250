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
    let missing = api.raw(None, Method::GET, "/api/v1/nothing-here", "").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    api.finish().await;
}
