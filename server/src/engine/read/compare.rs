//! Comparisons ("area over 10", "older than 80"), two values of one attribute compared
//! or either of them, and threshold gaps ("more visits than usual").

use crate::semantic::{CompareOp, Constraint, Derived, Grain, TermKind, Value, split_qualified};

use crate::engine::link::{Comparison, EXACT, Subject};
use crate::engine::plan_ops::{first_of, latest_of, negate};
use crate::engine::reading::{
    Cmp, CmpSubject, ColSpec, CompareSpec, Ctx, Dim, DimSpec, EntitySource, Filter, MetricSpec, Reading,
    ThresholdGap,
};
use crate::engine::{LinkMethod, LinkedPiece, PieceKind, TextSpan};

use super::negation::negated_at;
use super::state::{State, groupable, piece, qualified};

/// Mentions inside comparisons belong to them.
pub(super) fn claim_comparison_words(ctx: &Ctx<'_>, st: &mut State) {
    let ms = ctx.mentions;
    // mentions inside comparisons belong to them
    for c in ctx.comparisons {
        for (mi, m) in ms.iter().enumerate() {
            if m.first < c.last && c.first < m.last && Some(mi) != c.subject_mention {
                // the subject mention is consumed below with its role
                st.used[mi] = true;
            }
        }
    }
    for c in ctx.comparisons {
        if let Some(mi) = c.subject_mention {
            st.used[mi] = true;
        }
    }
}

/// Comparisons ("area over 10", "older than 80").
pub(super) fn comparisons(ctx: &Ctx<'_>, st: &mut State) {
    let having_at = share_threshold(ctx, st).or_else(|| aggregate_threshold(ctx, st));
    for c in ctx.comparisons {
        if st.skip_cmp == Some(c.first) {
            continue;
        }
        // words a step read as its own ("not seen for over 10 days")
        if st.r.consumed.iter().any(|&(a, b)| a <= c.first && c.last <= b) {
            continue;
        }
        // the comparison is the groups' condition, read above
        if having_at.is_some_and(|(a, b)| c.first < b && a < c.last) {
            continue;
        }
        // "at least one assessment showing …" said which visits, not how many
        // (its number is inside that phrase; "pain score at the latest assessment was 0"
        // compares a value said after it)
        if st.r.visit_hint_at.is_some_and(|(a, b)| a < c.last && c.last <= b) {
            continue;
        }
        if bucket_threshold(ctx, st, c) || group_threshold(ctx, st, c) || elided_group_count(ctx, st, c) {
            continue;
        }
        // "etiologies with more than 100" with no groups to keep: nothing says what is
        // counted — left unexplained (the user sees the number), never read as a size
        if let Subject::Implied(_) = &c.subject
            && c.subject_mention
                .is_some_and(|mi| ctx.mentions[mi].entity().is_none())
        {
            st.r.unread_comparisons.push(c.first);
            continue;
        }
        read_comparison(ctx, &mut st.r, &mut st.consumed_time, c);
    }
}

/// Two values of one attribute: compared ("DFUs vs VLUs") or either of them.
pub(super) fn two_values(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    let mention_covering = |k: usize| ctx.mention_covering(k);
    // "both a DFU and an arterial ulcer", "a VLU as well as a PI", "a PI and also a skin
    // tear": each value on a related row of its own (one row cannot be both)
    let both = ctx.tokens.iter().any(|t| t.text == "both")
        || ctx
            .tokens
            .windows(3)
            .any(|w| w[0].text == "as" && w[1].text == "well" && w[2].text == "as")
        || ctx
            .tokens
            .windows(2)
            .any(|w| w[0].text == "and" && matches!(w[1].text.as_str(), "also" | "additionally"))
        // "slough at one visit and necrotic tissue at another", "at different visits",
        // "one wound heal and another end in amputation"
        || ctx
            .tokens
            .windows(2)
            .any(|w| matches!(w[0].text.as_str(), "at" | "and") && w[1].text == "another")
        || ctx.tokens.windows(3).any(|w| {
            w[0].text == "at"
                && matches!(w[1].text.as_str(), "different" | "separate")
                && matches!(w[2].text.as_str(), "visits" | "assessments" | "reviews")
        });
    // "one wound heal and another end in amputation": "one" pairs with "another", it is
    // no number
    if let Some(a) = ctx.tokens.iter().position(|t| t.text == "another")
        && let Some(o) = (0..a).find(|&k| ctx.w(k) == "one" && ctx.w(k.wrapping_sub(1)) != "than")
    {
        st.r.consumed.push((o, o + 1));
    }
    if ctx.compares_values() || ctx.cues.words <= 12 || both {
        let mut by_attr: Vec<(String, Vec<Value>)> = Vec::new();
        for f in &st.r.filters {
            if let Constraint::Compare {
                attribute,
                op: CompareOp::Eq,
                value,
                ..
            } = &f.constraint
            {
                match by_attr.iter_mut().find(|(a, _)| a == attribute) {
                    // "healed VLUs … to heal": the same value said twice is one value
                    Some((_, vs)) if vs.contains(value) => {}
                    Some((_, vs)) => vs.push(value.clone()),
                    None => by_attr.push((attribute.clone(), vec![value.clone()])),
                }
            }
        }
        let mut listed: Vec<(String, Vec<Value>)> =
            by_attr.into_iter().filter(|(_, vs)| vs.len() >= 2).collect();
        // "men vs women: how many have a stage 3 or stage 4 pressure injury": every further
        // attribute said with two values is either of them (one record has one stage)
        // (with "both … and also …", each related record keeps its own values)
        let further = if both && !ctx.compares_values() {
            Vec::new()
        } else {
            listed.drain(1.min(listed.len())..).collect::<Vec<_>>()
        };
        for (a2, vs2) in further {
            let first = first_equal(st, &a2);
            st.r.filters.retain(|f| !equals_on(f, &a2));
            either_of(st, a2, vs2, first);
        }
        if let Some((a, vs)) = listed.into_iter().next() {
            let is_a = |f: &Filter| equals_on(f, &a);
            let first = first_equal(st, &a);
            if both && !ctx.compares_values() {
                let own = st.r.entity.as_deref().or(st.provisional_entity.as_deref());
                let related = split_qualified(&a).is_some_and(|(e, _)| Some(e) != own);
                if related {
                    let mut members: Vec<Filter> = st.r.filters.iter().filter(|f| is_a(f)).cloned().collect();
                    members.sort_by_key(|f| f.first);
                    st.r.filters.retain(|f| !is_a(f));
                    // "an open arterial ulcer and also a venous ulcer that has healed": the
                    // other values said of each one (between the conjunctions) hold on that
                    // same related row
                    let rel = split_qualified(&a).map(|(e, _)| e.to_owned()).unwrap_or_default();
                    let bounds: Vec<usize> = members
                        .windows(2)
                        .map(|w| {
                            (w[0].first + 1..w[1].first)
                                .rev()
                                .find(|&k| matches!(ctx.w(k), "and" | "but" | "," | "while" | "as"))
                                .unwrap_or(w[1].first)
                        })
                        .collect();
                    let of_rel = |c: &Constraint| match c {
                        Constraint::Compare { attribute, .. } | Constraint::InSet { attribute, .. } => {
                            split_qualified(attribute).is_some_and(|(e, _)| e == rel)
                        }
                        Constraint::Any { of } if of.len() == 1 => matches!(&of[0],
                            Constraint::Compare { attribute, .. } | Constraint::InSet { attribute, .. }
                                if split_qualified(attribute).is_some_and(|(e, _)| e == rel)),
                        _ => false,
                    };
                    for (i, f) in members.into_iter().enumerate() {
                        let lo = if i == 0 { 0 } else { bounds[i - 1] };
                        let hi = bounds.get(i).copied().unwrap_or(usize::MAX);
                        let mut group = vec![f.constraint.clone()];
                        st.r.filters.retain(|o| {
                            if o.first >= lo && o.first < hi && of_rel(&o.constraint) {
                                group.push(match &o.constraint {
                                    Constraint::Any { of } if of.len() == 1 => of[0].clone(),
                                    c => c.clone(),
                                });
                                false
                            } else {
                                true
                            }
                        });
                        let constraint = if group.len() == 1 {
                            Constraint::Any { of: group }
                        } else {
                            Constraint::RelatedCount {
                                per: None,
                                related: rel.clone(),
                                op: CompareOp::Gte,
                                value: 1,
                                within: None,
                                condition: Some(Box::new(Constraint::All { of: group })),
                            }
                        };
                        st.r.filters.push(Filter {
                            constraint,
                            first: f.first,
                            span: f.span,
                        });
                    }
                    return;
                }
            }
            st.r.filters.retain(|f| !is_a(f));
            if ctx.compares_values() {
                st.r.compare = Some(CompareSpec {
                    attribute: a,
                    values: vs,
                });
            } else {
                // "DFUs and VLUs": either of them
                either_of(st, a, vs, first);
            }
        }
    }
    if ctx.compares_values() && st.r.compare.is_none() && st.r.dims.is_empty() {
        // "compare clinics": the entity named after "compare" is the grouping
        if let Some((ci, _)) = ctx.cues.compare
            && let Some(mi) = (ci + 1..ctx.tokens.len()).find_map(mention_covering)
            && let Some(e) = ms[mi].entity()
        {
            let ent = &model.entities[e];
            if st.r.entity.as_deref() == Some(ent.name.as_str())
                && ent.display_attribute.is_some()
                && matches!(st.r.metric, MetricSpec::None)
            {
                // "compare clinics" alone: count wounds per clinic
            }
            if let Some(d) = &ent.display_attribute
                && st.r.entity.as_deref() != Some(ent.name.as_str())
            {
                st.r.dims.push(Dim {
                    spec: DimSpec::Attribute(format!("{}.{}", ent.name, d)),
                    span: ms[mi].span,
                });
            }
        }
    }
}

