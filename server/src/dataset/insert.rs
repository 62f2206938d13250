//! Bulk insert of a generated dataset into SQLite or PostgreSQL.
//!
//! Multi-row `INSERT … VALUES` statements built with [`sqlx::QueryBuilder::push_values`],
//! every value bound as a parameter, chunked under SQLite's limit of 32 766 bound
//! variables, all inside one transaction: a seed either lands completely or not at
//! all. Patients are generated and written in batches so memory stays bounded at any
//! scale. This module must never build SQL from data, never delete clinical rows
//! unless asked to replace them, and never write anywhere but the clinical tables.

use super::generate::{Generator, NextIds};
use super::{OnExisting, SeedError, TableCounts};
use crate::db::Database;
use sqlx::Row;

/// SQLite's default maximum number of bound variables per statement (PostgreSQL allows 65 535).
const MAX_BIND_PARAMS: usize = 32_766;

/// Patients generated and written per round (about 11 000 assessments).
const PATIENT_BATCH: u32 = 200;

const COUNT_SQL: &str = "SELECT (SELECT COUNT(*) FROM clinics), (SELECT COUNT(*) FROM clinicians), \
     (SELECT COUNT(*) FROM patients), (SELECT COUNT(*) FROM wounds), (SELECT COUNT(*) FROM assessments)";

/// Children first, so foreign keys hold at every step.
const DELETE_SQL: [&str; 5] = [
    "DELETE FROM assessments",
    "DELETE FROM wounds",
    "DELETE FROM patients",
    "DELETE FROM clinicians",
    "DELETE FROM clinics",
];

/// Inserts `rows` in as few statements as the bind limit allows.
macro_rules! insert_chunks {
    ($tx:expr, $db:ty, $head:literal, $cols:literal, $rows:expr, |$b:ident, $r:ident| $push:block) => {
        for chunk in $rows.chunks(MAX_BIND_PARAMS / $cols) {
            let mut qb = sqlx::QueryBuilder::<$db>::new($head);
            qb.push_values(chunk, |mut $b, $r| $push);
            qb.build().execute(&mut *$tx).await?;
        }
    };
}

