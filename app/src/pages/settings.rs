//! Settings: how Clarion treats ambiguous questions for this clinician (F13),
//! the choices it remembered (F12), the user's API tokens, and the account
//! (password, sign out); for administrators also the optional language model's
//! runtime switch, endpoint (never the key) and circuit breaker (F24).

use crate::components::tokens::ApiTokens;
use crate::components::ui::{Card, PageHeader, error_text, submitted};
use crate::protocol::{LanguageModelStatus, PreferenceItem, Sensitivity};
use crate::server_fns::{
    ChangePassword, MIN_PASSWORD_CHARS, SaveSettings, SetLanguageModel, delete_preference, get_api_tokens,
    get_language_model, get_preferences, get_settings,
};
use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_meta::Title;

/// The Settings page. Rendered on the server only: it loads the settings and the
/// remembered choices and hands them to the islands as props (no browser resources).
#[component]
pub fn SettingsPage() -> impl IntoView {
    let settings = Resource::new_blocking(
        || (),
        |_| async { get_settings().await.map_err(|e| error_text(&e)) },
    );
    let prefs = Resource::new_blocking(
        || (),
        |_| async { get_preferences().await.map_err(|e| error_text(&e)) },
    );
    let tokens = Resource::new_blocking(
        || (),
        |_| async { get_api_tokens().await.map_err(|e| error_text(&e)) },
    );
    // `None` for clinicians: the section is not rendered at all.
    let language_model = Resource::new_blocking(
        || (),
        |_| async { get_language_model().await.map_err(|e| error_text(&e)) },
    );
    view! {
        <Title text="Settings" />
        <PageHeader
            title="Settings"
            subtitle="Choose how Clarion handles questions that could mean more than one thing, review what it remembered for you, and manage your account."
        />
        <div class="grid gap-6 lg:grid-cols-3">
            <div class="flex flex-col gap-6 lg:col-span-2">
                <Card
                    title="Clarifications"
                    description="These apply to every question you ask, in the browser and through the API."
                >
                    <Suspense fallback=|| view! { <div class="h-48 animate-pulse rounded-lg bg-slate-100"></div> }>
                        {move || Suspend::new(async move {
                            let current = settings.await;
                            view! { <ClarificationSettings current /> }
                        })}
                    </Suspense>
                </Card>
                <Card
                    title="Remembered choices"
                    description="How you answered Clarion's questions. Remembered choices are applied automatically and shown as “your saved definition”. An answer given three times is preselected; once one of those answers was successful (a thumbs-up, or kept without edits) and it is more than 80 % of your answers to that question, it is applied without asking as “your usual definition”, which you can change on the answer or forget here."
                >
                    <Suspense fallback=|| view! { <div class="h-24 animate-pulse rounded-lg bg-slate-100"></div> }>
                        {move || Suspend::new(async move {
                            let items = prefs.await;
                            view! { <RememberedChoices items /> }
                        })}
                    </Suspense>
                </Card>
                <Card
                    title="API tokens"
                    description="Tokens let a script or another system use Clarion's JSON API as you. Each can be revoked here at any time."
                >
                    <Suspense fallback=|| view! { <div class="h-24 animate-pulse rounded-lg bg-slate-100"></div> }>
                        {move || Suspend::new(async move {
                            let items = tokens.await;
                            view! { <ApiTokens items /> }
                        })}
                    </Suspense>
                </Card>
            </div>
            <div class="flex flex-col gap-6">
                <Card title="Account" description="Change your password or sign out of Clarion.">
                    <AccountSection />
                </Card>
                <Suspense fallback=|| ()>
                    {move || Suspend::new(async move {
                        match language_model.await {
                            Ok(Some(status)) => view! {
                                <Card
                                    title="Language model"
                                    description="Administrators only. An optional OpenAI-compatible model reads the words Clarion's engine cannot; switching it off here applies to every replica at once."
                                >
                                    <LanguageModelSwitch status />
                                </Card>
                            }
                            .into_any(),
                            _ => ().into_any(),
                        }
                    })}
                </Suspense>
            </div>
        </div>
    }
}

