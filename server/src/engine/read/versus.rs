//! Two measurements of one record compared with each other, not with a number: "the
//! latest area exceeds the area at the first assessment", "wounds whose current area is
//! bigger than their initial area", "area shrank since the first assessment", "wounds
//! larger now than at their first visit".
//!
//! The model says how two values of one record compare through its `percent_change`
//! attributes (`area_change_pct` = (latest − initial) / initial × 100): "now above the
//! first" is that change above 0, "smaller than at the start" below 0. A pair the model has
//! no change attribute for is left alone (the comparison word is then said back as not
//! applied, see [`super::compare::dangling_operators`]).

use crate::semantic::{AttributeType, CompareOp, Constraint, Derived, SemanticModel, Value};

use crate::engine::link::{EXACT, op_phrase_at};
use crate::engine::plan_ops::{first_of, latest_of};
use crate::engine::reading::{Ctx, Filter};
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

use super::negation::negated_at;
use super::state::{State, qualified};

/// Which value of a record's history a side names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Visit {
    First,
    Latest,
}

fn first_word(w: &str) -> bool {
    matches!(
        w,
        "first"
            | "initial"
            | "initially"
            | "baseline"
            | "original"
            | "originally"
            | "earliest"
            | "start"
            | "starting"
            | "presentation"
            | "1st"
            | "outset"
    )
}

fn latest_word(w: &str) -> bool {
    matches!(
        w,
        "latest" | "current" | "currently" | "now" | "last" | "recent" | "newest" | "today" | "lately"
    )
}

/// The per-visit attribute (`assessments.area`) a qualified attribute reads, and the visit
/// it reads it at when it says one (`wounds.latest_area`: latest; `wounds.initial_area`:
/// first).
fn base_of(model: &SemanticModel, q: &str) -> Option<(String, Option<Visit>)> {
    if q.starts_with("assessments.") {
        return Some((q.to_owned(), None));
    }
    let assessments = model.entity("assessments")?;
    assessments.attributes.iter().find_map(|a| {
        let p = format!("assessments.{}", a.name);
        if latest_of(model, &p).as_deref() == Some(q) {
            Some((p, Some(Visit::Latest)))
        } else if first_of(model, &p).as_deref() == Some(q) {
            Some((p, Some(Visit::First)))
        } else {
            None
        }
    })
}

/// The record-level attribute of `base` at `visit`.
fn at(model: &SemanticModel, base: &str, visit: Visit) -> Option<String> {
    match visit {
        Visit::First => first_of(model, base),
        Visit::Latest => latest_of(model, base),
    }
}

/// The model's `percent_change` attribute from `from` to `to` (qualified, same entity).
fn change_between(model: &SemanticModel, from: &str, to: &str) -> Option<String> {
    let (fe, fa) = crate::semantic::split_qualified(from)?;
    let (te, ta) = crate::semantic::split_qualified(to)?;
    if fe != te {
        return None;
    }
    let entity = model.entity(fe)?;
    entity
        .attributes
        .iter()
        .find(|a| matches!(&a.derived, Some(Derived::Difference { from, to }) if from == fa && to == ta))
        .or_else(|| {
            entity.attributes.iter().find(
                |a| matches!(&a.derived, Some(Derived::PercentChange { from, to }) if from == fa && to == ta),
            )
        })
        .map(|a| format!("{fe}.{}", a.name))
}

/// A one-word operator that compares two measurements only when both are named ("latest
/// area above their initial area"); alone it is too loose ("over 10", "under review").
fn loose_operator(w: &str) -> Option<CompareOp> {
    match w {
        "above" | "over" | "exceeding" => Some(CompareOp::Gt),
        "below" | "under" => Some(CompareOp::Lt),
        _ => None,
    }
}

