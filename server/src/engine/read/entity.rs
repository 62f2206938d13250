//! The entity: named ("wounds"), implied by what the question says of it, or a fallback.

use crate::semantic::{Constraint, MeasureAgg, TermKind, split_qualified};

use crate::engine::link::{DEFAULT, Subject};
use crate::engine::reading::{CmpSubject, ColSpec, Ctx, DimSpec, EntitySource, MetricSpec};
use crate::engine::vocab::Target;
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

use super::state::{State, piece};

/// The entity named in the question ("wounds", "patients over 80").
pub(super) fn named(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    st.explicit = ms
        .iter()
        .enumerate()
        .filter(|(mi, m)| !st.used[*mi] && m.entity().is_some() && m.measure().is_none())
        .filter(|(_, m)| {
            // a column term that is also an entity word ("clinic") is the entity
            !m.entries.iter().any(|e| matches!(e.target, Target::Value(..)))
        })
        .map(|(mi, m)| (mi, model.entities[m.entity().unwrap_or(0)].name.clone()))
        .collect();
    // "wound assessments", "patient wounds", "clinic patients": of two record words side by
    // side, the second is the noun and the first says whose records they are
    if let Some(i) = st.explicit.windows(2).position(|w| {
        ms[w[0].0].last == ms[w[1].0].first && w[0].1 != w[1].1 && model.has_one(&w[1].1, &w[0].1)
    }) {
        st.explicit.swap(i, i + 1);
    }
    // the entity word of a comparison subject ("patients over 80") is the entity too
    let implied_by_cmp = ctx.comparisons.iter().find_map(|c| match &c.subject {
        Subject::Implied(e) if !e.is_empty() => Some(e.clone()),
        _ => None,
    });
    let earlier_named = st.r.entity_span.is_some_and(|s| {
        st.explicit
            .first()
            .is_some_and(|(mi, _)| s.start < ms[*mi].span.start)
    });
    // "number of assessments done last month", "total no. of visits in 2025": a count of
    // related records said at the opening counts those records (not the records that
    // have them, whose attribute the phrase also names: "wounds by number of
    // assessments")
    if let Some((mi, rel)) = opening_count_of_related(ctx, st) {
        st.r.entity = Some(rel.clone());
        st.r.entity_source = EntitySource::Named;
        st.r.entity_span = Some(ms[mi].span);
        st.used[mi] = true;
        st.r.pieces
            .push(piece(ctx, &ms[mi], PieceKind::Entity, rel, None));
        for (oi, _) in &st.explicit {
            st.used[*oi] = true;
        }
        return;
    }
    // "which vascular surgeons have assessed wounds at Riverside", "list the wound nurses
    // who assessed wound 40": people said by a value, then what they did to other records
    if let Some((mi, e)) = value_subject(ctx, st) {
        st.r.entity = Some(e);
        st.r.entity_source = EntitySource::Named;
        st.r.entity_span = Some(ms[mi].span);
        for (oi, _) in &st.explicit {
            st.used[*oi] = true;
        }
        return;
    }
    // "which clinic is treating wound 1500", "what clinic is pt 42 registered at": the
    // entity asked about with "which"/"what" is the one answered, even as a column word
    if !earlier_named
        && st.r.rank.is_none()
        && let Some((mi, e)) = asked_entity(ctx, st)
    {
        name_entity(ctx, st, mi, e);
        return;
    }
    // "non smokers where none of their wounds …", "diabetics whose wounds …": records
    // said as someone's ("their", "whose") belong to the subject, they are not it
    if !earlier_named
        && st.r.rank.is_none()
        && let Some((mi, owner)) = owned_records(ctx, st)
    {
        st.r.entity = Some(owner);
        st.r.entity_source = EntitySource::Named;
        st.used[mi] = true;
        for (oi, _) in &st.explicit {
            st.used[*oi] = true;
        }
        return;
    }
    // "count of smokers with an open wound", "diabetics who have a DFU": people said by
    // a plural noun at the head of the question, then records they have
    if !earlier_named
        && st.r.rank.is_none()
        && let Some(owner) = people_with_records(ctx, st)
    {
        st.r.entity = Some(owner);
        st.r.entity_source = EntitySource::Named;
        for (oi, _) in &st.explicit {
            st.used[*oi] = true;
        }
        return;
    }
    // "show me patient CL0000417's wounds", "wound 12's assessments": the records after a
    // possessive are the ones asked about, of the record named before it
    if !earlier_named
        && st.r.rank.is_none()
        && let Some(&(mi, ref e)) = st.explicit.iter().skip(1).find(|(mi, e)| {
            let m = &ms[*mi];
            let before = m
                .first
                .checked_sub(1)
                .map(|k| ctx.tokens[k].span.slice(ctx.question).to_lowercase());
            before.is_some_and(|t| t.ends_with("'s") || t.ends_with("’s"))
                && st
                    .explicit
                    .first()
                    .is_some_and(|(_, owner)| owner != e && model.has_many(owner, e))
        })
    {
        let e = e.clone();
        name_entity(ctx, st, mi, e);
        return;
    }
    // "list the seniors who have an open pressure injury": a word for people of an age
    // or build, said as the people themselves, names them
    if !earlier_named
        && st.explicit.is_empty()
        && st.r.rank.is_none()
        && let Some(e) = head_people(ctx, st)
    {
        st.r.entity = Some(e);
        st.r.entity_source = EntitySource::Named;
        return;
    }
    // "how many chronic wounds do the community clinics have", "how many open burns at
    // community clinics": the records said first — a term with its record word, or values
    // of one kind of record right after the opening — are those counted or listed, not the
    // records named after them
    if !earlier_named
        && st.r.rank.is_none()
        && let Some((first_mi, _)) = st.explicit.first()
        && let Some((tm, e)) = head_records(ctx, st)
        && tm.first < ms[*first_mi].first
        && st.explicit.iter().all(|(_, x)| *x != e)
    {
        st.r.entity = Some(e);
        st.r.entity_source = EntitySource::Named;
        st.r.entity_span = Some(tm.span);
        for (oi, _) in &st.explicit {
            st.used[*oi] = true;
        }
        return;
    }
    // "anybody over 95 with an open wound": people said by a number before any record
    // word are the records asked about
    let said_first = ctx.comparisons.iter().find_map(|c| match &c.subject {
        Subject::Implied(e)
            if !e.is_empty() && st.explicit.first().is_some_and(|(mi, _)| c.last <= ms[*mi].first) =>
        {
            (c.first > 0 && crate::engine::link::is_people_word(ctx.w(c.first - 1))).then(|| e.clone())
        }
        _ => None,
    });
    if let Some(e) = said_first.filter(|_| !earlier_named && st.r.rank.is_none()) {
        st.r.entity = Some(e);
        st.r.entity_source = EntitySource::Named;
        for (oi, _) in &st.explicit {
            st.used[*oi] = true;
        }
        return;
    }
    if let Some((mi, e)) = st.explicit.first().filter(|_| !earlier_named) {
        st.r.entity = Some(e.clone());
        st.r.entity_source = EntitySource::Named;
        st.r.entity_span = Some(ms[*mi].span);
        st.used[*mi] = true;
        st.r.pieces
            .push(piece(ctx, &ms[*mi], PieceKind::Entity, e.clone(), None));
    } else if let Some(e) = implied_by_cmp.filter(|_| st.r.entity.is_none()) {
        st.r.entity = Some(e.clone());
        st.r.entity_source = EntitySource::Named;
    }
    if let Some(u) = &st.r.per_unit {
        st.r.entity = Some(u.clone());
        st.r.entity_source = EntitySource::Named;
    }
    // the remaining entity words are filters' context ("patients with wounds"): used
    for (mi, _) in st.explicit.iter().skip(1) {
        st.used[*mi] = true;
    }
}

