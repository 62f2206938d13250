//! Measures and the metric: named measures, "number of …", "how many distinct …",
//! shares ("what percentage of …"), the typical aggregation.

use crate::semantic::{Aggregation, AttributeRole, Constraint, MeasureAgg, PlanChange, TermKind, Value};

use crate::engine::PieceKind;
use crate::engine::reading::{Ctx, EntitySource, Filter, MetricSpec, Reading};

use super::negation::negated_at;
use super::state::{State, counted_entity_measure, groupable, piece, qualified};
use crate::engine::plan_ops::negate;

/// Measures named in the question ("healing rate", "number of visits").
pub(super) fn measures(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    // "how many smokers have open wounds", "diabetics with open wounds": a person noun for
    // a yes/no attribute ("smokers": patients who smoke) said first names the records the
    // question is about; a later count of other, filtered records is a condition on them
    let person = ms
        .iter()
        .enumerate()
        .find(|(mi, m)| !st.used[*mi] && person_noun(ctx, m).is_some())
        .filter(|(_, p)| {
            !ms.iter()
                .any(|o| o.last <= p.first && (o.entity().is_some() || o.measure().is_some()))
        })
        .and_then(|(_, p)| person_noun(ctx, p).map(|e| (p.first, e)));
    for (mi, m) in ms.iter().enumerate() {
        if st.used[mi] {
            continue;
        }
        if let (Some((first, entity)), Some(mx)) = (&person, m.measure())
            && m.first > *first
            && model.measures[mx].agg == MeasureAgg::Count
            && model.measures[mx].entity != *entity
            && let Some(f) = &model.measures[mx].filter
        {
            st.r.filters.push(Filter {
                constraint: negate(f.clone(), negated_at(ctx, m.first)),
                first: m.first,
                span: m.span,
            });
            st.r.pieces.push(piece(
                ctx,
                m,
                PieceKind::Measure,
                model.measures[mx].name.clone(),
                None,
            ));
            if st.r.entity.is_none() {
                st.r.entity = Some(entity.clone());
                st.r.entity_source = EntitySource::Named;
            }
            st.used[mi] = true;
            continue;
        }
        // "number of visits", "visit count": count words and a word for what a
        // count-of-related attribute counts say "count the visits" as much as "number of
        // assessments" (which also names the measure), when nothing else is the subject
        let other_subject = || {
            ms.iter()
                .enumerate()
                .any(|(oi, o)| oi != mi && !st.used[oi] && (o.entity().is_some() || o.measure().is_some()))
        };
        let counted = m
            .measure()
            .is_none()
            .then(|| counted_entity_measure(model, m))
            .flatten()
            .filter(|_| !other_subject());
        if let Some(mx) = m.measure().or(counted) {
            // "number of wounds" after "with"/"by" is the patients' attribute; as a
            // question it is the count
            let prev = ctx.w(m.first.wrapping_sub(1));
            // "compare the number of patients at …" is the count
            let compared = prev == "the" && matches!(ctx.w(m.first.wrapping_sub(2)), "compare" | "comparing");
            let attr_reading = m.attributes().next().is_some()
                && !compared
                // "one row per clinician with the number of assessments": with a grouping,
                // the count per group
                && (matches!(prev, "with" | "highest" | "most" | "lowest" | "fewest" | "the")
                    && !(st.r.dims.len() == 1 && matches!(prev, "with" | "the") && ctx.w(m.first.wrapping_sub(2)) != "by")
                    || ctx.comparisons.iter().any(|c| c.subject_mention == Some(mi))
                    || ctx.cues.agg.is_some() && model.measures[mx].agg == MeasureAgg::Count
                    // "just the MRN and how many wounds": one more column
                    || crate::engine::intent::count_in_column_list(ctx.tokens, m.first));
            if attr_reading {
                continue;
            }
            let m_def = &model.measures[mx];
            let count_word = m.phrase.split(' ').any(|w| {
                matches!(
                    w,
                    "number"
                        | "count"
                        | "many"
                        | "numbers"
                        | "caseload"
                        | "headcount"
                        | "volume"
                        | "activity"
                )
            });
            // "how many patients don't have any open wounds": a negated count measure of
            // related rows is a condition on the counted rows, not the thing counted
            let negated_rows = m_def.agg == MeasureAgg::Count
                && m_def.filter.is_some()
                && !count_word
                && negated_at(ctx, m.first)
                && other_subject();
            // "wounds healed in sept - how many", "no. of wounds healed in the past 90 days":
            // a counted status that names a date column dates the period too
            if m_def.agg == MeasureAgg::Count
                && let Some(Constraint::Compare {
                    value: Value::Text(v),
                    ..
                }) = &m_def.filter
                && model.time_dimension(v).is_some()
                && !negated_at(ctx, m.first)
            {
                st.time_dim.get_or_insert_with(|| v.clone());
            }
            if m_def.agg == MeasureAgg::Count
                && (ctx.cues.count.is_none() && ctx.cues.rank.is_none() || negated_rows)
                && !count_word
            {
                // "show their open wounds", "wounds healed in 2024": rows, not a count
                if let Some(f) = &m_def.filter {
                    // "patients with no open wounds": no related row is one
                    let negated = negated_at(ctx, m.first);
                    st.r.filters.push(Filter {
                        constraint: negate(f.clone(), negated),
                        first: m.first,
                        span: m.span,
                    });
                    // the status names the date column ("healed")
                    if let Constraint::Compare {
                        value: Value::Text(v),
                        ..
                    } = f
                        && model.time_dimension(v).is_some()
                    {
                        st.time_dim.get_or_insert_with(|| v.clone());
                    }
                }
                if st.r.entity.is_none() {
                    st.r.entity = Some(m_def.entity.clone());
                    st.r.entity_source = EntitySource::Named;
                    st.r.entity_span = Some(m.span);
                }
                st.r.pieces
                    .push(piece(ctx, m, PieceKind::Entity, m_def.entity.clone(), None));
                st.used[mi] = true;
                continue;
            }
            st.measures.push((mi, mx));
            st.used[mi] = true;
        }
    }
    // "how many patients have open wounds", "patients with no open wounds": a later count
    // measure of other, filtered rows is a condition on the counted rows
    if st.measures.len() >= 2 {
        let first_entity = model.measures[st.measures[0].1].entity.clone();
        let mut keep = vec![st.measures[0]];
        for &(mi, mx) in &st.measures[1..] {
            let m_def = &model.measures[mx];
            match &m_def.filter {
                Some(f) if m_def.agg == MeasureAgg::Count && m_def.entity != first_entity => {
                    let m = &ms[mi];
                    st.r.filters.push(Filter {
                        constraint: negate(f.clone(), negated_at(ctx, m.first)),
                        first: m.first,
                        span: m.span,
                    });
                    st.r.pieces
                        .push(piece(ctx, m, PieceKind::Measure, m_def.name.clone(), None));
                }
                _ => keep.push((mi, mx)),
            }
        }
        st.measures = keep;
    }
}

