//! `server introspect` (F25) on SQLite and PostgreSQL: the demo schema and an unrelated
//! library schema with camelCase names, a text foreign key, a table without a primary
//! key and a binary column. Every draft must load through the semantic model's loader.

mod common;

use server::db::{Backend, Database};
use server::semantic::introspect::{IntrospectOptions, Introspection, cli_introspect, introspect};
use server::semantic::{AllowedValues, AttributeRole, AttributeType, SchemaInfo, SemanticModel};
use server::warehouse::{AllowedValuesConfig, AllowedValuesProvider, ColumnSpec, ValueSource};
use sqlx::Connection;
use std::collections::BTreeSet;

/// A database with no migrations applied, for schemas that are not Clarion's.
struct EmptyDb {
    db: Database,
    pg_name: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

impl EmptyDb {
    async fn sqlite() -> EmptyDb {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("library.db").display());
        let db = Database::connect(&url).await.unwrap();
        EmptyDb {
            db,
            pg_name: None,
            _dir: Some(dir),
        }
    }

    async fn postgres() -> Option<EmptyDb> {
        // The same rule as the shared helper: skip when unreachable, unless CI requires it.
        let admin = common::pg_admin_url();
        let mut conn = match sqlx::PgConnection::connect(&admin).await {
            Ok(c) => c,
            Err(e) if std::env::var_os("CLARION_REQUIRE_PG").is_none() => {
                eprintln!("skipping PostgreSQL half: {admin} unreachable ({e})");
                return None;
            }
            Err(e) => panic!("PostgreSQL is required (CLARION_REQUIRE_PG) but {admin} failed: {e}"),
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        // a counter too: two tests of this process can read the same clock tick
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("clarion_introspect_{}_{nanos}_{n}", std::process::id());
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .unwrap();
        let base = admin.rsplit_once('/').map(|(b, _)| b.to_owned()).unwrap();
        let url = format!("{base}/{name}");
        let db = Database::connect(&url).await.unwrap();
        Some(EmptyDb {
            db,
            pg_name: Some(name),
            _dir: None,
        })
    }

    async fn all() -> Vec<EmptyDb> {
        let mut v = vec![EmptyDb::sqlite().await];
        v.extend(EmptyDb::postgres().await);
        v
    }

    async fn cleanup(self) {
        self.db.close().await;
        if let Some(name) = self.pg_name
            && let Ok(mut conn) = sqlx::PgConnection::connect(&common::pg_admin_url()).await
        {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&mut conn)
                .await;
        }
    }
}

async fn run_sql(db: &Database, sql: &str) {
    match db {
        Database::Sqlite(p) => sqlx::raw_sql(sql).execute(p).await.map(|_| ()),
        Database::Postgres(p) => sqlx::raw_sql(sql).execute(p).await.map(|_| ()),
    }
    .unwrap_or_else(|e| panic!("{e}\n{sql}"));
}

/// An unrelated schema: camelCase names (quoted, so PostgreSQL keeps their case), a
/// foreign key onto a text key, a table without a primary key, a binary column.
fn library_ddl(backend: Backend) -> String {
    let blob = if backend == Backend::Postgres {
        "BYTEA"
    } else {
        "BLOB"
    };
    format!(
        r#"
CREATE TABLE authors (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, country TEXT, dob DATE);
CREATE TABLE books (
    isbn VARCHAR(13) PRIMARY KEY,
    title TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES authors (id),
    "publishedYear" INTEGER,
    genre TEXT NOT NULL,
    price_amt REAL,
    is_available BOOLEAN NOT NULL,
    "shelfCode" TEXT
);
CREATE TABLE "bookLoans" (
    id INTEGER PRIMARY KEY,
    book_isbn VARCHAR(13) NOT NULL REFERENCES books (isbn),
    "borrowedOn" DATE NOT NULL,
    "returnedOn" DATE,
    qty INTEGER NOT NULL,
    "loanStatus" TEXT NOT NULL
);
CREATE TABLE branches (code TEXT, city TEXT);
CREATE TABLE attachments (id INTEGER PRIMARY KEY, loan_id INTEGER REFERENCES "bookLoans" (id), content {blob});
INSERT INTO authors VALUES (1, 'Ada Writer', 'NZ', '1970-01-02'), (2, 'Ben Author', 'UK', NULL);
INSERT INTO books VALUES
    ('9780000000001', 'First Book', 1, 2001, 'fiction', 12.5, TRUE, 'A1'),
    ('9780000000002', 'Second Book', 1, 2005, 'poetry', 8.0, FALSE, 'B2'),
    ('9780000000003', 'Third Book', 2, 2010, 'fiction', NULL, TRUE, 'A1');
INSERT INTO "bookLoans" VALUES
    (1, '9780000000001', '2024-01-05', '2024-01-20', 1, 'returned'),
    (2, '9780000000002', '2024-02-01', NULL, 2, 'out');
INSERT INTO branches VALUES ('N', 'Northtown'), ('S', 'Southville');
"#
    )
}

