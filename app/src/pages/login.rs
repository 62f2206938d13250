//! Sign in.
//!
//! A plain HTML form posting to `/login` (handled by the server's auth
//! routes), so it works before — or without — the wasm. On a refused sign-in
//! the server renders this page again with a [`LoginFeedback`] in context: the
//! message and the username typed. The feedback travels to the browser as a
//! `SharedValue`, so the hydrated page matches the server's HTML.

use crate::components::layout::Logo;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;
use serde::{Deserialize, Serialize};

/// What the sign-in page shows besides the empty form.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginFeedback {
    /// Why the last attempt was refused.
    pub error: Option<String>,
    /// The username typed last time (never the password).
    pub username: String,
    /// Where to go after signing in (a local path; the server checks it again).
    pub next: String,
}

/// The feedback the server put in context for a re-render, if any.
fn server_feedback() -> Option<LoginFeedback> {
    #[cfg(feature = "ssr")]
    {
        use_context::<LoginFeedback>()
    }
    #[cfg(not(feature = "ssr"))]
    {
        None
    }
}

/// The Login page.
#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let feedback = SharedValue::new(move || {
        server_feedback().unwrap_or_else(|| LoginFeedback {
            next: query.read_untracked().get("next").unwrap_or_default(),
            ..LoginFeedback::default()
        })
    })
    .into_inner();
    let LoginFeedback {
        error,
        username,
        next,
    } = feedback;
    let focus_password = error.is_some() && !username.is_empty();

    view! {
        <Title text="Sign in" />
        <div class="mx-auto mt-8 max-w-sm">
            <div class="flex flex-col items-center text-center">
                <Logo />
                <h1 class="mt-4 text-2xl font-semibold tracking-tight text-slate-900">"Sign in to Clarion"</h1>
                <p class="mt-1 text-sm text-slate-600">"Use the account your administrator gave you."</p>
            </div>
            <form
                method="post"
                action="/login"
                aria-label="Sign in"
                class="mt-8 space-y-5 rounded-xl border border-slate-200 bg-white p-6 shadow-sm"
            >
                {error
                    .map(|e| {
                        view! {
                            <p
                                role="alert"
                                data-testid="login-error"
                                class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800"
                            >
                                {e}
                            </p>
                        }
                    })}
                <input type="hidden" name="next" value=next />
                <div>
                    <label for="username" class="block text-sm font-medium text-slate-700">"Username"</label>
                    <input
                        id="username"
                        name="username"
                        type="text"
                        autocomplete="username"
                        autocapitalize="none"
                        spellcheck="false"
                        required
                        autofocus=!focus_password
                        value=username
                        class="mt-1 block w-full rounded-lg border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600/20"
                    />
                </div>
                <div>
                    <label for="password" class="block text-sm font-medium text-slate-700">"Password"</label>
                    <input
                        id="password"
                        name="password"
                        type="password"
                        autocomplete="current-password"
                        required
                        autofocus=focus_password
                        class="mt-1 block w-full rounded-lg border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600/20"
                    />
                </div>
                <button
                    type="submit"
                    class="w-full rounded-lg bg-teal-700 px-4 py-2.5 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                >
                    "Sign in"
                </button>
            </form>
        </div>
    }
}
