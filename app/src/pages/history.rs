//! History: the user's past questions, newest first.

use crate::components::ui::{EmptyState, PageHeader};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;

/// The History page.
#[component]
pub fn HistoryPage() -> impl IntoView {
    view! {
        <Title text="History" />
        <PageHeader
            title="History"
            subtitle="Your past questions, newest first, with the clarifications you gave and the assumptions Clarion made. Re-run any of them in one click."
        />
        <EmptyState
            title="No questions yet"
            body="Questions you ask appear here with the definitions that were applied, so you can repeat or refine them later."
        >
            <A href="/" attr:class="inline-flex rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2">
                "Ask a question"
            </A>
        </EmptyState>
    }
}
