//! Glossary: what each everyday word means in this data set.

use crate::components::ui::PageHeader;
use leptos::prelude::*;
use leptos_meta::Title;

/// The Glossary page.
#[component]
pub fn GlossaryPage() -> impl IntoView {
    let (query, set_query) = signal(String::new());
    view! {
        <Title text="Glossary" />
        <PageHeader
            title="Glossary"
            subtitle="The words Clarion treats as ambiguous (large, serious, recent, improving…) and what each option means, plus the data it can answer questions about."
        />
        <div class="mb-6 max-w-md">
            <label for="glossary-search" class="block text-sm font-medium text-slate-700">"Search terms"</label>
            <input
                id="glossary-search"
                type="search"
                placeholder="e.g. large, healing, infection"
                class="mt-1 block w-full rounded-lg border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600/20"
                prop:value=move || query.get()
                on:input=move |ev| set_query.set(event_target_value(&ev))
            />
        </div>
        <div class="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-12 text-center">
            <p class="text-sm font-semibold text-slate-800">"The semantic model is not loaded in this build"</p>
            <p class="mx-auto mt-1 max-w-md text-sm text-slate-500">
                "Once the wound-care model is connected, every dictionary term and its options will be listed here."
            </p>
        </div>
    }
}