/// The entity, as far as it is known before the values are read (a value of another
/// entity implies it: "open arterial ulcers with slough" are wounds).
pub(super) fn provisional(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    // the entity, as far as it is known before the values are read (a value of another
    // entity implies it: "open arterial ulcers with slough" are wounds)
    let counted_rows = || {
        // "assessments in september that …": a count measure's word said as rows names
        // its entity
        ms.iter().find_map(|m| {
            m.measure()
                .filter(|&mx| {
                    model.measures[mx].agg == MeasureAgg::Count && model.measures[mx].filter.is_none()
                })
                .map(|mx| model.measures[mx].entity.clone())
        })
    };
    st.provisional_entity = st.r.entity.clone().or_else(counted_rows).or_else(|| {
        ms.iter()
            .enumerate()
            .filter(|(mi, _)| !st.used[*mi])
            .find_map(|(_, m)| {
                m.entries.iter().find_map(|e| match &e.target {
                    Target::Value(a, _) if !a.starts_with("assessments.") => {
                        split_qualified(a).map(|(e, _)| e.to_owned())
                    }
                    _ => None,
                })
            })
    });
}

/// The entity when none was named: implied by filters, the metric, the ranking, "who",
/// a term or a grouping; and whether a clinic or clinician is only the count's context.
pub(super) fn fallback(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    if st.r.entity.is_none() {
        let implied =
            st.r.filters
                .iter()
                .flat_map(|f| match &f.constraint {
                    // "VLUs whose area dropped by 40 %": the records whose measurements
                    // changed, not the measurements
                    Constraint::Change { per, .. } => vec![format!("{per}.id")],
                    c => c.attributes().into_iter().map(str::to_owned).collect::<Vec<_>>(),
                })
                .chain(
                    st.r.values
                        .iter()
                        .flat_map(|v| v.hits.iter().map(|h| h.0.clone())),
                )
                .chain(st.r.cmps.iter().map(|c| match &c.subject {
                    CmpSubject::Attribute(a) => a.clone(),
                    CmpSubject::Column { .. } | CmpSubject::Aggregation { .. } => "wounds.id".to_owned(),
                }))
                .find_map(|a| split_qualified(&a).map(|(e, _)| e.to_owned()));
        let from_metric = match &st.r.metric {
            MetricSpec::Agg { attribute, .. } => split_qualified(attribute).map(|(e, _)| e.to_owned()),
            _ => None,
        };
        // "recent infections at Mercy": a term about records of a kind, said at a place
        // (a value of the records' parent) — those records, at that place
        let term_records = st.r.terms.iter().find_map(|t| {
            let term = &model.terms[t.term];
            (term.kind != TermKind::Measure && term.kind != TermKind::Column).then(|| term.applies_to.clone())
        });
        let implied = match (implied, term_records) {
            (Some(e), Some(applies))
                if !applies.contains(&e) && applies.first().is_some_and(|t| model.has_many(&e, t)) =>
            {
                applies.first().cloned()
            }
            (implied, _) => implied,
        };
        if let Some(e) = from_metric.or(implied) {
            st.r.entity = Some(e);
            st.r.entity_source = EntitySource::Implied;
        } else if let Some(e) = st.rank_subject.clone() {
            st.r.entity = Some(e);
            st.r.entity_source = EntitySource::Named;
        } else if ctx.cues.who.is_some() {
            st.r.entity = Some("patients".into());
            st.r.entity_source = EntitySource::Who;
        } else if let Some(t) =
            st.r.terms
                .iter()
                .find(|t| model.terms[t.term].kind != TermKind::Measure)
        {
            let applies = &model.terms[t.term].applies_to;
            st.r.term_entities = applies.clone();
            if let Some(e) = applies.first() {
                st.r.entity = Some(e.clone());
                st.r.entity_source = EntitySource::Term;
            }
        } else if let Some(ColSpec::ColumnTerm { term, .. }) = st.r.columns.first() {
            if let Some(e) = model.terms[*term].applies_to.first() {
                st.r.entity = Some(e.clone());
                st.r.entity_source = EntitySource::Term;
            }
        } else if let Some(e) = st.r.dims.iter().find_map(|d| match &d.spec {
            DimSpec::Attribute(a) => split_qualified(a).map(|(e, _)| e.to_owned()),
            DimSpec::ColumnTerm { .. } => None,
        }) {
            // "break down by etiology" with nothing else: that attribute's entity
            st.r.entity = Some(e);
            st.r.entity_source = EntitySource::Implied;
        }
    }
    // "how many vascular surgeons work in community clinics", "list podiatrists working
    // at community clinics", "show me the wound nurses at Lakeview": the people said right
    // after the count or list word, then where they are, are what is counted or listed
    // (not the clinics)
    if let Some(c) = ctx.cues.count.or(ctx.cues.list) {
        let head = (c + 1..ctx.tokens.len()).find(|&k| {
            !matches!(
                ctx.w(k),
                "many"
                    | "of"
                    | "the"
                    | "our"
                    | "me"
                    | "us"
                    | "all"
                    | "every"
                    | "each"
                    | "any"
                    | "please"
                    | "out"
            )
        });
        // (any kind of record said by its value: "list DFUs at community clinics")
        let people = st.r.pieces.iter().find(|p| {
            p.kind == PieceKind::Value
                && split_qualified(&p.target).is_some()
                && p.span
                    .is_some_and(|s| head.is_some_and(|h| ctx.tokens[h].span.start == s.start))
        });
        let where_they_are = |p: &LinkedPiece| {
            says_where_they_work(ctx, p)
                || p.span.is_some_and(|s| {
                    ctx.tokens
                        .iter()
                        .rposition(|t| t.span.end == s.end)
                        .is_some_and(|last| matches!(ctx.w(last + 1), "at" | "in" | "from"))
                })
        };
        // "compare Riverside and Oak Ridge on number of amputations": the count of the
        // compared places' records
        let compared_on = |e: &str| {
            ctx.cues.compare.is_some()
                && st
                    .r
                    .entity
                    .as_deref()
                    .is_some_and(|cur| cur != e && ctx.model.has_many(cur, e))
        };
        if let Some(p) = people
            && let Some((e, _)) = split_qualified(&p.target)
            && (where_they_are(p) || compared_on(e))
            && st.r.entity.as_deref() != Some(e)
        {
            st.r.entity = Some(e.to_owned());
            st.r.entity_source = EntitySource::Implied;
        }
    }
    if st.r.entity_source == EntitySource::Implied
        && matches!(st.r.entity.as_deref(), Some("clinics" | "clinicians"))
    {
        let context_word = |k: usize| matches!(ctx.w(k), "at" | "in" | "from" | "did" | "does" | "do" | "by");
        let verb_after = |k: usize| {
            matches!(
                ctx.w(k),
                "see"
                    | "saw"
                    | "seen"
                    | "treat"
                    | "treated"
                    | "assess"
                    | "assessed"
                    | "visit"
                    | "visited"
                    | "do"
                    | "did"
                    | "have"
                    | "had"
            ) && !matches!(ctx.w(k + 1), "we" | "you" | "they" | "i" | "there")
        };
        // "how many wound nurses work at Lakeview", "podiatrists based in community
        // clinics": the people themselves are counted, wherever the rest says they work
        let people_work = st.r.pieces.iter().any(|p| {
            p.kind == PieceKind::Value && p.target.starts_with("clinicians.") && says_where_they_work(ctx, p)
        });
        st.r.count_context_only = !people_work
            && st
                .r
                .pieces
                .iter()
                .filter(|p| p.kind == PieceKind::Value)
                .any(|p| {
                    let Some(span) = p.span else { return false };
                    let Some(k) = ctx.tokens.iter().position(|t| t.span.start == span.start) else {
                        return false;
                    };
                    let last = ctx
                        .tokens
                        .iter()
                        .rposition(|t| t.span.end == span.end)
                        .unwrap_or(k);
                    (k > 0 && context_word(k - 1)) || verb_after(last + 1)
                });
        // "Does Bayside have any open burns?": the burns are wounds — a value of the
        // records counted names them, so there is nothing to ask
        if st.r.count_context_only
            && st.r.entity.as_deref() == Some("clinics")
            && let Some(e) =
                st.r.pieces
                    .iter()
                    .filter(|p| p.kind == PieceKind::Value)
                    .filter_map(|p| p.target.split('.').next())
                    .find(|e| matches!(*e, "wounds" | "patients" | "assessments"))
        {
            st.r.entity = Some(e.to_owned());
            st.r.count_context_only = false;
        }
    }
    if st.r.entity_source == EntitySource::Who && ctx.cues.who.is_some() {
        st.r.pieces.push(LinkedPiece {
            kind: PieceKind::Entity,
            target: "patients".into(),
            value: None,
            text: ctx.w(ctx.cues.who.unwrap_or(0)).to_owned(),
            span: ctx.cues.who.map(|k| ctx.span_of(k, k + 1)),
            how: LinkMethod::Default,
            confidence: DEFAULT,
        });
    }
}

