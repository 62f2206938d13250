//! History (F19): the user's past questions, newest first, with the
//! clarifications and assumptions that shaped each answer; re-run one in a
//! click (a form post: it asks again with the same clarifications, in a new
//! thread) or open the thread it belongs to (which shows the stored answer).

use crate::components::ui::error_text;
use crate::components::ui::{EmptyState, PageHeader};
use crate::protocol::{AssumptionSource, HistoryItem, HistoryShow, HistoryStatus};
use crate::server_fns::get_history;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;
use leptos_router::hooks::use_query_map;

/// How many past questions the page lists.
const SHOWN: i64 = 100;

/// The History page.
#[component]
pub fn HistoryPage() -> impl IntoView {
    let query = use_query_map();
    // `?show=` filters on the server; the page shows every question by default.
    let show = query
        .read_untracked()
        .get("show")
        .and_then(|s| HistoryShow::parse(&s))
        .unwrap_or(HistoryShow::All);
    let history = Resource::new(move || show, |show| get_history(Some(SHOWN), Some(show)));
    // A failed re-run comes back here with a code (never text from the address).
    let rerun_error = query
        .read_untracked()
        .get("rerun_error")
        .map(|code| match code.as_str() {
            "not_found" => "That question is no longer in your history.",
            "timeout" => "The question took too long to run again. Try narrowing it on the Ask page.",
            "unanswerable" => "That question can no longer be answered as it was (the data or its definitions changed). Ask it again on the Ask page.",
            _ => "The question could not be run again. Please try again.",
        });
    // So does a feedback vote that could not be saved (or one on an answer without a thread).
    let feedback_error = query
        .read_untracked()
        .get("feedback_error")
        .map(|code| match code.as_str() {
            "not_found" => "That answer is no longer in your history, so the vote was not saved.",
            "comment_too_long" => {
                "The comment is longer than 1,000 characters; the vote was not saved. Please shorten it."
            }
            "bad_input" => {
                "That vote could not be read (a reason goes with thumbs down only). Please try again."
            }
            _ => "Your vote could not be saved. Please try again.",
        });
    let feedback_sent = query.read_untracked().get("feedback").as_deref() == Some("sent");
    let filters = [
        (HistoryShow::All, "All"),
        (HistoryShow::Answered, "Answered"),
        (HistoryShow::Refused, "Refused"),
        (HistoryShow::Failed, "Failed"),
    ];
    view! {
        <Title text="History" />
        <PageHeader
            title="History"
            subtitle="Your past questions, newest first, with the clarifications you gave and the assumptions Clarion made. Re-run any of them in one click."
        />
        {rerun_error.map(|m| view! {
            <p role="alert" class="mb-4 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800" data-testid="rerun-error">{m}</p>
        })}
        {feedback_error.map(|m| view! {
            <p role="alert" class="mb-4 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800" data-testid="feedback-error">{m}</p>
        })}
        {feedback_sent.then(|| view! {
            <p role="status" class="mb-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900" data-testid="feedback-sent">
                "Thanks — your feedback on the answer was saved."
            </p>
        })}
        <nav aria-label="Show" class="mb-4 flex flex-wrap gap-2 text-sm" data-testid="history-filter">
            {filters
                .into_iter()
                .map(|(f, label)| {
                    let current = f == show;
                    view! {
                        <a
                            href=format!("/history?show={}", f.as_str())
                            aria-current=current.then_some("page")
                            class=if current {
                                "rounded-full bg-teal-700 px-3 py-1 font-medium text-white"
                            } else {
                                "rounded-full border border-slate-300 bg-white px-3 py-1 font-medium text-slate-700 hover:bg-slate-50"
                            }
                        >
                            {label}
                        </a>
                    }
                })
                .collect_view()}
        </nav>
        <Transition fallback=|| view! { <div class="h-64 animate-pulse rounded-xl bg-slate-100"></div> }>
            {move || Suspend::new(async move {
                match history.await {
                    // A filter that matches nothing says so (the history itself may not be empty).
                    Ok(items) if items.is_empty() && show != HistoryShow::All => view! {
                        <p class="rounded-lg border border-dashed border-slate-300 bg-white px-4 py-3 text-sm text-slate-600" data-testid="history-none">
                            {match show {
                                HistoryShow::Answered => "No answered questions.",
                                HistoryShow::Refused => "No refused questions: Clarion has answered or asked about everything you asked.",
                                _ => "No failed questions.",
                            }}
                        </p>
                    }
                        .into_any(),
                    Ok(items) if items.is_empty() => view! {
                        <EmptyState
                            title="No questions yet"
                            body="Questions you ask appear here with the definitions that were applied, so you can repeat or refine them later."
                        >
                            <A href="/" attr:class="inline-flex rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2">
                                "Ask a question"
                            </A>
                        </EmptyState>
                    }
                        .into_any(),
                    Ok(items) => {
                        let n = items.len();
                        view! {
                            <p class="mb-3 text-sm text-slate-500" data-testid="history-count">
                                {if n == 1 { "1 question".to_string() } else { format!("{n} questions") }}
                            </p>
                            <ol class="flex flex-col gap-3" aria-label="Past questions" data-testid="history-list">
                                {items.into_iter().map(|item| view! { <HistoryRow item /> }).collect_view()}
                            </ol>
                        }
                            .into_any()
                    }
                    Err(e) => view! {
                        <p role="alert" class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                            "Your history could not be loaded: " {error_text(&e)}
                        </p>
                    }
                        .into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn HistoryRow(item: HistoryItem) -> impl IntoView {
    if item.status != HistoryStatus::Answered {
        return view! { <UnansweredRow item /> }.into_any();
    }
    // Re-run posts (a link must never run a query); threads live at `/threads/{id}`.
    let history_id = item.id.clone();
    let open = item
        .thread_id
        .as_ref()
        .map(|t| format!("/threads/{}", percent_encode(t)));
    let when = format_when(&item.created_at);
    let rows = match item.row_count {
        1 => "1 row".to_string(),
        n => format!("{n} rows"),
    };
    let duration = format!("{} ms", item.duration_ms);
    let rerun_label = format!("Re-run “{}”", item.question);
    let open_label = format!("Open thread: “{}”", item.question);
    view! {
        <li class="rounded-xl border border-slate-200 bg-white p-4 shadow-sm sm:p-5" data-testid="history-item">
            <div class="flex flex-col gap-3 md:flex-row md:items-start md:justify-between">
                <div class="min-w-0 flex-1">
                    <p class="text-base font-medium text-slate-900 break-words" data-testid="history-question">
                        {item.question.clone()}
                    </p>
                    <p class="mt-1 flex flex-wrap gap-x-3 gap-y-1 text-xs text-slate-500">
                        <time datetime=item.created_at.clone()>{when}</time>
                        <span aria-hidden="true">"·"</span>
                        <span data-testid="history-rows">{rows}</span>
                        <span aria-hidden="true">"·"</span>
                        <span>{duration}</span>
                    </p>
                    {(!item.assumptions.is_empty() || !item.chosen.is_empty()).then(|| view! {
                        <ul class="mt-3 flex flex-wrap gap-2" aria-label="Clarifications and assumptions">
                            {item.chosen.iter().map(|c| view! {
                                <li class="rounded-full border border-teal-300 bg-white px-3 py-1 text-xs text-teal-900" data-testid="history-chosen">
                                    {c.clone()}
                                    <span class="ml-1">"(you chose)"</span>
                                </li>
                            }).collect_view()}
                            // the choices are listed above ("you chose"), not again as badges
                            {item.assumptions.iter().filter(|a| a.source != AssumptionSource::Chosen).map(|a| {
                                let (tone, note) = match a.source {
                                    AssumptionSource::SavedDefinition => ("border-teal-200 bg-teal-50 text-teal-900", "your saved definition"),
                                    AssumptionSource::Chosen => ("border-teal-200 bg-teal-50 text-teal-900", "you chose"),
                                    AssumptionSource::UsualDefinition => ("border-teal-200 bg-teal-50 text-teal-900", "your usual definition"),
                                    AssumptionSource::Default => ("border-amber-200 bg-amber-50 text-amber-900", "best guess"),
                                    AssumptionSource::LowConfidence => ("border-slate-200 bg-slate-50 text-slate-800", "close match"),
                                    AssumptionSource::LanguageModel => ("border-violet-200 bg-violet-50 text-violet-900", "proposed by the language model"),
                                };
                                view! {
                                    <li class=format!("rounded-full border px-3 py-1 text-xs {tone}") data-testid="history-assumption">
                                        <span class="font-semibold">{a.piece.clone()}</span>
                                        {format!(" {} ", a.link())}
                                        {a.assumed.clone()}
                                        <span class="ml-1">{format!("({note})")}</span>
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    })}
                </div>
                <div class="flex shrink-0 gap-2">
                    <form method="post" action="/history/rerun">
                        <input type="hidden" name="history_id" value=history_id />
                        <button
                            type="submit"
                            aria-label=rerun_label
                            title="Ask it again with the same clarifications, against today's data"
                            class="inline-flex items-center rounded-lg bg-teal-700 px-3 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                        >
                            "Re-run"
                        </button>
                    </form>
                    {open.map(|href| view! {
                        <a
                            href=href
                            aria-label=open_label
                            class="inline-flex items-center rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm font-semibold text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                        >
                            "Open thread"
                        </a>
                    })}
                </div>
            </div>
        </li>
    }
    .into_any()
}

/// A question Clarion refused, or one that failed, with the message the user saw.
#[component]
fn UnansweredRow(item: HistoryItem) -> impl IntoView {
    let when = format_when(&item.created_at);
    let (badge, tone) = match item.status {
        HistoryStatus::Failed => ("Failed", "bg-red-100 text-red-900"),
        _ => ("Refused", "bg-amber-100 text-amber-900"),
    };
    let again = format!("/?q={}", percent_encode(&item.question));
    let again_label = format!("Ask again: “{}”", item.question);
    view! {
        <li class="rounded-xl border border-slate-200 bg-white p-4 shadow-sm sm:p-5" data-testid="history-item" data-status=badge.to_lowercase()>
            <div class="flex flex-col gap-3 md:flex-row md:items-start md:justify-between">
                <div class="min-w-0 flex-1">
                    <p class="text-base font-medium text-slate-900 break-words" data-testid="history-question">
                        {item.question.clone()}
                    </p>
                    <p class="mt-1 flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-500">
                        <span class=format!("rounded-full px-2 py-0.5 font-semibold {tone}") data-testid="history-status">{badge}</span>
                        <time datetime=item.created_at.clone()>{when}</time>
                    </p>
                    <p class="mt-2 text-sm text-slate-700" data-testid="history-message">
                        {item.message.clone().unwrap_or_default()}
                    </p>
                </div>
                <div class="flex shrink-0 gap-2">
                    <a
                        href=again
                        aria-label=again_label
                        title="Put the question back in the composer to rephrase it (nothing runs until you send it)"
                        class="inline-flex items-center rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm font-semibold text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                    >
                        "Ask again"
                    </a>
                </div>
            </div>
        </li>
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `2025-03-01T09:30:00.123+00:00` → `2025-03-01 09:30 UTC`. Pure text, so the
/// server's HTML and the hydrated page agree whatever the browser's time zone.
pub fn format_when(rfc3339: &str) -> String {
    match (rfc3339.get(0..10), rfc3339.get(11..16)) {
        (Some(date), Some(time)) if rfc3339.as_bytes().get(10) == Some(&b'T') => format!("{date} {time} UTC"),
        _ => rfc3339.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_survives_the_query_string() {
        assert_eq!(
            percent_encode("patients with large wounds & 10%?"),
            "patients%20with%20large%20wounds%20%26%2010%25%3F"
        );
        assert_eq!(percent_encode("cm²"), "cm%C2%B2");
    }

    #[test]
    fn timestamps_read_as_utc_minutes() {
        assert_eq!(
            format_when("2025-03-01T09:30:00.123+00:00"),
            "2025-03-01 09:30 UTC"
        );
        assert_eq!(format_when("garbage"), "garbage");
    }
}
