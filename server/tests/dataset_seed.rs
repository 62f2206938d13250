//! Seeding the synthetic dataset into real databases: the same seed gives the same
//! rows on SQLite and PostgreSQL, and a second seed never duplicates data.

mod common;

use common::{TestDb, all_backends};
use server::dataset::model::Dataset;
use server::dataset::{
    GenConfig, OnExisting, SeedError, TableCounts, cli_seed, clinical_counts, generate, seed, seed_if_empty,
};
use server::db::Database;
use sqlx::Row;

/// FNV-1a, 64 bit: a stable checksum of a canonical dump.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "NULL".into())
}

/// One line per row, every column, in id order (f64 printed exactly).
fn dump_of(data: &Dataset) -> Vec<String> {
    let mut out = Vec::new();
    for c in &data.clinics {
        out.push(format!("c|{}|{}|{}|{}", c.id, c.name, c.region, c.care_setting));
    }
    for c in &data.clinicians {
        out.push(format!("k|{}|{}|{}|{}", c.id, c.clinic_id, c.name, c.discipline));
    }
    for p in &data.patients {
        out.push(format!(
            "p|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
            p.id,
            p.clinic_id,
            p.mrn,
            p.full_name,
            p.sex,
            p.birth_date,
            p.diabetes,
            p.smoker,
            p.mobility,
            p.bmi
        ));
    }
    for w in &data.wounds {
        out.push(format!(
            "w|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
            w.id,
            w.patient_id,
            w.clinic_id,
            w.etiology,
            w.location,
            opt(w.stage),
            w.depth,
            w.onset_date,
            opt(w.healed_date),
            w.status,
            w.infected,
            w.initial_area_cm2
        ));
    }
    for a in &data.assessments {
        out.push(format!(
            "a|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
            a.id,
            a.wound_id,
            a.clinician_id,
            a.assessed_on,
            a.length_cm,
            a.width_cm,
            a.depth_cm,
            a.area_cm2,
            a.pain_score,
            a.exudate,
            a.tissue_type,
            a.infection_signs
        ));
    }
    out
}

/// The same dump read back from a database (typed decoding, so SQLite's text dates
/// and PostgreSQL's DATE columns print alike).
macro_rules! dump_pool {
    ($pool:expr) => {{
        let pool = $pool;
        let mut out = Vec::new();
        for r in sqlx::query("SELECT id, name, region, care_setting FROM clinics ORDER BY id")
            .fetch_all(pool)
            .await
            .unwrap()
        {
            out.push(format!(
                "c|{}|{}|{}|{}",
                r.get::<i64, _>(0),
                r.get::<String, _>(1),
                r.get::<String, _>(2),
                r.get::<String, _>(3)
            ));
        }
        for r in sqlx::query("SELECT id, clinic_id, name, discipline FROM clinicians ORDER BY id")
            .fetch_all(pool)
            .await
            .unwrap()
        {
            out.push(format!(
                "k|{}|{}|{}|{}",
                r.get::<i64, _>(0),
                r.get::<i64, _>(1),
                r.get::<String, _>(2),
                r.get::<String, _>(3)
            ));
        }
        for r in sqlx::query(
            "SELECT id, clinic_id, mrn, full_name, sex, birth_date, diabetes, smoker, mobility, bmi \
             FROM patients ORDER BY id",
        )
        .fetch_all(pool)
        .await
        .unwrap()
        {
            out.push(format!(
                "p|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
                r.get::<i64, _>(0),
                r.get::<i64, _>(1),
                r.get::<String, _>(2),
                r.get::<String, _>(3),
                r.get::<String, _>(4),
                r.get::<chrono::NaiveDate, _>(5),
                r.get::<bool, _>(6),
                r.get::<bool, _>(7),
                r.get::<String, _>(8),
                r.get::<f64, _>(9)
            ));
        }
        for r in sqlx::query(
            "SELECT id, patient_id, clinic_id, etiology, location, stage, depth, onset_date, healed_date, \
             status, infected, initial_area_cm2 FROM wounds ORDER BY id",
        )
        .fetch_all(pool)
        .await
        .unwrap()
        {
            out.push(format!(
                "w|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
                r.get::<i64, _>(0),
                r.get::<i64, _>(1),
                r.get::<i64, _>(2),
                r.get::<String, _>(3),
                r.get::<String, _>(4),
                opt(r.get::<Option<String>, _>(5)),
                r.get::<String, _>(6),
                r.get::<chrono::NaiveDate, _>(7),
                opt(r.get::<Option<chrono::NaiveDate>, _>(8)),
                r.get::<String, _>(9),
                r.get::<bool, _>(10),
                r.get::<f64, _>(11)
            ));
        }
        for r in sqlx::query(
            "SELECT id, wound_id, clinician_id, assessed_on, length_cm, width_cm, depth_cm, area_cm2, \
             pain_score, exudate, tissue_type, infection_signs FROM assessments ORDER BY id",
        )
        .fetch_all(pool)
        .await
        .unwrap()
        {
            out.push(format!(
                "a|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
                r.get::<i64, _>(0),
                r.get::<i64, _>(1),
                r.get::<i64, _>(2),
                r.get::<chrono::NaiveDate, _>(3),
                r.get::<f64, _>(4),
                r.get::<f64, _>(5),
                r.get::<f64, _>(6),
                r.get::<f64, _>(7),
                r.get::<i32, _>(8),
                r.get::<String, _>(9),
                r.get::<String, _>(10),
                r.get::<bool, _>(11)
            ));
        }
        out
    }};
}

