//! Sign in.

use crate::components::layout::Logo;
use leptos::prelude::*;
use leptos_meta::Title;

/// The Login page.
#[component]
pub fn LoginPage() -> impl IntoView {
    view! {
        <Title text="Sign in" />
        <div class="mx-auto mt-8 max-w-sm">
            <div class="flex flex-col items-center text-center">
                <Logo />
                <h1 class="mt-4 text-2xl font-semibold tracking-tight text-slate-900">"Sign in to Clarion"</h1>
                <p class="mt-1 text-sm text-slate-600">"Use the account your administrator gave you."</p>
            </div>
            <form method="post" action="/login" class="mt-8 space-y-5 rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
                <div>
                    <label for="username" class="block text-sm font-medium text-slate-700">"Username"</label>
                    <input
                        id="username"
                        name="username"
                        type="text"
                        autocomplete="username"
                        required
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
