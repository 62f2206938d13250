//! The clarification panel (F5–F8, F12): one round of questions, most critical first,
//! each a radio group with the best guess preselected, the records each option would
//! match, a custom value typed to the question, "I don't know" and "Remember my
//! choice". Submit stays disabled until every question has an answer.
//!
//! Every question also offers "Describe it in your own words" (F28): the server reads
//! the text (its engine first, then the language model when one is configured) and
//! sends the round back with the reading as a preselected option — "I read that as: …"
//! — to confirm before anything runs.
//!
//! The server validates custom values; its message comes back through `error` and is
//! shown under the question concerned while every choice stays as the user left it.

use crate::protocol::{ClarificationRound, ClarifyAnswer, CustomInput, Question};
use leptos::prelude::*;

/// What the user picked for one question.
#[derive(Clone, Debug, PartialEq)]
enum Pick {
    Option(String),
    Custom,
    OwnWords,
    DontKnow,
}

/// Option id of a free-text answer read back by the engine.
pub const READ_BY_ENGINE: &str = "own:words";

/// Whether an option was proposed by the language model (its ids start with `llm:`).
pub fn proposed_by_model(id: &str) -> bool {
    id.starts_with("llm:")
}

/// One question's state in the form.
#[derive(Clone, Copy)]
struct QState {
    pick: RwSignal<Option<Pick>>,
    custom: RwSignal<String>,
    /// Second half of a date range.
    custom_to: RwSignal<String>,
    /// "Describe it in your own words".
    own_words: RwSignal<String>,
    remember: RwSignal<bool>,
}

/// What an option's count is counting: the option's `counts_of`, else the entity in the
/// question's id (`term:serious@wounds` → "wounds"); singular for one.
pub fn count_text(counts_of: &str, question_id: &str, n: i64) -> String {
    let noun = if counts_of.is_empty() {
        question_id.rsplit_once('@').map(|(_, e)| e).unwrap_or("records")
    } else {
        counts_of
    };
    let noun = noun.replace('_', " ");
    let noun = if n == 1 {
        noun.strip_suffix('s').map(str::to_string).unwrap_or(noun)
    } else {
        noun
    };
    format!("{} {noun}", super::results::group_thousands(n))
}

/// The custom value as the server expects it, `None` while incomplete.
fn custom_value(input: &CustomInput, st: &QState) -> Option<String> {
    let v = st.custom.get().trim().to_string();
    if input.kind == "date_range" {
        let to = st.custom_to.get().trim().to_string();
        return (!v.is_empty() && !to.is_empty()).then(|| format!("{v}..{to}"));
    }
    (!v.is_empty()).then_some(v)
}

/// Which question a server error is about: the one with a custom value whose text the
/// message quotes, else the only one with a custom value.
fn error_target(round: &ClarificationRound, states: &[QState], message: &str) -> Option<String> {
    let customs: Vec<(&Question, &QState)> = round
        .questions
        .iter()
        .zip(states)
        .filter(|(_, s)| matches!(s.pick.get_untracked(), Some(Pick::Custom | Pick::OwnWords)))
        .collect();
    customs
        .iter()
        .find(|(_, s)| {
            let v = if s.pick.get_untracked() == Some(Pick::OwnWords) {
                s.own_words.get_untracked()
            } else {
                s.custom.get_untracked()
            };
            !v.trim().is_empty() && message.contains(v.trim())
        })
        .or(customs.first())
        .map(|(q, _)| q.id.clone())
}

const RADIO: &str = "mt-0.5 h-4 w-4 shrink-0 accent-teal-700 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2";
const OPTION_ROW: &str = "flex cursor-pointer items-start gap-3 rounded-lg border px-3 py-2.5 transition-colors has-[:checked]:border-teal-600 has-[:checked]:bg-teal-50/60 border-slate-200 hover:border-slate-300";
const INPUT: &str = "w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm text-slate-900 placeholder:text-slate-400 focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600/20 aria-[invalid=true]:border-rose-500";

const SECONDARY: &str = "rounded-lg border border-slate-300 bg-white px-4 py-2 text-sm font-medium text-slate-700 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:opacity-50";

