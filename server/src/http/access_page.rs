//! `/admin/access`: the administrators' page for clinic scopes (issue 16), rendered
//! on the server as plain HTML with one form per account (no script, so nothing is
//! added to the wasm bundle). A form post sets the account's scope and comes back to
//! the page (303) with a notice; the change applies to that account's next question.
//!
//! Every text on the page is escaped; the notice is chosen from fixed texts by a code
//! in the URL, never text from the URL.

use crate::auth::AdminUser;
use crate::state::AppState;
use crate::store::{ClinicScope, StoreError};
use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use std::collections::HashMap;

/// The page's path.
pub const PATH: &str = "/admin/access";

/// Escapes text for HTML element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    app::html::escape(s)
}

/// `GET /admin/access`.
pub async fn page(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let clinics = match state.orchestrator.clinics(&ClinicScope::All).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "the clinic list could not be read");
            Vec::new()
        }
    };
    let users = match state.store.list_users().await {
        Ok(u) => u,
        Err(e) => {
            tracing::error!(error = %e, "accounts could not be listed");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong on our side.",
            )
                .into_response();
        }
    };
    let notice = match q.get("saved").map(String::as_str) {
        Some("ok") => Some("Saved. It applies to the account's next question."),
        Some("bad") => Some("Nothing was saved: choose all clinics, or tick the clinics to allow."),
        Some("missing") => Some("Nothing was saved: that account no longer exists."),
        _ => None,
    };
    let mut rows = String::new();
    for u in users {
        let scope = match state.store.clinic_scope(u.id).await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "a clinic scope could not be read");
                continue;
            }
        };
        let all = scope == ClinicScope::All;
        let mut boxes = String::new();
        for (id, name) in &clinics {
            boxes.push_str(&format!(
                r#"<label class="flex items-center gap-2 text-sm"><input type="checkbox" name="clinic_{id}" value="on"{}> {} <span class="text-xs text-slate-500">(#{id})</span></label>"#,
                if scope.ids().is_some_and(|ids| ids.contains(id)) { " checked" } else { "" },
                esc(name)
            ));
        }
        rows.push_str(&format!(
            r#"<section class="rounded-lg border border-slate-200 bg-white p-4" data-testid="access-user" data-username="{user}">
<h2 class="text-base font-semibold text-slate-900">{name} <span class="text-sm font-normal text-slate-600">{user}{role}</span></h2>
<p class="text-sm text-slate-600" data-testid="access-current">Sees: {current}</p>
<form method="post" action="{PATH}" class="mt-2 flex flex-col gap-2">
<input type="hidden" name="user_id" value="{id}">
<label class="flex items-center gap-2 text-sm"><input type="radio" name="access" value="all"{all_checked}> All clinics</label>
<label class="flex items-center gap-2 text-sm"><input type="radio" name="access" value="some"{some_checked}> Only these clinics:</label>
<div class="ml-6 grid gap-1">{boxes}</div>
<button type="submit" class="self-start rounded-md bg-teal-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-teal-800">Save access for {user}</button>
</form>
</section>"#,
            user = esc(&u.username),
            name = esc(&u.display_name),
            role = if u.is_admin { ", administrator" } else { "" },
            current = esc(&describe(&scope, &clinics)),
            id = u.id,
            all_checked = if all { " checked" } else { "" },
            some_checked = if all { "" } else { " checked" },
        ));
    }
    let body = format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Clinic access · Clarion</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/pkg/clarion.css"></head>
<body class="bg-slate-50 text-slate-900">
<main class="mx-auto flex max-w-3xl flex-col gap-4 p-6">
<p class="text-sm"><a class="text-teal-700 underline" href="/">← Ask</a> · <a class="text-teal-700 underline" href="/admin/verified">Verified questions</a> · <a class="text-teal-700 underline" href="/settings">Settings</a></p>
<h1 class="text-xl font-semibold">Clinic access</h1>
<p class="text-sm text-slate-600">Which clinics each account may see. Every answer, option count, picker, re-run and replay of an account is limited to its clinics; a question naming another clinic is answered for its own clinics with a note. Signed in as {admin}.</p>
{notice}
{rows}
</main></body></html>"#,
        admin = esc(&admin.username),
        notice = notice
            .map(|n| format!(r#"<p role="status" class="rounded-md border border-teal-200 bg-teal-50 p-2 text-sm" data-testid="access-notice">{n}</p>"#))
            .unwrap_or_default(),
    );
    Html(body).into_response()
}

/// "all clinics", "none", or the clinics' names.
fn describe(scope: &ClinicScope, clinics: &[(i64, String)]) -> String {
    match scope.ids() {
        None => "all clinics".into(),
        Some([]) => "no clinics".into(),
        Some(ids) => ids
            .iter()
            .map(|id| {
                clinics
                    .iter()
                    .find(|c| c.0 == *id)
                    .map_or_else(|| format!("clinic #{id}"), |c| c.1.clone())
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The scope a posted form asks for: `access=all`, or `access=some` with a
/// `clinic_<id>=on` field per ticked clinic.
pub fn scope_from_form(form: &HashMap<String, String>) -> Option<ClinicScope> {
    match form.get("access").map(String::as_str) {
        Some("all") => Some(ClinicScope::All),
        Some("some") => {
            let mut ids = Vec::new();
            for k in form.keys() {
                if let Some(id) = k.strip_prefix("clinic_") {
                    ids.push(id.parse::<i64>().ok().filter(|i| *i > 0)?);
                }
            }
            Some(ClinicScope::clinics(ids))
        }
        _ => None,
    }
}

/// `POST /admin/access`.
pub async fn save(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let user_id = form.get("user_id").and_then(|v| v.trim().parse::<i64>().ok());
    let (Some(user_id), Some(scope)) = (user_id, scope_from_form(&form)) else {
        return see_other(&format!("{PATH}?saved=bad"));
    };
    match state.store.set_clinic_scope(user_id, &scope).await {
        Ok(()) => {
            tracing::info!(by = admin.id, user = user_id, scope = %scope.label(), "clinic scope changed");
            see_other(&format!("{PATH}?saved=ok"))
        }
        Err(StoreError::NotFound) => see_other(&format!("{PATH}?saved=missing")),
        Err(e) => {
            tracing::error!(error = %e, "a clinic scope could not be saved");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong on our side.",
            )
                .into_response()
        }
    }
}

fn see_other(location: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_reads_all_or_the_ticked_clinics_and_refuses_anything_else() {
        let f = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<HashMap<_, _>>()
        };
        assert_eq!(
            scope_from_form(&f(&[("access", "all"), ("clinic_2", "on")])),
            Some(ClinicScope::All)
        );
        assert_eq!(
            scope_from_form(&f(&[("access", "some"), ("clinic_3", "on"), ("clinic_1", "on")])),
            Some(ClinicScope::Clinics(vec![1, 3]))
        );
        assert_eq!(
            scope_from_form(&f(&[("access", "some")])),
            Some(ClinicScope::Clinics(vec![]))
        );
        assert_eq!(
            scope_from_form(&f(&[("access", "some"), ("clinic_x", "on")])),
            None
        );
        assert_eq!(scope_from_form(&f(&[])), None);
        assert_eq!(esc("<b a=\"x\">&'"), "&lt;b a=&quot;x&quot;&gt;&amp;&#39;");
    }
}