/// The records mention `mi` names (`e`) are the ones asked about; every other record word
/// is context.
/// Where the question's opening words end ("which", "list the", "how many", "show me all
/// our" …; "any" too when `any`).
fn opening_end(ctx: &Ctx<'_>, any: bool) -> usize {
    let mut k = 0;
    while matches!(
        ctx.w(k),
        "which" | "what" | "list" | "show" | "me" | "the" | "all" | "our" | "how" | "many" | "find" | "get"
    ) || any && ctx.w(k) == "any"
    {
        k += 1;
    }
    k
}

/// A demographic word said in the plural right after the opening words, as the people
/// themselves ("the seniors who …", "how many elderly have …"): the records it applies to
/// first (people).
fn head_people(ctx: &Ctx<'_>, st: &State) -> Option<String> {
    let model = ctx.model;
    let k = opening_end(ctx, true);
    let (mi, m) = ctx.mentions.iter().enumerate().find(|(_, m)| m.first == k)?;
    let t = m
        .terms()
        .find(|&t| model.terms[t].kind == crate::semantic::TermKind::Demographic)?;
    let word = ctx.w(m.last - 1);
    let people = word.ends_with('s') || matches!(word, "elderly" | "people");
    let next = ctx.w(m.last);
    (!st.used[mi]
        && people
        && matches!(
            next,
            "" | "who"
                | "that"
                | "with"
                | "having"
                | "have"
                | "has"
                | "at"
                | "in"
                | "registered"
                | "are"
                | "on"
        ))
    .then(|| model.terms[t].applies_to.first().cloned())
    .flatten()
}