/// The administrators' runtime switch of the language model, with its endpoint (never
/// the key) and the circuit breaker's state on this replica. Server-rendered with a
/// plain form post (the server function sends the browser back to Settings, which
/// shows the new state), so it adds nothing to the browser's bundle.
#[component]
fn LanguageModelSwitch(status: LanguageModelStatus) -> impl IntoView {
    let configured = status.configured;
    let endpoint = if status.configured {
        status.endpoint.clone()
    } else {
        "not configured (CLARION_LLM_URL is unset)".into()
    };
    let breaker = match (status.breaker.as_str(), status.paused_for_secs) {
        ("paused", Some(secs)) => format!("paused — calls resume in {secs} s"),
        ("ok", _) if status.consecutive_failures == 0 => "working — calls go through".to_string(),
        (b, _) => format!("{b} ({} failed call(s) in a row)", status.consecutive_failures),
    };
    view! {
        <form
            method="post"
            action=SetLanguageModel::url()
            class="space-y-4"
            aria-label="Language model"
            data-testid="language-model"
        >
            <dl class="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
                <dt class="text-slate-500">"Endpoint"</dt>
                <dd class="break-all font-mono text-xs text-slate-800" data-testid="llm-endpoint">{endpoint}</dd>
                <dt class="text-slate-500">"Model"</dt>
                <dd class="text-slate-800">{status.model.clone()}</dd>
                <dt class="text-slate-500">"Key"</dt>
                <dd class="text-slate-800">{if status.key_set { "set (hidden)" } else { "none" }}</dd>
                <dt class="text-slate-500">"Breaker"</dt>
                <dd class="text-slate-800" data-testid="llm-breaker">{breaker}</dd>
            </dl>
            <div class="flex items-start justify-between gap-6">
                <div>
                    <label for="llm_enabled" class="text-sm font-medium text-slate-900">"Use the language model"</label>
                    <p id="llm-help" class="mt-1 text-sm text-slate-600">
                        "Off: Clarion asks its own questions and never calls the model."
                    </p>
                </div>
                <input
                    id="llm_enabled"
                    name="enabled"
                    type="checkbox"
                    value="true"
                    role="switch"
                    aria-describedby="llm-help"
                    checked=status.enabled
                    disabled=!configured
                    class="relative mt-1 h-6 w-11 shrink-0 cursor-pointer appearance-none rounded-full bg-slate-300 transition-colors before:absolute before:left-0.5 before:top-0.5 before:h-5 before:w-5 before:rounded-full before:bg-white before:shadow before:transition-transform checked:bg-teal-700 checked:before:translate-x-5 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-not-allowed disabled:opacity-50"
                />
            </div>
            <div class="flex items-center gap-4">
                <button
                    type="submit"
                    disabled=!configured
                    class="rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-not-allowed disabled:bg-slate-300"
                >
                    "Apply"
                </button>
                <p class="text-sm text-teal-800" data-testid="llm-status">
                    {if status.enabled { "The language model is on." } else { "The language model is off." }}
                </p>
            </div>
        </form>
    }
}

/// The skip and sensitivity settings, saved in place.
#[island]
fn ClarificationSettings(
    /// The settings as loaded, or why they could not be.
    current: Result<crate::protocol::Settings, String>,
) -> impl IntoView {
    match current {
        Ok(current) => view! { <SettingsForm current /> }.into_any(),
        Err(e) => view! {
            <p role="alert" class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                "Your settings could not be loaded: " {e}
            </p>
        }
        .into_any(),
    }
}

