//! Saved questions (F27), server-rendered (no island: nothing added to the wasm).
//!
//! `/saved` lists the user's saved questions with the choices each was answered with;
//! "Run" posts (a link must never run a query) and opens the answer in a new thread,
//! asked with exactly those choices — never a clarification panel. A saved question
//! whose definition no longer applies (a value gone from the data, a retired verified
//! definition …) says what changed and offers to ask it afresh instead of running.
//! Rename and Delete are forms too. `/saved/new?history=<id>` is the "Save" form an
//! answer links to. Every post comes back with a notice chosen by a code, never text
//! from the address.
//!
//! Server only: the pages read through the backend directly (no server function) and
//! the browser build gets empty stand-ins, so the wasm bundle does not grow.

#[cfg(not(feature = "ssr"))]
use leptos::prelude::*;

#[cfg(feature = "ssr")]
pub use ssr::{SaveQuestionPage, SavedPage};

/// The browser build's stand-in (the page is never hydrated).
#[cfg(not(feature = "ssr"))]
#[component]
pub fn SavedPage() -> impl IntoView {}

/// The browser build's stand-in (the page is never hydrated).
#[cfg(not(feature = "ssr"))]
#[component]
pub fn SaveQuestionPage() -> impl IntoView {}

/// Where every form of these pages posts.
pub const ACTION: &str = "/saved/action";

#[cfg(feature = "ssr")]
mod ssr {
    use super::ACTION;
    use crate::components::ui::{EmptyState, PageHeader, error_text};
    use crate::pages::history::{format_when, percent_encode};
    use crate::protocol::{HistoryItem, SavedQuestion};
    use crate::server_fns::ssr::{backend, require_user, to_sfe};
    use leptos::prelude::*;
    use leptos_meta::Title;
    use leptos_router::components::A;
    use leptos_router::hooks::use_query_map;

    async fn get_saved() -> Result<Vec<SavedQuestion>, ServerFnError> {
        let user = require_user()?;
        backend()?.saved_questions(&user).await.map_err(to_sfe)
    }

    async fn get_saved_draft(history_id: String) -> Result<HistoryItem, ServerFnError> {
        let user = require_user()?;
        backend()?.saved_draft(&user, history_id).await.map_err(to_sfe)
    }

    const BUTTON: &str = "inline-flex items-center rounded-lg bg-teal-700 px-3 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2";
    const SECONDARY: &str = "inline-flex items-center rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm font-semibold text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2";
    const INPUT: &str = "rounded-lg border border-slate-300 px-3 py-2 text-sm text-slate-900 focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600";

    /// The notice for a code in `?done=` (never text from the address).
    pub(super) fn notice(code: &str) -> Option<(bool, &'static str)> {
        Some(match code {
            "saved" => (
                true,
                "Saved. Run it from here any time: it uses exactly the choices below, on today's data.",
            ),
            "renamed" => (true, "Renamed."),
            "deleted" => (true, "Deleted."),
            "stale" => (
                false,
                "That saved question no longer applies, so it was not run. See what changed below, and ask it afresh to choose again.",
            ),
            "missing" => (false, "That saved question or answer no longer exists."),
            "bad_name" => (false, "Nothing was changed: give a name of 1 to 120 characters."),
            "timeout" => (
                false,
                "The question took too long to run. Try narrowing it on the Ask page.",
            ),
            "unanswerable" => (
                false,
                "That question can no longer be answered as it was. Ask it afresh on the Ask page.",
            ),
            "full" => (
                false,
                "You have as many saved questions as Clarion keeps: delete one first.",
            ),
            "failed" => (false, "Something went wrong. Please try again."),
            _ => return None,
        })
    }

    fn notice_view(code: Option<String>) -> impl IntoView {
        code.as_deref().and_then(notice).map(|(ok, text)| {
            let class = if ok {
                "mb-4 rounded-lg border border-teal-200 bg-teal-50 px-4 py-3 text-sm text-teal-900"
            } else {
                "mb-4 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800"
            };
            view! { <p role=if ok { "status" } else { "alert" } class=class data-testid="saved-notice">{text}</p> }
        })
    }

