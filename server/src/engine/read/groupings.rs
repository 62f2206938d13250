//! Groupings ("by clinic", "per region", "for each clinic") and sort keys.

use crate::semantic::{SortOrder, TermKind};

use crate::engine::PieceKind;
use crate::engine::link::EXACT;
use crate::engine::reading::{Ctx, Dim, DimSpec};

use super::state::{State, groupable, groupable_attr, piece, qualified, sortable};

/// Groupings ("by clinic", "per region", "for each clinic") and sort keys.
pub(super) fn groupings(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    let mention_covering = |k: usize| ctx.mention_covering(k);
    let rank_by: Option<usize> = ctx.cues.rank.map(|rc| rc.last);
    let mut group_starts: Vec<usize> = ctx.cues.group_at.clone();
    for (mi, m) in ms.iter().enumerate() {
        if matches!(ctx.w(m.first), "by" | "per" | "each") && m.last > m.first + 1 {
            group_starts.push(m.first + 1);
            let _ = mi;
        }
    }
    // "clinicians and how many assessments each did", "clinics and the number of wounds
    // they treat": records said in the plural, then a count of their own rows for each —
    // one row per record, not one count of every row
    // ("vascular surgeons and how many wounds each has assessed": the records said by a
    // value of theirs, first)
    let mut valued_starts: Vec<usize> = Vec::new();
    for (ai, m) in ms.iter().enumerate() {
        let valued = || {
            let attribute = m
                .entries
                .iter()
                .find_map(|en| match &en.target {
                    crate::engine::vocab::Target::Value(a, _) => Some(a.as_str()),
                    _ => None,
                })
                .or_else(|| m.values.first().map(|v| v.attribute.as_str()))?;
            let (e, _) = crate::semantic::split_qualified(attribute)?;
            model.entities.iter().position(|x| x.name == e)
        };
        let by_value = m.entity().is_none();
        let Some(e) = m.entity().or_else(|| if ai == 0 { valued() } else { None }) else {
            continue;
        };
        let k = m.last;
        let count_at = match (ctx.w(k), ctx.w(k + 1), ctx.w(k + 2)) {
            ("and" | "with" | ",", "how", "many") => Some(k + 3),
            ("and" | "with" | ",", "the" | "their", "number" | "count" | "no") => Some(k + 3),
            _ => None,
        };
        let Some(c) = count_at else { continue };
        let c = if ctx.w(c) == "of" { c + 1 } else { c };
        let parent = model.entities[e].name.as_str();
        // the counted records: an entity word ("assessments"), or a count measure of one
        let child = model
            .find_entity(ctx.w(c))
            .map(|f| f.name.as_str())
            .or_else(|| ctx.mention_covering(c).and_then(|oi| records_of(model, &ms[oi])));
        let each = ctx.tokens[c..]
            .iter()
            .any(|t| matches!(t.text.as_str(), "each" | "they" | "their" | "them" | "apiece"));
        if ctx.tokens[m.last - 1].text.ends_with('s')
            && ms[..ai].iter().all(|o| o.entity().is_none())
            && each
            && child.is_some_and(|child| {
                // their own rows, or rows reached through rows of both ("wounds each has
                // assessed": through the assessments)
                child != parent
                    && (model.has_one(child, parent)
                        || model
                            .entities
                            .iter()
                            .any(|x| model.has_one(&x.name, parent) && model.has_one(&x.name, child)))
            })
        {
            group_starts.push(m.first);
            if by_value {
                valued_starts.push(m.first);
            }
        }
    }
    // "exudate level breakdown", "a breakdown of stages", "the distribution of locations":
    // the attribute said with the word is what the rows are grouped by
    for k in 0..ctx.tokens.len() {
        if !matches!(
            ctx.w(k),
            "breakdown" | "breakdowns" | "distribution" | "split" | "mix"
        ) || matches!(ctx.w(k + 1), "by" | "per" | "across")
        {
            continue;
        }
        let before = ms
            .iter()
            .find(|m| m.last == k && m.entity().is_none() && m.measure().is_none());
        let after = (ctx.w(k + 1) == "of")
            .then(|| {
                let mut j = if ctx.w(k + 2) == "the" { k + 3 } else { k + 2 };
                // "a breakdown of first-visit exudate": the visit said before the attribute
                while matches!(
                    ctx.w(j),
                    "first"
                        | "initial"
                        | "latest"
                        | "current"
                        | "last"
                        | "baseline"
                        | "-"
                        | "visit"
                        | "assessment"
                        | "first-visit"
                        | "first-assessment"
                ) {
                    j += 1;
                }
                ms.iter()
                    .find(|m| m.first == j && m.entity().is_none() && m.measure().is_none())
            })
            .flatten();
        let groupable_mention = |m: &&crate::engine::link::Mention| {
            m.attributes().any(|(e, a)| groupable(model, e, a))
                || m.terms().any(|t| model.terms[t].kind == TermKind::Column)
        };
        if let Some(m) = before
            .filter(groupable_mention)
            .or(after.filter(groupable_mention))
        {
            group_starts.push(m.first);
            st.r.consumed.push((k, k + 1));
        }
    }
    // "which body locations have burns been recorded on", "what etiologies do smokers
    // have": an attribute's values asked for in the plural are the groups that have rows
    if ctx.cues.rank.is_none()
        && ctx.cues.agg.is_none()
        && ctx.cues.count.is_none()
        && ctx.cues.share.is_none()
    {
        let first = ctx.tokens.iter().position(|t| t.is_wordlike());
        if let Some(f) = first.filter(|&f| matches!(ctx.w(f), "which" | "what")) {
            let mut j = f + 1;
            if let Some(e) = ms
                .iter()
                .find(|m| m.first == j && m.last == j + 1 && m.entity().is_some())
            {
                j = e.last;
            }
            // the attribute a mention names: its own, or a column word's default one
            let text_attr = |m: &crate::engine::link::Mention| -> Option<String> {
                let text = |e: usize, a: usize| {
                    groupable(model, e, a)
                        && model.entities[e].attributes[a].ty == crate::semantic::AttributeType::Text
                };
                m.attributes()
                    .find(|&(e, a)| text(e, a))
                    .map(|(e, a)| {
                        model.entities[e].name.clone() + "." + &model.entities[e].attributes[a].name
                    })
                    .or_else(|| {
                        m.terms()
                            .filter(|&t| model.terms[t].kind == TermKind::Column)
                            .find_map(|t| {
                                match model.terms[t].default_option().and_then(|o| o.change.as_ref()) {
                                    Some(crate::semantic::PlanChange::ChooseAttribute { attribute }) => model
                                        .attribute(attribute)
                                        .filter(|x| {
                                            groupable_attr(x.attribute)
                                                && x.attribute.ty == crate::semantic::AttributeType::Text
                                        })
                                        .map(|_| attribute.clone()),
                                    _ => None,
                                }
                            })
                    })
            };
            let asked = ms.iter().find(|m| {
                m.first == j
                    && m.entity().is_none()
                    && m.measure().is_none()
                    && !m.names_value()
                    && ctx.tokens[m.last - 1].text.ends_with('s')
                    && text_attr(m).is_some()
            });
            // the records described are the attribute's own (or their parents'): "what
            // etiologies do smokers have" would group patients by a wound's etiology
            let owner = asked
                .and_then(text_attr)
                .and_then(|a| crate::semantic::split_qualified(&a).map(|(e, _)| e.to_owned()));
            let owner_rows = |o: &crate::engine::link::Mention| {
                let of = |e: &str| owner.as_deref().is_some_and(|w| model.has_many(e, w));
                o.entity().is_some_and(|e| of(&model.entities[e].name))
                    || o.attributes().any(|(e, _)| of(&model.entities[e].name))
                    || o.values
                        .iter()
                        .any(|h| crate::semantic::split_qualified(&h.attribute).is_some_and(|(e, _)| of(e)))
            };
            if let Some(m) = asked
                && matches!(ctx.w(m.last), "have" | "has" | "had" | "do" | "did" | "are" | "were" | "show" | "occur")
                && !ms.iter().any(|o| o.first >= m.last && owner_rows(o))
                // "which etiologies have over 400 wounds": groups kept by a count, read
                // with the comparison
                && !ctx.tokens[m.last..]
                    .iter()
                    .any(|t| matches!(t.kind, crate::engine::tokenize::TokenKind::Number | crate::engine::tokenize::TokenKind::NumberWord))
            {
                group_starts.push(m.first);
            }
        }
    }
    group_starts.sort_unstable();
    group_starts.dedup();
    let in_grain = |k: usize| ctx.grains.iter().any(|g| g.first <= k && k < g.last);
    for &g in &group_starts {
        if in_grain(g) || in_grain(g.saturating_sub(1)) {
            continue;
        }
        // "how many assessments did each podiatrist do", "wound nurses at … : how many
        // did each one do": each of the people (records) the value names, by name — the
        // value stays a condition
        if (matches!(ctx.w(g.wrapping_sub(1)), "each" | "every") || valued_starts.contains(&g))
            && let Some(e) = records_named_by_value(ctx, g)
        {
            let span = ctx.span_of(g.saturating_sub(1), g + 1);
            st.r.dims.push(Dim {
                spec: DimSpec::Attribute(e),
                span,
            });
            continue;
        }
        let mut k = g;
        while let Some(mi) = mention_covering(k).filter(|&mi| !st.used[mi]) {
            let m = &ms[mi];
            // "top 5 clinics by healing rate": a measure after "by" is the ranking key
            if let Some(mx) = m.measure() {
                if ctx.cues.rank.is_some() || rank_by.is_some() {
                    st.rank_key_mention = Some(mi);
                    st.used[mi] = true;
                    let _ = mx;
                }
                break;
            }
            let is_per = ctx.cues.per_at.contains(&k);
            let mut spec = None;
            // "by clinic care setting": an entity word followed by one of its attributes
            let word_entity = m
                .phrase
                .split(' ')
                .find_map(|w| model.find_entity(w))
                .and_then(|e| model.entities.iter().position(|x| x.name == e.name));
            let compound = m.entity().or(word_entity).and_then(|e| {
                ms.iter().position(|o| o.first == m.last).and_then(|oi| {
                    ms[oi]
                        .attributes()
                        .find(|&(oe, oa)| oe == e && groupable(model, oe, oa))
                        .map(|(oe, oa)| (oi, qualified(model, oe, oa)))
                })
            });
            // where the grouping's words end ("patient sex" is two mentions)
            let mut end = m.last;
            if let Some((oi, q)) = compound {
                st.used[oi] = true;
                end = ms[oi].last;
                spec = Some(DimSpec::Attribute(q));
            } else if let Some(t) = m.terms().find(|&t| model.terms[t].kind == TermKind::Column) {
                spec = Some(DimSpec::ColumnTerm { term: t, mention: mi });
            } else if let Some(e) = m.entity() {
                let ent = &model.entities[e];
                // "list the open wounds by wound id": the listed records in the order of
                // their key, not one group per record
                let listed = ms[..mi].iter().find_map(|o| records_of(model, o)) == Some(ent.name.as_str());
                if listed
                    && matches!(ctx.w(m.last), "id" | "ids" | "number" | "#")
                    && ctx.cues.list.is_some()
                    && ctx.cues.count.is_none()
                    && ctx.cues.agg.is_none()
                {
                    st.used[mi] = true;
                    st.r.consumed.push((g.saturating_sub(1), m.last + 1));
                    st.r.sort_by = Some((Some(format!("{}.{}", ent.name, ent.key)), SortOrder::Asc));
                    break;
                }
                if is_per && ctx.cues.agg.is_some() && ctx.cues.count.is_none() {
                    st.r.per_unit = Some(ent.name.clone());
                    st.used[mi] = true;
                    break;
                }
                let own_attr = ms.iter().position(|o| o.first == m.last).and_then(|oi| {
                    ms[oi]
                        .attributes()
                        .find(|&(oe, oa)| oe == e && groupable(model, oe, oa))
                        .map(|(oe, oa)| (oi, qualified(model, oe, oa)))
                });
                if let Some((oi, q)) = own_attr {
                    // "by patient mobility": the entity's attribute, not the entity
                    st.used[oi] = true;
                    end = ms[oi].last;
                    spec = Some(DimSpec::Attribute(q));
                } else if let Some(d) = &ent.display_attribute {
                    spec = Some(DimSpec::Attribute(format!("{}.{}", ent.name, d)));
                } else {
                    spec = Some(DimSpec::Attribute(format!("{}.{}", ent.name, ent.key)));
                }
            } else if let Some(d) = m
                .time_dimension()
                .or_else(|| {
                    m.attributes().find_map(|(e, a)| {
                        let q = qualified(model, e, a);
                        model.time_dimensions.iter().position(|t| t.attribute == q)
                    })
                })
                .filter(|_| !ctx.grains.is_empty())
            {
                // "per month … (by onset)": the date the periods are of, not a grouping by
                // the day
                st.time_dim = Some(model.time_dimensions[d].name.clone());
                st.used[mi] = true;
                break;
            } else if let Some((e, a)) = m.attributes().find(|&(e, a)| groupable(model, e, a)) {
                // "for each care setting, the 2 most common etiologies", "… in each
                // clinic": said per group, or before the ranking, it is a grouping
                let each_group = matches!(ctx.w(g.wrapping_sub(1)), "each" | "every" | "per");
                let before_cue = ctx.cues.rank.is_some_and(|rc| g < rc.first);
                if ctx.cues.rank.is_some()
                    && ctx.cues.sort_at.is_empty()
                    && st.rank_key_mention.is_none()
                    && !each_group
                    && !before_cue
                {
                    // "top 10 wounds by area": a ranking key
                    st.rank_key_mention = Some(mi);
                    st.used[mi] = true;
                    break;
                }
                spec = Some(DimSpec::Attribute(qualified(model, e, a)));
            }
            let Some(spec) = spec else { break };
            st.used[mi] = true;
            let span = m.span;
            let target = match &spec {
                DimSpec::Attribute(a) => a.clone(),
                DimSpec::ColumnTerm { term, .. } => model.terms[*term].id.clone(),
            };
            let mut p = piece(ctx, m, PieceKind::Dimension, target, None);
            if matches!(spec, DimSpec::ColumnTerm { .. }) {
                p.confidence = p.confidence.min(EXACT);
            }
            st.r.pieces.push(p);
            st.r.dims.push(Dim { spec, span });
            // "by clinic and etiology", "by patient sex and diabetes status"
            if matches!(ctx.w(end), "and" | "," | "&" | "then") {
                k = end + 1;
                if matches!(ctx.w(k), "by" | "per") {
                    k += 1;
                }
                continue;
            }
            break;
        }
    }
    for &s in &ctx.cues.sort_at {
        if let Some(mi) = mention_covering(s).filter(|&mi| !st.used[mi]) {
            st.rank_key_mention = Some(mi);
            st.used[mi] = true;
        }
    }
    then_by(ctx, st);
}

