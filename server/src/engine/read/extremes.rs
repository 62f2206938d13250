//! An aggregate of each record's extreme: "the average of each wound's largest area",
//! "mean of the highest pain score per wound", "median of every patient's worst pain
//! score". Each record (wound, patient) first takes the extreme of its visits' values, and
//! the aggregate is taken over those — never the extreme of all visits, never each record's
//! latest value.

use crate::semantic::{AttributeType, MeasureAgg, SortOrder};

use crate::engine::reading::{Ctx, PerRecord, RankKey, RankSpec};

use super::state::{State, qualified};

fn outer_agg(w: &str) -> Option<MeasureAgg> {
    Some(match w {
        "avg" | "average" | "mean" => MeasureAgg::Avg,
        "median" => MeasureAgg::Median,
        _ => return None,
    })
}

fn extreme(w: &str) -> Option<MeasureAgg> {
    Some(match w {
        "max" | "maximum" | "largest" | "biggest" | "highest" | "worst" | "peak" | "greatest" => {
            MeasureAgg::Max
        }
        "min" | "minimum" | "smallest" | "lowest" => MeasureAgg::Min,
        _ => return None,
    })
}

/// The record a word names, among those with many visits.
fn record(w: &str) -> Option<&'static str> {
    let w = w.trim_end_matches("'s").trim_end_matches('\'');
    Some(match w {
        "wound" | "wounds" | "ulcer" | "ulcers" | "injury" | "injuries" | "wound's" | "wounds'" => "wounds",
        "patient" | "patients" | "pt" | "pts" | "patient's" | "patients'" => "patients",
        _ => return None,
    })
}

