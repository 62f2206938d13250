//! Clarion's user interface, shared protocol types and server functions.
//!
//! Compiled twice: with `ssr` into the server (renders HTML, runs server
//! functions) and with `hydrate` into the browser bundle. Anything server-only
//! lives behind `#[cfg(feature = "ssr")]`.

#![recursion_limit = "256"]

pub mod components;
pub mod html;
pub mod pages;
pub mod protocol;
pub mod server_fns;

#[cfg(feature = "ssr")]
pub mod backend;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Title, provide_meta_context};
use leptos_router::{
    components::{Route, Router, Routes},
    path,
};

/// Name of the built CSS/JS/wasm bundle under `/pkg`.
pub const OUTPUT_NAME: &str = "clarion";

/// The HTML document around the app (server only renders it).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en" class="h-full bg-slate-50">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light" />
                <link rel="icon" href="data:," />
                // A plain link in the server-only shell: leptos_meta's <Stylesheet> inside the
                // hydrated tree mismatches when the wasm is built with `erase_components`.
                <link rel="stylesheet" id="leptos" href=format!("/pkg/{OUTPUT_NAME}.css") />
                <AutoReload options=options.clone() />
                <HydrationScripts options islands=true />
                <MetaTags />
            </head>
            <body class="h-full text-slate-900 antialiased">
                <App />
            </body>
        </html>
    }
}

/// The routed application. Routing happens on the server (every navigation is a page
/// load); in the browser only the islands hydrate (see `frontend`).
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();

    view! {
        <Title formatter=|t: String| if t.is_empty() { "Clarion".to_string() } else { format!("{t} · Clarion") } />
        <Router>
            <components::layout::Layout>
                <Routes fallback=|| view! { <pages::not_found::NotFound /> }>
                    <Route path=path!("/") view=pages::ask::AskPage />
                    <Route path=path!("/threads/:id") view=pages::ask::AskPage />
                    <Route path=path!("/history") view=pages::history::HistoryPage />
                    <Route path=path!("/saved") view=pages::saved::SavedPage />
                    <Route path=path!("/saved/new") view=pages::saved::SaveQuestionPage />
                    <Route path=path!("/glossary") view=pages::glossary::GlossaryPage />
                    <Route path=path!("/analytics") view=pages::analytics::AnalyticsPage />
                    <Route path=path!("/settings") view=pages::settings::SettingsPage />
                    <Route path=path!("/login") view=pages::login::LoginPage />
                </Routes>
            </components::layout::Layout>
        </Router>
    }
}
