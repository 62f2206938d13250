//! Settings: how Clarion treats ambiguous questions for this clinician (F13).

use crate::components::ui::{Card, PageHeader};
use crate::protocol::Sensitivity;
use crate::server_fns::{SaveSettings, get_settings};
use leptos::prelude::*;
use leptos_meta::Title;

/// The Settings page.
#[component]
pub fn SettingsPage() -> impl IntoView {
    let save = ServerAction::<SaveSettings>::new();
    let settings = Resource::new(move || save.version().get(), |_| get_settings());

    view! {
        <Title text="Settings" />
        <PageHeader
            title="Settings"
            subtitle="Choose how Clarion handles questions that could mean more than one thing."
        />
        <div class="grid gap-6 lg:grid-cols-3">
            <div class="lg:col-span-2">
                <Card
                    title="Clarifications"
                    description="These apply to every question you ask, in the browser and through the API."
                >
                    <Transition fallback=|| view! { <div class="h-48 animate-pulse rounded-lg bg-slate-100"></div> }>
                        {move || Suspend::new(async move {
                            match settings.await {
                                Ok(s) => view! { <SettingsForm save current=s /> }.into_any(),
                                Err(e) => view! {
                                    <p role="alert" class="rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800">
                                        "Your settings could not be loaded: " {e.to_string()}
                                    </p>
                                }
                                    .into_any(),
                            }
                        })}
                    </Transition>
                </Card>
            </div>
            <div class="flex flex-col gap-6">
                <Card
                    title="Remembered choices"
                    description="Definitions you asked Clarion to remember are applied automatically and shown as “your saved definition”."
                >
                    <p class="text-sm text-slate-500" data-testid="remembered-empty">"You have no remembered choices yet."</p>
                </Card>
            </div>
        </div>
    }
}

#[component]
fn SettingsForm(save: ServerAction<SaveSettings>, current: crate::protocol::Settings) -> impl IntoView {
    let result = save.value();
    let pending = save.pending();
    view! {
        <ActionForm action=save attr:class="space-y-6" attr:aria-label="Clarification settings">
            <div class="flex items-start justify-between gap-6">
                <div>
                    <label for="skip_clarifications" class="text-sm font-medium text-slate-900">
                        "Skip all clarifications"
                    </label>
                    <p id="skip-help" class="mt-1 text-sm text-slate-600">
                        "Never stop to ask. Clarion answers straight away with its best guesses, each shown as an assumption badge you can change."
                    </p>
                </div>
                <input
                    id="skip_clarifications"
                    name="skip_clarifications"
                    type="checkbox"
                    role="switch"
                    aria-describedby="skip-help"
                    checked=current.skip_clarifications
                    class="relative mt-1 h-6 w-11 shrink-0 cursor-pointer appearance-none rounded-full bg-slate-300 transition-colors before:absolute before:left-0.5 before:top-0.5 before:h-5 before:w-5 before:rounded-full before:bg-white before:shadow before:transition-transform checked:bg-teal-700 checked:before:translate-x-5 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2"
                />
            </div>
            <fieldset>
                <legend class="text-sm font-medium text-slate-900">"Clarification sensitivity"</legend>
                <p class="mt-1 text-sm text-slate-600">"How readily Clarion stops to ask when it is unsure."</p>
                <div class="mt-3 grid gap-3 sm:grid-cols-3">
                    {Sensitivity::ALL
                        .into_iter()
                        .map(|s| {
                            let id = format!("sensitivity-{}", s.as_str());
                            let label_for = id.clone();
                            view! {
                                <label
                                    for=label_for
                                    class="flex cursor-pointer flex-col rounded-lg border border-slate-200 p-3 hover:border-teal-300 has-[:checked]:border-teal-600 has-[:checked]:bg-teal-50 has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-teal-600"
                                >
                                    <span class="flex items-center gap-2">
                                        <input
                                            id=id
                                            type="radio"
                                            name="sensitivity"
                                            value=s.as_str()
                                            checked=current.sensitivity == s
                                            class="h-4 w-4 accent-teal-700 focus:outline-none"
                                        />
                                        <span class="text-sm font-medium text-slate-900">{s.label()}</span>
                                    </span>
                                    <span class="mt-1 text-xs text-slate-600">{s.help()}</span>
                                </label>
                            }
                        })
                        .collect_view()}
                </div>
            </fieldset>
            <div class="flex items-center gap-4 border-t border-slate-100 pt-5">
                <button
                    type="submit"
                    disabled=move || pending.get()
                    class="rounded-lg bg-teal-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-teal-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-offset-2 disabled:cursor-wait disabled:bg-slate-300"
                >
                    {move || if pending.get() { "Saving…" } else { "Save settings" }}
                </button>
                <p aria-live="polite" class="text-sm" data-testid="save-status">
                    {move || match result.get() {
                        Some(Ok(_)) => view! { <span class="text-teal-800">"Settings saved."</span> }.into_any(),
                        Some(Err(e)) => view! { <span class="text-red-700">{e.to_string()}</span> }.into_any(),
                        None => ().into_any(),
                    }}
                </p>
            </div>
        </ActionForm>
    }
}