/// A person noun for a yes/no attribute ("smokers", "diabetics"): one plural word naming
/// the attribute, read as the attribute's records (the patients). The records' entity.
pub(super) fn person_noun(ctx: &Ctx<'_>, m: &crate::engine::link::Mention) -> Option<String> {
    if m.entity().is_some() || m.measure().is_some() || m.phrase.contains(' ') {
        return None;
    }
    crate::engine::tokenize::singular(&m.phrase)?;
    m.attributes()
        .find(|&(e, a)| ctx.model.entities[e].attributes[a].ty == crate::semantic::AttributeType::Boolean)
        .map(|(e, _)| ctx.model.entities[e].name.clone())
}

/// The first measure is the metric; its entity is the entity.
pub(super) fn metric(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    // "the number of open wounds and the number of healed wounds": counts of the same
    // records under different conditions are figures side by side (one column each)
    let first_count = st
        .measures
        .first()
        .map(|&(_, mx)| &model.measures[mx])
        .filter(|m| {
            m.agg == MeasureAgg::Count
                && m.attribute.is_none()
                && (m.filter.is_some() || m.condition.is_some())
        });
    if let Some(first) = first_count {
        let side_by_side: Vec<usize> = st
            .measures
            .iter()
            .skip(1)
            .filter(|&&(_, mx)| {
                let m = &model.measures[mx];
                m.agg == MeasureAgg::Count
                    && m.attribute.is_none()
                    && m.entity == first.entity
                    && (m.filter.is_some() || m.condition.is_some())
            })
            .map(|&(_, mx)| mx)
            .collect();
        if !side_by_side.is_empty() && side_by_side.len() + 1 == st.measures.len() {
            for &(mi, mx) in st.measures.iter().skip(1) {
                st.r.pieces.push(piece(
                    ctx,
                    &ms[mi],
                    PieceKind::Measure,
                    model.measures[mx].name.clone(),
                    None,
                ));
            }
            st.r.extra_measures = side_by_side;
            st.measures.truncate(1);
        }
    }
    // only one measure is the metric: the others are said, never dropped
    for &(mi, mx) in st.measures.iter().skip(1) {
        let m = &ms[mi];
        st.r.notes.push((
            m.span,
            format!(
                "\"{}\": not used — one figure per answer ({} is not shown)",
                ctx.text(m.span),
                model.measures[mx].label
            ),
        ));
    }
    if let Some(&(mi, mx)) = st.measures.first() {
        st.r.metric = MetricSpec::Measure(mx);
        st.r.metric_span = Some(ms[mi].span);
        st.r.pieces.push(piece(
            ctx,
            &ms[mi],
            PieceKind::Measure,
            model.measures[mx].name.clone(),
            None,
        ));
        st.r.entity = Some(model.measures[mx].entity.clone());
        st.r.entity_source = EntitySource::Measure;
    }
}