/// The records said at the head of the question without their entity's own word: a term
/// ending in a record word ("chronic wounds"), or a value of one kind of record right
/// after the opening words ("how many open burns", "which stage 4 PIs").
fn head_records<'m>(ctx: &Ctx<'m>, st: &State) -> Option<(&'m crate::engine::link::Mention, String)> {
    let model = ctx.model;
    let term = ctx.mentions.iter().enumerate().find_map(|(mi, m)| {
        let word = ctx.w(m.last.checked_sub(1)?);
        let e = model.find_entity(word)?;
        (!st.used[mi] && m.entity().is_none() && m.terms().next().is_some() && m.last - m.first >= 2)
            .then(|| (m, e.name.clone()))
    });
    if term.is_some() {
        return term;
    }
    let k = opening_end(ctx, true);
    // "non-smoking diabetics with no history of wound infection": with no opening word,
    // the people said first by what they are (a value, or a yes/no attribute said as a
    // plural noun) before a clause
    let opened = k > 0 && matches!(ctx.w(0), "how" | "which" | "list" | "show" | "what");
    let mut k = k;
    if !opened {
        while matches!(ctx.w(k), "non" | "-") {
            k += 1;
        }
    }
    // the records a mention's values (or yes/no attributes) are of
    let owners = |m: &'m crate::engine::link::Mention| {
        m.entries.iter().filter_map(|en| match &en.target {
            Target::Value(a, _) => split_qualified(a).map(|(x, _)| x.to_owned()),
            Target::Attribute(e, a)
                if model.entities[*e].attributes[*a].ty == crate::semantic::AttributeType::Boolean =>
            {
                Some(model.entities[*e].name.clone())
            }
            _ => None,
        })
    };
    let (_, m) = ctx
        .mentions
        .iter()
        .enumerate()
        .find(|(mi, m)| m.first == k && !st.used[*mi] && m.entity().is_none())?;
    let e = owners(m).next()?;
    // the value's records are a plural noun said right there ("burns", "DFUs"), or the
    // next mention is another value of them ("open burns")
    let mut last = m.last;
    while let Some(n) = ctx
        .mentions
        .iter()
        .find(|n| n.first == last && n.entity().is_none() && owners(n).any(|o| o == e))
    {
        last = n.last;
    }
    let plural = ctx.tokens[last - 1].text.ends_with('s');
    let clause = opened
        || matches!(
            ctx.w(last),
            "with" | "who" | "that" | "having" | "have" | "has" | "registered" | "whose"
        );
    (e != "assessments" && plural && clause).then_some((m, e))
}

