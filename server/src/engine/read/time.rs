//! The time range and its date column ("healed in 2025", "new wounds this month") and the
//! grain of a trend.

use crate::semantic::{Constraint, TermKind};

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
    if let Some(t) = ctx
        .times
        .iter()
        .enumerate()
        .find(|(i, _)| Some(*i) != st.consumed_time)
        .map(|(_, t)| t)
    {
        st.r.time = Some(TimeSpec {
            start: t.start,
            end: t.end,
            label: t.label.clone(),
            span: ctx.span_of(t.first, t.last),
            dimension: st.time_dim.clone(),
            all_time: t.all_time,
        });
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