/// Reads "<average> of each <record>'s <extreme> <measurement>" and "<average> <extreme>
/// <measurement> per <record>".
pub(super) fn per_record(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let n = ctx.tokens.len();
    for k in 0..n {
        let Some(outer) = outer_agg(ctx.w(k)) else {
            continue;
        };
        let mut rec: Option<&'static str> = None;
        let mut j = k + 1;
        // "of the each wound's", "of every patient's"
        while j < n && j <= k + 6 {
            let w = ctx.w(j);
            if let Some(r) = record(w) {
                rec = Some(r);
            } else if !matches!(
                w,
                "of" | "the" | "each" | "every" | "per" | "'s" | "'" | "s" | "individual" | "a"
            ) {
                break;
            }
            j += 1;
        }
        let Some(inner) = extreme(ctx.w(j)) else {
            continue;
        };
        let e_at = j;
        j += 1;
        while matches!(
            ctx.w(j),
            "ever" | "recorded" | "measured" | "documented" | "charted" | "observed"
        ) {
            j += 1;
        }
        // the measurement: a per-visit attribute (or a record's latest value of one)
        let Some((mi, m)) = ctx
            .mentions
            .iter()
            .enumerate()
            .find(|(_, m)| m.first == j || m.first == e_at && m.last > e_at + 1)
        else {
            continue;
        };
        let measured = m
            .measure()
            .and_then(|x| model.measures[x].attribute.clone())
            .filter(|q| q.starts_with("assessments."));
        let Some(attribute) = measured.or_else(|| {
            m.attributes().find_map(|(e, a)| {
                let q = qualified(model, e, a);
                let ty = model.entities[e].attributes[a].ty;
                if !ty.is_numeric() {
                    return None;
                }
                if q.starts_with("assessments.") {
                    return Some(q);
                }
                match &model.entities[e].attributes[a].derived {
                    Some(crate::semantic::Derived::Latest { attribute, .. }) => Some(attribute.clone()),
                    _ => None,
                }
            })
        }) else {
            continue;
        };
        let mut end = m.last;
        // "… ever recorded", "per wound", "for each patient", "of each wound"
        while matches!(ctx.w(end), "ever" | "recorded" | "measured" | "documented") {
            end += 1;
        }
        if rec.is_none() {
            let mut i = end;
            if matches!(ctx.w(i), "per" | "for" | "of" | "by" | "in") {
                i += 1;
                if matches!(ctx.w(i), "each" | "every" | "a" | "the") {
                    i += 1;
                }
                if let Some(r) = record(ctx.w(i)) {
                    rec = Some(r);
                    end = i + 1;
                }
            }
        }
        // "the highest pain score each diabetic foot ulcer reached", "… every wound had":
        // the records named after "each", by their word or by a value of theirs (which
        // stays a filter), then the verb of measuring
        let mut named_after: Option<(usize, usize, bool)> = None;
        if rec.is_none() && matches!(ctx.w(end), "each" | "every") {
            let recs = |e: &str| match e {
                "wounds" => Some("wounds"),
                "patients" => Some("patients"),
                _ => None,
            };
            if let Some(o) = ctx.mentions.iter().find(|o| o.first == end + 1) {
                let by_word = o.entity().and_then(|e| recs(&model.entities[e].name));
                let by_value = o
                    .entries
                    .iter()
                    .find_map(|x| match &x.target {
                        crate::engine::vocab::Target::Value(a, _) => {
                            crate::semantic::split_qualified(a).and_then(|(e, _)| recs(e))
                        }
                        _ => None,
                    })
                    .or_else(|| {
                        o.values.iter().find_map(|h| {
                            crate::semantic::split_qualified(&h.attribute).and_then(|(e, _)| recs(e))
                        })
                    });
                if let Some(r) = by_word.or(by_value) {
                    rec = Some(r);
                    let verb = matches!(
                        ctx.w(o.last),
                        "reached" | "reach" | "had" | "has" | "hit" | "got" | "recorded" | "showed"
                    );
                    named_after = Some((end, o.last, verb));
                    // the word "each" is read; the records' own words stay for the other steps
                    end += 1;
                }
            }
        }
        let Some(rec) = rec else {
            continue;
        };
        let Some((attr_entity, _)) = crate::semantic::split_qualified(&attribute) else {
            continue;
        };
        if model.entity(rec).is_none() || !model.has_one(attr_entity, rec) {
            continue;
        }
        st.used[mi] = true;
        for (oi, o) in ctx.mentions.iter().enumerate() {
            if o.first > k && o.last <= end {
                st.used[oi] = true;
            }
        }
        st.r.consumed.push((k, end));
        if let Some((_, after, true)) = named_after {
            st.r.consumed.push((after, after + 1));
        }
        st.r.per_record = Some(PerRecord {
            outer,
            inner,
            record: rec.to_owned(),
            attribute,
            span: ctx.span_of(e_at, m.last),
            tokens: (k, end),
        });
        return;
    }
}

/// "date of the last assessment at Harborview", "the date of the first wound of pt 40",
/// "date of the most recent visit": the latest (or earliest) of those records' own dates —
/// one value, not the records listed.
pub(super) fn date_of_extreme(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    for k in 0..ctx.tokens.len() {
        // "when was Mercy's very first assessment?", "when was the most recent assessment
        // done at Bayside": the date asked the same way
        let when = ctx.w(k) == "when" && matches!(ctx.w(k + 1), "was" | "is" | "were" | "did");
        let date_of = matches!(ctx.w(k), "date" | "day") && ctx.w(k + 1) == "of";
        if !(when || date_of) {
            continue;
        }
        let mut j = k + 2;
        if matches!(ctx.w(j), "the" | "their" | "its" | "his" | "her") {
            j += 1;
        }
        // a possessive before the visit ("Mercy's", "wound 12's"): whose records they are
        // (the words before the extreme are read as filters)
        if when {
            j = (j..(j + 5).min(ctx.tokens.len()))
                .find(|&i| {
                    matches!(
                        ctx.w(i),
                        "first" | "earliest" | "last" | "latest" | "newest" | "most" | "very"
                    )
                })
                .unwrap_or(j);
        }
        if ctx.w(j) == "very" {
            j += 1;
        }
        let (agg, at) = match (ctx.w(j), ctx.w(j + 1)) {
            ("last" | "latest" | "newest" | "final", _) => (MeasureAgg::Max, j + 1),
            ("most", "recent") => (MeasureAgg::Max, j + 2),
            ("first" | "earliest", _) => (MeasureAgg::Min, j + 1),
            _ => continue,
        };
        // the records' word, alone or inside a phrase ("last assessment")
        let Some(entity) = model.find_entity(ctx.w(at)) else {
            continue;
        };
        let Some(attribute) = entity
            .default_time_dimension
            .as_deref()
            .and_then(|d| model.time_dimension(d))
            .map(|d| d.attribute.clone())
        else {
            continue;
        };
        st.r.metric = crate::engine::reading::MetricSpec::Agg { agg, attribute };
        st.r.metric_span = Some(ctx.span_of(k, at + 1));
        st.r.entity = Some(entity.name.clone());
        st.r.entity_source = crate::engine::reading::EntitySource::Named;
        st.r.consumed.push((k, at + 1));
        // "the last assessment" named the dated records, not the visit a value is read at
        if st.r.visit_hint_at.is_some_and(|(a, b)| k <= a && b <= at + 1) {
            st.r.visit_hint = None;
            st.r.visit_hint_at = None;
            st.r.visit_first = false;
        }
        for (i, m) in ctx.mentions.iter().enumerate() {
            if m.first < at + 1 && m.last > k {
                st.used[i] = true;
            }
        }
        return;
    }
}