fn name_entity(ctx: &Ctx<'_>, st: &mut State, mi: usize, e: String) {
    let m = &ctx.mentions[mi];
    st.r.entity = Some(e.clone());
    st.r.entity_source = EntitySource::Named;
    st.r.entity_span = Some(m.span);
    st.used[mi] = true;
    st.r.pieces.push(piece(ctx, m, PieceKind::Entity, e, None));
    for (oi, _) in &st.explicit {
        st.used[*oi] = true;
    }
}

/// A count phrase naming related records ("number of assessments", a count attribute's
/// synonym) that opens the question, with no records named before it: those records.
fn opening_count_of_related(ctx: &Ctx<'_>, st: &State) -> Option<(usize, String)> {
    let c = ctx.cues.count?;
    let (mi, m) = ctx
        .mentions
        .iter()
        .enumerate()
        .find(|(mi, m)| !st.used[*mi] && m.first <= c && c < m.last)?;
    let opening = (0..m.first).all(|k| {
        !ctx.tokens[k].is_wordlike()
            || matches!(
                ctx.w(k),
                "the"
                    | "total"
                    | "overall"
                    | "what"
                    | "whats"
                    | "is"
                    | "was"
                    | "give"
                    | "me"
                    | "show"
                    | "tell"
                    | "get"
                    | "our"
                    | "so"
                    | "ok"
                    | "please"
            )
    });
    if !opening || m.entity().is_some() {
        return None;
    }
    let rel = m.attributes().find_map(|(e, a)| {
        crate::engine::link::counts_related(ctx.model, &super::state::qualified(ctx.model, e, a))
    })?;
    Some((mi, rel))
}

