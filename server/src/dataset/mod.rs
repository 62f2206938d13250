//! Deterministic synthetic wound-care data: clinics, clinicians, patients, wounds and
//! their assessments over time, for the demo, the tests and the benchmarks.
//!
//! The data is a pure function of a [`GenConfig`]: `scale`, `seed` and the `anchor`
//! date that plays "today" (default [`DEFAULT_ANCHOR`], 2026-11-01). Onsets fall in
//! the three years before the anchor and nothing happens after it. The clock is never
//! read, so every run and every backend holds exactly the same rows for the same
//! configuration (same binary; floating-point maths comes from the platform's libm).
//!
//! At the default scale (100) and seed (42) there are 12 clinics, 98 clinicians,
//! 2,000 patients, 5,695 wounds and 113,721 assessments; generating and writing them
//! takes 1–2 s into SQLite and about 5 s into PostgreSQL (optimised build, 2 cores).
//!
//! What this module must not do: read the clock or OS randomness while generating,
//! write anything but the five clinical tables, or add rows to tables that already
//! hold clinical data (it refuses, unless the caller asks to replace them).
//!
//! - [`generate`] builds the rows in memory (tests, small scales).
//! - [`seed`] / [`seed_if_empty`] write them to a database in one transaction.
//! - [`cli_seed`] is the `server seed` command.

mod generate;
mod insert;
pub mod model;
mod names;
mod sample;

use crate::db::Database;
use crate::db::redact_url;
use chrono::NaiveDate;
use std::fmt;
use std::time::{Duration, Instant};

pub use model::Dataset;

/// The default scale: 2,000 patients and over 100,000 assessments.
pub const DEFAULT_SCALE: u32 = 100;
/// The largest scale accepted (2,000,000 patients).
pub const MAX_SCALE: u32 = 100_000;
/// The seed `server seed` uses unless told otherwise.
pub const DEFAULT_SEED: u64 = 42;
/// The default reference "today": no date in the data is later than this.
pub const DEFAULT_ANCHOR: NaiveDate = match NaiveDate::from_ymd_opt(2026, 11, 1) {
    Some(d) => d,
    None => panic!("2026-11-01 is a valid date"),
};

/// Everything the generated data depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenConfig {
    /// Size: `20 × scale` patients (1 ..= [`MAX_SCALE`]).
    pub scale: u32,
    /// Seed of the ChaCha random streams.
    pub seed: u64,
    /// The reference "today": onsets lie in the three years before it, and
    /// wounds not healed by then are open (or amputated).
    pub anchor: NaiveDate,
}

impl GenConfig {
    /// A configuration with the default anchor date.
    pub fn new(scale: u32, seed: u64) -> Self {
        GenConfig {
            scale,
            seed,
            anchor: DEFAULT_ANCHOR,
        }
    }

    /// The default demo data, generated to end on `anchor` (the embedded default seeds
    /// itself with this on first start, so "the last 7 days" has visits in it).
    pub fn demo_ending_on(anchor: NaiveDate) -> Self {
        GenConfig {
            anchor,
            ..GenConfig::default()
        }
    }
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig::new(DEFAULT_SCALE, DEFAULT_SEED)
    }
}

/// What to do when the clinical tables already hold rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnExisting {
    /// Fail with [`SeedError::AlreadySeeded`] and change nothing.
    Refuse,
    /// Delete every clinical row first (in the same transaction).
    Replace,
}

/// Row counts of the five clinical tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableCounts {
    pub clinics: i64,
    pub clinicians: i64,
    pub patients: i64,
    pub wounds: i64,
    pub assessments: i64,
}

impl TableCounts {
    /// True when every clinical table is empty.
    pub fn is_empty(&self) -> bool {
        self.clinics + self.clinicians + self.patients + self.wounds + self.assessments == 0
    }

    /// The counts of an in-memory dataset.
    pub fn of(data: &Dataset) -> Self {
        TableCounts {
            clinics: data.clinics.len() as i64,
            clinicians: data.clinicians.len() as i64,
            patients: data.patients.len() as i64,
            wounds: data.wounds.len() as i64,
            assessments: data.assessments.len() as i64,
        }
    }
}

