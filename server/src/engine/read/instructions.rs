//! Instructions inside a question: how to lay the answer out rather than which rows it
//! is about — "one row per month", "listed from most to fewest", "ties broken by name",
//! "round to 1 decimal", "include healed and amputated ones". What the plan can do is
//! done (an ordering, a grouping, dropping a filter the question only meant to include);
//! what it cannot is said as a note, so no word is dropped silently.

use crate::semantic::{Constraint, SortOrder};

use crate::engine::reading::{ColSpec, Ctx};
use crate::engine::tokenize::TokenKind;

use super::state::{State, qualified, sortable, sortable_as_text};

/// Reads the layout instructions.
pub(super) fn instructions(ctx: &Ctx<'_>, st: &mut State) {
    // the instruction's words are not qualifiers ("most recent first" is no time term)
    if let Some((a, b, _)) = ctx.cues.sort_instruction {
        let inside = |mi: usize| ctx.mentions[mi].first >= a && ctx.mentions[mi].last <= b;
        st.r.terms.retain(|t| !inside(t.mention));
        for mi in 0..ctx.mentions.len() {
            if inside(mi) {
                st.used[mi] = true;
            }
        }
    }
    // "sorted by onset date", "ordered by age, oldest first": every row, in that order
    let sort_key = st
        .rank_key_mention
        .filter(|_| ctx.cues.rank.is_none() && !ctx.cues.sort_at.is_empty())
        .and_then(|mi| {
            let m = &ctx.mentions[mi];
            m.attributes()
                .find(|&(e, a)| sortable(ctx.model, e, a))
                .or_else(|| {
                    // a text column of the listed records ("sorted by etiology"); a name is
                    // the records' label, read by `by_label`
                    let named = (m.first..m.last).any(|k| matches!(ctx.w(k), "name" | "names"));
                    let listed = st.r.entity.as_deref();
                    m.attributes().find(|&(e, a)| {
                        !named
                            && sortable_as_text(ctx.model, e, a)
                            && listed == Some(ctx.model.entities[e].name.as_str())
                    })
                })
                .map(|(e, a)| qualified(ctx.model, e, a))
        });
    // "sorted by age, then by mrn descending": a direction said after "then by" is that
    // key's own, not the first one's
    let instruction = ctx
        .cues
        .sort_instruction
        .filter(|&(a, _, _)| ctx.cues.then_by_at.first().is_none_or(|&t| a < t));
    match (sort_key, instruction) {
        (Some(attr), instruction) => {
            let dated = ctx
                .model
                .attribute_type(&attr)
                .is_some_and(|t| t == crate::semantic::AttributeType::Date);
            let order = match instruction {
                // "by age, oldest first": the oldest have the highest age
                Some((_, _, o)) if ctx.cues.sort_temporal && !dated => match o {
                    SortOrder::Asc => SortOrder::Desc,
                    SortOrder::Desc => SortOrder::Asc,
                },
                Some((_, _, o)) => o,
                None => SortOrder::Asc,
            };
            st.r.sort_by = Some((Some(attr), order));
        }
        (None, Some((_, _, order))) if ctx.cues.sort_temporal => st.r.sort_by = Some((None, order)),
        // "count of wounds healed each year, sorted by year descending": the periods'
        // order (the date the periods are of), not the figure's
        (None, Some((_, _, order)))
            if ctx.cues.sort_at.iter().any(|&k| {
                let k = if ctx.w(k) == "the" { k + 1 } else { k };
                matches!(
                    ctx.w(k),
                    "year"
                        | "years"
                        | "month"
                        | "months"
                        | "quarter"
                        | "quarters"
                        | "week"
                        | "weeks"
                        | "day"
                        | "days"
                        | "period"
                        | "date"
                ) && !ctx.grains.is_empty()
            }) =>
        {
            st.r.sort_by = Some((None, order))
        }
        (None, Some((a, b, order))) => {
            st.r.sort = Some(order);
            // a list "…, highest bmi first" (the attribute inside the instruction) or
            // "bmi of 38 or more, sorted highest first" (the one measured attribute the
            // question compared): its rows in that attribute's order
            let named = ctx
                .mentions
                .iter()
                .filter(|m| m.first >= a && m.last <= b)
                .find_map(|m| m.attributes().find(|&(e, at)| sortable(ctx.model, e, at)))
                .map(|(e, at)| qualified(ctx.model, e, at));
            // "patients with 4 or more wounds, most wounds first": the listed records'
            // count of the records named in the instruction
            let counted = || {
                let listed = ctx.model.entity(st.r.entity.as_deref()?)?;
                ctx.mentions
                    .iter()
                    .filter(|m| m.first >= a && m.last <= b)
                    .find_map(|m| super::state::mention_entity(ctx.model, m))
                    .and_then(|named| {
                        listed.attributes.iter().find(|at| {
                            matches!(&at.derived, Some(crate::semantic::Derived::CountRelated { entity }) if *entity == named)
                        })
                    })
                    .map(|at| format!("{}.{}", listed.name, at.name))
            };
            let named = named.or_else(counted);
            let compared = || {
                let mut attrs = ctx.comparisons.iter().filter_map(|c| match &c.subject {
                    crate::engine::link::Subject::Attribute(at) => Some(at.clone()),
                    _ => None,
                });
                let first = attrs.next()?;
                attrs.all(|o| o == first).then_some(first)
            };
            // "days open for each open arterial ulcer, longest first": the one ordered
            // column the list shows
            let shown = || {
                let mut cols = st.r.columns.iter().filter_map(|c| match c {
                    ColSpec::Attribute(at) => ctx
                        .model
                        .attribute_type(at)
                        .is_some_and(|t| t.is_ordered())
                        .then(|| at.clone()),
                    ColSpec::ColumnTerm { .. } => None,
                });
                let first = cols.next()?;
                cols.next().is_none().then_some(first)
            };
            if let Some(attr) = named.or_else(compared).or_else(shown)
                && ctx.cues.agg.is_none()
                && ctx.cues.count.is_none()
            {
                st.r.sort_by = Some((Some(attr), order));
            }
        }
        (None, None) => {}
    }
    by_label(ctx, st);
    row_limit(ctx, st);
    let n = ctx.tokens.len();
    for k in 0..n {
        let w = |i: usize| ctx.w(i);
        // "one row per month", "a line for each clinic", "separate rows by year"
        if matches!(w(k), "one" | "a" | "single" | "separate" | "1")
            && matches!(
                w(k + 1),
                "row" | "rows" | "line" | "lines" | "entry" | "result" | "results"
            )
            && matches!(w(k + 2), "per" | "for" | "by" | "each" | "every")
        {
            st.r.consumed.push((k, k + 2));
        }
        // "to 2 decimal places", "to 1 dp", "(1 d.p.)": a rounding said without "round"
        if matches!(w(k), "to" | "at" | "with" | "(")
            && st.r.round.is_none()
            && let Some(places) = ctx.tokens.get(k + 1).and_then(|t| t.num).and_then(decimal_places)
            && (matches!(w(k + 2), "dp" | "decimals")
                || matches!(w(k + 2), "decimal" | "significant")
                    && matches!(w(k + 3), "place" | "places" | "digits"))
        {
            let last = if matches!(w(k + 2), "dp" | "decimals") {
                k + 3
            } else {
                k + 4
            };
            st.r.consumed.push((k, last));
            st.r.round = Some(places);
        }
        // "in chronological order", "chronologically": the time order, which is how a
        // trend is shown; a list is ordered by its date. "in reverse chronological order",
        // "reverse-chronologically": newest first
        if matches!(w(k), "chronological" | "chronologically") {
            let reverse = matches!(w(k.wrapping_sub(1)), "reverse" | "reversed" | "inverse");
            let mut first = if reverse { k - 1 } else { k };
            if w(first.wrapping_sub(1)) == "in" {
                first -= 1;
            }
            let last = if w(k + 1) == "order" { k + 2 } else { k + 1 };
            let order = if reverse { SortOrder::Desc } else { SortOrder::Asc };
            date_order(ctx, st, (first, last), order);
        }
        // "in date order", "by date order": the records' own date, earliest first
        if w(k) == "date" && w(k + 1) == "order" && matches!(w(k.wrapping_sub(1)), "in" | "by") {
            date_order(ctx, st, (k - 1, k + 2), SortOrder::Asc);
        }
        // "round to 1 decimal", "rounded to 2 decimal places", "to 1 dp"
        if matches!(w(k), "round" | "rounded" | "rounding") {
            let mut last = k + 1;
            while last < n
                && last < k + 6
                && matches!(
                    w(last),
                    "to" | "the"
                        | "nearest"
                        | "decimal"
                        | "decimals"
                        | "places"
                        | "place"
                        | "dp"
                        | "digits"
                        | "whole"
                        | "number"
                        | "numbers"
                        | "integer"
                        | "integers"
                        | "percent"
                )
                || ctx.tokens.get(last).is_some_and(|t| t.num.is_some()) && last < k + 4
            {
                last += 1;
            }
            st.r.consumed.push((k, last));
            let places = (k + 1..last).find_map(|i| ctx.tokens[i].num).or_else(|| {
                (k + 1..last)
                    .any(|i| matches!(w(i), "whole" | "integer" | "integers"))
                    .then_some(0.0)
            });
            match places.and_then(decimal_places) {
                Some(p) => st.r.round = Some(p),
                None => {
                    let span = ctx.span_of(k, last);
                    st.r.notes.push((
                        span,
                        format!(
                            "\"{}\": numbers are shown as computed, not rounded",
                            ctx.text(span)
                        ),
                    ));
                }
            }
        }
        // "show all if tied", "ties included", "if there's a tie for 5th place show all of
        // them": rows tied with the last one kept are kept too
        if let Some((first, last)) = ties_included(ctx, k) {
            st.r.limit_ties = true;
            st.r.consumed.push((first, last));
            continue;
        }
        // "ties broken by name", "break ties alphabetically"
        if matches!(w(k), "ties" | "tie" | "tiebreak" | "tie-break")
            || w(k) == "break" && matches!(w(k + 1), "ties" | "tie")
        {
            let mut last = k + 1;
            while last < n
                && last < k + 5
                && matches!(
                    w(last),
                    "ties"
                        | "tie"
                        | "broken"
                        | "break"
                        | "by"
                        | "on"
                        | "name"
                        | "names"
                        | "alphabetically"
                        | "alphabetical"
                        | "label"
                        | "id"
                        | "order"
                )
            {
                last += 1;
            }
            let span = ctx.span_of(k, last);
            st.r.consumed.push((k, last));
            st.r.notes.push((
                span,
                format!(
                    "\"{}\": rows with equal values are ordered by their name or id, A–Z",
                    ctx.text(span)
                ),
            ));
        }
        // "computed as healed date minus onset date", "calculated as smokers divided by all
        // patients": how the figure is worked out, said in the question's own words
        if matches!(w(k), "computed" | "calculated" | "worked" | "derived" | "defined")
            && let Some(end) = formula_end(ctx, k)
        {
            let span = ctx.span_of(k, end);
            st.r.consumed.push((k, end));
            st.r.filters.retain(|f| f.first < k || f.first >= end);
            st.r.terms.retain(|t| t.first < k || t.first >= end);
            st.r.values.retain(|v| v.first < k || v.first >= end);
            for (mi, m) in ctx.mentions.iter().enumerate() {
                if m.first > k && m.last <= end {
                    st.used[mi] = true;
                }
            }
            st.r.notes.push((
                span,
                format!(
                    "\"{}\": the figure is worked out by the model's own definition of what \
                     is measured (the restatement says which)",
                    ctx.text(span)
                ),
            ));
        }
        // "include healed and amputated ones", "including closed wounds", "even the healed
        // ones": those values are not a filter, they widen the rows
        if matches!(w(k), "include" | "including" | "incl" | "inc" | "even") {
            let end = (k + 1..n)
                .find(|&i| matches!(w(i), "," | "." | ";" | "?" | "but" | "excluding" | "except"))
                .unwrap_or(n);
            let before = st.r.filters.len();
            st.r.filters.retain(|f| {
                let inside = f.first > k && f.first < end;
                !(inside && widens(&f.constraint))
            });
            if st.r.filters.len() != before {
                st.r.consumed.push((k, k + 1));
                // the words after "include" named values that are now not filters
                st.r.consumed.push((k + 1, end));
            }
        }
    }
}