/// A few clinical rows so that low-cardinality columns have values to count. Literal
/// dates and booleans read the same on both backends.
const DEMO_ROWS: &str = r#"
INSERT INTO clinics VALUES (1, 'Riverside', 'North', 'community'), (2, 'Hilltop', 'South', 'hospital_outpatient');
INSERT INTO clinicians VALUES (1, 1, 'Kim Lee', 'wound_nurse');
INSERT INTO patients VALUES
    (1, 1, 'MRN001', 'Pat One', 'female', '1950-03-04', TRUE, FALSE, 'assisted', 27.5),
    (2, 2, 'MRN002', 'Pat Two', 'male', '1961-07-08', FALSE, TRUE, 'independent', 31.0);
INSERT INTO wounds VALUES
    (1, 1, 1, 'pressure_injury', 'sacrum', 'stage_2', 'partial_thickness', '2024-01-01', NULL, 'open', FALSE, 6.5),
    (2, 2, 2, 'venous_leg_ulcer', 'lower_leg', NULL, 'full_thickness', '2023-11-01', '2024-02-01', 'healed', TRUE, 12.0);
INSERT INTO assessments VALUES
    (1, 1, 1, '2024-01-08', 3.0, 2.0, 0.5, 6.0, 4, 'moderate', 'granulation', FALSE),
    (2, 2, 1, '2024-01-09', 4.0, 3.0, 1.0, 12.0, 6, 'high', 'slough', TRUE);
"#;

fn entity_names(m: &SemanticModel) -> BTreeSet<&str> {
    m.entities.iter().map(|e| e.name.as_str()).collect()
}

fn joins(m: &SemanticModel) -> BTreeSet<(String, String)> {
    m.joins.iter().map(|j| (j.from.clone(), j.to.clone())).collect()
}

fn attr<'m>(m: &'m SemanticModel, qualified: &str) -> &'m server::semantic::Attribute {
    m.attribute(qualified)
        .unwrap_or_else(|| panic!("no attribute {qualified}"))
        .attribute
}

fn has_synonym(m: &SemanticModel, qualified: &str, word: &str) -> bool {
    attr(m, qualified).synonyms.iter().any(|s| s == word)
}

/// Writes the draft as TOML and loads it back through the model's loader, with and
/// without the schema introspection read.
fn reload(d: &Introspection, what: &str) -> SemanticModel {
    let text = d.to_toml("test").unwrap();
    assert!(
        text.starts_with("# Semantic model drafted by `server introspect`"),
        "{text}"
    );
    let loaded = SemanticModel::from_toml_str_with_schema(&text, what, Some(&d.schema))
        .unwrap_or_else(|e| panic!("{what} does not load:\n{e}\n{text}"));
    assert_eq!(loaded, d.model, "{what}: TOML round trip");
    loaded
}

