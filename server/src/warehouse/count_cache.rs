//! Option counts of clarification rounds, cached per (statement, data version).
//!
//! A round counts the records behind every option. The same question over unchanged
//! data has the same counts, so a count is kept under the rendered statement (text and
//! bound values) together with the data version it was computed at
//! ([`crate::sql::render_data_version`]: the largest key of every clinical table). A new
//! row changes the version, so the next round counts again; a change that adds no row (an
//! update in place, a delete of an older row) is seen once the entry's time to live has
//! passed. Concurrent rounds asking for the same count share one computation (single
//! flight). A count that was slow or failed (`None`) is never kept. The cache holds at
//! most `cap` entries; when full, expired entries go first, then the oldest.
//!
//! Pure bookkeeping: what computes a count is passed in, so the module is tested
//! without a database and the warehouse keeps the only path to SQL.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

/// Bounds of the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountCacheConfig {
    /// How long a count is trusted without a new row (`CLARION_COUNT_CACHE_TTL_SECS`).
    pub ttl: Duration,
    /// Most counts kept (`CLARION_COUNT_CACHE_CAP`); 0 turns the cache off.
    pub cap: usize,
}

impl Default for CountCacheConfig {
    fn default() -> Self {
        CountCacheConfig {
            ttl: Duration::from_secs(60),
            cap: 10_000,
        }
    }
}

struct Entry<T> {
    version: String,
    at: Instant,
    cell: Arc<OnceCell<Option<T>>>,
}

/// How a lookup was served, for the thinking steps and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountCacheStats {
    pub hits: u64,
    pub misses: u64,
}

/// The cache of option counts.
pub type CountCache = VersionedCache<i64>;

/// Values kept per (key, data version), with a time to live, a cap and single flight:
/// the option counts here, an answer's rows in [`super::answer_cache`]. Cheap to clone
/// (shared).
pub struct VersionedCache<T> {
    config: CountCacheConfig,
    entries: Arc<Mutex<HashMap<String, Entry<T>>>>,
    stats: Arc<Mutex<CountCacheStats>>,
}

impl<T> Clone for VersionedCache<T> {
    fn clone(&self) -> Self {
        VersionedCache {
            config: self.config,
            entries: self.entries.clone(),
            stats: self.stats.clone(),
        }
    }
}

