//! The 404 page (the server also sets the 404 status).

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;

/// Shown for any path that is not a page.
#[component]
pub fn NotFound() -> impl IntoView {
    view! {
        <Title text="Page not found" />
        <div class="mx-auto mt-12 max-w-lg text-center">
            <p class="text-sm font-semibold uppercase tracking-wide text-teal-700">"404"</p>
            <h1 class="mt-2 text-3xl font-semibold tracking-tight text-slate-900">"Page not found"</h1>
            <p class="mt-3 text-sm text-slate-600">
                "There is no page at this address. It may have moved, or the link may be mistyped."
            </p>
            <A href="/" attr:class="mt-6 inline-flex rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2">
                "Back to Ask"
            </A>
        </div>
    }
}
