//! The server's implementation of `app::backend::Backend` (the UI's port).
//!
//! Each method is one product step; errors are logged here with their cause
//! and turned into messages safe to show a clinician.

use crate::store::{Store, StoreError, User};
use app::backend::{Backend, BackendError};
use app::protocol::{Settings, UserSummary};

/// The backend handed to server functions through Leptos context.
#[derive(Clone, Debug)]
pub struct ServerBackend {
    store: Store,
}

impl ServerBackend {
    pub fn new(store: Store) -> Self {
        ServerBackend { store }
    }

    /// The signed-in user. Until sessions land this is the first account,
    /// which the embedded default creates on first start.
    async fn user(&self) -> Result<User, BackendError> {
        self.store.first_user().await.map_err(internal)?.ok_or_else(|| {
            BackendError::BadInput("No account exists yet. Create one with `server user add`.".into())
        })
    }
}

fn internal(e: StoreError) -> BackendError {
    let reference = format!("{:08x}", rand_reference());
    tracing::error!(reference, error = %e, "backend call failed");
    BackendError::Internal(reference)
}

/// A short reference so a user can quote an error and we can find it in the logs.
fn rand_reference() -> u32 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    nanos ^ std::process::id().rotate_left(16)
}

#[async_trait::async_trait]
impl Backend for ServerBackend {
    async fn current_user(&self) -> Result<UserSummary, BackendError> {
        Ok(self.user().await?.into())
    }

    async fn settings(&self) -> Result<Settings, BackendError> {
        let user = self.user().await?;
        self.store.settings(user.id).await.map_err(internal)
    }

    async fn save_settings(&self, settings: Settings) -> Result<Settings, BackendError> {
        let user = self.user().await?;
        self.store
            .save_settings(user.id, &settings)
            .await
            .map_err(internal)?;
        self.store.settings(user.id).await.map_err(internal)
    }
}
