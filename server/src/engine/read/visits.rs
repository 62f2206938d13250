//! Which visit a per-visit value is about: "at the latest assessment", "at any visit".

use crate::engine::PieceKind;
use crate::engine::link::{Subject, convert};
use crate::engine::plan_ops::{first_of, latest_of};
use crate::engine::reading::{Ctx, Filter, Reading};
use crate::semantic::{AttributeType, CompareOp, Constraint, MeasureAgg, Value};

use super::negation::negated_at;
use super::state::{State, piece, qualified};

/// Whether the question says something a visit records (a per-visit value, attribute or
/// term) outside the visit phrase `k..=at`.
fn visit_value_outside(ctx: &Ctx<'_>, k: usize, at: usize) -> bool {
    ctx.mentions
        .iter()
        .filter(|m| m.first > at || m.last <= k)
        .any(|m| {
            m.terms().next().is_some()
                || m.measure().is_some_and(|x| {
                    let measure = &ctx.model.measures[x];
                    measure.entity == "assessments"
                        || measure
                            .attribute
                            .as_deref()
                            .is_some_and(|a| a.starts_with("assessments."))
                })
                || m.value_attributes().iter().any(|q| q.starts_with("assessments."))
                || m.attributes().any(|(e, a)| {
                    let q = qualified(ctx.model, e, a);
                    q.starts_with("assessments.") && q != "assessments.assessed_on"
                })
        })
        // "measured more than 30 cm2 at a visit": a size said by its unit alone
        || ctx
            .comparisons
            .iter()
            .filter(|c| c.first > at || c.last <= k)
            .any(|c| match &c.subject {
                Subject::Size | Subject::ColumnTerm(_) => true,
                Subject::Attribute(a) => a.starts_with("assessments."),
                _ => false,
            })
}

