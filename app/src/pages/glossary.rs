//! Glossary: what each everyday word means in this data set (F20), and what
//! questions can be about.
//!
//! The page is server HTML; only the search box is an island. Each term, entity and
//! data item carries its search text (`data-search`), and searching hides what does
//! not match, so the browser needs none of the glossary's data or views.

use crate::components::ui::{PageHeader, field_value};
use crate::protocol::{GlossaryEntity, GlossaryTerm, entity_search, search_matches};
use crate::server_fns::get_glossary;
use leptos::prelude::*;
use leptos_meta::Title;

/// Marker classes the search looks for (not styles).
const TERM: &str = "gl-term";
const ENTITY: &str = "gl-entity";
const ITEM: &str = "gl-item";

/// The Glossary page.
#[component]
pub fn GlossaryPage() -> impl IntoView {
    let glossary = Resource::new_blocking(|| (), |_| get_glossary());
    view! {
        <Title text="Glossary" />
        <PageHeader
            title="Glossary"
            subtitle="The everyday words Clarion treats as ambiguous (large, serious, recent, improving…) and what each choice means here, plus the data you can ask about."
        />
        <div class="mb-6 flex flex-wrap items-end gap-4">
            <GlossarySearch />
            <nav aria-label="Glossary sections" class="flex gap-4 pb-2 text-sm">
                <a href="#terms" class="font-medium text-teal-800 hover:underline">"Ambiguous words"</a>
                <a href="#data" class="font-medium text-teal-800 hover:underline">"What you can ask about"</a>
            </nav>
        </div>
        <Suspense fallback=|| view! { <div class="h-64 animate-pulse rounded-xl bg-slate-100"></div> }>
            {move || Suspend::new(async move {
                match glossary.await {
                    Ok(g) => {
                        let total = g.terms.len();
                        let verified = (!g.verified.is_empty()).then(|| view! {
                            <section aria-label="Verified questions" class="mb-8" data-testid="glossary-verified">
                                <h2 class="mb-3 text-lg font-semibold text-slate-900">"Verified questions"</h2>
                                <ul class="grid gap-2">
                                    {g.verified.into_iter().map(|(name, q, by)| view! {
                                        <li class="rounded-lg border border-emerald-200 bg-white px-4 py-2 text-sm">
                                            <span class="font-medium">{name}</span>": “"{q}"” · "{by}
                                        </li>
                                    }).collect_view()}
                                </ul>
                            </section>
                        });
                        view! {
                            {verified}
                            <section id="terms" aria-labelledby="terms-heading" class="scroll-mt-24">
                                <div class="mb-3 flex items-baseline justify-between gap-4">
                                    <h2 id="terms-heading" class="text-lg font-semibold text-slate-900">"Ambiguous words"</h2>
                                    <p id="term-count" class="text-sm text-slate-500" aria-live="polite" data-testid="term-count" data-total=total>
                                        {format!("{total} terms")}
                                    </p>
                                </div>
                                <p id="terms-empty" hidden class="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-8 text-center text-sm text-slate-500">
                                    "No term matches your search."
                                </p>
                                <ul class="grid gap-4 md:grid-cols-2" data-testid="glossary-terms">
                                    {g.terms.into_iter().map(|t| view! { <TermCard term=t /> }).collect_view()}
                                </ul>
                            </section>
                            <section id="data" aria-labelledby="data-heading" class="mt-12 scroll-mt-24">
                                <h2 id="data-heading" class="mb-3 text-lg font-semibold text-slate-900">"What you can ask about"</h2>
                                <p id="entities-empty" hidden class="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-8 text-center text-sm text-slate-500">
                                    "No data item matches your search."
                                </p>
                                {g.entities.into_iter().map(|e| view! { <EntityCard entity=e /> }).collect_view()}
                            </section>
                        }
                            .into_any()
                    }
                    Err(e) => view! {
                        <p role="alert" class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                            "The glossary could not be loaded: " {e.to_string()}
                        </p>
                    }
                        .into_any(),
                }
            })}
        </Suspense>
    }
}

/// The search box: hides the terms, entities and data items that do not match.
#[island]
fn GlossarySearch() -> impl IntoView {
    // A search typed before the island hydrated applies as soon as it is live.
    Effect::new(move |_| {
        if let Some(typed) = field_value("glossary-search")
            && !typed.trim().is_empty()
        {
            filter(&typed.trim().to_lowercase());
        }
    });
    view! {
        <div class="w-full max-w-md">
            <label for="glossary-search" class="block text-sm font-medium text-slate-700">"Search the glossary"</label>
            <input
                id="glossary-search"
                type="search"
                autocomplete="off"
                aria-controls="terms data"
                placeholder="e.g. large, healing, infection, exudate"
                class="mt-1 block w-full rounded-lg border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-teal-600 focus:outline-none focus:ring-2 focus:ring-teal-600/20"
                on:input=move |ev| filter(&event_target_value(&ev).trim().to_lowercase())
            />
        </div>
    }
}

