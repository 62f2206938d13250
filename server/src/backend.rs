//! The server's implementation of `app::backend::Backend` (the UI's port).
//!
//! Each method is one product step for the signed-in user it is given (the
//! auth layer established who that is; this module never picks a user).
//! Errors are logged here with their cause and turned into messages safe to
//! show a clinician.

use crate::store::{Store, StoreError};
use app::backend::{AuthUser, Backend, BackendError};
use app::protocol::Settings;

/// The backend handed to server functions through Leptos context.
#[derive(Clone, Debug)]
pub struct ServerBackend {
    store: Store,
}

impl ServerBackend {
    pub fn new(store: Store) -> Self {
        ServerBackend { store }
    }
}

/// Maps a storage failure to what the user may see; faults are logged with a
/// reference the user can quote.
pub fn internal(e: StoreError) -> BackendError {
    let reference = crate::store::ids::random_hex(4);
    tracing::error!(reference, error = %e, "backend call failed");
    BackendError::Internal(reference)
}

#[async_trait::async_trait]
impl Backend for ServerBackend {
    async fn settings(&self, user: &AuthUser) -> Result<Settings, BackendError> {
        self.store.settings(user.id).await.map_err(internal)
    }

    async fn save_settings(&self, user: &AuthUser, settings: Settings) -> Result<Settings, BackendError> {
        self.store
            .save_settings(user.id, &settings)
            .await
            .map_err(internal)?;
        self.store.settings(user.id).await.map_err(internal)
    }

    async fn glossary(&self, _user: &AuthUser) -> Result<app::protocol::Glossary, BackendError> {
        Ok(crate::semantic::glossary::glossary(
            crate::semantic::SemanticModel::wound_care_shared(),
        ))
    }
}