/// "at the latest assessment" / "at the last visit" (latest) or "at any visit" (any).
pub(super) fn read_visit_hint(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
    // "current wound area", "latest pain score": a per-visit measurement read at the
    // latest assessment
    // "first measured area", "initial recorded area", "area at the very first
    // assessment": a per-visit measurement read at the record's first visit, when the
    // model keeps that value per record
    // (the visit words around it still say which visits: "an assessment that found …")
    read_same_visit(ctx, r, used);
    if read_two_visits(ctx, r, used) || read_first_visit(ctx, r, used) {
        return;
    }
    // "only ever been assessed by wound nurses", "only seen by podiatrists": every visit
    // was by them
    for k in 0..ctx.tokens.len() {
        if !matches!(ctx.w(k), "only" | "exclusively") {
            continue;
        }
        let mut j = k + 1;
        while j < k + 4
            && matches!(
                ctx.w(j),
                "ever" | "been" | "be" | "having" | "had" | "have" | "has" | "were" | "was"
            )
        {
            j += 1;
        }
        if matches!(
            ctx.w(j),
            "assessed" | "seen" | "visited" | "treated" | "reviewed" | "examined"
        ) && ctx.w(j + 1) == "by"
        {
            r.visit_hint = Some(false);
            r.every_visit = true;
            r.visit_hint_at = Some((k, j + 1));
            return;
        }
    }
    for m in ctx.mentions {
        let lead = match (ctx.w(m.first.wrapping_sub(2)), ctx.w(m.first.wrapping_sub(1))) {
            ("most", "recent") => Some(m.first - 2),
            (_, "current" | "latest" | "newest") => Some(m.first - 1),
            _ => None,
        };
        let per_visit = m.attributes().any(|(e, a)| {
            let q = qualified(ctx.model, e, a);
            q.starts_with("assessments.") && latest_of(ctx.model, &q).is_some()
        });
        if let Some(k) = lead
            && per_visit
            && !ctx
                .mentions
                .iter()
                .any(|o| o.first <= k && k < o.last && o.last > k + 1)
        {
            r.visit_hint = Some(true);
            r.visit_hint_at = Some((k, m.first));
            for (mi, o) in ctx.mentions.iter().enumerate() {
                if o.first >= k && o.last <= m.first {
                    used[mi] = true;
                }
            }
            return;
        }
    }
    for k in 0..ctx.tokens.len() {
        let mut j = k;
        if matches!(ctx.w(j), "at" | "on" | "in" | "during" | "from") {
            j += 1;
        }
        // "at each visit": each of the visits, read below with "every"
        let each = ctx.w(j) == "each" && j > k;
        if matches!(ctx.w(j), "the" | "their" | "its") {
            j += 1;
        }
        let visit_word = |i: usize| {
            matches!(
                ctx.w(i),
                "assessment" | "visit" | "review" | "measurement" | "reading" | "assessments" | "visits"
            )
        };
        // "had an assessment showing …", "at least one assessment with …", "one or more
        // visits recording …": a value of some visit, not of the latest one
        let showing = |i: usize| {
            matches!(
                ctx.w(i),
                "showing"
                    | "with"
                    | "recording"
                    | "that"
                    | "where"
                    | "which"
                    | "documenting"
                    | "noting"
                    | "of"
                    | "reporting"
                    | "recorded"
                    | "found"
                    | "showed"
                    | "noted"
                    | "documented"
                    | "having"
                    | "flagging"
                    | "in"
                    | "during"
                    | "between"
                    | "from"
                    | "since"
            )
        };
        // "at every visit", "at each assessment", "at every single visit", "at all
        // assessments": each of the visits
        let every = j > k
            && (each || matches!(ctx.w(j), "every" | "all"))
            && (visit_word(j + 1)
                || matches!(ctx.w(j + 1), "single" | "one" | "of") && visit_word(j + 2)
                || ctx.w(j + 1) == "of"
                    && matches!(ctx.w(j + 2), "their" | "its" | "the")
                    && visit_word(j + 3));
        if every {
            let at = (j + 1..j + 4).find(|&i| visit_word(i)).unwrap_or(j + 1);
            r.visit_hint = Some(false);
            r.every_visit = true;
            r.visit_hint_at = Some((k, at + 1));
            for (mi, m) in ctx.mentions.iter().enumerate() {
                if m.first >= k && m.last <= at + 1 {
                    used[mi] = true;
                }
            }
            return;
        }
        let latest = match (ctx.w(j), ctx.w(j + 1)) {
            ("last" | "latest" | "newest" | "current", _) => Some((true, j + 1)),
            ("most", "recent") => Some((true, j + 2)),
            ("any" | "every" | "some", _) if j > k => Some((false, j + 1)),
            ("a" | "an" | "one" | "some" | "any", _) if visit_word(j + 1) && showing(j + 2) => {
                Some((false, j + 1))
            }
            ("at", "least") if ctx.w(j + 2) == "one" && visit_word(j + 3) => Some((false, j + 3)),
            ("one", "or") if ctx.w(j + 2) == "more" && visit_word(j + 3) => Some((false, j + 3)),
            _ => None,
        };
        let Some((hint, at)) = latest else { continue };
        if !visit_word(at) {
            continue;
        }
        // "the 5 most recent assessments": that many visits, not a value's visit
        if j > 0 && ctx.tokens[j - 1].kind == crate::engine::tokenize::TokenKind::Number {
            continue;
        }
        // "had an assessment in the last 2 weeks" with no value of that visit said: whether
        // visits happened (read by the steps on related records), not which visit a value
        // is of
        if !hint && !matches!(ctx.w(j), "any" | "every" | "some") && !visit_value_outside(ctx, k, at) {
            continue;
        }
        r.visit_hint = Some(hint);
        r.visit_hint_at = Some((k, at + 1));
        for (mi, m) in ctx.mentions.iter().enumerate() {
            if m.first >= k && m.last <= at + 1 {
                used[mi] = true;
            }
        }
        return;
    }
    // "slough at one visit and necrotic tissue at another", "…at different visits": each
    // value at a visit of its own (each value is then some visit's, on a row of its own)
    let visit_noun = |i: usize| {
        matches!(
            ctx.w(i),
            "assessment" | "visit" | "review" | "measurement" | "assessments" | "visits" | "reviews"
        )
    };
    for k in 0..ctx.tokens.len() {
        if ctx.w(k) == "at"
            && (ctx.w(k + 1) == "one" && visit_noun(k + 2)
                || matches!(ctx.w(k + 1), "different" | "separate") && visit_noun(k + 2))
        {
            r.visit_hint = Some(false);
            r.visit_hint_at = Some((k, k + 3));
            r.consumed.push((k, k + 3));
            // "… and Y at another (one/visit)"
            if let Some(j) =
                (k + 3..ctx.tokens.len()).find(|&j| ctx.w(j) == "at" && ctx.w(j + 1) == "another")
            {
                let end = if visit_noun(j + 2) || ctx.w(j + 2) == "one" {
                    j + 3
                } else {
                    j + 2
                };
                r.consumed.push((j, end));
            }
            for (mi, m) in ctx.mentions.iter().enumerate() {
                if m.first >= k && m.last <= k + 3 {
                    used[mi] = true;
                }
            }
            return;
        }
    }
    // "scored pain 10 at least once", "had high exudate even once", "one or more times":
    // some visit, not the latest one
    for k in 0..ctx.tokens.len() {
        let end = match (ctx.w(k), ctx.w(k + 1), ctx.w(k + 2)) {
            ("at", "least", "once") => k + 3,
            ("even", "once", _) => k + 2,
            ("one", "or", "more") if ctx.w(k + 3) == "times" => k + 4,
            // "measured more than 40 cm2 at any point", "at some stage", "at any time"
            ("at", "any" | "some", "point" | "stage" | "time") => k + 3,
            _ => continue,
        };
        r.visit_hint = Some(false);
        r.visit_hint_at = Some((k, end));
        return;
    }
    // "which wounds had infection signs in the last 30 days", "infected in September",
    // "high exudate in the last 2 weeks": a finding a visit records, with a period said
    // right after it — some visit of that period, not the latest visit and the record's
    // own date
    if r.visit_hint.is_none() {
        let finding = |m: &crate::engine::link::Mention| {
            let model = ctx.model;
            m.value_attributes()
                .iter()
                .any(|q| q.starts_with("assessments.") && *q != "assessments.assessed_on")
                || m.attributes().any(|(e, a)| {
                    let q = qualified(model, e, a);
                    q.starts_with("assessments.")
                        && q != "assessments.assessed_on"
                        && model.entities[e].attributes[a].ty == AttributeType::Boolean
                })
                || m.terms()
                    .any(|t| model.terms[t].options.iter().any(|o| o.id == "now"))
        };
        let in_comparison = |m: &crate::engine::link::Mention| {
            ctx.comparisons
                .iter()
                .any(|c| c.first <= m.first && m.last <= c.last)
        };
        let dated = ctx.mentions.iter().any(|m| {
            finding(m)
                && !in_comparison(m)
                && ctx.times.iter().any(|t| {
                    !t.all_time
                        && (t.first == m.last
                            || t.first == m.last + 1
                                && matches!(
                                    ctx.w(m.last),
                                    "recorded" | "noted" | "documented" | "seen" | "found" | "reported"
                                ))
                })
        });
        if dated {
            r.visit_hint = Some(false);
            return;
        }
    }
    // "the largest area ever recorded", "highest pain of all time", "across all their
    // assessments": a measurement over the whole history, every visit counts
    // "never showed high exudate": at no visit — every visit counts, negated
    let history = (0..ctx.tokens.len()).any(|k| {
        matches!(ctx.w(k), "ever" | "all-time" | "never")
            || ctx.w(k) == "not" && ctx.w(k + 1) == "once"
            || ctx.w(k) == "all" && ctx.w(k + 1) == "time"
            || matches!(ctx.w(k), "across" | "over" | "among")
                && ctx.w(k + 1) == "all"
                && (k + 2..k + 4).any(|i| matches!(ctx.w(i), "assessments" | "visits" | "measurements"))
    });
    if history {
        r.visit_hint = Some(false);
    }
}

