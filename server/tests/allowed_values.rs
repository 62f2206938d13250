//! The allowed-values provider (F17) against real databases: hits, misses, TTL
//! expiry, stale-while-revalidate with a single refresh, the cap, an unreachable
//! database and hostile identifiers — on SQLite and PostgreSQL. Time is a
//! [`ManualClock`], so no test sleeps.

mod common;

use common::TestDb;
use server::db::{Backend, Database};
use server::warehouse::{
    AllowedValuesConfig, AllowedValuesError, AllowedValuesProvider, AllowedValuesStats, ColumnSpec,
    ManualClock, ValueSource,
};
use std::sync::Arc;
use std::time::Duration;

const TTL: Duration = Duration::from_secs(60);
const RETRY: Duration = Duration::from_secs(10);

fn config() -> AllowedValuesConfig {
    AllowedValuesConfig {
        ttl: TTL,
        retry_after: RETRY,
        ..AllowedValuesConfig::default()
    }
}

/// Inserts clinics with the given regions (one clinic per region).
async fn add_clinics(db: &Database, first_id: i64, regions: &[&str]) {
    for (i, region) in regions.iter().enumerate() {
        let id = first_id + i as i64;
        let sql = "INSERT INTO clinics (id, name, region, care_setting) VALUES ($1, $2, $3, $4)";
        let name = format!("Clinic {id}");
        let setting = if id % 2 == 0 {
            "community"
        } else {
            "hospital_outpatient"
        };
        // The same statement on either pool type.
        macro_rules! insert {
            ($pool:expr) => {
                sqlx::query(sql)
                    .bind(id)
                    .bind(&name)
                    .bind(region)
                    .bind(setting)
                    .execute($pool)
                    .await
                    .map(|_| ())
            };
        }
        match db {
            Database::Sqlite(p) => insert!(p),
            Database::Postgres(p) => insert!(p),
        }
        .unwrap();
    }
}

fn provider(db: &Database, clock: &Arc<ManualClock>, config: AllowedValuesConfig) -> AllowedValuesProvider {
    let columns = [
        ColumnSpec::new("clinics", "region").with_fallback(["North", "South"]),
        ColumnSpec::new("clinics", "care_setting"),
    ];
    AllowedValuesProvider::with_clock(db.clone(), columns, config, clock.clone()).unwrap()
}

/// What a test gets on each backend: a fresh database holding the clinics it asked for,
/// a manual clock, and [`provider`] over them.
struct Fixture {
    t: TestDb,
    b: Backend,
    clock: Arc<ManualClock>,
    p: AllowedValuesProvider,
}

/// Runs `body` on every backend, against clinics with `regions` and a provider with
/// `config`, then drops that backend's database.
async fn on_every_backend(regions: &[&str], config: AllowedValuesConfig, body: impl AsyncFn(&Fixture)) {
    for t in common::all_backends().await {
        let b = t.db.backend();
        add_clinics(&t.db, 1, regions).await;
        let clock = Arc::new(ManualClock::new());
        let p = provider(&t.db, &clock, config.clone());
        let f = Fixture { t, b, clock, p };
        body(&f).await;
        f.t.cleanup().await;
    }
}

fn values(v: &server::warehouse::ColumnValues) -> Vec<&str> {
    v.values.iter().map(String::as_str).collect()
}