/// A share: "what percentage of wounds are infected".
pub(super) fn share(ctx: &Ctx<'_>, st: &mut State) {
    if let Some((s, _)) = ctx.cues.share {
        let split = (s + 1..ctx.tokens.len()).find(|&k| {
            matches!(
                ctx.w(k),
                "that"
                    | "which"
                    | "who"
                    | "are"
                    | "were"
                    | "is"
                    | "was"
                    | "have"
                    | "has"
                    | "had"
                    | "got"
                    | "became"
                    | "ended"
                    // "what % of healed VLUs took more than 12 weeks to heal"
                    | "took"
                    | "take"
                    | "needed"
                    | "required"
                    | "lasted"
                    | "developed"
                    | "showed"
                    | "progressed"
            ) && k > s + 2
        });
        st.r.share_from = split.or_else(|| {
            // no verb: the last filter or term is the condition
            let last_filter = st.r.filters.iter().map(|f| f.first).max();
            let last_term = st.r.terms.iter().map(|t| t.first).max();
            last_filter.max(last_term)
        });
        if !matches!(st.r.metric, MetricSpec::Measure(_)) {
            st.r.metric = MetricSpec::Share;
        }
    }
}

/// The aggregation a dictionary word like "typical" defaults to (median), when the
/// question has one.
pub(super) fn typical_agg(ctx: &Ctx<'_>) -> Option<MeasureAgg> {
    ctx.mentions.iter().flat_map(|m| m.terms()).find_map(|t| {
        let term = &ctx.model.terms[t];
        if term.kind != TermKind::Aggregation || matches!(term.id.as_str(), "average" | "total") {
            return None;
        }
        match term.default_option()?.change.as_ref()? {
            PlanChange::ChooseAggregation {
                aggregation: Aggregation::Median,
            } => Some(MeasureAgg::Median),
            PlanChange::ChooseAggregation {
                aggregation: Aggregation::Mean,
            } => Some(MeasureAgg::Avg),
            _ => None,
        }
    })
}

/// "how many distinct wound locations", "number of different etiologies", "count of
/// unique clinicians": how many different values the attribute takes.
pub(super) fn read_distinct(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
    let model = ctx.model;
    let counting = ctx.cues.count.is_some();
    for k in 0..ctx.tokens.len() {
        if !matches!(ctx.w(k), "distinct" | "different" | "unique" | "separate") {
            continue;
        }
        if !counting {
            // "what distinct tissue types have been recorded", "list the different
            // locations of open DFUs": one row per value the attribute takes
            if let Some((mi, m)) = ctx
                .mentions
                .iter()
                .enumerate()
                .find(|(mi, m)| m.first == k + 1 && !used[*mi] && m.entity().is_none())
                && let Some((e, a)) = m.attributes().find(|&(e, a)| groupable(model, e, a))
                && ctx.cues.agg.is_none()
                && ctx.cues.rank.is_none()
            {
                used[mi] = true;
                let attribute = qualified(model, e, a);
                let span = ctx.span_of(k, m.last);
                r.pieces
                    .push(piece(ctx, m, PieceKind::Dimension, attribute.clone(), None));
                r.dims.push(crate::engine::reading::Dim {
                    spec: crate::engine::reading::DimSpec::Attribute(attribute),
                    span,
                });
                r.entity = Some(model.entities[e].name.clone());
                r.entity_source = EntitySource::Named;
                r.consumed.push((k, k + 1));
                return;
            }
            continue;
        }
        let Some((mi, m)) = ctx
            .mentions
            .iter()
            .enumerate()
            .find(|(mi, m)| m.first == k + 1 && !used[*mi])
        else {
            continue;
        };
        let attribute = m
            .attributes()
            .find(|&(e, a)| groupable(model, e, a))
            .map(|(e, a)| (model.entities[e].name.clone(), qualified(model, e, a)));
        // "distinct patients": the entity's own rows, counted once each
        let attribute = attribute.or_else(|| {
            m.entity().and_then(|e| {
                let ent = &model.entities[e];
                ent.attributes
                    .iter()
                    .find(|a| a.role == AttributeRole::Key)
                    .map(|a| (ent.name.clone(), format!("{}.{}", ent.name, a.name)))
            })
        });
        let Some((entity, attribute)) = attribute else {
            continue;
        };
        if m.entity().is_some() {
            // counting an entity's rows is already distinct
            continue;
        }
        used[mi] = true;
        r.metric = MetricSpec::Agg {
            agg: MeasureAgg::CountDistinct,
            attribute: attribute.clone(),
        };
        r.metric_span = Some(ctx.span_of(k, m.last));
        r.entity = Some(entity.clone());
        r.entity_source = EntitySource::Named;
        r.pieces
            .push(piece(ctx, m, PieceKind::Attribute, attribute, None));
        return;
    }
}

