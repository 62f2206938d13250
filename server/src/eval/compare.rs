//! Result comparison for execution accuracy: does the engine's result equal the gold
//! result?
//!
//! The rule (also in `server/eval/README.md`):
//! - Results are **multisets of rows**: row order is ignored (rankings included — the
//!   `LIMIT` cut still decides which rows are there).
//! - **Column names and column order are ignored.** Every gold column must be matched
//!   by a distinct column of the engine's result such that, projected onto those
//!   columns, the two multisets of rows are equal. The engine may show extra columns
//!   (a list shows the key, the display name and the sort attribute; the gold list
//!   query selects only the key).
//! - **Numbers** compare after rounding to 4 decimal places (integers and whole reals
//!   are the same number; booleans are 0/1, as SQLite stores them).
//! - **Dates**: text that is a date bucket is compared as its first day: `2026-03`,
//!   `2026-03-01`, `2026-03-01 00:00:00`, `2026-Q1` and `2026-W09` (ISO week → its
//!   Monday) all normalise to an ISO date.
//! - `NULL` equals only `NULL`.
//! - **Empty groups may be shown or left out**: in a grouped result (at least one text
//!   or date column and one numeric column), a row whose numbers are all 0 or `NULL`
//!   ("head: 0 open wounds") is dropped from both sides before comparing.
//!
//! Pure: no I/O.

use chrono::{NaiveDate, Weekday};
use std::collections::BTreeMap;
use std::fmt;

/// One value of a result row, as read from the database.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// SQL `NULL`.
    Null,
    /// An integer (or a boolean stored as 0/1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text (dates are ISO text on SQLite).
    Text(String),
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Null => f.write_str("NULL"),
            Cell::Int(i) => write!(f, "{i}"),
            Cell::Real(r) => write!(f, "{r}"),
            Cell::Text(t) => f.write_str(t),
        }
    }
}

/// A result set: rows of cells (every row as wide as the first).
pub type Rows = Vec<Vec<Cell>>;

/// The comparable form of a cell.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Key {
    Null,
    /// A number rounded to 4 decimals, as a fixed-point integer (×10⁴).
    Num(i128),
    /// A number too large for the fixed-point form (compared as text).
    BigNum(String),
    Date(NaiveDate),
    Text(String),
}

fn key(cell: &Cell) -> Key {
    match cell {
        Cell::Null => Key::Null,
        Cell::Int(i) => Key::Num(i128::from(*i) * 10_000),
        Cell::Real(r) => num_key(*r),
        Cell::Text(t) => {
            let t = t.trim();
            match bucket_date(t) {
                Some(d) => Key::Date(d),
                None => Key::Text(t.to_owned()),
            }
        }
    }
}

fn num_key(r: f64) -> Key {
    if !r.is_finite() {
        return Key::BigNum(format!("{r}"));
    }
    let scaled = (r * 10_000.0).round();
    if scaled.abs() < 1e30 {
        Key::Num(scaled as i128)
    } else {
        Key::BigNum(format!("{r:.4e}"))
    }
}

/// The first day of the period a date-like text names, if it names one.
pub fn bucket_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r.clone()).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() < 7 || !digits(0..4) || b[4] != b'-' {
        return None;
    }
    let year: i32 = text[0..4].parse().ok()?;
    match b[5] {
        b'Q' | b'q' if b.len() == 7 && digits(6..7) => {
            let q: u32 = text[6..7].parse().ok()?;
            (1..=4)
                .contains(&q)
                .then(|| NaiveDate::from_ymd_opt(year, (q - 1) * 3 + 1, 1))
                .flatten()
        }
        b'W' | b'w' if b.len() == 8 && digits(6..8) => {
            let w: u32 = text[6..8].parse().ok()?;
            NaiveDate::from_isoywd_opt(year, w, Weekday::Mon)
        }
        _ if digits(5..7) => {
            let month: u32 = text[5..7].parse().ok()?;
            if b.len() == 7 {
                return NaiveDate::from_ymd_opt(year, month, 1);
            }
            if b.len() < 10 || b[7] != b'-' || !digits(8..10) {
                return None;
            }
            let day: u32 = text[8..10].parse().ok()?;
            let date = NaiveDate::from_ymd_opt(year, month, day)?;
            let rest = &text[10..];
            let midnight = rest.is_empty()
                || matches!(
                    rest.trim_start_matches([' ', 'T']),
                    "00:00:00" | "00:00" | "00:00:00Z" | "00:00:00+00"
                )
                || rest.trim_start_matches([' ', 'T']).starts_with("00:00:00.000");
            midnight.then_some(date)
        }
        _ => None,
    }
}

