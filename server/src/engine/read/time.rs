//! The time range and its date column ("healed in 2025", "new wounds this month") and the
//! grain of a trend.

use crate::semantic::{Constraint, Grain, TermKind};

use crate::engine::time::TimeExpr;

use crate::engine::link::EXACT;
use crate::engine::reading::{Ctx, DimSpec, TimeSpec};
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

/// "by onset month", "per healed week": the date word inside a grain says which date the
/// periods are of (read before values: "healed" there is not a status).
pub(super) fn grain_date(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let Some(g) = ctx.grains.first() else { return };
    let Some(k) = g.date_word else { return };
    let linked = ctx
        .mentions
        .iter()
        .filter(|m| m.first <= k && k < m.last)
        .find_map(|m| {
            m.time_dimension().or_else(|| {
                m.attributes().find_map(|(e, a)| {
                    let q = super::state::qualified(model, e, a);
                    model.time_dimensions.iter().position(|d| d.attribute == q)
                })
            })
        });
    // "healed" is linked as a status; the date is named by the dimension's own word
    let named = || {
        let w = ctx.w(k);
        model.time_dimensions.iter().position(|d| {
            d.name == w
                || d.synonyms.iter().any(|s| s == w)
                || d.label
                    .split_whitespace()
                    .next()
                    .is_some_and(|l| l.eq_ignore_ascii_case(w))
        })
    };
    let Some(d) = linked.or_else(named) else { return };
    st.time_dim = Some(model.time_dimensions[d].name.clone());
    for (mi, m) in ctx.mentions.iter().enumerate() {
        if m.first <= k && k < m.last {
            st.used[mi] = true;
        }
    }
}

