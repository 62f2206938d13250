//! The OpenAPI 3.1 document of JSON API v1, generated from the code: every schema
//! from the protocol types (`utoipa::ToSchema`, derived only in the server build so the
//! wasm does not grow), every operation from the `#[utoipa::path]` on its handler, and
//! the routes and the document from one `OpenApiRouter` (they cannot diverge). Added
//! here: the security schemes and the links from an answer or a round to what can
//! follow it (clarify, cancel, revise, thread, rows), which API clients and
//! schemathesis' stateful phase follow. Pure data: no I/O.

use app::protocol::ApiError;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// Every endpoint of the API: (method, path). An independent list: tests check the
/// document and the router both have exactly these.
pub const ENDPOINTS: &[(&str, &str)] = &[
    ("post", "/api/v1/query"),
    ("post", "/api/v1/query/clarify"),
    ("post", "/api/v1/query/cancel"),
    ("post", "/api/v1/query/revise"),
    ("get", "/api/v1/threads/{id}"),
    ("get", "/api/v1/history"),
    ("post", "/api/v1/history/{id}/rows"),
    ("put", "/api/v1/history/{id}/feedback"),
    ("put", "/api/v1/clarifications/{id}/feedback"),
    ("get", "/api/v1/settings"),
    ("put", "/api/v1/settings"),
    ("get", "/api/v1/preferences"),
    ("delete", "/api/v1/preferences/{id}"),
    ("get", "/api/v1/openapi.json"),
    ("get", "/api/v1/admin/language-model"),
    ("put", "/api/v1/admin/language-model"),
    ("get", "/api/v1/me"),
    ("get", "/api/v1/admin/users"),
    ("put", "/api/v1/admin/users/{id}/clinics"),
    ("get", "/api/v1/verified"),
    ("post", "/api/v1/admin/verified"),
    ("put", "/api/v1/admin/verified/{id}"),
    ("delete", "/api/v1/admin/verified/{id}"),
    ("get", "/api/v1/saved"),
    ("post", "/api/v1/saved"),
    ("patch", "/api/v1/saved/{id}"),
    ("delete", "/api/v1/saved/{id}"),
    ("post", "/api/v1/saved/{id}/run"),
    ("get", "/api/v1/admin/analytics"),
    ("get", "/api/v1/admin/analytics.csv"),
];

/// The responses every signed-in operation can give besides its own.
#[derive(utoipa::IntoResponses)]
pub enum Signed {
    /// Not signed in (session cookie or bearer token)
    #[response(status = 401)]
    Unauthenticated(ApiError),
    /// Server fault (logged with the reference shown)
    #[response(status = 500)]
    Fault(ApiError),
}

/// The responses of an operation that reads a JSON body.
#[derive(utoipa::IntoResponses)]
pub enum WithBody {
    /// Bad input: the request breaks its schema; the message says what is wrong
    #[response(status = 400)]
    BadInput(ApiError),
    /// Request body too large
    #[response(status = 413)]
    TooLarge(ApiError),
}

/// An administrators' operation refused to anyone else.
#[derive(utoipa::IntoResponses)]
pub enum AdminOnly {
    /// Needs an administrator account
    #[response(status = 403)]
    Forbidden(ApiError),
}

/// An operation on an id the caller names.
#[derive(utoipa::IntoResponses)]
pub enum ById {
    /// Unknown, expired or another user's id
    #[response(status = 404)]
    NotFound(ApiError),
}

/// An operation that runs a question against the data.
#[derive(utoipa::IntoResponses)]
pub enum Runs {
    /// Keeps the schema but cannot be processed: names what the round or answer does not have, or asks what Clarion does not answer
    #[response(status = 422)]
    Unprocessable(ApiError),
    /// Too many of your questions are running at once
    #[response(status = 429)]
    Busy(ApiError),
    /// The query ran past its time limit
    #[response(status = 504)]
    Timeout(ApiError),
}

