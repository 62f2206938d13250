//! Values, booleans and attributes named in the question: a filter, a list column, an
//! aggregate's attribute or a value said of every visit ("wounds with high exudate").

use crate::semantic::{AttributeRole, AttributeType, CompareOp, Constraint, MeasureAgg, TermKind, Value};

use crate::engine::plan_ops::{first_of, latest_of, negate};
use crate::engine::reading::{
    ColSpec, CompareSpec, Ctx, EntitySource, Filter, MetricSpec, PREFIX, TermUse, ValueChoice, VisitValue,
};
use crate::engine::vocab::Target;
use crate::engine::{LinkMethod, PieceKind};

use super::measures::typical_agg;
use super::negation::{negated_after, negated_at, negated_in_list};
use super::state::{State, draft_label, negated_equals, piece, qualified, value_label};

/// Values, booleans, attributes, terms and time dimensions.
pub(super) fn values(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    for mi in 0..ms.len() {
        if st.used[mi] {
            continue;
        }
        let m = &ms[mi];
        // the records asked about: of the question's entity, or said first ("which
        // physicians …", "how many wound nurses …")
        let heads = (0..m.first).all(|k| {
            matches!(
                ctx.w(k),
                "which"
                    | "what"
                    | "list"
                    | "show"
                    | "me"
                    | "how"
                    | "many"
                    | "the"
                    | "all"
                    | "our"
                    | "give"
                    | "count"
                    | "number"
                    | "of"
                    | "no"
                    | "."
                    | "find"
                    | "are"
                    | "there"
                    | "any"
            )
        });
        let subject = heads
            || st.r.entity.as_deref().is_some_and(|e| {
                m.values.iter().any(|v| v.attribute.split('.').next() == Some(e))
                    || m.entries.iter().any(|en| match &en.target {
                        Target::Value(a, _) => a.split('.').next() == Some(e),
                        _ => false,
                    })
            });
        let negated =
            negated_at(ctx, m.first) || negated_after(ctx, m.last, subject) || negated_in_list(ctx, m);
        // a value-kind or qualifier term wins over a plain value ("foot", "necrotic")
        let term = m.terms().next();
        let entity_phrase = m.phrase.split(' ').all(|w| {
            matches!(w, "by" | "per" | "which" | "each" | "what" | "every") || model.find_entity(w).is_some()
        });
        if let Some(t) = term
            && st.r.entity.is_none()
            && let Some(e) = m.phrase.split(' ').find_map(|w| model.find_entity(w))
            && (entity_phrase || model.terms[t].kind != TermKind::Column)
        {
            // "diabetic wounds", "which clinic": the noun is the entity
            st.r.entity = Some(e.name.clone());
            st.r.entity_source = EntitySource::Named;
            st.r.entity_span = Some(m.span);
            if model.terms[t].kind == TermKind::Column {
                st.r.pieces
                    .push(piece(ctx, m, PieceKind::Entity, e.name.clone(), None));
                st.used[mi] = true;
                continue;
            }
        }
        if let Some(t) = term {
            let kind = model.terms[t].kind;
            if kind == TermKind::Column {
                // not in a grouping: an entity word ("clinic"), an attribute ("depth") or
                // a list column ("date", "size")
                if let Some(e) = m.entity() {
                    if st.r.entity.is_none() {
                        st.r.entity = Some(model.entities[e].name.clone());
                        st.r.entity_source = EntitySource::Named;
                        st.r.entity_span = Some(m.span);
                        st.r.pieces.push(piece(
                            ctx,
                            m,
                            PieceKind::Entity,
                            model.entities[e].name.clone(),
                            None,
                        ));
                    }
                    st.used[mi] = true;
                    continue;
                }
                if matches!(m.phrase.as_str(), "where" | "when")
                    && m.first > 0
                    && ctx.w(m.first - 1) != "from"
                {
                    // "etiologies where avg area is above 15", "wounds where pain ≥ 8": a
                    // relative word, not a column (also not the column an aggregate is of)
                    if m.phrase == "where" || ctx.cues.agg.is_some() {
                        st.used[mi] = true;
                        continue;
                    }
                }
                if ctx.cues.agg.is_some()
                    && matches!(st.r.metric, MetricSpec::None)
                    && let Some((_, _, agg)) = ctx.cues.agg
                {
                    st.r.metric = MetricSpec::AggColumn {
                        agg,
                        term: t,
                        mention: mi,
                    };
                    st.r.metric_span = Some(m.span);
                    st.used[mi] = true;
                    continue;
                }
                let per_row = ctx.tokens[m.last..]
                    .iter()
                    .take(6)
                    .any(|t| matches!(t.text.as_str(), "have" | "has" | "been" | "each" | "every"));
                if m.phrase.starts_with("how ") && matches!(st.r.metric, MetricSpec::None) && !per_row {
                    // "how long …", "how big …": a question about that column, averaged
                    let heal = ctx
                        .tokens
                        .iter()
                        .any(|t| matches!(t.text.as_str(), "heal" | "healed" | "healing" | "close"));
                    if heal {
                        for (oi, o) in ms.iter().enumerate() {
                            if o.phrase
                                .split(' ')
                                .any(|w| matches!(w, "heal" | "healed" | "healing" | "close"))
                            {
                                st.used[oi] = true;
                            }
                        }
                    }
                    st.r.metric = if heal && m.phrase == "how long" {
                        MetricSpec::Agg {
                            agg: MeasureAgg::Avg,
                            attribute: "wounds.healing_days".into(),
                        }
                    } else {
                        MetricSpec::AggColumn {
                            agg: MeasureAgg::Avg,
                            term: t,
                            mention: mi,
                        }
                    };
                    st.r.metric_span = Some(m.span);
                    st.used[mi] = true;
                    continue;
                }
                if matches!(model.terms[t].id.as_str(), "date") && m.phrase == "when" {
                    // "when …?": the date asked about
                    st.r.columns.push(ColSpec::ColumnTerm { term: t, mention: mi });
                    st.used[mi] = true;
                    continue;
                }
                if matches!(model.terms[t].id.as_str(), "name_column") && m.phrase == "who" {
                    st.used[mi] = true;
                    continue;
                }
                if matches!(m.phrase.as_str(), "where" | "when") && m.first > 0 {
                    // "wounds where pain ≥ 8": a relative word, not a column
                    st.used[mi] = true;
                    continue;
                }
                st.r.columns.push(ColSpec::ColumnTerm { term: t, mention: mi });
                st.used[mi] = true;
                continue;
            }
            // "average" is the mean unless the user picks the median (its badge, as the
            // Glossary says); "mean" names the mean itself, "total" is read by the intent
            if kind == TermKind::Aggregation
                && (model.terms[t].id == "total"
                    || model.terms[t].id == "average"
                        && (m.phrase == "mean"
                            || matches!(
                                st.r.metric,
                                MetricSpec::AggColumn { .. } | MetricSpec::TermMeasure { .. }
                            )))
            {
                st.used[mi] = true;
                continue;
            }
            let after_noun = m.first > 0
                && ms.iter().any(|o| {
                    o.last == m.first
                        && (o.entity().is_some()
                            || !o.values.is_empty()
                            || o.entries.iter().any(|e| matches!(e.target, Target::Value(..))))
                });
            if kind == TermKind::Measure
                && matches!(m.phrase.as_str(), "numbers" | "number" | "volume")
                && after_noun
            {
                // "DFU numbers": how many of them
                st.used[mi] = true;
                continue;
            }
            // "a significant difference", "a growing number": the word qualifies a
            // quantity, not the rows
            if matches!(
                ctx.w(m.last),
                "number"
                    | "numbers"
                    | "difference"
                    | "differences"
                    | "change"
                    | "changes"
                    | "increase"
                    | "decrease"
                    | "rise"
                    | "fall"
                    | "amount"
                    | "proportion"
                    | "share"
                    | "rate"
                    | "rates"
                    | "trend"
                    | "gap"
                    | "variation"
                    | "effect"
                    | "impact"
                    | "drop"
                    | "jump"
            ) && kind != TermKind::Measure
            {
                st.used[mi] = true;
                continue;
            }
            // "is the healing rate improving", "is the number of VLUs growing": a change
            // over time asked about a measure, not a kind of wound
            let yes_no = matches!(ctx.w(0), "is" | "are" | "has" | "have" | "did" | "does" | "do");
            let after_quantity = ms.iter().any(|o| {
                o.last <= m.first
                    && o.last + 3 >= m.first
                    && o.measure()
                        .is_some_and(|x| model.measures[x].agg != MeasureAgg::Count || yes_no)
            }) || ctx.cues.count.is_some_and(|c| c < m.first) && yes_no;
            if kind == TermKind::Trend && model.terms[t].id != "over_time" && after_quantity {
                st.r.change_term = Some(m.first);
                st.used[mi] = true;
                continue;
            }
            // "pain level for each open wound": the word also names a measurement, shown
            // (per wound its latest, as the restatement says) — never dropped
            if kind == TermKind::Aggregation
                && let Some((e, a)) = m
                    .attributes()
                    .find(|&(e, a)| model.entities[e].attributes[a].ty.is_numeric())
            {
                let q = qualified(model, e, a);
                if let Some((
                    _,
                    _,
                    agg @ (MeasureAgg::Avg | MeasureAgg::Median | MeasureAgg::Max | MeasureAgg::Min),
                )) = ctx.cues.agg
                    && matches!(st.r.metric, MetricSpec::None)
                {
                    // "average pain level by clinic": the aggregate of that measurement
                    st.r.metric = MetricSpec::Agg {
                        agg,
                        attribute: q.clone(),
                    };
                    st.r.metric_span = Some(m.span);
                } else if !st
                    .r
                    .columns
                    .iter()
                    .any(|c| matches!(c, ColSpec::Attribute(x) if *x == q))
                {
                    st.r.columns.push(ColSpec::Attribute(q));
                }
            }
            st.r.terms.push(TermUse {
                term: t,
                mention: mi,
                anchor: String::new(),
                negated,
                first: m.first,
            });
            st.used[mi] = true;
            continue;
        }
        if let Some(d) = m.time_dimension() {
            st.time_dim = Some(model.time_dimensions[d].name.clone());
        }
        // "none of their wounds": a quantifier, not the value "none" — left unexplained
        // (reported) rather than read as a value
        if m.phrase == "none" && ctx.w(m.last) == "of" {
            continue;
        }
        // values
        let mut hits: Vec<(String, Value, String)> = Vec::new();
        for e in &m.entries {
            if let Target::Value(a, v) = &e.target
                && !hits.iter().any(|(ha, hv, _)| ha == a && hv == v)
            {
                hits.push((a.clone(), v.clone(), value_label(model, a, v)));
            }
        }
        for h in &m.values {
            let v = Value::Text(h.value.clone());
            if !hits.iter().any(|(ha, hv, _)| *ha == h.attribute && *hv == v) {
                hits.push((h.attribute.clone(), v, h.value.clone()));
            }
        }
        if !hits.is_empty() {
            st.used[mi] = true;
            // a value named like a time dimension ("healed") also names the date column
            for (_, v, _) in &hits {
                if let Some(s) = v.as_str()
                    && model.time_dimension(s).is_some()
                {
                    st.time_dim.get_or_insert_with(|| s.to_owned());
                }
            }
            // "pts registered at Harborview": the clinic reached through the reference
            // the verb names (the patient's), not the one the records reach by default
            if let Some((fk, verb)) = referenced_by_verb(ctx, m, &hits, st.provisional_entity.as_deref()) {
                for h in &mut hits {
                    h.0 = fk.clone();
                }
                // the verb says whose clinic, not which date ("registered" is also a
                // time word)
                if let Some(d) = ms
                    .iter()
                    .find(|o| o.first == verb && o.last == verb + 1)
                    .and_then(|o| o.time_dimension())
                    && st.time_dim.as_deref() == Some(model.time_dimensions[d].name.as_str())
                {
                    st.time_dim = None;
                }
            }
            // (in a follow-up with no records named: the previous question's records)
            let records = st
                .provisional_entity
                .as_deref()
                .or_else(|| ctx.previous.map(|p| p.entity.as_str()));
            let per_visit = hits.len() == 1
                && hits[0].0.starts_with("assessments.")
                && matches!(records, Some("wounds" | "patients"));
            if per_visit && let Some(latest) = latest_of(model, &hits[0].0) {
                let (a, v, label) = hits.remove(0);
                st.r.pieces
                    .push(piece(ctx, m, PieceKind::Value, a.clone(), Some(v.clone())));
                let first = st.r.visit_first.then(|| first_of(model, &a)).flatten();
                if let Some(hint) = st.r.visit_hint
                    && (first.is_some() || !st.r.visit_first)
                {
                    let attr = match (hint, first) {
                        (true, Some(first)) => first,
                        (true, None) => latest,
                        (false, _) => a,
                    };
                    let c = Constraint::Compare {
                        attribute: attr,
                        op: CompareOp::Eq,
                        value: v,
                        unit: None,
                    };
                    st.r.filters.push(Filter {
                        constraint: negate(c, negated),
                        first: m.first,
                        span: m.span,
                    });
                    continue;
                }
                st.r.visit_values.push(VisitValue {
                    per_visit: a,
                    latest,
                    value: v,
                    label,
                    first: m.first,
                    span: m.span,
                    negated,
                });
                continue;
            }
            if hits.len() == 1 {
                // a single prefix match ("Riverside"), or only prefix matches: a
                // low-confidence link
                let prefix = hits[0].1.as_str().is_some() && m.values.iter().any(|h| h.prefix)
                    || m.values.iter().all(|h| h.prefix) && m.entries.is_empty();
                let (a, v, _) = hits.remove(0);
                let mut p = piece(ctx, m, PieceKind::Value, a.clone(), Some(v.clone()));
                if prefix {
                    p.how = LinkMethod::Fuzzy;
                    p.confidence = PREFIX;
                }
                st.r.pieces.push(p);
                let c = Constraint::Compare {
                    attribute: a,
                    op: CompareOp::Eq,
                    value: v,
                    unit: None,
                };
                st.r.filters.push(Filter {
                    constraint: negate(c, negated),
                    first: m.first,
                    span: m.span,
                });
            } else {
                st.r.values.push(ValueChoice {
                    mention: mi,
                    hits,
                    negated,
                    first: m.first,
                });
            }
            continue;
        }
        // attributes
        let attrs: Vec<(usize, usize)> = m.attributes().collect();
        if let Some(&(e, a)) = attrs.first() {
            let attr = &model.entities[e].attributes[a];
            let q = qualified(model, e, a);
            st.used[mi] = true;
            if attr.ty == AttributeType::Boolean
                && !ctx.compares_values()
                && q.starts_with("assessments.")
                && matches!(st.provisional_entity.as_deref(), Some("wounds" | "patients"))
                && let Some(latest) = latest_of(model, &q)
            {
                st.r.pieces.push(piece(
                    ctx,
                    m,
                    PieceKind::Attribute,
                    q.clone(),
                    Some(Value::Bool(!negated)),
                ));
                // "infection signs at the first visit": the record's first value
                let first = st.r.visit_first.then(|| first_of(model, &q)).flatten();
                match st.r.visit_hint.filter(|_| !st.r.visit_first || first.is_some()) {
                    Some(hint) => {
                        let attribute = match (hint, first) {
                            (true, Some(first)) => first,
                            (true, None) => latest,
                            (false, _) => q,
                        };
                        let c = negated_equals(
                            model,
                            st.provisional_entity.as_deref(),
                            attribute,
                            Value::Bool(true),
                            negated,
                        );
                        st.r.filters.push(Filter {
                            constraint: c,
                            first: m.first,
                            span: m.span,
                        });
                    }
                    // negated as a whole: "never had signs of infection at any
                    // visit" is no visit with them, not a visit without them
                    None => st.r.visit_values.push(VisitValue {
                        per_visit: q,
                        latest,
                        value: Value::Bool(true),
                        label: draft_label(&attr.name),
                        first: m.first,
                        span: m.span,
                        negated,
                    }),
                }
                continue;
            }
            if attr.ty == AttributeType::Boolean && !ctx.compares_values() {
                st.r.pieces.push(piece(
                    ctx,
                    m,
                    PieceKind::Attribute,
                    q.clone(),
                    Some(Value::Bool(!negated)),
                ));
                let c = negated_equals(
                    model,
                    st.provisional_entity.as_deref(),
                    q,
                    Value::Bool(true),
                    negated,
                );
                st.r.filters.push(Filter {
                    constraint: c,
                    first: m.first,
                    span: m.span,
                });
                continue;
            }
            if attr.ty == AttributeType::Boolean {
                // "compare smokers and non-smokers"
                st.r.compare = Some(CompareSpec {
                    attribute: q.clone(),
                    values: Vec::new(),
                });
                st.r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
                continue;
            }
            if attr.ty == AttributeType::Date
                && let Some((_, _, agg @ (MeasureAgg::Min | MeasureAgg::Max))) = ctx.cues.agg
                && matches!(st.r.metric, MetricSpec::None)
            {
                // "earliest assessment date", "latest onset date": that date's extreme
                st.r.metric = MetricSpec::Agg {
                    agg,
                    attribute: q.clone(),
                };
                st.r.metric_span = Some(m.span);
                st.r.entity.get_or_insert_with(|| model.entities[e].name.clone());
                st.r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
                continue;
            }
            if attr.ty == AttributeType::Date {
                if let Some(d) = model.time_dimensions.iter().find(|d| d.attribute == q) {
                    st.time_dim.get_or_insert_with(|| d.name.clone());
                }
                if ctx.times.is_empty() {
                    st.r.columns.push(ColSpec::Attribute(q.clone()));
                }
                st.r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
                continue;
            }
            // an aggregate of the attribute ("average bmi", "max pain", "pain scores over time")
            let trend_agg =
                (ctx.cues.trend.is_some() || !ctx.grains.is_empty()).then_some((0, 0, MeasureAgg::Avg));
            let term_agg = typical_agg(ctx).map(|a| (0, 0, a));
            if let Some((_, _, agg)) = ctx.cues.agg.or(term_agg).or(trend_agg)
                && matches!(st.r.metric, MetricSpec::None)
                && attr.ty.is_numeric()
                && !matches!(attr.role, AttributeRole::Key | AttributeRole::ForeignKey)
            {
                st.r.metric = MetricSpec::Agg {
                    agg,
                    attribute: q.clone(),
                };
                st.r.metric_span = Some(m.span);
                st.r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
                continue;
            }
            let names_a_value = ms.iter().any(|o| {
                o.first.abs_diff(m.last) <= 2 || m.first.abs_diff(o.last) <= 2
            } && o.entries.iter().any(|e| matches!(&e.target, Target::Value(a, _) if *a == q)));
            if !names_a_value {
                st.r.columns.push(ColSpec::Attribute(q.clone()));
            }
            st.r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
            continue;
        }
        if m.time_dimension().is_some() {
            st.used[mi] = true;
        }
    }
    if let Some(d) = &st.time_dim
        && let Some(mi) = ms.iter().position(|m| {
            m.time_dimension()
                .is_some_and(|x| model.time_dimensions[x].name == *d)
        })
    {
        st.r.pieces
            .push(piece(ctx, &ms[mi], PieceKind::TimeDimension, d.clone(), None));
    }
}

