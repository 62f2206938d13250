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
