//! Rankings: "top 5 clinics by healing rate", superlatives ("oldest", "largest"), ranking
//! words from the dictionary ("worst 3 VLUs"), "which etiology has the highest …".

use crate::semantic::{AttributeType, MeasureAgg, PlanChange, SortOrder, TermKind, split_qualified};

use crate::engine::PieceKind;

use crate::engine::intent as cues;

use crate::engine::reading::{Ctx, Dim, DimSpec, Filter, RankKey, RankSpec};

use super::state::{State, groupable, groupable_attr, mention_entity, piece, qualified, sortable};

/// A rank word that is also a value ("bottom") is a rank word.
pub(super) fn claim_rank_words(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    // a rank word that is also a value ("bottom") is a rank word
    if let Some(rc) = ctx.cues.rank {
        for (mi, m) in ms.iter().enumerate() {
            let ranking_term = m.terms().any(|t| model.terms[t].kind == TermKind::Ranking);
            if m.first >= rc.first && m.last <= rc.last && !ranking_term {
                st.used[mi] = true;
            }
        }
    }
}

/// The ranking: its subject, key and size ("top 5 clinics by healing rate").
pub(super) fn rank(ctx: &Ctx<'_>, st: &mut State) {
    // read already ("which wound had the largest area ever recorded")
    if st.r.rank.is_some() {
        return;
    }
    let model = ctx.model;
    let ms = ctx.mentions;
    let mention_covering = |k: usize| ctx.mention_covering(k);
    // "mean highest pain score per patient": the superlative is each record's extreme,
    // not a ranking
    let per_record = st.r.per_record.as_ref().map(|p| p.tokens);
    if let Some(rc) = ctx
        .cues
        .rank
        .filter(|rc| !per_record.is_some_and(|(a, b)| a <= rc.first && rc.first < b))
    {
        // the entity right after the cue ("top 5 clinics") is the one ranked
        if let Some(mi) = mention_covering(rc.last).or_else(|| mention_covering(rc.last + 1))
            && let Some(e) = ms[mi].entity()
            && !st.used[mi]
            && !rc.by_count
        {
            st.rank_subject = Some(model.entities[e].name.clone());
        }
        if st.rank_subject.is_none() {
            // "which clinic has the most …", "clinics with the highest …"; the records a
            // count compares ("patients with 4 or more wounds, sorted by number of wounds")
            // are counted for the subject, never the subject
            let counted = |mi: usize| ctx.comparisons.iter().any(|c| c.subject_mention == Some(mi));
            st.rank_subject = ms
                .iter()
                .enumerate()
                .rev()
                .filter(|(mi, m)| m.last <= rc.first && !counted(*mi))
                .find_map(|(_, m)| {
                    m.entity().map(|e| model.entities[e].name.clone()).or_else(|| {
                        m.terms().next().and_then(|_| {
                            m.phrase
                                .split(' ')
                                .find_map(|w| model.find_entity(w))
                                .map(|e| e.name.clone())
                        })
                    })
                });
        }
        if st.rank_subject.is_none() {
            // "the third most assessments of all our clinicians", "highest bmi among the
            // patients": the population named after "of all" / "among" is what is ranked
            st.rank_subject = among_population(ctx, rc);
        }
        if st.rank_subject.is_none() && rc.by_count && ctx.cues.who.is_some() {
            st.rank_subject = Some("patients".into());
        }
        let count_measure_after = st
            .measures
            .iter()
            .find(|(mi, mx)| ms[*mi].first >= rc.last && model.measures[*mx].agg == MeasureAgg::Count)
            .map(|&(_, mx)| mx);
        let superlative_attr = rc.superlative.map(|s| {
            // "what is the oldest open pressure injury": the records the words right after
            // the superlative are of ("oldest smokers …": people)
            let valued = || {
                use crate::engine::vocab::Target;
                let m = ms.iter().filter(|m| m.first >= rc.last).min_by_key(|m| m.first)?;
                m.entries.iter().find_map(|en| match &en.target {
                    Target::Value(a, _) => split_qualified(a).map(|(e, _)| e.to_owned()),
                    Target::Attribute(e, _) | Target::Entity(e) => Some(model.entities[*e].name.clone()),
                    _ => None,
                })
            };
            let subject = st
                .rank_subject
                .clone()
                .or_else(|| st.r.entity.clone())
                .or_else(valued)
                .unwrap_or_else(|| "patients".into());
            // "healing days, 20 longest", "the longest time to heal": the healing time
            let healing = ctx
                .tokens
                .windows(2)
                .any(|w| w[0].text == "healing" || w[0].text == "to" && w[1].text == "heal");
            match (s, subject.as_str()) {
                ("oldest" | "youngest", "patients") => "patients.age",
                ("longest" | "shortest", "wounds") if healing => "wounds.healing_days",
                ("oldest" | "youngest" | "longest" | "shortest", _) => "wounds.days_open",
                ("deepest", _) => "wounds.latest_depth",
                ("heaviest", _) => "patients.bmi",
                _ => "wounds.latest_area",
            }
        });
        let count_by = by_number_of(ctx, st, rc)
            .or_else(|| {
                count_by_attribute(ctx, st, rc)
                    .map(|(attribute, counted)| RankKey::CountBy { attribute, counted })
            })
            .or_else(|| top_values(ctx, st, rc));
        let key = if let Some(key) = count_by {
            key
        } else if let Some(key) = agg_by_attribute(ctx, st, rc) {
            key
        } else if let Some(key) = agg_of_group_before(ctx, st, rc) {
            key
        } else if let Some(a) =
            st.r.days_between
                .clone()
                .filter(|_| matches!(rc.superlative, Some("longest" | "shortest")))
        {
            // "the longest time between their first and latest visit": that day count
            RankKey::Attribute(a)
        } else if let Some(a) = superlative_attr {
            RankKey::Attribute(a.to_owned())
        } else if let Some(mi) = st.rank_key_mention {
            let m = &ms[mi];
            if let Some(mx) = m.measure() {
                RankKey::Measure(mx)
            } else if let Some((e, a)) = m.attributes().next() {
                RankKey::Attribute(qualified(model, e, a))
            } else {
                RankKey::None
            }
        } else if let (true, Some(mx)) = (rc.by_count, count_measure_after) {
            RankKey::Measure(mx)
        } else if rc.by_count {
            // "the most open wounds": count of the entity after the cue
            let after = (rc.last..ctx.tokens.len()).find_map(|k| {
                mention_covering(k).filter(|&mi| !st.used[mi] && mention_entity(model, &ms[mi]).is_some())
            });
            match after.and_then(|mi| mention_entity(model, &ms[mi])) {
                Some(e) => RankKey::CountOf(e),
                None => RankKey::None,
            }
        } else if let Some((mi, mx)) = st
            .measures
            .first()
            .copied()
            .filter(|(mi, _)| ms[*mi].first >= rc.last)
        {
            // "highest healing rate"
            let _ = mi;
            RankKey::Measure(mx)
        } else {
            // "highest pain": the attribute right after the cue; "second-highest initial
            // wound area": past the first-visit words, the value kept for that visit
            let first_visit = match st.r.visit_hint_at {
                Some((a, b)) if st.r.visit_first && a == rc.last => Some(b),
                _ => None,
            };
            let after = mention_covering(first_visit.unwrap_or(rc.last)).filter(|&mi| !st.used[mi]);
            match after.and_then(|mi| {
                ms[mi]
                    .attributes()
                    .find(|&(e, a)| sortable(model, e, a))
                    .map(|x| (mi, x))
            }) {
                Some((mi, (e, a))) => {
                    st.used[mi] = true;
                    let a = qualified(model, e, a);
                    let base = match model.attribute(&a).and_then(|x| x.attribute.derived.clone()) {
                        Some(crate::semantic::Derived::Latest { attribute, .. }) => attribute,
                        _ => a.clone(),
                    };
                    match first_visit.and_then(|_| crate::engine::plan_ops::first_of(model, &base)) {
                        Some(first) => RankKey::Attribute(first),
                        None => RankKey::Attribute(a),
                    }
                }
                None => RankKey::None,
            }
        };
        // "the clinic with the highest number of assessments": a count kept on other
        // records (a wound's assessment count) ranks the subject by its own related rows
        // "top 5 clinicians with the most assessments", "top 3 clinics with the fewest
        // open wounds": after "top", the extreme said with "the most/fewest" is the key
        // and its direction
        let extreme_after = (ctx.w(rc.first) == "top")
            .then(|| {
                (rc.last..ctx.tokens.len()).find(|&k| {
                    ctx.w(k.wrapping_sub(1)) == "the"
                        && matches!(
                            ctx.w(k),
                            "most"
                                | "fewest"
                                | "least"
                                | "highest"
                                | "lowest"
                                | "largest"
                                | "smallest"
                                | "greatest"
                        )
                })
            })
            .flatten();
        let key = match key {
            RankKey::None => extreme_after
                .filter(|&k| matches!(ctx.w(k), "most" | "fewest" | "least"))
                .and_then(|k| mention_covering(k + 1))
                .filter(|&mi| !st.used[mi])
                .and_then(|mi| mention_entity(model, &ms[mi]))
                .filter(|e| st.rank_subject.as_deref() != Some(e.as_str()))
                .map_or(RankKey::None, RankKey::CountOf),
            other => other,
        };
        let order = match extreme_after.map(|k| ctx.w(k)) {
            Some("fewest" | "least" | "lowest" | "smallest") => SortOrder::Asc,
            _ => rc.order,
        };
        let key = match key {
            RankKey::Attribute(a)
                if st.rank_subject.as_deref().is_some_and(|subject| {
                    split_qualified(&a).is_some_and(|(owner, _)| owner != subject)
                }) && crate::engine::link::counts_related(model, &a).is_some() =>
            {
                RankKey::CountOf(crate::engine::link::counts_related(model, &a).unwrap_or_default())
            }
            other => other,
        };
        if let RankKey::Measure(mx) = key {
            st.measures.retain(|&(_, m)| m != mx);
            if st.measures.is_empty() {
                // keep the measure as the metric too
                if let Some(mi) = st.rank_key_mention {
                    st.measures.push((mi, mx));
                }
            }
        }
        let n_before_subject = rc.n.or_else(|| {
            ms.iter()
                // "which 3 patients", "which 5 open wounds" (the records' word with their
                // state: a count's phrase)
                // "which 2 etiologies": values said in the plural right after "which N"
                .filter(|m| {
                    m.last <= rc.first
                        && (m.entity().is_some()
                            || m.measure().is_some()
                            || m.first >= 2 && matches!(ctx.w(m.first - 2), "which" | "what"))
                })
                .filter_map(|m| m.first.checked_sub(1))
                // "more than 100 patients": a count compared, not how many are shown
                .filter(|&k| !ctx.comparisons.iter().any(|c| c.first <= k && k < c.last))
                .find_map(|k| {
                    ctx.tokens
                        .get(k)
                        .filter(|t| {
                            matches!(
                                t.kind,
                                crate::engine::tokenize::TokenKind::Number
                                    | crate::engine::tokenize::TokenKind::NumberWord
                            )
                        })
                        .and_then(|t| t.num)
                })
                .filter(|v| *v >= 1.0 && *v <= 1000.0 && v.fract() == 0.0)
                .map(|v| v as u32)
        });
        // "which clinic has the most wounds": one clinic
        let singular_which = || {
            ctx.tokens.iter().enumerate().any(|(k, t)| {
                matches!(t.text.as_str(), "which" | "what")
                    && k + 1 < rc.first
                    && st.rank_subject.as_deref().is_some_and(|s| {
                        let word = ctx.w(k + 1);
                        crate::engine::tokenize::singular(word).is_none()
                            && ctx.model.find_entity(word).is_some_and(|e| e.name == s)
                    })
            })
        };
        let n_before_subject = n_before_subject.or_else(|| singular_which().then_some(1));
        st.r.rank = Some(RankSpec {
            n: n_before_subject,
            order,
            key,
            subject: st.rank_subject.clone(),
            span: ctx.span_of(rc.first, rc.last),
            skip: rc.skip,
            every: n_before_subject.is_none()
                && matches!(
                    ctx.w(rc.first),
                    "rank" | "ranked" | "ranking" | "sorted" | "ordered" | "arranged" | "sort" | "order"
                ),
        });
    }
}