/// "for each DFU at Oak Ridge, the biggest area it ever measured", "each open VLU's
/// highest pain score ever", "largest area for every open wound": an aggregate of visits
/// said per record is one row per record (grouped by its key), not one figure over every
/// visit (the "each" had been dropped silently).
pub(super) fn per_each_record(ctx: &Ctx<'_>, st: &mut State) {
    use crate::engine::reading::{Dim, DimSpec, MetricSpec};
    let model = ctx.model;
    if !st.r.dims.is_empty() || st.r.per_record.is_some() || st.r.rank.is_some() {
        return;
    }
    // the records aggregated: the attribute's, or the visits a column word's measurement
    // is read at ("the biggest area it ever measured")
    let (agg, child) = match &st.r.metric {
        MetricSpec::Agg { attribute, agg } => (
            *agg,
            crate::semantic::split_qualified(attribute).map(|(e, _)| e.to_owned()),
        ),
        MetricSpec::AggColumn { agg, .. } if st.r.visit_hint == Some(false) => {
            (*agg, Some("assessments".to_owned()))
        }
        MetricSpec::Measure(x) => {
            let m = &model.measures[*x];
            (
                m.agg,
                m.attribute
                    .as_deref()
                    .and_then(crate::semantic::split_qualified)
                    .map(|(e, _)| e.to_owned()),
            )
        }
        _ => return,
    };
    if matches!(
        agg,
        MeasureAgg::Count | MeasureAgg::CountDistinct | MeasureAgg::Share
    ) {
        return;
    }
    let Some(child) = child else { return };
    for k in 0..ctx.tokens.len() {
        if !matches!(ctx.w(k), "each" | "every") {
            continue;
        }
        // the record: the first mention after it naming a record the visits belong to
        let record = ctx
            .mentions
            .iter()
            .filter(|m| m.first > k && m.first <= k + 3)
            .find_map(|m| {
                let e = super::state::mention_entity(model, m)?;
                (e != child && model.has_many(&e, &child)).then_some(e)
            });
        let Some(record) = record else { continue };
        let Some(ent) = model.entity(&record) else {
            continue;
        };
        let span = ctx.span_of(k, k + 1);
        st.r.dims.push(Dim {
            spec: DimSpec::Attribute(format!("{record}.{}", ent.key)),
            span,
        });
        st.r.consumed.push((k, k + 1));
        return;
    }
}