/// Whether `f` is `attribute = value`.
fn equals_on(f: &Filter, attribute: &str) -> bool {
    matches!(&f.constraint, Constraint::Compare { attribute: a, op: CompareOp::Eq, .. } if a == attribute)
}

/// Where the first `attribute = value` filter was said.
fn first_equal(st: &State, attribute: &str) -> usize {
    st.r.filters
        .iter()
        .filter(|f| equals_on(f, attribute))
        .map(|f| f.first)
        .min()
        .unwrap_or(0)
}

/// The records have one of `values` ("DFUs and VLUs", "stage 3 or stage 4").
fn either_of(st: &mut State, attribute: String, values: Vec<Value>, first: usize) {
    st.r.filters.push(Filter {
        constraint: Constraint::InSet { attribute, values },
        first,
        span: TextSpan::default(),
    });
}

/// A threshold without a number: "more visits than usual", "pain higher than normal",
/// "a bmi over the limit", "above the threshold", "too many visits".
pub(super) fn read_gaps(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
    let ms = ctx.mentions;
    let norm = |w: &str| {
        matches!(
            w,
            "usual"
                | "normal"
                | "average"
                | "expected"
                | "typical"
                | "baseline"
                | "standard"
                | "avg"
                | "mean"
        )
    };
    let limit = |w: &str| {
        matches!(
            w,
            "threshold"
                | "limit"
                | "cutoff"
                | "cut"
                | "target"
                | "norm"
                | "normal"
                | "range"
                | "average"
                | "usual"
        )
    };
    let up = |w: &str| {
        matches!(
            w,
            "more"
                | "higher"
                | "greater"
                | "bigger"
                | "larger"
                | "longer"
                | "worse"
                | "older"
                | "over"
                | "above"
                | "exceeding"
                | "beyond"
                | "many"
                | "much"
                | "high"
                | "long"
                | "big"
                | "large"
                | "often"
        )
    };
    let down = |w: &str| {
        matches!(
            w,
            "fewer"
                | "less"
                | "lower"
                | "smaller"
                | "shorter"
                | "better"
                | "below"
                | "under"
                | "few"
                | "little"
                | "low"
                | "short"
                | "small"
        )
    };
    // a phrase another step read ("smaller than the baseline area": two values of one
    // record compared) is not a threshold gap
    let taken: Vec<(usize, usize)> = r.consumed.clone();
    for k in 0..ctx.tokens.len() {
        if taken.iter().any(|&(a, b)| a <= k && k < b) {
            continue;
        }
        // (operator position, last token, subject searched after the operator until)
        let found = if ctx.w(k) == "than" {
            let j = if ctx.w(k + 1) == "the" { k + 2 } else { k + 1 };
            if !norm(ctx.w(j)) {
                continue;
            }
            (k.saturating_sub(4)..k)
                .rev()
                .find(|&i| up(ctx.w(i)) || down(ctx.w(i)))
                .map(|op_at| (op_at, j + 1, k))
        } else if matches!(
            ctx.w(k),
            "above" | "over" | "below" | "under" | "exceeding" | "beyond" | "outside"
        ) && ctx.w(k + 1) == "the"
            && limit(ctx.w(k + 2))
        {
            Some((k, k + 3, k))
        } else if ctx.w(k) == "too" && (up(ctx.w(k + 1)) || down(ctx.w(k + 1))) {
            Some((k + 1, k + 2, k + 4))
        } else if matches!(ctx.w(k), "many" | "numerous" | "few")
            && matches!(
                ctx.w(k.wrapping_sub(1)),
                "with" | "have" | "has" | "had" | "having" | "so" | "very" | "recorded" | "done"
            )
        {
            // "clinicians with many assessments": how many is many was not said
            Some((k, k + 1, k + 2))
        } else if ctx.w(k) == "lots" && ctx.w(k + 1) == "of"
            || ctx.w(k) == "lot" && ctx.w(k + 1) == "of" && ctx.w(k.wrapping_sub(1)) == "a"
        {
            Some((k, k + 2, k + 3))
        } else {
            None
        };
        // "many", "lots of" count records: a dictionary term may already say what the
        // words mean ("lots of wounds": multiple)
        let count_words = matches!(ctx.w(k), "many" | "numerous" | "few" | "lots" | "lot");
        if count_words
            && found.is_some_and(|(op_at, _, until)| {
                ms.iter()
                    .any(|m| m.first <= until && op_at < m.last && m.terms().next().is_some())
            })
        {
            continue;
        }
        let Some((op_at, end, until)) = found else {
            continue;
        };
        let op = if down(ctx.w(op_at)) {
            CompareOp::Lt
        } else {
            CompareOp::Gt
        };
        // the subject: a mention after the operator, or just before it
        let inside = ms.iter().position(|m| {
            m.first > op_at && m.last <= until.max(op_at + 1) + 1 && m.first < until.max(op_at + 2)
        });
        let before = ms.iter().rposition(|m| m.last <= op_at && m.last + 3 >= op_at);
        let mut attribute = None;
        let mut related = None;
        // "many", "lots of" count records; said of a measurement ("lots of drainage")
        // they are no threshold (the word stays unexplained and is asked about)
        let counts_rows = matches!(ctx.w(op_at), "many" | "numerous" | "few" | "lots" | "lot");
        for mi in inside.into_iter().chain(before) {
            let m = &ms[mi];
            let is_inside = Some(mi) == inside;
            if counts_rows && m.entity().is_none() {
                continue;
            }
            if let Some((e, a)) = m.attributes().next() {
                attribute = Some(qualified(ctx.model, e, a));
            } else if let Some(e) = m.entity().filter(|_| is_inside) {
                related = Some(ctx.model.entities[e].name.clone());
            } else if let Some(t) = m.terms().next()
                && ctx.model.terms[t].kind == TermKind::Column
            {
                attribute = Some(match ctx.model.terms[t].id.as_str() {
                    "length_column" | "duration_column" => "wounds.days_open".to_owned(),
                    _ => "wounds.latest_area".to_owned(),
                });
            }
            if attribute.is_some() || related.is_some() {
                used[mi] = true;
                break;
            }
        }
        if attribute.is_none() && related.is_none() {
            attribute = match ctx.w(op_at) {
                "bigger" | "larger" | "smaller" | "big" | "large" | "small" => {
                    Some("wounds.latest_area".to_owned())
                }
                "longer" | "shorter" | "older" | "long" | "short" => Some("wounds.days_open".to_owned()),
                _ => None,
            };
        }
        if attribute.is_none() && related.is_none() {
            continue;
        }
        // a per-visit measurement said of wounds: their latest value
        if let Some(a) = &attribute
            && a.starts_with("assessments.")
            && let Some(l) = latest_of(ctx.model, a)
        {
            attribute = Some(l);
        }
        // the words of the phrase ("usual" is also a dictionary word) belong to it
        for (mi, m) in ms.iter().enumerate() {
            if m.first >= op_at && m.first < end {
                used[mi] = true;
            }
        }
        r.gaps.push(ThresholdGap {
            span: ctx.span_of(op_at.min(k), end),
            op,
            attribute,
            related,
        });
    }
}

