//! Dictionary terms and the entity each one modifies ("large wounds", "wounds that are
//! large").

use crate::engine::reading::{Ctx, Reading};

use super::state::{State, mention_entity};

/// Anchors each dictionary term to the entity it modifies.
pub(super) fn anchor_terms(ctx: &Ctx<'_>, st: &mut State) {
    for i in 0..st.r.terms.len() {
        let anchor = term_anchor(ctx, &st.r, st.r.terms[i].mention);
        st.r.terms[i].anchor = anchor;
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
    for other in ms
        .iter()
        .rev()
        .filter(|o| o.last <= m.first && o.last + 4 >= m.first)
    {
        if let Some(e) = other.entity() {
            return ctx.model.entities[e].name.clone();
        }
    }
    fallback
}