impl fmt::Display for TableCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} clinics, {} clinicians, {} patients, {} wounds, {} assessments",
            thousands(self.clinics),
            thousands(self.clinicians),
            thousands(self.patients),
            thousands(self.wounds),
            thousands(self.assessments)
        )
    }
}

/// What a seed wrote and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedReport {
    pub counts: TableCounts,
    /// Generation and insertion together.
    pub elapsed: Duration,
}

impl fmt::Display for SeedReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seeded {} in {:.1} s", self.counts, self.elapsed.as_secs_f64())
    }
}

/// Why seeding failed.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error(
        "the clinical tables already hold data ({existing}); seeding again would duplicate it. \
         Seed an empty database, or delete the clinical rows first"
    )]
    AlreadySeeded { existing: TableCounts },
    #[error("scale must be between 1 and {MAX_SCALE}, got {0}")]
    BadScale(u32),
    #[error("cannot write the dataset: {0}")]
    Database(#[from] sqlx::Error),
}

/// Builds the whole dataset in memory, every table ordered by id.
///
/// # Panics
/// If `cfg.scale` is 0 or above [`MAX_SCALE`] (the seeding functions return
/// [`SeedError::BadScale`] instead).
pub fn generate(cfg: &GenConfig) -> Dataset {
    assert!(
        (1..=MAX_SCALE).contains(&cfg.scale),
        "scale must be between 1 and {MAX_SCALE}"
    );
    let generator = generate::Generator::new(cfg);
    let batch = generator.batch(0..generator.patient_count(), &mut generate::NextIds::default());
    Dataset {
        clinics: generator.clinics().to_vec(),
        clinicians: generator.clinicians().to_vec(),
        patients: batch.patients,
        wounds: batch.wounds,
        assessments: batch.assessments,
    }
}

/// Row counts of the clinical tables in `db`.
pub async fn clinical_counts(db: &Database) -> Result<TableCounts, sqlx::Error> {
    insert::count(db).await
}

/// Generates the dataset for `cfg` and writes it to the (migrated) database in one
/// transaction. Tables that already hold clinical rows are refused or replaced, as
/// `on_existing` says; never appended to.
pub async fn seed(db: &Database, cfg: &GenConfig, on_existing: OnExisting) -> Result<SeedReport, SeedError> {
    if !(1..=MAX_SCALE).contains(&cfg.scale) {
        return Err(SeedError::BadScale(cfg.scale));
    }
    let started = Instant::now();
    let generator = generate::Generator::new(cfg);
    let counts = insert::write(db, &generator, on_existing).await?;
    Ok(SeedReport {
        counts,
        elapsed: started.elapsed(),
    })
}

/// Seeds `cfg` when every clinical table is empty; `Ok(None)` (nothing written)
/// otherwise. Used on first start of the embedded demo database.
pub async fn seed_if_empty(db: &Database, cfg: &GenConfig) -> Result<Option<SeedReport>, SeedError> {
    if !clinical_counts(db).await?.is_empty() {
        return Ok(None);
    }
    match seed(db, cfg, OnExisting::Refuse).await {
        Ok(report) => Ok(Some(report)),
        // Another process seeded it between our check and our transaction.
        Err(SeedError::AlreadySeeded { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// CLI glue for `server seed`: migrates `database_url` and fills its clinical tables
/// (refusing if they already hold data). Returns a summary (row counts, duration)
/// for the terminal.
pub async fn cli_seed(database_url: &str, scale: Option<u32>, seed: u64) -> anyhow::Result<String> {
    let cfg = GenConfig::new(scale.unwrap_or(DEFAULT_SCALE), seed);
    let db = Database::connect_and_migrate(database_url).await?;
    let result = self::seed(&db, &cfg, OnExisting::Refuse).await;
    db.close().await;
    match result {
        Ok(report) => Ok(report.to_string()),
        Err(e @ SeedError::AlreadySeeded { .. }) => {
            anyhow::bail!("not seeding {}: {e}", redact_url(database_url))
        }
        Err(e) => Err(e.into()),
    }
}

/// `1234567` → `"1,234,567"`.
fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