/// "sorted by onset date, oldest first, then by wound id", "…, then by age descending":
/// further keys of the listed records — an attribute of the records said (an entity
/// word with "id"/"number" is its key). A key that cannot be read is said as a note.
fn then_by(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    for &s in &ctx.cues.then_by_at {
        let Some(mi) = ctx.mention_covering(s).filter(|&mi| !st.used[mi]) else {
            continue;
        };
        let m = &ms[mi];
        let mut end = m.last;
        let key = if let Some(e) = m.entity() {
            let ent = &model.entities[e];
            if matches!(ctx.w(m.last), "id" | "ids" | "number" | "no" | "#") {
                end += 1;
                Some(format!("{}.{}", ent.name, ent.key))
            } else {
                ent.display_attribute
                    .as_ref()
                    .map(|d| format!("{}.{d}", ent.name))
            }
        } else {
            m.attributes()
                .find(|&(e, a)| sortable(model, e, a) || super::state::sortable_as_text(model, e, a))
                .map(|(e, a)| qualified(model, e, a))
        };
        // the direction said right after the key ("then by age descending")
        let order = match ctx.w(end) {
            "desc" | "descending" => Some(SortOrder::Desc),
            "asc" | "ascending" => Some(SortOrder::Asc),
            _ => None,
        };
        if order.is_some() {
            end += 1;
        }
        st.used[mi] = true;
        let span = ctx.span_of(s.saturating_sub(2), end);
        match key {
            Some(k) => {
                st.r.consumed.push((s.saturating_sub(2), end));
                st.r.then_by.push((k, order.unwrap_or(SortOrder::Asc)));
            }
            None => st.r.notes.push((
                span,
                format!("\"{}\": rows are not ordered by it", ctx.text(span)),
            )),
        }
    }
}