/// An operator said between the two sides: its operator and the token after it.
fn operator_at(ctx: &Ctx<'_>, k: usize) -> Option<(CompareOp, usize)> {
    if let Some((words, op)) = op_phrase_at(ctx.tokens, k) {
        // the comparative forms only: "over"/"under" alone are too loose here
        if words.len() >= 2 && !matches!(op, CompareOp::Eq | CompareOp::Ne) {
            return Some((op, k + words.len()));
        }
    }
    let op = match ctx.w(k) {
        "exceeds" | "exceeded" | "exceed" | "surpasses" | "surpassed" | "outgrew" => CompareOp::Gt,
        // a change verb compares with an earlier visit only when it says which: "shrank
        // since the first assessment", "grew from the baseline"
        "grew" | "grown" | "grow" | "increased" | "enlarged" | "expanded" | "worsened"
            if matches!(ctx.w(k + 1), "since" | "from") =>
        {
            CompareOp::Gt
        }
        "shrank" | "shrunk" | "shrink" | "decreased" | "reduced" | "contracted"
            if matches!(ctx.w(k + 1), "since" | "from") =>
        {
            CompareOp::Lt
        }
        "bigger" | "larger" | "greater" | "higher" | "wider" | "longer" | "deeper" => CompareOp::Gt,
        "smaller" | "lower" | "narrower" | "shorter" | "shallower" => CompareOp::Lt,
        _ => return None,
    };
    let mut next = k + 1;
    if ctx.w(next) == "than" {
        next += 1;
    }
    Some((op, next))
}

/// The per-visit numeric attribute a mention names, and the visit it says, if any.
fn mention_base(ctx: &Ctx<'_>, mi: usize) -> Option<(String, Option<Visit>)> {
    let model = ctx.model;
    let m = &ctx.mentions[mi];
    m.attributes().find_map(|(e, a)| {
        let ty = model.entities[e].attributes[a].ty;
        if !matches!(ty, AttributeType::Real | AttributeType::Integer) {
            return None;
        }
        base_of(model, &qualified(model, e, a))
    })
}

/// The visit words say in tokens `a..b`.
fn visit_said(ctx: &Ctx<'_>, a: usize, b: usize) -> Option<Visit> {
    (a..b).find_map(|k| {
        let w = ctx.w(k);
        if first_word(w) {
            Some(Visit::First)
        } else if latest_word(w) || w == "most" && ctx.w(k + 1) == "recent" {
            Some(Visit::Latest)
        } else {
            None
        }
    })
}