/// The panel for one round.
#[component]
pub fn ClarificationPanel(
    /// The round to answer.
    round: ClarificationRound,
    /// Sends the answers (the page runs `clarify`).
    #[prop(into)]
    on_submit: Callback<Vec<ClarifyAnswer>>,
    /// Closes the panel without running anything.
    #[prop(into)]
    on_cancel: Callback<()>,
    /// A request is in flight.
    #[prop(into)]
    busy: Signal<bool>,
    /// The server's message for the last submit, if it failed.
    #[prop(into)]
    error: Signal<Option<String>>,
) -> impl IntoView {
    let round = StoredValue::new(round);
    let states: Vec<QState> = round.with_value(|r| {
        r.questions
            .iter()
            .map(|q| QState {
                pick: RwSignal::new(
                    q.options
                        .iter()
                        .find(|o| o.default)
                        .map(|o| Pick::Option(o.id.clone())),
                ),
                custom: RwSignal::new(String::new()),
                custom_to: RwSignal::new(String::new()),
                own_words: RwSignal::new(String::new()),
                remember: RwSignal::new(false),
            })
            .collect()
    });
    let states = StoredValue::new(states);

    let complete = move || {
        round.with_value(|r| {
            states.with_value(|ss| {
                r.questions.iter().zip(ss).all(|(q, s)| match s.pick.get() {
                    Some(Pick::Custom) => custom_value(&q.custom, s).is_some(),
                    Some(Pick::OwnWords) => !s.own_words.get().trim().is_empty(),
                    Some(_) => true,
                    None => false,
                })
            })
        })
    };

    let answers = move || -> Vec<ClarifyAnswer> {
        round.with_value(|r| {
            states.with_value(|ss| {
                r.questions
                    .iter()
                    .zip(ss)
                    .map(|(q, s)| {
                        let mut a = ClarifyAnswer {
                            question_id: q.id.clone(),
                            remember: s.remember.get_untracked(),
                            ..Default::default()
                        };
                        match s.pick.get_untracked() {
                            Some(Pick::Option(id)) => a.option_id = Some(id),
                            Some(Pick::Custom) => a.custom = custom_value(&q.custom, s),
                            Some(Pick::OwnWords) => {
                                a.in_own_words = Some(s.own_words.get_untracked().trim().to_string())
                            }
                            Some(Pick::DontKnow) | None => a.dont_know = true,
                        }
                        a
                    })
                    .collect()
            })
        })
    };

    let best_guesses = move || -> Vec<ClarifyAnswer> {
        round.with_value(|r| {
            r.questions
                .iter()
                .map(|q| ClarifyAnswer {
                    question_id: q.id.clone(),
                    dont_know: true,
                    ..Default::default()
                })
                .collect()
        })
    };

    let submit = move || {
        if busy.get_untracked() || !complete() {
            return;
        }
        on_submit.run(answers());
    };

    // The question an error belongs to (recomputed when a new error arrives).
    let error_for = Memo::new(move |_| {
        let msg = error.get()?;
        let target = round.with_value(|r| states.with_value(|ss| error_target(r, ss, &msg)));
        Some((target, msg))
    });

    let panel = NodeRef::<leptos::html::Section>::new();
    // Focus moves to the panel when it opens, so keyboard and screen-reader users land
    // on the question (F5, issue point 8).
    Effect::new(move |_| {
        if let Some(p) = panel.get() {
            let _ = p.focus();
        }
    });

    let (r_no, max_rounds, reason, understood, cid, n_questions) = round.with_value(|r| {
        (
            r.round,
            r.max_rounds,
            r.reason.clone(),
            r.understood_so_far.clone(),
            r.clarification_id.clone(),
            r.questions.len(),
        )
    });
    let heading = if r_no > 1 {
        "One more question".to_string()
    } else if n_questions > 1 {
        format!("{n_questions} quick questions before I answer")
    } else {
        "A quick question before I answer".to_string()
    };
    let heading_id = format!("panel-{cid}");
    let round_feedback = super::feedback::round_view(&cid);
    let heading_ref = heading_id.clone();

    let questions = round.with_value(|r| {
        r.questions
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let st = states.with_value(|ss| ss[i]);
                question_view(i, q.clone(), st, &cid, error_for)
            })
            .collect_view()
    });

    view! {
        <section
            node_ref=panel
            tabindex="-1"
            aria-labelledby=heading_ref
            data-testid="clarification-panel"
            class="rounded-xl border border-amber-300 bg-white shadow-sm ring-1 ring-amber-100 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600"
            on:keydown=move |ev| {
                if ev.key() == "Escape" && !busy.get_untracked() {
                    ev.prevent_default();
                    on_cancel.run(());
                }
            }
        >
            <form
                class="flex flex-col gap-5 p-5"
                on:submit=move |ev| {
                    ev.prevent_default();
                    submit();
                }
            >
                <header class="flex flex-col gap-1">
                    <div class="flex flex-wrap items-center gap-2">
                        <h3 id=heading_id class="text-base font-semibold text-slate-900">{heading}</h3>
                        {(r_no > 1).then(|| view! {
                            <span class="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-900">
                                {format!("Round {r_no} of {max_rounds}")}
                            </span>
                        })}
                    </div>
                    <p class="text-sm text-slate-700" data-testid="clarification-reason">{reason}</p>
                    <p class="text-xs text-slate-500">"Your choices decide exactly which records are counted."</p>
                </header>
                <div class="rounded-lg bg-slate-50 px-4 py-3">
                    <p class="text-xs font-semibold uppercase tracking-wide text-slate-500">"What I understood so far"</p>
                    <p class="mt-1 text-sm text-slate-800" data-testid="understood-so-far">{understood}</p>
                </div>
                <ol class="flex flex-col gap-6">{questions}</ol>
                <div class="flex flex-wrap items-center justify-end gap-3 border-t border-slate-100 pt-4">
                    <p class="mr-auto text-xs text-slate-500">
                        <kbd class="rounded border border-slate-300 px-1 font-sans">"Esc"</kbd>
                        " cancels · arrow keys move between options"
                    </p>
                    <button
                        type="button"
                        class=SECONDARY
                        disabled=move || busy.get()
                        on:click=move |_| on_cancel.run(())
                    >
                        "Cancel"
                    </button>
                    // The whole round at once: every question answered "use your best guess".
                    <button
                        type="button"
                        class=SECONDARY
                        data-testid="best-guesses"
                        title="Answer every question with Clarion's best guess (preselected); each stays changeable on the answer"
                        disabled=move || busy.get()
                        on:click=move |_| {
                            if !busy.get_untracked() {
                                on_submit.run(best_guesses());
                            }
                        }
                    >
                        "Continue with best guesses"
                    </button>
                    <button
                        type="submit"
                        class="inline-flex min-w-28 items-center justify-center gap-2 rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-not-allowed disabled:bg-slate-300"
                        disabled=move || busy.get() || !complete()
                        aria-busy=move || busy.get().to_string()
                    >
                        {move || if busy.get() { "Working…" } else { "Submit" }}
                    </button>
                </div>
            </form>
            {round_feedback}
        </section>
    }
}

