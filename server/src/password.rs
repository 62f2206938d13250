//! Password hashing (argon2id via the `password-auth` crate), below both the
//! store (which hashes new passwords) and auth (which verifies sign-ins).
//!
//! Hashing is deliberately slow (tens of milliseconds in a release build), so
//! it runs on tokio's blocking pool, never on an async worker thread. A sign-in
//! for an unknown username still verifies against a dummy hash, so the response
//! time does not reveal which usernames exist.
//!
//! Each computation takes tens of megabytes and a core for tens of
//! milliseconds, so only [`MAX_CONCURRENT`] run at once: a burst of sign-ins
//! waits for a permit (at most [`BUSY_WAIT`]) and is then told the server is
//! busy ([`Busy`], 503 with `Retry-After`) instead of exhausting memory.

use std::sync::{LazyLock, OnceLock};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How long a verification waits for a free permit before giving up.
pub const BUSY_WAIT: Duration = Duration::from_secs(2);

/// Argon2 computations allowed at once: two per core.
pub static MAX_CONCURRENT: LazyLock<usize> =
    LazyLock::new(|| std::thread::available_parallelism().map_or(2, |n| n.get() * 2));

static PERMITS: LazyLock<Semaphore> = LazyLock::new(|| Semaphore::new(*MAX_CONCURRENT));

/// Every argon2 permit was taken for [`BUSY_WAIT`]: try again in a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Clarion is busy checking other sign-ins. Please try again in a moment.")]
pub struct Busy;

/// The argon2 PHC string for `password` (salted; differs on every call). Waits
/// for a permit however long it takes (accounts are created rarely, by admins).
pub async fn hash(password: &str) -> String {
    let password = password.to_owned();
    let _permit = PERMITS.acquire().await.expect("the semaphore is never closed");
    blocking(move || password_auth::generate_hash(password)).await
}

/// True when `password` matches `hash`. With no hash (unknown user) a dummy
/// hash is verified instead and the answer is always false. [`Busy`] when no
/// permit came free within [`BUSY_WAIT`].
pub async fn verify(password: &str, hash: Option<&str>) -> Result<bool, Busy> {
    verify_gated(&PERMITS, password, hash).await
}

async fn verify_gated(permits: &Semaphore, password: &str, hash: Option<&str>) -> Result<bool, Busy> {
    let _permit = tokio::time::timeout(BUSY_WAIT, permits.acquire())
        .await
        .map_err(|_| Busy)?
        .expect("the semaphore is never closed");
    let password = password.to_owned();
    let known = hash.is_some();
    let hash = hash.map(str::to_owned);
    Ok(blocking(move || {
        let hash = hash.unwrap_or_else(|| dummy_hash().to_owned());
        password_auth::verify_password(password, &hash).is_ok() && known
    })
    .await)
}

/// A hash of a random string, computed once, to spend the same time on
/// unknown usernames as on known ones.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    // Always compared with `known = false`, so its own password needs no secrecy.
    DUMMY.get_or_init(|| password_auth::generate_hash("clarion: no such account"))
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
        assert_eq!(verify("correct horse", Some(&h)).await, Ok(true));
        assert_eq!(verify("correct hors", Some(&h)).await, Ok(false));
        assert_eq!(verify("", Some(&h)).await, Ok(false));
    }

    #[tokio::test]
    async fn an_unknown_user_never_verifies() {
        assert_eq!(verify("anything", None).await, Ok(false));
    }

    #[tokio::test]
    async fn verifications_beyond_the_permits_wait_then_report_busy() {
        // Every permit held: a verification cannot start and says so after BUSY_WAIT.
        let permits = Semaphore::new(1);
        let held = permits.acquire().await.unwrap();
        let started = std::time::Instant::now();
        assert_eq!(verify_gated(&permits, "pw", None).await, Err(Busy));
        assert!(started.elapsed() >= BUSY_WAIT);
        drop(held);
        assert_eq!(verify_gated(&permits, "pw", None).await, Ok(false));
    }

    #[tokio::test]
    async fn the_same_password_hashes_differently_each_time() {
        assert_ne!(hash("pw").await, hash("pw").await);
    }
}
