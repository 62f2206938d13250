//! Browser entry point: hydrates the islands (`#[island]` components) of the
//! server-rendered HTML produced by `app::App`; everything else stays server HTML.
//! Must stay tiny and must not pull in any server-only crate.

// Naming the crate keeps its island exports in the cdylib (without a reference to
// `app`, the linker drops them and no island hydrates).
use app as _;

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
}
