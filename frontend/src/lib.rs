//! Browser entry point: hydrates the server-rendered HTML produced by `app::App`.
//! Must stay tiny and must not pull in any server-only crate.

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
