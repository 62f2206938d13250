//! Password hashing (argon2id via the `password-auth` crate).
//!
//! Hashing is deliberately slow (tens of milliseconds in a release build), so
//! it runs on tokio's blocking pool, never on an async worker thread. A sign-in
//! for an unknown username still verifies against a dummy hash, so the response
//! time does not reveal which usernames exist.

use std::sync::OnceLock;

/// The argon2 PHC string for `password` (salted; differs on every call).
pub async fn hash(password: &str) -> String {
    let password = password.to_owned();
    blocking(move || password_auth::generate_hash(password)).await
}

/// True when `password` matches `hash`. With no hash (unknown user) a dummy
/// hash is verified instead and the answer is always false.
pub async fn verify(password: &str, hash: Option<&str>) -> bool {
    let password = password.to_owned();
    let known = hash.is_some();
    let hash = hash.map(str::to_owned);
    blocking(move || {
        let hash = hash.unwrap_or_else(|| dummy_hash().to_owned());
        password_auth::verify_password(password, &hash).is_ok() && known
    })
    .await
}

/// A hash of a random string, computed once, to spend the same time on
/// unknown usernames as on known ones.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| password_auth::generate_hash(crate::store::ids::random_hex(16)))
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(f).await {
        Ok(v) => v,
        // Only a panic inside `f` gets here; let it continue as a panic.
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_and_nothing_else() {
        let h = hash("correct horse").await;
        assert!(h.starts_with("$argon2"), "{h}");
        assert!(verify("correct horse", Some(&h)).await);
        assert!(!verify("correct hors", Some(&h)).await);
        assert!(!verify("", Some(&h)).await);
    }

    #[tokio::test]
    async fn an_unknown_user_never_verifies() {
        assert!(!verify("anything", None).await);
    }

    #[tokio::test]
    async fn the_same_password_hashes_differently_each_time() {
        assert_ne!(hash("pw").await, hash("pw").await);
    }
}