pub(super) fn read_comparison(
    ctx: &Ctx<'_>,
    r: &mut Reading,
    consumed_time: &mut Option<usize>,
    c: &Comparison,
) {
    let model = ctx.model;
    // "more than 200 assessments in 2025": the period says which related rows count
    let window = |rel: &str| counted_window(ctx, rel, c.last);
    let entity = r.entity.clone().unwrap_or_else(|| "wounds".into());
    let negated = negated_at(ctx, c.first);
    let subject = match &c.subject {
        Subject::Attribute(a) => {
            let per_visit = split_qualified(a).is_some_and(|(e, _)| e == "assessments");
            if per_visit
                && matches!(entity.as_str(), "wounds" | "patients")
                && let Some(latest) = latest_of(model, a)
            {
                // "which wounds had pain >= 8 in the last 2 weeks": a visit of that period
                // with that value, not the latest value and the record's own date
                let dated = (r.visit_hint.is_none() && !negated)
                    .then(|| counted_window(ctx, "assessments", c.last))
                    .flatten();
                let is_dated = dated.is_some();
                if let Some((ti, d)) = dated {
                    *consumed_time = Some(ti);
                    r.filters.push(Filter {
                        constraint: d,
                        first: c.first,
                        span: c.span,
                    });
                }
                match r.visit_hint {
                    _ if is_dated => CmpSubject::Attribute(a.clone()),
                    // "area at the first assessment over 20": the record's first value
                    Some(true) if r.visit_first => match first_of(model, a) {
                        Some(first) => CmpSubject::Attribute(first),
                        None => {
                            let span = ctx.span_of(c.first, c.last);
                            r.notes.push((
                                span,
                                format!(
                                    "\"{}\": the first visit's value is not kept for this measurement, so the latest one was compared",
                                    ctx.text(span)
                                ),
                            ));
                            CmpSubject::Attribute(latest)
                        }
                    },
                    Some(true) => CmpSubject::Attribute(latest),
                    Some(false) => CmpSubject::Attribute(a.clone()),
                    None => CmpSubject::Aggregation {
                        per_visit: a.clone(),
                        latest,
                    },
                }
            } else if r.visit_hint == Some(true)
                && r.visit_first
                && let Some(base) = model.attribute(a).and_then(|x| match &x.attribute.derived {
                    Some(Derived::Latest { attribute, .. }) => Some(attribute.clone()),
                    _ => None,
                })
                && let Some(first) = first_of(model, &base)
            {
                // "area above 50 at the very first assessment": the record's first value
                CmpSubject::Attribute(first)
            } else {
                CmpSubject::Attribute(a.clone())
            }
        }
        // "an area above 50 at the first assessment": the measurement the term names, at
        // the record's first visit, when the model keeps it
        Subject::ColumnTerm(t) if r.visit_hint == Some(true) && r.visit_first => {
            match crate::engine::plan_ops::term_first_of(model, *t) {
                Some(first) => CmpSubject::Attribute(first),
                None => CmpSubject::Column { term: *t },
            }
        }
        Subject::ColumnTerm(t) => CmpSubject::Column { term: *t },
        Subject::Size => match model.terms.iter().position(|t| t.id == "size") {
            Some(t) => CmpSubject::Column { term: t },
            None => CmpSubject::Attribute("wounds.latest_area".into()),
        },
        Subject::Implied(e) => {
            let unit = c.unit.as_deref();
            // "the ones under 30": the question's records, or the previous question's
            let e = match e.as_str() {
                "" => r
                    .entity
                    .clone()
                    .or_else(|| ctx.previous.map(|p| p.entity.clone()))
                    .unwrap_or_default(),
                _ => e.clone(),
            };
            match (e.as_str(), unit) {
                ("patients", None | Some("years")) => CmpSubject::Attribute("patients.age".into()),
                ("patients", Some("kg/m2")) => CmpSubject::Attribute("patients.bmi".into()),
                (_, Some("days" | "weeks" | "months")) => CmpSubject::Attribute("wounds.days_open".into()),
                (_, Some("points")) => CmpSubject::Attribute("wounds.latest_pain".into()),
                ("clinics", None) => CmpSubject::Attribute("clinics.patient_count".into()),
                ("clinicians", None) => CmpSubject::Attribute("clinicians.assessment_count".into()),
                _ => match model.terms.iter().position(|t| t.id == "size") {
                    Some(t) => CmpSubject::Column { term: t },
                    None => CmpSubject::Attribute("wounds.latest_area".into()),
                },
            }
        }
        Subject::Related(rel) => {
            // "more than 150 open wounds", "2 or more venous leg ulcers": only the related
            // rows the words describe are counted
            let condition = c.subject_mention.and_then(|mi| {
                let m = &ctx.mentions[mi];
                m.measure()
                    .and_then(|x| model.measures[x].filter.clone())
                    .or_else(|| related_value(model, rel, m))
            });
            // "patients with more than 3 wounds": a count attribute of the entity, else a
            // related count
            // "which physicians recorded fewer than 130 assessments": a value said before
            // the count names the records that have them (clinicians, by discipline)
            let value_owner = ctx.mentions.iter().filter(|m| m.last <= c.first).find_map(|m| {
                m.entries.iter().find_map(|e| match &e.target {
                    crate::engine::vocab::Target::Value(a, _) => split_qualified(a)
                        .map(|(e, _)| e.to_owned())
                        .filter(|e| model.has_many(e, rel)),
                    _ => None,
                })
            });
            // "patients with 4 or more wounds" while the wounds are what is counted ("…,
            // sorted by number of wounds"): the records named right before "with" own the
            // count — the counted records' count of themselves means nothing
            let said_owner = r.entity.as_ref().filter(|e| *e == rel).and_then(|_| {
                let k = c
                    .first
                    .checked_sub(1)
                    .filter(|&k| matches!(ctx.w(k), "with" | "having" | "who" | "that" | "which"))?;
                let mi = ctx.mention_covering(k.checked_sub(1)?)?;
                let e = super::state::mention_entity(model, &ctx.mentions[mi])?;
                (e != *rel && model.has_many(&e, rel)).then_some(e)
            });
            let owner = said_owner
                .or_else(|| r.entity.clone())
                .or(value_owner)
                .unwrap_or_else(|| match rel.as_str() {
                    "wounds" => "patients".into(),
                    _ => "wounds".into(),
                });
            if r.entity.is_none() {
                r.entity = Some(owner.clone());
                r.entity_source = EntitySource::Implied;
            }
            let attr = model.entity(&owner).and_then(|e| {
                e.attributes
                    .iter()
                    .find(|a| matches!(&a.derived, Some(Derived::CountRelated { entity }) if *entity == *rel))
            });
            // "clinicians who assessed at least one burn in Q3 2026": records reached
            // through the owner's visits, with a period — a visit of that period to such
            // a record (the period dates the visit, not the record)
            let through_visits = !model.has_many(&owner, rel)
                && model.has_many(&owner, "assessments")
                && model.has_one("assessments", rel);
            let at_least_one = c.upper.is_none()
                && (c.op == CompareOp::Gte && c.value <= 1.0 || c.op == CompareOp::Gt && c.value < 1.0);
            if through_visits
                && at_least_one
                && let Some((ti, d)) = counted_window(ctx, "assessments", c.last)
            {
                *consumed_time = Some(ti);
                let mut of = vec![d];
                of.extend(condition);
                push_count_filter(ctx, r, c, negate(Constraint::All { of }, negated), &owner, rel, 1);
                return;
            }
            let dated = window(rel);
            match attr.filter(|_| condition.is_none() && dated.is_none()) {
                Some(a) => CmpSubject::Attribute(format!("{owner}.{}", a.name)),
                None => {
                    let condition = match (condition, dated) {
                        (c, None) => c,
                        (None, Some((ti, d))) => {
                            *consumed_time = Some(ti);
                            Some(d)
                        }
                        (Some(c), Some((ti, d))) => {
                            *consumed_time = Some(ti);
                            Some(Constraint::All { of: vec![c, d] })
                        }
                    };
                    push_related_count(ctx, r, c, &owner, rel, condition, negated);
                    return;
                }
            }
        }
    };
    // "took more than 60 days to heal": the healing time, not the time open
    let heal_after = ctx.tokens[c.last.min(ctx.tokens.len())..]
        .iter()
        .take(4)
        .any(|t| {
            matches!(
                t.text.as_str(),
                "heal" | "healed" | "healing" | "close" | "closed" | "closure"
            )
        });
    // "clinicians with over 200 assessments in 2025": a count attribute said with a
    // period counts only the related rows dated in it
    if let CmpSubject::Attribute(a) = &subject
        && let Some(rel) = crate::engine::link::counts_related(model, a)
        && let Some((ti, dated)) = window(&rel)
        && let Some((owner, _)) = split_qualified(a)
    {
        *consumed_time = Some(ti);
        push_related_count(ctx, r, c, owner, &rel, Some(dated), negated);
        return;
    }
    let subject = match subject {
        // "over 100 days from onset to healing": the day count the question named
        CmpSubject::Attribute(a) if a == "wounds.days_open" && r.days_between.is_some() => {
            CmpSubject::Attribute(r.days_between.clone().unwrap_or(a))
        }
        CmpSubject::Attribute(a) if a == "wounds.days_open" && heal_after => {
            CmpSubject::Attribute("wounds.healing_days".into())
        }
        other => other,
    };
    let target = match &subject {
        CmpSubject::Attribute(a) => a.clone(),
        CmpSubject::Column { term } => model.terms[*term].id.clone(),
        CmpSubject::Aggregation { per_visit, .. } => per_visit.clone(),
    };
    r.pieces
        .push(comparison_piece(ctx, c.span, target, Value::Real(c.value)));
    r.cmps.push(Cmp {
        subject,
        op: c.op,
        value: c.value,
        upper: c.upper,
        unit: c.unit.clone(),
        span: c.span,
        first: c.first,
        negated,
    });
}