/// The first visit said of a per-visit measurement the model keeps per record at the first
/// visit (`first_of`): "first measured area", "first measurement area", "initial recorded
/// area", "area at the (very) first assessment", "area when first seen". Sets the hint to
/// that visit and returns true.
fn read_first_visit(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) -> bool {
    let first_word = |k: usize| matches!(ctx.w(k), "first" | "earliest" | "initial" | "initially" | "1st");
    let recorded = |k: usize| {
        matches!(
            ctx.w(k),
            "measured"
                | "recorded"
                | "measurement"
                | "documented"
                | "charted"
                | "assessed"
                | "assessment"
                | "visit"
        )
    };
    let visit_word = |k: usize| {
        matches!(
            ctx.w(k),
            "assessment"
                | "visit"
                | "review"
                | "measurement"
                | "reading"
                | "seen"
                | "measured"
                | "assessed"
                | "recorded"
        )
    };
    // a per-visit measurement, or a record's latest value of one ("area" read as the
    // latest area)
    let per_visit_first = |q: &str| {
        let base = match ctx.model.attribute(q).and_then(|r| r.attribute.derived.clone()) {
            Some(crate::semantic::Derived::Latest { attribute, .. }) => attribute,
            _ => q.to_owned(),
        };
        // a measurement: "earliest assessment date" is the earliest of all dates
        base.starts_with("assessments.")
            && ctx
                .model
                .attribute(&base)
                .is_some_and(|r| r.attribute.ty != AttributeType::Date)
            && first_of(ctx.model, &base).is_some()
    };
    // a measurement ("area") or a measure of one ("mean area")
    let has_first = |m: &crate::engine::link::Mention| {
        m.attributes()
            .any(|(e, a)| per_visit_first(&qualified(ctx.model, e, a)))
            || m.measure()
                .and_then(|x| ctx.model.measures[x].attribute.as_deref())
                .is_some_and(per_visit_first)
            || m.terms().any(|t| {
                crate::engine::plan_ops::term_first_of(ctx.model, t).is_some()
                    // a quality the record's latest visit shows ("necrotic", "infected")
                    || crate::engine::plan_ops::term_at_first_visit(ctx.model, t).is_some()
            })
            // a value a visit records ("necrotic", "infection signs") the model keeps at the
            // record's first visit too
            || m.value_attributes().iter().any(|q| {
                q.starts_with("assessments.") && q != "assessments.assessed_on" && first_of(ctx.model, q).is_some()
            })
    };
    // (or a size said by its unit: "over 30 cm2 at the first assessment")
    let sized = ctx.comparisons.iter().any(|c| {
        c.unit.as_deref().is_some_and(|u| {
            ctx.model.entity("assessments").is_some_and(|e| {
                e.attributes.iter().any(|a| {
                    a.unit.as_deref() == Some(u)
                        && first_of(ctx.model, &format!("assessments.{}", a.name)).is_some()
                })
            })
        })
    });
    if !ctx.mentions.iter().any(has_first) && !sized {
        return false;
    }
    // "… at the (very) first assessment", "… when first seen", "on their initial visit":
    // the visit of the question's measurement, wherever it is said
    for k in 0..ctx.tokens.len() {
        if !matches!(ctx.w(k), "at" | "on" | "in" | "during" | "from" | "when" | "of")
            || r.consumed.iter().any(|&(a, b)| a <= k && k < b)
        {
            continue;
        }
        let mut j = k + 1;
        if matches!(ctx.w(j), "the" | "their" | "its" | "his" | "her" | "each") {
            j += 1;
        }
        if ctx.w(j) == "very" {
            j += 1;
        }
        if first_word(j) && visit_word(j + 1) {
            set_first(ctx, r, used, k, j + 2);
            return true;
        }
        // "at presentation", "on admission", "at baseline", "at intake": the first visit
        if j == k + 1
            && matches!(ctx.w(k), "at" | "on")
            && matches!(ctx.w(j), "presentation" | "admission" | "baseline" | "intake")
        {
            set_first(ctx, r, used, k, j + 1);
            return true;
        }
    }
    // "where the first assessment showed slough", "whose initial visit recorded high
    // exudate": the visit said as what did the recording
    for k in 0..ctx.tokens.len() {
        if matches!(ctx.w(k), "the" | "their" | "its" | "whose" | "his" | "her")
            && first_word(k + 1)
            && matches!(ctx.w(k + 2), "assessment" | "visit" | "review")
            && (matches!(
                ctx.w(k + 3),
                "showed"
                    | "shows"
                    | "showing"
                    | "had"
                    | "has"
                    | "found"
                    | "noted"
                    | "revealed"
                    | "was"
                    | "documented"
                    | "recorded"
                    | "with"
            ) || crate::engine::coverage::is_recording_word(ctx.w(k + 3)))
        {
            set_first(ctx, r, used, k, k + 3);
            return true;
        }
    }
    for m in ctx.mentions.iter().filter(|m| has_first(m)) {
        // before: "first (measured) area"
        let mut k = m.first;
        // "initial wound area", "first patient bmi": the record's word inside the phrase
        if k > 0
            && ctx
                .mentions
                .iter()
                .any(|o| o.last == k && o.first + 1 == k && o.entity().is_some())
            && first_word(k.wrapping_sub(2))
        {
            k -= 1;
        }
        if k > 0 && recorded(k - 1) {
            k -= 1;
        }
        // "first-visit exudate", "first-assessment area"
        if k > 0 && matches!(ctx.w(k - 1), "first-visit" | "first-assessment" | "initial-visit") {
            set_first(ctx, r, used, k - 1, m.first);
            return true;
        }
        if k > 0 && first_word(k - 1) {
            let start = if k >= 2 && ctx.w(k - 2) == "very" {
                k - 2
            } else {
                k - 1
            };
            set_first(ctx, r, used, start, m.first);
            return true;
        }
    }
    false
}