fn question_view(
    i: usize,
    q: Question,
    st: QState,
    cid: &str,
    error_for: Memo<Option<(Option<String>, String)>>,
) -> impl IntoView + use<> {
    let name = format!("{cid}-q{i}");
    let qid = q.id.clone();
    let best = q.options.iter().find(|o| o.default).map(|o| o.label.clone());
    // A free-text answer read back: "I read that as: …" instead of "It looks like you mean".
    let read_back = q
        .options
        .iter()
        .find(|o| o.default)
        .is_some_and(|o| o.id == READ_BY_ENGINE || o.id == "llm:words");
    let legend_id = format!("{name}-legend");
    let err_id = format!("{name}-error");
    let err_ref = err_id.clone();
    let my_error = {
        let qid = qid.clone();
        move || {
            error_for.get().and_then(|(target, msg)| match target {
                Some(t) if t == qid => Some(msg),
                // Not attributable to a custom value: shown under the first question.
                None if i == 0 => Some(msg),
                _ => None,
            })
        }
    };
    let has_error = {
        let my_error = my_error.clone();
        move || my_error().is_some()
    };

    let options = q
        .options
        .iter()
        .map(|o| {
            let id = o.id.clone();
            let id2 = o.id.clone();
            let count = o.count.map(|n| count_text(&o.counts_of, &qid, n));
            view! {
                <li>
                    <label class=OPTION_ROW data-testid="clarification-option">
                        <input
                            type="radio"
                            class=RADIO
                            name=name.clone()
                            value=o.id.clone()
                            prop:checked=move || st.pick.get() == Some(Pick::Option(id.clone()))
                            on:change=move |_| st.pick.set(Some(Pick::Option(id2.clone())))
                        />
                        <span class="flex min-w-0 flex-1 flex-col">
                            <span class="flex flex-wrap items-center gap-x-2 gap-y-1">
                                <span class="text-sm font-medium text-slate-900">{o.label.clone()}</span>
                                {o.default.then(|| view! {
                                    <span class="rounded-full bg-teal-100 px-2 py-0.5 text-xs font-medium text-teal-900">"Best guess"</span>
                                })}
                                {proposed_by_model(&o.id).then(|| view! {
                                    <span class="rounded-full bg-violet-100 px-2 py-0.5 text-xs font-medium text-violet-900" data-testid="llm-badge">"Proposed by the language model"</span>
                                })}
                                {(o.id == READ_BY_ENGINE).then(|| view! {
                                    <span class="rounded-full bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-700">"Your words"</span>
                                })}
                            </span>
                            <span class="text-sm text-slate-600">{o.description.clone()}</span>
                        </span>
                        {count.map(|c| view! {
                            <span class="shrink-0 whitespace-nowrap text-sm tabular-nums text-slate-600" data-testid="option-count">{c}</span>
                        })}
                    </label>
                </li>
            }
        })
        .collect_view();

    let custom_row = (q.custom.kind != "none" && !q.custom.kind.is_empty()).then(|| {
        let input = q.custom.clone();
        custom_view(name.clone(), input, st, err_id.clone(), has_error.clone())
    });

    view! {
        <li>
            <fieldset aria-describedby=err_ref>
                <legend id=legend_id class="text-sm font-semibold text-slate-900">
                    {format!("{}. {}", i + 1, q.text)}
                    <span data-priority=q.priority.clone() data-testid="question-priority">{q.priority.clone()}</span>
                </legend>
                {best.map(|b| if read_back {
                    view! {
                        <p class="mt-1 text-sm text-slate-600" data-testid="read-back">
                            "I read that as: "
                            <strong class="font-semibold text-slate-800">{b}</strong>
                            " — is that right? Submit to run it."
                        </p>
                    }
                    .into_any()
                } else {
                    view! {
                        <p class="mt-1 text-sm text-slate-600">
                            "It looks like you mean "
                            <strong class="font-semibold text-slate-800">{b}</strong>
                            " — is that right?"
                        </p>
                    }
                    .into_any()
                })}
                <ul class="mt-3 flex flex-col gap-2">
                    {options}
                    {custom_row}
                    {own_words_view(name.clone(), st, err_id.clone(), has_error.clone())}
                    <li>
                        <label class=OPTION_ROW>
                            <input
                                type="radio"
                                class=RADIO
                                name=name.clone()
                                value="dont_know"
                                prop:checked=move || st.pick.get() == Some(Pick::DontKnow)
                                on:change=move |_| st.pick.set(Some(Pick::DontKnow))
                            />
                            <span class="text-sm text-slate-800">"I don't know — use your best judgment"</span>
                        </label>
                    </li>
                </ul>
                <p id=err_id class="mt-2 text-sm font-medium text-rose-700" role="alert" aria-live="assertive" data-testid="custom-error">
                    {my_error}
                </p>
                <label class="mt-2 inline-flex cursor-pointer items-center gap-2 text-sm text-slate-700">
                    <input
                        type="checkbox"
                        class="h-4 w-4 rounded accent-teal-700 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600"
                        prop:checked=move || st.remember.get()
                        on:change=move |ev| st.remember.set(event_target_checked(&ev))
                    />
                    "Remember my choice"
                </label>
            </fieldset>
        </li>
    }
}