/// The foreign key a verb before a record's name points through: "registered at
/// Harborview" is the clinic of `patients.clinic_id` (its join is "the clinic the
/// patient is registered at"), "treated at", "works at" the others. Only when the named
/// values are labels of one entity, exactly one join to it describes the verb, and that
/// join is not the way the question's records reach it anyway.
fn referenced_by_verb(
    ctx: &Ctx<'_>,
    m: &crate::engine::link::Mention,
    hits: &[(String, Value, String)],
    entity: Option<&str>,
) -> Option<(String, usize)> {
    let model = ctx.model;
    let target = {
        let (e, _) = crate::semantic::split_qualified(&hits.first()?.0)?;
        e.to_owned()
    };
    let labels = hits.iter().all(|(a, v, _)| {
        matches!(v, Value::Text(_))
            && model
                .attribute(a)
                .is_some_and(|r| r.entity.name == target && r.attribute.role == AttributeRole::Label)
    });
    let mut k = m.first.checked_sub(1)?;
    if matches!(ctx.w(k), "the" | "a") {
        k = k.checked_sub(1)?;
    }
    if !labels || !matches!(ctx.w(k), "at" | "with" | "in" | "to" | "by") || k == 0 {
        return None;
    }
    let stem = |w: &str| -> String {
        let w = w.trim_end_matches("'s");
        for suffix in ["ing", "ed", "es", "s"] {
            if let Some(x) = w.strip_suffix(suffix)
                && x.len() >= 4
            {
                return x.to_owned();
            }
        }
        w.to_owned()
    };
    let verb = stem(ctx.w(k - 1));
    if verb.len() < 4 {
        return None;
    }
    let mut joins = model
        .joins
        .iter()
        .filter(|j| j.to_entity() == target && j.description.split(' ').any(|w| stem(w) == verb));
    let join = joins.next()?;
    if joins.next().is_some() {
        return None;
    }
    let default = entity
        .and_then(|e| model.join_path(e, &target))
        .is_some_and(|p| p.iter().any(|s| std::ptr::eq(s.join, join)));
    (!default).then(|| (join.from.clone(), k - 1))
}