/// Reads "<value at one visit> <operator> <value at another>" of one record as its change
/// attribute compared with 0.
pub(super) fn two_measurements(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let n = ctx.tokens.len();
    for k in 0..n {
        let strict = operator_at(ctx, k);
        let Some((op, mut after)) = strict.or(loose_operator(ctx.w(k)).map(|op| (op, k + 1))) else {
            continue;
        };
        // "larger now than at the first visit": "now" is the left side's visit
        let left_now = matches!(ctx.w(after), "now" | "currently" | "today");
        if left_now {
            after += 1;
            if ctx.w(after) == "than" {
                after += 1;
            }
        }
        // a number soon after is an ordinary comparison ("bigger than 10 cm2")
        if (after..(after + 4).min(n)).any(|i| ctx.tokens[i].num.is_some()) {
            continue;
        }
        // the left side: the nearest numeric measurement mention before the operator
        let left = ctx
            .mentions
            .iter()
            .enumerate()
            .filter(|(mi, m)| m.last <= k && m.last + 6 >= k && !st.used[*mi])
            .filter_map(|(mi, m)| mention_base(ctx, mi).map(|b| (mi, m.first, b)))
            .next_back();
        // the right side: a measurement mention after it, or the same measurement implied
        // ("bigger than at the first visit", "since the first assessment")
        let side_end = |from: usize| {
            (from..(from + 7).min(n))
                .find(|&i| {
                    matches!(
                        ctx.w(i),
                        "and" | "or" | "," | "but" | "with" | "who" | "which" | "where" | "by" | "in"
                    )
                })
                .unwrap_or((from + 7).min(n))
        };
        // "a lower pain score at the last visit than at the first", "pain higher at the
        // latest assessment than at the first": the operator's "than" comes later, and the
        // visit said before it is the left side's
        let than_at = (ctx.w(after.wrapping_sub(1)) != "than")
            .then(|| (after..(after + 8).min(n)).find(|&i| ctx.w(i) == "than"))
            .flatten()
            .filter(|&t| visit_said(ctx, after, t).is_some());
        let (right_from, right_end) = match than_at {
            Some(t) => (t + 1, side_end(t + 1)),
            None => (after, side_end(after)),
        };
        let right = ctx
            .mentions
            .iter()
            .enumerate()
            .filter(|(mi, m)| m.first >= after && m.first < right_end && !st.used[*mi])
            .find_map(|(mi, m)| mention_base(ctx, mi).map(|b| (mi, m.last, b)));
        let left_first = left.as_ref().map(|(_, f, _)| *f);
        let left_v = left.as_ref().and_then(|(_, _, (_, v))| *v);
        let left_base = left.as_ref().map(|(_, _, (b, _))| b.clone());
        let right_last = right.as_ref().map(|(_, l, _)| *l);
        let right_v = right.as_ref().and_then(|(_, _, (_, v))| *v);
        let right_base = right.as_ref().map(|(_, _, (b, _))| b.clone());
        let left_visit_words = match than_at {
            Some(t) => visit_said(ctx, after, t),
            None => visit_said(
                ctx,
                left_first.map_or(k.saturating_sub(3), |f| f.saturating_sub(3)),
                k + 1,
            ),
        };
        let visit_noun = |w: &str| {
            matches!(
                w,
                "assessment"
                    | "visit"
                    | "review"
                    | "measurement"
                    | "reading"
                    | "seen"
                    | "measured"
                    | "assessed"
                    | "recorded"
                    | "one"
            )
        };
        let mut right_words_end = right_last.map_or(after, |l| l.max(after));
        for i in after..right_end {
            let w = ctx.w(i);
            if first_word(w) || latest_word(w) || visit_noun(w) || w == "recent" {
                right_words_end = right_words_end.max(i + 1);
            }
        }
        let right_visit_words = visit_said(ctx, right_from, right_end);
        let Some(right_visit) = right_visit_words.or(right_v) else {
            continue;
        };
        // the size comparatives name the area when no measurement is said
        let size_word = matches!(
            ctx.w(k),
            "bigger"
                | "larger"
                | "smaller"
                | "grew"
                | "shrank"
                | "shrunk"
                | "enlarged"
                | "expanded"
                | "contracted"
        );
        // a loose operator compares two measurements only when both are named
        if strict.is_none() && (left_base.is_none() || right_base.is_none()) {
            continue;
        }
        let base = match (&left_base, &right_base) {
            (Some(b), _) | (None, Some(b)) => b.clone(),
            (None, None) if size_word => "assessments.area".to_owned(),
            _ => continue,
        };
        if right_base.as_ref().is_some_and(|rb| *rb != base) {
            continue;
        }
        let left_visit = if left_now {
            Visit::Latest
        } else {
            left_visit_words.or(left_v).unwrap_or(match right_visit {
                Visit::First => Visit::Latest,
                Visit::Latest => Visit::First,
            })
        };
        if left_visit == right_visit {
            continue;
        }
        let (Some(l), Some(r)) = (at(model, &base, left_visit), at(model, &base, right_visit)) else {
            continue;
        };
        // change from r to l: l op r ⇔ change op 0; the reverse pair flips the operator
        let (change, op) = match (change_between(model, &r, &l), change_between(model, &l, &r)) {
            (Some(c), _) => (c, op),
            (None, Some(c)) => (c, flip(op)),
            _ => continue,
        };
        let first = left_first.unwrap_or(k);
        let last = right_words_end.max(after);
        // a word nothing knows inside the two sides is not part of them (it stays
        // unexplained, said to the user)
        if (first..last).any(|i| i != k && unknown_word_at(ctx, i)) {
            continue;
        }
        let zero = Value::Real(0.0);
        let mut c = Constraint::Compare {
            attribute: change.clone(),
            op,
            value: zero.clone(),
            unit: model.attribute(&change).and_then(|a| a.attribute.unit.clone()),
        };
        if negated_at(ctx, first) || ctx.w(k.wrapping_sub(1)) == "not" {
            c = Constraint::Not { of: Box::new(c) };
        }
        let span = ctx.span_of(first, last);
        st.r.filters.push(Filter {
            constraint: c,
            first,
            span,
        });
        st.r.pieces.push(LinkedPiece {
            kind: PieceKind::Comparison,
            target: change,
            value: Some(zero),
            text: span.slice(ctx.question).to_owned(),
            span: Some(span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
        claim_words(ctx, st, first, last);
        return;
    }
}

/// A word at `i` that no phrase of the model, no known word and no number explains.
fn unknown_word_at(ctx: &Ctx<'_>, i: usize) -> bool {
    let Some(t) = ctx.tokens.get(i) else { return false };
    t.kind == crate::engine::tokenize::TokenKind::Word
        && !ctx.mentions.iter().any(|m| m.first <= i && i < m.last)
        && !crate::engine::coverage::is_known_word(&t.text)
        && !crate::engine::vocab::is_common_word(&t.text)
        && !crate::engine::coverage::is_recording_word(&t.text)
}

/// Tokens `first..last` were read as one comparison or change: their mentions are used,
/// and a visit phrase inside them ("at the very first assessment") was one of its sides,
/// not the visit of the whole question.
fn claim_words(ctx: &Ctx<'_>, st: &mut State, first: usize, last: usize) {
    for (mi, m) in ctx.mentions.iter().enumerate() {
        if m.first >= first && m.last <= last {
            st.used[mi] = true;
        }
    }
    st.r.consumed.push((first, last));
    if st.r.visit_hint_at.is_some_and(|(a, b)| first <= a && b <= last) {
        st.r.visit_hint = None;
        st.r.visit_first = false;
    }
}

fn flip(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Gt => CompareOp::Lt,
        CompareOp::Gte => CompareOp::Lte,
        CompareOp::Lt => CompareOp::Gt,
        CompareOp::Lte => CompareOp::Gte,
        other => other,
    }
}

/// The direction a change verb says: `Some(false)` down ("dropped", "shrank", "went
/// down"), `Some(true)` up ("rose", "grew", "went up"), and the token after the verb.
fn change_verb(ctx: &Ctx<'_>, k: usize) -> Option<(bool, usize)> {
    match ctx.w(k) {
        "dropped" | "decreased" | "fell" | "fallen" | "shrank" | "shrunk" | "reduced" | "declined"
        | "lowered" => Some((false, k + 1)),
        "increased" | "rose" | "risen" | "grew" | "grown" | "climbed" => Some((true, k + 1)),
        "went" | "gone" | "gotten" | "got" => match ctx.w(k + 1) {
            "down" => Some((false, k + 2)),
            "up" => Some((true, k + 2)),
            _ => None,
        },
        _ => None,
    }
}

/// Where a change by an amount starts and what it says: up or down, the token after it,
/// the operator, the amount (a percentage or not), the measurement said after the word
/// ("increased in area"), and whether it was said as a noun ("a 50 % reduction").
struct Head {
    up: bool,
    start: usize,
    j: usize,
    op: Option<CompareOp>,
    amount: f64,
    pct: bool,
    after_verb: Option<(usize, String)>,
    noun: bool,
}

/// The measurement said right after `j` ("in area", "of the area"): its mention and base,
/// and the token after it.
fn measurement_after(ctx: &Ctx<'_>, st: &State, j: usize) -> Option<((usize, String), usize)> {
    if !matches!(ctx.w(j), "in" | "of") {
        return None;
    }
    let mut at = j + 1;
    if matches!(ctx.w(at), "the" | "their" | "its") {
        at += 1;
    }
    let (mi, m) = ctx
        .mentions
        .iter()
        .enumerate()
        .find(|(mi, m)| m.first == at && !st.used[*mi])?;
    let b = mention_base(ctx, mi)?;
    Some(((mi, b.0), m.last))
}

/// "area dropped by more than 40 %", "increased in area by 20 % or more".
fn verb_head(ctx: &Ctx<'_>, st: &State, k: usize) -> Option<Head> {
    let (up, mut j) = change_verb(ctx, k)?;
    // "increased in area by more than 20 %": the measurement after the verb
    let mut after_verb = None;
    if ctx.w(j) == "in"
        && let Some((b, next)) = measurement_after(ctx, st, j)
    {
        after_verb = Some(b);
        j = next;
    }
    if ctx.w(j) == "by" {
        j += 1;
    }
    let mut op = None;
    if let Some((words, o)) = op_phrase_at(ctx.tokens, j)
        && !matches!(o, CompareOp::Eq | CompareOp::Ne)
    {
        op = Some(o);
        j += words.len();
    }
    let (amount, pct) = if ctx.w(j) == "half" {
        j += 1;
        (50.0, true)
    } else {
        let v = ctx.tokens.get(j).and_then(|t| t.num)?;
        j += 1;
        let pct = matches!(ctx.w(j), "%" | "percent" | "pct");
        if pct || matches!(ctx.w(j), "cm" | "cm2" | "cm²" | "points" | "point" | "pts") {
            j += 1;
        }
        (v, pct)
    };
    match (ctx.w(j), ctx.w(j + 1)) {
        ("or", "more" | "greater" | "higher") => {
            op = Some(CompareOp::Gte);
            j += 2;
        }
        ("or", "less" | "fewer") => {
            op = Some(CompareOp::Lte);
            j += 2;
        }
        _ => {}
    }
    Some(Head {
        up,
        start: k,
        j,
        op,
        amount,
        pct,
        after_verb,
        noun: false,
    })
}

/// "more than a 50 % reduction in area", "at least a 30 percent increase in pain score",
/// "a 2 point drop in pain": the change said as a noun, its amount before it and the
/// measurement after it.
fn noun_head(ctx: &Ctx<'_>, st: &State, k: usize) -> Option<Head> {
    let up = match ctx.w(k) {
        "reduction" | "decrease" | "drop" | "decline" | "fall" | "shrinkage" => false,
        "increase" | "rise" | "growth" | "gain" => true,
        _ => return None,
    };
    let (b, j) = measurement_after(ctx, st, k + 1)?;
    // the amount before the noun: "50 %", "50 percent", "2 point"
    let mut i = k.checked_sub(1)?;
    let pct = matches!(ctx.w(i), "%" | "percent" | "pct");
    if pct || matches!(ctx.w(i), "cm" | "cm2" | "cm²" | "point" | "points") {
        i = i.checked_sub(1)?;
    }
    let amount = ctx.tokens.get(i).and_then(|t| t.num)?;
    let mut start = i;
    if start > 0 && matches!(ctx.w(start - 1), "a" | "an") {
        start -= 1;
    }
    // the operator before it: "more than", "at least", "over"
    let op = (start.saturating_sub(3)..start).find_map(|s| {
        op_phrase_at(ctx.tokens, s)
            .filter(|(words, o)| s + words.len() == start && !matches!(o, CompareOp::Eq | CompareOp::Ne))
            .map(|(words, o)| (s, words.len(), o))
    });
    let (start, op) = match op {
        Some((s, _, o)) => (s, Some(o)),
        None => (start, None),
    };
    Some(Head {
        up,
        start,
        j,
        op,
        amount,
        pct,
        after_verb: Some(b),
        noun: true,
    })
}

/// "depth dropped by more than 0.5 between the first and the last assessment", "pain rose
/// by 3 or more points since the first visit", "area shrank by at least 50 % since
/// baseline": the record's change between its first and latest visit (the model's
/// difference or percent-change attribute) compared with the amount said; "area dropped
/// by at least half over the last 8 weeks": the change over that window. A change said
/// without a first visit or a window is left alone (which visits were meant is not said).
pub(super) fn change_by_amount(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let n = ctx.tokens.len();
    for k in 0..n {
        let Some(Head {
            up,
            start,
            j,
            op,
            amount,
            pct,
            after_verb,
            noun,
        }) = verb_head(ctx, st, k).or_else(|| noun_head(ctx, st, k))
        else {
            continue;
        };
        // "by more than 5" is a larger change: a drop below −5, a rise above 5
        let op = op.unwrap_or(CompareOp::Gte);
        let (op, signed) = if up { (op, amount) } else { (flip(op), -amount) };
        // the measurement: the nearest numeric one before the verb, else the area for a
        // size verb
        let before = ctx
            .mentions
            .iter()
            .enumerate()
            .filter(|(mi, m)| m.last <= k && m.last + 6 >= k && !st.used[*mi])
            .filter_map(|(mi, m)| mention_base(ctx, mi).map(|b| (mi, m.first, b.0)))
            .next_back();
        let after = after_verb.map(|(mi, b)| (mi, start, b));
        // "a 50 % reduction in area": the measurement said after the noun
        let left = if noun { after.or(before) } else { before.or(after) };
        let size_verb = matches!(ctx.w(k), "shrank" | "shrunk" | "grew" | "grown");
        let (first, base) = match left {
            Some((_, f, b)) => (f, b),
            None if size_verb => (k, "assessments.area".to_owned()),
            None => continue,
        };
        // which visits: the first one said after the amount, or a window
        let end = (j + 8).min(n);
        let since_first = (j..end).find(|&i| first_word(ctx.w(i)));
        let window = ctx
            .times
            .iter()
            .enumerate()
            .find(|(_, t)| !t.all_time && t.first >= j && t.first <= j + 2 && t.end >= ctx.today);
        let (constraint, last) = if let Some(f) = since_first {
            let mut last = f + 1;
            for i in f + 1..end {
                let w = ctx.w(i);
                if latest_word(w)
                    || matches!(
                        w,
                        "assessment" | "visit" | "one" | "measurement" | "and" | "the" | "their" | "its"
                    )
                {
                    last = i + 1;
                } else {
                    break;
                }
            }
            let (Some(l), Some(r)) = (at(model, &base, Visit::Latest), at(model, &base, Visit::First)) else {
                continue;
            };
            let Some(change) = change_between(model, &r, &l) else {
                continue;
            };
            let is_pct = matches!(
                model.attribute(&change).and_then(|a| a.attribute.derived.clone()),
                Some(Derived::PercentChange { .. })
            );
            if is_pct != pct {
                continue;
            }
            (
                Constraint::Compare {
                    unit: model.attribute(&change).and_then(|a| a.attribute.unit.clone()),
                    attribute: change,
                    op,
                    value: Value::Real(signed),
                },
                last,
            )
        } else if let Some((ti, t)) = window
            && pct
        {
            let days = (ctx.today - t.start).num_days();
            let Ok(days) = u32::try_from(days) else { continue };
            // the records whose visits are compared: those that keep the latest value
            let Some(per) = latest_of(model, &base)
                .and_then(|l| crate::semantic::split_qualified(&l).map(|(e, _)| e.to_owned()))
            else {
                continue;
            };
            st.consumed_time = Some(ti);
            (
                Constraint::Change {
                    attribute: base.clone(),
                    per,
                    over: crate::semantic::Span::days(days),
                    op,
                    pct: signed,
                },
                t.last,
            )
        } else {
            continue;
        };
        let span = ctx.span_of(first, last);
        st.r.pieces.push(LinkedPiece {
            kind: PieceKind::Comparison,
            target: constraint
                .attributes()
                .first()
                .map(|a| (*a).to_owned())
                .unwrap_or_default(),
            value: Some(Value::Real(signed)),
            text: span.slice(ctx.question).to_owned(),
            span: Some(span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
        st.r.filters.push(Filter {
            constraint,
            first,
            span,
        });
        claim_words(ctx, st, first, last);
        return;
    }
}

/// "how much has wound 108's pain score changed since its first visit", "change in pain
/// score since the first assessment", "area change since the first visit": the record's
/// change from its first to its latest visit (the model's difference or percent-change
/// attribute), shown as a column. "Since the first visit" is the change's span, never the
/// patient's first-visit date and never a trend by month.
pub(super) fn change_since_first(ctx: &Ctx<'_>, st: &mut State) {
    let model = ctx.model;
    let n = ctx.tokens.len();
    for k in 0..n {
        if !matches!(ctx.w(k), "since" | "from") {
            continue;
        }
        let mut j = k + 1;
        if matches!(ctx.w(j), "the" | "its" | "their" | "his" | "her") {
            j += 1;
        }
        if !first_word(ctx.w(j)) {
            continue;
        }
        let mut last = j + 1;
        if matches!(
            ctx.w(last),
            "visit" | "assessment" | "review" | "measurement" | "one"
        ) {
            last += 1;
        }
        let from = k.saturating_sub(8);
        // a change attribute said before ("change in pain score", "area change")
        let said_change = ctx.mentions.iter().enumerate().find(|(mi, m)| {
            m.first >= from
                && m.last <= k
                && !st.used[*mi]
                && m.attributes().any(|(e, a)| {
                    matches!(
                        model.entities[e].attributes[a].derived,
                        Some(Derived::Difference { .. } | Derived::PercentChange { .. })
                    )
                })
        });
        if said_change.is_none() {
            // a change verb after a measurement: "pain score changed since …"
            let Some(v) = (from..k).find(|&i| {
                matches!(
                    ctx.w(i),
                    "changed" | "changing" | "change" | "moved" | "evolved" | "developed" | "progressed"
                )
            }) else {
                continue;
            };
            let Some((mi, mf, base)) = ctx
                .mentions
                .iter()
                .enumerate()
                .filter(|(mi, m)| m.first >= from && m.last <= v && !st.used[*mi])
                .filter_map(|(mi, m)| mention_base(ctx, mi).map(|b| (mi, m.first, b.0)))
                .next_back()
            else {
                continue;
            };
            let (Some(l), Some(r)) = (at(model, &base, Visit::Latest), at(model, &base, Visit::First)) else {
                continue;
            };
            let Some(change) = change_between(model, &r, &l) else {
                continue;
            };
            st.used[mi] = true;
            st.r.columns
                .push(crate::engine::reading::ColSpec::Attribute(change.clone()));
            let span = ctx.span_of(mf, last);
            st.r.pieces.push(LinkedPiece {
                kind: PieceKind::Attribute,
                target: change,
                value: None,
                text: span.slice(ctx.question).to_owned(),
                span: Some(span),
                how: LinkMethod::Exact,
                confidence: EXACT,
            });
            st.r.consumed.push((v, v + 1));
        }
        claim_words(ctx, st, k, last);
        return;
    }
}
