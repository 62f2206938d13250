//! Stage 3 — time expressions into typed date ranges, relative to `today` (an input).
//!
//! Recognises: `last/past/previous N days|weeks|months|quarters|years` (rolling, ending
//! today), `the last/past week` (rolling one unit), bare `last week|month|quarter|year`
//! (the previous calendar period), `this week|month|quarter|year`, `year to date`,
//! `yesterday`, `today`, `since <date>`, `before|after|until <date>`,
//! `between <date> and <date>`, `from <date> to <date>`, `in <month> [<year>]`,
//! `Q3 [2025]`, `in 2025`, ISO dates — and grains for trends (`by month`, `weekly`).
//!
//! Every range is half-open `[start, end)`. A month or quarter without a year means its
//! most recent occurrence that has started. Pure: `today` is a parameter, never the clock.

use chrono::{Datelike, Days, Months, NaiveDate};

use crate::semantic::Grain;

use super::tokenize::{Token, TokenKind};

/// A time expression found in the tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeExpr {
    /// First token.
    pub first: usize,
    /// One past the last token.
    pub last: usize,
    /// First day included.
    pub start: NaiveDate,
    /// First day not included.
    pub end: NaiveDate,
    /// Readable form ("in the last 30 days").
    pub label: String,
    /// "all time", "ever": the expression removes any window.
    pub all_time: bool,
    /// "turning 70 this year": the range is of birth dates, whatever else is dated.
    pub birth: bool,
}

/// A grain for grouping over time ("by month").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrainExpr {
    /// First token.
    pub first: usize,
    /// One past the last token.
    pub last: usize,
    /// The grain.
    pub grain: Grain,
    /// The date's word inside it ("onset" in "by onset month"), read by the linker.
    pub date_word: Option<usize>,
}

/// The earliest date any open-ended range starts at.
pub fn beginning() -> NaiveDate {
    NaiveDate::from_ymd_opt(1900, 1, 1).unwrap_or_default()
}

/// Finds the time expressions, left to right, not overlapping.
pub fn find_times(tokens: &[Token], today: NaiveDate) -> Vec<TimeExpr> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if let Some(t) = parse_at(tokens, i, today) {
            i = t.last.max(i + 1);
            out.push(t);
        } else {
            i += 1;
        }
    }
    out
}

/// Finds grains ("by month", "monthly", "month by month").
pub fn find_grains(tokens: &[Token]) -> Vec<GrainExpr> {
    let mut out = Vec::new();
    let w = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    let mut i = 0;
    while i < tokens.len() {
        let adverb = match w(i) {
            "daily" => Some(Grain::Day),
            "weekly" => Some(Grain::Week),
            "monthly" => Some(Grain::Month),
            "quarterly" => Some(Grain::Quarter),
            "yearly" | "annually" | "annual" => Some(Grain::Year),
            _ => None,
        };
        if let Some(grain) = adverb {
            out.push(GrainExpr {
                first: i,
                last: i + 1,
                grain,
                date_word: None,
            });
            i += 1;
            continue;
        }
        if matches!(w(i), "by" | "per" | "each" | "every") {
            let j = if matches!(w(i + 1), "each" | "every" | "the") {
                i + 2
            } else {
                i + 1
            };
            if let Some(grain) = unit_grain(w(j)) {
                out.push(GrainExpr {
                    first: i,
                    last: j + 1,
                    grain,
                    date_word: None,
                });
                i = j + 1;
                continue;
            }
            // "by onset month", "per assessment week": the date's word before the unit
            // (which date is read from that word)
            if j == i + 1
                && matches!(
                    w(j),
                    "onset"
                        | "assessment"
                        | "assessed"
                        | "visit"
                        | "review"
                        | "healed"
                        | "healing"
                        | "heal"
                        | "birth"
                        | "diagnosis"
                        | "closure"
                        | "registration"
                        | "appointment"
                )
                && matches!(w(j + 1), "month" | "week" | "quarter" | "year")
                && let Some(grain) = unit_grain(w(j + 1))
            {
                out.push(GrainExpr {
                    first: i,
                    last: j + 2,
                    grain,
                    date_word: Some(j),
                });
                i = j + 2;
                continue;
            }
        }
        if let Some(grain) = unit_grain(w(i))
            && matches!(w(i + 1), "by" | "on" | "over" | "to")
            && unit_grain(w(i + 2)) == Some(grain)
        {
            out.push(GrainExpr {
                first: i,
                last: i + 3,
                grain,
                date_word: None,
            });
            i += 3;
            continue;
        }
        i += 1;
    }
    out
}