/// The plan piece of a comparison read from the question.
fn comparison_piece(ctx: &Ctx<'_>, span: TextSpan, target: String, value: Value) -> LinkedPiece {
    LinkedPiece {
        kind: PieceKind::Comparison,
        target,
        value: Some(value),
        text: ctx.text(span),
        span: Some(span),
        how: LinkMethod::Exact,
        confidence: EXACT,
    }
}

/// "more than 150 open wounds" per `owner`: a count of its related rows (those
/// `condition` describes) compared with the number.
fn push_related_count(
    ctx: &Ctx<'_>,
    r: &mut Reading,
    c: &Comparison,
    owner: &str,
    rel: &str,
    condition: Option<Constraint>,
    negated: bool,
) {
    let n = c.value.max(0.0).round() as u32;
    let constraint = Constraint::RelatedCount {
        per: Some(owner.to_owned()),
        related: rel.to_owned(),
        op: c.op,
        value: n,
        within: None,
        condition: condition.map(Box::new),
    };
    push_count_filter(ctx, r, c, negate(constraint, negated), owner, rel, n);
}

/// The filter a count of `owner`'s related `rel` rows was read as, and its plan piece.
fn push_count_filter(
    ctx: &Ctx<'_>,
    r: &mut Reading,
    c: &Comparison,
    constraint: Constraint,
    owner: &str,
    rel: &str,
    n: u32,
) {
    r.filters.push(Filter {
        constraint,
        first: c.first,
        span: c.span,
    });
    r.pieces.push(comparison_piece(
        ctx,
        c.span,
        format!("{owner}→{rel}"),
        Value::Integer(i64::from(n)),
    ));
}

