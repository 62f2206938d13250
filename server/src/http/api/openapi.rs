//! The OpenAPI 3.1 document of JSON API v1, built from the protocol types' shapes.
//!
//! Written out here (no code generator), and kept honest by tests: every protocol type
//! is serialized with every optional field filled and checked against its schema (no
//! undocumented field, no missing required one), and every endpoint in [`ENDPOINTS`]
//! is routed and documented. Pure data: no I/O.

use serde_json::{Map, Value, json};

/// Every endpoint of the API: (method, path).
pub const ENDPOINTS: &[(&str, &str)] = &[
    ("post", "/api/v1/query"),
    ("post", "/api/v1/query/clarify"),
    ("post", "/api/v1/query/cancel"),
    ("post", "/api/v1/query/revise"),
    ("get", "/api/v1/threads/{id}"),
    ("get", "/api/v1/history"),
    ("post", "/api/v1/history/{id}/rows"),
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
];

fn string() -> Value {
    json!({"type": "string"})
}
fn integer() -> Value {
    json!({"type": "integer", "format": "int64"})
}
fn uint() -> Value {
    json!({"type": "integer", "format": "int32", "minimum": 0})
}
fn number() -> Value {
    json!({"type": "number"})
}
fn boolean() -> Value {
    json!({"type": "boolean"})
}
fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}
fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}
fn enumeration(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

/// An object schema: `required` fields always present, `optional` ones may be absent.
fn object(description: &str, required: &[(&str, Value)], optional: &[(&str, Value)]) -> Value {
    let mut props = Map::new();
    for (k, v) in required.iter().chain(optional) {
        props.insert((*k).to_owned(), v.clone());
    }
    json!({
        "type": "object",
        "description": description,
        "properties": props,
        "required": required.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
    })
}

/// The component schemas, by protocol type name.
pub fn schemas() -> Map<String, Value> {
    let mut s = Map::new();
    let mut add = |name: &str, v: Value| {
        s.insert(name.to_owned(), v);
    };
    add(
        "AskRequest",
        object(
            "A question, optionally in an existing thread.",
            &[(
                "question",
                // what the server accepts: 1 to 1000 characters, at least one of them
                // neither a space nor a control character
                json!({"type": "string", "minLength": 1, "maxLength": crate::engine::MAX_QUESTION_CHARS, "pattern": "[^\\s\\u0000-\\u001f\\u007f]"}),
            )],
            &[("thread_id", string()), ("interactive", boolean())],
        ),
    );
    add(
        "ClarifyAnswer",
        object(
            "The answer to one question: exactly one of option_id, custom, in_own_words, dont_know. \
             in_own_words is read (by the engine, then the language model when configured) and \
             the round comes back with the reading as a preselected option to confirm.",
            &[("question_id", string())],
            &[
                ("option_id", string()),
                ("custom", string()),
                ("in_own_words", string()),
                ("dont_know", boolean()),
                ("remember", boolean()),
            ],
        ),
    );
    add(
        "ClarifyRequest",
        object(
            "The answers to one clarification round.",
            &[
                ("clarification_id", string()),
                ("answers", array(r("ClarifyAnswer"))),
            ],
            &[],
        ),
    );
    add(
        "CancelRequest",
        object(
            "Close a clarification round without answering it.",
            &[("clarification_id", string())],
            &[],
        ),
    );
    add(
        "ReviseRequest",
        object(
            "Change one assumption of an answer and re-run.",
            &[("history_id", string()), ("ambiguity_id", string())],
            &[("option_id", string()), ("custom", string())],
        ),
    );
    add(
        "Choice",
        object(
            "One radio option; count (with counts_of, the records it counts: \"patients\") is absent when the preview was too slow.",
            &[
                ("id", string()),
                ("label", string()),
                ("description", string()),
                ("default", boolean()),
            ],
            &[("count", integer()), ("counts_of", string())],
        ),
    );
    add(
        "CustomInput",
        object(
            "The custom value a question accepts.",
            &[
                (
                    "kind",
                    enumeration(&["none", "number", "date_range", "allowed_value", "free_constraint"]),
                ),
                ("placeholder", string()),
                ("allowed_values", array(string())),
            ],
            &[("unit", string())],
        ),
    );
    add(
        "Question",
        object(
            "One question of a round, best guess preselected.",
            &[
                ("id", string()),
                ("kind", string()),
                ("text", string()),
                ("reason", string()),
                ("span_text", string()),
                ("options", array(r("Choice"))),
                ("custom", r("CustomInput")),
            ],
            &[],
        ),
    );
    add(
        "ThinkingStep",
        object(
            "One step of the thinking stream, with its measured duration.",
            &[("name", string()), ("detail", string())],
            &[("duration_ms", number())],
        ),
    );
    add(
        "Assumption",
        object(
            "One assumption badge.",
            &[
                ("piece", string()),
                ("assumed", string()),
                (
                    "source",
                    enumeration(&["default", "saved_definition", "low_confidence", "language_model"]),
                ),
                ("options", array(r("Choice"))),
            ],
            &[("ambiguity_id", string()), ("option_id", string())],
        ),
    );
    add(
        "OpenQuestion",
        object(
            "A question answered on its best guess (non-interactive mode).",
            &[
                ("id", string()),
                ("text", string()),
                ("assumed_option_id", string()),
                ("options", array(r("Choice"))),
            ],
            &[],
        ),
    );
    add(
        "Suggestion",
        object(
            "A follow-up suggestion.",
            &[("text", string()), ("kind", string()), ("cross_area", boolean())],
            &[],
        ),
    );
    add(
        "ResultColumn",
        object(
            "One result column.",
            &[
                ("name", string()),
                ("label", string()),
                (
                    "kind",
                    enumeration(&["integer", "real", "text", "boolean", "date"]),
                ),
            ],
            &[("unit", string())],
        ),
    );
    add(
        "ResultTable",
        object(
            "The rows of an answer.",
            &[
                ("columns", array(r("ResultColumn"))),
                ("rows", array(array(json!({})))),
                ("row_count", uint()),
                ("truncated", boolean()),
            ],
            &[],
        ),
    );
    let answer_fields = [
        ("thread_id", string()),
        ("history_id", string()),
        ("question", string()),
        ("restatement", string()),
        ("assumptions", array(r("Assumption"))),
        ("open_questions", array(r("OpenQuestion"))),
        ("table", r("ResultTable")),
        ("sql", string()),
        ("param_count", uint()),
        ("confidence", number()),
        ("suggestions", array(r("Suggestion"))),
        ("thinking", array(r("ThinkingStep"))),
        ("rounds", uint()),
        ("duration_ms", number()),
    ];
    let mut answered = answer_fields.to_vec();
    answered.insert(0, ("status", enumeration(&["answered"])));
    add(
        "Answer",
        object(
            "An answer (HTTP 200). `verified` (\"Verified by <administrator> · <name>\") when an administrator's verified question answered it: its definition applied, nothing asked, the asker's clinic scope still in force. `notice`: something to know about how it came about (an expired clarification answered by running the question again).",
            &answered,
            &[("verified", string()), ("notice", string())],
        ),
    );
    add(
        "ClarificationRound",
        object(
            "One clarification round (HTTP 202).",
            &[
                ("status", enumeration(&["needs_clarification"])),
                ("clarification_id", string()),
                ("thread_id", string()),
                ("round", uint()),
                ("max_rounds", uint()),
                ("reason", string()),
                ("questions", array(r("Question"))),
                ("understood_so_far", string()),
                ("thinking", array(r("ThinkingStep"))),
                ("expires_at", json!({"type": "string", "format": "date-time"})),
            ],
            &[],
        ),
    );
    add(
        "ApiError",
        object(
            "Every error: a stable code and a message a person can act on.",
            &[("code", string()), ("message", string())],
            &[],
        ),
    );
    add(
        "ThreadMessage",
        object(
            "One message of a thread.",
            &[
                ("role", enumeration(&["user", "assistant"])),
                ("body", string()),
                (
                    "kind",
                    enumeration(&["question", "answer", "clarification", "clarification_answer"]),
                ),
                ("created_at", string()),
            ],
            &[("history_id", string()), ("clarification_id", string())],
        ),
    );
    add(
        "ThreadView",
        object(
            "A thread and its messages.",
            &[
                ("id", string()),
                ("title", string()),
                ("created_at", string()),
                ("messages", array(r("ThreadMessage"))),
                ("answers", array(r("StoredAnswer"))),
            ],
            &[],
        ),
    );
    add(
        "StoredAnswer",
        object(
            "An answer of a stored thread, with the rows as they were shown (opening a thread runs nothing).",
            &[("history", r("HistoryItem"))],
            &[("table", r("ResultTable"))],
        ),
    );
    add(
        "HistoryItem",
        object(
            "One past question.",
            &[
                ("id", string()),
                ("question", string()),
                ("sql", string()),
                ("assumptions", array(r("Assumption"))),
                ("clarifications", uint()),
                ("chosen", array(string())),
                ("row_count", integer()),
                ("duration_ms", integer()),
                ("created_at", string()),
            ],
            &[("thread_id", string())],
        ),
    );
    add(
        "PreferenceItem",
        object(
            "One learned preference.",
            &[
                ("id", integer()),
                ("signature", string()),
                ("label", string()),
                ("count", integer()),
                ("remembered", boolean()),
                ("offered_as_default", boolean()),
            ],
            &[("option_id", string())],
        ),
    );
    add(
        "LanguageModelSwitch",
        object(
            "The optional language model (F24): whether one is configured, and the administrators' runtime switch (all replicas).",
            &[("enabled", boolean())],
            &[
                ("configured", boolean()),
                ("model", string()),
                ("endpoint", string()),
            ],
        ),
    );
    add(
        "Account",
        object(
            "An account and the clinics it may see (issue 16): every clinic, or only `clinic_ids`. Every question, option count, picker and re-run is limited to them.",
            &[
                ("id", integer()),
                ("username", string()),
                ("display_name", string()),
                ("is_admin", boolean()),
                ("all_clinics", boolean()),
                ("clinic_ids", array(integer())),
            ],
            &[],
        ),
    );
    add(
        "VerifiedQuestion",
        object(
            "A verified question (issue 16): an administrator's answered question with its clarifications. A new question that is one of its phrasings (compared in lower case, words only) or reads into the same plan is answered by it, asks nothing, and carries `verified`; the asker's clinic scope still applies.",
            &[
                ("id", integer()),
                ("name", string()),
                ("question", string()),
                ("phrasings", array(string())),
                ("verified_by", string()),
                ("use_count", integer()),
                ("created_at", json!({"type": "string", "format": "date-time"})),
            ],
            &[],
        ),
    );
    add(
        "VerifyRequest",
        object(
            "Promote an answered question of any user (its history_id) to a verified question: a name (1 to 120 characters) and phrasings to match (at most 50; the question's own is always one).",
            &[("history_id", string()), ("name", string())],
            &[("phrasings", array(string()))],
        ),
    );
    add(
        "VerifiedEdit",
        object(
            "A verified question's new name and phrasings (replacing the old ones; the question's own phrasing is kept).",
            &[("name", string())],
            &[("phrasings", array(string()))],
        ),
    );
    add(
        "ScopeChange",
        object(
            "A clinic scope to set: every clinic (`all_clinics: true`, no ids), or exactly `clinic_ids` (positive, at most 1000; empty means none). Applies to the account's next question.",
            &[("all_clinics", boolean())],
            &[("clinic_ids", array(integer()))],
        ),
    );
    add(
        "Settings",
        object(
            "How Clarion treats ambiguous questions for this user.",
            &[
                ("skip_clarifications", boolean()),
                ("sensitivity", enumeration(&["fewer", "balanced", "more"])),
            ],
            &[],
        ),
    );
    s
}

fn body(name: &str) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": r(name)}}})
}

