//! Dictionary terms and the entity each one modifies ("large wounds", "wounds that are
//! large").

use crate::semantic::{Constraint, TermKind, split_qualified};

use crate::engine::reading::{Ctx, Reading};

use super::state::{State, mention_entity};

/// Anchors each dictionary term to the entity it modifies.
pub(super) fn anchor_terms(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    for i in 0..st.r.terms.len() {
        let anchor = term_anchor(ctx, &st.r, st.r.terms[i].mention);
        st.r.terms[i].anchor = anchor;
    }
    // "large clinics": a word the dictionary defines for other records, said right before
    // an entity it does not apply to, is not understood — it is asked about as an unknown
    // word, never applied to something else or dropped
    let mut unknown = Vec::new();
    let listed = st.r.entity.clone();
    st.r.terms.retain_mut(|tu| {
        let term = &model.terms[tu.term];
        let m = &ctx.mentions[tu.mention];
        // "patients with frequent visits", "wounds with frequent assessments": the noun is
        // what the term counts, so the term is said of the records that have them
        let counted_noun = ctx
            .mentions
            .iter()
            .find(|o| o.first == m.last && o.measure().is_none())
            .and_then(|o| o.entity())
            .map(|e| model.entities[e].name.clone())
            .filter(|noun| {
                term.options.iter().any(|o| {
                    matches!(&o.constraint, Some(Constraint::RelatedCount { related, .. }) if related == noun)
                })
            });
        if counted_noun.is_some()
            && let Some(e) = listed.as_ref().filter(|e| term.applies_to.contains(e))
        {
            tu.anchor = e.clone();
            return true;
        }
        // (a phrase that names its own records, "multiple wounds" of patients, is whole)
        let names_entity = !m.phrase.split(' ').any(|w| model.find_entity(w).is_some())
            && ctx
                .mentions
                .iter()
                .any(|o| o.first == m.last && o.entity().is_some() && o.measure().is_none());
        let local = term.options.iter().any(|o| {
            o.constraint.as_ref().is_some_and(|c| {
                let attrs = c.attributes();
                !attrs.is_empty()
                    && attrs
                        .iter()
                        .all(|a| split_qualified(a).is_some_and(|(e, _)| e == tu.anchor))
            })
        });
        let foreign = names_entity
            && !term.applies_to.is_empty()
            && !term.applies_to.contains(&tu.anchor)
            && !local
            && term.kind != TermKind::Ranking
            && term.kind != TermKind::Measure;
        if foreign {
            unknown.push(tu.mention);
        }
        !foreign
    });
    // "current smokers", "recent diabetics": a qualifier said right before a yes/no
    // attribute of a person or record ("smokers": the patients' smoking status) modifies
    // that attribute, not the records its own options constrain (open wounds). A status
    // word ("current", "present") is the state the attribute records: read, and said; any
    // other qualifier of it ("recent") is not understood — asked, never applied elsewhere
    let mut on_attribute = Vec::new();
    st.r.terms.retain(|tu| {
        let term = &model.terms[tu.term];
        if !matches!(term.kind, TermKind::Status | TermKind::Time) || tu.negated {
            return true;
        }
        let m = &ctx.mentions[tu.mention];
        let Some(next) = ctx.mentions.iter().find(|o| o.first == m.last) else {
            return true;
        };
        if next.entity().is_some() || next.measure().is_some() || next.terms().next().is_some() {
            return true;
        }
        let Some((e, a)) = next
            .attributes()
            .find(|&(e, a)| model.entities[e].attributes[a].ty == crate::semantic::AttributeType::Boolean)
        else {
            return true;
        };
        let attribute = format!(
            "{}.{}",
            model.entities[e].name, model.entities[e].attributes[a].name
        );
        let own = term.options.iter().any(|o| {
            o.constraint
                .as_ref()
                .is_some_and(|c| c.attributes().iter().any(|x| *x == attribute))
        });
        if own {
            return true;
        }
        on_attribute.push((tu.mention, term.kind == TermKind::Status, attribute));
        false
    });
    for (mi, read, attribute) in on_attribute {
        let m = &ctx.mentions[mi];
        if read {
            st.used[mi] = true;
            let label = model
                .attribute(&attribute)
                .map(|r| r.attribute.description.clone())
                .filter(|d| !d.is_empty())
                .unwrap_or(attribute);
            st.r.notes.push((
                m.span,
                format!(
                    "\"{}\" read as the state recorded now ({}); no history of it is held",
                    ctx.text(m.span),
                    label.trim_end_matches('.')
                ),
            ));
        } else {
            st.used[mi] = false;
            st.r.not_understood.push(mi);
        }
    }
    for mi in unknown {
        st.used[mi] = false;
        st.r.not_understood.push(mi);
    }
    // "open wounds that are currently showing signs of infection", "right now infected": a
    // word for now said of a visit's finding is when it is read (the latest visit), not
    // which records (open ones)
    let mut now_words = Vec::new();
    st.r.terms.retain(|tu| {
        if model.terms[tu.term].id != "current" || tu.negated {
            return true;
        }
        let m = &ctx.mentions[tu.mention];
        let mut k = m.last;
        while matches!(
            ctx.w(k),
            "showing" | "show" | "shows" | "having" | "has" | "have" | "with" | "displaying" | "got" | "been"
        ) {
            k += 1;
        }
        // the finding right after ("currently showing signs of infection") or right
        // before ("signs of infection right now")
        let is_finding = |o: &crate::engine::link::Mention| {
            o.terms()
                .any(|t| model.terms[t].options.iter().any(|x| x.id == "now"))
                || o.attributes().any(|(e, a)| {
                    let q = super::state::qualified(model, e, a);
                    q.starts_with("assessments.") && crate::engine::plan_ops::latest_of(model, &q).is_some()
                })
        };
        let finding = ctx
            .mentions
            .iter()
            .any(|o| (o.first == k || o.last == m.first) && is_finding(o));
        if finding {
            now_words.push(tu.mention);
        }
        !finding
    });
    for mi in now_words {
        st.used[mi] = true;
    }
    // "open wounds being treated at our long-term care homes", "patients under care at
    // Lakeview": a status word followed by where says where the records are, not which
    // status they have — the place is the condition (the word is read, and said)
    let mut located = Vec::new();
    st.r.terms.retain(|tu| {
        let term = &model.terms[tu.term];
        if term.kind != TermKind::Status || tu.negated {
            return true;
        }
        let m = &ctx.mentions[tu.mention];
        // a phrase of its own ("being treated", "under care"), not one naming the records
        // ("infected wounds at Harborview", "active patients in …")
        if !m.phrase.contains(' ')
            || m.phrase.split(' ').any(|w| model.find_entity(w).is_some())
            || !matches!(ctx.w(m.last), "at" | "in")
        {
            return true;
        }
        let mut k = m.last + 1;
        while matches!(ctx.w(k), "our" | "the" | "a" | "one" | "of" | "their" | "its") {
            k += 1;
        }
        let place = ctx.mentions.iter().any(|o| {
            o.first == k
                && (mention_entity(model, o).as_deref() == Some("clinics")
                    || o.attributes().any(|(e, _)| model.entities[e].name == "clinics"))
        });
        if place {
            located.push(tu.mention);
        }
        !place
    });
    for mi in located {
        st.used[mi] = true;
        let m = &ctx.mentions[mi];
        st.r.notes.push((
            m.span,
            format!(
                "\"{}\" read as where the records are treated, not as a status",
                ctx.text(m.span)
            ),
        ));
    }
}