/// "which wound had the largest area ever recorded", "which patient had the highest pain
/// score on record", "which wound had the single biggest area measurement": the records
/// asked about with "which", ranked by the extreme of their visits' values (never their
/// latest value, never one figure over every visit). Said of the visits' history ("ever",
/// "on record", "measured", "recorded", "at an assessment") or by a measure that is such
/// an extreme ("biggest area").
pub(super) fn which_record_extreme(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    let mut k = 0;
    while matches!(ctx.w(k), "so" | "ok" | "and" | "then") {
        k += 1;
    }
    if !matches!(ctx.w(k), "which" | "what") {
        return;
    }
    // the records asked about, right after "which"
    let Some((ei, em)) = ms.iter().enumerate().find(|(_, m)| m.first == k + 1) else {
        return;
    };
    let Some(e) = em.entity().map(|e| model.entities[e].name.clone()) else {
        return;
    };
    if e == "assessments" || !model.has_many(&e, "assessments") {
        return;
    }
    let per_visit_numeric = |m: &crate::engine::link::Mention| {
        m.attributes().find_map(|(x, a)| {
            let q = super::state::qualified(model, x, a);
            let ty = model.entities[x].attributes[a].ty;
            (q.starts_with("assessments.") && ty.is_numeric()).then_some(q)
        })
    };
    let history = (0..ctx.tokens.len()).any(|i| {
        matches!(ctx.w(i), "ever" | "all-time" | "recorded" | "measured")
            || ctx.w(i) == "on" && ctx.w(i + 1) == "record"
            || ctx.w(i) == "of" && ctx.w(i + 1) == "all" && ctx.w(i + 2) == "time"
            || ctx.w(i) == "at"
                && matches!(ctx.w(i + 1), "an" | "any" | "a")
                && matches!(ctx.w(i + 2), "assessment" | "visit")
    });
    let mut found: Option<(usize, usize, String, SortOrder)> = None;
    for i in em.last..ctx.tokens.len() {
        // a measure that is an extreme of a visit value ("biggest area")
        if let Some((mi, m)) = ms.iter().enumerate().find(|(_, m)| m.first == i)
            && let Some(x) = m.measure()
            && let Some(attr) = model.measures[x].attribute.clone()
            && attr.starts_with("assessments.")
            && matches!(model.measures[x].agg, MeasureAgg::Max | MeasureAgg::Min)
        {
            let order = if model.measures[x].agg == MeasureAgg::Max {
                SortOrder::Desc
            } else {
                SortOrder::Asc
            };
            found = Some((i, mi, attr, order));
            break;
        }
        let order = match ctx.w(i) {
            "largest" | "biggest" | "greatest" | "highest" | "deepest" | "longest" | "widest" | "worst" => {
                SortOrder::Desc
            }
            "smallest" | "lowest" | "shallowest" | "shortest" | "narrowest" => SortOrder::Asc,
            _ => continue,
        };
        if !history {
            return;
        }
        let mut j = i + 1;
        while matches!(ctx.w(j), "single" | "individual" | "one" | "ever") {
            j += 1;
        }
        let Some((mi, attr)) = ms
            .iter()
            .enumerate()
            .find(|(_, m)| m.first == j)
            .and_then(|(mi, m)| per_visit_numeric(m).map(|a| (mi, a)))
        else {
            return;
        };
        found = Some((i, mi, attr, order));
        break;
    }
    let Some((at, mi, attr, order)) = found else {
        return;
    };
    // the superlative's own mention (a ranking word of the dictionary) is spoken for
    for (oi, o) in ms.iter().enumerate() {
        if o.first <= at && at < o.last {
            st.used[oi] = true;
        }
    }
    st.used[mi] = true;
    let end = ms[mi].last;
    st.r.visit_hint = Some(false);
    st.r.consumed.push((at, end));
    st.rank_subject = Some(e.clone());
    st.r.rank = Some(RankSpec {
        n: None,
        order,
        key: RankKey::Attribute(attr),
        subject: Some(e),
        span: ctx.span_of(at, end),
        skip: 0,
        every: false,
    });
    let _ = ei;
}

