//! The port the server implements (ssr only).
//!
//! `app` never depends on `server`: server functions reach storage and the
//! engine through this trait, which the server provides as Leptos context via
//! `leptos_routes_with_context`. Keep each method one step of the product, not
//! a database operation.
//!
//! Every method that touches a user's data takes the signed-in [`AuthUser`].
//! The server's auth layer establishes it per request and provides it as a
//! [`RequestUser`] in the same context; server functions get it through
//! `server_fns::ssr::require_user` and refuse the call without one. Nothing
//! here may fall back to "some" user.

use crate::protocol::{
    Answer, AskRequest, ClarifyRequest, HistoryItem, PreferenceItem, QueryOutcome, ReviseRequest, Settings,
    ThreadView, UserSummary,
};
use std::sync::Arc;

/// The signed-in user of one request, as established by the server's auth layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthUser {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
}

impl From<AuthUser> for UserSummary {
    fn from(u: AuthUser) -> Self {
        UserSummary {
            username: u.username,
            display_name: u.display_name,
            is_admin: u.is_admin,
        }
    }
}

/// Who made the current request (`None`: nobody is signed in). Provided as
/// Leptos context for every page render and server-function call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestUser(pub Option<AuthUser>);

/// An error a backend call can return, already safe to show to a user: the same
/// `{code, message}` as the JSON API's errors, with its status from [`crate::protocol::ErrorCode`].
pub type BackendError = crate::protocol::ApiError;

/// Everything the UI can ask of the server.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// The user's settings (defaults when never saved).
    async fn settings(&self, user: &AuthUser) -> Result<Settings, BackendError>;
    /// Stores the user's settings and returns what was stored.
    async fn save_settings(&self, user: &AuthUser, settings: Settings) -> Result<Settings, BackendError>;
    /// The semantic model's vocabulary for the Glossary page.
    async fn glossary(&self, user: &AuthUser) -> Result<crate::protocol::Glossary, BackendError>;

    // ---- the ask flow (same orchestrator as the JSON API) ----
    /// Asks a question: the answer, or one round of clarification questions.
    async fn ask(&self, user: &AuthUser, req: AskRequest) -> Result<QueryOutcome, BackendError>;
    /// Answers one clarification round.
    async fn clarify(&self, user: &AuthUser, req: ClarifyRequest) -> Result<QueryOutcome, BackendError>;
    /// Cancels one of the user's pending rounds (F15: counted as abandoned at once).
    async fn cancel(&self, user: &AuthUser, clarification_id: String) -> Result<(), BackendError>;
    /// Changes one assumption of an answer and re-runs, keeping every other choice.
    async fn revise(&self, user: &AuthUser, req: ReviseRequest) -> Result<Answer, BackendError>;
    /// One of the user's threads.
    async fn thread(&self, user: &AuthUser, id: String) -> Result<ThreadView, BackendError>;
    /// History's "Re-run": the entry asked again with its clarifications, in a new thread.
    async fn rerun(&self, user: &AuthUser, history_id: String) -> Result<Answer, BackendError>;
    /// The rows of a stored answer, computed again now (an explicit "Run again";
    /// audited, nothing added to the thread).
    async fn replay(
        &self,
        user: &AuthUser,
        history_id: String,
    ) -> Result<crate::protocol::ResultTable, BackendError>;
    /// The user's past questions (answered, refused or failed, as `show` says), newest first.
    async fn history(
        &self,
        user: &AuthUser,
        limit: i64,
        show: crate::protocol::HistoryShow,
    ) -> Result<Vec<HistoryItem>, BackendError>;
    /// The user's saved questions, newest first, each saying whether it still applies (F27).
    async fn saved_questions(
        &self,
        user: &AuthUser,
    ) -> Result<Vec<crate::protocol::SavedQuestion>, BackendError>;
    /// One of the user's answers, as the "Save question" form shows it.
    async fn saved_draft(&self, user: &AuthUser, history_id: String) -> Result<HistoryItem, BackendError>;
    /// The user's learned and remembered choices.
    async fn preferences(&self, user: &AuthUser) -> Result<Vec<PreferenceItem>, BackendError>;
    /// Forgets one remembered choice.
    async fn delete_preference(&self, user: &AuthUser, id: i64) -> Result<(), BackendError>;
    /// The user's API tokens, newest first.
    async fn api_tokens(&self, user: &AuthUser) -> Result<Vec<crate::protocol::ApiTokenItem>, BackendError>;
    /// Creates an API token for the user (valid `expires_in_days`, or until revoked).
    async fn create_api_token(
        &self,
        user: &AuthUser,
        name: String,
        expires_in_days: Option<u32>,
    ) -> Result<crate::protocol::CreatedApiToken, BackendError>;
    /// Revokes one of the user's API tokens (`NotFound` for anyone else's).
    async fn revoke_api_token(&self, user: &AuthUser, id: i64) -> Result<(), BackendError>;

    // ---- account and administration ----
    /// Changes the user's own password after checking the current one (a wrong
    /// one is `BadInput`). Ends every session of the user: they sign in again.
    async fn change_password(
        &self,
        user: &AuthUser,
        current: String,
        new: String,
    ) -> Result<(), BackendError>;
    /// Everyone's clarification figures over the days `range` names (F21): a
    /// `BadParameter` error saying what is wrong with a bad range, `Forbidden` unless
    /// the user is an administrator.
    async fn analytics(
        &self,
        user: &AuthUser,
        range: crate::protocol::AnalyticsQuery,
    ) -> Result<crate::protocol::Analytics, BackendError>;
    /// The optional language model's switch, endpoint and breaker (F24); `Forbidden`
    /// unless the user is an administrator.
    async fn language_model(
        &self,
        user: &AuthUser,
    ) -> Result<crate::protocol::LanguageModelStatus, BackendError>;
    /// Switches the language model on or off for every replica; `Forbidden` unless
    /// the user is an administrator.
    async fn set_language_model(
        &self,
        user: &AuthUser,
        enabled: bool,
    ) -> Result<crate::protocol::LanguageModelStatus, BackendError>;
}

/// How the backend travels through Leptos context.
pub type SharedBackend = Arc<dyn Backend>;
