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
//!
//! The period comes from the address: `?days=N` (the "last N days" links) or
//! `?from=YYYY-MM-DD&until=YYYY-MM-DD` (the range form, a plain GET form). A bad range
//! shows the server's message (what to change) above the form, with status 400.

use crate::components::ui::PageHeader;
use crate::components::ui::error_text;
use crate::server_fns::get_analytics_html;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;
use leptos_router::hooks::use_query_map;

/// The Analytics page.
#[component]
pub fn AnalyticsPage() -> impl IntoView {
    let query = use_query_map();
    let param = move |k: &str| {
        query
            .with_untracked(|q| q.get(k))
            .filter(|v| !v.trim().is_empty())
    };
    // `days` that is not a number reaches the server as an out-of-range 0: a clear 400.
    let days = param("days").map(|d| d.trim().parse::<u32>().unwrap_or(0));
    let (from, until) = (param("from"), param("until"));
    let form = StoredValue::new((
        from.clone().unwrap_or_default(),
        until.clone().unwrap_or_default(),
    ));
    // Blocking: the page's HTTP status (403 for clinicians, 400 for a bad range) is known before the HTML is sent.
    let data = Resource::new_blocking(
        move || (days, from.clone(), until.clone()),
        |(days, from, until)| get_analytics_html(days, from, until),
    );
    view! {
        <Title text="Analytics" />
        <Suspense fallback=|| view! { <div class="h-96 animate-pulse rounded-xl bg-slate-100"></div> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(html) => view! { <div data-testid="analytics-report" inner_html=html></div> }.into_any(),
                    Err(e) if is_forbidden(&e) => view! { <AdminsOnly /> }.into_any(),
                    Err(e) => {
                        let (from, until) = form.get_value();
                        view! {
                            <PageHeader title="Analytics" subtitle="How often clinicians are asked to clarify, and what they choose." />
                            <p role="alert" class="mb-4 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800" data-testid="analytics-error">
                                "Analytics could not be shown: " {error_text(&e)}
                            </p>
                            <RangeControls from until preset=None />
                        }
                            .into_any()
                    }
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

/// The "last N days" links the page offers.
pub const PRESETS: [u32; 4] = [7, 30, 90, 365];

/// The period controls: "last N days" links, a from–until form (a plain GET form:
/// works without the wasm) and, once there is a report, its CSV.
#[component]
pub fn RangeControls(
    /// The form's values (ISO dates, or what was typed).
    from: String,
    until: String,
    /// The preset in force, if any.
    preset: Option<u32>,
    /// The CSV link of the report shown, if any.
    #[prop(optional)]
    csv: Option<String>,
) -> impl IntoView {
    const LINK: &str = "rounded-md px-2.5 py-1 text-sm font-medium focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600";
    let input = "mt-1 block rounded-md border border-slate-300 bg-white px-2 py-1 text-sm text-slate-900 focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600";
    view! {
        <div class="mb-6 flex flex-wrap items-end gap-x-6 gap-y-3 rounded-xl border border-slate-200 bg-white px-4 py-3 shadow-sm" data-testid="analytics-range">
            <nav aria-label="Period">
                <p class="text-xs font-medium text-slate-600">"Last"</p>
                <ul class="mt-1 flex gap-1">
                    {PRESETS.into_iter().map(|n| {
                        let on = preset == Some(n);
                        let class = if on { format!("{LINK} bg-teal-700 text-white") } else { format!("{LINK} text-teal-800 hover:bg-teal-50") };
                        view! {
                            <li>
                                <a href=format!("/analytics?days={n}") class=class aria-current=on.then_some("page")>{format!("{n} days")}</a>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </nav>
            <form method="get" action="/analytics" class="flex flex-wrap items-end gap-3" aria-label="Date range" data-testid="range-form">
                <label class="text-xs font-medium text-slate-600">
                    "From"
                    <input type="date" name="from" value=from required class=input />
                </label>
                <label class="text-xs font-medium text-slate-600">
                    "Until"
                    <input type="date" name="until" value=until class=input />
                </label>
                <button type="submit" class="rounded-md bg-teal-700 px-3 py-1.5 text-sm font-semibold text-white hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2">
                    "Show"
                </button>
            </form>
            {csv.map(|href| view! {
                <a href=href download="" class="ml-auto inline-flex items-center gap-1.5 rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-semibold text-slate-800 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600" data-testid="analytics-csv">
                    "Download CSV"
                    <span class="sr-only">" (per-day figures and totals)"</span>
                </a>
            })}
        </div>
    }
}