    /// `/saved`: the user's saved questions.
    #[component]
    pub fn SavedPage() -> impl IntoView {
        let saved = Resource::new(|| (), |_| get_saved());
        let done = use_query_map().read_untracked().get("done");
        view! {
            <Title text="Saved questions" />
            <PageHeader
                title="Saved questions"
                subtitle="Questions you saved with the choices you made. Run one to see today's figures for exactly the same definition — Clarion never asks again, and you only see your clinics."
            />
            {notice_view(done)}
            <Transition fallback=|| view! { <div class="h-64 animate-pulse rounded-xl bg-slate-100"></div> }>
                {move || Suspend::new(async move {
                    match saved.await {
                        Ok(items) if items.is_empty() => view! {
                            <EmptyState
                                title="No saved questions yet"
                                body="Answer a question on the Ask page, then choose “Save” under the answer to keep it here with its clarifications."
                            >
                                <A href="/" attr:class=BUTTON>"Ask a question"</A>
                            </EmptyState>
                        }
                            .into_any(),
                        Ok(items) => view! {
                            <ol class="flex flex-col gap-3" aria-label="Saved questions" data-testid="saved-list">
                                {items.into_iter().map(|item| view! { <SavedRow item /> }).collect_view()}
                            </ol>
                        }
                            .into_any(),
                        Err(e) => view! {
                            <p role="alert" class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                                "Your saved questions could not be loaded: " {error_text(&e)}
                            </p>
                        }
                            .into_any(),
                    }
                })}
            </Transition>
        }
    }

    #[component]
    fn SavedRow(item: SavedQuestion) -> impl IntoView {
        let id = item.id.clone();
        let afresh = format!("/?q={}", percent_encode(&item.question));
        let last = match (&item.last_run_at, item.run_count) {
            (Some(t), n) => format!(
                "run {n} time{} · last {}",
                if n == 1 { "" } else { "s" },
                format_when(t)
            ),
            (None, _) => "never run".to_string(),
        };
        let run_label = format!("Run “{}”", item.name);
        let rename_label = format!("New name for “{}”", item.name);
        let delete_label = format!("Delete “{}”", item.name);
        let afresh_label = format!("Ask afresh: “{}”", item.question);
        let field = format!("rename-{}", item.id);
        view! {
            <li
                class=if item.applies {
                    "rounded-xl border border-slate-200 bg-white p-4 shadow-sm sm:p-5"
                } else {
                    "rounded-xl border border-amber-300 bg-amber-50/40 p-4 shadow-sm sm:p-5"
                }
                data-testid="saved-item"
                data-applies=item.applies.to_string()
            >
                <div class="flex flex-col gap-3 md:flex-row md:items-start md:justify-between">
                    <div class="min-w-0 flex-1">
                        <h2 class="text-base font-semibold text-slate-900 break-words" data-testid="saved-name">{item.name.clone()}</h2>
                        <p class="mt-0.5 text-sm text-slate-700 break-words" data-testid="saved-question">"“" {item.question.clone()} "”"</p>
                        <p class="mt-1 flex flex-wrap gap-x-3 gap-y-1 text-xs text-slate-500">
                            <span>"saved " {format_when(&item.created_at)}</span>
                            <span aria-hidden="true">"·"</span>
                            <span>{last}</span>
                        </p>
                        {(!item.chosen.is_empty() || item.verified.is_some()).then(|| view! {
                            <ul class="mt-3 flex flex-wrap gap-2" aria-label="Definition it runs with">
                                {item.verified.clone().map(|v| view! {
                                    <li class="rounded-full border border-emerald-300 bg-emerald-50 px-3 py-1 text-xs text-emerald-900">{v}</li>
                                })}
                                {item.chosen.iter().map(|c| view! {
                                    <li class="rounded-full border border-teal-300 bg-white px-3 py-1 text-xs text-teal-900" data-testid="saved-chosen">
                                        {c.clone()}
                                        <span class="ml-1">"(you chose)"</span>
                                    </li>
                                }).collect_view()}
                            </ul>
                        })}
                        {(!item.applies).then(|| view! {
                            <div class="mt-3 rounded-lg border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950" data-testid="saved-stale">
                                <p class="font-semibold">"No longer applies — not run, so the records are never silently different"</p>
                                <ul class="mt-1 list-disc pl-5">
                                    {item.changes.iter().map(|c| view! { <li>{c.clone()}</li> }).collect_view()}
                                </ul>
                            </div>
                        })}
                    </div>
                    <div class="flex shrink-0 flex-wrap gap-2">
                        {if item.applies {
                            view! {
                                <form method="post" action=ACTION>
                                    <input type="hidden" name="action" value="run" />
                                    <input type="hidden" name="id" value=id.clone() />
                                    <button type="submit" aria-label=run_label class=BUTTON title="Run it on today's data with exactly these choices">"Run"</button>
                                </form>
                            }
                                .into_any()
                        } else {
                            view! {
                                <a href=afresh aria-label=afresh_label class=BUTTON data-testid="saved-afresh">"Ask afresh"</a>
                            }
                                .into_any()
                        }}
                        <form method="post" action=ACTION>
                            <input type="hidden" name="action" value="delete" />
                            <input type="hidden" name="id" value=id.clone() />
                            <button type="submit" aria-label=delete_label class=SECONDARY>"Delete"</button>
                        </form>
                    </div>
                </div>
                <form method="post" action=ACTION class="mt-3 flex flex-wrap items-center gap-2">
                    <input type="hidden" name="action" value="rename" />
                    <input type="hidden" name="id" value=id />
                    <label for=field.clone() class="sr-only">{rename_label}</label>
                    <input id=field name="name" value=item.name.clone() required maxlength="120" class=INPUT />
                    <button type="submit" class=SECONDARY>"Rename"</button>
                </form>
            </li>
        }
    }