/// One row per value of `dim`, said by mention `mi` (which is no longer a column to
/// show: "etiologies with …" groups by etiology).
fn group_on(ctx: &Ctx<'_>, st: &mut State, mi: usize, dim: String) {
    st.used[mi] = true;
    st.r.columns
        .retain(|col| !matches!(col, ColSpec::Attribute(a) if *a == dim));
    st.r.pieces.push(piece(
        ctx,
        &ctx.mentions[mi],
        PieceKind::Dimension,
        dim.clone(),
        None,
    ));
    st.r.dims.push(Dim {
        spec: DimSpec::Attribute(dim),
        span: ctx.mentions[mi].span,
    });
}

/// "clinics where more than 70% of the wounds they treat have healed", "etiologies in
/// which over half of the wounds are infected", "clinicians with at least 30 percent of
/// their assessments showing slough": groups kept by the share of their records that match
/// what follows — one row per group with that share, kept by it (SQL `HAVING`), never a
/// percent change compared per record. Returns the token range of the threshold.
fn share_threshold(ctx: &Ctx<'_>, st: &mut State) -> Option<(usize, usize)> {
    let model = ctx.model;
    if !st.r.dims.is_empty() || st.r.having.is_some() {
        return None;
    }
    let n = ctx.tokens.len();
    for k in 0..n {
        let Some((words, op)) = crate::engine::link::op_phrase_at(ctx.tokens, k) else {
            continue;
        };
        let at = k + words.len();
        let num = ctx.tokens.get(at).and_then(|t| t.num);
        let (value, of_at) = match (num, ctx.w(at), ctx.w(at + 1), ctx.w(at + 2)) {
            (Some(v), _, "%" | "percent" | "pct", _) => (v, at + 2),
            (Some(v), _, "per", "cent") => (v, at + 3),
            (_, "half", _, _) => (50.0, at + 1),
            (_, "a" | "one", "third", _) => (100.0 / 3.0, at + 2),
            (_, "a" | "one", "quarter", _) => (25.0, at + 2),
            (_, "two", "thirds", _) => (200.0 / 3.0, at + 2),
            (_, "three", "quarters", _) => (75.0, at + 2),
            _ => continue,
        };
        if ctx.w(of_at) != "of" {
            continue;
        }
        let mut r_at = of_at + 1;
        while matches!(ctx.w(r_at), "the" | "their" | "its" | "all" | "his" | "her") {
            r_at += 1;
        }
        // the records the share is of: "wounds", "patients", "assessments"
        // (an entity word may also name its count measure: "patients", "clinics")
        let Some(rm) = ctx
            .mentions
            .iter()
            .find(|m| m.first == r_at && m.entity().is_some())
        else {
            continue;
        };
        let Some(rel) = rm.entity().map(|e| model.entities[e].name.clone()) else {
            continue;
        };
        // the groups, said before: "clinics where", "etiologies in which"
        let Some((gi, g)) = ctx.mentions.iter().enumerate().rfind(|(_, m)| {
            m.last <= k && (m.entity().is_some() || m.measure().is_none() && m.attributes().next().is_some())
        }) else {
            continue;
        };
        let linking = (g.last..k).all(|i| {
            matches!(
                ctx.w(i),
                "where"
                    | "with"
                    | "whose"
                    | "in"
                    | "which"
                    | "that"
                    | "having"
                    | "have"
                    | "has"
                    | "for"
                    | "at"
                    | "did"
                    | "do"
                    | "does"
                    | "is"
                    | "are"
            )
        });
        if !linking || !ctx.tokens[g.last - 1].text.ends_with('s') || g.names_value() && g.entity().is_none()
        {
            continue;
        }
        let reaches = |e: &str| e != rel && model.has_one(&rel, e);
        let dim = if let Some(e) = g.entity() {
            let ent = &model.entities[e];
            let d = ent.display_attribute.clone().unwrap_or_else(|| ent.key.clone());
            reaches(&ent.name).then(|| format!("{}.{d}", ent.name))
        } else {
            g.attributes()
                .find(|&(e, a)| {
                    groupable(model, e, a)
                        && (model.entities[e].name == rel || reaches(&model.entities[e].name))
                        && matches!(
                            model.entities[e].attributes[a].ty,
                            crate::semantic::AttributeType::Text
                        )
                })
                .map(|(e, a)| qualified(model, e, a))
        };
        let Some(dim) = dim else {
            continue;
        };
        // "of the wounds they treat", "of their patients who": the records' own clause is
        // the condition the share counts
        let mut cond_at = rm.last;
        if matches!(ctx.w(cond_at), "they" | "it")
            && matches!(
                ctx.w(cond_at + 1),
                "treat"
                    | "treats"
                    | "treated"
                    | "see"
                    | "sees"
                    | "saw"
                    | "manage"
                    | "manages"
                    | "have"
                    | "has"
                    | "had"
            )
        {
            st.r.consumed.push((cond_at, cond_at + 2));
            cond_at += 2;
        }
        st.r.entity = Some(rel.clone());
        st.r.entity_source = EntitySource::Implied;
        let rmi = ctx
            .mentions
            .iter()
            .position(|m| m.first == rm.first && m.last == rm.last);
        if let Some(rmi) = rmi {
            st.used[rmi] = true;
        }
        group_on(ctx, st, gi, dim);
        st.r.metric = MetricSpec::Share;
        st.r.share_from = Some(cond_at);
        st.r.having = Some((op, value));
        st.r.consumed.push((g.last, k));
        st.r.consumed.push((k, r_at));
        st.r.pieces.push(comparison_piece(
            ctx,
            ctx.span_of(k, rm.last),
            format!("share of {rel} per group"),
            Value::Real(value),
        ));
        return Some((k, of_at));
    }
    None
}

