//! `/admin/verified`: the administrators' page for verified questions (issue 16, part
//! 2), plain server-rendered HTML (no script, nothing added to the wasm bundle). It lists
//! the verified questions in force, each with a form to rename it and edit its phrasings
//! (one per line) and a button to retire it, and the recent answered questions of every
//! user (who asked, when, how many rows, which clarifications), each with a form to
//! verify it. Every post comes back to the page (303) with a notice
//! chosen by a code, never text from the URL.

use super::access_page::esc;
use crate::auth::AdminUser;
use crate::orchestrator::OrchestratorError;
use crate::state::AppState;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use std::collections::HashMap;

/// The page's path.
pub const PATH: &str = "/admin/verified";

/// How many recent answers of every user the page offers to verify.
const RECENT: i64 = 30;
/// How many of the administrator's own recent answers it always offers as well.
const OWN: i64 = 20;

/// `GET /admin/verified`.
pub async fn page(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let (verified, history) = match (
        state.orchestrator.verified_questions().await,
        state.orchestrator.recent_answers(RECENT).await,
        state.orchestrator.history(admin.id, OWN).await,
    ) {
        (Ok(v), Ok(mut h), Ok(own)) => {
            // the administrator's own recent answers stay offered however busy others are
            for item in own {
                if !h.iter().any(|(x, _)| x.id == item.id) {
                    h.push((item, admin.display_name.clone()));
                }
            }
            h.sort_by(|a, b| b.0.created_at.cmp(&a.0.created_at));
            (v, h)
        }
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            tracing::error!(error = %e, "the verified questions page could not be read");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong on our side.",
            )
                .into_response();
        }
    };
    let notice = match q.get("done").map(String::as_str) {
        Some("verified") => "Verified. Matching questions are answered by it from now on.",
        Some("saved") => "Saved.",
        Some("retired") => "Retired. New questions no longer match it.",
        Some("bad") => "Nothing was saved: give a name of 1 to 120 characters and at most 50 phrasings.",
        Some("missing") => "Nothing was saved: it no longer exists.",
        _ => "",
    };
    let mut current = String::new();
    for v in &verified {
        current.push_str(&format!(
            r#"<section class="rounded-lg border border-emerald-200 bg-white p-4" data-testid="verified-item">
<h3 class="font-semibold">{name}</h3>
<p class="text-sm text-slate-600">“{question}” · Verified by {by} · answered {uses} question(s)</p>
<form method="post" action="{PATH}" class="mt-2 flex flex-col gap-2">
<input type="hidden" name="action" value="edit"><input type="hidden" name="id" value="{id}">
<label class="text-sm">Name <input name="name" value="{name}" required maxlength="120" class="rounded border border-slate-300 px-2 py-1"></label>
<label class="text-sm">Phrasings, one per line<br><textarea name="phrasings" rows="3" class="w-full rounded border border-slate-300 px-2 py-1">{phrasings}</textarea></label>
<button type="submit" class="self-start rounded-md bg-teal-700 px-3 py-1.5 text-sm font-medium text-white">Save “{name}”</button>
</form>
<form method="post" action="{PATH}" class="mt-2"><input type="hidden" name="action" value="retire"><input type="hidden" name="id" value="{id}">
<button type="submit" class="rounded-md border border-rose-300 px-3 py-1.5 text-sm text-rose-800">Retire “{name}”</button></form>
</section>"#,
            name = esc(&v.name),
            question = esc(&v.question),
            by = esc(&v.verified_by_name),
            uses = v.use_count,
            id = v.id,
            phrasings = esc(&v.phrasings.join("\n")),
        ));
    }
    if current.is_empty() {
        current.push_str(r#"<p class="text-sm text-slate-600">None yet.</p>"#);
    }
    let mut answers = String::new();
    for (h, asker) in &history {
        answers.push_str(&format!(
            r#"<li class="rounded-lg border border-slate-200 bg-white p-3" data-testid="verify-candidate">
<p class="text-sm"><span class="font-medium">{question}</span> <span class="text-slate-600">asked by {asker} · {when} · {rows} row(s) · ({chosen})</span></p>
<form method="post" action="{PATH}" class="mt-1 flex flex-wrap items-end gap-2">
<input type="hidden" name="action" value="verify"><input type="hidden" name="history_id" value="{id}">
<label class="text-sm">Name <input name="name" required maxlength="120" class="rounded border border-slate-300 px-2 py-1"></label>
<label class="text-sm">More phrasings, one per line <textarea name="phrasings" rows="1" class="rounded border border-slate-300 px-2 py-1"></textarea></label>
<button type="submit" class="rounded-md bg-teal-700 px-3 py-1.5 text-sm font-medium text-white">Verify “{question}”</button>
</form></li>"#,
            question = esc(&h.question),
            asker = esc(asker),
            when = esc(h.created_at.get(..16).unwrap_or(&h.created_at).replace('T', " ").as_str()),
            rows = h.row_count,
            chosen = esc(&if h.chosen.is_empty() {
                "no clarification".to_owned()
            } else {
                h.chosen.join("; ")
            }),
            id = esc(&h.id),
        ));
    }
    if answers.is_empty() {
        answers.push_str(r#"<li class="text-sm text-slate-600">No answered questions yet.</li>"#);
    }
    let body = format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Verified questions · Clarion</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/pkg/clarion.css"></head>
<body class="bg-slate-50 text-slate-900">
<main class="mx-auto flex max-w-3xl flex-col gap-4 p-6">
<p class="text-sm"><a class="text-teal-700 underline" href="/">← Ask</a> · <a class="text-teal-700 underline" href="/admin/access">Clinic access</a> · <a class="text-teal-700 underline" href="/glossary">Glossary</a></p>
<h1 class="text-xl font-semibold">Verified questions</h1>
<p class="text-sm text-slate-600">A question that is one of a verified question's phrasings (compared in lower case, words only), or that Clarion reads into the same plan, is answered by the verified definition at once, shows “Verified by …”, and still covers only the asker's clinics.</p>
{notice}
<h2 class="text-lg font-semibold">In force</h2>
{current}
<h2 class="text-lg font-semibold">Verify a recent answer</h2>
<p class="text-sm text-slate-600">The {RECENT} most recent answers of every user and your own {OWN} most recent, newest first. Verifying one keeps the clarifications its asker answered; its figures are never shown here, and whoever asks it later sees only their own clinics.</p>
<ul class="flex flex-col gap-2">{answers}</ul>
</main></body></html>"#,
        notice = if notice.is_empty() {
            String::new()
        } else {
            format!(
                r#"<p role="status" class="rounded-md border border-teal-200 bg-teal-50 p-2 text-sm" data-testid="verified-notice">{notice}</p>"#
            )
        },
    );
    Html(body).into_response()
}

