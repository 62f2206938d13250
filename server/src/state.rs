//! The one application state, cloned cheaply into every handler.

use crate::backend::ServerBackend;
use crate::store::Store;
use app::backend::SharedBackend;
use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use std::sync::Arc;

/// Shared by axum handlers, SSR and server functions.
#[derive(Clone)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub store: Store,
    pub backend: SharedBackend,
}

impl AppState {
    pub fn new(leptos_options: LeptosOptions, store: Store) -> Self {
        let backend: SharedBackend = Arc::new(ServerBackend::new(store.clone()));
        AppState {
            leptos_options,
            store,
            backend,
        }
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(s: &AppState) -> Self {
        s.leptos_options.clone()
    }
}