/// The entity named as the population after the cue: "of all (our|the) X", "among (all)
/// (our|the) X".
fn among_population(ctx: &Ctx<'_>, rc: cues::RankCue) -> Option<String> {
    let model = ctx.model;
    (rc.last..ctx.tokens.len()).find_map(|k| {
        let mut j = match (ctx.w(k), ctx.w(k + 1)) {
            ("of", "all") => k + 2,
            ("among" | "amongst", _) => k + 1,
            _ => return None,
        };
        while matches!(ctx.w(j), "all" | "our" | "the" | "my" | "your") {
            j += 1;
        }
        let mi = ctx
            .mention_covering(j)
            .filter(|&mi| ctx.mentions[mi].first == j)?;
        let e = ctx.mentions[mi].entity()?;
        Some(model.entities[e].name.clone())
    })
}

/// "worst 3 VLUs": a ranking word the dictionary defines for other entities still asks
/// for a ranking, by what is not said.
pub(super) fn ranking_term(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    if st.r.rank.is_none() {
        let entity = st.r.entity.clone().unwrap_or_else(|| "wounds".into());
        if let Some(pos) = st.r.terms.iter().position(|t| {
            let term = &model.terms[t.term];
            term.kind == TermKind::Ranking
                && !term.applies_to.contains(&t.anchor)
                && !term.applies_to.contains(&entity)
        }) {
            let t = st.r.terms.remove(pos);
            let m = &ms[t.mention];
            let num = |k: usize| {
                ctx.tokens
                    .get(k)
                    .filter(|x| {
                        matches!(
                            x.kind,
                            crate::engine::tokenize::TokenKind::Number
                                | crate::engine::tokenize::TokenKind::NumberWord
                        )
                    })
                    .and_then(|x| x.num)
                    .filter(|v| (1.0..=1000.0).contains(v) && v.fract() == 0.0)
                    .map(|v| v as u32)
            };
            let n = num(m.last).or_else(|| m.first.checked_sub(1).and_then(num));
            let order = if matches!(
                m.phrase.as_str(),
                "smallest" | "tiniest" | "quiet" | "quietest" | "least busy"
            ) {
                SortOrder::Asc
            } else {
                SortOrder::Desc
            };
            let last = if num(m.last).is_some() { m.last + 1 } else { m.last };
            st.r.rank = Some(RankSpec {
                n,
                order,
                key: RankKey::None,
                subject: Some(entity),
                span: ctx.span_of(m.first, last),
                skip: 0,
                every: false,
            });
        }
    }
}

