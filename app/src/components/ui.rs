//! Small presentational building blocks shared by pages.

use leptos::prelude::*;

/// The message of a server-function error as the user should read it (without the
/// transport's prefix).
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(m) => m.clone(),
        ServerFnError::Request(_) => {
            "Clarion could not be reached. Check your connection and try again.".into()
        }
        other => other.to_string(),
    }
}

/// The current value of the form field with this id: what the user typed, also before
/// the island hydrated. Browser only (call it from an effect or a `hydrate` build).
pub fn field_value(id: &str) -> Option<String> {
    let field = document().get_element_by_id(id)?;
    leptos::web_sys::js_sys::Reflect::get(&field, &"value".into())
        .ok()?
        .as_string()
}

/// The value of the field `selector` picks in the form an `on:submit` event submits, as
/// the browser would post it: `input[name=x]:checked` gives a checked box's or radio's
/// value and nothing when none is checked. Reading the form itself (not signals) keeps
/// what was typed or chosen before the island hydrated.
pub fn submitted(ev: &leptos::ev::SubmitEvent, selector: &str) -> Option<String> {
    use leptos::wasm_bindgen::JsCast;
    let form = ev.target()?.dyn_into::<leptos::web_sys::Element>().ok()?;
    let field = form.query_selector(selector).ok()??;
    field
        .dyn_into::<leptos::web_sys::HtmlInputElement>()
        .ok()
        .map(|i| i.value())
}

/// A page title with a one-line description.
#[component]
pub fn PageHeader(
    /// The page's `<h1>`.
    title: &'static str,
    /// One line under the title.
    subtitle: &'static str,
) -> impl IntoView {
    view! {
        <div class="mb-8">
            <h1 class="text-2xl font-semibold tracking-tight text-slate-900">{title}</h1>
            <p class="mt-1 max-w-2xl text-sm text-slate-600">{subtitle}</p>
        </div>
    }
}

/// A white card with a heading.
#[component]
pub fn Card(
    /// Section heading (`<h2>`).
    title: &'static str,
    /// Optional one-line description under the heading.
    #[prop(optional)]
    description: Option<&'static str>,
    children: Children,
) -> impl IntoView {
    view! {
        <section class="rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
            <h2 class="text-base font-semibold text-slate-900">{title}</h2>
            {description.map(|d| view! { <p class="mt-1 text-sm text-slate-600">{d}</p> })}
            <div class="mt-4">{children()}</div>
        </section>
    }
}

/// A friendly empty state.
#[component]
pub fn EmptyState(
    title: &'static str,
    body: &'static str,
    #[prop(optional)] children: Option<Children>,
) -> impl IntoView {
    view! {
        <div class="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-12 text-center">
            <p class="text-sm font-semibold text-slate-800">{title}</p>
            <p class="mx-auto mt-1 max-w-md text-sm text-slate-500">{body}</p>
            {children.map(|c| view! { <div class="mt-4">{c()}</div> })}
        </div>
    }
}