/// "which resident at Harborview has the earliest date of birth", "which open wound has the
/// oldest onset date", "of the wounds still open, which one has the earliest onset date",
/// "which clinician has the most recent assessment": the records asked about with "which",
/// ranked by a date of their own (or the latest/earliest of their visits) — the record, not
/// the extreme date alone, and one record when the question says one.
pub(super) fn which_record_by_date(ctx: &Ctx<'_>, st: &mut State) {
    if st.r.rank.is_some() {
        return;
    }
    let model = ctx.model;
    let ms = ctx.mentions;
    let n = ctx.tokens.len();
    // "which" opening the question or a clause after a comma; or a number of records
    // said first ("5 open wounds at Harborview with the earliest onset", "the 3 patients
    // with the earliest date of birth"): that many, ranked by the date
    let counted = (0..n.min(4))
        .find(|&k| {
            ctx.tokens[k].kind == crate::engine::tokenize::TokenKind::Number
                && (0..k).all(|j| {
                    matches!(
                        ctx.w(j),
                        "the" | "list" | "show" | "me" | "give" | "top" | "first"
                    )
                })
        })
        .and_then(|k| {
            let v = ctx.tokens[k].num?;
            ((1.0..=1000.0).contains(&v) && v.fract() == 0.0).then_some((k, v as u32))
        });
    let which = (0..n).find(|&k| {
        matches!(ctx.w(k), "which" | "what")
            && (k == 0 || matches!(ctx.w(k - 1), "," | "so" | "ok" | "and" | "then" | "–" | "-"))
    });
    let Some(w) = which.or(counted.map(|(k, _)| k)) else {
        return;
    };
    // the records: named right after "which", or "which one" of records named before
    let (subject, subject_end) = if ctx.w(w + 1) == "one" {
        let Some(e) = ms
            .iter()
            .filter(|m| m.last <= w)
            .find_map(|m| m.entity().map(|e| model.entities[e].name.clone()))
        else {
            return;
        };
        (e, w + 2)
    } else {
        // "which resident", "which open wound" (a value word may come first)
        let Some((e, last)) = ms
            .iter()
            .filter(|m| m.first > w && m.first <= w + 2)
            .find_map(|m| m.entity().map(|e| (model.entities[e].name.clone(), m.last)))
        else {
            return;
        };
        (e, last)
    };
    // "… has/had the <superlative> <date>"
    let Some(v) = (subject_end..(subject_end + 8).min(n)).find(|&k| {
        // (not "performed": "which clinician performed the latest assessment" reads the
        // clinician of that visit)
        matches!(ctx.w(k), "has" | "had" | "have" | "with")
    }) else {
        return;
    };
    let mut s = v + 1;
    if matches!(ctx.w(s), "had" | "got") {
        s += 1;
    }
    if ctx.w(s) == "the" {
        s += 1;
    }
    let (order, at) = match (ctx.w(s), ctx.w(s + 1)) {
        ("earliest" | "oldest" | "first", _) => (SortOrder::Asc, s + 1),
        ("latest" | "newest" | "last", _) => (SortOrder::Desc, s + 1),
        ("most", "recent") => (SortOrder::Desc, s + 2),
        _ => return,
    };
    // the date's own words ("onset date", "date of birth"), or the visits' word ("the
    // most recent assessment": the date of the record's visits)
    let own = ms
        .iter()
        .enumerate()
        .find(|(_, m)| m.first == at)
        .and_then(|(mi, m)| {
            m.attributes().find_map(|(x, a)| {
                (model.entities[x].name == subject
                    && model.entities[x].attributes[a].ty == AttributeType::Date)
                    .then(|| (qualified(model, x, a), m.last, mi))
            })
        });
    let visit = || {
        let e = model.find_entity(ctx.w(at))?;
        if e.name == subject || !model.has_many(&subject, &e.name) {
            return None;
        }
        let d = model.time_dimension(e.default_time_dimension.as_deref()?)?;
        d.attribute
            .starts_with("assessments.")
            .then(|| (d.attribute.clone(), at + 1))
    };
    let (key, end, visits) = match own {
        Some((a, end, _)) => (a, end, false),
        None => match visit() {
            Some((a, end)) => (a, end, true),
            None => return,
        },
    };
    let one = ctx.w(w + 1) == "one";
    for (oi, o) in ms.iter().enumerate() {
        if o.first < end && o.last > s {
            st.used[oi] = true;
        }
    }
    if visits {
        st.r.visit_hint = Some(false);
        if st.r.visit_hint_at.is_some_and(|(a, b)| a < end && b > s) {
            st.r.visit_hint_at = None;
            st.r.visit_first = false;
        }
    }
    st.r.consumed.push((s, end));
    st.rank_subject = Some(subject.clone());
    let said_n = counted.filter(|_| which.is_none()).map(|(_, v)| v);
    st.r.rank = Some(RankSpec {
        n: said_n.or(one.then_some(1)),
        order,
        key: RankKey::Attribute(key),
        subject: Some(subject),
        span: ctx.span_of(s, end),
        skip: 0,
        every: false,
    });
}