/// The rows in the order of their own date (a list's date, a trend's time): the words
/// `at` are read, and any model phrase inside them ("date", "recent") is spoken for — an
/// instruction, not a column, a time term or a ranking.
fn date_order(ctx: &Ctx<'_>, st: &mut State, at: (usize, usize), order: SortOrder) {
    let (a, b) = at;
    st.r.consumed.push((a, b));
    let inside = |mi: usize| ctx.mentions[mi].first >= a && ctx.mentions[mi].last <= b;
    st.r.terms.retain(|t| !inside(t.mention));
    for mi in 0..ctx.mentions.len() {
        if inside(mi) {
            st.used[mi] = true;
        }
    }
    if st.r.dims.is_empty() && st.r.sort_by.as_ref().is_none_or(|(attr, _)| attr.is_none()) {
        st.r.sort_by = Some((None, order));
    }
}

/// "limit 15", "limited to 50", "only 20 patients", "just 10 wounds", "show 25 pts",
/// "the first 30 rows": how many rows of a list to show — not a ranking (the list keeps
/// its order) and not a filter. Only for lists: a count, an aggregate, a ranking or a
/// trend leaves the number to the other steps (and to coverage).
fn row_limit(ctx: &Ctx<'_>, st: &mut State) {
    let c = ctx.cues;
    // "…, sorted highest first, only the first 15", "sort by MRN and give me only the
    // first 5", "sorted by age, first 10 only": a cut closing a sorted list
    if (c.sort_instruction.is_some() || !c.sort_at.is_empty())
        && c.count.is_none()
        && c.agg.is_none()
        && c.share.is_none()
        && c.trend.is_none()
        && c.compare.is_none()
        && let Some(k) = (1..ctx.tokens.len()).find(|&k| {
            matches!(ctx.w(k), "first" | "top")
                && (matches!(ctx.w(k - 1), "the" | "only" | "just" | ",") || matches!(ctx.w(k + 2), "only"))
                && matches!(ctx.w(k + 2), "" | "." | "please" | "pls" | ")" | "only")
                && (ctx.w(k + 2) != "only" || matches!(ctx.w(k + 3), "" | "." | "please" | "pls" | ")"))
        })
        && let Some(n) = ctx
            .tokens
            .get(k + 1)
            .and_then(|t| t.num)
            .filter(|v| (1.0..=10_000.0).contains(v) && v.fract() == 0.0)
    {
        st.r.row_limit = Some(n as u32);
        st.r.consumed
            .push((k, if ctx.w(k + 2) == "only" { k + 3 } else { k + 2 }));
        return;
    }
    // "the 5 wounds with the largest area", "the 3 patients with the highest BMI": how many
    // of the rows a ranking word orders are shown
    if c.rank.is_none_or(|r| r.n.is_none()) && c.count.is_none() && c.agg.is_none() {
        for k in 0..ctx.tokens.len() {
            // (the tokens of "the 5 wounds with the largest …" read "which 5 wounds has the
            // largest …")
            if !matches!(ctx.w(k), "the" | "which" | "what") {
                continue;
            }
            let Some(n) = ctx
                .tokens
                .get(k + 1)
                .filter(|t| t.kind == TokenKind::Number)
                .and_then(|t| t.num)
                .filter(|v| (1.0..=1000.0).contains(v) && v.fract() == 0.0)
            else {
                continue;
            };
            let Some(m) = ctx
                .mentions
                .iter()
                .find(|m| m.first == k + 2 && m.entity().is_some())
            else {
                continue;
            };
            let mut j = m.last;
            if matches!(ctx.w(j), "who" | "that" | "which") {
                j += 1;
            }
            if matches!(ctx.w(j), "with" | "having" | "have" | "has" | "had") && ctx.w(j + 1) == "the" {
                let sup = ctx.w(j + 2);
                if sup.ends_with("est") || matches!(sup, "worst" | "most" | "least") {
                    st.r.top_n = Some(n as u32);
                    st.r.consumed.push((k + 1, k + 2));
                    break;
                }
            }
        }
    }
    if c.count.is_some()
        || c.agg.is_some()
        || c.rank.is_some()
        || c.share.is_some()
        || c.trend.is_some()
        || c.compare.is_some()
    {
        return;
    }
    let w = |i: usize| ctx.w(i);
    let count = |i: usize| {
        ctx.tokens.get(i).and_then(|t| {
            let v = t.num?;
            (t.kind == TokenKind::Number && (1.0..=10_000.0).contains(&v) && v.fract() == 0.0)
                .then_some(v as u32)
        })
    };
    // the records listed: an entity, a measure, a value or a dictionary word naming them
    let records_at = |i: usize| {
        ctx.mentions.iter().any(|m| m.first == i)
            || matches!(w(i), "rows" | "results" | "records" | "lines" | "entries")
    };
    for k in 0..ctx.tokens.len() {
        let found = match w(k) {
            "limit" | "limited" | "cap" | "capped" => {
                let mut j = k + 1;
                while matches!(w(j), "to" | "it" | "them" | "at" | "the" | "results" | "output") {
                    j += 1;
                }
                count(j).map(|n| (n, j + 1))
            }
            "only" | "just" | "show" | "list" | "display" | "first" => {
                count(k + 1).filter(|_| records_at(k + 2)).map(|n| (n, k + 2))
            }
            // "the last 5 assessments of wound 77", "the most recent 3 visits": the newest
            // records, in time order (a span of time, "last 5 days", names no records)
            "last" | "latest" | "recent" | "earliest" => count(k + 1)
                .filter(|_| records_at(k + 2) && ctx.mention_covering(k + 2).is_some())
                .map(|n| (n, k + 2)),
            // "the 3 most recent assessments", "the 5 latest visits"
            _ if count(k).is_some() => {
                let words = match (w(k + 1), w(k + 2)) {
                    ("most", "recent") => 2,
                    ("latest" | "last" | "newest" | "earliest", _) => 1,
                    _ => 0,
                };
                count(k)
                    .filter(|_| {
                        words > 0
                            && records_at(k + 1 + words)
                            && ctx.mention_covering(k + 1 + words).is_some()
                    })
                    .map(|n| (n, k + 1 + words))
            }
            _ => None,
        };
        if let Some((n, end)) = found {
            st.r.row_limit = Some(n);
            st.r.consumed.push((k, end));
            // "most recent", "latest" here say which rows, not which visit's value
            st.r.terms.retain(|t| {
                let m = &ctx.mentions[t.mention];
                m.first < k || m.last > end
            });
            let order = match (w(k), w(end - 1)) {
                ("earliest", _) | (_, "earliest") => Some(SortOrder::Asc),
                ("last" | "latest" | "recent", _) => Some(SortOrder::Desc),
                (_, "last" | "latest" | "recent" | "newest") if ctx.tokens[k].num.is_some() => {
                    Some(SortOrder::Desc)
                }
                _ => None,
            };
            if let Some(order) = order
                && st.r.sort_by.is_none()
                && st.r.sort.is_none()
            {
                st.r.sort_by = Some((None, order));
            }
            return;
        }
    }
}

