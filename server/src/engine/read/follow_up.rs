//! Follow-ups: a refinement of the previous question in the thread ("only diabetic ones",
//! "what about last year"), a follow-up relaxing a filter, and words that point back.

use crate::semantic::PlanChange;

use crate::engine::reading::{Ctx, EntitySource, Reading};
use crate::engine::vocab::Target;

use super::state::{State, mention_entity, qualified};

/// "without the etiology filter": a follow-up relaxing a filter.
pub(super) fn relaxed_filters(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    for k in 0..ctx.tokens.len() {
        if !matches!(
            ctx.w(k),
            "filter" | "filters" | "condition" | "restriction" | "criterion"
        ) {
            continue;
        }
        if let Some(mi) = ms
            .iter()
            .position(|m| m.last == k || m.last + 1 == k && ctx.w(m.last) == "value")
        {
            let m = &ms[mi];
            let mut attrs: Vec<String> = m.attributes().map(|(e, a)| qualified(model, e, a)).collect();
            for e in &m.entries {
                if let Target::Term(t) = e.target {
                    for o in &model.terms[t].options {
                        if let Some(PlanChange::ChooseAttribute { attribute }) = &o.change {
                            attrs.push(attribute.clone());
                        }
                    }
                }
            }
            if !attrs.is_empty() {
                st.r.remove.extend(attrs);
                st.used[mi] = true;
            }
        }
    }
}

/// Words that point back ("those", "their", "that clinic") and what they point to.
pub(super) fn pronouns(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let ms = ctx.mentions;
    let mention_covering = |k: usize| ctx.mention_covering(k);
    for &p in &ctx.cues.pronouns {
        if st.r.visit_hint_at.is_some_and(|(a, b)| (a..b).contains(&p)) {
            continue;
        }
        // "larger than their initial area": a pronoun inside a phrase a step read is part
        // of it
        if st.r.consumed.iter().any(|&(a, b)| a <= p && p < b) {
            continue;
        }
        // a record named earlier in the question: an entity word, a value or attribute of
        // one ("our smokers … between them"), or a word naming an entity inside a
        // column word ("for each clinic, … its open wounds")
        let names_record = |m: &crate::engine::link::Mention| {
            mention_entity(model, m).is_some()
                || m.attributes().next().is_some()
                || m.phrase.split(' ').any(|w| model.find_entity(w).is_some())
        };
        let before = ms.iter().any(|m| m.last <= p && names_record(m))
            || st.r.entity_source == EntitySource::Named
                && st
                    .r
                    .entity_span
                    .is_some_and(|s| s.end <= ctx.tokens[p].span.start);
        let followed_by_noun = mention_covering(p + 1).is_some_and(|mi| ms[mi].entity().is_some());
        let demonstrative = matches!(ctx.w(p), "that" | "this" | "those" | "these" | "ones" | "same");
        // "the open ones" point back even after a value; a named entity is what they are
        // ("pressure injuries … include the healed ones": the records this question is
        // about, named by a value of theirs)
        let before = if matches!(ctx.w(p), "ones" | "same") {
            ms.iter().any(|m| m.last <= p && m.entity().is_some())
                || ctx.w(p) == "ones"
                    && st.r.entity.is_some()
                    && ms.iter().any(|m| {
                        m.last <= p
                            && !m.entries.is_empty()
                            && (m.last..p).any(|i| {
                                matches!(ctx.w(i), "," | "." | "?" | ";" | "include" | "including" | "even")
                            })
                    })
        } else {
            before
        };
        // "that clinic", "those patients" point back even with a noun; "it", "them",
        // "their" point back unless something was named before them
        let unresolved = if demonstrative {
            !before || followed_by_noun
        } else {
            !before
        };
        if unresolved {
            let end = if demonstrative && followed_by_noun {
                mention_covering(p + 1).map_or(p + 1, |mi| ms[mi].last)
            } else {
                p + 1
            };
            st.r.unresolved_pronoun.get_or_insert(ctx.span_of(p, end));
        }
    }
}

/// A refinement of the previous question: its rows are the previous question's rows.
pub(super) fn follow_up(ctx: &Ctx<'_>, st: &mut State) {
    st.r.follow_up = ctx.previous.is_some() && is_follow_up(ctx, &st.r);
    if st.r.follow_up
        && let Some(prev) = ctx.previous
        && (st.r.entity.is_none()
            || matches!(
                st.r.entity_source,
                EntitySource::Term | EntitySource::Who | EntitySource::Implied
            )
            || qualified_pronoun(ctx, &st.r))
    {
        // the fragment is about the previous question's rows
        st.r.entity = Some(prev.entity.clone());
        st.r.entity_source = EntitySource::Context;
        st.r.term_entities.clear();
    }
    if st.r.follow_up {
        replaced_values(ctx, st);
    }
}

