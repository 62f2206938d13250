//! A measurement at a record's first visit and at its latest one, shown side by side:
//! "area at first assessment vs latest area", "initial and current area of wound 12",
//! "first vs latest pain score for open DFUs", "latest depth compared with the baseline
//! depth". Each record listed with both values as columns — not a comparison of groups,
//! not a count, and not a condition between the two values ("larger than", "shrank":
//! `versus.rs`).

use crate::semantic::{Derived, SemanticModel};

use crate::engine::link::Mention;
use crate::engine::plan_ops::{first_of, latest_of};
use crate::engine::reading::{ColSpec, Ctx, EntitySource};
use crate::engine::tokenize::TokenKind;

use super::state::{State, qualified};

/// The visit a word names: `Some(true)` the first one, `Some(false)` the latest one.
fn visit_word(ctx: &Ctx<'_>, k: usize) -> Option<bool> {
    match ctx.w(k) {
        "first" | "initial" | "initially" | "earliest" | "baseline" | "1st" | "original" | "starting" => {
            Some(true)
        }
        "latest" | "current" | "currently" | "last" | "newest" | "now" | "today" | "final" => Some(false),
        "recent" if ctx.w(k.wrapping_sub(1)) == "most" => Some(false),
        _ => None,
    }
}

/// The per-visit measurement an attribute reads: itself, or the one a record's latest or
/// first value is taken of (`wounds.latest_area`, `wounds.initial_area` → the area).
fn base_of(model: &SemanticModel, q: &str) -> Option<String> {
    match model.attribute(q).and_then(|r| r.attribute.derived.clone()) {
        Some(Derived::Latest { attribute, .. } | Derived::First { attribute, .. }) => Some(attribute),
        _ if q.starts_with("assessments.") => Some(q.to_owned()),
        _ => model.entity("assessments").and_then(|e| {
            e.attributes
                .iter()
                .map(|a| format!("assessments.{}", a.name))
                .find(|p| first_of(model, p).as_deref() == Some(q))
        }),
    }
}

/// The measurement a mention names, when the model keeps both its first and its latest
/// value per record.
fn measurement(ctx: &Ctx<'_>, m: &Mention) -> Option<String> {
    let model = ctx.model;
    let from_attr = m
        .attributes()
        .map(|(e, a)| qualified(model, e, a))
        .chain(m.measure().and_then(|x| model.measures[x].attribute.clone()))
        .find_map(|q| base_of(model, &q));
    let base = from_attr.or_else(|| {
        m.terms().find_map(|t| {
            let first = crate::engine::plan_ops::term_first_of(model, t)?;
            base_of(model, &first)
        })
    })?;
    let numeric = model
        .attribute(&base)
        .is_some_and(|r| r.attribute.ty.is_numeric());
    (numeric && first_of(model, &base).is_some() && latest_of(model, &base).is_some()).then_some(base)
}

/// One side of the connector: the visit it names, the measurements in it, and the
/// tokens it spans. `from..to` is searched, stopping at punctuation, numbers and other
/// connectors.
struct Side {
    first: Option<bool>,
    bases: Vec<String>,
    lo: usize,
    hi: usize,
}

fn side(ctx: &Ctx<'_>, at: usize, backwards: bool) -> Side {
    let stop = |k: usize| {
        ctx.tokens.get(k).is_none_or(|t| t.kind == TokenKind::Number)
            || matches!(
                ctx.w(k),
                ":" | "," | ";" | "(" | ")" | "vs" | "versus" | "and" | "for" | "of" | "in" | "with"
            )
    };
    let mut s = Side {
        first: None,
        bases: Vec::new(),
        lo: at,
        hi: at,
    };
    let mut conflict = false;
    let mut seen = |k: usize, s: &mut Side| {
        if let Some(v) = visit_word(ctx, k) {
            if s.first.is_some_and(|f| f != v) {
                conflict = true;
            }
            s.first = Some(v);
            s.lo = s.lo.min(k);
            s.hi = s.hi.max(k + 1);
        }
        if let Some(m) = ctx.mentions.iter().find(|m| m.first <= k && k < m.last)
            && let Some(b) = measurement(ctx, m)
        {
            if !s.bases.contains(&b) {
                s.bases.push(b);
            }
            s.lo = s.lo.min(m.first);
            s.hi = s.hi.max(m.last);
        }
    };
    if backwards {
        let mut k = at;
        while k > 0 && at - k < 6 {
            k -= 1;
            if stop(k) {
                break;
            }
            seen(k, &mut s);
        }
    } else {
        let mut k = at;
        while k < at + 6 && !stop(k) {
            seen(k, &mut s);
            k += 1;
        }
    }
    if conflict {
        s.first = None;
    }
    s
}