/// A filter on a status-like value ("healed", "amputated", "closed"): said after
/// "include" it widens the rows instead of narrowing them.
fn widens(c: &Constraint) -> bool {
    match c {
        Constraint::Compare { attribute, .. } | Constraint::InSet { attribute, .. } => {
            attribute.ends_with(".status")
        }
        _ => false,
    }
}

/// A number of decimal places the renderer rounds to (a whole number from 0 to 6).
fn decimal_places(n: f64) -> Option<u8> {
    ((0.0..=6.0).contains(&n) && n.fract() == 0.0).then_some(n as u8)
}

/// "sorted by name", "ordered by their names", "alphabetically", "in alphabetical order":
/// the listed records in the order of their label (a patient's or clinician's
/// name, a clinic's name) — the label the entity shows, not a column named "name" of
/// some other record. Only where no other step ordered the rows.
fn by_label(ctx: &Ctx<'_>, st: &mut State) {
    if st.r.sort_by.is_some() || st.r.sort.is_some() || !st.r.dims.is_empty() {
        return;
    }
    // a mention of more than the word itself ("clinic name") names another column
    let covered = |k: usize| {
        ctx.mentions
            .iter()
            .any(|m| m.first <= k && k < m.last && (m.first, m.last) != (k, k + 1))
    };
    let named = |k: usize| matches!(ctx.w(k), "name" | "names" | "surname" | "surnames");
    // "sorted by name", "ordered by their name", "sorted by patient name" (no mention)
    let by_name = ctx.cues.sort_at.iter().find_map(|&s| {
        let mut k = s;
        while matches!(ctx.w(k), "their" | "its" | "the" | "full") {
            k += 1;
        }
        (named(k) && !covered(k)).then(|| (s.saturating_sub(2), k + 1, SortOrder::Asc))
    });
    let alphabetical = || {
        (0..ctx.tokens.len()).find_map(|k| match ctx.w(k) {
            "alphabetically" => Some((k, k + 1, SortOrder::Asc)),
            "alphabetical" if ctx.w(k + 1) == "order" => {
                let first = if ctx.w(k.wrapping_sub(1)) == "in" {
                    k - 1
                } else {
                    k
                };
                Some((first, k + 2, SortOrder::Asc))
            }
            _ => None,
        })
    };
    let Some((a, b, order)) = by_name.or_else(alphabetical) else {
        return;
    };
    let Some(entity) = st.r.entity.as_deref().and_then(|e| ctx.model.entity(e)) else {
        return;
    };
    let Some(label) = entity.display_attribute.as_deref() else {
        return;
    };
    st.r.consumed.push((a, b));
    for (mi, m) in ctx.mentions.iter().enumerate() {
        if m.first >= a && m.last <= b {
            st.used[mi] = true;
        }
    }
    st.r.sort_by = Some((Some(format!("{}.{label}", entity.name)), order));
}