/// The time range and its date column, and the grain of a trend.
pub(super) fn range(ctx: &Ctx<'_>, st: &mut State) {
    st.r.time_dimension = st.time_dim.clone();

    // ---- the time range
    let mut free: Vec<&TimeExpr> = ctx
        .times
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != st.consumed_time)
        .map(|(_, t)| t)
        .collect();
    // "wounds with onset in 2024 of pts born in the 1940s": a period said right after its
    // own date word ("born"), beside another period, is a condition on that date; the
    // other period keeps the question's date — never one window moved onto the other
    if free.len() >= 2 && !compared_periods(ctx, free[0], free[1]) {
        let mut k = 0;
        while k < free.len() && free.len() >= 2 {
            let t = free[k];
            let Some(d) = own_dimension(ctx, t) else {
                k += 1;
                continue;
            };
            let attribute = ctx.model.time_dimensions[d].attribute.clone();
            st.r.filters.push(crate::engine::reading::Filter {
                constraint: super::compare::period_between(ctx, &attribute, t),
                first: t.first,
                span: ctx.span_of(t.first, t.last),
            });
            st.r.pieces.push(time_piece(ctx, t));
            if st.time_dim.as_deref() == Some(ctx.model.time_dimensions[d].name.as_str()) {
                st.time_dim = None;
                st.r.time_dimension = None;
            }
            free.remove(k);
        }
        // the period left keeps its own date word ("with onset in 2023")
        if let Some(d) = free.first().and_then(|t| own_dimension(ctx, t)) {
            st.time_dim = Some(ctx.model.time_dimensions[d].name.clone());
            st.r.time_dimension = st.time_dim.clone();
        }
    } else if let Some(d) = free.first().and_then(|t| own_dimension(ctx, t)) {
        // "healed VLUs with onset in 2025": the date word said with the period names its
        // date, over one a value implies ("healed")
        st.time_dim = Some(ctx.model.time_dimensions[d].name.clone());
        st.r.time_dimension = st.time_dim.clone();
    }
    if let Some(&t) = free.first()
        && let Some(d) = visit_dimension(ctx, st, t)
    {
        // "more than 10 days since their last assessment", "whose last visit was over 2
        // weeks ago": the date of the record's last (or first) visit
        st.time_dim = Some(d);
    }
    if let Some(&t) = free.first() {
        let mut spec = TimeSpec {
            start: t.start,
            end: t.end,
            label: t.label.clone(),
            span: ctx.span_of(t.first, t.last),
            dimension: st.time_dim.clone(),
            all_time: t.all_time,
        };
        // "turning 70 this year": birth dates, whatever the question's other date is
        if t.birth {
            let birth = ctx.model.time_dimensions.iter().find(|d| {
                d.synonyms.iter().any(|s| s == "born")
                    || ctx
                        .model
                        .attribute(&d.attribute)
                        .is_some_and(|r| r.attribute.name.contains("birth"))
            });
            spec.dimension = birth.map(|d| d.name.clone());
        }
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
        st.r.pieces.push(time_piece(ctx, t));
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

/// The record's last or first visit named right after a period ending in "since" ("more
/// than 10 days since their last assessment") or right before it ("whose last visit was
/// over 2 weeks ago"): the question's entity's time dimension for that visit's date.
fn visit_dimension(ctx: &Ctx<'_>, st: &State, t: &TimeExpr) -> Option<String> {
    let visit_at = |k: usize| -> Option<(bool, usize)> {
        let mut k = k;
        if matches!(ctx.w(k), "their" | "its" | "the" | "his" | "her" | "whose" | "a") {
            k += 1;
        }
        let latest = match (ctx.w(k), ctx.w(k + 1)) {
            ("last" | "latest" | "previous", _) => {
                k += 1;
                true
            }
            ("most", "recent") => {
                k += 2;
                true
            }
            ("first" | "initial" | "earliest", _) => {
                k += 1;
                false
            }
            _ => return None,
        };
        matches!(
            ctx.w(k),
            "assessment" | "visit" | "review" | "appointment" | "assessments" | "visits" | "check"
        )
        .then_some((latest, k + 1))
    };
    let said = if t.last > t.first && ctx.w(t.last - 1) == "since" {
        visit_at(t.last).map(|(l, _)| l)
    } else {
        // "last assessment was over 2 weeks ago": the visit words end just before
        let mut end = t.first;
        while end > 0 && matches!(ctx.w(end - 1), "was" | "were" | "is" | "happened" | "occurred") {
            end -= 1;
        }
        (end.saturating_sub(4)..end).find_map(|k| visit_at(k).filter(|(_, e)| *e == end).map(|(l, _)| l))
    }?;
    let model = ctx.model;
    let entity = st.r.entity.as_deref()?;
    model
        .time_dimensions
        .iter()
        .find(|d| {
            crate::semantic::split_qualified(&d.attribute).is_some_and(|(e, _)| e == entity)
                && model
                    .attribute(&d.attribute)
                    .is_some_and(|r| match &r.attribute.derived {
                        Some(crate::semantic::Derived::Latest { attribute, .. }) => {
                            said && attribute.starts_with("assessments.")
                        }
                        Some(crate::semantic::Derived::First { attribute, .. }) => {
                            !said && attribute.starts_with("assessments.")
                        }
                        _ => false,
                    })
        })
        .map(|d| d.name.clone())
}

/// The date column a period names itself: birth dates for "turning 70", else a date word
/// said right before it ("born in the 1950s", "healed in 2025").
fn own_dimension(ctx: &Ctx<'_>, t: &TimeExpr) -> Option<usize> {
    let model = ctx.model;
    if t.birth {
        return model.time_dimensions.iter().position(|d| {
            d.synonyms.iter().any(|s| s == "born")
                || model
                    .attribute(&d.attribute)
                    .is_some_and(|r| r.attribute.name.contains("birth"))
        });
    }
    let m = ctx
        .mentions
        .iter()
        .find(|m| m.last == t.first || m.last + 1 == t.first && ctx.w(m.last) == "in")?;
    // "healed in 2025": a value named like a time dimension
    let valued = m.entries.iter().find_map(|e| match &e.target {
        crate::engine::vocab::Target::Value(_, crate::semantic::Value::Text(v)) => {
            model.time_dimensions.iter().position(|d| d.name == *v)
        }
        _ => None,
    });
    // "wounds healed in 2025": a count whose status names a time dimension
    let counted = m.measure().and_then(|mx| match &model.measures[mx].filter {
        Some(Constraint::Compare {
            value: crate::semantic::Value::Text(v),
            ..
        }) => model.time_dimensions.iter().position(|d| d.name == *v),
        _ => None,
    });
    m.time_dimension().or(valued).or(counted).or_else(|| {
        // "onset in 2024": a date attribute a time dimension reads
        m.attributes().find_map(|(e, a)| {
            let q = format!(
                "{}.{}",
                model.entities[e].name, model.entities[e].attributes[a].name
            );
            model.time_dimensions.iter().position(|d| d.attribute == q)
        })
    })
}

/// Two time expressions compared ("sept 2026 vs oct 2026", "2024 and 2025"): joined by a
/// comparison word, both real periods.
fn compared_periods(ctx: &Ctx<'_>, a: &TimeExpr, b: &TimeExpr) -> bool {
    if a.all_time || b.all_time || b.first < a.last {
        return false;
    }
    let between: Vec<&str> = (a.last..b.first).map(|k| ctx.w(k)).collect();
    // "did more wounds start in Q3 than in Q2", "fewer assessments in October than
    // September": a comparative said before the first period
    let comparative = (0..a.first).any(|k| matches!(ctx.w(k), "more" | "fewer" | "less"));
    ctx.cues.compare.is_some() && between.len() <= 3
        || matches!(
            between.as_slice(),
            ["and"] | ["or"] | [","] | ["vs"] | ["versus"] | ["against"]
        )
        || comparative && matches!(between.as_slice(), ["than"] | ["than", "in" | "during" | "for"])
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

/// The piece a period said in the question stands for (shown in the reading).
fn time_piece(ctx: &Ctx<'_>, t: &TimeExpr) -> LinkedPiece {
    LinkedPiece {
        kind: PieceKind::Time,
        target: t.label.clone(),
        value: None,
        text: ctx.text(ctx.span_of(t.first, t.last)),
        span: Some(ctx.span_of(t.first, t.last)),
        how: LinkMethod::Exact,
        confidence: EXACT,
    }
}

/// "healed wounds in Q2 vs Q3 (by healed date)", "assessments per month, by assessment
/// date": with a grain of time, "by <date>" says which date the periods are of — the one
/// the window is on — not a grouping by each day.
pub(super) fn date_named_for_periods(ctx: &Ctx<'_>, st: &mut State) {
    if st.r.grain.is_none() && !ctx.compares_periods() {
        return;
    }
    let model = ctx.model;
    let Some(date) =
        st.r.time_dimension
            .as_deref()
            .and_then(|name| model.time_dimensions.iter().find(|d| d.name == name))
            .map(|d| d.attribute.clone())
    else {
        return;
    };
    st.r.dims
        .retain(|d| !matches!(&d.spec, DimSpec::Attribute(a) if *a == date));
}