/// The document's root: title, description, who may call it.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Clarion API",
        version = "1.0.0",
        description = "Ask questions of wound-care data in plain English. Ambiguous questions get one \
            structured clarification round (202) unless `interactive` is false. Every error is \
            `{code, message}`; `code` is one of `ErrorCode` and decides the status."
    ),
    modifiers(&Security),
    security(("bearer" = []), ("session" = [])),
    components(schemas(app::protocol::ErrorCode, app::protocol::HistoryShow))
)]
pub struct ApiDoc;

/// Bearer tokens (Settings → API tokens) and the browser's session cookie.
struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(
                crate::auth::token::SESSION_COOKIE,
            ))),
        );
    }
}

/// What can follow an operation's response: (operation, status, link name, link).
fn links() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let round = |op: &str| json!({"operationId": op, "requestBody": {"clarification_id": "$response.body#/clarification_id"}});
    let thread = json!({"operationId": "thread", "parameters": {"id": "$response.body#/thread_id"}});
    let rows = json!({"operationId": "history_rows", "parameters": {"id": "$response.body#/history_id"}});
    let revise = json!({"operationId": "revise", "requestBody": {
        "history_id": "$response.body#/history_id",
        "ambiguity_id": "$response.body#/assumptions/0/ambiguity_id",
        "option_id": "$response.body#/assumptions/0/options/0/id",
    }});
    let mut out = Vec::new();
    for op in ["ask", "clarify"] {
        out.push((op, "202", "AnswerRound", round("clarify")));
        out.push((op, "202", "CancelRound", round("cancel")));
        out.push((op, "200", "OpenThread", thread.clone()));
        out.push((op, "200", "RowsAgain", rows.clone()));
        out.push((op, "200", "Revise", revise.clone()));
        out.push((
            op,
            "200",
            "Feedback",
            json!({"operationId": "answer_feedback", "parameters": {"id": "$response.body#/history_id"}}),
        ));
        out.push((
            op,
            "202",
            "RoundFeedback",
            json!({"operationId": "clarification_feedback", "parameters": {"id": "$response.body#/clarification_id"}}),
        ));
    }
    out.push((
        "preferences",
        "200",
        "Forget",
        json!({"operationId": "delete_preference", "parameters": {"id": "$response.body#/0/id"}}),
    ));
    out.push(("revise", "200", "OpenThread", thread.clone()));
    out.push(("revise", "200", "RowsAgain", rows));
    let verified = |op: &str| json!({"operationId": op, "parameters": {"id": "$response.body#/id"}});
    out.push(("verify", "201", "Edit", verified("edit_verified")));
    out.push(("verify", "201", "Retire", verified("retire_verified")));
    for (name, op) in [
        ("Rename", "rename_saved"),
        ("Delete", "delete_saved"),
        ("Run", "run_saved"),
    ] {
        out.push(("save_question", "201", name, verified(op)));
    }
    for op in ["ask", "clarify", "revise"] {
        out.push((
            op,
            "200",
            "Save",
            json!({"operationId": "save_question", "requestBody": {"history_id": "$response.body#/history_id", "name": "Saved answer"}}),
        ));
    }
    out.push(("run_saved", "200", "OpenThread", thread.clone()));
    out
}

/// The whole OpenAPI document (built once).
pub fn document() -> Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc = serde_json::to_value(super::generated()).unwrap_or_else(|_| json!({}));
        for (op, status, name, link) in links() {
            for item in doc["paths"]
                .as_object_mut()
                .into_iter()
                .flat_map(|p| p.values_mut())
            {
                for operation in item.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                    if operation["operationId"] == op
                        && let Some(response) = operation["responses"].get_mut(status)
                    {
                        response["links"][name] = link.clone();
                    }
                }
            }
        }
        doc
    })
    .clone()
}