/// "Describe it in your own words" (F28), on every question.
fn own_words_view(
    name: String,
    st: QState,
    err_id: String,
    has_error: impl Fn() -> bool + Clone + Send + Sync + 'static,
) -> impl IntoView {
    let field_id = format!("{name}-own-words");
    view! {
        <li>
            <div class=OPTION_ROW>
                <input
                    type="radio"
                    class=RADIO
                    name=name
                    value="own_words"
                    aria-label="Describe it in your own words"
                    prop:checked=move || st.pick.get() == Some(Pick::OwnWords)
                    on:change=move |_| st.pick.set(Some(Pick::OwnWords))
                />
                <div class="flex min-w-0 flex-1 flex-col gap-1.5">
                    <label for=field_id.clone() class="text-sm font-medium text-slate-900">"Describe it in your own words"</label>
                    <input
                        id=field_id
                        type="text"
                        maxlength="200"
                        class=format!("{INPUT} max-w-md")
                        placeholder="e.g. area over 15, since March"
                        data-testid="own-words"
                        aria-describedby=err_id
                        aria-invalid=move || has_error().to_string()
                        prop:value=move || st.own_words.get()
                        on:input=move |ev| {
                            st.own_words.set(event_target_value(&ev));
                            st.pick.set(Some(Pick::OwnWords));
                        }
                    />
                    <span class="text-xs text-slate-500">"I'll show you how I read it before running anything."</span>
                </div>
            </div>
        </li>
    }
}

