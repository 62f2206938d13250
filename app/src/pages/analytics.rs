//! Analytics (admins, F21): how often clinicians are asked to clarify, how many
//! rounds are left unanswered, how many answers needed no round, and which
//! ambiguous words come up most with what people chose.
//!
//! The report (figures and plain SVG charts) is rendered on the server only
//! ([`super::analytics_report`]) and arrives as HTML: visible before the wasm loads,
//! printable, and none of its drawing code is in the browser bundle (the page has
//! nothing to click but links, which the router handles as anywhere else). Clinicians
//! get a clear "administrators only" page (the server function answers 403, and the
//! page render carries that status).

use crate::components::ui::PageHeader;
use crate::components::ui::error_text;
use crate::server_fns::get_analytics_html;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;

/// Days shown.
const WINDOW_DAYS: u32 = 30;

/// The Analytics page.
#[component]
pub fn AnalyticsPage() -> impl IntoView {
    // Blocking: the page's HTTP status (403 for clinicians) is known before the HTML is sent.
    let data = Resource::new_blocking(|| (), |_| get_analytics_html(Some(WINDOW_DAYS)));
    view! {
        <Title text="Analytics" />
        <Suspense fallback=|| view! { <div class="h-96 animate-pulse rounded-xl bg-slate-100"></div> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(html) => view! { <div data-testid="analytics-report" inner_html=html></div> }.into_any(),
                    Err(e) if is_forbidden(&e) => view! { <AdminsOnly /> }.into_any(),
                    Err(e) => view! {
                        <PageHeader title="Analytics" subtitle="How often clinicians are asked to clarify, and what they choose." />
                        <p role="alert" class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                            "Analytics could not be loaded: " {error_text(&e)}
                        </p>
                    }
                        .into_any(),
                }
            })}
        </Suspense>
    }
}

fn is_forbidden(e: &ServerFnError) -> bool {
    error_text(e) == crate::protocol::ApiError::forbidden().message
}

#[component]
fn AdminsOnly() -> impl IntoView {
    view! {
        <div class="mx-auto mt-8 max-w-lg rounded-xl border border-slate-200 bg-white p-8 text-center shadow-sm" data-testid="admins-only">
            <h1 class="text-2xl font-semibold tracking-tight text-slate-900">"Analytics is for administrators"</h1>
            <p role="alert" class="mt-2 text-sm text-slate-600">
                "Only administrators can see this page. It shows how often everyone is asked to clarify; your own questions are in your history."
            </p>
            <div class="mt-6 flex flex-wrap justify-center gap-3">
                <A href="/history" attr:class="inline-flex rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2">
                    "Go to your history"
                </A>
                <A href="/" attr:class="inline-flex rounded-lg border border-slate-300 bg-white px-4 py-2 text-sm font-semibold text-slate-800 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2">
                    "Back to Ask"
                </A>
            </div>
        </div>
    }
}
