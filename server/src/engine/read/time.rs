//! The time range and its date column ("healed in 2025", "new wounds this month") and the
//! grain of a trend.

use crate::semantic::{Constraint, Grain, TermKind};

use crate::engine::time::TimeExpr;

use crate::engine::link::EXACT;
use crate::engine::reading::{Ctx, TimeSpec};
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

use super::state::State;

/// "new wounds this month": the time range says how new; the term names the date.
pub(super) fn time_terms(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    if !ctx.times.is_empty() || ctx.cues.trend.is_some() || !ctx.grains.is_empty() {
        let mut keep = Vec::new();
        for t in std::mem::take(&mut st.r.terms) {
            let term = &model.terms[t.term];
            let window_dim = term.default_option().and_then(|o| match &o.constraint {
                Some(Constraint::TimeWindow { dimension, .. }) => Some(dimension.clone()),
                _ => None,
            });
            match window_dim {
                Some(dim) if term.kind == TermKind::Time && !t.negated => {
                    let dim = dim.or_else(|| {
                        model
                            .entity(&t.anchor)
                            .and_then(|e| e.default_time_dimension.clone())
                    });
                    if let Some(d) = dim {
                        st.time_dim.get_or_insert(d);
                    }
                    st.used[t.mention] = true;
                }
                _ => keep.push(t),
            }
        }
        st.r.terms = keep;
    }
}

/// The time range and its date column, and the grain of a trend.
pub(super) fn range(ctx: &Ctx<'_>, st: &mut State) {
    st.r.time_dimension = st.time_dim.clone();

    // ---- the time range
    let free: Vec<&TimeExpr> = ctx
        .times
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != st.consumed_time)
        .map(|(_, t)| t)
        .collect();
    if let Some(&t) = free.first() {
        let mut spec = TimeSpec {
            start: t.start,
            end: t.end,
            label: t.label.clone(),
            span: ctx.span_of(t.first, t.last),
            dimension: st.time_dim.clone(),
            all_time: t.all_time,
        };
        if let Some(&t2) = free.get(1).filter(|t2| compared_periods(ctx, t, t2)) {
            // "sept 2026 vs oct 2026", "2024 vs 2025": both periods, one row each
            spec.start = t.start.min(t2.start);
            spec.end = t.end.max(t2.end);
            spec.label = format!("{} and {}", t.label, t2.label.trim_start_matches("in "));
            spec.span = ctx.span_of(t.first, t2.last);
            if st.r.grain.is_none() {
                st.r.grain = period_grain(t).filter(|g| period_grain(t2) == Some(*g));
            }
            let gap = t.end < t2.start || t2.end < t.start;
            if gap {
                st.r.notes.push((
                    spec.span,
                    format!(
                        "{}: the periods between them are included too",
                        ctx.text(spec.span)
                    ),
                ));
            }
        }
        st.r.time = Some(spec);
        st.r.pieces.push(LinkedPiece {
            kind: PieceKind::Time,
            target: t.label.clone(),
            value: None,
            text: ctx.text(ctx.span_of(t.first, t.last)),
            span: Some(ctx.span_of(t.first, t.last)),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
    }
    if let Some(g) = ctx.grains.first() {
        st.r.pieces.push(LinkedPiece {
            kind: PieceKind::Dimension,
            target: format!("grain:{}", g.grain.as_str()),
            value: None,
            text: ctx.text(ctx.span_of(g.first, g.last)),
            span: Some(ctx.span_of(g.first, g.last)),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
    }
}

/// Two time expressions compared ("sept 2026 vs oct 2026", "2024 and 2025"): joined by a
/// comparison word, both real periods.
fn compared_periods(ctx: &Ctx<'_>, a: &TimeExpr, b: &TimeExpr) -> bool {
    if a.all_time || b.all_time || b.first < a.last {
        return false;
    }
    let between: Vec<&str> = (a.last..b.first).map(|k| ctx.w(k)).collect();
    ctx.cues.compare.is_some() && between.len() <= 3
        || matches!(
            between.as_slice(),
            ["and"] | ["or"] | [","] | ["vs"] | ["versus"] | ["against"]
        )
}

/// The grain one period is: a month, a quarter, a year.
fn period_grain(t: &TimeExpr) -> Option<Grain> {
    let days = (t.end - t.start).num_days();
    match days {
        28..=31 => Some(Grain::Month),
        89..=92 => Some(Grain::Quarter),
        365 | 366 => Some(Grain::Year),
        7 => Some(Grain::Week),
        _ => None,
    }
}