/// "avg number of wounds per patient", "mean no. of assessments per wound": each
/// parent's count of the records named (the parent's count-of-related attribute),
/// averaged — "per patient" is the unit counted per, not a grouping by patient.
pub(super) fn read_count_per_parent(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let (Some(count_at), Some((agg_first, _, agg))) = (ctx.cues.count, ctx.cues.agg) else {
        return;
    };
    if !matches!(
        agg,
        MeasureAgg::Avg | MeasureAgg::Median | MeasureAgg::Max | MeasureAgg::Min
    ) || agg_first > count_at
        || count_at - agg_first > 2
    {
        return;
    }
    // the records counted: the first entity word after the count cue's "of"
    let Some(of_at) = (count_at + 1..count_at + 4).find(|&k| ctx.w(k) == "of") else {
        return;
    };
    let Some((xi, x)) = ctx.mentions.iter().enumerate().find(|(_, m)| {
        (of_at + 1..=of_at + 2).contains(&m.first) || m.first <= count_at && count_at < m.last
    }) else {
        return;
    };
    let counted = x.entity().map(|e| model.entities[e].name.clone()).or_else(|| {
        // "number of wounds" may be linked as the parent's count attribute
        x.attributes()
            .find_map(|(e, a)| match &model.entities[e].attributes[a].derived {
                Some(crate::semantic::Derived::CountRelated { entity }) => Some(entity.clone()),
                _ => None,
            })
    });
    let Some(counted) = counted else { return };
    // "per patient", "for each wound", "a wound"
    let Some((pi, parent, attribute)) = ctx.mentions.iter().enumerate().find_map(|(pi, m)| {
        let lead = ctx.w(m.first.wrapping_sub(1));
        let lead2 = ctx.w(m.first.wrapping_sub(2));
        if m.first < x.last || !(matches!(lead, "per" | "a" | "an") || lead == "each" && matches!(lead2, "for" | "per")) {
            return None;
        }
        let e = m.entity()?;
        let ent = &model.entities[e];
        let a = ent.attributes.iter().find(|a| {
            matches!(&a.derived, Some(crate::semantic::Derived::CountRelated { entity }) if *entity == counted)
        })?;
        Some((pi, ent.name.clone(), format!("{}.{}", ent.name, a.name)))
    }) else {
        return;
    };
    st.used[xi] = true;
    st.used[pi] = true;
    st.r.metric = MetricSpec::Agg {
        agg,
        attribute: attribute.clone(),
    };
    st.r.metric_span = Some(ctx.span_of(agg_first, ctx.mentions[pi].last));
    st.r.entity = Some(parent);
    st.r.entity_source = EntitySource::Named;
    st.r.consumed.push((agg_first, ctx.mentions[pi].last));
    st.r.pieces.push(piece(
        ctx,
        &ctx.mentions[xi],
        PieceKind::Attribute,
        attribute,
        None,
    ));
}

/// "average BMI of patients with diabetes": a named average measure said with the word
/// "average" raises the same badge as "avg BMI" (the mean, or the median on a click); a
/// measure said as "mean …" names the mean itself.
pub(super) fn average_measure_badge(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let MetricSpec::Measure(mx) = st.r.metric else {
        return;
    };
    if model.measures[mx].agg != MeasureAgg::Avg {
        return;
    }
    let Some(t) = model.terms.iter().position(|t| t.id == "average") else {
        return;
    };
    if st.r.terms.iter().any(|u| u.term == t) {
        return;
    }
    let Some(mi) = st
        .measures
        .iter()
        .find(|&&(_, x)| x == mx)
        .map(|&(mi, _)| mi)
        .or_else(|| ctx.mentions.iter().position(|m| m.measure() == Some(mx)))
    else {
        return;
    };
    let m = &ctx.mentions[mi];
    if !matches!(ctx.w(m.first), "average" | "avg" | "averages") {
        return;
    }
    st.r.terms.push(crate::engine::reading::TermUse {
        term: t,
        mention: mi,
        anchor: model.measures[mx].entity.clone(),
        negated: false,
        first: m.first,
    });
}