/// "which etiology has the highest average pain score", "what location had the most
/// wounds": the answer is a value of the attribute named after "which" — the groups of
/// that attribute ranked by the metric, the first one. `(attribute, order)`.
pub(crate) fn which_attribute_extreme(ctx: &Ctx<'_>) -> Option<(String, SortOrder)> {
    let model = ctx.model;
    let first = ctx.tokens.iter().position(|t| t.is_wordlike())?;
    if !matches!(ctx.w(first), "which" | "what") {
        return None;
    }
    let m = ctx.mentions.iter().find(|m| m.first == first + 1)?;
    if m.entity().is_some() || m.measure().is_some() {
        return None;
    }
    let (e, a) = m.attributes().next()?;
    if !groupable(model, e, a) {
        return None;
    }
    let rank = ctx.cues.rank?;
    let linking = (m.last..rank.first).all(|k| {
        matches!(
            ctx.w(k),
            "has"
                | "had"
                | "have"
                | "is"
                | "was"
                | "shows"
                | "showed"
                | "with"
                | "gets"
                | "got"
                | "the"
                | "sees"
        )
    });
    (linking && rank.first > m.last).then(|| (qualified(model, e, a), rank.order))
}

/// Words after "most"/"least" that make it a count of rows per value ("the most common
/// etiology", "the least frequent location").
fn frequency_word(w: &str) -> bool {
    matches!(
        w,
        "common" | "frequent" | "prevalent" | "popular" | "usual" | "often" | "frequently" | "commonly"
    )
}