/// A row of a grouped result that only says "nothing here": a label and zeros.
fn is_empty_group(row: &[Key]) -> bool {
    let labelled = row.iter().any(|k| matches!(k, Key::Text(_) | Key::Date(_)));
    let numbers: Vec<&Key> = row
        .iter()
        .filter(|k| matches!(k, Key::Num(_) | Key::BigNum(_) | Key::Null))
        .collect();
    labelled && !numbers.is_empty() && numbers.iter().all(|k| matches!(k, Key::Num(0) | Key::Null))
}

/// Why two results differ (for the report), or `None` when they are equal.
pub fn difference(gold: &Rows, got: &Rows) -> Option<String> {
    let keys = |rows: &Rows| -> Vec<Vec<Key>> {
        rows.iter()
            .map(|r| r.iter().map(key).collect::<Vec<_>>())
            .filter(|r| !is_empty_group(r))
            .collect()
    };
    let (gold_keys, got_keys) = (keys(gold), keys(got));
    difference_of_keys(gold_keys, got_keys, gold)
}

fn difference_of_keys(gold_keys: Vec<Vec<Key>>, got_keys: Vec<Vec<Key>>, gold: &Rows) -> Option<String> {
    let (gold_rows, got_rows) = (gold_keys.len(), got_keys.len());
    if gold_rows != got_rows {
        return Some(format!("{gold_rows} rows expected, {got_rows} returned"));
    }
    if gold_keys.is_empty() {
        return None;
    }
    let gold_width = gold_keys[0].len();
    let got_width = got_keys[0].len();
    if gold_width > got_width {
        return Some(format!("{gold_width} columns expected, {got_width} returned"));
    }
    // Candidate engine columns for each gold column: same multiset of values.
    let candidates: Vec<Vec<usize>> = (0..gold_width)
        .map(|g| {
            let want = column_bag(&gold_keys, g);
            (0..got_width)
                .filter(|&c| column_bag(&got_keys, c) == want)
                .collect()
        })
        .collect();
    if let Some(g) = candidates.iter().position(Vec::is_empty) {
        let sample: Vec<String> = gold.iter().take(3).map(|r| r[g].to_string()).collect();
        return Some(format!(
            "no returned column holds the expected values of column {} ({}…)",
            g + 1,
            sample.join(", ")
        ));
    }
    let mut wanted: Vec<Vec<Key>> = gold_keys;
    wanted.sort();
    let mut chosen = Vec::with_capacity(gold_width);
    if assign(&candidates, &mut chosen, &got_keys, &wanted) {
        None
    } else {
        Some("every expected column is there, but the rows pair the values differently".to_owned())
    }
}

fn column_bag(rows: &[Vec<Key>], c: usize) -> BTreeMap<&Key, usize> {
    let mut bag: BTreeMap<&Key, usize> = BTreeMap::new();
    for r in rows {
        *bag.entry(&r[c]).or_default() += 1;
    }
    bag
}