/// The records a value at `g` names, by their display attribute ("podiatrist" names
/// clinicians: `clinicians.name`); "each one" / "each of them" points back to the first
/// such value said before it. Only records other than the question's own rows.
fn records_named_by_value(ctx: &Ctx<'_>, g: usize) -> Option<String> {
    let model = ctx.model;
    let named = |m: &crate::engine::link::Mention| {
        let a = m.value_attributes().into_iter().next()?;
        let (owner, _) = crate::semantic::split_qualified(&a)?;
        let ent = model.entity(owner)?;
        let display = ent.display_attribute.as_ref()?;
        (m.entity().is_none() && owner != "assessments").then(|| format!("{owner}.{display}"))
    };
    let here = ctx.mentions.iter().find(|m| m.first == g);
    let found = match here {
        Some(m) if m.entity().is_none() && !m.value_attributes().is_empty() => named(m),
        _ if matches!(ctx.w(g), "one" | "of") => ctx.mentions.iter().filter(|m| m.last <= g).find_map(named),
        _ => None,
    }?;
    Some(found)
}

/// The records a mention names: its entity ("wounds"), or the entity a measure of it
/// counts ("open wounds").
fn records_of<'m>(
    model: &'m crate::semantic::SemanticModel,
    m: &crate::engine::link::Mention,
) -> Option<&'m str> {
    m.entity()
        .map(|e| model.entities[e].name.as_str())
        .or_else(|| m.measure().map(|x| model.measures[x].entity.as_str()))
}