/// "etiologies whose average initial area is above 10", "clinics with an average BMI over
/// 30": an aggregate said of a set of groups, then compared — the groups kept by it (SQL
/// `HAVING`). Returns the token range of the comparison it read.
fn aggregate_threshold(ctx: &Ctx<'_>, st: &mut State) -> Option<(usize, usize)> {
    let model = ctx.model;
    if !st.r.dims.is_empty() || st.r.having.is_some() {
        return None;
    }
    // "avg initial area is above 15": an aggregate word right before a comparison of a
    // numeric attribute is the metric compared, when nothing else was read as one
    let mut said: Option<(MetricSpec, TextSpan, usize, usize)> = None;
    // the words between the aggregate and what it averages: "the", "of", a verb of
    // recording ("mean recorded pain score")
    let lead_in = |b: usize, at: usize| {
        at >= b
            && at <= b + 2
            && (b..at).all(|k| {
                matches!(ctx.w(k), "the" | "of") || super::super::coverage::is_recording_word(ctx.w(k))
            })
    };
    if matches!(st.r.metric, MetricSpec::None)
        && let Some((a, b, agg)) = ctx.cues.agg
        && agg != crate::semantic::MeasureAgg::Median
        && let Some((ci, c)) = ctx
            .comparisons
            .iter()
            .enumerate()
            .find(|(_, c)| lead_in(b, c.first))
        && let Subject::Attribute(attribute) = &c.subject
        && model
            .attribute(attribute)
            .is_some_and(|r| r.attribute.ty.is_numeric())
        && let Some(si) = c.subject_mention
    {
        let metric = MetricSpec::Agg {
            agg,
            attribute: attribute.clone(),
        };
        said = Some((metric, ctx.span_of(a, ctx.mentions[si].last), ci, a));
    }
    let agg_entity = match said.as_ref().map_or(&st.r.metric, |(m, _, _, _)| m) {
        MetricSpec::Agg { agg, attribute } if *agg != crate::semantic::MeasureAgg::Median => {
            split_qualified(attribute).map(|(e, _)| e.to_owned())
        }
        MetricSpec::Measure(mx) if model.measures[*mx].agg != crate::semantic::MeasureAgg::Median => {
            Some(model.measures[*mx].entity.clone())
        }
        _ => None,
    }?;
    let span = match &said {
        Some((_, span, _, _)) => *span,
        None => st.r.metric_span?,
    };
    // the comparison right after the metric: "[is] above 10 [cm2]", also after the rows
    // it is taken over ("across all their assessments is over 3")
    let mut k = ctx.tokens.iter().position(|t| t.span.start >= span.end)?;
    if matches!(ctx.w(k), "across" | "over" | "for" | "in" | "from")
        && ctx.w(k + 1) == "all"
        && let Some(end) = (k + 2..k + 4).find(|&i| {
            matches!(
                ctx.w(i),
                "assessments" | "visits" | "measurements" | "wounds" | "patients" | "records"
            )
        })
        && (k + 2..end).all(|i| matches!(ctx.w(i), "their" | "its" | "the" | "of"))
    {
        st.r.consumed.push((k, end + 1));
        k = end + 1;
    }
    while matches!(ctx.w(k), "is" | "was" | "are" | "were" | "of") {
        k += 1;
    }
    let (words, op) = crate::engine::link::op_phrase_at(ctx.tokens, k)?;
    let at = k + words.len();
    let value = ctx.tokens.get(at)?.num?;
    let mut last = at + 1;
    if let Some((_, len)) = crate::engine::link::unit_at(ctx.tokens, last) {
        last += len;
    }
    // the groups, said first: "etiologies", "clinics", "body locations"
    let metric_first = ctx.tokens.iter().position(|t| t.span.start >= span.start)?;
    // or periods: "months in 2026 where the average pain was above 4"
    if let Some((b, grain)) = opening_periods(ctx, metric_first)
        && ctx.model.default_time_dimension(&agg_entity).is_some()
    {
        commit_said(ctx, st, said);
        st.r.entity = Some(agg_entity);
        st.r.grain = Some(grain);
        st.r.having = Some((op, value));
        st.r.consumed.push((b, b + 1));
        st.r.consumed.push((k, last));
        st.r.pieces.push(comparison_piece(
            ctx,
            ctx.span_of(k, last),
            format!("per {}", grain.as_str()),
            Value::Real(value),
        ));
        return Some((k, last));
    }
    let (gi, g) = ctx
        .mentions
        .iter()
        .enumerate()
        .find(|(_, m)| m.last <= metric_first && m.measure().is_none())?;
    if !ctx.tokens[g.last - 1].text.ends_with('s')
        || !matches!(
            ctx.w(g.last),
            "with" | "whose" | "where" | "have" | "has" | "having" | "that"
        )
        || g.names_value()
    {
        return None;
    }
    let reaches = |e: &str| model.has_one(&agg_entity, e);
    let dim = if let Some(e) = g.entity() {
        let ent = &model.entities[e];
        let d = ent.display_attribute.clone().unwrap_or_else(|| ent.key.clone());
        reaches(&ent.name).then(|| format!("{}.{d}", ent.name))
    } else {
        g.attributes()
            .find(|&(e, a)| {
                groupable(model, e, a)
                    && reaches(&model.entities[e].name)
                    && matches!(
                        model.entities[e].attributes[a].ty,
                        crate::semantic::AttributeType::Text
                    )
            })
            .map(|(e, a)| qualified(model, e, a))
    }?;
    commit_said(ctx, st, said);
    group_on(ctx, st, gi, dim);
    st.r.having = Some((op, value));
    st.r.consumed.push((k, last));
    st.r.pieces.push(comparison_piece(
        ctx,
        ctx.span_of(k, last),
        "per group".into(),
        Value::Real(value),
    ));
    Some((k, last))
}

/// "months in 2026 with more than 2200 assessments", "which weeks of October had fewer
/// than 300 visits", "years that had over 90 wound onsets": the subject is a set of
/// periods (a plural calendar unit opening the question), and the count keeps the
/// periods — one row per period of the counted records' date, kept by its count (SQL
/// `HAVING`), never a count compared per record.
fn bucket_threshold(ctx: &Ctx<'_>, st: &mut State, c: &Comparison) -> bool {
    let model = ctx.model;
    let Subject::Related(rel) = &c.subject else {
        return false;
    };
    if c.upper.is_some() || !st.r.dims.is_empty() || st.r.entity.as_ref().is_some_and(|e| e != rel) {
        return false;
    }
    let Some((b, grain)) = opening_periods(ctx, c.first) else {
        return false;
    };
    if model.default_time_dimension(rel).is_none() {
        return false;
    }
    let condition = c.subject_mention.and_then(|si| {
        let sm = &ctx.mentions[si];
        sm.measure()
            .and_then(|x| model.measures[x].filter.clone())
            .or_else(|| related_value(model, rel, sm))
    });
    // "wound onsets", "healings": the date the records are counted on
    if let Some(d) = c
        .subject_mention
        .and_then(|si| ctx.mentions[si].time_dimension())
        .filter(|&d| {
            crate::semantic::split_qualified(&model.time_dimensions[d].attribute)
                .is_some_and(|(e, _)| e == rel)
        })
    {
        st.time_dim = Some(model.time_dimensions[d].name.clone());
    }
    st.r.entity = Some(rel.clone());
    st.r.entity_source = EntitySource::Implied;
    if let Some(si) = c.subject_mention {
        st.used[si] = true;
    }
    if let Some(cond) = condition {
        st.r.filters.push(Filter {
            constraint: cond,
            first: c.first,
            span: c.span,
        });
    }
    st.r.grain = Some(grain);
    st.r.having = Some((c.op, c.value));
    st.r.consumed.push((b, b + 1));
    st.r.pieces.push(comparison_piece(
        ctx,
        c.span,
        format!("{rel} per {}", grain.as_str()),
        Value::Real(c.value),
    ));
    true
}

