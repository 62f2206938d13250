//! Ask: the thread of questions and answers, with the composer (F5–F9, F16, F18).
//!
//! Each exchange is a card: the question, then whatever Clarion made of it — the
//! thinking while it works, a clarification panel, the answer. Threads are addressable
//! (`/threads/:id`): the page loads the stored thread on the server, so reloading keeps
//! the conversation and someone else's thread id shows a not-found state.
//!
//! Data only through the server functions; no browser API during render.

use crate::components::answer::{AnswerCard, AssumptionBadge, Revision, SqlBlock, ThinkingSteps};
use crate::components::chart::Chart;
use crate::components::clarify::ClarificationPanel;
use crate::components::results::ResultsTable;
use crate::components::ui::error_text;
use crate::protocol::{
    Answer, AskRequest, AskVia, ClarificationRound, ClarifyAnswer, ClarifyRequest, HistoryItem, Outcome,
    ResultTable, ReviseRequest, ThreadView,
};
use crate::server_fns::{ask, clarify, get_thread, replay, revise};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};
use serde::{Deserialize, Serialize};

const EXAMPLES: [&str; 4] = [
    "How many open wounds are there by clinic?",
    "Show me patients with serious wounds",
    "Average healing time of venous leg ulcers last year",
    "Which pressure injuries are not improving?",
];

/// Longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 1000;

/// Where an exchange is.
#[derive(Clone, Debug, PartialEq)]
enum Stage {
    Working,
    Clarify(ClarificationRound),
    Answered(Answer),
    Cancelled,
}

/// One question asked in this page view.
#[derive(Clone, Copy)]
struct Live {
    id: u32,
    question: StoredValue<String>,
    stage: RwSignal<Stage>,
    /// The last failed clarify/revise, shown in the card.
    error: RwSignal<Option<String>>,
    busy: RwSignal<bool>,
}