fn reply(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
}

fn errors(codes: &[&str]) -> Map<String, Value> {
    let mut m = Map::new();
    for c in codes {
        let d = match *c {
            "400" => "Bad input: the message says what is wrong",
            "401" => "Not signed in (session cookie or bearer token)",
            "404" => "Unknown, expired or another user's id",
            "409" => "The round was already answered",
            "413" => "Request body too large",
            "422" => "A question Clarion does not answer (out of domain, a data change)",
            "504" => "The query ran past its time limit",
            _ => "Error",
        };
        m.insert((*c).to_owned(), reply(d, r("ApiError")));
    }
    m.insert(
        "500".into(),
        reply("Server fault (logged with the reference shown)", r("ApiError")),
    );
    m
}

fn op(summary: &str, request: Option<&str>, ok: &[(&str, Value)], errs: &[&str]) -> Value {
    let mut responses = errors(errs);
    for (code, v) in ok {
        responses.insert((*code).to_owned(), v.clone());
    }
    let mut o =
        json!({"summary": summary, "responses": responses, "security": [{"bearer": []}, {"session": []}]});
    if let Some(req) = request {
        o["requestBody"] = body(req);
    }
    o
}

fn id_param(description: &str) -> Value {
    json!([{"name": "id", "in": "path", "required": true, "description": description, "schema": {"type": "string"}}])
}