/// "the most common etiology", "which discipline recorded the most assessments", "what
/// location has the fewest wounds": a ranking of an attribute's values by how many rows
/// each has. The attribute is the one after the frequency word, or the one asked about
/// with "which"/"what" before the cue; the rows counted are the entity named after the
/// cue, else the attribute's own entity.
fn count_by_attribute(ctx: &Ctx<'_>, st: &mut State, rc: cues::RankCue) -> Option<(String, String)> {
    let model = ctx.model;
    let ms = ctx.mentions;
    let common = frequency_word(ctx.w(rc.last));
    // "top 3 etiologies with the most open wounds": the values said right after the cue
    // are ranked by the count said after them
    let most_after = (rc.last..ctx.tokens.len()).any(|k| {
        matches!(ctx.w(k), "most" | "fewest" | "least")
            || matches!(
                ctx.w(k),
                "highest" | "largest" | "greatest" | "lowest" | "smallest"
            ) && matches!(ctx.w(k + 1), "number" | "count" | "no" | "amount")
    });
    if !rc.by_count && !common && !most_after {
        return None;
    }
    let attribute_of = |mi: usize| {
        let m = &ms[mi];
        if st.used[mi] || m.entity().is_some() || m.measure().is_some() {
            return None;
        }
        m.attributes()
            .find(|&(e, a)| {
                groupable(model, e, a) && model.entities[e].attributes[a].ty == AttributeType::Text
            })
            .map(|(e, a)| qualified(model, e, a))
            .or_else(|| {
                // "top 3 locations with the most open wounds": a column word's default
                // reading (where on the body), the one its badge shows
                m.terms()
                    .filter(|&t| model.terms[t].kind == crate::semantic::TermKind::Column)
                    .find_map(|t| match model.terms[t].default_option()?.change.as_ref()? {
                        crate::semantic::PlanChange::ChooseAttribute { attribute } => {
                            let (e, a) = split_qualified(attribute)?;
                            let ent = model.entities.iter().position(|x| x.name == e)?;
                            let at = model.entities[ent].attributes.iter().position(|x| x.name == a)?;
                            (groupable(model, ent, at)
                                && model.entities[ent].attributes[at].ty == AttributeType::Text)
                                .then(|| attribute.clone())
                        }
                        _ => None,
                    })
            })
    };
    let after = common
        .then(|| ctx.mention_covering(rc.last + 1))
        .flatten()
        .and_then(|mi| attribute_of(mi).map(|a| (mi, a)))
        .or_else(|| {
            // "top 3 etiologies with the most …", "top locations with the fewest …"
            (most_after && !rc.by_count)
                .then(|| {
                    ctx.mention_covering(rc.last)
                        .or_else(|| ctx.mention_covering(rc.last + 1))
                })
                .flatten()
                .filter(|&mi| ctx.tokens[ctx.mentions[mi].last - 1].text.ends_with('s'))
                .and_then(|mi| attribute_of(mi).map(|a| (mi, a)))
        });
    let asked = || {
        ms.iter().enumerate().find_map(|(mi, m)| {
            // "which etiologies have the most …", "which 2 etiologies have the most …"
            let which = m.first > 0 && matches!(ctx.w(m.first - 1), "which" | "what")
                || m.first > 1
                    && ctx.tokens[m.first - 1].kind == crate::engine::tokenize::TokenKind::Number
                    && matches!(ctx.w(m.first - 2), "which" | "what")
                || m.phrase.starts_with("which ")
                || m.phrase.starts_with("what ");
            (which && m.last <= rc.first)
                .then(|| attribute_of(mi))
                .flatten()
                .map(|a| (mi, a))
        })
    };
    let (mi, attribute) = after.or_else(asked)?;
    st.used[mi] = true;
    // a column word read by its default: said, so "locations" is never silently the body
    if ms[mi].attributes().next().is_none()
        && let Some(label) = ms[mi]
            .terms()
            .find_map(|t| model.terms[t].default_option().map(|o| o.label.clone()))
    {
        st.r.notes.push((
            ms[mi].span,
            format!("\"{}\" read as {}", ctx.text(ms[mi].span), label.to_lowercase()),
        ));
    }
    if common {
        st.r.consumed.push((rc.last, rc.last + 1));
    }
    let own = split_qualified(&attribute).map(|(e, _)| e.to_owned())?;
    // the rows counted: a count measure or entity named after the cue
    let measure = st
        .measures
        .iter()
        .find(|(m, mx)| ms[*m].first >= rc.last && model.measures[*mx].agg == MeasureAgg::Count)
        .copied();
    // "which etiology has the most open wounds": the measure's own condition (open)
    // holds for the rows counted in every group
    if let Some((m, mx)) = measure
        && let Some(c) = &model.measures[mx].filter
    {
        st.r.filters.push(Filter {
            constraint: c.clone(),
            first: ms[m].first,
            span: ms[m].span,
        });
    }
    let counted = measure
        .map(|(_, mx)| model.measures[mx].entity.clone())
        .or_else(|| {
            ms.iter()
                .enumerate()
                .filter(|(oi, o)| !st.used[*oi] && o.first >= rc.last)
                .find_map(|(_, o)| o.entity().map(|e| model.entities[e].name.clone()))
        })
        .unwrap_or(own);
    Some((attribute, counted))
}