/// The metric an aggregate word said before a comparison ("avg initial area is above
/// 15"), once the groups it is compared for are found.
fn commit_said(ctx: &Ctx<'_>, st: &mut State, said: Option<(MetricSpec, TextSpan, usize, usize)>) {
    let Some((metric, span, ci, a)) = said else {
        return;
    };
    let c = &ctx.comparisons[ci];
    if let (MetricSpec::Agg { attribute, .. }, Some(si)) = (&metric, c.subject_mention) {
        st.r.pieces.push(piece(
            ctx,
            &ctx.mentions[si],
            PieceKind::Attribute,
            attribute.clone(),
            None,
        ));
    }
    st.r.metric = metric;
    st.r.metric_span = Some(span);
    st.r.consumed.push((a, c.first));
}

/// A plural calendar unit opening the question before token `before` ("months in 2026
/// with …", "which weeks had …"): its token and grain — the periods are the subject.
fn opening_periods(ctx: &Ctx<'_>, before: usize) -> Option<(usize, Grain)> {
    let b = (0..before).find(|&k| matches!(ctx.w(k), "days" | "weeks" | "months" | "quarters" | "years"))?;
    let opening = (0..b).all(|k| {
        !ctx.tokens[k].is_wordlike()
            || matches!(
                ctx.w(k),
                "which" | "what" | "the" | "list" | "show" | "me" | "all" | "give" | "find" | "those" | "any"
            )
    });
    let grain = match ctx.w(b) {
        "days" => Grain::Day,
        "weeks" => Grain::Week,
        "months" => Grain::Month,
        "quarters" => Grain::Quarter,
        _ => Grain::Year,
    };
    (opening
        && matches!(
            ctx.w(b + 1),
            "in" | "of"
                | "during"
                | "with"
                | "that"
                | "which"
                | "where"
                | "when"
                | "having"
                | "had"
                | "have"
                | "has"
        ))
    .then_some((b, grain))
}

/// "etiologies with more than 20 open wounds", "disciplines with fewer than 5
/// clinicians": the question's subject is a set of values (a groupable attribute said in
/// the plural before any records), and the count keeps the groups — one row per value,
/// kept by its count (SQL `HAVING`), never a count compared per record.
fn group_threshold(ctx: &Ctx<'_>, st: &mut State, c: &Comparison) -> bool {
    let model = ctx.model;
    let Subject::Related(rel) = &c.subject else {
        return false;
    };
    if c.upper.is_some() || st.r.entity.as_ref().is_some_and(|e| e != rel) {
        return false;
    }
    if !st.r.dims.is_empty() {
        return grouped_threshold(ctx, st, c, rel);
    }
    // the attribute mention that opens the question ("etiologies", "body locations")
    let Some((mi, m)) = ctx
        .mentions
        .iter()
        .enumerate()
        .find(|(_, m)| m.last <= c.first && m.entity().is_none() && m.measure().is_none())
    else {
        return false;
    };
    let before_other = ctx.mentions[..mi]
        .iter()
        .all(|o| o.entity().is_none() && o.measure().is_none());
    let plural = ctx.tokens[m.last - 1].text.ends_with('s');
    let joined = |e: usize| model.has_one(rel, &model.entities[e].name);
    let Some(attribute) = m
        .attributes()
        .find(|&(e, a)| {
            groupable(model, e, a)
                && joined(e)
                && !model.entities[e].attributes[a].ty.is_numeric()
                && !matches!(
                    model.entities[e].attributes[a].ty,
                    crate::semantic::AttributeType::Date | crate::semantic::AttributeType::Boolean
                )
        })
        .map(|(e, a)| qualified(model, e, a))
    else {
        return false;
    };
    // a value ("smokers", "physicians") names records, not a set of values
    if !before_other
        || !plural
        || m.names_value()
        || !matches!(
            ctx.w(m.last),
            "with"
                | "having"
                | "that"
                | "which"
                | "where"
                | "have"
                | "has"
                | "had"
                | "show"
                | "saw"
                | "recorded"
        )
    {
        return false;
    }
    st.r.entity = Some(rel.clone());
    st.r.entity_source = EntitySource::Implied;
    group_on(ctx, st, mi, attribute);
    keep_groups_by_count(ctx, st, c, rel)
}

/// The groups are kept by the count `c` compares (SQL `HAVING`): the counted records'
/// own condition, if the count said one ("more than 20 open wounds"), is a filter.
fn keep_groups_by_count(ctx: &Ctx<'_>, st: &mut State, c: &Comparison, rel: &str) -> bool {
    let condition = c.subject_mention.and_then(|si| {
        let sm = &ctx.mentions[si];
        sm.measure()
            .and_then(|x| ctx.model.measures[x].filter.clone())
            .or_else(|| related_value(ctx.model, rel, sm))
    });
    if let Some(si) = c.subject_mention {
        st.used[si] = true;
    }
    if let Some(cond) = condition {
        st.r.filters.push(Filter {
            constraint: cond,
            first: c.first,
            span: c.span,
        });
    }
    st.r.having = Some((c.op, c.value));
    st.r.pieces.push(comparison_piece(
        ctx,
        c.span,
        format!("{rel} per group"),
        Value::Real(c.value),
    ));
    true
}

/// "open wounds per etiology, only show etiologies with more than 100", "wound counts by
/// clinic, only clinics with over 300": a number said of the groups with nothing counted
/// after it is the groups' count of the answer's own records (SQL `HAVING`), not a size
/// or a count kept on each group's record.
fn elided_group_count(ctx: &Ctx<'_>, st: &mut State, c: &Comparison) -> bool {
    let model = ctx.model;
    if !matches!(c.subject, Subject::Implied(_))
        || c.upper.is_some()
        || c.unit.is_some()
        || st.r.dims.is_empty()
        || st.r.having.is_some()
        || !matches!(
            ctx.w(c.last),
            "" | "." | "," | ";" | "?" | "please" | "pls" | "only"
        )
    {
        return false;
    }
    let Some(rel) = st.r.entity.clone() else {
        return false;
    };
    // the answer counts its records ("open wounds per etiology", "wound counts by clinic")
    let counts = match &st.r.metric {
        MetricSpec::None | MetricSpec::Count => true,
        MetricSpec::Measure(x) => {
            model.measures[*x].agg == crate::semantic::MeasureAgg::Count && model.measures[*x].entity == rel
        }
        _ => false,
    };
    let counted_measure = st.measures.iter().all(|&(_, x)| {
        model.measures[x].agg == crate::semantic::MeasureAgg::Count && model.measures[x].entity == rel
    });
    if !counts || !counted_measure {
        return false;
    }
    // the groups named right before "with": an attribute grouped on, or the records
    // whose label (or column word) the answer is grouped by
    let Some(m) = ctx.mentions.iter().rev().find(|m| m.last <= c.first) else {
        return false;
    };
    if !matches!(ctx.w(m.last), "with" | "having") || !ctx.tokens[m.last - 1].text.ends_with('s') {
        return false;
    }
    let named_entity = super::state::mention_entity(model, m);
    let grouped = st.r.dims.iter().any(|d| match &d.spec {
        DimSpec::Attribute(x) => {
            m.attributes().any(|(e, a)| qualified(model, e, a) == *x)
                || named_entity
                    .as_deref()
                    .is_some_and(|e| x.split('.').next() == Some(e))
        }
        DimSpec::ColumnTerm { term, mention } => {
            m.terms().any(|t| t == *term)
                || named_entity.as_deref().is_some_and(|e| {
                    ctx.mentions[*mention]
                        .phrase
                        .split(' ')
                        .any(|w| model.find_entity(w).is_some_and(|x| x.name == e))
                })
        }
    });
    if !grouped || named_entity.as_deref() == Some(rel.as_str()) {
        return false;
    }
    keep_groups_by_count(ctx, st, c, &rel)
}