#[component]
fn SettingsForm(current: crate::protocol::Settings) -> impl IntoView {
    let save = ServerAction::<SaveSettings>::new();
    let result = save.value();
    let pending = save.pending();
    // A plain form post to the server function before the wasm is live; afterwards
    // the same fields are sent without leaving the page.
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        save.dispatch(SaveSettings {
            sensitivity: submitted(&ev, "input[name=sensitivity]:checked")
                .unwrap_or_else(|| current.sensitivity.as_str().to_string()),
            skip_clarifications: submitted(&ev, "input[name=skip_clarifications]:checked"),
        });
    };
    view! {
        <form
            method="post"
            action=SaveSettings::url()
            class="space-y-6"
            aria-label="Clarification settings"
            on:submit=on_submit
        >
            <div class="flex items-start justify-between gap-6">
                <div>
                    <label for="skip_clarifications" class="text-sm font-medium text-slate-900">
                        "Skip all clarifications"
                    </label>
                    <p id="skip-help" class="mt-1 text-sm text-slate-600">
                        "Never stop to ask. Clarion answers straight away with its best guesses, each shown as an assumption badge you can change."
                    </p>
                </div>
                <input
                    id="skip_clarifications"
                    name="skip_clarifications"
                    type="checkbox"
                    role="switch"
                    aria-describedby="skip-help"
                    checked=current.skip_clarifications
                    class="relative mt-1 h-6 w-11 shrink-0 cursor-pointer appearance-none rounded-full bg-slate-300 transition-colors before:absolute before:left-0.5 before:top-0.5 before:h-5 before:w-5 before:rounded-full before:bg-white before:shadow before:transition-transform checked:bg-teal-700 checked:before:translate-x-5 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                />
            </div>
            <fieldset>
                <legend class="text-sm font-medium text-slate-900">"Clarification sensitivity"</legend>
                <p class="mt-1 text-sm text-slate-600">"How readily Clarion stops to ask when it is unsure."</p>
                <div class="mt-3 grid gap-3 sm:grid-cols-3">
                    {Sensitivity::ALL
                        .into_iter()
                        .map(|s| {
                            let id = format!("sensitivity-{}", s.as_str());
                            let label_for = id.clone();
                            view! {
                                <label
                                    for=label_for
                                    class="flex cursor-pointer flex-col rounded-lg border border-slate-200 p-3 hover:border-teal-300 has-[:checked]:border-teal-600 has-[:checked]:bg-teal-50 has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-teal-600"
                                >
                                    <span class="flex items-center gap-2">
                                        <input
                                            id=id
                                            type="radio"
                                            name="sensitivity"
                                            value=s.as_str()
                                            checked=current.sensitivity == s
                                            class="h-4 w-4 accent-teal-700 focus:outline-none"
                                        />
                                        <span class="text-sm font-medium text-slate-900">{s.label()}</span>
                                    </span>
                                    <span class="mt-1 text-xs text-slate-600">{s.help()}</span>
                                </label>
                            }
                        })
                        .collect_view()}
                </div>
            </fieldset>
            <div class="flex items-center gap-4 border-t border-slate-100 pt-5">
                <button
                    type="submit"
                    disabled=move || pending.get()
                    class="rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-wait disabled:bg-slate-300"
                >
                    {move || if pending.get() { "Saving…" } else { "Save settings" }}
                </button>
                <p aria-live="polite" class="text-sm" data-testid="save-status">
                    {move || match result.get() {
                        Some(Ok(_)) => view! { <span class="text-teal-800">"Settings saved."</span> }.into_any(),
                        Some(Err(e)) => view! { <span class="text-red-700">{error_text(&e)}</span> }.into_any(),
                        None => ().into_any(),
                    }}
                </p>
            </div>
        </form>
    }
}

/// The remembered and learned choices, each with a delete button.
#[island]
fn RememberedChoices(
    /// The choices as loaded, or why they could not be.
    items: Result<Vec<PreferenceItem>, String>,
) -> impl IntoView {
    let (items, load_error) = match items {
        Ok(items) => (items, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let items = RwSignal::new(items);
    let error = RwSignal::new(None::<String>);
    let pending = RwSignal::new(false);
    let forget = move |id: i64| {
        if pending.get_untracked() {
            return;
        }
        pending.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            match delete_preference(id).await {
                Ok(()) => items.update(|v| v.retain(|p| p.id != id)),
                Err(e) => error.set(Some(error_text(&e))),
            }
            pending.set(false);
        });
    };
    view! {
        {match load_error {
            Some(e) => view! {
                <p role="alert" class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                    "Your remembered choices could not be loaded: " {e}
                </p>
            }
            .into_any(),
            None => view! {
                <Show
                    when=move || items.with(|v| !v.is_empty())
                    fallback=|| view! {
                        <p class="text-sm text-slate-500" data-testid="remembered-empty">
                            "You have no remembered choices yet. Tick “Remember my choice” when Clarion asks, and the answer is applied automatically next time."
                        </p>
                    }
                >
                    <ul class="divide-y divide-slate-100" aria-label="Remembered choices" data-testid="remembered-list">
                        <For each=move || items.get() key=|p| p.id let:pref>
                            <PreferenceRow pref forget pending />
                        </For>
                    </ul>
                </Show>
            }
            .into_any(),
        }}
        <p aria-live="polite" class="mt-2 text-sm text-red-700">{move || error.get()}</p>
    }
}

#[component]
fn PreferenceRow(
    pref: PreferenceItem,
    forget: impl Fn(i64) + 'static,
    pending: RwSignal<bool>,
) -> impl IntoView {
    let (status, status_class) = if pref.remembered {
        ("Remembered", "bg-teal-50 text-teal-800 ring-teal-200")
    } else if pref.usual {
        ("Your usual definition", "bg-teal-50 text-teal-800 ring-teal-200")
    } else if pref.offered_as_default {
        ("Offered as default", "bg-amber-50 text-amber-900 ring-amber-200")
    } else {
        ("Learned", "bg-slate-50 text-slate-700 ring-slate-200")
    };
    let times = if pref.count == 1 {
        "Given once".to_string()
    } else {
        format!("Given {} times", pref.count)
    };
    let id = pref.id;
    let label = pref.label.clone();
    let aria = format!("Forget “{}”", pref.label);
    view! {
        <li class="flex items-start justify-between gap-4 py-3" data-testid="remembered-choice">
            <div class="min-w-0">
                <p class="text-sm font-medium text-slate-900 break-words">{label}</p>
                <p class="mt-1 flex flex-wrap items-center gap-2 text-xs text-slate-500">
                    <span>{times}</span>
                    <span class=format!("rounded-full px-2 py-0.5 font-medium ring-1 ring-inset {status_class}")>
                        {status}
                    </span>
                </p>
            </div>
            <button
                type="button"
                aria-label=aria
                disabled=move || pending.get()
                on:click=move |_| forget(id)
                class="shrink-0 rounded-md px-2.5 py-1.5 text-sm font-medium text-red-700 hover:bg-red-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-red-600 disabled:opacity-50"
            >
                "Forget"
            </button>
        </li>
    }
}