/// A stored thread, as loaded for `/threads/:id`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Restored {
    exchanges: Vec<RestoredExchange>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct RestoredExchange {
    question: String,
    steps: Vec<RestoredStep>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum RestoredStep {
    /// Clarion asked (the round's reason).
    Asked(String),
    /// The user answered a round.
    Chose(String),
    /// An answer (its restatement and history entry).
    Answer {
        restatement: String,
        history: Option<Box<HistoryItem>>,
        /// Its rows as they were shown then (`None`: not kept, for older answers).
        rows: Option<Box<ResultTable>>,
    },
}

fn restore(t: ThreadView, history: Vec<HistoryItem>) -> Restored {
    let mut exchanges: Vec<RestoredExchange> = Vec::new();
    for m in t.messages {
        match (m.role.as_str(), m.kind.as_str()) {
            ("user", "question") => exchanges.push(RestoredExchange {
                question: m.body,
                steps: Vec::new(),
            }),
            (_, kind) => {
                let Some(ex) = exchanges.last_mut() else { continue };
                let step = match kind {
                    "clarification" => RestoredStep::Asked(m.body),
                    "answer" => RestoredStep::Answer {
                        restatement: m.body,
                        history: m
                            .history_id
                            .as_ref()
                            .and_then(|id| history.iter().find(|h| &h.id == id).cloned().map(Box::new)),
                        rows: None,
                    },
                    _ => RestoredStep::Chose(m.body),
                };
                ex.steps.push(step);
            }
        }
    }
    Restored { exchanges }
}

/// Points the address bar at the thread without a navigation (keeps the page state).
fn show_thread_url(id: &str) {
    use leptos::wasm_bindgen::{JsCast, JsValue};
    use leptos::web_sys::js_sys::{Function, Reflect};
    let path = format!("/threads/{id}");
    let win: JsValue = window().into();
    if window().location().pathname().ok().as_deref() == Some(path.as_str()) {
        return;
    }
    let Ok(history) = Reflect::get(&win, &JsValue::from_str("history")) else {
        return;
    };
    if let Ok(f) = Reflect::get(&history, &JsValue::from_str("replaceState"))
        && let Ok(f) = f.dyn_into::<Function>()
    {
        let _ = f.call3(
            &history,
            &JsValue::NULL,
            &JsValue::from_str(""),
            &JsValue::from_str(&path),
        );
    }
}

/// The composer's text as the user left it before the island hydrated.
fn typed_before_hydration() -> String {
    #[cfg(feature = "hydrate")]
    {
        crate::components::ui::field_value("question").unwrap_or_default()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        String::new()
    }
}

/// Scrolls an exchange's card to the top of the view (below the sticky header), once
/// the new content has been laid out.
fn reveal(id: u32) {
    request_animation_frame(move || {
        if let Some(el) = document().get_element_by_id(&format!("exchange-{id}")) {
            el.scroll_into_view_with_bool(true);
        }
    });
}

/// Loads a stored thread with each answer's rows as they were shown: opening a thread
/// runs no query (running one again is the explicit "Run again"). `Err` is the message
/// to show instead.
async fn load_thread(id: String) -> Result<Restored, String> {
    let mut t = get_thread(id).await.map_err(|e| error_text(&e))?;
    let answers = std::mem::take(&mut t.answers);
    let history: Vec<HistoryItem> = answers.iter().map(|a| a.history.clone()).collect();
    let mut restored = restore(t, history);
    for step in restored.exchanges.iter_mut().flat_map(|e| e.steps.iter_mut()) {
        if let RestoredStep::Answer {
            history: Some(h),
            rows,
            ..
        } = step
        {
            *rows = answers
                .iter()
                .find(|a| a.history.id == h.id)
                .and_then(|a| a.table.clone())
                .map(Box::new);
        }
    }
    Ok(restored)
}

/// The Ask page (`/` and `/threads/:id`). Rendered on the server only: it reads the
/// route, loads a stored thread, and hands both to the [`AskThread`] island, so the
/// browser gets the thread as the island's props and needs no resource of its own.
#[component]
pub fn AskPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let thread = params.read_untracked().get("id");
    let q = query.read_untracked().get("q");
    // The answer's feedback form comes back here (a fixed flag, never text from the URL).
    let feedback = thread
        .as_ref()
        .and_then(|_| FeedbackBanner::read(&query.read_untracked()));
    let key = thread.clone();
    let loaded = Resource::new_blocking(
        move || key.clone(),
        |id| async move {
            match id {
                Some(id) => Some(load_thread(id).await),
                None => None,
            }
        },
    );
    view! {
        <Title text="Ask" />
        {feedback.map(|f| f.view())}
        <Suspense fallback=|| view! { <div class="h-40 animate-pulse rounded-xl bg-slate-100"></div> }>
            {move || {
                let (thread, q) = (thread.clone(), q.clone());
                Suspend::new(async move {
                    let restored = loaded.await;
                    view! { <AskThread thread q restored /> }
                })
            }}
        </Suspense>
    }
}

/// What a thread shows after its answer's feedback form was posted (server markup only:
/// none of this is in the browser bundle). `?feedback=sent`: a confirmation;
/// `?feedback=down&answer=<id>`: "noted", and the optional reason and comment for that
/// thumbs down. Only fixed words and a hex id are taken from the address.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FeedbackBanner {
    Sent,
    Down(String),
}

impl FeedbackBanner {
    fn read(q: &leptos_router::params::ParamsMap) -> Option<Self> {
        match q.get("feedback").as_deref() {
            Some("sent") => Some(FeedbackBanner::Sent),
            Some("down") => q
                .get("answer")
                .filter(|a| a.len() == 32 && a.bytes().all(|b| b.is_ascii_hexdigit()))
                .map(FeedbackBanner::Down),
            _ => None,
        }
    }