/// Backtracking over injective column assignments (results are a few columns wide).
fn assign(candidates: &[Vec<usize>], chosen: &mut Vec<usize>, got: &[Vec<Key>], wanted: &[Vec<Key>]) -> bool {
    if chosen.len() == candidates.len() {
        let mut projected: Vec<Vec<Key>> = got
            .iter()
            .map(|r| chosen.iter().map(|&c| r[c].clone()).collect())
            .collect();
        projected.sort();
        return projected == wanted;
    }
    for &c in &candidates[chosen.len()] {
        if chosen.contains(&c) {
            continue;
        }
        chosen.push(c);
        if assign(candidates, chosen, got, wanted) {
            return true;
        }
        chosen.pop();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Cell {
        Cell::Text(s.to_owned())
    }

    #[test]
    fn row_order_and_column_order_do_not_matter() {
        let gold = vec![vec![t("a"), Cell::Int(1)], vec![t("b"), Cell::Int(2)]];
        let got = vec![vec![Cell::Int(2), t("b")], vec![Cell::Int(1), t("a")]];
        assert_eq!(difference(&gold, &got), None);
    }

    #[test]
    fn extra_engine_columns_are_allowed_but_missing_ones_are_not() {
        let gold = vec![vec![Cell::Int(7)], vec![Cell::Int(9)]];
        let got = vec![
            vec![Cell::Int(9), t("Mary Smith"), Cell::Real(3.5)],
            vec![Cell::Int(7), t("Ann Lee"), Cell::Null],
        ];
        assert_eq!(difference(&gold, &got), None);
        assert!(difference(&got, &gold).is_some());
    }

    #[test]
    fn numbers_are_equal_to_four_decimal_places_and_integers_equal_whole_reals() {
        assert_eq!(
            difference(
                &vec![vec![Cell::Real(46.625766871)]],
                &vec![vec![Cell::Real(46.62576687)]]
            ),
            None
        );
        assert_eq!(
            difference(&vec![vec![Cell::Int(59)]], &vec![vec![Cell::Real(59.0)]]),
            None
        );
        assert!(difference(&vec![vec![Cell::Real(46.6257)]], &vec![vec![Cell::Real(46.6259)]]).is_some());
        assert!(difference(&vec![vec![Cell::Int(831)]], &vec![vec![Cell::Int(832)]]).is_some());
    }

    #[test]
    fn a_share_as_a_fraction_is_not_the_same_as_a_percentage() {
        assert!(difference(&vec![vec![Cell::Real(46.62)]], &vec![vec![Cell::Real(0.4662)]]).is_some());
    }

    #[test]
    fn date_buckets_in_any_common_spelling_compare_as_their_first_day() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd);
        let cases = [
            ("2026-03", d(2026, 3, 1)),
            ("2026-03-01", d(2026, 3, 1)),
            ("2026-03-01 00:00:00", d(2026, 3, 1)),
            ("2026-03-01T00:00:00", d(2026, 3, 1)),
            ("2026-Q2", d(2026, 4, 1)),
            ("2026-W01", d(2025, 12, 29)),
            ("2026-03-01 12:30:00", None),
            ("Riverside", None),
            ("2026-13", None),
        ];
        for (text, want) in cases {
            assert_eq!(bucket_date(text), want, "{text}");
        }
        assert_eq!(
            difference(
                &vec![vec![t("2026-03-01"), Cell::Int(4)]],
                &vec![vec![t("2026-03"), Cell::Int(4)]]
            ),
            None
        );
    }

    #[test]
    fn the_values_must_pair_up_row_by_row_not_only_column_by_column() {
        let gold = vec![vec![t("a"), Cell::Int(1)], vec![t("b"), Cell::Int(2)]];
        let got = vec![vec![t("a"), Cell::Int(2)], vec![t("b"), Cell::Int(1)]];
        assert!(difference(&gold, &got).unwrap().contains("pair"));
    }

    #[test]
    fn a_group_with_nothing_in_it_may_be_shown_or_left_out() {
        let gold = vec![vec![t("heel"), Cell::Int(116)], vec![t("toe"), Cell::Int(105)]];
        let mut got = gold.clone();
        got.push(vec![t("head"), Cell::Int(0)]);
        assert_eq!(difference(&gold, &got), None);
        got.push(vec![t("hip"), Cell::Int(3)]);
        assert!(
            difference(&gold, &got).is_some(),
            "a group with rows still counts"
        );
        assert!(
            difference(&vec![vec![Cell::Int(0)]], &vec![vec![Cell::Int(1)]]).is_some(),
            "a bare zero is a value"
        );
    }

    #[test]
    fn duplicate_rows_count() {
        let gold = vec![vec![Cell::Int(1)], vec![Cell::Int(1)]];
        assert!(difference(&gold, &vec![vec![Cell::Int(1)]]).is_some());
        assert_eq!(difference(&gold, &gold.clone()), None);
    }

    #[test]
    fn null_equals_only_null_and_empty_results_are_equal() {
        assert_eq!(difference(&vec![vec![Cell::Null]], &vec![vec![Cell::Null]]), None);
        assert!(difference(&vec![vec![Cell::Null]], &vec![vec![Cell::Int(0)]]).is_some());
        assert_eq!(difference(&Vec::new(), &Vec::new()), None);
    }
}
