//! The answer card (F9, F16, F18): restatement, assumption badges that reopen their
//! options inline, results with a chart where one fits, the SQL, the confidence, the
//! thinking steps and the follow-up suggestion pills.
//!
//! Presentation only: re-running with a changed assumption and sending a suggestion are
//! callbacks the page implements.

use super::chart::{Chart, chart_for};
use super::clarify::count_text;
use super::results::ResultsTable;
use crate::protocol::{Answer, Assumption, AssumptionSource, Suggestion, ThinkingStep};
use leptos::prelude::*;

/// A request to change one assumption: (ambiguity id, option id).
pub type Revision = (String, String);

/// Milliseconds as a short duration ("0.4 ms", "12 ms", "1.2 s").
pub fn duration_text(ms: f64) -> String {
    if ms < 1.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{} ms", ms.round() as i64)
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// The thinking steps with their measured durations (F16).
#[component]
pub fn ThinkingSteps(
    steps: Vec<ThinkingStep>,
    /// Shown open (while a panel waits) or collapsed (under an answer).
    #[prop(optional)]
    open: bool,
) -> impl IntoView {
    let total: f64 = steps.iter().filter_map(|s| s.duration_ms).sum();
    let n = steps.len();
    let items = steps
        .into_iter()
        .map(|s| {
            let sub = s.duration_ms.is_none();
            view! {
                <li class=if sub { "flex gap-3 pl-4 text-slate-500" } else { "flex gap-3 text-slate-700" }>
                    <span class="min-w-0 flex-1">
                        <span class="font-medium">{s.name}</span>
                        {(!s.detail.is_empty()).then(|| view! { <span class="text-slate-500">{format!(" — {}", s.detail)}</span> })}
                    </span>
                    <span class="shrink-0 tabular-nums text-slate-500">{s.duration_ms.map(duration_text)}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <details class="group text-xs" open=open data-testid="thinking">
            <summary class="cursor-pointer select-none rounded text-slate-500 hover:text-slate-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600">
                {format!("How I worked it out · {n} steps · {}", duration_text(total))}
            </summary>
            <ol class="mt-2 flex flex-col gap-1 border-l-2 border-slate-100 pl-3">{items}</ol>
        </details>
    }
}

/// The follow-up pills (F18): clicking puts the text in the composer and sends it.
#[component]
pub fn SuggestionPills(
    suggestions: Vec<Suggestion>,
    #[prop(into)] on_pick: Callback<String>,
    #[prop(into)] disabled: Signal<bool>,
    #[prop(optional)] label: Option<&'static str>,
) -> impl IntoView {
    let pills = suggestions
        .into_iter()
        .take(3)
        .map(|s| {
            let text = s.text.clone();
            view! {
                <li>
                    <button
                        type="button"
                        data-testid="suggestion"
                        class="rounded-full border border-teal-200 bg-teal-50 px-3.5 py-1.5 text-sm text-teal-900 hover:border-teal-300 hover:bg-teal-100 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-not-allowed disabled:opacity-50"
                        disabled=move || disabled.get()
                        on:click=move |_| on_pick.run(text.clone())
                    >
                        {s.text}
                    </button>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="flex flex-wrap items-center gap-2">
            <span class="text-xs font-medium text-slate-500">{label.unwrap_or("Follow up:")}</span>
            <ul class="flex flex-wrap gap-2" aria-label="Suggested follow-up questions">{pills}</ul>
        </div>
    }
}

/// One assumption as a badge; a changeable one opens its options inline.
#[component]
pub fn AssumptionBadge(
    a: Assumption,
    #[prop(into)] on_revise: Callback<Revision>,
    #[prop(into)] disabled: Signal<bool>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let saved = matches!(
        a.source,
        AssumptionSource::SavedDefinition | AssumptionSource::UsualDefinition | AssumptionSource::Chosen
    );
    let kind = match a.source {
        AssumptionSource::Chosen => "You chose",
        AssumptionSource::SavedDefinition => "Your saved definition",
        AssumptionSource::UsualDefinition => "Your usual definition",
        AssumptionSource::Default => "Assumed",
        AssumptionSource::LowConfidence => "Read as",
        AssumptionSource::LanguageModel => "Proposed by the language model",
    };
    let tone = if saved {
        "border-indigo-200 bg-indigo-50 text-indigo-900"
    } else {
        "border-amber-200 bg-amber-50 text-amber-900"
    };
    let text = a.text();
    let changeable = a.ambiguity_id.is_some() && a.options.len() > 1;
    let Some(amb) = a.ambiguity_id.clone().filter(|_| changeable) else {
        return view! {
            <li class=format!("rounded-full border px-3 py-1 text-sm {tone}") data-testid="assumption" data-source=format!("{:?}", a.source)>
                <span class="font-medium">{kind}": "</span>
                {text}
            </li>
        }
        .into_any();
    };
    let current = a.option_id.clone();
    let options = a
        .options
        .iter()
        .map(|o| {
            let is_current = current.as_deref() == Some(o.id.as_str());
            let rev = (amb.clone(), o.id.clone());
            let count = o.count.map(|n| count_text("", &amb, n));
            view! {
                <li>
                    <button
                        type="button"
                        class="flex w-full items-start gap-3 rounded-md border border-slate-200 bg-white px-3 py-2 text-left hover:border-teal-400 hover:bg-teal-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 disabled:cursor-not-allowed disabled:opacity-60 aria-[current=true]:border-teal-600 aria-[current=true]:bg-teal-50"
                        aria-current=is_current.to_string()
                        disabled=move || disabled.get() || is_current
                        data-testid="assumption-option"
                        on:click=move |_| {
                            open.set(false);
                            on_revise.run(rev.clone());
                        }
                    >
                        <span class="flex min-w-0 flex-1 flex-col">
                            <span class="text-sm font-medium text-slate-900">
                                {o.label.clone()}
                                {is_current.then_some(" (in use)")}
                            </span>
                            <span class="text-xs text-slate-600">{o.description.clone()}</span>
                        </span>
                        {count.map(|c| view! { <span class="shrink-0 text-xs tabular-nums text-slate-600">{c}</span> })}
                    </button>
                </li>
            }
        })
        .collect_view();
    let panel_id = format!("assumption-{}", amb.replace([':', '@'], "-"));
    view! {
        <li class="contents" data-testid="assumption" data-source=format!("{:?}", a.source)>
            <button
                type="button"
                class=format!("rounded-full border px-3 py-1 text-left text-sm hover:brightness-95 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-1 {tone}")
                aria-expanded=move || open.get().to_string()
                aria-controls=panel_id.clone()
                disabled=move || disabled.get()
                on:click=move |_| open.update(|o| *o = !*o)
            >
                <span class="font-medium">{kind}": "</span>
                {text}
                <span class="ml-1 text-xs underline decoration-dotted underline-offset-2">"change"</span>
            </button>
            <div id=panel_id class="basis-full" hidden=move || !open.get()>
                <div class="mt-1 rounded-lg border border-slate-200 bg-slate-50 p-3">
                    <p class="mb-2 text-xs text-slate-600">
                        {format!("What should “{}” mean? The answer re-runs with your choice; everything else stays as it is.", a.piece)}
                    </p>
                    <ul class="grid gap-2 sm:grid-cols-2">{options}</ul>
                </div>
            </div>
        </li>
    }
    .into_any()
}

/// Copies text to the clipboard (no extra web-sys features: through `Reflect`).
pub fn copy_to_clipboard(text: &str) -> bool {
    use leptos::wasm_bindgen::{JsCast, JsValue};
    use leptos::web_sys::js_sys::{Function, Reflect};
    let get = |o: &JsValue, k: &str| {
        Reflect::get(o, &JsValue::from_str(k))
            .ok()
            .filter(|v| !v.is_undefined())
    };
    let win: JsValue = window().into();
    let Some(clip) = get(&win, "navigator").and_then(|n| get(&n, "clipboard")) else {
        return false;
    };
    let Some(f) = get(&clip, "writeText").and_then(|f| f.dyn_into::<Function>().ok()) else {
        return false;
    };
    f.call1(&clip, &JsValue::from_str(text)).is_ok()
}

/// The SQL that ran, collapsed, with a copy button.
#[component]
pub fn SqlBlock(sql: String, #[prop(optional)] param_count: Option<u32>) -> impl IntoView {
    let copied = RwSignal::new(false);
    let sql = StoredValue::new(sql);
    view! {
        <details class="group rounded-lg border border-slate-200" data-testid="sql">
            <summary class="cursor-pointer select-none rounded-lg px-3 py-2 text-xs font-medium text-slate-600 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600">
                {match param_count {
                    Some(n) => format!("SQL · read-only · {n} bound value(s)"),
                    None => "SQL · read-only".to_string(),
                }}
            </summary>
            <div class="relative border-t border-slate-200">
                <button
                    type="button"
                    class="absolute right-2 top-2 rounded-md border border-slate-300 bg-white px-2 py-1 text-xs font-medium text-slate-700 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600"
                    on:click=move |_| {
                        if sql.with_value(|s| copy_to_clipboard(s)) {
                            copied.set(true);
                            set_timeout(move || copied.set(false), std::time::Duration::from_secs(2));
                        }
                    }
                >
                    {move || if copied.get() { "Copied" } else { "Copy SQL" }}
                </button>
                <pre class="overflow-x-auto whitespace-pre-wrap break-words bg-slate-50 p-3 pr-24 font-mono text-xs leading-relaxed text-slate-800">{sql.get_value()}</pre>
            </div>
        </details>
    }
}

/// Confidence as a clinician reads it.
pub fn confidence_text(c: f64) -> (&'static str, String) {
    let pct = (c * 100.0).round() as i64;
    let word = if c >= 0.85 {
        "High confidence"
    } else if c >= 0.6 {
        "Moderate confidence"
    } else {
        "Low confidence"
    };
    (word, format!("{pct}%"))
}

/// The whole answer.
#[component]
pub fn AnswerCard(
    answer: Answer,
    #[prop(into)] on_revise: Callback<Revision>,
    #[prop(into)] on_suggest: Callback<String>,
    /// A request is in flight (badges and pills wait).
    #[prop(into)]
    busy: Signal<bool>,
) -> impl IntoView {
    let Answer {
        history_id,
        restatement,
        assumptions,
        table,
        sql,
        param_count,
        confidence,
        suggestions,
        thinking,
        duration_ms,
        notice,
        verified,
        ..
    } = answer;
    let empty = table.rows.is_empty();
    let chart = chart_for(&table);
    let (conf_word, conf_pct) = confidence_text(confidence);
    let rows = table.row_count;
    let badges = (!assumptions.is_empty()).then(|| {
        let list = assumptions
            .into_iter()
            .map(|a| view! { <AssumptionBadge a=a on_revise=on_revise disabled=busy /> })
            .collect_view();
        view! { <ul class="flex flex-wrap items-start gap-2" aria-label="Assumptions">{list}</ul> }
    });
    let file_name = format!("clarion-{history_id}");
    let feedback = super::feedback::answer_view(&history_id);
    let results = if empty {
        view! {
            <div class="rounded-lg border border-dashed border-slate-300 bg-slate-50 px-4 py-5" data-testid="empty-result">
                <p class="text-sm font-semibold text-slate-800">"No records matched"</p>
                <p class="mt-1 text-sm text-slate-600">
                    "The query ran, but nothing in the data meets every condition above. Loosening one of them usually helps — change an assumption, or try one of these:"
                </p>
            </div>
        }
        .into_any()
    } else {
        view! {
            {chart.map(|spec| view! { <Chart spec=spec /> })}
            <ResultsTable table=table file_name=file_name />
        }
        .into_any()
    };
    view! {
        <div class="flex flex-col gap-4" data-testid="answer">
            {notice.map(|n| view! {
                <p role="status" class="rounded-lg bg-amber-50 px-3 py-2 text-sm text-amber-900" data-testid="answer-notice">{n}</p>
            })}
            <p class="text-base leading-relaxed text-slate-900" data-testid="restatement">{restatement}</p>
            {verified.map(|v| view! { <p class="self-start rounded-full bg-emerald-100 px-3 py-1 text-sm font-medium text-emerald-900" data-testid="verified-badge">{v}</p> })}
            {badges}
            <p class="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-500">
                <span data-testid="row-count">
                    {if rows == 1 { "1 row".to_string() } else { format!("{} rows", super::results::group_thousands(rows.into())) }}
                </span>
                <span aria-hidden="true">"·"</span>
                <span data-testid="confidence" title="How sure Clarion is that it read the question as you meant it">
                    {format!("{conf_word} ({conf_pct})")}
                </span>
                <span aria-hidden="true">"·"</span>
                <span>{duration_text(duration_ms)}</span>
                <a href=format!("/saved/new?history={history_id}") class="font-medium text-teal-700 underline">"Save question"</a>
            </p>
            {results}
            {(!suggestions.is_empty()).then(|| view! {
                <SuggestionPills
                    suggestions=suggestions
                    on_pick=on_suggest
                    disabled=busy
                    label=if empty { "Try instead:" } else { "Follow up:" }
                />
            })}
            {feedback}
            <SqlBlock sql=sql param_count=param_count />
            <ThinkingSteps steps=thinking />
        </div>
    }
}