/// The end of a formula said after "computed as" ("…as healed date minus onset date",
/// "…as smokers divided by all patients"): the clause up to punctuation, when every word
/// of it names something the model knows or is arithmetic. `None` when a word is neither
/// (that word is for coverage to report) or the clause is empty.
fn formula_end(ctx: &Ctx<'_>, k: usize) -> Option<usize> {
    let mut i = k + 1;
    if ctx.w(k) == "worked" {
        (ctx.w(i) == "out").then_some(())?;
        i += 1;
    }
    matches!(ctx.w(i), "as" | "using" | "from" | "by").then_some(())?;
    i += 1;
    let start = i;
    let n = ctx.tokens.len();
    let mut arithmetic = false;
    while i < n && !matches!(ctx.w(i), "," | "." | ";" | "?" | "!" | ")") {
        let word = ctx.w(i);
        let op = matches!(
            word,
            "minus"
                | "less"
                | "subtract"
                | "subtracted"
                | "divided"
                | "over"
                | "times"
                | "multiplied"
                | "plus"
                | "added"
                | "-"
                | "/"
                | "*"
                | "+"
                | "x"
                | "ratio"
                | "difference"
        );
        arithmetic |= op;
        let known = op
            || ctx.mention_covering(i).is_some()
            || ctx.tokens[i].num.is_some()
            || matches!(
                word,
                "by" | "from"
                    | "and"
                    | "of"
                    | "all"
                    | "the"
                    | "a"
                    | "an"
                    | "number"
                    | "count"
                    | "total"
                    | "between"
                    | "in"
                    | "each"
                    | "their"
                    | "its"
                    | "to"
                    | "into"
                    | "date"
                    | "dates"
                    | "days"
                    | "day"
                    | "then"
                    | "with"
                    | "100"
                    | "percent"
                    | "%"
                    // "… / all wounds of that etiology x 100"
                    | "that"
                    | "those"
                    | "same"
                    | "per"
                    | "for"
            );
        if !known {
            return None;
        }
        i += 1;
    }
    (i > start && arithmetic).then_some(i)
}