fn lines(text: Option<&String>) -> Vec<String> {
    text.map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// `POST /admin/verified`: `action` = `verify` (history_id, name, phrasings), `edit`
/// (id, name, phrasings) or `retire` (id).
pub async fn save(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let o = &state.orchestrator;
    let id = || form.get("id").and_then(|v| v.trim().parse::<i64>().ok());
    let name = form.get("name").map(String::as_str).unwrap_or("");
    let phrasings = lines(form.get("phrasings"));
    let result = match form.get("action").map(String::as_str) {
        Some("verify") => o
            .verify(
                admin.id,
                form.get("history_id").map(|h| h.trim()).unwrap_or(""),
                name,
                &phrasings,
            )
            .await
            .map(|_| "verified"),
        Some("edit") => match id() {
            Some(id) => o.edit_verified(id, name, &phrasings).await.map(|_| "saved"),
            None => Ok("bad"),
        },
        Some("retire") => match id() {
            Some(id) => o.retire_verified(id).await.map(|_| "retired"),
            None => Ok("bad"),
        },
        _ => Ok("bad"),
    };
    let done = match result {
        Ok(done) => done,
        Err(OrchestratorError::BadInput { .. }) => "bad",
        Err(OrchestratorError::NotFound) => "missing",
        Err(e) => {
            tracing::error!(error = %e, "a verified question could not be saved");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong on our side.",
            )
                .into_response();
        }
    };
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(&format!("{PATH}?done={done}")) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}