/// "top 3 locations per clinic", "bottom 2 etiologies of open wounds", "top 4 tissue
/// types": an attribute's values, said in the plural right after "top"/"bottom" with no
/// key ("by …"), are ranked by how many rows each has — not the records of a ranking
/// word's default measure. A column word ("locations": which location?) stays its own
/// question as the ranked grouping.
fn top_values(ctx: &Ctx<'_>, st: &mut State, rc: cues::RankCue) -> Option<RankKey> {
    let model = ctx.model;
    let ms = ctx.mentions;
    if rc.by_count
        || rc.superlative.is_some()
        || !matches!(ctx.w(rc.first), "top" | "bottom")
        || (rc.last..ctx.tokens.len()).any(|k| matches!(ctx.w(k), "by" | "with"))
    {
        return None;
    }
    let mi = ctx
        .mention_covering(rc.last)
        .filter(|&mi| ms[mi].first == rc.last && !st.used[mi])?;
    let m = &ms[mi];
    if m.entity().is_some() || m.measure().is_some() || !ctx.tokens[m.last - 1].text.ends_with('s') {
        return None;
    }
    let text_groupable = |a: &str| {
        model
            .attribute(a)
            .is_some_and(|r| groupable_attr(r.attribute) && r.attribute.ty == AttributeType::Text)
    };
    let attribute = m
        .attributes()
        .map(|(e, a)| qualified(model, e, a))
        .find(|q| text_groupable(q));
    let column = || {
        m.terms()
            .filter(|&t| model.terms[t].kind == TermKind::Column)
            .find_map(
                |t| match model.terms[t].default_option().and_then(|o| o.change.as_ref()) {
                    Some(PlanChange::ChooseAttribute { attribute }) if text_groupable(attribute) => {
                        Some((t, attribute.clone()))
                    }
                    _ => None,
                },
            )
    };
    let term = if attribute.is_none() { column() } else { None };
    let own = attribute
        .clone()
        .or_else(|| term.as_ref().map(|(_, a)| a.clone()))
        .and_then(|a| split_qualified(&a).map(|(e, _)| e.to_owned()))?;
    // the rows counted: a count measure or an entity named after the values
    let counted = st
        .measures
        .iter()
        .find(|(o, mx)| ms[*o].first >= m.last && model.measures[*mx].agg == MeasureAgg::Count)
        .map(|&(_, mx)| model.measures[mx].entity.clone())
        .or_else(|| {
            ms.iter()
                .enumerate()
                .filter(|(oi, o)| !st.used[*oi] && o.first >= m.last)
                .find_map(|(_, o)| o.entity().map(|e| model.entities[e].name.clone()))
        })
        .unwrap_or(own);
    st.used[mi] = true;
    // the ranking word is the cue, not a dictionary ranking of other records
    if let Some(ti) = ctx.mention_covering(rc.first) {
        st.used[ti] = true;
    }
    match (attribute, term) {
        (Some(attribute), _) => Some(RankKey::CountBy { attribute, counted }),
        (None, Some((t, _))) => {
            st.r.dims.insert(
                0,
                Dim {
                    spec: DimSpec::ColumnTerm { term: t, mention: mi },
                    span: m.span,
                },
            );
            let mut p = piece(ctx, m, PieceKind::Dimension, model.terms[t].id.clone(), None);
            p.confidence = p.confidence.min(crate::engine::link::EXACT);
            st.r.pieces.push(p);
            Some(RankKey::CountPerGroup(counted))
        }
        (None, None) => None,
    }
}