    fn view(self) -> impl IntoView {
        const FIELD: &str = "rounded-lg border border-slate-300 bg-white px-2 py-1 text-sm";
        match self {
            FeedbackBanner::Sent => view! {
                <p role="status" class="mb-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900" data-testid="feedback-sent">
                    "Thanks — your feedback on the answer was saved. You can change your vote at any time."
                </p>
            }
            .into_any(),
            FeedbackBanner::Down(history_id) => view! {
                <form
                    method="post"
                    action="/feedback"
                    class="mb-4 flex flex-col gap-3 rounded-lg border border-amber-200 bg-amber-50 px-4 py-3 text-sm text-slate-800"
                    data-testid="feedback-reason"
                >
                    <p role="status" class="font-medium text-amber-900">
                        "Thanks — noted 👎. What was wrong? (optional, helps Clarion improve)"
                    </p>
                    <input type="hidden" name="history_id" value=history_id />
                    <input type="hidden" name="rating" value="down" />
                    <div class="flex flex-wrap items-end gap-3">
                        <label class="flex flex-col gap-1">
                            "Reason"
                            <select name="reason" class=FIELD>
                                <option value="">"Choose a reason"</option>
                                <option value="wrong_cohort">"Wrong patients or wounds counted"</option>
                                <option value="wrong_numbers">"Wrong numbers"</option>
                                <option value="too_many_questions">"Too many questions first"</option>
                                <option value="other">"Other (say what below)"</option>
                            </select>
                        </label>
                        <label class="flex min-w-64 flex-1 flex-col gap-1">
                            "Comment (optional, up to 1,000 characters)"
                            <textarea name="comment" maxlength="1000" rows="2" class=FIELD></textarea>
                        </label>
                        <button
                            type="submit"
                            class="rounded-lg bg-teal-700 px-3 py-2 font-semibold text-white hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                        >
                            "Send reason"
                        </button>
                    </div>
                </form>
            }
            .into_any(),
        }
    }
}