/// Records said by a value right after the opening word ("which vascular surgeons",
/// "list the wound nurses", "how many podiatrists"), then a verb of care they did ("have
/// assessed", "who saw"), then other records named: the value's records are the subject,
/// the records after the verb are what they did it to.
fn value_subject(ctx: &Ctx<'_>, st: &State) -> Option<(usize, String)> {
    let ms = ctx.mentions;
    let k = opening_end(ctx, false);
    if k == 0 {
        return None;
    }
    let (mi, m) = ms
        .iter()
        .enumerate()
        .find(|(mi, m)| m.first == k && !st.used[*mi] && m.entity().is_none())?;
    let e = m.entries.iter().find_map(|en| match &en.target {
        Target::Value(a, _) => split_qualified(a).map(|(e, _)| e.to_owned()),
        _ => None,
    })?;
    if e == "assessments" {
        return None;
    }
    let mut j = m.last;
    if matches!(ctx.w(j), "who" | "that") {
        j += 1;
    }
    if matches!(ctx.w(j), "have" | "has" | "had" | "did") {
        j += 1;
    }
    // "have never assessed", "did not see", "have ever seen"
    while matches!(
        ctx.w(j),
        "never" | "not" | "ever" | "n't" | "yet" | "once" | "already"
    ) {
        j += 1;
    }
    let verb = matches!(
        ctx.w(j),
        "assessed"
            | "seen"
            | "saw"
            | "treated"
            | "visited"
            | "examined"
            | "reviewed"
            | "measured"
            | "assess"
            | "see"
            | "treat"
            | "examine"
            | "review"
            | "checked"
    );
    // what they did it to: another record's word ("assessed wounds") or a value of
    // another record ("examined a venous leg ulcer")
    let other_value = ms.iter().any(|o| {
        o.first > j
            && o.entries.iter().any(|en| match &en.target {
                Target::Value(a, _) => split_qualified(a).is_some_and(|(oe, _)| oe != e),
                _ => false,
            })
    });
    (verb && (other_value || st.explicit.iter().any(|(oi, oe)| ms[*oi].first > j && *oe != e)))
        .then_some((mi, e))
}

