//! The one application state, cloned cheaply into every handler.

use crate::auth::{Auth, AuthConfig};
use crate::backend::ServerBackend;
use crate::orchestrator::{Orchestrator, OrchestratorConfig};
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
    pub auth: Auth,
    pub backend: SharedBackend,
    /// The clarification loop (JSON API v1).
    pub orchestrator: Orchestrator,
}

impl AppState {
    /// State with the default authentication settings.
    pub fn new(leptos_options: LeptosOptions, store: Store) -> Self {
        Self::with_auth_config(leptos_options, store, AuthConfig::default())
    }

    /// State with explicit authentication settings (`serve` reads them from the environment).
    pub fn with_auth_config(leptos_options: LeptosOptions, store: Store, auth_config: AuthConfig) -> Self {
        let orchestrator = Orchestrator::new(store.clone(), OrchestratorConfig::default());
        let auth = Auth::new(store.clone(), auth_config);
        let backend: SharedBackend = Arc::new(ServerBackend::new(
            store.clone(),
            orchestrator.clone(),
            auth.clone(),
        ));
        AppState {
            leptos_options,
            auth,
            orchestrator,
            store,
            backend,
        }
    }
}

impl AppState {
    /// The same state with the clarification loop's limits replaced (`serve` reads them
    /// from the environment; tests pin `today`).
    pub fn with_orchestrator_config(mut self, config: OrchestratorConfig) -> Self {
        self.orchestrator = Orchestrator::new(self.store.clone(), config);
        self.backend = Arc::new(ServerBackend::new(
            self.store.clone(),
            self.orchestrator.clone(),
            self.auth.clone(),
        ));
        self
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(s: &AppState) -> Self {
        s.leptos_options.clone()
    }
}
