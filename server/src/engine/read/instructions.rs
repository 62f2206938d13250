//! Instructions inside a question: how to lay the answer out rather than which rows it
//! is about — "one row per month", "listed from most to fewest", "ties broken by name",
//! "round to 1 decimal", "include healed and amputated ones". What the plan can do is
//! done (an ordering, a grouping, dropping a filter the question only meant to include);
//! what it cannot is said as a note, so no word is dropped silently.

use crate::semantic::Constraint;

use crate::engine::reading::Ctx;

use super::state::State;

/// Reads the layout instructions.
pub(super) fn instructions(ctx: &Ctx<'_>, st: &mut State) {
    if let Some((_, _, order)) = ctx.cues.sort_instruction {
        st.r.sort = Some(order);
    }
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
            match places.filter(|p| (0.0..=6.0).contains(p) && p.fract() == 0.0) {
                Some(p) => st.r.round = Some(p as u8),
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
