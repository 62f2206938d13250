//! Analytics (admins): how often people are asked, what they answer, where Clarion guesses.

use crate::components::ui::PageHeader;
use leptos::prelude::*;
use leptos_meta::Title;

const METRICS: [(&str, &str); 4] = [
    (
        "Clarification rate",
        "Share of questions that needed a clarification panel",
    ),
    ("Abandonment", "Clarification rounds left unanswered"),
    ("Auto-resolution", "Ambiguities resolved by a saved definition"),
    ("Questions asked", "All questions in the selected period"),
];

/// The Analytics page.
#[component]
pub fn AnalyticsPage() -> impl IntoView {
    view! {
        <Title text="Analytics" />
        <PageHeader
            title="Analytics"
            subtitle="How often clinicians are asked to clarify, what they choose, and where Clarion has to guess."
        />
        <dl class="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-4">
            {METRICS
                .into_iter()
                .map(|(name, help)| {
                    view! {
                        <div class="rounded-xl border border-slate-200 bg-white p-5 shadow-sm">
                            <dt class="text-sm font-medium text-slate-600">{name}</dt>
                            <dd class="mt-2 text-3xl font-semibold tabular-nums text-slate-900">"—"</dd>
                            <dd class="mt-1 text-xs text-slate-500">{help}</dd>
                        </div>
                    }
                })
                .collect_view()}
        </dl>
        <p class="mt-6 text-sm text-slate-500">"No questions have been asked yet, so there is nothing to chart."</p>
    }
}