#[tokio::test]
async fn first_read_is_a_miss_then_reads_within_the_ttl_are_hits_without_queries() {
    on_every_backend(
        &["North", "South", "east", "North"],
        config(),
        async |Fixture { t, b, clock, p }| {
            let first = p.get("clinics", "region").await.unwrap();
            assert_eq!(first.source, ValueSource::Fresh, "{b:?}");
            assert_eq!(
                values(&first),
                ["North", "South", "east"],
                "distinct, byte order on {b:?}"
            );
            assert!(!first.truncated && first.fuzzy_matching_allowed());
            assert_eq!(
                (p.stats().misses, p.stats().hits, p.stats().queries),
                (1, 0, 1),
                "{b:?}"
            );

            // New data does not show before the TTL: the cache answers.
            add_clinics(&t.db, 10, &["West"]).await;
            clock.advance(TTL - Duration::from_millis(1));
            for _ in 0..3 {
                let again = p.get("clinics", "region").await.unwrap();
                assert_eq!(again, first, "{b:?}");
            }
            let s = p.stats();
            assert_eq!((s.misses, s.hits, s.queries, s.refreshes), (1, 3, 1, 0), "{b:?}");
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_reads_share_one_query() {
    on_every_backend(&["North", "South"], config(), async |Fixture { b, p, .. }| {
        let reads: Vec<_> = (0..16)
            .map(|_| {
                let p = p.clone();
                tokio::spawn(async move { p.get("clinics", "region").await.unwrap() })
            })
            .collect();
        for r in reads {
            let v = r.await.unwrap();
            assert_eq!(
                (v.source, values(&v)),
                (ValueSource::Fresh, vec!["North", "South"]),
                "{b:?}"
            );
        }
        let s = p.stats();
        assert_eq!((s.queries, s.misses, s.hits), (1, 1, 15), "{b:?}: {s:?}");
    })
    .await;
}

#[tokio::test]
async fn a_read_past_the_ttl_returns_the_old_values_at_once_and_one_refresh_brings_the_new() {
    on_every_backend(&["North"], config(), async |Fixture { t, b, clock, p }| {
        assert_eq!(values(&p.get("clinics", "region").await.unwrap()), ["North"]);

        add_clinics(&t.db, 10, &["West"]).await;
        clock.advance(TTL);
        let stale = p.get("clinics", "region").await.unwrap();
        assert_eq!(
            (stale.source, values(&stale)),
            (ValueSource::Stale, vec!["North"]),
            "{b:?}"
        );

        p.settle().await;
        let refreshed = p.get("clinics", "region").await.unwrap();
        assert_eq!(
            (refreshed.source, values(&refreshed)),
            (ValueSource::Fresh, vec!["North", "West"])
        );
        let s = p.stats();
        assert_eq!(
            (
                s.misses,
                s.stale_reads,
                s.refreshes,
                s.queries,
                s.hits,
                s.failures
            ),
            (1, 1, 1, 2, 1, 0),
            "{b:?}: {s:?}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_stale_reads_start_exactly_one_refresh() {
    on_every_backend(&["North"], config(), async |Fixture { t, b, clock, p }| {
        p.get("clinics", "region").await.unwrap();
        add_clinics(&t.db, 10, &["West"]).await;
        clock.advance(TTL + Duration::from_secs(1));

        let barrier = Arc::new(tokio::sync::Barrier::new(32));
        let reads: Vec<_> = (0..32)
            .map(|_| {
                let (p, barrier) = (p.clone(), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    p.get("clinics", "region").await.unwrap()
                })
            })
            .collect();
        let mut stale = 0;
        for r in reads {
            let v = r.await.unwrap();
            match v.source {
                ValueSource::Stale => {
                    assert_eq!(values(&v), ["North"], "{b:?}");
                    stale += 1;
                }
                ValueSource::Fresh => assert_eq!(values(&v), ["North", "West"], "{b:?}"),
                other => panic!("{b:?}: unexpected {other:?}"),
            }
        }
        p.settle().await;
        let s = p.stats();
        assert!(
            stale >= 1,
            "{b:?}: the first reader past the TTL sees stale values"
        );
        assert_eq!(
            (s.refreshes, s.queries, s.stale_reads),
            (1, 2, stale),
            "{b:?}: {s:?}"
        );
        assert_eq!(
            values(&p.get("clinics", "region").await.unwrap()),
            ["North", "West"]
        );
        assert_eq!(p.stats().queries, 2, "{b:?}: fresh again, no further query");
    })
    .await;
}

#[tokio::test]
async fn past_the_cap_the_first_values_are_kept_and_the_column_is_marked_truncated() {
    on_every_backend(
        &["e", "c", "a", "d", "b"],
        AllowedValuesConfig { cap: 3, ..config() },
        async |Fixture { t, b, clock, p }| {
            let region = p.get("clinics", "region").await.unwrap();
            assert_eq!(values(&region), ["a", "b", "c"], "{b:?}: the first three, sorted");
            assert!(region.truncated && !region.fuzzy_matching_allowed(), "{b:?}");

            // Two distinct care settings: under the cap, not truncated.
            let setting = p.get("clinics", "care_setting").await.unwrap();
            assert_eq!(values(&setting), ["community", "hospital_outpatient"], "{b:?}");
            assert!(!setting.truncated);

            // Exactly at the cap is not truncated either.
            let at_cap = provider(&t.db, clock, AllowedValuesConfig { cap: 5, ..config() });
            let all = at_cap.get("clinics", "region").await.unwrap();
            assert_eq!((all.values.len(), all.truncated), (5, false), "{b:?}");
        },
    )
    .await;
}

#[tokio::test]
async fn an_unreachable_database_serves_the_last_known_values_and_retries_sparingly() {
    on_every_backend(
        &["North", "east"],
        config(),
        async |Fixture { t, b, clock, p }| {
            assert_eq!(
                p.get("clinics", "region").await.unwrap().source,
                ValueSource::Fresh
            );

            t.db.close().await; // the database "goes away"
            clock.advance(TTL);
            let stale = p.get("clinics", "region").await.unwrap();
            assert_eq!(
                (stale.source, values(&stale)),
                (ValueSource::Stale, vec!["North", "east"]),
                "{b:?}"
            );
            p.settle().await;
            assert_eq!((p.stats().refreshes, p.stats().failures), (1, 1), "{b:?}");

            // The failed refresh leaves the last known values in place, with no error.
            for _ in 0..3 {
                let last = p.get("clinics", "region").await.unwrap();
                assert_eq!(
                    (last.source, values(&last)),
                    (ValueSource::LastKnown, vec!["North", "east"])
                );
            }
            p.settle().await;
            assert_eq!(p.stats().queries, 2, "{b:?}: no retry before retry_after");

            clock.advance(RETRY);
            assert_eq!(
                p.get("clinics", "region").await.unwrap().source,
                ValueSource::LastKnown
            );
            p.settle().await;
            let s = p.stats();
            assert_eq!(
                (s.refreshes, s.queries, s.failures),
                (2, 3, 2),
                "{b:?}: one retry: {s:?}"
            );
        },
    )
    .await;
}

#[tokio::test]
async fn an_unreachable_database_with_nothing_known_serves_the_static_fallback() {
    on_every_backend(&["Central"], config(), async |Fixture { t, b, p, .. }| {
        t.db.close().await;

        let region = p.get("clinics", "region").await.unwrap();
        assert_eq!(
            (region.source, values(&region)),
            (ValueSource::Fallback, vec!["North", "South"])
        );
        let setting = p.get("clinics", "care_setting").await.unwrap();
        assert_eq!(
            (setting.source, setting.values.len()),
            (ValueSource::Fallback, 0),
            "{b:?}"
        );
        assert_eq!(p.get("clinics", "region").await.unwrap(), region, "{b:?}");
        p.settle().await;
        let s = p.stats();
        assert_eq!(
            (s.misses, s.fallback_reads, s.queries, s.failures),
            (2, 1, 2, 2),
            "{b:?}: the second read does not wait for the database again: {s:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_missing_table_degrades_to_the_fallback_instead_of_failing() {
    on_every_backend(&[], config(), async |Fixture { t, b, clock, .. }| {
        let columns = [ColumnSpec::new("no_such_table", "kind").with_fallback(["b", "a", "a"])];
        let p = AllowedValuesProvider::with_clock(t.db.clone(), columns, config(), clock.clone()).unwrap();
        let v = p.get("no_such_table", "kind").await.unwrap();
        assert_eq!(
            (v.source, values(&v)),
            (ValueSource::Fallback, vec!["a", "b"]),
            "{b:?}"
        );
        assert_eq!(p.stats().failures, 1, "{b:?}");
    })
    .await;
}

#[tokio::test]
async fn hostile_or_unregistered_identifiers_are_refused_before_any_query() {
    on_every_backend(&[], config(), async |Fixture { t, b, clock, p }| {
        for (table, column) in [
            ("clinics", "region\" FROM users; --"),
            ("clinics; DROP TABLE users", "region"),
            ("Clinics", "region"),
            ("clinics", "careSetting"),
            ("", "region"),
        ] {
            let err = AllowedValuesProvider::with_clock(
                t.db.clone(),
                [ColumnSpec::new(table, column)],
                config(),
                clock.clone(),
            )
            .unwrap_err();
            assert!(
                matches!(err, AllowedValuesError::InvalidIdentifier(_)),
                "{b:?} {table}.{column}"
            );
        }
        let dup = [
            ColumnSpec::new("clinics", "region"),
            ColumnSpec::new("clinics", "region"),
        ];
        assert_eq!(
            AllowedValuesProvider::with_clock(t.db.clone(), dup, config(), clock.clone()).unwrap_err(),
            AllowedValuesError::Duplicate("clinics.region".into())
        );

        assert_eq!(
            p.get("users", "password_hash").await.unwrap_err(),
            AllowedValuesError::NotAllowed("users.password_hash".into()),
            "a valid identifier outside the allow-list is refused"
        );
        assert!(matches!(
            p.get("clinics", "region'; DROP TABLE clinics; --").await,
            Err(AllowedValuesError::InvalidIdentifier(_))
        ));
        assert_eq!(
            p.stats(),
            AllowedValuesStats::default(),
            "{b:?}: nothing reached the database"
        );
        add_clinics(&t.db, 1, &["North"]).await; // the table is still there
    })
    .await;
}

#[tokio::test]
async fn snapshot_all_maps_every_registered_column_for_the_engine() {
    on_every_backend(&["North", "South"], config(), async |Fixture { b, p, .. }| {
        let cols: Vec<String> = p.columns().map(ToString::to_string).collect();
        assert_eq!(cols, ["clinics.care_setting", "clinics.region"]);

        let snap = p.snapshot_all().await;
        assert_eq!(
            snap.keys().collect::<Vec<_>>(),
            ["clinics.care_setting", "clinics.region"],
            "{b:?}"
        );
        assert_eq!(values(&snap["clinics.region"]), ["North", "South"]);
        assert_eq!(
            values(&snap["clinics.care_setting"]),
            ["community", "hospital_outpatient"]
        );
        assert!(snap.values().all(|v| v.source == ValueSource::Fresh));

        let again = p.snapshot_all().await;
        assert_eq!(again, snap, "{b:?}");
        assert_eq!(
            (p.stats().queries, p.stats().hits),
            (2, 2),
            "{b:?}: the second snapshot is all hits"
        );
    })
    .await;
}
