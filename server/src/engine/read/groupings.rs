//! Groupings ("by clinic", "per region", "for each clinic") and sort keys.

use crate::semantic::TermKind;

use crate::engine::PieceKind;
use crate::engine::link::EXACT;
use crate::engine::reading::{Ctx, Dim, DimSpec};

use super::state::{State, groupable, piece, qualified};

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
    group_starts.sort_unstable();
    group_starts.dedup();
    let in_grain = |k: usize| ctx.grains.iter().any(|g| g.first <= k && k < g.last);
    for &g in &group_starts {
        if in_grain(g) || in_grain(g.saturating_sub(1)) {
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
            if let Some((oi, q)) = compound {
                st.used[oi] = true;
                spec = Some(DimSpec::Attribute(q));
            } else if let Some(t) = m.terms().find(|&t| model.terms[t].kind == TermKind::Column) {
                spec = Some(DimSpec::ColumnTerm { term: t, mention: mi });
            } else if let Some(e) = m.entity() {
                let ent = &model.entities[e];
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
                    spec = Some(DimSpec::Attribute(q));
                } else if let Some(d) = &ent.display_attribute {
                    spec = Some(DimSpec::Attribute(format!("{}.{}", ent.name, d)));
                } else {
                    spec = Some(DimSpec::Attribute(format!("{}.{}", ent.name, ent.key)));
                }
            } else if let Some((e, a)) = m.attributes().find(|&(e, a)| groupable(model, e, a)) {
                if ctx.cues.rank.is_some() && ctx.cues.sort_at.is_empty() && st.rank_key_mention.is_none() {
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
            // "by clinic and etiology"
            if matches!(ctx.w(m.last), "and" | "," | "&" | "then") {
                k = m.last + 1;
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
}