fn unit_grain(w: &str) -> Option<Grain> {
    Some(match w {
        "day" | "days" => Grain::Day,
        "week" | "weeks" => Grain::Week,
        "month" | "months" => Grain::Month,
        "quarter" | "quarters" => Grain::Quarter,
        "year" | "years" => Grain::Year,
        _ => return None,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

fn unit(w: &str) -> Option<Unit> {
    Some(match w {
        "day" | "days" => Unit::Day,
        "week" | "weeks" | "wk" | "wks" => Unit::Week,
        "month" | "months" | "mo" | "mos" | "mth" | "mths" => Unit::Month,
        "quarter" | "quarters" => Unit::Quarter,
        "year" | "years" | "yr" | "yrs" => Unit::Year,
        _ => return None,
    })
}

fn unit_name(u: Unit, n: u32) -> String {
    let base = match u {
        Unit::Day => "day",
        Unit::Week => "week",
        Unit::Month => "month",
        Unit::Quarter => "quarter",
        Unit::Year => "year",
    };
    if n == 1 {
        base.to_owned()
    } else {
        format!("{n} {base}s")
    }
}

fn sub_units(today: NaiveDate, u: Unit, n: u32) -> NaiveDate {
    let r = match u {
        Unit::Day => today.checked_sub_days(Days::new(u64::from(n))),
        Unit::Week => today.checked_sub_days(Days::new(u64::from(n) * 7)),
        Unit::Month => today.checked_sub_months(Months::new(n)),
        Unit::Quarter => today.checked_sub_months(Months::new(n.saturating_mul(3))),
        Unit::Year => today.checked_sub_months(Months::new(n.saturating_mul(12))),
    };
    r.unwrap_or_else(beginning)
}

fn next_day(d: NaiveDate) -> NaiveDate {
    d.succ_opt().unwrap_or(d)
}

fn ymd(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y, m, d)
}

/// The calendar period containing `d`.
fn period_of(d: NaiveDate, u: Unit) -> (NaiveDate, NaiveDate) {
    match u {
        Unit::Day => (d, next_day(d)),
        Unit::Week => {
            let start = d - chrono::Duration::days(i64::from(d.weekday().num_days_from_monday()));
            (start, start + chrono::Duration::days(7))
        }
        Unit::Month => month_range(d.year(), d.month()).unwrap_or((d, d)),
        Unit::Quarter => quarter_range(d.year(), (d.month() - 1) / 3 + 1).unwrap_or((d, d)),
        Unit::Year => year_range(d.year()).unwrap_or((d, d)),
    }
}

fn month_range(y: i32, m: u32) -> Option<(NaiveDate, NaiveDate)> {
    let start = ymd(y, m, 1)?;
    Some((start, start.checked_add_months(Months::new(1))?))
}

fn quarter_range(y: i32, q: u32) -> Option<(NaiveDate, NaiveDate)> {
    let start = ymd(y, (q - 1) * 3 + 1, 1)?;
    Some((start, start.checked_add_months(Months::new(3))?))
}

fn year_range(y: i32) -> Option<(NaiveDate, NaiveDate)> {
    Some((ymd(y, 1, 1)?, ymd(y + 1, 1, 1)?))
}

/// Month names, January first (also what a free-text answer may mention without naming anyone).
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn month_name(m: u32) -> &'static str {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    NAMES.get(m.wrapping_sub(1) as usize).copied().unwrap_or("")
}

fn month(w: &str) -> Option<u32> {
    if let Some(i) = MONTHS.iter().position(|m| *m == w) {
        return Some(i as u32 + 1);
    }
    let abbrev = match w {
        "jan" => 1,
        "feb" => 2,
        "mar" => 3,
        "apr" => 4,
        "jun" => 6,
        "jul" => 7,
        "aug" => 8,
        "sep" | "sept" => 9,
        "oct" => 10,
        "nov" => 11,
        "dec" => 12,
        // a long month name typed with one slip ("septmber", "ocotber", "novmber")
        _ if w.chars().count() >= 6 => {
            return MONTHS
                .iter()
                .position(|m| m.len() >= 6 && super::vocab::bounded_distance(w, m, 1).is_some())
                .map(|i| i as u32 + 1);
        }
        _ => return None,
    };
    Some(abbrev)
}

fn year_of(t: &Token) -> Option<i32> {
    if t.kind != TokenKind::Number || t.text.contains('.') {
        return None;
    }
    let v = t.num?;
    (1900.0..=2100.0).contains(&v).then_some(v as i32)
}

fn count_of(t: &Token) -> Option<u32> {
    if !matches!(t.kind, TokenKind::Number | TokenKind::NumberWord) {
        return None;
    }
    let v = t.num?;
    ((1.0..=10_000.0).contains(&v) && v.fract() == 0.0).then_some(v as u32)
}

/// A count at `k`, or one said as "a"/"an" before a unit ("more than a year ago").
fn count_or_one(tokens: &[Token], k: usize) -> Option<u32> {
    let t = tokens.get(k)?;
    if matches!(t.text.as_str(), "a" | "an") && tokens.get(k + 1).is_some_and(|u| unit(&u.text).is_some()) {
        return Some(1);
    }
    count_of(t)
}

/// A date phrase: its range, its label, and how many tokens it used.
struct DatePhrase {
    start: NaiveDate,
    end: NaiveDate,
    label: String,
    len: usize,
    /// A bare year or month name (needs a preposition to count as time).
    weak: bool,
    /// A month name alone (takes its year from a following date in a range).
    month_only: bool,
    /// No year was said ("3 feb", "march"): it was taken from today, and a range's first
    /// date takes it from the second instead.
    no_year: bool,
}

/// Parses a date phrase at `i`: ISO date, `Q3 [2025]`, `[day] month [day][,] [year]`, year.
fn date_at(tokens: &[Token], i: usize, today: NaiveDate) -> Option<DatePhrase> {
    let t = tokens.get(i)?;
    let w = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    if t.kind == TokenKind::Date {
        let parts: Vec<&str> = t.text.split(['-', '/', '.']).collect();
        let (y, m, d) = (
            parts[0].parse().ok()?,
            parts[1].parse().ok()?,
            parts[2].parse().ok()?,
        );
        let day = ymd(y, m, d)?;
        return Some(DatePhrase {
            start: day,
            end: next_day(day),
            label: day.format("%-d %B %Y").to_string(),
            len: 1,
            weak: false,
            month_only: false,
            no_year: false,
        });
    }
    // Q3 [2025]
    if let Some(q) = t
        .text
        .strip_prefix('q')
        .and_then(|q| q.parse::<u32>().ok())
        .filter(|q| (1..=4).contains(q))
    {
        let (year, len) = match tokens.get(i + 1).and_then(year_of) {
            Some(y) => (y, 2),
            None => {
                let this_q = (today.month() - 1) / 3 + 1;
                (
                    if q <= this_q {
                        today.year()
                    } else {
                        today.year() - 1
                    },
                    1,
                )
            }
        };
        let (start, end) = quarter_range(year, q)?;
        return Some(DatePhrase {
            start,
            end,
            label: format!("Q{q} {year}"),
            len,
            weak: false,
            month_only: false,
            no_year: false,
        });
    }
    // day month [year]
    if let Some(day) = count_of(t).filter(|d| *d <= 31)
        && t.kind == TokenKind::Number
        && let Some(m) = month(w(i + 1))
    {
        let (year, len) = match tokens.get(i + 2).and_then(year_of) {
            Some(y) => (y, 3),
            None => (most_recent_year(today, m, day), 2),
        };
        let d = ymd(year, m, day)?;
        return Some(DatePhrase {
            start: d,
            end: next_day(d),
            label: d.format("%-d %B %Y").to_string(),
            len,
            weak: false,
            month_only: false,
            no_year: len == 2,
        });
    }
    // month [day][,] [year]
    if let Some(m) = month(w(i)) {
        let mut k = i + 1;
        let mut day = None;
        if let Some(d) = tokens
            .get(k)
            .filter(|t| t.kind == TokenKind::Number)
            .and_then(count_of)
            && d <= 31
            && tokens.get(k).and_then(year_of).is_none()
        {
            day = Some(d);
            k += 1;
            if w(k) == "," {
                k += 1;
            }
        }
        let year = tokens.get(k).and_then(year_of);
        if year.is_some() {
            k += 1;
        }
        let no_year = year.is_none();
        let weak = year.is_none() && day.is_none();
        let year = year.unwrap_or_else(|| most_recent_year(today, m, day.unwrap_or(1)));
        return Some(match day {
            Some(d) => {
                let date = ymd(year, m, d)?;
                DatePhrase {
                    start: date,
                    end: next_day(date),
                    label: date.format("%-d %B %Y").to_string(),
                    len: k - i,
                    weak,
                    month_only: false,
                    no_year,
                }
            }
            None => {
                let (start, end) = month_range(year, m)?;
                DatePhrase {
                    start,
                    end,
                    label: format!("{} {year}", month_name(m)),
                    len: k - i,
                    weak,
                    month_only: weak,
                    no_year,
                }
            }
        });
    }
    // "the 1950s", "1980's", "the 60s": a decade (two digits: of the 1900s, from the 30s;
    // never after "their"/"her"/"his", an age: "in their 60s"; never after a record's word
    // or an id's, a record's id said as its owner: "wound 40's assessments")
    let s_at = if w(i + 1) == "'" { i + 2 } else { i + 1 };
    if w(s_at) == "s"
        && t.kind == TokenKind::Number
        && !matches!(
            w(i.wrapping_sub(1)),
            "their"
                | "his"
                | "her"
                | "aged"
                | "age"
                | "wound"
                | "ulcer"
                | "patient"
                | "pt"
                | "clinic"
                | "clinician"
                | "assessment"
                | "visit"
                | "id"
                | "#"
                | "no"
                | "number"
        )
    {
        let decade = match (year_of(t), count_of(t)) {
            (Some(y), _) if y % 10 == 0 => Some(y),
            (None, Some(d)) if (30..=90).contains(&d) && d % 10 == 0 && t.text.len() == 2 => {
                Some(1900 + d as i32)
            }
            _ => None,
        };
        if let Some(y) = decade {
            return Some(DatePhrase {
                start: ymd(y, 1, 1)?,
                end: ymd(y + 10, 1, 1)?,
                label: format!("the {y}s"),
                len: s_at + 1 - i,
                weak: false,
                month_only: false,
                no_year: false,
            });
        }
    }
    if let Some(y) = year_of(t) {
        let (start, end) = year_range(y)?;
        return Some(DatePhrase {
            start,
            end,
            label: y.to_string(),
            len: 1,
            weak: true,
            month_only: false,
            no_year: false,
        });
    }
    None
}

/// One past the words after "<N> <unit>" that count it back from today ("ago", "back",
/// "before today", "prior to today"), if they are there at `after`.
fn ago_end(tokens: &[Token], after: usize) -> Option<usize> {
    let w = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    match (w(after), w(after + 1)) {
        ("ago" | "back", _) => Some(after + 1),
        ("before" | "prior", "today" | "now") => Some(after + 2),
        ("prior", "to") if w(after + 2) == "today" => Some(after + 3),
        _ => None,
    }
}

/// A range's first date said without a year ("between 3 feb and 1 may 2026", "march to
/// may 2026") in the second date's year (the year before when it comes later in the
/// year: "1 dec to 15 jan 2026"); `None` when it needs no change.
fn first_in_year_of(d1: &DatePhrase, d2: &DatePhrase) -> Option<NaiveDate> {
    if !d1.no_year || d2.no_year {
        return None;
    }
    let (m, day) = (d1.start.month(), d1.start.day());
    let mut year = d2.start.year();
    if (m, day) > (d2.start.month(), d2.start.day()) {
        year -= 1;
    }
    (year != d1.start.year()).then(|| ymd(year, m, day)).flatten()
}

/// The label of a range's first date, with the year it took from the second.
fn date_label_at(start: NaiveDate, d: &DatePhrase) -> String {
    if d.month_only {
        format!("{} {}", month_name(start.month()), start.year())
    } else if d.no_year {
        start.format("%-d %B %Y").to_string()
    } else {
        d.label.clone()
    }
}

/// The year in which `month`/`day` last occurred on or before `today`.
fn most_recent_year(today: NaiveDate, month: u32, day: u32) -> i32 {
    if (month, day) <= (today.month(), today.day()) {
        today.year()
    } else {
        today.year() - 1
    }
}

fn parse_at(tokens: &[Token], i: usize, today: NaiveDate) -> Option<TimeExpr> {
    let w = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    let tomorrow = next_day(today);
    let expr = |last: usize, start: NaiveDate, end: NaiveDate, label: String| {
        Some(TimeExpr {
            first: i,
            last,
            start,
            end,
            label,
            all_time: false,
            birth: false,
        })
    };
    match w(i) {
        "yesterday" => {
            let y = today.pred_opt()?;
            return expr(i + 1, y, today, "yesterday".into());
        }
        "today" => return expr(i + 1, today, tomorrow, "today".into()),
        "ytd" => {
            return expr(
                i + 1,
                ymd(today.year(), 1, 1)?,
                tomorrow,
                "this year to date".into(),
            );
        }
        "all" if w(i + 1) == "time" => {
            return Some(TimeExpr {
                first: i,
                last: i + 2,
                start: beginning(),
                end: tomorrow,
                label: "all time".into(),
                all_time: true,
                birth: false,
            });
        }
        "year" if w(i + 1) == "to" && w(i + 2) == "date" => {
            return expr(
                i + 3,
                ymd(today.year(), 1, 1)?,
                tomorrow,
                "this year to date".into(),
            );
        }
        _ => {}
    }
    // more than|over|at least N unit(s) ago / before today / earlier: older than a cut-off
    {
        let (n_at, inclusive) = match (w(i), w(i + 1)) {
            ("more" | "longer", "than") => (i + 2, false),
            ("over" | ">", _) => (i + 1, false),
            ("at", "least") => (i + 2, true),
            (">=", _) => (i + 1, true),
            _ => (usize::MAX, false),
        };
        if let Some(n) = count_or_one(tokens, n_at)
            && let Some(u) = unit(w(n_at + 1))
        {
            let after = n_at + 2;
            let last = ago_end(tokens, after).or_else(|| match (w(after), w(after + 1)) {
                ("earlier", _) => Some(after + 1),
                // "more than 10 days since their last assessment": the date said after
                // "since" is the one more than that far back
                ("since", next) if date_at(tokens, after + 1, today).is_none() && next != "then" => {
                    Some(after + 1)
                }
                _ => None,
            });
            if let Some(last) = last {
                let cut = sub_units(today, u, n);
                let end = if inclusive { next_day(cut) } else { cut };
                let word = if inclusive { "at least" } else { "more than" };
                return expr(last, beginning(), end, format!("{word} {} ago", unit_name(u, n)));
            }
        }
    }
    // "less than a month ago", "under 2 weeks ago", "fewer than 10 days ago": since that
    // cut-off, up to today (as "in the last month" counts it)
    {
        let n_at = match (w(i), w(i + 1)) {
            ("less" | "fewer", "than") => i + 2,
            ("under" | "<", _) => i + 1,
            _ => usize::MAX,
        };
        if let Some(n) = count_or_one(tokens, n_at)
            && let Some(u) = unit(w(n_at + 1))
            && let Some(last) = ago_end(tokens, n_at + 2)
        {
            let start = sub_units(today, u, n);
            return expr(
                last,
                start,
                tomorrow,
                format!("less than {} ago", unit_name(u, n)),
            );
        }
    }
    // "in the 30 days before today", "during the 2 weeks prior to today": the span up to
    // today, like "in the last 30 days" ("30 days before today" without "the" is a day)
    {
        let mut k = i;
        if matches!(w(k), "in" | "over" | "during" | "within" | "for" | "throughout") {
            k += 1;
        }
        if w(k) == "the"
            && let Some(n) = tokens.get(k + 1).and_then(count_of)
            && let Some(u) = unit(w(k + 2))
            && matches!(w(k + 3), "before" | "prior" | "leading" | "up")
            && let Some(last) = ago_end(tokens, k + 3).or_else(|| {
                let at = if w(k + 3) == "leading" { k + 4 } else { k + 3 };
                (w(at) == "up" && w(at + 1) == "to" && matches!(w(at + 2), "today" | "now")).then_some(at + 3)
            })
        {
            let start = sub_units(today, u, n);
            return expr(last, start, tomorrow, format!("in the last {}", unit_name(u, n)));
        }
    }
    // "10 days ago", "3 weeks before today", "2 months back": the period that far back (a
    // day, or the calendar week / month / quarter / year, like "last month")
    {
        let k = if matches!(w(i), "on" | "in" | "during" | "exactly") {
            i + 1
        } else {
            i
        };
        let n = if matches!(w(k), "a" | "an" | "one") && unit(w(k + 1)).is_some() {
            Some(1)
        } else {
            tokens.get(k).and_then(count_of)
        };
        if let Some(n) = n
            && let Some(u) = unit(w(k + 1))
            && let Some(last) = ago_end(tokens, k + 2)
        {
            let (start, end) = period_of(sub_units(today, u, n), u);
            let ago = if n == 1 {
                format!("1 {}", unit_name(u, 1))
            } else {
                unit_name(u, n)
            };
            let label = match u {
                Unit::Day => format!("on {} ({ago} ago)", start.format("%-d %B %Y")),
                _ => format!("in the {} {ago} ago", unit_name(u, 1)),
            };
            return expr(last, start, end, label);
        }
    }
    // [in|over|during|within|for] [the] last|past|previous [N] unit
    let mut k = i;
    let lead = matches!(
        w(k),
        "in" | "over" | "during" | "within" | "for" | "from" | "throughout"
    );
    if lead {
        k += 1;
    }
    let the = w(k) == "the";
    if the {
        k += 1;
    }
    if matches!(w(k), "last" | "past" | "previous" | "prior" | "preceding") {
        let word = w(k);
        k += 1;
        if let Some(n) = tokens.get(k).and_then(count_of)
            && let Some(u) = unit(w(k + 1))
        {
            let start = sub_units(today, u, n);
            let label = format!("in the last {}", unit_name(u, n));
            return expr(k + 2, start, tomorrow, label);
        }
        if let Some(u) = unit(w(k)) {
            let rolling = the || word == "past";
            if rolling {
                let start = sub_units(today, u, 1);
                return expr(k + 1, start, tomorrow, format!("in the last {}", unit_name(u, 1)));
            }
            let (this_start, _) = period_of(today, u);
            let (start, end) = period_of(this_start.pred_opt()?, u);
            let label = format!("last {}", unit_name(u, 1));
            return expr(k + 1, start, end, label);
        }
        return None;
    }
    // [in] this|current week|month|quarter|year
    let mut k = if lead { i + 1 } else { i };
    if matches!(w(k), "this" | "current") {
        k += 1;
        if let Some(u) = unit(w(k)).filter(|u| *u != Unit::Day) {
            let (start, end) = period_of(today, u);
            let mut last = k + 1;
            if w(last) == "so" && w(last + 1) == "far" {
                last += 2;
            }
            return expr(last, start, end, format!("this {}", unit_name(u, 1)));
        }
        return None;
    }
    // "turning 70 this year", "who turn 80 in 2027": born in that year minus the age
    if matches!(w(i), "turning" | "turns" | "turn")
        && let Some(age) = tokens.get(i + 1).and_then(count_of).filter(|a| *a <= 120)
        && tokens.get(i + 1).and_then(year_of).is_none()
    {
        let k = i + 2;
        let (year, last) = match (w(k), w(k + 1)) {
            ("this", "year") => (today.year(), k + 2),
            ("next", "year") => (today.year() + 1, k + 2),
            ("in" | "during", _) if tokens.get(k + 1).and_then(year_of).is_some() => {
                (tokens.get(k + 1).and_then(year_of)?, k + 2)
            }
            _ => (today.year(), k),
        };
        let born = year - age as i32;
        let (start, end) = year_range(born)?;
        return Some(TimeExpr {
            first: i,
            last,
            start,
            end,
            label: format!("born in {born} (turning {age} in {year})"),
            all_time: false,
            birth: true,
        });
    }
    // "from 1980 onwards", "1980 or later", "1945 or earlier": open-ended from a date
    {
        let k = if matches!(w(i), "from" | "in") { i + 1 } else { i };
        if let Some(d) = date_at(tokens, k, today) {
            let c = k + d.len;
            let later = matches!(w(c), "onwards" | "onward")
                || matches!(w(c), "or" | "and")
                    && matches!(w(c + 1), "later" | "after" | "onwards" | "since" | "newer");
            let earlier =
                matches!(w(c), "or" | "and") && matches!(w(c + 1), "earlier" | "before" | "prior" | "older");
            let last = if matches!(w(c), "onwards" | "onward") {
                c + 1
            } else {
                c + 2
            };
            if later {
                return expr(last, d.start, tomorrow, format!("in {} or later", d.label));
            }
            if earlier {
                return expr(last, beginning(), d.end, format!("in {} or earlier", d.label));
            }
        }
    }
    // "on or after oct 20" (that day included), "on or before 1 March"
    if w(i) == "on" && w(i + 1) == "or" && matches!(w(i + 2), "after" | "before") {
        let d = date_at(tokens, i + 3, today)?;
        return if w(i + 2) == "after" {
            expr(
                i + 3 + d.len,
                d.start,
                tomorrow,
                format!("on or after {}", d.label),
            )
        } else {
            expr(
                i + 3 + d.len,
                beginning(),
                d.end,
                format!("on or before {}", d.label),
            )
        };
    }
    // since <date>
    if w(i) == "since" {
        let d = date_at(tokens, i + 1, today)?;
        return expr(i + 1 + d.len, d.start, tomorrow, format!("since {}", d.label));
    }
    if matches!(w(i), "before" | "until" | "till" | "prior") || (w(i) == "up" && w(i + 1) == "to") {
        let k = match w(i) {
            "up" => i + 2,
            "prior" if w(i + 1) == "to" => i + 2,
            "prior" => return None,
            _ => i + 1,
        };
        let d = date_at(tokens, k, today)?;
        let (end, word) = if w(i) == "before" || w(i) == "prior" {
            (d.start, "before")
        } else {
            (d.end, "until")
        };
        return expr(k + d.len, beginning(), end, format!("{word} {}", d.label));
    }
    if w(i) == "after" {
        let d = date_at(tokens, i + 1, today)?;
        return expr(i + 1 + d.len, d.end, tomorrow, format!("after {}", d.label));
    }
    // "between 1 and 15 October 2026", "from 3 to 9 march": a bare day before a date
    // takes that date's month and year
    if matches!(w(i), "between" | "from")
        && let Some(day) = tokens
            .get(i + 1)
            .filter(|t| t.kind == TokenKind::Number && !t.text.contains('.'))
            .and_then(|t| t.num)
            .filter(|d| (1.0..=31.0).contains(d))
        && matches!(w(i + 2), "and" | "to" | "until" | "till" | "through" | "-")
        && let Some(d2) = date_at(tokens, i + 3, today)
        && !d2.month_only
        && d2.end == next_day(d2.start)
        && (day as u32) < d2.start.day()
        && let Some(start) = ymd(d2.start.year(), d2.start.month(), day as u32)
    {
        return expr(
            i + 3 + d2.len,
            start,
            d2.end,
            format!("between {} and {}", start.format("%-d %B %Y"), d2.label),
        );
    }
    // between <date> and <date> / from <date> to <date>
    if matches!(w(i), "between" | "from") {
        let d1 = date_at(tokens, i + 1, today)?;
        let k = i + 1 + d1.len;
        if matches!(w(k), "and" | "to" | "until" | "till" | "through" | "-") {
            let d2 = date_at(tokens, k + 1, today)?;
            // "between March and June 2025": the first month takes the second's year
            let (start, label1) = match first_in_year_of(&d1, &d2) {
                Some(s) if d1.month_only => (s, format!("{} {}", month_name(s.month()), s.year())),
                Some(s) => (s, s.format("%-d %B %Y").to_string()),
                None => (d1.start, d1.label.clone()),
            };
            let end = d2.end.max(next_day(start));
            return expr(
                k + 1 + d2.len,
                start,
                end,
                format!("between {label1} and {}", d2.label),
            );
        }
        if w(i) == "from" && !d1.weak {
            return expr(k, d1.start, tomorrow, format!("since {}", d1.label));
        }
        if w(i) == "from" && d1.weak {
            return expr(k, d1.start, d1.end, format!("in {}", d1.label));
        }
        return None;
    }
    // [in|during|for|of|throughout] <date>
    let mut k = if matches!(w(i), "in" | "during" | "for" | "of" | "throughout") {
        i + 1
    } else {
        i
    };
    // "in the 1950s": the article before a decade
    if w(k) == "the" && date_at(tokens, k + 1, today).is_some_and(|d| d.label.starts_with("the ")) {
        k += 1;
    }
    // "jan-jun 2026": two months joined by a hyphen (the tokens keep the words only:
    // next to each other, one character apart), then the year
    if let (Some(m1), Some(m2)) = (month(w(k)), month(w(k + 1)))
        && m1 <= m2
        && tokens[k + 1].span.start <= tokens[k].span.end + 1
        && let Some(y) = tokens.get(k + 2).and_then(year_of)
        && let Some(start) = NaiveDate::from_ymd_opt(y, m1, 1)
        && let Some(end) = if m2 == 12 {
            NaiveDate::from_ymd_opt(y + 1, 1, 1)
        } else {
            NaiveDate::from_ymd_opt(y, m2 + 1, 1)
        }
    {
        return expr(
            k + 3,
            start,
            end,
            format!("from {} to {} {y}", month_name(m1), month_name(m2)),
        );
    }
    let d = date_at(tokens, k, today)?;
    // "january through june 2026", "march to may": a range without "between"/"from"
    let c = k + d.len;
    if matches!(w(c), "through" | "thru" | "to" | "until" | "till" | "-")
        && let Some(d2) = date_at(tokens, c + 1, today)
        && (d.month_only || !d.weak)
        && (d2.month_only || !d2.weak || d2.label.len() == 4)
    {
        let start = first_in_year_of(&d, &d2).unwrap_or(d.start);
        if d2.end > start {
            let label = format!("{} to {}", date_label_at(start, &d), d2.label);
            return expr(c + 1 + d2.len, start, d2.end, format!("from {label}"));
        }
    }
    // a bare year or month counts after "about" ("what about 2025") or as the whole
    // question ("2025?")
    let alone = i == 0 && tokens[k + d.len..].iter().all(|t| t.kind == TokenKind::Punct);
    // "2024 vs 2025", "sept 2026 vs oct 2026", "this year compared with 2024": the second
    // period of a comparison
    let prev = w(i.wrapping_sub(1));
    let compared = matches!(prev, "vs" | "versus" | "against")
        || matches!(prev, "to" | "with") && w(i.wrapping_sub(2)) == "compared"
        || matches!(prev, "and" | "or")
            && tokens
                .get(i.wrapping_sub(2))
                .is_some_and(|t| year_of(t).is_some() || month(&t.text).is_some());
    // "all 2026 assessments", "the 2025 visits": a year said before visits dates them (a
    // visit has one date; "2025 wounds" could be started or healed then, so it is not read)
    // (after a determiner only: "over 2000 assessments" is a count)
    let dates_records = tokens.get(k).and_then(year_of).is_some()
        && d.len == 1
        && matches!(
            w(k.wrapping_sub(1)),
            "all" | "the" | "our" | "my" | "those" | "these" | "their"
        )
        && matches!(
            w(k + 1),
            "assessment" | "assessments" | "visit" | "visits" | "measurements" | "reviews"
        );
    let about = i > 0 && w(i - 1) == "about";
    // "healed wounds by quarter of healed date, 2025", "assessments per month: 2026": a
    // year set off at the end of the question by a comma or colon is its period
    let set_off = tokens.get(k).and_then(year_of).is_some()
        && d.len == 1
        && k == i
        && matches!(w(i.wrapping_sub(1)), "," | ":" | ";" | "-" | "(")
        && tokens[k + 1..].iter().all(|t| t.kind == TokenKind::Punct);
    let counts_alone = alone || about || compared || dates_records || set_off;
    if d.weak && k == i && !counts_alone {
        return None;
    }
    // "may" as a verb: only a month with a preposition or a year
    if w(k) == "may" && k == i {
        return None;
    }
    let label = if d.end == next_day(d.start) {
        format!("on {}", d.label)
    } else {
        format!("in {}", d.label)
    };
    expr(k + d.len, d.start, d.end, label)
}

#[cfg(test)]
mod tests {
    use super::super::tokenize::tokenize;
    use super::*;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 11, 20).unwrap()
    }

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn one(q: &str) -> TimeExpr {
        let toks = tokenize(q);
        let found = find_times(&toks, today());
        assert_eq!(found.len(), 1, "{q}: {found:?}");
        found[0].clone()
    }

    #[test]
    fn every_supported_time_expression_becomes_a_half_open_range() {
        let table: &[(&str, &str, &str)] = &[
            ("wounds in the last 30 days", "2025-10-21", "2025-11-21"),
            ("past 2 weeks", "2025-11-06", "2025-11-21"),
            ("last ten days", "2025-11-10", "2025-11-21"),
            ("over the past 6 months", "2025-05-20", "2025-11-21"),
            ("previous 2 years", "2023-11-20", "2025-11-21"),
            ("in the last month", "2025-10-20", "2025-11-21"),
            ("the past year", "2024-11-20", "2025-11-21"),
            ("last week", "2025-11-10", "2025-11-17"),
            ("last month", "2025-10-01", "2025-11-01"),
            ("last quarter", "2025-07-01", "2025-10-01"),
            ("last year", "2024-01-01", "2025-01-01"),
            ("this week", "2025-11-17", "2025-11-24"),
            ("this month", "2025-11-01", "2025-12-01"),
            ("this quarter", "2025-10-01", "2026-01-01"),
            ("this year", "2025-01-01", "2026-01-01"),
            ("year to date", "2025-01-01", "2025-11-21"),
            ("yesterday", "2025-11-19", "2025-11-20"),
            ("today", "2025-11-20", "2025-11-21"),
            ("since March", "2025-03-01", "2025-11-21"),
            ("since 1 March 2024", "2024-03-01", "2025-11-21"),
            ("since 2025-02-15", "2025-02-15", "2025-11-21"),
            ("since 2023", "2023-01-01", "2025-11-21"),
            ("between March and June 2025", "2025-03-01", "2025-07-01"),
            ("between 1 and 15 October 2026", "2026-10-01", "2026-10-16"),
            ("from 3 to 9 march 2026", "2026-03-03", "2026-03-10"),
            ("between 2023 and 2024", "2023-01-01", "2025-01-01"),
            ("from January 2024 to March 2024", "2024-01-01", "2024-04-01"),
            ("in March 2025", "2025-03-01", "2025-04-01"),
            ("in December", "2024-12-01", "2025-01-01"),
            ("during May", "2025-05-01", "2025-06-01"),
            ("Q3 2025", "2025-07-01", "2025-10-01"),
            ("in Q4", "2025-10-01", "2026-01-01"),
            ("in 2025", "2025-01-01", "2026-01-01"),
            ("for 2024", "2024-01-01", "2025-01-01"),
            ("on 2025-06-03", "2025-06-03", "2025-06-04"),
            ("March 5, 2025", "2025-03-05", "2025-03-06"),
            ("before 2024", "1900-01-01", "2024-01-01"),
            ("after June 2025", "2025-07-01", "2025-11-21"),
        ];
        for (q, start, end) in table {
            let t = one(q);
            assert_eq!((t.start, t.end), (d(start), d(end)), "{q} ({})", t.label);
        }
    }

    #[test]
    fn labels_read_naturally() {
        assert_eq!(one("in the last 30 days").label, "in the last 30 days");
        assert_eq!(one("Q3 2025").label, "in Q3 2025");
        assert_eq!(one("in 2025").label, "in 2025");
        assert_eq!(one("since March").label, "since March 2025");
        assert_eq!(one("last month").label, "last month");
    }

    #[test]
    fn numbers_that_are_not_dates_are_left_alone() {
        for q in [
            "patients over 80",
            "area > 25 cm2",
            "top 10 wounds",
            "the last visit",
            "wounds that may heal",
        ] {
            assert!(find_times(&tokenize(q), today()).is_empty(), "{q}");
        }
    }

    #[test]
    fn all_time_is_recognised() {
        assert!(one("same for all time").all_time);
    }

    #[test]
    fn grains_are_found_in_their_usual_forms() {
        let table = [
            ("by month", Grain::Month),
            ("per week", Grain::Week),
            ("monthly", Grain::Month),
            ("each quarter", Grain::Quarter),
            ("month by month", Grain::Month),
            ("by year", Grain::Year),
            ("by onset month", Grain::Month),
            ("per assessment week", Grain::Week),
        ];
        for (q, g) in table {
            let found = find_grains(&tokenize(q));
            assert_eq!(found.len(), 1, "{q}");
            assert_eq!(found[0].grain, g, "{q}");
        }
        // the date's word inside is left for the linker; another word is not a date
        assert_eq!(find_grains(&tokenize("by onset month"))[0].date_word, Some(1));
        assert_eq!(find_grains(&tokenize("by month"))[0].date_word, None);
        assert!(find_grains(&tokenize("by etiology month")).is_empty());
    }
}