fn custom_view(
    name: String,
    input: CustomInput,
    st: QState,
    err_id: String,
    has_error: impl Fn() -> bool + Clone + Send + Sync + 'static,
) -> impl IntoView {
    // Typing a value chooses "another value"; only passing through the field (Tab) does
    // not, so keyboard users can move past it without losing their choice.
    let select = move || st.pick.set(Some(Pick::Custom));
    let typed = move |ev: leptos::ev::Event| {
        st.custom.set(event_target_value(&ev));
        select();
    };
    let field_id = format!("{name}-custom");
    let (label, field) = match input.kind.as_str() {
        "number" => {
            let unit = input.unit.clone();
            let has_error = has_error.clone();
            (
                "Another value",
                view! {
                    <div class="flex items-center gap-2">
                        <input
                            id=field_id.clone()
                            type="text"
                            inputmode="decimal"
                            class=format!("{INPUT} max-w-40")
                            placeholder=input.placeholder.clone()
                            aria-describedby=err_id.clone()
                            aria-invalid=move || has_error().to_string()
                            prop:value=move || st.custom.get()
                            on:input=typed
                        />
                        {unit.map(|u| view! { <span class="text-sm text-slate-600">{u}</span> })}
                    </div>
                }
                .into_any(),
            )
        }
        "date_range" => (
            "Another date range",
            view! {
                <div class="flex flex-wrap items-center gap-2">
                    <input
                        id=field_id.clone()
                        type="date"
                        aria-label="From"
                        class=format!("{INPUT} max-w-44")
                        aria-describedby=err_id.clone()
                        prop:value=move || st.custom.get()
                        on:input=typed
                    />
                    <span class="text-sm text-slate-500">"to"</span>
                    <input
                        type="date"
                        aria-label="To"
                        class=format!("{INPUT} max-w-44")
                        aria-describedby=err_id.clone()
                        prop:value=move || st.custom_to.get()
                        on:input=move |ev| {
                            st.custom_to.set(event_target_value(&ev));
                            select();
                        }
                    />
                </div>
            }
            .into_any(),
        ),
        "allowed_value" => {
            let list_id = format!("{name}-values");
            let values = input
                .allowed_values
                .iter()
                .map(|v| view! { <option value=v.clone()></option> })
                .collect_view();
            let has_error = has_error.clone();
            (
                "Another value",
                view! {
                    <div>
                        <input
                            id=field_id.clone()
                            type="text"
                            list=list_id.clone()
                            autocomplete="off"
                            class=format!("{INPUT} max-w-72")
                            placeholder=if input.placeholder.is_empty() { "Start typing a value".to_string() } else { input.placeholder.clone() }
                            aria-describedby=err_id.clone()
                            aria-invalid=move || has_error().to_string()
                            prop:value=move || st.custom.get()
                            on:input=typed
                        />
                        <datalist id=list_id>{values}</datalist>
                    </div>
                }
                .into_any(),
            )
        }
        _ => {
            let has_error = has_error.clone();
            (
                "Another condition",
                view! {
                    <input
                        id=field_id.clone()
                        type="text"
                        class=format!("{INPUT} max-w-72 font-mono")
                        placeholder=if input.placeholder.is_empty() { "e.g. area > 15".to_string() } else { input.placeholder.clone() }
                        aria-describedby=err_id.clone()
                        aria-invalid=move || has_error().to_string()
                        prop:value=move || st.custom.get()
                        on:input=typed
                    />
                }
                .into_any(),
            )
        }
    };
    view! {
        <li>
            <div class=OPTION_ROW>
                <input
                    type="radio"
                    class=RADIO
                    name=name.clone()
                    value="custom"
                    aria-label=label
                    prop:checked=move || st.pick.get() == Some(Pick::Custom)
                    on:change=move |_| st.pick.set(Some(Pick::Custom))
                />
                <div class="flex min-w-0 flex-1 flex-col gap-1.5">
                    <label for=field_id class="text-sm font-medium text-slate-900">{label}</label>
                    {field}
                </div>
            </div>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_name_what_they_count() {
        assert_eq!(count_text("", "term:serious@wounds", 142), "142 wounds");
        assert_eq!(count_text("", "term:serious@wounds", 1), "1 wound");
        assert_eq!(count_text("", "intent", 1200), "1,200 records");
        // "patients with serious wounds" counts patients, whatever the word belongs to.
        assert_eq!(
            count_text("patients", "term:serious@wounds", 1292),
            "1,292 patients"
        );
        assert_eq!(count_text("patients", "term:serious@wounds", 1), "1 patient");
    }
}
