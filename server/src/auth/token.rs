//! Secrets for session cookies and API tokens.
//!
//! A secret is random (from the operating system) and long enough that
//! guessing is hopeless, so a fast digest (SHA-256) is the right way to store
//! it: the database holds only [`digest`]s, and a stolen database does not
//! contain a working cookie or token. Passwords, which are not random, use
//! argon2 instead ([`super::password`]).

use crate::store::ids::{hex, random_hex};
use sha2::{Digest, Sha256};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "clarion_session";

/// Name of the session cookie when it is `Secure` (served over TLS).
pub const SESSION_COOKIE_HOST: &str = "__Host-clarion_session";

/// Every API token starts with this, so leaked tokens are easy to scan for.
pub const API_TOKEN_PREFIX: &str = "clarion_";

/// A fresh session secret: 256 random bits, hex.
pub fn new_session_secret() -> String {
    random_hex(32)
}

/// The SHA-256 of a secret, hex: what the database stores and looks up.
pub fn digest(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// A freshly issued API token.
#[derive(Clone, Debug)]
pub struct NewApiToken {
    /// The token itself: shown to the user once, never stored.
    pub secret: String,
    /// What the database stores.
    pub digest: String,
    /// The first characters, stored so the owner can tell tokens apart.
    pub prefix: String,
}

/// Issues a new API token: `clarion_` followed by 192 random bits, hex.
pub fn new_api_token() -> NewApiToken {
    let secret = format!("{API_TOKEN_PREFIX}{}", random_hex(24));
    NewApiToken {
        digest: digest(&secret),
        prefix: secret[..API_TOKEN_PREFIX.len() + 6].to_string(),
        secret,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_sha256_hex() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn session_secrets_are_long_and_unique() {
        let a = new_session_secret();
        assert_eq!(a.len(), 64);
        assert_ne!(a, new_session_secret());
    }

    #[test]
    fn api_tokens_carry_a_recognisable_prefix_and_are_stored_only_as_digests() {
        let t = new_api_token();
        assert!(t.secret.starts_with(API_TOKEN_PREFIX));
        assert_eq!(t.secret.len(), API_TOKEN_PREFIX.len() + 48);
        assert!(t.secret.starts_with(&t.prefix) && t.prefix.len() < t.secret.len());
        assert_eq!(t.digest, digest(&t.secret));
        assert!(!t.digest.contains(&t.secret[API_TOKEN_PREFIX.len()..]));
    }
}