#[tokio::test]
async fn the_demo_schema_becomes_the_five_clinical_entities_with_their_joins() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        run_sql(&t.db, DEMO_ROWS).await;
        let d = introspect(&t.db, "demo", &IntrospectOptions::default())
            .await
            .unwrap();
        let m = reload(&d, &format!("demo on {b:?}"));

        assert_eq!(
            entity_names(&m),
            BTreeSet::from(["assessments", "clinicians", "clinics", "patients", "wounds"]),
            "{b:?}: users, user_settings and _sqlx_migrations are Clarion's, not entities"
        );
        let expected: BTreeSet<(String, String)> = [
            ("assessments.clinician_id", "clinicians.id"),
            ("assessments.wound_id", "wounds.id"),
            ("clinicians.clinic_id", "clinics.id"),
            ("patients.clinic_id", "clinics.id"),
            ("wounds.clinic_id", "clinics.id"),
            ("wounds.patient_id", "patients.id"),
        ]
        .iter()
        .map(|(f, t)| ((*f).to_owned(), (*t).to_owned()))
        .collect();
        assert_eq!(joins(&m), expected, "{b:?}");

        // The draft agrees with the hand-written model on the type of every column.
        let shipped = SemanticModel::wound_care();
        for e in &shipped.entities {
            let drafted = m.entities.iter().find(|x| x.table == e.table).unwrap();
            assert_eq!(drafted.key, "id", "{b:?} {}", e.table);
            for a in e.attributes.iter().filter(|a| a.column.is_some()) {
                let col = a.column.as_deref();
                let mine = drafted
                    .attributes
                    .iter()
                    .find(|x| x.column.as_deref() == col)
                    .unwrap();
                assert_eq!(mine.ty, a.ty, "{b:?}: {}.{:?}", e.table, col);
            }
        }
        // It also validates against the demo migration's schema.
        let text = d.to_toml("demo").unwrap();
        SemanticModel::from_toml_str_with_schema(&text, "demo.toml", Some(&SchemaInfo::wound_care_demo()))
            .unwrap_or_else(|e| panic!("{b:?}: {e}"));

        let mrn = attr(&m, "patients.mrn");
        assert!(
            mrn.pii && mrn.role == AttributeRole::Identifier && mrn.allowed.is_none(),
            "{b:?}: {mrn:?}"
        );
        assert!(has_synonym(&m, "patients.mrn", "medical record number"), "{b:?}");
        assert!(
            has_synonym(&m, "assessments.area_cm2", "area"),
            "{b:?}: unit suffix dropped"
        );
        assert_eq!(attr(&m, "assessments.area_cm2").unit.as_deref(), Some("cm2"));
        assert!(
            has_synonym(&m, "assessments.assessed_on", "assessed date"),
            "{b:?}"
        );
        assert_eq!(
            attr(&m, "patients.full_name").allowed,
            None,
            "{b:?}: personal data is never listed"
        );
        for low in [
            "clinics.region",
            "wounds.etiology",
            "assessments.exudate",
            "clinics.name",
        ] {
            assert_eq!(
                attr(&m, low).allowed,
                Some(AllowedValues::Database { known: vec![] }),
                "{b:?} {low}"
            );
        }
        assert_eq!(attr(&m, "wounds.patient_id").role, AttributeRole::ForeignKey);
        assert_eq!(
            m.entity("clinics").unwrap().display_attribute.as_deref(),
            Some("name")
        );
        assert_eq!(
            m.entity("wounds").unwrap().default_time_dimension.as_deref(),
            Some("wounds_onset_date")
        );
        assert_eq!(
            m.entity("patients").unwrap().default_time_dimension,
            None,
            "{b:?}: birth is no default"
        );
        assert_eq!(m.find_entity("wound").map(|e| e.name.as_str()), Some("wounds"));
        assert!(m.measure("wounds_count").is_some());
        t.cleanup().await;
    }
}

