//! Ask: the thread of questions and answers, with the composer.

use leptos::prelude::*;
use leptos_meta::Title;

const EXAMPLES: [&str; 4] = [
    "How many open wounds are there by clinic?",
    "Show me patients with serious wounds",
    "Average healing time of venous leg ulcers last year",
    "Which pressure injuries are not improving?",
];

/// Longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 1000;

#[derive(Clone)]
struct Exchange {
    id: u32,
    question: String,
}

/// The Ask page.
#[component]
pub fn AskPage() -> impl IntoView {
    let (draft, set_draft) = signal(String::new());
    let (thread, set_thread) = signal(Vec::<Exchange>::new());
    let next_id = StoredValue::new(0u32);
    let textarea = NodeRef::<leptos::html::Textarea>::new();

    let trimmed_len = move || draft.with(|d| d.trim().chars().count());
    let can_send = move || {
        let n = trimmed_len();
        n > 0 && n <= MAX_QUESTION_CHARS
    };

    let send = move || {
        if !can_send() {
            return;
        }
        let question = draft.get_untracked().trim().to_string();
        let id = next_id.get_value();
        next_id.set_value(id + 1);
        set_thread.update(|t| t.push(Exchange { id, question }));
        set_draft.set(String::new());
    };

    view! {
        <Title text="Ask" />
        <div class="flex flex-col gap-6">
            <div>
                <h1 class="text-2xl font-semibold tracking-tight text-slate-900">"Ask a question"</h1>
                <p class="mt-1 max-w-2xl text-sm text-slate-600">
                    "Ask about wounds, patients, assessments and clinics in plain English. When a question could mean more than one thing, Clarion asks before it answers."
                </p>
            </div>

            <section aria-label="Conversation" class="flex min-h-64 flex-col gap-4">
                <Show
                    when=move || !thread.with(Vec::is_empty)
                    fallback=move || {
                        view! {
                            <div class="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-10">
                                <p class="text-center text-sm font-semibold text-slate-800">
                                    "No questions in this thread yet"
                                </p>
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
                                                            if let Some(t) = textarea.get() {
                                                                let _ = t.focus();
                                                            }
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
                        }
                    }
                >
                    <ol class="flex flex-col gap-4" data-testid="thread">
                        <For each=move || thread.get() key=|e| e.id let:ex>
                            <li class="rounded-xl border border-slate-200 bg-white shadow-sm">
                                <div class="flex items-start gap-3 border-b border-slate-100 px-5 py-4">
                                    <span class="mt-0.5 rounded bg-slate-100 px-2 py-0.5 text-xs font-medium uppercase tracking-wide text-slate-600">
                                        "You"
                                    </span>
                                    <p class="text-sm text-slate-900" data-testid="exchange-question">{ex.question}</p>
                                </div>
                                <div class="flex items-start gap-3 px-5 py-4" role="status">
                                    <span class="mt-0.5 rounded bg-teal-700 px-2 py-0.5 text-xs font-medium uppercase tracking-wide text-white">
                                        "Clarion"
                                    </span>
                                    <p class="text-sm text-slate-600">
                                        "Question received. Answering is not switched on in this build yet: the understanding engine and the clinical dataset are being connected."
                                    </p>
                                </div>
                            </li>
                        </For>
                    </ol>
                </Show>
            </section>

            <form
                class="sticky bottom-4 rounded-xl border border-slate-300 bg-white p-3 shadow-md focus-within:border-teal-600 focus-within:ring-2 focus-within:ring-teal-600/20"
                on:submit=move |ev| {
                    ev.prevent_default();
                    send();
                }
            >
                <label for="question" class="sr-only">"Your question"</label>
                <textarea
                    id="question"
                    name="question"
                    node_ref=textarea
                    rows="2"
                    maxlength=MAX_QUESTION_CHARS.to_string()
                    placeholder="e.g. How many diabetic foot ulcers healed in the last 90 days?"
                    class="block w-full resize-none border-0 bg-transparent px-2 py-1.5 text-base text-slate-900 placeholder:text-slate-400 focus:outline-none"
                    prop:value=move || draft.get()
                    on:input=move |ev| set_draft.set(event_target_value(&ev))
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
                        class="inline-flex items-center gap-2 rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-not-allowed disabled:bg-slate-300"
                    >
                        "Send"
                    </button>
                </div>
            </form>
        </div>
    }
}