/// Shows what matches `query` (lowercased) and hides the rest; updates the count
/// and the empty states.
fn filter(query: &str) {
    let doc = document();
    let each = |class: &str, f: &mut dyn FnMut(leptos::web_sys::Element)| {
        let list = doc.get_elements_by_class_name(class);
        for i in 0..list.length() {
            if let Some(el) = list.item(i) {
                f(el);
            }
        }
    };
    let text = |el: &leptos::web_sys::Element| el.get_attribute("data-search").unwrap_or_default();
    let show = |el: &leptos::web_sys::Element, shown: bool| {
        let _ = if shown {
            el.remove_attribute("hidden")
        } else {
            el.set_attribute("hidden", "")
        };
    };

    let (mut terms, mut total) = (0u32, 0u32);
    each(TERM, &mut |el| {
        total += 1;
        let hit = search_matches(&text(&el), query);
        terms += u32::from(hit);
        show(&el, hit);
    });
    let mut entities = 0u32;
    each(ENTITY, &mut |entity| {
        let list = entity.get_elements_by_class_name(ITEM);
        let items: Vec<_> = (0..list.length()).filter_map(|i| list.item(i)).collect();
        let texts: Vec<String> = items.iter().map(text).collect();
        let (shown, items_shown) = entity_search(&text(&entity), texts.iter().map(String::as_str), query);
        for (item, hit) in items.iter().zip(items_shown) {
            show(item, hit);
        }
        entities += u32::from(shown);
        show(&entity, shown);
    });
    if let Some(count) = doc.get_element_by_id("term-count") {
        count.set_text_content(Some(&if terms == total {
            format!("{total} terms")
        } else {
            format!("{terms} of {total} terms")
        }));
    }
    for (id, n) in [("terms-empty", terms), ("entities-empty", entities)] {
        if let Some(el) = doc.get_element_by_id(id) {
            show(&el, n == 0);
        }
    }
}

#[component]
fn TermCard(term: GlossaryTerm) -> impl IntoView {
    let search = term.search_text();
    let variants = (!term.variants.is_empty()).then(|| term.variants.join(", "));
    view! {
        <li class=format!("{TERM} rounded-xl border border-slate-200 bg-white p-5 shadow-sm") data-testid="glossary-term" data-search=search>
            <div class="flex flex-wrap items-baseline gap-x-3 gap-y-1">
                <h3 class="text-base font-semibold text-slate-900">{term.phrase.clone()}</h3>
                <span class="rounded-full bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-700">{term.kind.clone()}</span>
                <span class="text-xs text-slate-500">"for " {term.applies_to.join(", ").to_lowercase()}</span>
            </div>
            {variants.map(|v| view! { <p class="mt-1 text-xs text-slate-500">"Also: " {v}</p> })}
            <p class="mt-3 text-sm font-medium text-slate-800">{term.question.clone()}</p>
            <ul class="mt-2 space-y-2">
                {term
                    .options
                    .into_iter()
                    .map(|o| {
                        view! {
                            <li class="flex gap-2 text-sm">
                                <span
                                    aria-hidden="true"
                                    class=if o.default { "mt-1.5 h-2 w-2 shrink-0 rounded-full bg-teal-600" } else { "mt-1.5 h-2 w-2 shrink-0 rounded-full bg-slate-300" }
                                ></span>
                                <span>
                                    <span class="font-medium text-slate-900">{o.label}</span>
                                    {o.default.then(|| view! {
                                        <span class="ml-2 rounded bg-teal-50 px-1.5 py-0.5 text-xs font-medium text-teal-800">"Default"</span>
                                    })}
                                    {(!o.description.is_empty()).then(|| view! { <span class="block text-slate-600">{o.description}</span> })}
                                </span>
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </li>
    }
}

#[component]
fn EntityCard(entity: GlossaryEntity) -> impl IntoView {
    let search = entity.search_text();
    let synonyms = (!entity.synonyms.is_empty()).then(|| entity.synonyms.join(", "));
    view! {
        <article class=format!("{ENTITY} mb-4 overflow-hidden rounded-xl border border-slate-200 bg-white shadow-sm") data-testid="glossary-entity" data-search=search>
            <header class="border-b border-slate-100 px-5 py-4">
                <h3 class="text-base font-semibold text-slate-900">{entity.label.clone()}</h3>
                {(!entity.description.is_empty()).then(|| view! { <p class="mt-0.5 text-sm text-slate-600">{entity.description.clone()}</p> })}
                {synonyms.map(|s| view! { <p class="mt-1 text-xs text-slate-500">"Also called: " {s}</p> })}
            </header>
            <div class="overflow-x-auto">
                <table class="min-w-full text-left text-sm">
                    <thead class="bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
                        <tr>
                            <th scope="col" class="px-5 py-2 font-medium">"Data item"</th>
                            <th scope="col" class="px-5 py-2 font-medium">"Kind"</th>
                            <th scope="col" class="px-5 py-2 font-medium">"Meaning"</th>
                            <th scope="col" class="px-5 py-2 font-medium">"Values / other words"</th>
                        </tr>
                    </thead>
                    <tbody class="divide-y divide-slate-100">
                        {entity
                            .attributes
                            .into_iter()
                            .map(|a| {
                                let kind = if a.unit.is_empty() { a.kind.clone() } else { format!("{} ({})", a.kind, a.unit) };
                                let search = a.search_text();
                                let extra = if a.values.is_empty() { a.synonyms.join(", ") } else { a.values.join(", ") };
                                view! {
                                    <tr class=ITEM data-search=search>
                                        <td class="whitespace-nowrap px-5 py-2 font-medium text-slate-900">{a.name}</td>
                                        <td class="whitespace-nowrap px-5 py-2 text-slate-600">{kind}</td>
                                        <td class="px-5 py-2 text-slate-700">{a.description}</td>
                                        <td class="px-5 py-2 text-slate-500">{extra}</td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        </article>
    }
}