/// A clinician value followed by where they work: "wound nurses work at …",
/// "podiatrists are based in …", "surgeons who work in …".
fn says_where_they_work(ctx: &Ctx<'_>, p: &LinkedPiece) -> bool {
    let Some(s) = p.span else { return false };
    let Some(last) = ctx.tokens.iter().rposition(|t| t.span.end == s.end) else {
        return false;
    };
    let next = if matches!(ctx.w(last + 1), "are" | "who" | "that") {
        last + 2
    } else {
        last + 1
    };
    matches!(
        ctx.w(next),
        "work" | "works" | "working" | "based" | "employed" | "stationed" | "staffed"
    )
}

/// The entity a question opens by asking for ("which clinic …", "what clinic …"), when
/// another entity is also named in it ("… is treating wound 1500").
fn asked_entity(ctx: &Ctx<'_>, st: &State) -> Option<(usize, String)> {
    let ms = ctx.mentions;
    let opening =
        |k: usize| (0..k).all(|i| !ctx.tokens[i].is_wordlike() || matches!(ctx.w(i), "so" | "and" | "ok"));
    let (mi, m) = ms.iter().enumerate().find(|(mi, m)| {
        !st.used[*mi] && (m.phrase.starts_with("which ") || m.phrase.starts_with("what ")) && opening(m.first)
            || m.first > 0
                && matches!(ctx.w(m.first - 1), "which" | "what")
                && opening(m.first - 1)
                && !st.used[*mi]
    })?;
    let entity = m
        .entity()
        .map(|e| ctx.model.entities[e].name.clone())
        .or_else(|| {
            m.phrase
                .split(' ')
                .find_map(|w| ctx.model.find_entity(w))
                .map(|e| e.name.clone())
        })?;
    // only when another entity is named too: otherwise the usual reading decides
    let other = st.explicit.iter().any(|(oi, e)| *oi != mi && *e != entity);
    other.then_some((mi, entity))
}