/// "slough at the first assessment but granulation at the latest one", "necrotic at
/// their first visit and granulating at their last": values said of two named visits of
/// the record, each before its own visit phrase. The first phrase sets the visit of the
/// values said before it; the values after it are of the other visit.
fn read_two_visits(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) -> bool {
    // (start, end, first?) of each "at the first/latest assessment"
    let mut phrases = Vec::new();
    for k in 0..ctx.tokens.len() {
        if !matches!(ctx.w(k), "at" | "on" | "in" | "during" | "by") {
            continue;
        }
        let mut j = k + 1;
        if matches!(ctx.w(j), "the" | "their" | "its" | "his" | "her") {
            j += 1;
        }
        if ctx.w(j) == "very" {
            j += 1;
        }
        let (after, first) = match (ctx.w(j), ctx.w(j + 1)) {
            ("first" | "initial" | "earliest" | "baseline" | "1st", _) => (j + 1, true),
            ("last" | "latest" | "final" | "newest" | "current", _) => (j + 1, false),
            ("most", "recent") => (j + 2, false),
            _ => continue,
        };
        let end = if matches!(
            ctx.w(after),
            "assessment" | "visit" | "review" | "one" | "measurement"
        ) {
            after + 1
        } else if matches!(ctx.w(after), "" | "." | "?" | "!") {
            after
        } else {
            continue;
        };
        phrases.push((k, end, first));
    }
    let [(a0, a1, first), (b0, b1, other)] = phrases.as_slice() else {
        return false;
    };
    // each phrase has a value of a visit before it, the second after the first phrase
    let visit_value = |m: &crate::engine::link::Mention| {
        m.value_attributes().iter().any(|q| q.starts_with("assessments."))
            || m.terms()
                .any(|t| crate::engine::plan_ops::term_at_first_visit(ctx.model, t).is_some())
    };
    let before = |lo: usize, hi: usize| {
        ctx.mentions
            .iter()
            .any(|m| m.first >= lo && m.last <= hi && visit_value(m))
    };
    if first == other || !before(0, *a0) || !before(*a1, *b0) {
        return false;
    }
    r.visit_hint = Some(true);
    r.visit_first = *first;
    r.visit_hint_at = Some((*a0, *a1));
    r.other_visit_from = Some(*a1);
    r.consumed.push((*a0, *a1));
    r.consumed.push((*b0, *b1));
    for (mi, o) in ctx.mentions.iter().enumerate() {
        if o.first >= *a0 && o.last <= *a1 || o.first >= *b0 && o.last <= *b1 {
            used[mi] = true;
        }
    }
    true
}