#[tokio::test]
async fn an_unrelated_library_schema_gets_entities_joins_and_synonyms_from_its_names() {
    for t in EmptyDb::all().await {
        let b = t.db.backend();
        run_sql(&t.db, &library_ddl(b)).await;
        let d = introspect(&t.db, "library", &IntrospectOptions::default())
            .await
            .unwrap();
        let m = reload(&d, &format!("library on {b:?}"));

        assert_eq!(
            entity_names(&m),
            BTreeSet::from(["attachments", "authors", "book_loans", "books", "branches"]),
            "{b:?}"
        );
        let loans = m.entity("book_loans").unwrap();
        assert_eq!(
            (loans.table.as_str(), loans.label.as_str()),
            ("bookLoans", "Book loan"),
            "{b:?}"
        );
        let expected: BTreeSet<(String, String)> = [
            ("attachments.loan_id", "book_loans.id"),
            ("book_loans.book_isbn", "books.isbn"),
            ("books.author_id", "authors.id"),
        ]
        .iter()
        .map(|(f, t)| ((*f).to_owned(), (*t).to_owned()))
        .collect();
        assert_eq!(joins(&m), expected, "{b:?}");

        // camelCase columns become snake_case attributes that keep the real column name.
        let year = attr(&m, "books.published_year");
        assert_eq!(
            (year.column.as_deref(), year.ty),
            (Some("publishedYear"), AttributeType::Integer)
        );
        let borrowed = attr(&m, "book_loans.borrowed_on");
        assert_eq!(
            (borrowed.column.as_deref(), borrowed.ty),
            (Some("borrowedOn"), AttributeType::Date)
        );
        assert_eq!(attr(&m, "authors.dob").ty, AttributeType::Date, "{b:?}");
        assert_eq!(attr(&m, "books.price_amt").ty, AttributeType::Real);
        assert_eq!(attr(&m, "books.is_available").ty, AttributeType::Boolean);

        // Synonyms from splitting names and expanding abbreviations.
        assert!(has_synonym(&m, "authors.dob", "date of birth"), "{b:?}");
        assert!(has_synonym(&m, "books.price_amt", "price amount"), "{b:?}");
        assert!(has_synonym(&m, "book_loans.qty", "quantity"), "{b:?}");
        assert!(has_synonym(&m, "books.is_available", "available"), "{b:?}");
        assert!(has_synonym(&m, "book_loans.borrowed_on", "borrowed"), "{b:?}");
        for (word, entity) in [
            ("loans", "book_loans"),
            ("loan", "book_loans"),
            ("book loan", "book_loans"),
        ] {
            assert_eq!(
                m.find_entity(word).map(|e| e.name.as_str()),
                Some(entity),
                "{b:?}: {word}"
            );
        }
        assert_eq!(m.find_entity("Book").map(|e| e.name.as_str()), Some("books"));
        assert_eq!(m.find_entity("author").map(|e| e.name.as_str()), Some("authors"));

        // Keys, roles and personal data.
        assert_eq!(m.entity("books").unwrap().key, "isbn");
        assert_eq!(
            m.entity("books").unwrap().display_attribute.as_deref(),
            Some("title")
        );
        assert_eq!(
            m.entity("branches").unwrap().key,
            "code",
            "{b:?}: no primary key, first column"
        );
        assert!(attr(&m, "authors.full_name").pii && attr(&m, "authors.dob").pii);
        assert_eq!(attr(&m, "book_loans.book_isbn").role, AttributeRole::ForeignKey);

        // Low-cardinality text: database-sourced where the cache can read the names, a
        // static list of the current values where it cannot (camelCase names).
        let database = Some(AllowedValues::Database { known: vec![] });
        for q in ["authors.country", "books.genre", "books.title", "branches.city"] {
            assert_eq!(attr(&m, q).allowed, database, "{b:?} {q}");
        }
        let listed = |q: &str| -> Vec<String> {
            match &attr(&m, q).allowed {
                Some(AllowedValues::Static { values }) => values
                    .iter()
                    .map(|v| v.value.as_str().unwrap().to_owned())
                    .collect(),
                other => panic!("{b:?} {q}: {other:?}"),
            }
        };
        assert_eq!(listed("books.shelf_code"), ["A1", "B2"], "{b:?}");
        assert_eq!(listed("book_loans.loan_status"), ["out", "returned"], "{b:?}");
        assert_eq!(
            attr(&m, "authors.full_name").allowed,
            None,
            "{b:?}: personal data"
        );

        // What was left out is said, not silently dropped.
        let attachments = m.entity("attachments").unwrap();
        assert!(attachments.attribute("content").is_none(), "{b:?}");
        assert!(
            d.notes.iter().any(|n| n.contains("attachments.content")),
            "{b:?}: {:?}",
            d.notes
        );
        assert!(
            d.notes.iter().any(|n| n.contains("branches has no primary key")),
            "{b:?}"
        );

        assert_eq!(
            loans.default_time_dimension.as_deref(),
            Some("book_loans_borrowed_on")
        );
        assert_eq!(
            m.measure("books_count").map(|x| x.label.as_str()),
            Some("Number of books")
        );
        t.cleanup().await;
    }
}