    /// `/saved/new?history=<id>`: name one of your answers and save it.
    #[component]
    pub fn SaveQuestionPage() -> impl IntoView {
        let query = use_query_map().read_untracked();
        let history_id = query.get("history").unwrap_or_default();
        let error = query.get("error");
        let draft = Resource::new(move || history_id.clone(), get_saved_draft);
        view! {
            <Title text="Save question" />
            <PageHeader
                title="Save question"
                subtitle="Keep this question with the choices you made, under a name. Running it later uses exactly these choices on that day's data and never asks again."
            />
            {notice_view(error)}
            <Transition fallback=|| view! { <div class="h-40 animate-pulse rounded-xl bg-slate-100"></div> }>
                {move || Suspend::new(async move {
                    match draft.await {
                        Ok(item) => {
                            let default_name: String = item.question.chars().take(120).collect();
                            view! {
                                <form method="post" action=ACTION class="flex max-w-2xl flex-col gap-4 rounded-xl border border-slate-200 bg-white p-5 shadow-sm" data-testid="save-form">
                                    <input type="hidden" name="action" value="save" />
                                    <input type="hidden" name="history_id" value=item.id.clone() />
                                    <div>
                                        <p class="text-sm text-slate-500">"Question"</p>
                                        <p class="text-base font-medium text-slate-900 break-words">{item.question.clone()}</p>
                                    </div>
                                    <div>
                                        <p class="text-sm text-slate-500">"Answered with"</p>
                                        {if item.chosen.is_empty() {
                                            view! { <p class="text-sm text-slate-700">"No clarification: Clarion's reading and the assumptions shown with the answer."</p> }.into_any()
                                        } else {
                                            view! {
                                                <ul class="mt-1 flex flex-wrap gap-2">
                                                    {item.chosen.iter().map(|c| view! {
                                                        <li class="rounded-full border border-teal-300 bg-white px-3 py-1 text-xs text-teal-900">{c.clone()}</li>
                                                    }).collect_view()}
                                                </ul>
                                            }.into_any()
                                        }}
                                    </div>
                                    <label class="flex flex-col gap-1 text-sm font-medium text-slate-800">
                                        "Name"
                                        <input name="name" value=default_name required maxlength="120" class=INPUT />
                                    </label>
                                    <div class="flex gap-2">
                                        <button type="submit" class=BUTTON>"Save question"</button>
                                        <A href="/saved" attr:class=SECONDARY>"Cancel"</A>
                                    </div>
                                </form>
                            }
                                .into_any()
                        }
                        Err(e) => view! {
                            <p role="alert" class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                                "That answer cannot be saved: " {error_text(&e)}
                            </p>
                        }
                            .into_any(),
                    }
                })}
            </Transition>
        }
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::ssr::notice;

    #[test]
    fn every_code_the_form_handler_sends_has_a_notice() {
        for code in [
            "saved",
            "renamed",
            "deleted",
            "stale",
            "missing",
            "bad_name",
            "timeout",
            "unanswerable",
            "full",
            "failed",
        ] {
            assert!(notice(code).is_some(), "{code}");
        }
        assert!(notice("<script>").is_none());
    }
}