/// Change password and sign out.
#[island]
fn AccountSection() -> impl IntoView {
    let change = ServerAction::<ChangePassword>::new();
    let result = change.value();
    let pending = change.pending();
    let error = move || match result.get() {
        Some(Err(e)) => Some(error_text(&e)),
        _ => None,
    };
    let done = move || matches!(result.get(), Some(Ok(())));
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let field = |name: &str| submitted(&ev, &format!("input[name={name}]")).unwrap_or_default();
        change.dispatch(ChangePassword {
            current: field("current"),
            new: field("new"),
            confirm: field("confirm"),
        });
    };
    let input_class = "mt-1 block w-full rounded-lg border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600/20 aria-[invalid=true]:border-red-500";
    view! {
        <Show
            when=done
            fallback=move || {
                view! {
                    <form
                        method="post"
                        action=ChangePassword::url()
                        class="space-y-4"
                        aria-label="Change password"
                        on:submit=on_submit
                    >
                        <h3 class="text-sm font-semibold text-slate-900">"Change password"</h3>
                        <div>
                            <label for="current-password" class="block text-sm font-medium text-slate-700">
                                "Current password"
                            </label>
                            <input
                                id="current-password"
                                name="current"
                                type="password"
                                autocomplete="current-password"
                                required
                                aria-invalid=move || error().is_some().to_string()
                                aria-describedby="password-error"
                                class=input_class
                            />
                        </div>
                        <div>
                            <label for="new-password" class="block text-sm font-medium text-slate-700">
                                "New password"
                            </label>
                            <input
                                id="new-password"
                                name="new"
                                type="password"
                                autocomplete="new-password"
                                required
                                minlength=MIN_PASSWORD_CHARS.to_string()
                                aria-describedby="new-password-help"
                                class=input_class
                            />
                            <p id="new-password-help" class="mt-1 text-xs text-slate-500">
                                {format!("At least {MIN_PASSWORD_CHARS} characters.")}
                            </p>
                        </div>
                        <div>
                            <label for="confirm-password" class="block text-sm font-medium text-slate-700">
                                "Confirm new password"
                            </label>
                            <input
                                id="confirm-password"
                                name="confirm"
                                type="password"
                                autocomplete="new-password"
                                required
                                minlength=MIN_PASSWORD_CHARS.to_string()
                                class=input_class
                            />
                        </div>
                        <div id="password-error" aria-live="assertive" data-testid="password-error">
                            {move || error().map(|e| view! {
                                <p role="alert" class="rounded-lg bg-red-50 px-3 py-2 text-sm text-red-800">{e}</p>
                            })}
                        </div>
                        <button
                            type="submit"
                            disabled=move || pending.get()
                            class="w-full rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-wait disabled:bg-slate-300"
                        >
                            {move || if pending.get() { "Changing…" } else { "Change password" }}
                        </button>
                    </form>
                }
            }
        >
            <div role="status" class="rounded-lg bg-teal-50 px-4 py-3 text-sm text-teal-900" data-testid="password-changed">
                <p class="font-medium">"Password changed."</p>
                <p class="mt-1">"You have been signed out everywhere. Sign in again with your new password."</p>
                <a
                    href="/login?next=%2Fsettings"
                    rel="external"
                    class="mt-3 inline-flex rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                >
                    "Sign in again"
                </a>
            </div>
        </Show>
        <div class="mt-6 border-t border-slate-100 pt-5">
            <h3 class="text-sm font-semibold text-slate-900">"Sign out"</h3>
            <p class="mt-1 text-sm text-slate-600">"End your session on this device."</p>
            <form method="post" action="/logout" class="mt-3">
                <button
                    type="submit"
                    data-testid="settings-sign-out"
                    class="w-full rounded-lg border border-slate-300 bg-white px-4 py-2 text-sm font-semibold text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                >
                    "Sign out of Clarion"
                </button>
            </form>
        </div>
    }
}