/// The component schemas, by name.
pub fn schemas() -> serde_json::Map<String, Value> {
    document()["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::protocol::*;

    type Map = serde_json::Map<String, Value>;

    /// Resolves a `$ref` (or returns the schema itself).
    fn resolve<'a>(schema: &'a Value, schemas: &'a Map, at: &str) -> Result<&'a Value, String> {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference.rsplit('/').next().unwrap_or_default();
                let target = schemas.get(name).ok_or(format!("{at}: unknown schema {name}"))?;
                resolve(target, schemas, at)
            }
            None => Ok(schema),
        }
    }

    /// `allOf` parts merged into one object schema (properties and required lists).
    fn merged(parts: &[Value], schemas: &Map, at: &str) -> Result<Value, String> {
        let mut props = Map::new();
        let mut required = Vec::new();
        for part in parts {
            let part = resolve(part, schemas, at)?;
            let part = match part.get("allOf").and_then(Value::as_array) {
                Some(inner) => merged(inner, schemas, at)?,
                None => part.clone(),
            };
            props.extend(part["properties"].as_object().cloned().unwrap_or_default());
            required.extend(part["required"].as_array().cloned().unwrap_or_default());
        }
        Ok(json!({"type": "object", "properties": props, "required": required}))
    }

    /// Checks `value` against `schema` as generated (objects, arrays, refs, enums,
    /// `allOf`, `oneOf`, nullable type lists); returns the first mismatch. Strict: a
    /// field the schema does not document, or a documented one the sample lacks, fails.
    fn check(value: &Value, schema: &Value, schemas: &Map, at: &str) -> Result<(), String> {
        let schema = resolve(schema, schemas, at)?;
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            return check(value, &merged(parts, schemas, at)?, schemas, at);
        }
        if let Some(alternatives) = schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(Value::as_array)
        {
            let errors: Vec<String> = alternatives
                .iter()
                .filter_map(|alt| check(value, alt, schemas, at).err())
                .collect();
            return if errors.len() < alternatives.len() {
                Ok(())
            } else {
                Err(format!("{at}: matches no alternative: {}", errors.join("; ")))
            };
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            return Err(format!("{at}: {value} is not one of {allowed:?}"));
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if value.is_null() {
            return if types.is_empty() || types.contains(&"null") {
                Ok(())
            } else {
                Err(format!("{at}: null where {types:?} is documented"))
            };
        }
        match types.iter().find(|t| **t != "null").copied() {
            Some("object") => {
                let obj = value.as_object().ok_or(format!("{at}: not an object"))?;
                let props = schema["properties"].as_object().cloned().unwrap_or_default();
                for (k, v) in obj {
                    let s = props.get(k).ok_or(format!("{at}: field {k} is not documented"))?;
                    check(v, s, schemas, &format!("{at}.{k}"))?;
                }
                for req in schema["required"].as_array().into_iter().flatten() {
                    let k = req.as_str().unwrap_or_default();
                    if !obj.contains_key(k) {
                        return Err(format!("{at}: required field {k} is missing"));
                    }
                }
                for k in props.keys() {
                    if !obj.contains_key(k) {
                        return Err(format!("{at}: documented field {k} never appears in the sample"));
                    }
                }
                Ok(())
            }
            Some("array") => {
                let items = value.as_array().ok_or(format!("{at}: not an array"))?;
                if items.is_empty() {
                    return Err(format!("{at}: sample arrays must not be empty"));
                }
                items
                    .iter()
                    .try_for_each(|i| check(i, &schema["items"], schemas, &format!("{at}[]")))
            }
            Some("string") if !value.is_string() => Err(format!("{at}: not a string")),
            Some("integer") if !(value.is_i64() || value.is_u64()) => Err(format!("{at}: not an integer")),
            Some("number") if !value.is_number() => Err(format!("{at}: not a number")),
            Some("boolean") if !value.is_boolean() => Err(format!("{at}: not a boolean")),
            _ => Ok(()),
        }
    }

    fn choice() -> Choice {
        Choice {
            id: "gt10".into(),
            label: "Larger than 10 cm²".into(),
            description: "latest area".into(),
            default: true,
            count: Some(12),
            counts_of: "wounds".into(),
        }
    }

    fn step() -> ThinkingStep {
        ThinkingStep {
            name: "Ran the query".into(),
            detail: "3 rows".into(),
            duration_ms: Some(1.5),
        }
    }

    fn assumption() -> Assumption {
        Assumption {
            piece: "large".into(),
            assumed: "Larger than 10 cm²".into(),
            source: AssumptionSource::SavedDefinition,
            ambiguity_id: Some("term:large@wounds".into()),
            option_id: Some("gt10".into()),
            options: vec![choice()],
            confidence: Some(1.0),
            reasoning: "You chose this for “large” and asked Clarion to remember it.".into(),
        }
    }

    fn history_item() -> HistoryItem {
        HistoryItem {
            id: "h".into(),
            thread_id: Some("t".into()),
            question: "q".into(),
            sql: "SELECT 1".into(),
            assumptions: vec![assumption()],
            clarifications: 1,
            chosen: vec!["“serious”: Infected".into()],
            row_count: 3,
            duration_ms: 4,
            created_at: "2026-11-01T00:00:00Z".into(),
            status: HistoryStatus::Refused,
            message: Some("Clarion only reads data.".into()),
        }
    }

    fn answer() -> Answer {
        Answer {
            thread_id: "t".into(),
            history_id: "h".into(),
            question: "q".into(),
            restatement: "r".into(),
            assumptions: vec![assumption()],
            open_questions: vec![OpenQuestion {
                id: "term:serious@wounds".into(),
                text: "What counts as serious?".into(),
                assumed_option_id: "full_thickness".into(),
                options: vec![choice()],
            }],
            table: ResultTable {
                columns: vec![ResultColumn {
                    name: "n".into(),
                    label: "N".into(),
                    kind: "integer".into(),
                    unit: Some("cm²".into()),
                }],
                rows: vec![vec![json!(1)]],
                row_count: 1,
                truncated: false,
                ..Default::default()
            },
            sql: "SELECT 1".into(),
            param_count: 0,
            confidence: 0.9,
            suggestions: vec![Suggestion {
                text: "By clinic".into(),
                kind: "breakdown".into(),
                cross_area: false,
            }],
            thinking: vec![step()],
            rounds: 1,
            duration_ms: 3.0,
            notice: Some("Your clarification had expired.".into()),
            verified: Some("Verified by Alex Morgan · Open wounds".into()),
        }
    }

    fn samples() -> Vec<(&'static str, Value)> {
        let question = Question {
            id: "term:large@wounds".into(),
            kind: "vague_qualifier".into(),
            text: "What counts as large?".into(),
            reason: "vague".into(),
            span_text: "large".into(),
            options: vec![choice()],
            custom: CustomInput {
                kind: "number".into(),
                placeholder: "e.g. 15".into(),
                unit: Some("cm²".into()),
                allowed_values: vec!["x".into()],
            },
            priority: "important".into(),
            confidence: 0.55,
        };
        let round = ClarificationRound {
            clarification_id: "c".into(),
            thread_id: "t".into(),
            round: 1,
            max_rounds: 2,
            reason: "r".into(),
            questions: vec![question],
            understood_so_far: "u".into(),
            thinking: vec![step()],
            expires_at: "2026-11-01T00:00:00Z".into(),
        };
        let to = |v: &dyn ToJson| v.json();
        vec![
            (
                "AskRequest",
                to(&AskRequest {
                    question: "q".into(),
                    thread_id: Some("t".into()),
                    interactive: Some(false),
                    via: Some(app::protocol::AskVia::Suggestion),
                }),
            ),
            (
                "CancelRequest",
                to(&CancelRequest {
                    clarification_id: "c".into(),
                }),
            ),
            (
                "ClarifyRequest",
                to(&ClarifyRequest {
                    clarification_id: "c".into(),
                    answers: vec![ClarifyAnswer {
                        question_id: "q".into(),
                        option_id: Some("o".into()),
                        custom: Some("area > 15".into()),
                        in_own_words: Some("since March".into()),
                        dont_know: false,
                        remember: true,
                    }],
                }),
            ),
            (
                "ReviseRequest",
                to(&ReviseRequest {
                    history_id: "h".into(),
                    ambiguity_id: "a".into(),
                    option_id: Some("o".into()),
                    custom: Some("c".into()),
                }),
            ),
            ("QueryOutcome", to(&QueryOutcome::Answered(answer()))),
            ("QueryOutcome", to(&QueryOutcome::NeedsClarification(round))),
            (
                "ApiError",
                to(&ApiError {
                    code: ErrorCode::NotFound,
                    message: "m".into(),
                }),
            ),
            (
                "ThreadView",
                to(&ThreadView {
                    id: "t".into(),
                    title: "q".into(),
                    created_at: "2026-11-01T00:00:00Z".into(),
                    messages: vec![ThreadMessage {
                        role: "assistant".into(),
                        body: "b".into(),
                        kind: "answer".into(),
                        history_id: Some("h".into()),
                        clarification_id: Some("c".into()),
                        created_at: "2026-11-01T00:00:00Z".into(),
                    }],
                    answers: vec![StoredAnswer {
                        history: history_item(),
                        table: Some(answer().table),
                    }],
                }),
            ),
            ("HistoryItem", to(&history_item())),
            (
                "PreferenceItem",
                to(&PreferenceItem {
                    id: 1,
                    signature: "term:large@wounds".into(),
                    option_id: Some("gt25".into()),
                    label: "large = > 25".into(),
                    count: 3,
                    remembered: true,
                    offered_as_default: true,
                    usual: true,
                    successes: 2,
                    confidence: 0.75,
                }),
            ),
            (
                "Settings",
                to(&Settings {
                    skip_clarifications: true,
                    sensitivity: Sensitivity::More,
                }),
            ),
            (
                "Account",
                to(&crate::http::api::access::Account {
                    id: 2,
                    username: "nurse".into(),
                    display_name: "Nurse".into(),
                    is_admin: false,
                    all_clinics: false,
                    clinic_ids: vec![1, 2],
                }),
            ),
            (
                "VerifiedQuestion",
                to(&crate::http::api::verified::VerifiedQuestion {
                    id: 1,
                    name: "Open wounds".into(),
                    question: "how many open wounds".into(),
                    phrasings: vec!["how many open wounds".into()],
                    verified_by: "Alex Morgan".into(),
                    use_count: 2,
                    created_at: "2026-11-01T00:00:00Z".into(),
                }),
            ),
            (
                "VerifyRequest",
                to(&crate::http::api::verified::VerifyRequest {
                    history_id: "h".into(),
                    name: "n".into(),
                    phrasings: vec!["p".into()],
                }),
            ),
            (
                "VerifiedEdit",
                to(&crate::http::api::verified::VerifiedEdit {
                    name: "n".into(),
                    phrasings: vec!["p".into()],
                }),
            ),
            (
                "AnswerFeedbackRequest",
                to(&AnswerFeedbackRequest {
                    rating: "down".into(),
                    reason: Some("wrong_cohort".into()),
                    comment: Some("counted healed wounds".into()),
                }),
            ),
            (
                "AnswerFeedbackView",
                to(&AnswerFeedbackView {
                    history_id: "h".into(),
                    rating: FeedbackRating::Down,
                    reason: Some(FeedbackReason::Other),
                    comment: Some("c".into()),
                    successes_counted: 0,
                }),
            ),
            (
                "ClarificationFeedbackRequest",
                to(&ClarificationFeedbackRequest { helpful: true }),
            ),
            (
                "ClarificationFeedbackView",
                to(&ClarificationFeedbackView {
                    clarification_id: "c".into(),
                    helpful: false,
                }),
            ),
            (
                "SavedQuestion",
                to(&SavedQuestion {
                    id: "s".into(),
                    name: "Serious wounds".into(),
                    question: "show me serious wounds".into(),
                    chosen: vec!["serious: Infected".into()],
                    verified: Some("Verified by Alex Morgan · Open wounds".into()),
                    applies: false,
                    changes: vec!["“Riverside” is no longer in today's data.".into()],
                    run_count: 2,
                    created_at: "2026-11-01T00:00:00Z".into(),
                    last_run_at: Some("2026-11-02T00:00:00Z".into()),
                }),
            ),
            (
                "SaveRequest",
                to(&SaveRequest {
                    history_id: "h".into(),
                    name: "n".into(),
                }),
            ),
            ("SavedRename", to(&SavedRename { name: "n".into() })),
            (
                "ScopeChange",
                to(&crate::http::api::access::ScopeChange {
                    all_clinics: false,
                    clinic_ids: vec![3.into()],
                }),
            ),
        ]
    }

    /// Serializes any protocol type (object-safe helper for the sample table).
    trait ToJson {
        fn json(&self) -> Value;
    }
    impl<T: serde::Serialize> ToJson for T {
        fn json(&self) -> Value {
            serde_json::to_value(self).expect("serializes")
        }
    }

    #[test]
    fn every_protocol_type_matches_its_documented_schema() {
        let schemas = schemas();
        for (name, sample) in samples() {
            let schema = schemas
                .get(name)
                .unwrap_or_else(|| panic!("{name} has no schema"));
            check(&sample, schema, &schemas, name).unwrap_or_else(|e| panic!("{e}\nsample: {sample}"));
        }
    }

    #[test]
    fn every_endpoint_is_documented_with_json_errors() {
        let doc = document();
        for (method, path) in ENDPOINTS {
            let op = &doc["paths"][path][method];
            assert!(op.is_object(), "{method} {path} is not in the document");
            assert!(op["responses"].is_object(), "{method} {path} has no responses");
        }
        let documented: usize = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|p| p.as_object().unwrap().len())
            .sum();
        assert_eq!(
            documented,
            ENDPOINTS.len(),
            "the document lists an endpoint ENDPOINTS does not"
        );
    }

    #[test]
    fn every_reference_resolves() {
        let doc = document().to_string();
        let schemas = schemas();
        for part in doc.split("#/components/schemas/").skip(1) {
            let name: String = part.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            assert!(schemas.contains_key(&name), "dangling $ref {name}");
        }
    }

    #[test]
    fn every_error_response_is_an_api_error_and_every_code_is_listed() {
        let doc = document();
        for (method, path) in ENDPOINTS {
            let responses = doc["paths"][path][method]["responses"].as_object().unwrap();
            assert!(
                *path == "/api/v1/openapi.json" || responses.contains_key("500"),
                "{method} {path} does not document 500"
            );
            for (status, r) in responses {
                if status.starts_with('2') {
                    continue;
                }
                let schema = &r["content"]["application/json"]["schema"]["$ref"];
                assert_eq!(
                    schema, "#/components/schemas/ApiError",
                    "{method} {path} {status}"
                );
            }
        }
        let codes = &schemas()["ErrorCode"]["enum"];
        for code in [
            "empty_question",
            "not_found",
            "body_too_large",
            "cross_origin",
            "internal",
        ] {
            assert!(
                codes.as_array().unwrap().contains(&json!(code)),
                "{code} not in {codes}"
            );
        }
        // each code's status is documented on the operations that can send it
        let statuses: std::collections::BTreeSet<u16> = codes
            .as_array()
            .unwrap()
            .iter()
            .map(|c| serde_json::from_value::<ErrorCode>(c.clone()).unwrap().status())
            .collect();
        assert!(statuses.contains(&422) && statuses.contains(&504), "{statuses:?}");
    }

    #[test]
    fn links_lead_from_an_answer_or_round_to_what_follows() {
        let doc = document();
        let ops: Vec<String> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|p| p.as_object().unwrap().values())
            .filter_map(|o| o["operationId"].as_str().map(str::to_owned))
            .collect();
        let ask = &doc["paths"]["/api/v1/query"]["post"]["responses"];
        assert_eq!(ask["202"]["links"]["AnswerRound"]["operationId"], "clarify");
        assert_eq!(ask["200"]["links"]["OpenThread"]["operationId"], "thread");
        let mut seen = 0;
        for (op, _, _, link) in links() {
            assert!(ops.iter().any(|o| o == op), "link from unknown operation {op}");
            let target = link["operationId"].as_str().unwrap();
            assert!(
                ops.iter().any(|o| o == target),
                "link to unknown operation {target}"
            );
            seen += 1;
        }
        assert!(seen >= 10);
    }

    /// The whole document, reviewed when it changes (`cargo insta review`).
    #[test]
    fn the_document_is_as_reviewed() {
        insta::assert_snapshot!("openapi", serde_json::to_string_pretty(&document()).unwrap());
    }
}