/// "one row per mobility level with the number of smokers and the number of non-smokers",
/// "count of DFUs and count of VLUs by clinic": each count said of records named by a
/// value is a column of its own (the records under that condition), side by side — not
/// one count of records that are both.
pub(super) fn counts_of_values(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    // "the number of open wounds and the number of amputated wounds": the first count may
    // be a counted measure of its own (open wounds), the condition its filter
    let counted_measure = |x: usize| {
        let m = &model.measures[x];
        (m.agg == MeasureAgg::Count)
            .then_some(m.filter.as_ref())
            .flatten()
    };
    let measure_ok = match &st.r.metric {
        MetricSpec::None | MetricSpec::Count => true,
        MetricSpec::Measure(x) => counted_measure(*x).is_some(),
        _ => false,
    };
    if !st.r.extra_measures.is_empty() || !measure_ok {
        return;
    }
    let count_at = |k: usize| {
        matches!(ctx.w(k), "number" | "count" | "no" | "nr" | "#")
            && (ctx.w(k + 1) == "of" || ctx.w(k + 1) == "." && ctx.w(k + 2) == "of")
    };
    let starts: Vec<usize> = (0..ctx.tokens.len()).filter(|&k| count_at(k)).collect();
    if starts.len() < 2 {
        return;
    }
    // (the filter read from the words, if any; the condition; its label)
    let mut picked: Vec<(Option<usize>, Constraint, String)> = Vec::new();
    for (i, &k) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(ctx.tokens.len());
        // the words counted: up to the next count, a grouping or a clause
        let stop = (k + 2..end)
            .find(|&j| matches!(ctx.w(j), "by" | "per" | "for" | "in" | "at" | "," | ";"))
            .unwrap_or(end);
        let inside: Vec<usize> =
            st.r.filters
                .iter()
                .enumerate()
                .filter(|(_, f)| f.first > k && f.first < stop)
                .map(|(fi, _)| fi)
                .collect();
        let measure = ctx
            .mentions
            .iter()
            .filter(|m| m.first >= k && m.last <= stop)
            .find_map(|m| m.measure().and_then(counted_measure));
        let (fi, condition) = match (inside.as_slice(), measure) {
            ([fi], None) => (Some(*fi), st.r.filters[*fi].constraint.clone()),
            ([], Some(c)) => (None, c.clone()),
            _ => return,
        };
        let mut last = stop;
        // "… amputated wounds side by side"
        if ctx.w(last) == "by" && ctx.w(last - 1) == "side" && ctx.w(last + 1) == "side" {
            last -= 1;
        }
        while last > k + 2 && matches!(ctx.w(last - 1), "and" | "the" | "," | "&" | "vs" | "versus") {
            last -= 1;
        }
        picked.push((fi, condition, ctx.text(ctx.span_of(k + 2, last))));
    }
    let entity =
        st.r.entity
            .clone()
            .or_else(|| st.provisional_entity.clone())
            .or_else(|| {
                // "the number of smokers and …": the records the values are of
                let (_, c, _) = picked.first()?;
                let attrs = c.attributes();
                attrs.first().and_then(|a| a.split('.').next()).map(str::to_owned)
            })
            .unwrap_or_default();
    let own = |c: &Constraint| {
        let attrs = c.attributes();
        !attrs.is_empty() && attrs.iter().all(|a| a.split('.').next() == Some(entity.as_str()))
    };
    if !picked.iter().all(|(_, c, _)| own(c)) {
        return;
    }
    let mut conditions: Vec<(Constraint, String)> = picked
        .iter()
        .map(|(_, c, text)| {
            let mut label: Vec<char> = text.chars().collect();
            if let Some(c) = label.first_mut() {
                *c = c.to_ascii_uppercase();
            }
            (c.clone(), label.into_iter().collect())
        })
        .collect();
    // two counts of the same records under the same condition are one column
    conditions.dedup_by(|a, b| a.0 == b.0);
    if conditions.len() < 2 {
        return;
    }
    let mut picked: Vec<usize> = picked.into_iter().filter_map(|(fi, _, _)| fi).collect();
    picked.sort_unstable();
    for fi in picked.into_iter().rev() {
        st.r.filters.remove(fi);
    }
    st.r.metric = MetricSpec::Count;
    st.r.count_conditions = conditions;
}