async fn dump_db(db: &Database) -> Vec<String> {
    match db {
        Database::Sqlite(p) => dump_pool!(p),
        Database::Postgres(p) => dump_pool!(p),
    }
}

/// Aggregates computed by the database itself: counts and exact area sums (in
/// hundredths of cm²) by etiology and status, by tissue and exudate, and total pain
/// per care setting.
const AGGREGATES: [&str; 3] = [
    "SELECT etiology || '/' || status, COUNT(*), \
     CAST(SUM(CAST(ROUND(initial_area_cm2 * 100) AS BIGINT)) AS BIGINT) \
     FROM wounds GROUP BY etiology, status ORDER BY 1",
    "SELECT tissue_type || '/' || exudate, COUNT(*), CAST(SUM(CAST(ROUND(area_cm2 * 100) AS BIGINT)) AS BIGINT) \
     FROM assessments GROUP BY tissue_type, exudate ORDER BY 1",
    "SELECT c.care_setting, COUNT(*), CAST(SUM(a.pain_score) AS BIGINT) \
     FROM assessments a JOIN wounds w ON w.id = a.wound_id JOIN clinics c ON c.id = w.clinic_id \
     GROUP BY c.care_setting ORDER BY 1",
];

macro_rules! aggregates_pool {
    ($pool:expr) => {{
        let mut out = Vec::new();
        for sql in AGGREGATES {
            for r in sqlx::query(sql).fetch_all($pool).await.unwrap() {
                out.push(format!(
                    "{}={}:{}",
                    r.get::<String, _>(0),
                    r.get::<i64, _>(1),
                    r.get::<i64, _>(2)
                ));
            }
        }
        out
    }};
}

