//! The page frame: header with navigation, main column, footer.

use crate::protocol::UserSummary;
use crate::server_fns::current_user;
use leptos::prelude::*;
use leptos_router::components::A;

const NAV: [(&str, &str); 6] = [
    ("/", "Ask"),
    ("/history", "History"),
    ("/saved", "Saved"),
    ("/glossary", "Glossary"),
    ("/analytics", "Analytics"),
    ("/settings", "Settings"),
];

/// The navigation entry shown to administrators only.
const ADMIN_ONLY: &str = "/analytics";

/// Wraps every page.
#[component]
pub fn Layout(children: Children) -> impl IntoView {
    let user = OnceResource::new(current_user());
    // Known synchronously on the server and carried to the browser with the page, so
    // the navigation needs no Suspense (and cannot flash or mismatch on hydration).
    let is_admin = SharedValue::new(|| {
        #[cfg(feature = "ssr")]
        {
            crate::server_fns::ssr::viewer().is_some_and(|u| u.is_admin)
        }
        #[cfg(not(feature = "ssr"))]
        {
            false
        }
    })
    .into_inner();
    view! {
        <a
            href="#main"
            class="sr-only focus:not-sr-only focus:absolute focus:left-4 focus:top-4 focus:z-50 focus:rounded-md focus:bg-white focus:px-4 focus:py-2 focus:text-sm focus:font-medium focus:shadow-lg focus:ring-2 focus:ring-teal-600"
        >
            "Skip to content"
        </a>
        <div class="flex min-h-full flex-col">
            <header class="sticky top-0 z-40 border-b border-slate-200 bg-white/95 backdrop-blur">
                <div class="mx-auto flex h-16 max-w-6xl items-center gap-3 px-4 sm:px-6 md:gap-6">
                    <A href="/" attr:class="flex items-center gap-2 rounded-md focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2">
                        <Logo />
                        <span class="hidden text-lg font-semibold tracking-tight text-slate-900 sm:inline">"Clarion"</span>
                    </A>
                    <nav aria-label="Main" class="flex flex-1 items-center gap-1 overflow-x-auto">
                        {NAV
                            .into_iter()
                            // Only administrators see Analytics (the page itself also refuses others).
                            .filter(|(href, _)| *href != ADMIN_ONLY || is_admin)
                            .map(|(href, label)| view! { <NavLink href label /> })
                            .collect_view()}
                    </nav>
                    <UserMenu user />
                </div>
            </header>
            <main id="main" class="mx-auto w-full max-w-6xl flex-1 px-4 py-8 sm:px-6">
                {children()}
            </main>
            <footer class="border-t border-slate-200 bg-white">
                <div class="mx-auto flex max-w-6xl flex-wrap items-center justify-between gap-2 px-4 py-4 text-xs text-slate-500 sm:px-6">
                    <span>"Clarion — plain-English questions over your wound-care data."</span>
                    <span>"Read-only access · every answer shows its assumptions"</span>
                </div>
            </footer>
        </div>
        <HydrationMarker />
    }
}

/// Marks `<body data-hydrated="true">` once the page's islands are live. Rendered
/// after every other island in the document, so it hydrates last; tests wait for
/// the marker before driving client-side controls.
#[island]
fn HydrationMarker() -> impl IntoView {
    Effect::new(move |_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
}

/// One entry of the main navigation.
#[component]
fn NavLink(href: &'static str, label: &'static str) -> impl IntoView {
    view! {
        <A
            href=href
            exact=true
            attr:class="whitespace-nowrap rounded-md px-3 py-2 text-sm font-medium text-slate-600 hover:bg-slate-100 hover:text-slate-900 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 aria-[current=page]:bg-teal-50 aria-[current=page]:text-teal-800"
        >
            {label}
        </A>
    }
}

/// The signed-in user in the header, with a sign-out button (a plain form
/// POST to `/logout`, so it works before the wasm has loaded).
#[component]
fn UserMenu(user: OnceResource<Result<Option<UserSummary>, ServerFnError>>) -> impl IntoView {
    // Below the md breakpoint only the initials and the sign-out button show,
    // so signing out stays reachable on narrow screens.
    view! {
        <div class="flex shrink-0 items-center gap-2 md:gap-3">
            <Transition fallback=|| view! { <span class="h-8 w-24 animate-pulse rounded bg-slate-100"></span> }>
                {move || Suspend::new(async move {
                    match user.await {
                        Ok(Some(u)) => {
                            let initials: String = u
                                .display_name
                                .split_whitespace()
                                .filter_map(|w| w.chars().next())
                                .take(2)
                                .collect();
                            view! {
                                <span class="hidden text-right leading-tight md:block">
                                    <span class="block text-sm font-medium text-slate-800" data-testid="current-user">
                                        {u.display_name.clone()}
                                    </span>
                                    <span class="block text-xs text-slate-500">
                                        {if u.is_admin { "Administrator" } else { "Clinician" }}
                                    </span>
                                </span>
                                <span
                                    aria-hidden="true"
                                    title=u.display_name.clone()
                                    class="flex h-9 w-9 items-center justify-center rounded-full bg-teal-700 text-sm font-semibold text-white"
                                >
                                    {initials}
                                </span>
                                <form method="post" action="/logout">
                                    <button
                                        type="submit"
                                        class="whitespace-nowrap rounded-md px-2 py-2 text-sm font-medium text-slate-600 hover:bg-slate-100 hover:text-slate-900 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 md:px-3"
                                    >
                                        "Sign out"
                                    </button>
                                </form>
                            }
                                .into_any()
                        }
                        Ok(None) | Err(_) => {
                            view! {
                                <a href="/login" class="rounded-md px-3 py-2 text-sm font-medium text-teal-800 hover:bg-teal-50">
                                    "Sign in"
                                </a>
                            }
                                .into_any()
                        }
                    }
                })}
            </Transition>
        </div>
    }
}

/// Clarion's mark: a speech bubble with a question mark, in the brand teal.
#[component]
pub fn Logo() -> impl IntoView {
    view! {
        <svg aria-hidden="true" viewBox="0 0 32 32" class="h-8 w-8">
            <rect x="2" y="3" width="28" height="22" rx="6" class="fill-teal-700" />
            <path d="M9 25 L9 30 L15 25 Z" class="fill-teal-700" />
            <path
                d="M12.5 11a3.5 3.5 0 1 1 5.2 3.05c-1 .57-1.7 1.2-1.7 2.45"
                fill="none"
                stroke="white"
                stroke-width="2.2"
                stroke-linecap="round"
            />
            <circle cx="16" cy="20" r="1.4" fill="white" />
        </svg>
    }
}