/// "wound counts by etiology, only etiologies with more than 20 wounds": the groups are
/// already read, and the same attribute said again in the plural before the count names
/// them — the count keeps groups (SQL `HAVING`); it is not a count of wounds per wound.
fn grouped_threshold(ctx: &Ctx<'_>, st: &mut State, c: &Comparison, rel: &str) -> bool {
    let model = ctx.model;
    if st.r.having.is_some() {
        return false;
    }
    let named = ctx
        .mentions
        .iter()
        .enumerate()
        .rfind(|(_, m)| m.last <= c.first && m.entity().is_none() && m.measure().is_none())
        .filter(|(_, m)| {
            let grouped = m.attributes().any(|(e, a)| {
                let q = qualified(model, e, a);
                st.r.dims
                    .iter()
                    .any(|d| matches!(&d.spec, DimSpec::Attribute(x) if *x == q))
            }) || m
                .terms()
                .any(|t| model.terms[t].kind == crate::semantic::TermKind::Column);
            grouped
                && !m.names_value()
                && ctx.tokens[m.last - 1].text.ends_with('s')
                && matches!(
                    ctx.w(m.last),
                    "with" | "having" | "that" | "which" | "where" | "have" | "has" | "had"
                )
        })
        .map(|(mi, _)| mi);
    // "wounds by location, only those with at least 100 wounds": a count of the counted
    // records themselves cannot be one record's; with groups it is the group's
    let self_count = st.r.entity.as_deref() == Some(rel)
        && matches!(
            ctx.w(c.first.wrapping_sub(1)),
            "with" | "having" | "have" | "has" | "had"
        );
    if named.is_none() && !self_count {
        return false;
    }
    if let Some(mi) = named {
        st.used[mi] = true;
    }
    keep_groups_by_count(ctx, st, c, rel)
}

/// A period said right after a count of related rows ("200 assessments in 2025", "3
/// wounds since January"): the time expression's index and the condition on the related
/// rows' own date.
pub(super) fn counted_window(ctx: &Ctx<'_>, rel: &str, after: usize) -> Option<(usize, Constraint)> {
    let dim = ctx.model.default_time_dimension(rel)?;
    let (ti, t) = ctx.times.iter().enumerate().find(|(_, t)| {
        !t.all_time
            && (t.first == after
                || t.first == after + 1 && matches!(ctx.w(after), "recorded" | "done" | "seen" | "opened"))
    })?;
    Some((ti, period_between(ctx, &dim.attribute, t)))
}

/// `attribute` within the period `t` (its days up to today, both ends included).
pub(super) fn period_between(
    ctx: &Ctx<'_>,
    attribute: &str,
    t: &crate::engine::time::TimeExpr,
) -> Constraint {
    let last_day = t.end.pred_opt().unwrap_or(t.end).min(ctx.today);
    Constraint::Between {
        attribute: attribute.to_owned(),
        min: Value::Text(t.start.format("%Y-%m-%d").to_string()),
        max: Value::Text(last_day.format("%Y-%m-%d").to_string()),
        unit: None,
    }
}

/// A value of the related entity said in the subject of a count ("2 or more venous leg
/// ulcers": etiology is venous leg ulcer).
fn related_value(
    model: &crate::semantic::SemanticModel,
    rel: &str,
    m: &crate::engine::link::Mention,
) -> Option<Constraint> {
    let prefix = format!("{rel}.");
    m.entries
        .iter()
        .find_map(|e| match &e.target {
            crate::engine::vocab::Target::Value(a, v) if a.starts_with(&prefix) => {
                Some(Constraint::Compare {
                    attribute: a.clone(),
                    op: CompareOp::Eq,
                    value: v.clone(),
                    unit: None,
                })
            }
            _ => None,
        })
        .or_else(|| {
            m.values
                .iter()
                .find(|h| h.attribute.starts_with(&prefix) && !h.prefix)
                .map(|h| Constraint::Compare {
                    attribute: h.attribute.clone(),
                    op: CompareOp::Eq,
                    value: Value::Text(h.value.clone()),
                    unit: None,
                })
        })
        .filter(|_| model.entity(rel).is_some())
}

/// "which clinicians have recorded fewer than": a comparison word with no number after it
/// is said back as what was not applied, never read as nothing.
pub(super) fn dangling_operators(ctx: &Ctx<'_>, st: &mut State) {
    for k in 0..ctx.tokens.len() {
        let Some((words, _)) = crate::engine::link::op_phrase_at(ctx.tokens, k) else {
            continue;
        };
        // only the comparative forms that need a number ("fewer than", "at least")
        if words.len() < 2 {
            continue;
        }
        let after = k + words.len();
        let has_number = (after..(after + 3).min(ctx.tokens.len())).any(|i| ctx.tokens[i].num.is_some());
        let in_comparison = ctx.comparisons.iter().any(|c| c.first <= k && k < c.last);
        let in_time = ctx.times.iter().any(|t| t.first <= k && k < t.last);
        // "at least once": which visits, read with the visit hint
        let in_visit_hint = st.r.visit_hint_at.is_some_and(|(a, b)| a <= k && k < b);
        // read by another step: "larger than their initial area", "more than half of"
        let read = st.r.consumed.iter().any(|&(a, b)| a <= k && k < b);
        if has_number
            || read
            || in_visit_hint
            || in_comparison
            || in_time
            || ctx.cues.rank.is_some_and(|r| r.first <= k && k < r.last)
        {
            continue;
        }
        // "than usual", "than normal" are threshold gaps, read elsewhere
        if st
            .r
            .gaps
            .iter()
            .any(|g| g.span.start <= ctx.tokens[k].span.start && ctx.tokens[k].span.end <= g.span.end)
        {
            continue;
        }
        let span = ctx.span_of(k, after);
        if st.r.notes.iter().any(|(s, _)| *s == span) {
            continue;
        }
        st.r.notes.push((
            span,
            format!(
                "\"{}\": no number was given, so nothing was compared",
                ctx.text(span)
            ),
        ));
    }
}