async fn aggregates(db: &Database) -> Vec<String> {
    match db {
        Database::Sqlite(p) => aggregates_pool!(p),
        Database::Postgres(p) => aggregates_pool!(p),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_seed_gives_identical_rows_on_sqlite_and_postgres() {
    let cfg = GenConfig::new(3, 2024);
    let data = generate(&cfg);
    let expected = dump_of(&data);
    let checksum = fnv(&expected.join("\n"));
    let backends = all_backends().await;
    let mut seen_aggregates = Vec::new();
    for t in &backends {
        let backend = t.db.backend();
        let report = seed(&t.db, &cfg, OnExisting::Refuse).await.unwrap();
        assert_eq!(report.counts, TableCounts::of(&data), "{backend:?}");
        assert_eq!(
            clinical_counts(&t.db).await.unwrap(),
            report.counts,
            "{backend:?}"
        );
        let dump = dump_db(&t.db).await;
        assert_eq!(dump.len(), expected.len(), "{backend:?}");
        if let Some(i) = (0..dump.len()).find(|&i| dump[i] != expected[i]) {
            panic!(
                "{backend:?} differs at row {i}:\n  db:     {}\n  memory: {}",
                dump[i], expected[i]
            );
        }
        assert_eq!(fnv(&dump.join("\n")), checksum, "{backend:?}");
        seen_aggregates.push((backend, aggregates(&t.db).await));
    }
    for (backend, agg) in &seen_aggregates[1..] {
        assert_eq!(
            agg, &seen_aggregates[0].1,
            "aggregates of {backend:?} and {:?}",
            seen_aggregates[0].0
        );
    }
    assert!(seen_aggregates[0].1.len() > 10, "{:?}", seen_aggregates[0].1);
    for t in backends {
        t.cleanup().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn seeding_a_seeded_database_is_refused_and_changes_nothing() {
    for t in all_backends().await {
        let first = seed(&t.db, &GenConfig::new(1, 1), OnExisting::Refuse)
            .await
            .unwrap();
        let err = seed(&t.db, &GenConfig::new(1, 2), OnExisting::Refuse)
            .await
            .unwrap_err();
        match &err {
            SeedError::AlreadySeeded { existing } => assert_eq!(*existing, first.counts),
            other => panic!("expected AlreadySeeded, got {other}"),
        }
        assert!(err.to_string().contains("already hold data"), "{err}");
        assert!(err.to_string().contains("would duplicate"), "{err}");
        assert_eq!(
            clinical_counts(&t.db).await.unwrap(),
            first.counts,
            "{:?}",
            t.db.backend()
        );
        t.cleanup().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn replace_deletes_the_old_rows_first() {
    for t in all_backends().await {
        seed(&t.db, &GenConfig::new(2, 1), OnExisting::Refuse)
            .await
            .unwrap();
        let cfg = GenConfig::new(1, 99);
        let report = seed(&t.db, &cfg, OnExisting::Replace).await.unwrap();
        let data = generate(&cfg);
        assert_eq!(report.counts, TableCounts::of(&data));
        assert_eq!(dump_db(&t.db).await, dump_of(&data), "{:?}", t.db.backend());
        t.cleanup().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_if_empty_seeds_once() {
    for t in all_backends().await {
        let cfg = GenConfig::new(1, 5);
        let first = seed_if_empty(&t.db, &cfg)
            .await
            .unwrap()
            .expect("empty tables get seeded");
        assert_eq!(first.counts, TableCounts::of(&generate(&cfg)));
        assert!(
            seed_if_empty(&t.db, &cfg).await.unwrap().is_none(),
            "a seeded database is left alone"
        );
        assert_eq!(clinical_counts(&t.db).await.unwrap(), first.counts);
        t.cleanup().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_scale_is_refused_before_touching_the_database() {
    let t = TestDb::sqlite().await;
    let err = seed(&t.db, &GenConfig::new(0, 1), OnExisting::Refuse)
        .await
        .unwrap_err();
    assert!(matches!(err, SeedError::BadScale(0)), "{err}");
    assert!(clinical_counts(&t.db).await.unwrap().is_empty());
    t.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_seed_summarises_and_refuses_a_second_run() {
    for t in all_backends().await {
        let summary = cli_seed(&t.url, Some(1), 42).await.unwrap();
        let counts = TableCounts::of(&generate(&GenConfig::new(1, 42)));
        assert!(summary.starts_with(&format!("Seeded {counts} in ")), "{summary}");
        assert!(summary.ends_with(" s"), "{summary}");
        let err = cli_seed(&t.url, Some(1), 42).await.unwrap_err().to_string();
        assert!(err.contains("already hold data"), "{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert_eq!(clinical_counts(&t.db).await.unwrap(), counts);
        t.cleanup().await;
    }
}