/// The entity a term modifies: an entity word right after ("large wounds"), a value right
/// after ("serious pressure injuries"), an entity word before ("wounds that are large"),
/// else the question's entity.
pub(super) fn term_anchor(ctx: &Ctx<'_>, r: &Reading, mi: usize) -> String {
    let ms = ctx.mentions;
    let m = &ms[mi];
    let fallback = r.entity.clone().unwrap_or_else(|| "wounds".into());
    // the term's own phrase may include the noun ("diabetic wounds", "foot ulcers")
    for w in m.phrase.split(' ') {
        if let Some(e) = ctx.model.find_entity(w) {
            return e.name.clone();
        }
    }
    for other in ms.iter().filter(|o| o.first >= m.last && o.first <= m.last + 2) {
        if let Some(e) = mention_entity(ctx.model, other) {
            return e;
        }
    }
    // "wounds whose most recent assessment found signs of infection": the visit phrase
    // says which visit of the question's records, it is not what the term is said of
    let in_visit_phrase = |o: &crate::engine::link::Mention| {
        r.visit_hint == Some(true)
            && !r.visit_first
            && r.visit_hint_at.is_some_and(|(a, b)| a <= o.first && o.last <= b)
    };
    for other in ms
        .iter()
        .rev()
        .filter(|o| o.last <= m.first && o.last + 4 >= m.first)
    {
        if in_visit_phrase(other) {
            return fallback;
        }
        if let Some(e) = other.entity() {
            return ctx.model.entities[e].name.clone();
        }
    }
    fallback
}