impl<T> std::fmt::Debug for VersionedCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VersionedCache")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<T: Clone> VersionedCache<T> {
    pub fn new(config: CountCacheConfig) -> Self {
        VersionedCache {
            config,
            entries: Arc::new(Mutex::new(HashMap::new())),
            stats: Arc::new(Mutex::new(CountCacheStats::default())),
        }
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> CountCacheStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The count under `key` at `version`: the kept one, the one being computed by a
    /// concurrent caller, or `compute`'s (kept unless it is `None`).
    pub async fn get_or_count<F>(&self, key: String, version: &str, compute: F) -> Option<T>
    where
        F: Future<Output = Option<T>>,
    {
        self.lookup(key, version, compute).await.0
    }

    /// [`CountCache::get_or_count`], also saying whether the count was reused (kept, or
    /// computed by a concurrent caller) rather than computed here.
    pub async fn lookup<F>(&self, key: String, version: &str, compute: F) -> (Option<T>, bool)
    where
        F: Future<Output = Option<T>>,
    {
        if self.config.cap == 0 {
            return (compute.await, false);
        }
        let cell = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let fresh = entries
                .get(&key)
                .filter(|e| e.version == version && now.duration_since(e.at) < self.config.ttl)
                .map(|e| e.cell.clone());
            match fresh {
                Some(cell) => cell,
                None => {
                    if !entries.contains_key(&key) && entries.len() >= self.config.cap {
                        self.evict(&mut entries, now);
                    }
                    let cell = Arc::new(OnceCell::new());
                    entries.insert(
                        key.clone(),
                        Entry {
                            version: version.to_owned(),
                            at: now,
                            cell: cell.clone(),
                        },
                    );
                    cell
                }
            }
        };
        let mut computed = false;
        let count = cell
            .get_or_init(|| async {
                computed = true;
                compute.await
            })
            .await
            .clone();
        {
            let mut stats = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            if computed {
                stats.misses += 1;
            } else {
                stats.hits += 1;
            }
        }
        if count.is_none() {
            // a slow or failed count is tried again next time
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if entries.get(&key).is_some_and(|e| Arc::ptr_eq(&e.cell, &cell)) {
                entries.remove(&key);
            }
        }
        (count, !computed)
    }

    fn evict(&self, entries: &mut HashMap<String, Entry<T>>, now: Instant) {
        let ttl = self.config.ttl;
        entries.retain(|_, e| now.duration_since(e.at) < ttl);
        while entries.len() >= self.config.cap {
            let Some(oldest) = entries.iter().min_by_key(|(_, e)| e.at).map(|(k, _)| k.clone()) else {
                break;
            };
            entries.remove(&oldest);
        }
    }

    /// Entries kept now.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn cache(ttl_ms: u64, cap: usize) -> CountCache {
        CountCache::new(CountCacheConfig {
            ttl: Duration::from_millis(ttl_ms),
            cap,
        })
    }

    #[tokio::test]
    async fn a_count_is_kept_for_its_data_version_and_recounted_after_a_new_row() {
        let c = cache(60_000, 100);
        let count = |n: i64| async move { Some(n) };
        assert_eq!(c.get_or_count("q".into(), "v1", count(5)).await, Some(5));
        // same statement, same data: the kept count, nothing computed
        assert_eq!(c.get_or_count("q".into(), "v1", count(6)).await, Some(5));
        assert_eq!(c.stats(), CountCacheStats { hits: 1, misses: 1 });
        // a new row: counted again
        assert_eq!(c.get_or_count("q".into(), "v2", count(7)).await, Some(7));
        assert_eq!(c.stats().misses, 2);
        // another statement is another entry
        assert_eq!(c.get_or_count("other".into(), "v2", count(1)).await, Some(1));
        assert_eq!(c.len(), 2);
    }

    #[tokio::test]
    async fn an_entry_expires_and_a_failed_count_is_not_kept() {
        let c = cache(30, 100);
        assert_eq!(c.get_or_count("q".into(), "v", async { Some(1) }).await, Some(1));
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(c.get_or_count("q".into(), "v", async { Some(2) }).await, Some(2));
        let c = cache(60_000, 100);
        assert_eq!(c.get_or_count("slow".into(), "v", async { None }).await, None);
        assert!(c.is_empty(), "a slow count is tried again next time");
        assert_eq!(
            c.get_or_count("slow".into(), "v", async { Some(3) }).await,
            Some(3)
        );
    }

    #[tokio::test]
    async fn concurrent_rounds_share_one_count() {
        let c = cache(60_000, 100);
        let computed = Arc::new(AtomicUsize::new(0));
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let c = c.clone();
            let computed = computed.clone();
            set.spawn(async move {
                c.get_or_count("q".into(), "v", async move {
                    computed.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Some(42)
                })
                .await
            });
        }
        while let Some(r) = set.join_next().await {
            assert_eq!(r.unwrap(), Some(42));
        }
        assert_eq!(computed.load(Ordering::SeqCst), 1, "single flight");
        assert_eq!(c.stats(), CountCacheStats { hits: 19, misses: 1 });
    }

    #[tokio::test]
    async fn the_cache_stays_within_its_cap_and_can_be_off() {
        let c = cache(60_000, 3);
        for i in 0..10 {
            c.get_or_count(format!("q{i}"), "v", async move { Some(i) }).await;
        }
        assert!(c.len() <= 3, "{}", c.len());
        let off = cache(60_000, 0);
        assert_eq!(
            off.get_or_count("q".into(), "v", async { Some(1) }).await,
            Some(1)
        );
        assert_eq!(
            off.get_or_count("q".into(), "v", async { Some(2) }).await,
            Some(2)
        );
        assert!(off.is_empty());
    }
}