fn set_first(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool], start: usize, end: usize) {
    r.visit_hint = Some(true);
    r.visit_first = true;
    r.visit_hint_at = Some((start, end));
    for (mi, o) in ctx.mentions.iter().enumerate() {
        if o.first >= start && o.last <= end {
            used[mi] = true;
        }
    }
}

/// "wounds whose highest pain score ever was below 3", "open wounds where the lowest pain
/// score across all visits was 6 or more": the extreme of a per-visit measurement over
/// every visit, compared with a number, as filters on the visits (the intent stage found
/// the phrase, [`crate::engine::intent::history_extreme`]):
///
/// | said | filters |
/// |---|---|
/// | highest > n, ≥ n | some visit > n (≥ n) |
/// | highest < n, ≤ n | no visit ≥ n (> n), and some visit with a value |
/// | highest = n | some visit = n, and no visit > n |
///
/// and the mirror image for the lowest. Its words are spoken for (the comparison is not
/// read again).
pub(super) fn read_history_extreme(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let Some(h) = ctx.cues.history_extreme else {
        return;
    };
    let Some(m) = ctx.mentions.iter().find(|m| m.first == h.mention_first) else {
        return;
    };
    let Some(a) = m
        .attributes()
        .map(|(e, a)| qualified(model, e, a))
        .find(|q| latest_of(model, q).is_some())
    else {
        return;
    };
    let attr = model.attribute(&a);
    let attr_unit = attr.and_then(|r| r.attribute.unit.clone());
    let integer = attr.is_some_and(|r| r.attribute.ty == AttributeType::Integer);
    let cmp_unit = h
        .cmp_first
        .and_then(|f| ctx.comparisons.iter().find(|c| c.first == f))
        .and_then(|c| c.unit.clone());
    let v = match (cmp_unit.as_deref(), attr_unit.as_deref()) {
        (Some(u), Some(au)) => convert(h.value, u, au).unwrap_or(h.value),
        _ => h.value,
    };
    let lit = if integer && v.fract() == 0.0 {
        Value::Integer(v as i64)
    } else {
        Value::Real(v)
    };
    let cmp = |op: CompareOp| Constraint::Compare {
        attribute: a.clone(),
        op,
        value: lit.clone(),
        unit: attr_unit.clone(),
    };
    let none = |op: CompareOp| Constraint::Not {
        of: Box::new(cmp(op)),
    };
    let some_value = Constraint::NotNull { attribute: a.clone() };
    use CompareOp::*;
    let max = h.agg == MeasureAgg::Max;
    let filters = match (max, h.op) {
        (true, Gt | Gte) | (false, Lt | Lte) => vec![cmp(h.op)],
        (true, Lt) => vec![none(Gte), some_value],
        (true, Lte) => vec![none(Gt), some_value],
        (false, Gt) => vec![none(Lte), some_value],
        (false, Gte) => vec![none(Lt), some_value],
        (true, Eq) => vec![cmp(Eq), none(Gt)],
        (false, Eq) => vec![cmp(Eq), none(Lt)],
        _ => return,
    };
    let filters = if negated_at(ctx, h.mention_first) {
        // "whose highest pain was not above 5": none of those hold together
        vec![Constraint::Not {
            of: Box::new(Constraint::All { of: filters }),
        }]
    } else {
        filters
    };
    for f in filters {
        st.r.filters.push(Filter {
            constraint: f,
            first: h.at,
            span: ctx.span_of(h.at, h.last),
        });
    }
    st.r.pieces
        .push(piece(ctx, m, PieceKind::Attribute, a.clone(), None));
    st.r.consumed.push((h.at, h.at + 1));
    st.r.consumed.push((h.at, h.last));
    st.skip_cmp = h.cmp_first;
    for (mi, o) in ctx.mentions.iter().enumerate() {
        if o.first >= h.at && o.last <= h.last {
            st.used[mi] = true;
        }
    }
}