/// The whole seed for one concrete backend (the SQL is the same text for both).
macro_rules! write_all {
    ($pool:expr, $db:ty, $generator:expr, $on_existing:expr) => {{
        let mut tx = $pool.begin().await?;
        let row = sqlx::query(COUNT_SQL).fetch_one(&mut *tx).await?;
        let existing = TableCounts {
            clinics: row.try_get(0)?,
            clinicians: row.try_get(1)?,
            patients: row.try_get(2)?,
            wounds: row.try_get(3)?,
            assessments: row.try_get(4)?,
        };
        if !existing.is_empty() {
            match $on_existing {
                OnExisting::Refuse => return Err(SeedError::AlreadySeeded { existing }),
                OnExisting::Replace => {
                    for sql in DELETE_SQL {
                        sqlx::query(sql).execute(&mut *tx).await?;
                    }
                }
            }
        }

        let generator: &Generator = $generator;
        let mut counts = TableCounts::default();
        insert_chunks!(tx, $db, "INSERT INTO clinics (id, name, region, care_setting) ", 4, generator.clinics(), |b, c| {
            b.push_bind(c.id).push_bind(c.name.as_str()).push_bind(c.region).push_bind(c.care_setting.as_str());
        });
        counts.clinics = generator.clinics().len() as i64;
        insert_chunks!(
            tx,
            $db,
            "INSERT INTO clinicians (id, clinic_id, name, discipline) ",
            4,
            generator.clinicians(),
            |b, c| {
                b.push_bind(c.id).push_bind(c.clinic_id).push_bind(c.name.as_str()).push_bind(c.discipline.as_str());
            }
        );
        counts.clinicians = generator.clinicians().len() as i64;

        let mut ids = NextIds::default();
        let total = generator.patient_count();
        let mut start = 0;
        while start < total {
            let end = (start + PATIENT_BATCH).min(total);
            let batch = generator.batch(start..end, &mut ids);
            start = end;
            insert_chunks!(
                tx,
                $db,
                "INSERT INTO patients (id, clinic_id, mrn, full_name, sex, birth_date, diabetes, smoker, \
                 mobility, bmi) ",
                10,
                batch.patients,
                |b, p| {
                    b.push_bind(p.id)
                        .push_bind(p.clinic_id)
                        .push_bind(p.mrn.as_str())
                        .push_bind(p.full_name.as_str())
                        .push_bind(p.sex.as_str())
                        .push_bind(p.birth_date)
                        .push_bind(p.diabetes)
                        .push_bind(p.smoker)
                        .push_bind(p.mobility.as_str())
                        .push_bind(p.bmi);
                }
            );
            insert_chunks!(
                tx,
                $db,
                "INSERT INTO wounds (id, patient_id, clinic_id, etiology, location, stage, depth, onset_date, \
                 healed_date, status, infected, initial_area_cm2) ",
                12,
                batch.wounds,
                |b, w| {
                    b.push_bind(w.id)
                        .push_bind(w.patient_id)
                        .push_bind(w.clinic_id)
                        .push_bind(w.etiology.as_str())
                        .push_bind(w.location.as_str())
                        .push_bind(w.stage.map(|s| s.as_str()))
                        .push_bind(w.depth.as_str())
                        .push_bind(w.onset_date)
                        .push_bind(w.healed_date)
                        .push_bind(w.status.as_str())
                        .push_bind(w.infected)
                        .push_bind(w.initial_area_cm2);
                }
            );
            insert_chunks!(
                tx,
                $db,
                "INSERT INTO assessments (id, wound_id, clinician_id, assessed_on, length_cm, width_cm, \
                 depth_cm, area_cm2, pain_score, exudate, tissue_type, infection_signs) ",
                12,
                batch.assessments,
                |b, a| {
                    b.push_bind(a.id)
                        .push_bind(a.wound_id)
                        .push_bind(a.clinician_id)
                        .push_bind(a.assessed_on)
                        .push_bind(a.length_cm)
                        .push_bind(a.width_cm)
                        .push_bind(a.depth_cm)
                        .push_bind(a.area_cm2)
                        .push_bind(a.pain_score)
                        .push_bind(a.exudate.as_str())
                        .push_bind(a.tissue_type.as_str())
                        .push_bind(a.infection_signs);
                }
            );
            counts.patients += batch.patients.len() as i64;
            counts.wounds += batch.wounds.len() as i64;
            counts.assessments += batch.assessments.len() as i64;
        }
        tx.commit().await?;
        // Fresh statistics so the query planner knows the new row counts.
        for sql in ANALYZE_SQL {
            sqlx::query(sql).execute($pool).await?;
        }
        Ok(counts)
    }};
}

const ANALYZE_SQL: [&str; 5] = [
    "ANALYZE clinics",
    "ANALYZE clinicians",
    "ANALYZE patients",
    "ANALYZE wounds",
    "ANALYZE assessments",
];

/// Counts the rows of every clinical table.
pub(crate) async fn count(db: &Database) -> Result<TableCounts, sqlx::Error> {
    let row = match db {
        Database::Sqlite(pool) => {
            let r = sqlx::query(COUNT_SQL).fetch_one(pool).await?;
            [
                r.try_get(0)?,
                r.try_get(1)?,
                r.try_get(2)?,
                r.try_get(3)?,
                r.try_get(4)?,
            ]
        }
        Database::Postgres(pool) => {
            let r = sqlx::query(COUNT_SQL).fetch_one(pool).await?;
            [
                r.try_get(0)?,
                r.try_get(1)?,
                r.try_get(2)?,
                r.try_get(3)?,
                r.try_get(4)?,
            ]
        }
    };
    let [clinics, clinicians, patients, wounds, assessments] = row;
    Ok(TableCounts {
        clinics,
        clinicians,
        patients,
        wounds,
        assessments,
    })
}

/// Generates the dataset described by `generator` into `db` in one transaction.
pub(crate) async fn write(
    db: &Database,
    generator: &Generator,
    on_existing: OnExisting,
) -> Result<TableCounts, SeedError> {
    match db {
        Database::Sqlite(pool) => write_all!(pool, sqlx::Sqlite, generator, on_existing),
        Database::Postgres(pool) => write_all!(pool, sqlx::Postgres, generator, on_existing),
    }
}
