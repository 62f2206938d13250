//! Summaries Clarion maintains beside the clinical data (pre-aggregation): each wound's
//! latest and first assessment, copied into tables of their own
//! (`wound_latest_assessment`, `wound_first_assessment`, created by the migrations of
//! the demo schema; Clarion never creates them in a database it only reads).
//!
//! A wound's latest value ("average latest pain score by etiology") is otherwise a
//! sub-select per wound that walks `assessments` backwards by date. At ten times the demo
//! data that costs more than the answer budget on SQLite however it is written; reading
//! the copied row by the wound's key is one primary-key probe.
//!
//! The renderer reads a summary only when told it is current ([`SummaryUse`]; the
//! warehouse checks the data version on each request), and only for the shape it holds
//! exactly: the latest (or first) row of `assessments` per `wounds` row, ordered by
//! `assessed_on` then `id`, of a column the summary copies, with no date limit. Anything
//! else is rendered live. A summary row is the row the live sub-select picks, so the
//! results are identical (`server/tests/summary.rs` checks both backends).
//!
//! Refresh statements are fixed text over these fixed identifiers, with bound ids.

/// Whether the renderer may read the summaries (the warehouse found them current).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SummaryUse {
    /// `wound_latest_assessment` / `wound_first_assessment` hold every wound's ends.
    pub assessment_ends: bool,
}

impl SummaryUse {
    /// Read nothing but the live tables.
    pub const LIVE: SummaryUse = SummaryUse {
        assessment_ends: false,
    };
    /// Read the summaries where they apply.
    pub const CURRENT: SummaryUse = SummaryUse {
        assessment_ends: true,
    };
}

/// The parent table whose rows the summary has one row for.
pub const PARENT_TABLE: &str = "wounds";
/// The parent's key column.
pub const PARENT_KEY: &str = "id";
/// The child table summarised.
pub const CHILD_TABLE: &str = "assessments";
/// The child's key column (the tie-break of the order).
pub const CHILD_KEY: &str = "id";
/// The child's reference to its parent.
pub const FOREIGN_KEY: &str = "wound_id";
/// The date ordering the children.
pub const DATE_COLUMN: &str = "assessed_on";
/// The table of each wound's latest assessment.
pub const LATEST_TABLE: &str = "wound_latest_assessment";
/// The table of each wound's first assessment.
pub const FIRST_TABLE: &str = "wound_first_assessment";
/// The child's columns each summary row copies (besides `wound_id` and `assessment_id`).
pub const COLUMNS: [&str; 9] = [
    "assessed_on",
    "length_cm",
    "width_cm",
    "depth_cm",
    "area_cm2",
    "pain_score",
    "exudate",
    "tissue_type",
    "infection_signs",
];

/// The summary table for the latest (`newest`) or first row.
pub fn table(newest: bool) -> &'static str {
    if newest { LATEST_TABLE } else { FIRST_TABLE }
}

/// The data version of the summarised table: `(row count, largest key)`. The count scans
/// the table, so the warehouse runs it only now and then; the largest key is one probe.
pub fn child_count_sql() -> String {
    format!("SELECT COUNT(*), COALESCE(MAX({CHILD_KEY}), 0) FROM {CHILD_TABLE}")
}

/// The largest key of the summarised table (one index probe).
pub fn child_max_key_sql() -> String {
    format!("SELECT COALESCE(MAX({CHILD_KEY}), 0) FROM {CHILD_TABLE}")
}

/// How many rows of the summarised table have a key above `$1`.
pub fn added_since_sql() -> String {
    format!("SELECT COUNT(*) FROM {CHILD_TABLE} WHERE {CHILD_KEY} > $1")
}

/// The version the summary was built at: `(row count, largest key)`, no row when never built.
pub fn state_sql() -> &'static str {
    "SELECT row_count, max_id FROM summary_state WHERE name = $1"
}

/// Records the version the summary was built at.
pub fn save_state_sql() -> &'static str {
    "INSERT INTO summary_state (name, row_count, max_id, refreshed_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (name) DO UPDATE SET row_count = excluded.row_count, max_id = excluded.max_id, \
     refreshed_at = excluded.refreshed_at"
}

/// The name the summary's version is kept under in `summary_state`.
pub const STATE_NAME: &str = "wound_assessment_ends";

/// Empties one summary table (a full rebuild follows).
pub fn clear_sql(newest: bool) -> String {
    format!("DELETE FROM {}", table(newest))
}

/// Writes the latest (`newest`) or first row of every wound, or with `only_new` of every
/// wound that has a child with a key in `($1, $2]` (an incremental refresh after rows
/// were added), replacing what the summary held for those wounds. `$1`, `$2` are bound.
pub fn upsert_sql(newest: bool, only_new: bool) -> String {
    let dir = if newest { "DESC" } else { "ASC" };
    let cols = COLUMNS.join(", ");
    let picked: String = COLUMNS
        .iter()
        .map(|c| format!("a.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let updates: String = std::iter::once("assessment_id".to_owned())
        .chain(COLUMNS.iter().map(|c| c.to_string()))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let which = if only_new {
        format!(
            "w.{PARENT_KEY} IN (SELECT n.{FOREIGN_KEY} FROM {CHILD_TABLE} n WHERE n.{CHILD_KEY} > $1 AND n.{CHILD_KEY} <= $2)"
        )
    } else {
        // SQLite needs a WHERE before ON CONFLICT in INSERT … SELECT (parsing ambiguity)
        "TRUE".to_owned()
    };
    format!(
        "INSERT INTO {table} (wound_id, assessment_id, {cols}) \
         SELECT a.{FOREIGN_KEY}, a.{CHILD_KEY}, {picked} FROM ( \
           SELECT (SELECT b.{CHILD_KEY} FROM {CHILD_TABLE} b WHERE b.{FOREIGN_KEY} = w.{PARENT_KEY} \
                   ORDER BY b.{DATE_COLUMN} {dir} NULLS LAST, b.{CHILD_KEY} {dir} LIMIT 1) AS pick \
           FROM {PARENT_TABLE} w WHERE {which}) p \
         JOIN {CHILD_TABLE} a ON a.{CHILD_KEY} = p.pick WHERE TRUE \
         ON CONFLICT (wound_id) DO UPDATE SET {updates}",
        table = table(newest)
    )
}

/// Tables the summaries live in (the warehouse may read them).
pub const TABLES: [&str; 2] = [LATEST_TABLE, FIRST_TABLE];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_statements_name_only_the_fixed_tables_and_bind_the_ids() {
        let full = upsert_sql(true, false);
        assert!(
            full.starts_with("INSERT INTO wound_latest_assessment (wound_id, assessment_id, assessed_on")
        );
        assert!(
            full.contains("ORDER BY b.assessed_on DESC NULLS LAST, b.id DESC LIMIT 1"),
            "{full}"
        );
        assert!(!full.contains("$1"), "{full}");
        let new = upsert_sql(false, true);
        assert!(new.starts_with("INSERT INTO wound_first_assessment"));
        assert!(
            new.contains("ORDER BY b.assessed_on ASC NULLS LAST, b.id ASC LIMIT 1"),
            "{new}"
        );
        assert!(new.contains("n.id > $1 AND n.id <= $2"), "{new}");
        assert!(
            new.ends_with("infection_signs = excluded.infection_signs"),
            "{new}"
        );
    }
}