/// "top 3 body sites for DFUs by no. of wounds", "top 5 clinicians by number of
/// assessments in 2026", "bottom 2 etiologies by count of patients": the ranking's key is
/// said as a count of records after "by". The ranked thing is what the cue names: an
/// attribute's values (`(attribute, counted)`) or an entity (`("", counted)`: its rows'
/// related records counted).
fn by_number_of(ctx: &Ctx<'_>, st: &mut State, rc: cues::RankCue) -> Option<RankKey> {
    let model = ctx.model;
    let ms = ctx.mentions;
    let by = (rc.last..ctx.tokens.len()).find(|&k| ctx.w(k) == "by")?;
    let mut k = by + 1;
    if ctx.w(k) == "the" {
        k += 1;
    }
    let count_word = |w: &str| {
        matches!(
            w,
            "no" | "number"
                | "count"
                | "nr"
                | "num"
                | "amount"
                | "total"
                | "numbers"
                | "counts"
                | "#"
                | "tally"
        )
    };
    // "by number of wounds", "by wound count" read whole: a count measure, or a count of
    // related records
    // (a count of some of them, "open wounds": those rows are what is counted)
    let counted_by = |m: &crate::engine::link::Mention| -> Option<String> {
        m.measure()
            .filter(|&x| model.measures[x].agg == MeasureAgg::Count)
            .map(|x| model.measures[x].entity.clone())
            .or_else(|| {
                m.attributes()
                    .find_map(|(e, a)| crate::engine::link::counts_related(model, &qualified(model, e, a)))
            })
    };
    let whole = ms.iter().position(|m| m.first == k && counted_by(m).is_some());
    // "by assessments count", "by patient numbers": the records' word, then the count word
    let trailing = whole
        .is_none()
        .then(|| {
            ms.iter()
                .position(|m| m.first == k && m.entity().is_some() && count_word(ctx.w(m.last)))
        })
        .flatten();
    let found = whole.or(trailing);
    if found.is_none() {
        // "by number of wounds", "by # of patients", "by count of the assessments"
        if !count_word(ctx.w(k)) {
            return None;
        }
        k += 1;
        if ctx.w(k) == "." {
            k += 1;
        }
        if ctx.w(k) != "of" {
            return None;
        }
    }
    let (ci, counted) = ms
        .iter()
        .enumerate()
        .find(|(mi, m)| {
            found == Some(*mi)
                || found.is_none()
                    && (m.first == k + 1
                        || m.first == k + 2 && matches!(ctx.w(k + 1), "the" | "their" | "its"))
        })
        .and_then(|(mi, m)| {
            m.entity()
                .map(|e| model.entities[e].name.clone())
                .or_else(|| counted_by(m))
                .map(|e| (mi, e))
        })?;
    // what is ranked: the words right after the cue ("body sites", "clinicians"), or
    // right before a verb of ordering ("clinicians ranked by no. of assessments")
    let before_verb = matches!(
        ctx.w(rc.first),
        "ranked" | "sorted" | "ordered" | "arranged" | "rank" | "sort" | "order"
    )
    .then(|| ms.iter().position(|m| m.last == rc.first))
    .flatten();
    let mut ri = before_verb
        .or_else(|| ctx.mention_covering(rc.last))
        .or_else(|| ctx.mention_covering(rc.last + 1))?;
    // "wound locations": the entity's word qualifies the attribute after it
    if ms[ri].entity().is_some()
        && let Some(ai) = ms
            .iter()
            .position(|o| o.first == ms[ri].last && o.entity().is_none())
        && ms[ai].attributes().next().is_some()
    {
        st.used[ri] = true;
        ri = ai;
    }
    if ri == ci {
        return None;
    }
    let r = &ms[ri];
    let text_attr = r
        .attributes()
        .find(|&(e, a)| groupable(model, e, a) && model.entities[e].attributes[a].ty == AttributeType::Text)
        .map(|(e, a)| qualified(model, e, a));
    // "top 4 locations by wound count": a column word whose options are all groupable
    // attributes groups the counted records; which attribute is the word's own question
    let column_term = r.terms().find(|&t| {
        let term = &model.terms[t];
        term.kind == TermKind::Column
            && !term.options.is_empty()
            && term.options.iter().all(|o| match &o.change {
                Some(PlanChange::ChooseAttribute { attribute }) => model
                    .attribute(attribute)
                    .is_some_and(|x| groupable_attr(x.attribute)),
                _ => false,
            })
    });
    let filtered = ms[ci]
        .measure()
        .is_some_and(|x| model.measures[x].filter.is_some());
    let key = if r.entity().is_some() {
        // "top clinics by number of open wounds": ranked by the measure itself (read
        // with the measures), not by every related row
        if filtered {
            return None;
        }
        let e = model.entities[r.entity()?].name.clone();
        if e == counted {
            return None;
        }
        st.rank_subject = Some(e);
        RankKey::CountOf(counted)
    } else if let Some(attribute) = text_attr {
        RankKey::CountBy { attribute, counted }
    } else if let Some(t) = column_term {
        st.r.pieces.push(piece(
            ctx,
            r,
            PieceKind::Dimension,
            model.terms[t].id.clone(),
            None,
        ));
        st.r.dims.push(Dim {
            spec: DimSpec::ColumnTerm { term: t, mention: ri },
            span: r.span,
        });
        RankKey::CountPerGroup(counted)
    } else {
        return None;
    };
    // "by number of open wounds": only the open ones are counted
    if let Some(f) = ms[ci].measure().and_then(|x| model.measures[x].filter.clone()) {
        st.r.filters.push(crate::engine::reading::Filter {
            constraint: f,
            first: ms[ci].first,
            span: ms[ci].span,
        });
    }
    st.used[ri] = true;
    st.used[ci] = true;
    st.r.consumed.push((by, ms[ci].first));
    if trailing.is_some() {
        st.r.consumed.push((ms[ci].last, ms[ci].last + 1));
    }
    Some(key)
}