/// "… both slough and signs of infection at the same visit", "during the same
/// assessment": one visit holds every value said of the visits.
fn read_same_visit(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
    let visit_noun = |i: usize| matches!(ctx.w(i), "assessment" | "visit" | "review" | "measurement");
    for k in 0..ctx.tokens.len() {
        if matches!(ctx.w(k), "at" | "during" | "in" | "on")
            && ctx.w(k + 1) == "the"
            && ctx.w(k + 2) == "same"
            && visit_noun(k + 3)
        {
            r.visit_hint = Some(false);
            r.visit_hint_at = Some((k, k + 4));
            r.same_visit = true;
            r.consumed.push((k, k + 4));
            for (mi, m) in ctx.mentions.iter().enumerate() {
                if m.first >= k && m.last <= k + 4 {
                    used[mi] = true;
                }
            }
            return;
        }
    }
}

/// "… at some visit in the past 2 weeks but not at their last assessment", "… but not on
/// the most recent visit": the values said of the visits are some visit's, and not the
/// latest visit's; "… at their latest visit but none at their first visit": not the first
/// visit's. The phrase names no date and no visit hint of its own.
pub(super) fn read_not_at_latest(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
    for k in 0..ctx.tokens.len() {
        // "but not at …", "but none at …", "and never on …"
        if !(matches!(ctx.w(k), "but" | "and" | "yet")
            && matches!(ctx.w(k + 1), "not" | "none" | "no" | "never"))
        {
            continue;
        }
        let mut j = k + 2;
        // "… and no slough at their first assessment": the value said again
        if let Some(repeat) = ctx.mentions.iter().find(|m| {
            m.first == j
                && ctx
                    .mentions
                    .iter()
                    .any(|o| o.last <= k && o.phrase == m.phrase && !o.values.is_empty())
        }) {
            j = repeat.last;
        }
        if !matches!(ctx.w(j), "at" | "on" | "in" | "during") {
            continue;
        }
        j += 1;
        if matches!(ctx.w(j), "the" | "their" | "its" | "his" | "her") {
            j += 1;
        }
        let (after, first) = match (ctx.w(j), ctx.w(j + 1)) {
            ("last" | "latest" | "final" | "newest", _) => (j + 1, false),
            ("most", "recent") => (j + 2, false),
            ("first" | "initial" | "earliest" | "baseline" | "1st", _) => (j + 1, true),
            _ => continue,
        };
        // "… but not at their last" ends the question: the visit word is understood
        let said_last = matches!(ctx.w(after), "" | "." | "?" | "!");
        if !said_last
            && !matches!(
                ctx.w(after),
                "assessment" | "visit" | "review" | "one" | "measurement"
            )
        {
            continue;
        }
        let end = if said_last { after } else { after + 1 };
        if first {
            r.not_at_first = true;
        } else {
            r.not_at_latest = true;
        }
        r.consumed.push((k, end));
        for (mi, m) in ctx.mentions.iter().enumerate() {
            if m.first < end && m.last > k {
                used[mi] = true;
            }
        }
        return;
    }
}