/// Everything on the Ask page that reacts: the thread, the panels, the composer.
#[island]
fn AskThread(
    /// The stored thread this page opened (`/threads/:id`), if any.
    thread: Option<String>,
    /// A question from a link (`/?q=…`): put in the composer, never sent by itself
    /// (a link must not run a query for whoever opens it).
    q: Option<String>,
    /// That thread as loaded on the server, or why it could not be opened.
    restored: Option<Result<Restored, String>>,
) -> impl IntoView {
    let route = StoredValue::new(thread.clone());
    let thread_id = RwSignal::new(thread.clone());
    let thread_failed = matches!(restored, Some(Err(_)));

    let from_link: Option<String> = q
        .filter(|q| thread.is_none() && !q.trim().is_empty())
        .map(|q| q.trim().chars().take(MAX_QUESTION_CHARS).collect());
    let (draft, set_draft) = signal(from_link.clone().unwrap_or_default());
    // The island hydrates when the browser is idle; what was typed before then is read
    // before hydrating `prop:value` clears it, and put back once the island is live (so
    // Send's state follows it too).
    let typed_early = StoredValue::new(typed_before_hydration());
    Effect::new(move |_| {
        let text = typed_early.get_value();
        if !text.is_empty() {
            set_draft.set(text);
        }
    });
    let live = RwSignal::new(Vec::<Live>::new());
    let running = RwSignal::new(false);
    let ask_error = RwSignal::new(None::<String>);
    let announce = RwSignal::new(String::new());
    let next_id = StoredValue::new(0u32);
    let textarea = NodeRef::<leptos::html::Textarea>::new();

    let trimmed_len = move || draft.with(|d| d.trim().chars().count());
    let panel_open =
        move || live.with(|v| v.iter().any(|e| e.stage.with(|s| matches!(s, Stage::Clarify(_)))));
    let can_send = move || {
        let n = trimmed_len();
        n > 0 && n <= MAX_QUESTION_CHARS && !running.get()
    };
    let focus_composer = move || {
        if let Some(t) = textarea.get_untracked() {
            let _ = t.focus();
        }
    };

    // An outcome arrived for `ex` (from ask or clarify).
    let apply = move |ex: Live, outcome: Outcome| {
        reveal(ex.id);
        match outcome {
            Outcome::Answered(a) => {
                thread_id.set(Some(a.thread_id.clone()));
                show_thread_url(&a.thread_id);
                announce.set(format!(
                    "Answer ready: {} rows. {}",
                    a.table.row_count, a.restatement
                ));
                ex.stage.set(Stage::Answered(a));
            }
            Outcome::NeedsClarification(r) => {
                thread_id.set(Some(r.thread_id.clone()));
                show_thread_url(&r.thread_id);
                announce.set(format!("Clarion has a question: {}", r.reason));
                ex.stage.set(Stage::Clarify(r));
            }
        }
    };

    let send_text = move |text: String, via: Option<AskVia>| {
        let question = text.trim().to_string();
        let n = question.chars().count();
        if running.get_untracked() || n == 0 || n > MAX_QUESTION_CHARS {
            return;
        }
        // A new question leaves any open panel unanswered.
        for ex in live.get_untracked() {
            if let Stage::Clarify(r) = ex.stage.get_untracked() {
                cancel_round(r.clarification_id);
                ex.stage.set(Stage::Cancelled);
            }
        }
        let id = next_id.get_value();
        next_id.set_value(id + 1);
        let ex = Live {
            id,
            question: StoredValue::new(question.clone()),
            stage: RwSignal::new(Stage::Working),
            error: RwSignal::new(None),
            busy: RwSignal::new(true),
        };
        live.update(|v| v.push(ex));
        reveal(id);
        ask_error.set(None);
        set_draft.set(String::new());
        running.set(true);
        announce.set("Working on your question…".into());
        spawn_local(async move {
            let req = AskRequest {
                question: question.clone(),
                // A thread that could not be opened is not followed up on.
                thread_id: thread_id
                    .get_untracked()
                    .filter(|t| !(thread_failed && route.with_value(|r| r.as_ref() == Some(t)))),
                interactive: None,
                via,
            };
            let res = ask(req).await;
            running.set(false);
            ex.busy.set(false);
            match res {
                Ok(outcome) => {
                    let panel = matches!(outcome, Outcome::NeedsClarification(_));
                    apply(ex, outcome);
                    if !panel {
                        focus_composer();
                    }
                }
                Err(e) => {
                    // Nothing is lost: the question goes back into the composer.
                    live.update(|v| v.retain(|x| x.id != id));
                    if draft.get_untracked().trim().is_empty() {
                        set_draft.set(question);
                    }
                    let msg = error_text(&e);
                    announce.set(String::new());
                    ask_error.set(Some(msg));
                    focus_composer();
                }
            }
        });
    };
    let send = move || send_text(draft.get_untracked(), None);

    // `/?q=…` only fills the composer (above); the clinician reads it and sends it.
    let from_link = StoredValue::new(from_link);

    let on_suggest = Callback::new(move |text: String| {
        set_draft.set(text.clone());
        send_text(text, Some(AskVia::Suggestion));
    });

    let submit_round = move |ex: Live, round: ClarificationRound, answers: Vec<ClarifyAnswer>| {
        if running.get_untracked() {
            return;
        }
        ex.error.set(None);
        ex.busy.set(true);
        running.set(true);
        spawn_local(async move {
            let res = clarify(ClarifyRequest {
                clarification_id: round.clarification_id.clone(),
                answers,
            })
            .await;
            running.set(false);
            ex.busy.set(false);
            match res {
                Ok(outcome) => {
                    let answered = matches!(outcome, Outcome::Answered(_));
                    apply(ex, outcome);
                    if answered {
                        focus_composer();
                    }
                }
                // Shown in the panel; every choice stays as the user left it.
                Err(e) => ex.error.set(Some(error_text(&e))),
            }
        });
    };

    let revise_answer =
        move |ex: Option<Live>, target: RwSignal<Option<Answer>>, history_id: String, rev: Revision| {
            if running.get_untracked() {
                return;
            }
            let (ambiguity_id, option_id) = rev;
            if let Some(ex) = ex {
                ex.error.set(None);
                ex.busy.set(true);
            }
            running.set(true);
            announce.set("Re-running with your change…".into());
            spawn_local(async move {
                let res = revise(ReviseRequest {
                    history_id,
                    ambiguity_id,
                    option_id: Some(option_id),
                    custom: None,
                })
                .await;
                running.set(false);
                if let Some(ex) = ex {
                    ex.busy.set(false);
                }
                match res {
                    Ok(a) => {
                        announce.set(format!("Re-ran: {} rows. {}", a.table.row_count, a.restatement));
                        match ex {
                            Some(ex) => ex.stage.set(Stage::Answered(a)),
                            None => target.set(Some(a)),
                        }
                    }
                    Err(e) => {
                        let msg = error_text(&e);
                        match ex {
                            Some(ex) => ex.error.set(Some(msg)),
                            None => ask_error.set(Some(msg)),
                        }
                    }
                }
            });
        };

    let exchange_view = move |ex: Live| {
        let question = ex.question.get_value();
        let busy = Signal::derive(move || ex.busy.get());
        let running_sig = Signal::derive(move || running.get());
        let body = move || match ex.stage.get() {
            Stage::Working => view! { <Working /> }.into_any(),
            Stage::Cancelled => view! {
                <p class="text-sm text-slate-500" data-testid="cancelled">
                    "Cancelled — nothing was run. Ask again or rephrase the question below."
                </p>
            }
            .into_any(),
            Stage::Clarify(round) => {
                let r2 = round.clone();
                let cid = round.clarification_id.clone();
                let thinking = round.thinking.clone();
                view! {
                    <div class="flex flex-col gap-3">
                        <ClarificationPanel
                            round=round
                            on_submit=Callback::new(move |answers| submit_round(ex, r2.clone(), answers))
                            on_cancel=Callback::new(move |_| {
                                cancel_round(cid.clone());
                                ex.stage.set(Stage::Cancelled);
                                focus_composer();
                            })
                            busy=busy
                            error=Signal::derive(move || ex.error.get())
                        />
                        <ThinkingSteps steps=thinking />
                    </div>
                }
                .into_any()
            }
            Stage::Answered(a) => {
                let hid = a.history_id.clone();
                let sink = RwSignal::new(None::<Answer>);
                view! {
                    <AnswerCard
                        answer=a
                        on_revise=Callback::new(move |rev| revise_answer(Some(ex), sink, hid.clone(), rev))
                        on_suggest=on_suggest
                        busy=running_sig
                    />
                }
                .into_any()
            }
        };
        view! {
            <li id=format!("exchange-{}", ex.id) class="scroll-mt-20 rounded-xl border border-slate-200 bg-white shadow-sm" data-testid="exchange">
                <div class="flex items-start gap-3 border-b border-slate-100 px-5 py-3.5">
                    <span class="mt-0.5 rounded bg-slate-100 px-2 py-0.5 text-xs font-medium uppercase tracking-wide text-slate-600">
                        "You"
                    </span>
                    <p class="min-w-0 flex-1 whitespace-pre-wrap break-words text-sm text-slate-900" data-testid="exchange-question">{question}</p>
                </div>
                <div class="flex flex-col gap-3 px-5 py-4">
                    {body}
                    {move || ex.error.get().filter(|_| !matches!(ex.stage.get(), Stage::Clarify(_))).map(|m| view! {
                        <p class="text-sm font-medium text-rose-700" role="alert">{m}</p>
                    })}
                </div>
            </li>
        }
    };

    let restored_view = move |r: Restored| {
        let items = r
            .exchanges
            .into_iter()
            .map(|ex| {
                let q = ex.question.clone();
                let steps = ex
                    .steps
                    .into_iter()
                    .map(|s| match s {
                        RestoredStep::Asked(reason) => view! {
                            <p class="text-sm text-slate-600"><span class="font-medium text-slate-700">"Clarion asked: "</span>{reason}</p>
                        }
                        .into_any(),
                        RestoredStep::Chose(body) => view! {
                            <p class="text-xs text-slate-600">"You chose: "{body}</p>
                        }
                        .into_any(),
                        RestoredStep::Answer { restatement, history, rows } => view! {
                            <RestoredAnswer
                                restatement=restatement
                                history=history
                                rows=rows
                                on_revise=Callback::new(move |(target, hid, rev): (RwSignal<Option<Answer>>, String, Revision)| revise_answer(None, target, hid, rev))
                                on_suggest=on_suggest
                                busy=Signal::derive(move || running.get())
                            />
                        }
                        .into_any(),
                    })
                    .collect_view();
                let rerun = q.clone();
                view! {
                    <li class="rounded-xl border border-slate-200 bg-white shadow-sm" data-testid="exchange">
                        <div class="flex items-start gap-3 border-b border-slate-100 px-5 py-3.5">
                            <span class="mt-0.5 rounded bg-slate-100 px-2 py-0.5 text-xs font-medium uppercase tracking-wide text-slate-600">"You"</span>
                            <p class="min-w-0 flex-1 whitespace-pre-wrap break-words text-sm text-slate-900" data-testid="exchange-question">{q}</p>
                            <button
                                type="button"
                                class="shrink-0 rounded-md px-2 py-1 text-xs font-medium text-teal-800 hover:bg-teal-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 disabled:opacity-50"
                                disabled=move || running.get()
                                on:click=move |_| send_text(rerun.clone(), None)
                            >
                                "Ask again"
                            </button>
                        </div>
                        <div class="flex flex-col gap-3 px-5 py-4">{steps}</div>
                    </li>
                }
            })
            .collect_view();
        view! { {items} }
    };

    let is_thread_page = move || route.with_value(Option::is_some);

    view! {
        <div class="flex flex-col gap-6">
            <div class="flex flex-wrap items-end justify-between gap-3">
                <div>
                    <h1 class="text-2xl font-semibold tracking-tight text-slate-900">"Ask a question"</h1>
                    <p class="mt-1 max-w-2xl text-sm text-slate-600">
                        "Ask about wounds, patients, assessments and clinics in plain English. When a question could mean more than one thing, Clarion asks before it answers."
                    </p>
                </div>
                <Show when=move || is_thread_page() || !live.with(Vec::is_empty)>
                    <a
                        href="/"
                        rel="external"
                        class="rounded-lg border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600"
                    >
                        "New thread"
                    </a>
                </Show>
            </div>

            <section aria-label="Conversation" class="flex min-h-64 flex-col gap-4">
                <p class="sr-only" role="status" aria-live="polite">{move || announce.get()}</p>
                <ol class="flex flex-col gap-4" data-testid="thread">
                    {match restored {
                        Some(Ok(r)) => restored_view(r).into_any(),
                        None => ().into_any(),
                        Some(Err(e)) => view! {
                            <li class="rounded-xl border border-slate-200 bg-white px-6 py-10 text-center" data-testid="thread-not-found">
                                <p class="text-sm font-semibold text-slate-800">"This thread could not be opened"</p>
                                <p class="mx-auto mt-1 max-w-md text-sm text-slate-500">{e}</p>
                                <a href="/" class="mt-4 inline-flex rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2">
                                    "Ask a new question"
                                </a>
                            </li>
                        }
                        .into_any(),
                    }}
                    <For each=move || live.get() key=|e| e.id let:ex>
                        {exchange_view(ex)}
                    </For>
                </ol>
                <Show when=move || !is_thread_page() && live.with(Vec::is_empty)>
                    <div class="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-10">
                        <p class="text-center text-sm font-semibold text-slate-800">"No questions in this thread yet"</p>
                        <p class="mx-auto mt-1 max-w-lg text-center text-sm text-slate-500">
                            "Start with one of these, or type your own below."
                        </p>
                        <ul class="mx-auto mt-5 flex max-w-3xl flex-wrap justify-center gap-2" aria-label="Example questions">
                            {EXAMPLES
                                .into_iter()
                                .map(|ex| {
                                    view! {
                                        <li>
                                            <button
                                                type="button"
                                                data-testid="example-question"
                                                class="rounded-full border border-teal-200 bg-teal-50 px-4 py-1.5 text-sm text-teal-900 hover:border-teal-300 hover:bg-teal-100 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                                                on:click=move |_| {
                                                    set_draft.set(ex.to_string());
                                                    focus_composer();
                                                }
                                            >
                                                {ex}
                                            </button>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    </div>
                </Show>
            </section>

                <form
                    // Pinned to the bottom of the view, except while a clarification panel
                    // is open: then the panel's Submit must never sit under the composer.
                    class=move || {
                        let pinned = if panel_open() { "relative" } else { "sticky bottom-4" };
                        format!("{pinned} z-30 rounded-xl border border-slate-300 bg-white p-3 shadow-md focus-within:border-teal-600 focus-within:ring-2 focus-within:ring-teal-600/20")
                    }
                    aria-busy=move || running.get().to_string()
                    on:submit=move |ev| {
                        ev.prevent_default();
                        send();
                    }
                >
                    <label for="question" class="sr-only">"Your question"</label>
                    <p
                        id="ask-error"
                        role="alert"
                        aria-live="assertive"
                        data-testid="ask-error"
                        class="px-2 text-sm font-medium text-rose-700 empty:hidden"
                    >
                        {move || ask_error.get()}
                    </p>
                    {move || (from_link.with_value(Option::is_some) && live.with(Vec::is_empty)).then(|| view! {
                        <p class="px-2 pb-1 text-sm text-slate-600" data-testid="from-link">
                            "This question came from a link. Read it, change it if you like, then press Send."
                        </p>
                    })}
                    <textarea
                        id="question"
                        name="question"
                        node_ref=textarea
                        rows="2"
                        maxlength=MAX_QUESTION_CHARS.to_string()
                        aria-describedby="ask-error"
                        placeholder=move || if live.with(Vec::is_empty) && !is_thread_page() {
                            "e.g. How many diabetic foot ulcers healed in the last 90 days?"
                        } else {
                            "Ask a follow-up, e.g. “only the diabetic ones”"
                        }
                        class="block w-full resize-none border-0 bg-transparent px-2 py-1.5 text-base text-slate-900 placeholder:text-slate-400 focus:outline-none"
                        prop:value=move || draft.get()
                        on:input=move |ev| {
                            set_draft.set(event_target_value(&ev));
                            ask_error.set(None);
                        }
                        on:keydown=move |ev| {
                            if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                                ev.prevent_default();
                                send();
                            }
                        }
                    ></textarea>
                    <div class="mt-2 flex items-center justify-between gap-3 px-2">
                        <p class="text-xs text-slate-500">
                            <kbd class="rounded border border-slate-300 px-1 font-sans">"Enter"</kbd>
                            " to send · "
                            <kbd class="rounded border border-slate-300 px-1 font-sans">"Shift+Enter"</kbd>
                            " for a new line"
                        </p>
                        <button
                            type="submit"
                            disabled=move || !can_send()
                            class="inline-flex min-w-24 items-center justify-center gap-2 rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-not-allowed disabled:bg-slate-300"
                        >
                            {move || if running.get() { "Working…" } else { "Send" }}
                        </button>
                    </div>
                </form>
        </div>
    }
}

/// The placeholder while a request runs: steps Clarion is taking, reserved height.
#[component]
fn Working() -> impl IntoView {
    view! {
        <div class="flex min-h-24 flex-col gap-2" role="status" aria-live="polite" data-testid="working">
            <p class="flex items-center gap-2 text-sm font-medium text-slate-700">
                <span class="inline-block h-2.5 w-2.5 animate-pulse rounded-full bg-teal-600" aria-hidden="true"></span>
                "Working on it…"
            </p>
            <ol class="flex flex-col gap-1 pl-5 text-xs text-slate-500">
                <li>"Reading the question and matching it to the data"</li>
                <li>"Checking what could be read more than one way"</li>
                <li>"Counting the records each reading matches"</li>
            </ol>
        </div>
    }
}

/// An answer from a stored thread: restatement, assumptions (changeable: re-runs with
/// the change), the rows and chart as they were shown (kept with the answer), "Run
/// again" for today's rows (explicit: opening a thread runs nothing), the SQL.
#[component]
fn RestoredAnswer(
    restatement: String,
    history: Option<Box<HistoryItem>>,
    rows: Option<Box<ResultTable>>,
    #[prop(into)] on_revise: Callback<(RwSignal<Option<Answer>>, String, Revision)>,
    #[prop(into)] on_suggest: Callback<String>,
    #[prop(into)] busy: Signal<bool>,
) -> impl IntoView {
    let rerun = RwSignal::new(None::<Answer>);
    // Today's rows, once the clinician pressed "Run again" (`Err`: why not).
    let fresh = RwSignal::new(None::<Result<ResultTable, String>>);
    let running_again = RwSignal::new(false);
    let hid = history.as_ref().map(|h| h.id.clone()).unwrap_or_default();
    let run_again = {
        let hid = hid.clone();
        move |_| {
            if running_again.get_untracked() {
                return;
            }
            running_again.set(true);
            let hid = hid.clone();
            spawn_local(async move {
                let r = replay(hid).await.map_err(|e| error_text(&e));
                fresh.set(Some(r));
                running_again.set(false);
            });
        }
    };
    let stored = move || {
        let hid = hid.clone();
        let badges = history.as_ref().map(|h| {
            h.assumptions
                .iter()
                .cloned()
                .map(|a| {
                    let hid = hid.clone();
                    view! {
                        <AssumptionBadge
                            a=a
                            on_revise=Callback::new(move |rev| on_revise.run((rerun, hid.clone(), rev)))
                            disabled=busy
                        />
                    }
                })
                .collect_view()
        });
        let asked_at = history
            .as_ref()
            .map(|h| h.created_at.get(..16).unwrap_or(&h.created_at).replace('T', " "));
        let meta = history.as_ref().zip(asked_at.clone()).map(|(h, at)| {
            format!(
                "Asked {at} · {} rows then",
                crate::components::results::group_thousands(h.row_count),
            )
        });
        let then = rows.clone();
        let file_name = format!("clarion-{hid}");
        let run_again = run_again.clone();
        let results = move || {
            let table_view = |table: ResultTable, note: String| {
                view! {
                    <p class="text-xs text-slate-500" data-testid="rows-note">{note}</p>
                    {crate::components::chart::chart_for(&table).map(|spec| view! { <Chart spec=spec /> })}
                    <ResultsTable table=table file_name=file_name.clone() />
                }
                .into_any()
            };
            match (fresh.get(), then.clone()) {
                (Some(Ok(table)), _) => table_view(
                    table.clone(),
                    format!(
                        "Rows as of now ({}), from running the question again.",
                        crate::components::results::group_thousands(table.row_count.into())
                    ),
                ),
                (Some(Err(msg)), _) => view! {
                    <p class="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900" role="status" data-testid="replay-error">
                        {format!("The rows could not be computed again: {msg}")}
                    </p>
                }
                .into_any(),
                (None, Some(table)) => table_view(
                    *table,
                    format!(
                        "Rows as they were when asked ({}). Run it again for today's data.",
                        asked_at.clone().unwrap_or_default()
                    ),
                ),
                (None, None) => view! {
                    <p class="text-xs text-slate-500" data-testid="rows-note">
                        "The rows of this answer were not kept. Run it again to see today's."
                    </p>
                }
                .into_any(),
            }
        };
        let again = view! {
            <div>
                <button
                    type="button"
                    data-testid="run-again"
                    on:click=run_again
                    disabled=move || running_again.get() || busy.get()
                    class="inline-flex items-center rounded-lg border border-slate-300 bg-white px-3 py-1.5 text-sm font-semibold text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-not-allowed disabled:opacity-60"
                >
                    {move || if running_again.get() { "Running…" } else { "Run again" }}
                </button>
            </div>
        };
        let sql = history.as_ref().map(|h| view! { <SqlBlock sql=h.sql.clone() /> });
        let feedback = history
            .as_ref()
            .map(|h| crate::components::feedback::answer_view(&h.id));
        view! {
            <div class="flex flex-col gap-3" data-testid="restored-answer">
                <p class="text-base leading-relaxed text-slate-900" data-testid="restatement">{restatement.clone()}</p>
                {badges.map(|b| view! { <ul class="flex flex-wrap items-start gap-2" aria-label="Assumptions">{b}</ul> })}
                {meta.map(|m| view! { <p class="text-xs text-slate-500" data-testid="row-count">{m}</p> })}
                {results}
                {again}
                {feedback}
                {sql}
            </div>
        }
    };
    view! {
        {move || match rerun.get() {
            Some(a) => {
                let hid = a.history_id.clone();
                view! {
                <AnswerCard
                    answer=a
                    on_revise=Callback::new(move |rev| on_revise.run((rerun, hid.clone(), rev)))
                    on_suggest=on_suggest
                    busy=busy
                />
                }
                .into_any()
            }
            None => stored().into_any(),
        }}
    }
}

/// Tells the server a round was cancelled, so it counts as abandoned at once (the
/// panel is already closed; a failure changes nothing the clinician sees).
fn cancel_round(clarification_id: String) {
    leptos::task::spawn_local(async move {
        let _ = crate::server_fns::cancel_clarification(clarification_id).await;
    });
}