/// The whole OpenAPI document.
pub fn document() -> Value {
    let answer = reply("The answer", r("Answer"));
    let round = reply("One clarification round first", r("ClarificationRound"));
    let mut paths = Map::new();
    paths.insert(
        "/api/v1/query".into(),
        json!({"post": op("Ask a question", Some("AskRequest"),
            &[("200", answer.clone()), ("202", round.clone())], &["400", "401", "404", "413", "422", "504"])}),
    );
    paths.insert(
        "/api/v1/query/clarify".into(),
        json!({"post": op("Answer a clarification round", Some("ClarifyRequest"),
            &[("200", answer.clone()), ("202", round)], &["400", "401", "404", "409", "413", "504"])}),
    );
    paths.insert(
        "/api/v1/query/cancel".into(),
        json!({"post": op("Cancel a clarification round (it counts as abandoned at once)", Some("CancelRequest"),
            &[("204", json!({"description": "Cancelled (or already expired)"}))], &["400", "401", "404", "409", "413"])}),
    );
    paths.insert(
        "/api/v1/query/revise".into(),
        json!({"post": op("Change one assumption of an answer and re-run", Some("ReviseRequest"),
            &[("200", answer)], &["400", "401", "404", "413", "504"])}),
    );
    let mut t = op(
        "A thread with its messages",
        None,
        &[("200", reply("The thread", r("ThreadView")))],
        &["401", "404"],
    );
    t["parameters"] = id_param("The thread's id");
    paths.insert("/api/v1/threads/{id}".into(), json!({ "get": t }));
    let mut h = op(
        "Your past questions, newest first",
        None,
        &[("200", reply("History", array(r("HistoryItem"))))],
        &["401"],
    );
    h["parameters"] = json!([{"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 500}}]);
    paths.insert("/api/v1/history".into(), json!({ "get": h }));
    let mut rows = op(
        "The rows of a past answer, computed again now from its stored plan (a POST: it runs a query, audited; nothing is added to the thread or history)",
        None,
        &[("200", reply("The rows as of now", r("ResultTable")))],
        &["401", "404", "504"],
    );
    rows["parameters"] = id_param("The history entry's id (an answer's history_id)");
    paths.insert("/api/v1/history/{id}/rows".into(), json!({ "post": rows }));
    paths.insert(
        "/api/v1/settings".into(),
        json!({
            "get": op("Your settings", None, &[("200", reply("Settings", r("Settings")))], &["401"]),
            "put": op("Change your settings", Some("Settings"), &[("200", reply("Saved settings", r("Settings")))], &["400", "401", "413"]),
        }),
    );
    paths.insert(
        "/api/v1/admin/language-model".into(),
        json!({
            "get": op("The language model's switch (administrators)", None, &[("200", reply("Switch", r("LanguageModelSwitch")))], &["401", "403"]),
            "put": op("Switch the language model on or off for every replica (administrators)", Some("LanguageModelSwitch"), &[("200", reply("Switch", r("LanguageModelSwitch")))], &["400", "401", "403", "413"]),
        }),
    );
    paths.insert(
        "/api/v1/me".into(),
        json!({"get": op("Who you are and which clinics you may see", None, &[("200", reply("Your account", r("Account")))], &["401"])}),
    );
    paths.insert(
        "/api/v1/admin/users".into(),
        json!({"get": op("Every account with its clinic scope (administrators)", None, &[("200", reply("Accounts", array(r("Account"))))], &["401", "403"])}),
    );
    let mut sc = op(
        "Set which clinics an account may see (administrators); applies to its next question",
        Some("ScopeChange"),
        &[("200", reply("The account with its new scope", r("Account")))],
        &["400", "401", "403", "404", "413"],
    );
    sc["parameters"] = id_param("The account's id");
    paths.insert(
        "/api/v1/verified".into(),
        json!({"get": op("The verified questions in force", None, &[("200", reply("Verified questions", array(r("VerifiedQuestion"))))], &["401"])}),
    );
    paths.insert(
        "/api/v1/admin/verified".into(),
        json!({"post": op("Promote any user's answered question to a verified question (administrators)", Some("VerifyRequest"), &[("201", reply("The verified question", r("VerifiedQuestion")))], &["400", "401", "403", "404", "413"])}),
    );
    let mut ve = op(
        "Rename a verified question and replace its phrasings (administrators)",
        Some("VerifiedEdit"),
        &[("200", reply("The verified question", r("VerifiedQuestion")))],
        &["400", "401", "403", "404", "413"],
    );
    ve["parameters"] = id_param("The verified question's id");
    let mut vr = op(
        "Retire a verified question: new questions no longer match it (administrators)",
        None,
        &[("204", json!({"description": "Retired"}))],
        &["401", "403", "404"],
    );
    vr["parameters"] = id_param("The verified question's id");
    paths.insert(
        "/api/v1/admin/verified/{id}".into(),
        json!({ "put": ve, "delete": vr }),
    );
    paths.insert("/api/v1/admin/users/{id}/clinics".into(), json!({ "put": sc }));
    paths.insert(
        "/api/v1/preferences".into(),
        json!({"get": op("Your learned preferences", None, &[("200", reply("Preferences", array(r("PreferenceItem"))))], &["401"])}),
    );
    let mut d = op(
        "Delete a learned preference",
        None,
        &[("204", json!({"description": "Deleted"}))],
        &["401", "404"],
    );
    d["parameters"] = id_param("The preference's id");
    paths.insert("/api/v1/preferences/{id}".into(), json!({ "delete": d }));
    paths.insert(
        "/api/v1/openapi.json".into(),
        json!({"get": {"summary": "This document", "security": [], "responses": {"200": {"description": "The OpenAPI document", "content": {"application/json": {}}}}}}),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Clarion API",
            "version": "1.0.0",
            "description": "Ask questions of wound-care data in plain English. Ambiguous questions get one \
                structured clarification round (202) unless `interactive` is false.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": crate::auth::token::SESSION_COOKIE},
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::protocol::*;

    /// Checks `value` against `schema` (objects, arrays, refs, enums, types); returns the
    /// first mismatch.
    fn check(value: &Value, schema: &Value, schemas: &Map<String, Value>, at: &str) -> Result<(), String> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or_default();
            let target = schemas.get(name).ok_or(format!("{at}: unknown schema {name}"))?;
            return check(value, target, schemas, at);
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            return Err(format!("{at}: {value} is not one of {allowed:?}"));
        }
        match schema.get("type").and_then(Value::as_str) {
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
            ("Answer", to(&QueryOutcome::Answered(answer()))),
            ("ClarificationRound", to(&QueryOutcome::NeedsClarification(round))),
            (
                "ApiError",
                to(&ApiError {
                    code: "c".into(),
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
                "ScopeChange",
                to(&crate::http::api::access::ScopeChange {
                    all_clinics: false,
                    clinic_ids: vec![3],
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
}
