//! API tokens in Settings: the user's own tokens (name, prefix, created, expires,
//! last used), each revocable; a new one is shown once, with its secret.

use crate::components::ui::error_text;
use crate::protocol::{ApiTokenItem, CreatedApiToken};
use crate::server_fns::{create_api_token, revoke_api_token};
use leptos::prelude::*;

/// The date part of an RFC 3339 time (`2026-11-26`).
fn day(t: &str) -> String {
    t.get(..10).unwrap_or(t).to_string()
}

/// The user's API tokens, with create and revoke.
#[island]
pub fn ApiTokens(
    /// The tokens as loaded, or why they could not be.
    items: Result<Vec<ApiTokenItem>, String>,
) -> impl IntoView {
    let (items, load_error) = match items {
        Ok(items) => (items, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let items = RwSignal::new(items);
    let error = RwSignal::new(None::<String>);
    let pending = RwSignal::new(false);
    let created = RwSignal::new(None::<CreatedApiToken>);
    let (name, set_name) = signal(String::new());
    let (days, set_days) = signal(String::from("90"));

    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if pending.get_untracked() {
            return;
        }
        pending.set(true);
        error.set(None);
        let expires = days.get_untracked().parse::<u32>().ok();
        let label = name.get_untracked();
        leptos::task::spawn_local(async move {
            match create_api_token(label, expires).await {
                Ok(c) => {
                    items.update(|v| v.insert(0, c.token.clone()));
                    created.set(Some(c));
                    set_name.set(String::new());
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
            pending.set(false);
        });
    };
    let revoke = move |id: i64| {
        if pending.get_untracked() {
            return;
        }
        pending.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            match revoke_api_token(id).await {
                Ok(()) => {
                    items.update(|v| v.retain(|t| t.id != id));
                    created.update(|c| {
                        if c.as_ref().is_some_and(|c| c.token.id == id) {
                            *c = None;
                        }
                    });
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
            pending.set(false);
        });
    };
    let input_class = "mt-1 block w-full rounded-lg border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600/20";
    view! {
        {load_error.map(|e| view! {
            <p role="alert" class="mb-3 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                "Your API tokens could not be loaded: " {e}
            </p>
        })}
        {move || created.get().map(|c| view! {
            <div class="mb-4 rounded-lg border border-amber-300 bg-amber-50 p-4" role="status" data-testid="token-secret">
                <p class="text-sm font-semibold text-amber-900">
                    {format!("Token “{}” created. Copy it now: it is not stored and will not be shown again.", c.token.name)}
                </p>
                <code class="mt-2 block break-all rounded bg-white px-3 py-2 font-mono text-xs text-slate-900 ring-1 ring-amber-200">
                    {c.secret.clone()}
                </code>
                <p class="mt-2 text-xs text-amber-900">"Send it as "<code>"Authorization: Bearer <token>"</code>"."</p>
            </div>
        })}
        <Show
            when=move || items.with(|v| !v.is_empty())
            fallback=|| view! {
                <p class="text-sm text-slate-500" data-testid="tokens-empty">
                    "You have no API tokens. Create one for a script or an integration that reads Clarion's JSON API as you."
                </p>
            }
        >
            <ul class="divide-y divide-slate-100" aria-label="API tokens" data-testid="token-list">
                <For each=move || items.get() key=|t| t.id let:token>
                    {
                        let id = token.id;
                        let aria = format!("Revoke “{}”", token.name);
                        let expires = token
                            .expires_at
                            .as_deref()
                            .map(|e| format!("expires {}", day(e)))
                            .unwrap_or_else(|| "no expiry".into());
                        let used = token
                            .last_used_at
                            .as_deref()
                            .map(|u| format!("last used {}", day(u)))
                            .unwrap_or_else(|| "never used".into());
                        view! {
                            <li class="flex items-start justify-between gap-4 py-3" data-testid="token">
                                <div class="min-w-0">
                                    <p class="text-sm font-medium text-slate-900 break-words">{token.name.clone()}</p>
                                    <p class="mt-1 text-xs text-slate-500">
                                        <code class="font-mono">{format!("{}…", token.prefix)}</code>
                                        {format!(" · created {} · {expires} · {used}", day(&token.created_at))}
                                    </p>
                                </div>
                                <button
                                    type="button"
                                    aria-label=aria
                                    disabled=move || pending.get()
                                    on:click=move |_| revoke(id)
                                    class="shrink-0 rounded-md px-2.5 py-1.5 text-sm font-medium text-red-700 hover:bg-red-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-red-600 disabled:opacity-50"
                                >
                                    "Revoke"
                                </button>
                            </li>
                        }
                    }
                </For>
            </ul>
        </Show>
        <form class="mt-4 grid gap-3 sm:grid-cols-[1fr_auto_auto] sm:items-end" aria-label="Create an API token" on:submit=create>
            <div>
                <label for="token-name" class="block text-sm font-medium text-slate-700">"Name"</label>
                <input
                    id="token-name"
                    name="name"
                    type="text"
                    maxlength="60"
                    required
                    placeholder="e.g. nightly export"
                    prop:value=move || name.get()
                    on:input=move |ev| set_name.set(event_target_value(&ev))
                    class=input_class
                />
            </div>
            <div>
                <label for="token-days" class="block text-sm font-medium text-slate-700">"Valid for"</label>
                <select
                    id="token-days"
                    name="expires_in_days"
                    on:change=move |ev| set_days.set(event_target_value(&ev))
                    class=input_class
                >
                    <option value="30">"30 days"</option>
                    <option value="90" selected>"90 days"</option>
                    <option value="365">"1 year"</option>
                    <option value="">"Until revoked"</option>
                </select>
            </div>
            <button
                type="submit"
                disabled=move || pending.get()
                class="rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:opacity-60"
            >
                "Create token"
            </button>
        </form>
        <p aria-live="polite" class="mt-2 text-sm text-red-700" data-testid="token-error">{move || error.get()}</p>
        <p class="mt-2 text-xs text-slate-500">"Changing your password revokes every token."</p>
    }
}