/// "show all if tied", "include ties", "ties included", "with ties", "if there's a tie for
/// 5th place show all of them", "all tied ones": at a word of ties (`k`) that asks to keep
/// the rows tied with the last one — the words of the request (its clause, when nothing in
/// it names data).
fn ties_included(ctx: &Ctx<'_>, k: usize) -> Option<(usize, usize)> {
    let w = |i: usize| ctx.w(i);
    if !matches!(w(k), "tie" | "ties" | "tied") {
        return None;
    }
    let n = ctx.tokens.len();
    let keep_word = |i: usize| {
        matches!(
            w(i),
            "include" | "including" | "included" | "incl" | "keep" | "keeping" | "kept" | "with" | "plus"
        )
    };
    let all_at = |i: usize| matches!(w(i), "all" | "every" | "both" | "each");
    // the clause around the word: up to punctuation
    let boundary = |i: usize| {
        ctx.tokens[i].kind == crate::engine::tokenize::TokenKind::Punct
            && matches!(w(i), "," | ";" | "(" | ")" | "." | "?" | "!" | "-" | ":")
    };
    let start = (0..k).rev().find(|&i| boundary(i)).map_or(0, |i| i + 1);
    let end = (k + 1..n).find(|&i| boundary(i)).unwrap_or(n);
    let before = |d: usize| k >= d && keep_word(k - d);
    let include = before(1)
        || before(2) && w(k - 1) == "the"
        || matches!(w(k + 1), "included" | "too" | "kept")
        // "show all if tied", "all tied ones", "everyone tied"
        || (start..k).any(|i| all_at(i) && matches!(w(i.wrapping_sub(1)), "show" | "list" | "include" | "give" | "return" | "keep") )
            && w(k) == "tied"
        || w(k) == "tied" && matches!(w(k.wrapping_sub(1)), "all" | "everyone" | "everybody" | "any" | "if" | "when" | "where")
            && (start..end).any(all_at)
        // "if there's a tie for 5th place, show all of them": the request after the tie
        || w(k.wrapping_sub(1)) == "a"
            && (k + 1..(k + 10).min(n)).any(|i| {
                matches!(w(i), "show" | "list" | "include" | "give" | "return" | "keep") && all_at(i + 1)
            });
    if !include {
        return None;
    }
    // the whole clause is the request when no word of it names data; otherwise the tie
    // words alone
    let mut last = end;
    // "…show all of them" may run past the clause of the tie: to the end of the sentence
    if w(k.wrapping_sub(1)) == "a" {
        last = (k + 1..n)
            .find(|&i| matches!(w(i), "." | "?" | "!" | ";" | ")"))
            .unwrap_or(n);
    }
    let names_data = (start..last).any(|i| ctx.mention_covering(i).is_some());
    if names_data {
        Some((k, k + 1))
    } else {
        Some((start, last))
    }
}
