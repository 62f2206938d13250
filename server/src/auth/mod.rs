//! Authentication (F22): who is making a request, and refusing requests that
//! must not be served.
//!
//! - [`password`]: argon2 hashing and verification, off the async runtime.
//! - [`token`]: random secrets for session cookies and API tokens, and the
//!   SHA-256 digests under which the database stores them.
//! - [`service::Auth`]: sign-in with a per-username-and-address limit on
//!   failures (counted in the database, so it holds across replicas), sign-out,
//!   resolving a session or an API token to a user, issuing API tokens.
//! - [`cookie`]: the session cookie (HttpOnly, SameSite=Lax, Secure over TLS).
//! - [`extract`]: the middleware that resolves the user once per request, the
//!   page guard, and the [`CurrentUser`] / [`AdminUser`] extractors.
//! - [`origin`]: refuses state-changing requests from another origin.
//! - [`cli`]: `server user add|list|reset-password|token`.
//!
//! Errors: [`service::LoginError`] for sign-in, [`crate::store::StoreError`]
//! from storage, [`extract::AuthRejection`] at the HTTP edge (401 JSON for APIs,
//! a redirect to `/login` for pages). This module never logs a password, a
//! session secret or a token.

pub mod cli;
pub mod config;
pub mod cookie;
pub mod extract;
pub mod origin;
pub use crate::password;
pub mod proxy;
pub mod service;
pub mod token;

pub use config::AuthConfig;
pub use extract::{AdminUser, AuthRejection, CurrentUser};
pub use service::{Auth, LoginError, SignedIn};