/// "what about smokers instead of diabetics", "VLUs rather than DFUs": in a follow-up, the
/// values named after "instead of" / "rather than" are the previous question's, to be
/// replaced — not a further condition.
fn replaced_values(ctx: &Ctx<'_>, st: &mut State) {
    let Some(k) = (0..ctx.tokens.len())
        .find(|&k| matches!((ctx.w(k), ctx.w(k + 1)), ("instead", "of") | ("rather", "than")))
    else {
        return;
    };
    // "instead of venous use arterial", "rather than DFUs, show VLUs": the replaced
    // values end where the clause naming the new ones starts
    let end = (k + 2..ctx.tokens.len())
        .find(|&j| {
            matches!(
                ctx.w(j),
                "use" | "try" | "show" | "give" | "do" | "put" | "take" | "switch" | "make" | "," | ";" | "-"
            )
        })
        .unwrap_or(ctx.tokens.len());
    let after = |first: usize| first > k + 1 && first < end;
    let mut removed: Vec<String> = Vec::new();
    for f in st.r.filters.iter().filter(|f| after(f.first)) {
        removed.extend(f.constraint.attributes().into_iter().map(str::to_owned));
    }
    for v in st.r.values.iter().filter(|v| after(v.first)) {
        removed.extend(v.hits.iter().map(|(a, _, _)| a.clone()));
    }
    if removed.is_empty() {
        return;
    }
    st.r.filters.retain(|f| !after(f.first));
    st.r.values.retain(|v| !after(v.first));
    // the values named before it replace the previous ones of the same attribute anyway
    removed.retain(|a| {
        !st.r
            .filters
            .iter()
            .any(|f| f.constraint.attributes().contains(&a.as_str()))
    });
    removed.sort();
    removed.dedup();
    st.r.remove.extend(removed);
    st.r.consumed.push((k, k + 2));
}

/// "how many of those are in pts with diabetes", "only those in diabetic patients", "the
/// ones belonging to smokers": the records named after the pronoun and a preposition say
/// which of the previous rows are meant, they are not the rows themselves.
fn qualified_pronoun(ctx: &Ctx<'_>, r: &Reading) -> bool {
    let Some(named) = r.entity_span.filter(|_| r.entity_source == EntitySource::Named) else {
        return false;
    };
    ctx.cues.pronouns.iter().any(|&p| {
        matches!(ctx.w(p), "those" | "these" | "them" | "ones")
            && ctx.tokens[p].span.end <= named.start
            && (p + 1..(p + 5).min(ctx.tokens.len())).any(|k| {
                matches!(
                    ctx.w(k),
                    "in" | "among" | "amongst" | "of" | "from" | "for" | "belonging" | "with"
                ) && ctx.tokens[k].span.end <= named.start
                    && (k + 1..ctx.tokens.len())
                        .take(3)
                        .any(|j| ctx.tokens[j].span.start == named.start)
            })
    })
}

/// True when the question refines the previous one (there must be one).
pub(crate) fn is_follow_up(ctx: &Ctx<'_>, r: &Reading) -> bool {
    if ctx.previous.is_none() {
        return false;
    }
    let c = ctx.cues;
    if c.follow_lead || c.instead || c.more_about {
        return true;
    }
    let points_back = c.pronouns.iter().any(|&p| {
        !r.visit_hint_at.is_some_and(|(a, b)| (a..b).contains(&p))
            && ctx.tokens.get(p).map(|t| t.text.as_str()).is_some_and(|w| {
                matches!(
                    w,
                    "those" | "these" | "them" | "they" | "ones" | "it" | "its" | "their" | "that" | "this"
                ) || crate::engine::intent::is_personal_pronoun(w)
            })
    });
    if points_back && (r.entity_source != EntitySource::Named || qualified_pronoun(ctx, r)) {
        return true;
    }
    let own_entity = matches!(r.entity_source, EntitySource::Named | EntitySource::Measure);
    let new_intent =
        c.count.is_some() || c.list.is_some() || c.agg.is_some() || c.rank.is_some() || c.share.is_some();
    let has_content = !r.filters.is_empty()
        || !r.terms.is_empty()
        || !r.values.is_empty()
        || !r.cmps.is_empty()
        || r.time.is_some()
        || !r.dims.is_empty()
        || r.grain.is_some();
    // a fragment with content and no intent of its own ("last year?"), or an intent with
    // nothing to apply it to ("how many are there?")
    (!own_entity && (new_intent != has_content)) || points_back && c.words <= 6
}
