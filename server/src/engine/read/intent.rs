//! The intent (list, count, aggregate, group, rank, trend, compare) and the metric it
//! needs.

use crate::semantic::{MeasureAgg, TermKind};

use crate::engine::intent::{self as cues, Evidence};
use crate::engine::plan::Intent;
use crate::engine::plan_ops::intent_name;
use crate::engine::reading::{Ctx, EntitySource, MetricSpec};
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

use super::state::State;

/// The intent, the metric it needs, and its linked piece.
pub(super) fn intent(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let mut ev = Evidence {
        measure: match &st.r.metric {
            MetricSpec::Measure(mx) => Some(model.measures[*mx].agg),
            MetricSpec::Agg { agg, .. } | MetricSpec::AggColumn { agg, .. } => Some(*agg),
            MetricSpec::Share => Some(MeasureAgg::Share),
            MetricSpec::TermMeasure { .. } => Some(MeasureAgg::Share),
            _ => None,
        },
        entity: st.r.entity.is_some() && st.r.entity_source != EntitySource::Term,
        filters: !st.r.filters.is_empty()
            || !st.r.terms.is_empty()
            || !st.r.values.is_empty()
            || !st.r.cmps.is_empty()
            || !st.r.gaps.is_empty(),
        dimensions: !st.r.dims.is_empty(),
        grain: st.r.grain.is_some(),
        two_values: st.r.compare.is_some(),
        ranking_term: false,
        trend_term: false,
    };
    for t in &st.r.terms {
        let term = &model.terms[t.term];
        if term.kind == TermKind::Ranking && term.applies_to.contains(&t.anchor) {
            ev.ranking_term = true;
        }
        if term.id == "over_time" {
            ev.trend_term = true;
        }
        if term.kind == TermKind::Measure {
            ev.measure = ev.measure.or(Some(MeasureAgg::Share));
        }
    }
    if st.r.change_term.is_some() {
        ev.trend_term = true;
    }
    if st.r.entity_source == EntitySource::Term {
        ev.filters = true;
    }
    // "DFUs and VLUs", "healed and amputated wounds": two values of one attribute are a
    // list of both, not two topics side by side
    if ctx.cues.bare_pair && same_attribute_around_and(ctx) {
        ev.two_values = true;
    }
    // "depth dropped by more than 0.5 since the first visit": a change verb read as a
    // condition (a step consumed it) asks for no trend
    let consumed = |k: usize| st.r.consumed.iter().any(|&(a, b)| a <= k && k < b);
    let (intent, conf) =
        if ctx.cues.change_verb.is_some_and(consumed) && ctx.cues.trend.is_some_and(|(a, _)| consumed(a)) {
            let mut cues = ctx.cues.clone();
            cues.trend = None;
            cues.change_verb = None;
            // "how much has its pain score changed": the amount is the change, not a count
            if cues
                .count
                .is_some_and(|c| ctx.w(c) == "much" || ctx.w(c + 1) == "much")
            {
                cues.count = None;
            }
            cues::decide(&cues, &ev)
        } else {
            cues::decide(ctx.cues, &ev)
        };
    // "area at first assessment vs latest area": two columns of each record listed, what
    // ever the "vs" made of it
    let (intent, conf) = if st.r.side_by_side {
        st.r.metric = MetricSpec::None;
        (Intent::List, conf.max(0.9))
    } else {
        (intent, conf)
    };
    st.r.intent = intent;
    st.r.intent_confidence = conf;
    // metric for the intent
    if matches!(st.r.metric, MetricSpec::None) {
        let measure_term =
            st.r.terms
                .iter()
                .find(|t| model.terms[t.term].kind == TermKind::Measure)
                .map(|t| (t.term, t.mention));
        match (intent, measure_term) {
            (
                Intent::Count | Intent::GroupBy | Intent::Trend | Intent::Compare | Intent::Aggregate,
                Some((term, mention)),
            ) => {
                st.r.metric = MetricSpec::TermMeasure { term, mention };
                st.r.terms.retain(|t| t.term != term);
            }
            (Intent::Count | Intent::GroupBy | Intent::Trend | Intent::Compare, None) => {
                st.r.metric = MetricSpec::Count
            }
            (Intent::Aggregate, None) => st.r.metric = MetricSpec::Count,
            _ => {}
        }
    } else if let Some(pos) =
        st.r.terms
            .iter()
            .position(|t| model.terms[t.term].kind == TermKind::Measure)
    {
        // "rate" next to a named measure adds nothing
        st.r.terms.remove(pos);
    }
    let (conf, intent_how) = if st.r.follow_up && conf < 0.9 {
        (1.0, LinkMethod::Context)
    } else if conf >= 0.9 {
        (conf, LinkMethod::Exact)
    } else {
        (conf, LinkMethod::Default)
    };
    st.r.intent_confidence = conf;
    if let Some(p) = st.r.pieces.iter_mut().find(|p| p.kind == PieceKind::Intent) {
        p.confidence = conf;
    } else {
        st.r.pieces.push(LinkedPiece {
            kind: PieceKind::Intent,
            target: intent_name(intent).into(),
            value: None,
            text: String::new(),
            span: None,
            how: intent_how,
            confidence: conf,
        });
    }
}

/// True when the words on both sides of the question's "and" are values of one attribute.
fn same_attribute_around_and(ctx: &Ctx<'_>) -> bool {
    let Some(k) = (0..ctx.tokens.len()).find(|&k| ctx.w(k) == "and") else {
        return false;
    };
    let left = ctx
        .mentions
        .iter()
        .find(|m| m.last == k)
        .map(|m| m.value_attributes())
        .unwrap_or_default();
    let right = ctx
        .mentions
        .iter()
        .find(|m| m.first == k + 1)
        .map(|m| m.value_attributes())
        .unwrap_or_default();
    left.iter().any(|a| right.contains(a))
}