/// Reads "<first> <measurement> vs <latest> <measurement>" (either order, the measurement
/// said once or twice, joined by "vs", "versus", "and", "compared with/to", "against").
pub(super) fn first_and_latest(ctx: &Ctx<'_>, st: &mut State) {
    let c = ctx.cues;
    if c.count.is_some() || c.agg.is_some() || c.rank.is_some() || c.share.is_some() || c.trend.is_some() {
        return;
    }
    let n = ctx.tokens.len();
    // a change or a condition between the two values is another reading
    if (0..n).any(|k| {
        matches!(
            ctx.w(k),
            "than"
                | "difference"
                | "change"
                | "changed"
                | "increase"
                | "increased"
                | "decrease"
                | "decreased"
                | "shrank"
                | "shrunk"
                | "grew"
                | "improved"
                | "worsened"
                | "reduction"
        )
    }) {
        return;
    }
    let model = ctx.model;
    for k in 0..n {
        let len = match (ctx.w(k), ctx.w(k + 1)) {
            ("vs" | "versus" | "v" | "and" | "&" | "against" | "alongside", _) => 1,
            ("compared", "to" | "with") => 2,
            _ => continue,
        };
        let mut right = k + len;
        if ctx.w(right) == "." {
            right += 1;
        }
        let l = side(ctx, k, true);
        let r = side(ctx, right, false);
        let (Some(lf), Some(rf)) = (l.first, r.first) else {
            continue;
        };
        if lf == rf {
            continue;
        }
        let mut bases = l.bases.clone();
        for b in &r.bases {
            if !bases.contains(b) {
                bases.push(b.clone());
            }
        }
        let [base] = bases.as_slice() else {
            continue;
        };
        let (lo, hi) = (l.lo.min(k), r.hi.max(right));
        // "initial area over 10 and latest area under 5": conditions, not columns
        if ctx.comparisons.iter().any(|c| c.first < hi && c.last > lo) {
            continue;
        }
        let (Some(first), Some(latest)) = (first_of(model, base), latest_of(model, base)) else {
            continue;
        };
        let cols = if lf { [first, latest] } else { [latest, first] };
        for a in &cols {
            if !st
                .r
                .columns
                .iter()
                .any(|c| matches!(c, ColSpec::Attribute(x) if x == a))
            {
                st.r.columns.push(ColSpec::Attribute(a.clone()));
            }
        }
        for (mi, m) in ctx.mentions.iter().enumerate() {
            if m.first >= lo && m.last <= hi {
                st.used[mi] = true;
            }
        }
        st.r.consumed.push((lo, hi));
        // "at the first assessment" was read as the visit of a value: it is a column here
        if st.r.visit_hint_at.is_some_and(|(a, b)| a >= lo && b <= hi) {
            st.r.visit_hint = None;
            st.r.visit_first = false;
            st.r.visit_hint_at = None;
        }
        if st.r.entity.is_none()
            && let Some((e, _)) = crate::semantic::split_qualified(&cols[0])
        {
            st.r.entity = Some(e.to_owned());
            st.r.entity_source = EntitySource::Implied;
        }
        st.r.side_by_side = true;
        return;
    }
}