/// "the pain score at the 2nd assessment of wound 250", "third visit for pt 42", "the
/// second most recent review of wound 12": one visit of the record, counted from its
/// first (or from its latest) — the visits in date order, that one row.
pub(super) fn nth_visit(ctx: &Ctx<'_>, st: &mut State) {
    if st.r.rank.is_some() {
        return;
    }
    let ordinal = |w: &str| -> Option<u32> {
        Some(match w {
            "first" | "1st" => 1,
            "second" | "2nd" => 2,
            "third" | "3rd" => 3,
            "fourth" | "4th" => 4,
            "fifth" | "5th" => 5,
            "sixth" | "6th" => 6,
            "seventh" | "7th" => 7,
            "eighth" | "8th" => 8,
            "ninth" | "9th" => 9,
            "tenth" | "10th" => 10,
            _ => return None,
        })
    };
    let visit = |w: &str| {
        matches!(
            w,
            "assessment" | "visit" | "review" | "measurement" | "check" | "appointment"
        )
    };
    for k in 0..ctx.tokens.len() {
        // "the most recent assessment of wound 250", "the last visit for pt 42": the latest
        // one, said without an ordinal
        let plain_latest = match (ctx.w(k), ctx.w(k + 1)) {
            ("most", "recent") if visit(ctx.w(k + 2)) => Some(k + 2),
            ("latest" | "last" | "newest" | "final", _) if visit(ctx.w(k + 1)) => Some(k + 1),
            _ => None,
        }
        .filter(|_| matches!(ctx.w(k.wrapping_sub(1)), "the" | "its" | "their" | "his" | "her"))
        // the visit itself is asked for: no value of it said before ("the pain score at the
        // last assessment of wound 250" is the record's latest value, read elsewhere)
        .filter(|_| !ctx.mentions.iter().any(|m| m.last <= k));
        let (n, from_end, noun) = if let Some(noun) = plain_latest {
            (1, true, noun)
        } else {
            let Some(n) = ordinal(ctx.w(k)) else { continue };
            // "second most recent", "2nd last", "second latest": counted from the latest
            let (from_end, noun) = match (ctx.w(k + 1), ctx.w(k + 2)) {
                ("most", "recent") => (true, k + 3),
                ("last" | "latest" | "newest", _) => (true, k + 2),
                _ => (false, k + 1),
            };
            if n == 1 && from_end {
                continue;
            }
            (n, from_end, noun)
        };
        if !visit(ctx.w(noun)) || !matches!(ctx.w(noun + 1), "of" | "for" | "on") {
            continue;
        }
        // one record named by its key ("of wound 250", "for pt 42"): its visits; of many
        // records ("the second visit of each wound") the visit is each one's, which a
        // single ordered list is not — left to the other steps
        let one_record = st.r.filters.iter().any(|f| {
            f.first > noun
                && matches!(&f.constraint, Constraint::Compare { attribute, op: CompareOp::Eq, .. }
                if crate::semantic::split_qualified(attribute).is_some_and(|(e, a)| {
                    ctx.model.entity(e).is_some_and(|x| x.key == a)
                }))
        });
        if !one_record {
            continue;
        }
        // "which clinician did the first assessment of wound 210": other records asked
        // about, through that visit — read by the steps for them
        let asks_other = ctx.cues.who.is_some()
            || (0..k).any(|j| {
                matches!(ctx.w(j), "which" | "what" | "whose")
                    && ctx.mention_covering(j + 1).is_some_and(|mi| {
                        super::state::mention_entity(ctx.model, &ctx.mentions[mi])
                            .is_some_and(|e| e != "assessments")
                    })
            });
        // "latest area versus area at the first assessment for wound 7": the first and
        // latest values side by side, read by their own step
        let two_values = n == 1
            && ctx.tokens.iter().enumerate().any(|(j, t)| {
                !(k..=noun).contains(&j)
                    && matches!(
                        t.text.as_str(),
                        "latest"
                            | "current"
                            | "initial"
                            | "last"
                            | "recent"
                            | "vs"
                            | "versus"
                            | "compared"
                            | "now"
                    )
            });
        if asks_other || two_values {
            continue;
        }
        st.r.entity = Some("assessments".into());
        st.r.entity_source = crate::engine::reading::EntitySource::Named;
        st.r.entity_span = Some(ctx.span_of(noun, noun + 1));
        st.r.rank = Some(crate::engine::reading::RankSpec {
            n: Some(1),
            order: if from_end {
                crate::semantic::SortOrder::Desc
            } else {
                crate::semantic::SortOrder::Asc
            },
            key: crate::engine::reading::RankKey::Attribute("assessments.assessed_on".into()),
            subject: Some("assessments".into()),
            span: ctx.span_of(k, noun + 1),
            skip: n - 1,
            every: false,
        });
        st.r.consumed.push((k, noun + 1));
        if let Some(mi) = ctx.mention_covering(noun) {
            st.used[mi] = true;
        }
        return;
    }
}