/// "bottom 3 etiologies by mean initial area", "top 4 locations by average latest pain":
/// the values of an attribute (said in the plural right after the cue) ranked by an
/// aggregate of a measured attribute said after "by".
fn agg_by_attribute(ctx: &Ctx<'_>, st: &mut State, rc: cues::RankCue) -> Option<RankKey> {
    let model = ctx.model;
    let ms = ctx.mentions;
    let (gi, g) = ms
        .iter()
        .enumerate()
        .find(|(gi, m)| (m.first == rc.last || m.first == rc.last + 1) && !st.used[*gi])?;
    if g.entity().is_some()
        || g.measure().is_some()
        || g.names_value()
        || !ctx.tokens[g.last - 1].text.ends_with('s')
    {
        return None;
    }
    let attribute = g
        .attributes()
        .find(|&(e, a)| groupable(model, e, a) && model.entities[e].attributes[a].ty == AttributeType::Text)
        .map(|(e, a)| qualified(model, e, a))?;
    // "by mean initial area": the aggregate word right after "by", then the attribute
    let by = (g.last..(g.last + 6).min(ctx.tokens.len())).find(|&k| ctx.w(k) == "by")?;
    // or a measure named by its own words ("by average pain", "by mean current area")
    let named_measure = ms.iter().enumerate().find_map(|(mi, m)| {
        let mx = m.measure().filter(|_| m.first == by + 1)?;
        let x = &model.measures[mx];
        (x.agg != MeasureAgg::Count && x.filter.is_none())
            .then(|| x.attribute.clone().map(|attr| (mi, x.agg, attr)))
            .flatten()
    });
    let (mi, agg, measured) = match named_measure {
        Some(found) => found,
        None => {
            let (a, b, agg) = ctx.cues.agg?;
            if a != by + 1 || agg == MeasureAgg::Count {
                return None;
            }
            let (mi, m) = ms
                .iter()
                .enumerate()
                .find(|(_, m)| m.first == b || m.first == b + 1 && matches!(ctx.w(b), "the" | "of"))?;
            let measured = m
                .attributes()
                .find(|&(e, at)| model.entities[e].attributes[at].ty.is_numeric())
                .map(|(e, at)| qualified(model, e, at))?;
            (mi, agg, measured)
        }
    };
    st.r.consumed.push((by, ms[mi].last));
    agg_key(ctx, st, gi, attribute, mi, agg, measured)
}