/// "the 5 smallest open pressure injuries by current area", "10 largest wounds by initial
/// area": a dictionary ranking word with the measure said after "by" — ranked by that
/// measure (the word's own question is answered), cut at the number said before it.
pub(super) fn ranking_word_by_measure(ctx: &Ctx<'_>, st: &mut State) {
    if st.r.rank.is_some() {
        return;
    }
    let model = ctx.model;
    let ms = ctx.mentions;
    for (ti, t) in ms.iter().enumerate() {
        let Some(term) = t.terms().next().map(|x| &model.terms[x]) else {
            continue;
        };
        if term.kind != crate::semantic::TermKind::Ranking {
            continue;
        }
        let order = match t.phrase.as_str() {
            "largest" | "biggest" | "the largest" | "the biggest" | "widest" => SortOrder::Desc,
            "smallest" | "the smallest" | "tiniest" => SortOrder::Asc,
            _ => continue,
        };
        // "… by current area": the measure, a few words on; or right after the word
        // ("which 3 wounds had the largest initial area")
        let by = (t.last..(t.last + 6).min(ctx.tokens.len())).find(|&k| ctx.w(k) == "by");
        // (the direct reading only after "which"/"what": "the 2nd smallest initial area" is
        // an ordinal's, read elsewhere)
        let asked_which = (0..t.first).any(|k| matches!(ctx.w(k), "which" | "what"));
        if by.is_none() && !asked_which {
            continue;
        }
        let at = by.map_or(t.last, |b| b + 1);
        let Some((mi, attr)) = ms.iter().enumerate().find_map(|(mi, m)| {
            // an attribute said unambiguously ("current area"; "area" alone is a
            // column word with its own question)
            (m.first == at && m.terms().next().is_none())
                .then(|| {
                    m.attributes().find_map(|(e, a)| {
                        model.entities[e].attributes[a]
                            .ty
                            .is_numeric()
                            .then(|| qualified(model, e, a))
                    })
                })
                .flatten()
                .map(|a| (mi, a))
        }) else {
            continue;
        };
        let num = |k: usize| {
            ctx.tokens
                .get(k)
                .and_then(|x| x.num)
                .filter(|v| (1.0..=1000.0).contains(v) && v.fract() == 0.0)
                .map(|v| v as u32)
        };
        // "which 3 wounds had …": the number said with the records
        let which_n = (1..t.first).find(|&k| {
            matches!(ctx.w(k - 1), "which" | "what")
                && num(k).is_some()
                && ms.iter().any(|o| o.first == k + 1 && o.entity().is_some())
        });
        let n = t
            .first
            .checked_sub(1)
            .and_then(num)
            .or_else(|| num(t.last))
            .or_else(|| which_n.and_then(num));
        let first = if t.first > 0 && n.is_some() && num(t.first - 1).is_some() {
            t.first - 1
        } else {
            t.first
        };
        st.used[ti] = true;
        st.used[mi] = true;
        st.r.consumed.push((first, t.last));
        st.r.consumed.push((by.unwrap_or(at), ms[mi].last));
        if let Some(k) = which_n {
            st.r.consumed.push((k, k + 1));
        }
        st.r.rank = Some(RankSpec {
            n,
            order,
            key: RankKey::Attribute(attr),
            subject: None,
            span: ctx.span_of(first, ms[mi].last),
            skip: 0,
            every: false,
        });
        return;
    }
}