/// The first entity named, when it is said as the records of someone named before it
/// ("non smokers where none of their wounds …", "diabetics whose wounds …"): that
/// mention and the owner's entity, implied by a value, attribute or term said before it
/// that belongs to an entity having many of those records.
fn owned_records(ctx: &Ctx<'_>, st: &State) -> Option<(usize, String)> {
    let model = ctx.model;
    let &(mi, ref e) = st.explicit.first()?;
    let m = &ctx.mentions[mi];
    if m.first == 0 || !matches!(ctx.w(m.first - 1), "their" | "whose") {
        return None;
    }
    let owner_of = |o: &crate::engine::link::Mention| -> Option<String> {
        if o.entity().is_some() {
            return None;
        }
        let from_value = o.entries.iter().find_map(|x| match &x.target {
            Target::Value(a, _) => split_qualified(a).map(|(e, _)| e.to_owned()),
            _ => None,
        });
        from_value
            .or_else(|| {
                o.values
                    .iter()
                    .find_map(|h| split_qualified(&h.attribute).map(|(e, _)| e.to_owned()))
            })
            .or_else(|| o.attributes().next().map(|(e, _)| model.entities[e].name.clone()))
            .or_else(|| o.terms().find_map(|t| model.terms[t].applies_to.first().cloned()))
    };
    // the nearest one before that can own those records
    let owner = ctx
        .mentions
        .iter()
        .rev()
        .filter(|o| o.last < m.first)
        .filter_map(owner_of)
        .find(|owner| owner != e && model.has_many(owner, e))?;
    Some((mi, owner))
}

/// "count of smokers with an open wound", "how many diabetics have a foot ulcer": a plural
/// noun naming people by an attribute of theirs ("smokers", "diabetics") heads the
/// question, and the first record word comes after "with" / "who have" / "that had":
/// the people are counted, the records are what they have.
fn people_with_records(ctx: &Ctx<'_>, st: &State) -> Option<String> {
    let model = ctx.model;
    let &(mi, ref e) = st.explicit.first()?;
    let m = &ctx.mentions[mi];
    let mut k = m.first;
    while k > 0
        && matches!(
            ctx.w(k - 1),
            "a" | "an"
                | "any"
                | "no"
                | "one"
                | "more"
                | "or"
                | "at"
                | "least"
                | "some"
                | "open"
                | "active"
                | "current"
        )
    {
        k -= 1;
    }
    // the record word may carry its own value before it ("an open wound")
    while let Some(v) = ctx
        .mentions
        .iter()
        .find(|o| o.last == k && o.entity().is_none() && !o.value_attributes().is_empty())
    {
        k = v.first;
    }
    let mut j = k;
    if j > 0 && matches!(ctx.w(j - 1), "have" | "has" | "had" | "having") {
        j -= 1;
        if j > 0 && matches!(ctx.w(j - 1), "who" | "that" | "which") {
            j -= 1;
        }
    } else if j > 0 && ctx.w(j - 1) == "with" {
        j -= 1;
    } else {
        return None;
    }
    // the people's noun right before it, at the head of the question
    let o = ctx
        .mentions
        .iter()
        .find(|o| o.last == j && o.entity().is_none())?;
    if !(0..o.first).all(|t| {
        matches!(
            ctx.w(t),
            "count"
                | "of"
                | "how"
                | "many"
                | "number"
                | "no"
                | "."
                | "the"
                | "list"
                | "show"
                | "me"
                | "which"
                | "all"
                | "our"
                | "total"
                | "find"
                // "how many non-smokers have …"
                | "non"
                | "-"
        )
    }) {
        return None;
    }
    let word = o.phrase.rsplit(' ').next().unwrap_or_default();
    crate::engine::tokenize::singular(word)?;
    let owner = o
        .attributes()
        .next()
        .map(|(oe, _)| model.entities[oe].name.clone())
        .or_else(|| {
            o.value_attributes()
                .first()
                .and_then(|a| split_qualified(a).map(|(oe, _)| oe.to_owned()))
        })?;
    (owner != *e && model.has_many(&owner, e)).then_some(owner)
}