#[tokio::test]
async fn introspected_database_columns_are_served_by_the_allowed_values_provider() {
    for t in EmptyDb::all().await {
        let b = t.db.backend();
        run_sql(&t.db, &library_ddl(b)).await;
        let d = introspect(&t.db, "library", &IntrospectOptions::default())
            .await
            .unwrap();
        let specs = ColumnSpec::from_model(&d.model);
        let cols: BTreeSet<String> = specs
            .iter()
            .map(|s| format!("{}.{}", s.table, s.column))
            .collect();
        assert_eq!(
            cols,
            BTreeSet::from(
                ["authors.country", "books.genre", "books.title", "branches.city"].map(String::from)
            ),
            "{b:?}"
        );
        let p = AllowedValuesProvider::new(t.db.clone(), specs, AllowedValuesConfig::default()).unwrap();
        let snap = p.snapshot_all().await;
        let genre = &snap["books.genre"];
        assert_eq!(
            (genre.source, &genre.values[..]),
            (
                ValueSource::Fresh,
                &["fiction".to_owned(), "poetry".to_owned()][..]
            )
        );
        t.cleanup().await;
    }
}

#[tokio::test]
async fn the_cli_writes_a_model_file_that_loads() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        run_sql(&t.db, DEMO_ROWS).await;
        let url = t.url.clone();
        if b == Backend::Sqlite {
            t.db.close().await; // the CLI opens the file read-only on its own
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("drafted.toml");
        let summary = cli_introspect(&url, Some(&path))
            .await
            .unwrap_or_else(|e| panic!("{b:?}: {e:#}"));
        assert!(
            summary.contains("5 entities") && summary.contains("6 joins"),
            "{b:?}: {summary}"
        );
        assert!(
            summary.ends_with(&format!("written to {}", path.display())),
            "{summary}"
        );
        let m = SemanticModel::from_path(&path, Some(&SchemaInfo::wound_care_demo())).unwrap();
        assert_eq!(m.entities.len(), 5, "{b:?}");

        // Without --out the model itself is returned for standard output.
        let text = cli_introspect(&url, None).await.unwrap();
        SemanticModel::from_toml_str(&text, "stdout.toml").unwrap_or_else(|e| panic!("{b:?}: {e}"));
        t.cleanup().await;
    }
}

#[tokio::test]
async fn the_cli_does_not_create_a_missing_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.db");
    let err = cli_introspect(&format!("sqlite://{}", missing.display()), None)
        .await
        .unwrap_err();
    assert!(format!("{err:#}").contains("cannot open"), "{err:#}");
    assert!(!missing.exists(), "introspection must never create a database");
}

/// `server introspect --indexes`: the shipped model's latest/first values need
/// `assessments (wound_id, assessed_on, id)`; the demo schema's migrations have an index
/// serving it (SQLite's ends in the row id), and without it the recommendation is the
/// statement to run. Counts of related rows need their reference indexed.
#[tokio::test]
async fn index_recommendations_follow_the_models_derived_attributes() {
    use server::semantic::introspect::indexes::{recommend, to_text};
    let model = SemanticModel::wound_care_shared();
    for t in common::all_backends().await {
        let needs = recommend(&t.db, model).await.unwrap();
        let latest = needs
            .iter()
            .find(|n| n.table == "assessments" && n.columns == ["wound_id", "assessed_on", "id"])
            .unwrap_or_else(|| panic!("no latest-assessment index among {needs:?}"));
        assert!(
            latest.for_attributes.iter().any(|a| a == "wounds.latest_area"),
            "{latest:?}"
        );
        assert!(
            latest
                .for_attributes
                .iter()
                .any(|a| a == "wounds.first_assessed_on"),
            "{latest:?}"
        );
        assert!(latest.served_by.is_some(), "{:?}: {latest:?}", t.db.backend());
        assert!(
            needs
                .iter()
                .any(|n| n.table == "wounds" && n.columns == ["patient_id"]),
            "{needs:?}"
        );
        let dropped = match t.db.backend() {
            Backend::Sqlite => "DROP INDEX assessments_wound",
            Backend::Postgres => "DROP INDEX assessments_wound_latest",
        };
        match &t.db {
            Database::Sqlite(p) => sqlx::query(dropped).execute(p).await.map(|_| ()),
            Database::Postgres(p) => sqlx::query(dropped).execute(p).await.map(|_| ()),
        }
        .unwrap();
        let needs = recommend(&t.db, model).await.unwrap();
        let text = to_text(&needs);
        assert!(
            text.contains(
                r#"CREATE INDEX "assessments_wound_id_assessed_on_id" ON "assessments" ("wound_id", "assessed_on", "id");"#
            ),
            "{text}"
        );
        assert!(text.contains("missing"), "{text}");
        t.cleanup().await;
    }
}