/// The ranking key of an attribute's values (mention `gi`) ranked by an aggregate of a
/// measured attribute (mention `mi`): the measured attribute must reach the grouped one
/// (a per-visit measurement grouped by a wound attribute is each wound's latest value).
fn agg_key(
    ctx: &Ctx<'_>,
    st: &mut State,
    gi: usize,
    attribute: String,
    mi: usize,
    agg: MeasureAgg,
    measured: String,
) -> Option<RankKey> {
    let model = ctx.model;
    let ms = ctx.mentions;
    let (g, m) = (&ms[gi], &ms[mi]);
    // "the highest average initial wound area": the value the record keeps for its first
    // visit
    let measured = match st.r.visit_hint_at {
        Some((_, end)) if st.r.visit_first && end == m.first => {
            let base = match model
                .attribute(&measured)
                .and_then(|x| x.attribute.derived.clone())
            {
                Some(crate::semantic::Derived::Latest { attribute, .. }) => attribute,
                _ => measured.clone(),
            };
            crate::engine::plan_ops::first_of(model, &base).unwrap_or(measured)
        }
        _ => measured,
    };
    let reaches = |measured: &str| {
        split_qualified(measured)
            .zip(split_qualified(&attribute))
            .is_some_and(|((owner, _), (dim_owner, _))| model.has_one(owner, dim_owner))
    };
    // a per-visit measurement per value of a wound attribute: each wound's latest value
    let measured = if reaches(&measured) {
        measured
    } else {
        crate::engine::plan_ops::latest_of(model, &measured).filter(|l| reaches(l))?
    };
    st.used[gi] = true;
    st.used[mi] = true;
    st.r.pieces
        .push(piece(ctx, g, PieceKind::Dimension, attribute.clone(), None));
    st.r.pieces
        .push(piece(ctx, m, PieceKind::Attribute, measured.clone(), None));
    Some(RankKey::AggBy {
        attribute,
        agg,
        measured,
    })
}

/// "which discipline records the highest mean pain score", "region with the highest avg
/// initial wound area", "the etiology with the longest average time to heal": the values
/// of an attribute said *before* the cue, as what the question asks for (first, or after
/// "which"/"what", an entity's word allowed in front: "which wound etiology"), ranked by
/// an aggregate said right after the cue. The answer is the group and its aggregate, not
/// the overall aggregate.
fn agg_of_group_before(ctx: &Ctx<'_>, st: &mut State, rc: cues::RankCue) -> Option<RankKey> {
    let model = ctx.model;
    let ms = ctx.mentions;
    if rc.by_count && !matches!(ctx.w(rc.first), "most" | "least") {
        return None;
    }
    // the aggregate right after the cue: an aggregate word, or a measure named by its
    // own words ("the highest average pain")
    let mut k = rc.last;
    if ctx.w(k) == "the" {
        k += 1;
    }
    let named_measure = ms.iter().enumerate().find_map(|(mi, m)| {
        let mx = m.measure().filter(|_| m.first == k)?;
        let x = &model.measures[mx];
        (x.agg != MeasureAgg::Count && x.filter.is_none())
            .then(|| x.attribute.clone().map(|attr| (mi, x.agg, attr)))
            .flatten()
    });
    let (mi, agg, measured) = match named_measure {
        Some(found) => found,
        None => {
            let (a, b, agg) = ctx.cues.agg?;
            if a != k || agg == MeasureAgg::Count {
                return None;
            }
            // "avg initial wound area", "average patient bmi", "mean of the pain score":
            // the first measured attribute within a few words, past an entity's word
            let (mi, m) = ms.iter().enumerate().find(|(mi, m)| {
                m.first >= b
                    && m.first <= b + 2
                    && !st.used[*mi]
                    && m.entity().is_none()
                    && m.attributes()
                        .any(|(e, at)| model.entities[e].attributes[at].ty.is_numeric())
            })?;
            let between_ok = (b..m.first).all(|j| {
                matches!(ctx.w(j), "the" | "of" | "their" | "its")
                    || st.r.visit_hint_at.is_some_and(|(x, y)| x <= j && j < y)
                    || ms
                        .iter()
                        .any(|o| o.first <= j && j < o.last && o.entity().is_some())
            });
            if !between_ok {
                return None;
            }
            let measured = m
                .attributes()
                .find(|&(e, at)| model.entities[e].attributes[at].ty.is_numeric())
                .map(|(e, at)| qualified(model, e, at))?;
            (mi, agg, measured)
        }
    };
    // the grouped attribute: the last text attribute said before the cue
    let (gi, g) = ms
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m.last <= rc.first && m.entity().is_none() && m.measure().is_none())?;
    if st.used[gi] || g.names_value() {
        return None;
    }
    let attribute = g
        .attributes()
        .find(|&(e, a)| groupable(model, e, a) && model.entities[e].attributes[a].ty == AttributeType::Text)
        .map(|(e, a)| qualified(model, e, a))?;
    // it is what is asked for: nothing but "which"/"what", an article or an entity's word
    // before it
    let lead_ok = (0..g.first).all(|j| {
        !ctx.tokens[j].is_wordlike()
            || matches!(
                ctx.w(j),
                "which" | "what" | "the" | "show" | "me" | "list" | "find" | "give" | "tell" | "name"
            )
            || ms
                .iter()
                .any(|o| o.first <= j && j < o.last && o.entity().is_some())
    });
    // and a verb or "with" at most links it to the cue ("records the", "has the", "with the")
    let link_ok = rc.first - g.last <= 3
        && (g.last..rc.first)
            .all(|j| !ctx.tokens[j].is_wordlike() || !ms.iter().any(|o| o.first <= j && j < o.last));
    if !lead_ok || !link_ok {
        return None;
    }
    agg_key(ctx, st, gi, attribute, mi, agg, measured)
}
