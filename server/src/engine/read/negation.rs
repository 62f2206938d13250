//! Negation and absence: "not", "non-", "without", "never" before what they negate;
//! "patients with no wounds" (no related rows); "regardless of diabetes" (no filter);
//! "not assessed in 2 weeks" (no visit in a window).

use crate::semantic::{CompareOp, Constraint, SemanticModel, Span, SpanUnit, TermKind, Value};

use crate::engine::PieceKind;
use crate::engine::link::Mention;
use crate::engine::reading::{Ctx, Filter, Reading};
use crate::engine::tokenize::TokenKind;

use super::state::{piece, qualified};

/// True when token `k` is negated ("not", "non", "without", "no", "excluding").
pub(super) fn negated_at(ctx: &Ctx<'_>, first: usize) -> bool {
    let neg = &ctx.cues.negations;
    let is_neg = |k: usize| neg.contains(&k);
    if first == 0 {
        return false;
    }
    // "not diabetic", "without any", "other than", "not marked as diabetic", "aren't
    // getting any better", "who have never been infected": the negation may stand a few
    // linking words before what it negates
    let mut k = first;
    // "never had a wound assessed by a podiatrist": up to eight linking words
    for _ in 0..8 {
        if k == 0 {
            return false;
        }
        k -= 1;
        if is_neg(k) {
            return true;
        }
        // the second word of an exclusion ("leave out", "apart from", "except for", "not
        // counting", "not including")
        if k > 0 && is_neg(k - 1) && matches!(ctx.w(k), "out" | "from" | "for" | "counting" | "including") {
            return true;
        }
        // "not a single one of their wounds", "never … any of the wounds": the quantifier
        // phrase is one step
        if let Some(q) = existential_start(ctx, k) {
            k = q;
            continue;
        }
        // "never had a wound heal", "no patient who is bedbound": over the records' word
        if let Some(e) = ctx
            .mentions
            .iter()
            .find(|m| m.last == k + 1 && m.entity().is_some() && m.measure().is_none() && m.first > 0)
        {
            k = e.first;
            continue;
        }
        if !matches!(
            ctx.w(k),
            "a" | "an"
                | "any"
                | "single"
                | "one"
                | "once"
                | "even"
                | "on"
                | "at"
                | "in"
                | "of"
                | "than"
                // "not located on the sacrum", "aren't situated on the lower leg"
                | "located"
                | "situated"
                | "positioned"
                | "sited"
                | "the"
                | "marked"
                | "flagged"
                | "recorded"
                | "listed"
                | "coded"
                | "labelled"
                | "labeled"
                | "classed"
                | "classified"
                | "documented"
                | "known"
                | "as"
                | "been"
                | "being"
                | "be"
                | "currently"
                | "getting"
                | "yet"
                | "ever"
                | "had"
                | "have"
                | "has"
                | "got"
                | "with"
                | "by"
                | "assessed"
                | "assess"
                | "seen"
                | "see"
                | "saw"
                | "treated"
                | "treat"
                | "visited"
                | "visit"
                | "reviewed"
                | "review"
                | "examined"
                | "examine"
                | "checked"
                | "managed"
                | "manage"
                | "diagnosed"
                // "no history of infection", "no record of a pressure injury", "no
                // evidence of slough"
                | "history"
                | "record"
                | "records"
                | "evidence"
                | "their"
                | "its"
                | "whose"
                // "no wound that was ever infected"
                | "that"
                | "which"
                | "was"
                | "were"
                | "is"
                | "are"
        ) && !crate::engine::coverage::is_recording_word(ctx.w(k))
        {
            // "never showed necrotic tissue", "not found to have …": a verb of recording
            // links the negation to what was (not) recorded, like "had"
            return false;
        }
    }
    false
}

/// The first token of an existential quantifier ending with "of" at `k` ("any of", "a
/// single one of", "even one of", "one of").
fn existential_start(ctx: &Ctx<'_>, k: usize) -> Option<usize> {
    if ctx.w(k) != "of" {
        return None;
    }
    let mut q = k;
    while q > 0 && matches!(ctx.w(q - 1), "any" | "one" | "single" | "a" | "even" | "either") {
        q -= 1;
    }
    // "a" alone is not a quantifier ("a … of"); "any", "one" are
    (q < k && (q..k).any(|i| matches!(ctx.w(i), "any" | "one" | "either"))).then_some(q)
}

/// "any of their wounds", "a single one of their wounds", "even one of the wounds": an
/// existential quantifier over a record's related rows — the rows themselves (a filter on
/// them is "at least one related row", negated "no related row"); "their" belongs to the
/// phrase and points at the question's records.
pub(super) fn read_quantifiers(ctx: &Ctx<'_>, st: &mut super::state::State) {
    for k in 0..ctx.tokens.len() {
        let Some(q) = existential_start(ctx, k) else {
            continue;
        };
        let mut j = k + 1;
        if matches!(ctx.w(j), "their" | "the" | "its" | "his" | "her" | "those") {
            j += 1;
        }
        if ctx.mentions.iter().any(|m| m.first == j && m.entity().is_some()) {
            st.r.consumed.push((q, j));
        }
    }
}

/// "necrotic tissue was never recorded", "infection has not been documented": a negation
/// said after the value, across a copula.
///
/// `subject`: the value names the question's own records ("which physicians have never
/// assessed a burn": physicians are the clinicians asked about); then a negated verb they
/// perform negates what they did, never who they are.
pub(super) fn negated_after(ctx: &Ctx<'_>, last: usize, subject: bool) -> bool {
    let mut k = last;
    // over the attribute's own word ("necrotic tissue", "high exudate")
    if let Some(m) = ctx
        .mentions
        .iter()
        .find(|m| m.first == k && m.entity().is_none() && m.attributes().next().is_some())
    {
        k = m.last;
    }
    for _ in 0..4 {
        if ctx.cues.negations.contains(&k) {
            // "wounds a podiatrist has never assessed": the value is who did what the
            // negated verb says (active voice), so no record by it exists
            if agent_of_negated_verb(ctx, k) {
                return !subject;
            }
            // "pts with diabetes have never had a DFU": the negation governs what is said
            // after it, not the value before the copula
            return !negates_what_follows(ctx, k);
        }
        if !matches!(
            ctx.w(k),
            "was" | "were" | "is" | "are" | "has" | "have" | "had" | "been" | "ever" | "yet"
        ) {
            return false;
        }
        k += 1;
    }
    false
}

/// True when the negation at `k` is followed by a record's verb in the active voice ("has
/// never assessed", "hasn't seen", "did not review"): what stands before the negation is
/// the verb's agent. The passive ("have never been assessed") says it of the subject.
fn agent_of_negated_verb(ctx: &Ctx<'_>, k: usize) -> bool {
    let mut j = k + 1;
    while matches!(ctx.w(j), "ever" | "yet" | "once" | "actually" | "personally") {
        j += 1;
    }
    matches!(
        ctx.w(j),
        "assessed"
            | "assess"
            | "seen"
            | "see"
            | "saw"
            | "reviewed"
            | "review"
            | "treated"
            | "treat"
            | "visited"
            | "visit"
            | "examined"
            | "examine"
            | "checked"
            | "check"
            | "evaluated"
            | "evaluate"
            | "measured"
            | "measure"
            | "managed"
            | "manage"
            | "dressed"
    )
}

/// True when a mention follows the negation at `k` across linking words only ("never
/// had a DFU", "not on the sacrum"): that mention is what it negates.
fn negates_what_follows(ctx: &Ctx<'_>, k: usize) -> bool {
    for j in k + 1..k + 5 {
        if ctx.mentions.iter().any(|m| m.first == j) {
            return true;
        }
        if !matches!(
            ctx.w(j),
            "a" | "an"
                | "any"
                | "the"
                | "on"
                | "at"
                | "in"
                | "of"
                | "had"
                | "have"
                | "has"
                | "got"
                | "been"
                | "be"
                | "ever"
                | "with"
        ) {
            return false;
        }
    }
    false
}

/// "not on the sacrum or heel", "no DFUs nor VLUs", "excluding pressure injuries and skin
/// tears": a value listed after a negated value of the same attribute, joined by "or" /
/// "nor" / "and" / a comma, is negated too (one record has one value: "not A and B" with
/// B kept would make the negation say nothing).
pub(super) fn negated_in_list(ctx: &Ctx<'_>, m: &Mention) -> bool {
    let attrs = |x: &Mention| x.value_attributes();
    let mine = attrs(m);
    if mine.is_empty() {
        return false;
    }
    let mut cur = m.first;
    for _ in 0..4 {
        let mut j = cur;
        if matches!(ctx.w(j.wrapping_sub(1)), "the" | "a" | "an") {
            j -= 1;
        }
        if !matches!(ctx.w(j.wrapping_sub(1)), "or" | "nor" | "," | "and") {
            return false;
        }
        j -= 1;
        if ctx.w(j) == "and" && ctx.w(j.wrapping_sub(1)) == "," {
            j -= 1;
        }
        let Some(prev) = ctx.mentions.iter().find(|p| p.last == j) else {
            return false;
        };
        if !attrs(prev).iter().any(|a| mine.contains(a)) {
            return false;
        }
        if negated_at(ctx, prev.first) {
            return true;
        }
        cur = prev.first;
    }
    false
}

/// An entity word other than the subject, said right after "with"/"having" or a negation,
/// with nothing qualifying it: whether related rows exist at all. "patients with no
/// wounds" → no related wounds; "patients with wounds" → at least one. Only across a
/// one-to-many path (a patient's wounds, a clinic's patients).
pub(super) fn read_having_related(
    ctx: &Ctx<'_>,
    r: &mut Reading,
    explicit: &[(usize, String)],
    consumed_time: &mut Option<usize>,
) {
    let model = ctx.model;
    let Some(subject) = r.entity.clone() else {
        return;
    };
    for (mi, e) in explicit {
        let m = &ctx.mentions[*mi];
        if *e == subject || m.first == 0 {
            continue;
        }
        let one_to_many = model.has_many(&subject, e);
        // "no assessment at all in 2026", "no wounds in 2025": only the related rows of
        // that period
        let mut after = m.last;
        if ctx.w(after) == "at" && ctx.w(after + 1) == "all" {
            after += 2;
        } else if matches!(ctx.w(after), "whatsoever" | "ever") {
            after += 1;
        }
        // "clinicians who have assessed wounds": the records reached through the visits
        // (a clinician's wounds are the wounds of their assessments) — whether there are
        // such visits
        let through_visits = !one_to_many
            && e != "assessments"
            && model.has_many(&subject, "assessments")
            && model.has_one("assessments", e);
        let window =
            super::compare::counted_window(ctx, if through_visits { "assessments" } else { e }, after);
        // qualified ("wounds that are open", "wound id 4", "a wound heal") or part of
        // something else
        let qualified = ctx.mentions.iter().any(|o| {
            o.first == m.last
                && o.entity().is_none()
                && o.measure().is_none()
                && (!o.values.is_empty() || !o.entries.is_empty())
                // "patients with no wounds by clinic": a grouping word is not a qualifier
                && !(o.values.is_empty()
                    && o.terms().next().is_some()
                    && o.terms().all(|t| model.terms[t].kind == TermKind::Column))
        }) || matches!(
            ctx.w(m.last),
            "that" | "which" | "who" | "where" | "whose" | "with" | "id" | "#"
        ) || by_whom(ctx, m.last)
            // "no wound on the sacrum", "without a wound at Riverside": a value of the
            // related record after a preposition qualifies it
            || matches!(ctx.w(m.last), "on" | "at" | "of" | "in" | "located")
                && ctx.mentions.iter().any(|o| {
                    o.first > m.last
                        && o.first <= m.last + 3
                        && o.value_attributes()
                            .iter()
                            .any(|q| q.split_once('.').is_some_and(|(oe, _)| oe == e.as_str()))
                })
            || window.is_none() && matches!(ctx.w(m.last), "in" | "during" | "since")
            || ctx
                .tokens
                .get(m.last)
                .is_some_and(|t| t.kind == TokenKind::Number)
            || window.is_none() && ctx.times.iter().any(|t| t.first == m.last)
            || ctx
                .comparisons
                .iter()
                .any(|c| c.first < m.last && m.first < c.last);
        if !(one_to_many || through_visits) || qualified {
            continue;
        }
        let related = if through_visits {
            "assessments".to_owned()
        } else {
            e.clone()
        };
        // "with no wounds", "never recorded an assessment", "don't have a single
        // patient", "who have had a wound": the cue stands a few linking words before
        let mut k = m.first - 1;
        let mut negated = false;
        let mut having = false;
        loop {
            let w = ctx.w(k);
            negated |= ctx.cues.negations.contains(&k);
            having |= matches!(w, "with" | "having" | "have" | "has" | "had");
            if negated || k == 0 || m.first - k > 4 || !LINKING_RELATED.contains(&w) {
                break;
            }
            k -= 1;
        }
        if !(negated || having) {
            continue;
        }
        let (op, value) = if negated {
            (CompareOp::Eq, 0)
        } else {
            (CompareOp::Gte, 1)
        };
        let span = ctx.span_of(k, m.last);
        let condition = window.map(|(ti, c)| {
            *consumed_time = Some(ti);
            Box::new(c)
        });
        r.filters.push(Filter {
            constraint: Constraint::RelatedCount {
                per: None,
                related,
                op,
                value,
                within: None,
                condition,
            },
            first: k,
            span,
        });
    }
}

/// "an assessment by a vascular surgeon", "a visit by the wound nurse": the related
/// record is qualified by who made it (a value after "by"), so it is not a question of
/// whether such records exist at all. "by clinic" (a grouping) is not.
fn by_whom(ctx: &Ctx<'_>, at: usize) -> bool {
    if ctx.w(at) != "by" {
        return false;
    }
    let mut j = at + 1;
    while matches!(ctx.w(j), "a" | "an" | "the" | "any") {
        j += 1;
    }
    ctx.mentions
        .iter()
        .any(|o| o.first == j && o.entity().is_none() && !o.values.is_empty())
}

/// Words between a "with"/negation cue and the related records it is about.
const LINKING_RELATED: &[&str] = &[
    "any",
    "a",
    "an",
    "single",
    "one",
    "recorded",
    "done",
    "performed",
    "made",
    "seen",
    "assessed",
    "treated",
    "registered",
    "had",
    "have",
    "has",
    "got",
    "ever",
    "been",
    "with",
    "having",
    "yet",
];

/// "whatever their status", "regardless of diabetes", "irrespective of clinic", "no
/// matter their stage": the phrase after it is said so that it is *not* a filter.
pub(super) fn read_regardless(ctx: &Ctx<'_>, used: &mut [bool]) {
    // "wounds (open or not)", "whether diabetic or not": either way, no condition
    for (mi, m) in ctx.mentions.iter().enumerate() {
        if m.entity().is_none()
            && (!m.values.is_empty()
                || m.entries
                    .iter()
                    .any(|e| matches!(e.target, crate::engine::vocab::Target::Value(..))))
            && ctx.w(m.last) == "or"
            && ctx.w(m.last + 1) == "not"
        {
            used[mi] = true;
        }
    }
    for k in 0..ctx.tokens.len() {
        let after = match (ctx.w(k), ctx.w(k + 1)) {
            ("regardless" | "irrespective", "of") => k + 2,
            ("whatever" | "whichever", "their" | "its" | "the") => k + 2,
            ("whatever" | "whichever", _) => k + 1,
            ("no", "matter") if matches!(ctx.w(k + 2), "their" | "its" | "the" | "what") => k + 3,
            _ => continue,
        };
        let after = if matches!(ctx.w(after), "their" | "its" | "the" | "any") {
            after + 1
        } else {
            after
        };
        for (mi, m) in ctx.mentions.iter().enumerate() {
            if m.first == after && m.entity().is_none() {
                used[mi] = true;
            }
        }
    }
}

/// True when a mention names assessments or their date.
pub(super) fn names_visit(model: &SemanticModel, m: &Mention) -> bool {
    m.entity()
        .is_some_and(|e| model.entities[e].name == "assessments")
        || m.time_dimension()
            .is_some_and(|d| matches!(model.time_dimensions[d].name.as_str(), "assessed" | "last_visit"))
        || m.attributes()
            .any(|(e, a)| qualified(model, e, a) == "assessments.assessed_on")
        || m.terms().any(|t| model.terms[t].id == "overdue")
}

/// "not assessed in 2 weeks", "no assessment in the last 30 days", "not seen for a
/// month": no related assessment within the span.
pub(super) fn read_not_seen(
    ctx: &Ctx<'_>,
    r: &mut Reading,
    used: &mut [bool],
    consumed_time: &mut Option<usize>,
) {
    let ms = ctx.mentions;
    for mi in 0..ms.len() {
        let m = &ms[mi];
        if used[mi] || !names_visit(ctx.model, m) {
            continue;
        }
        let overdue = m.terms().any(|t| ctx.model.terms[t].id == "overdue");
        let negated =
            overdue || (m.first.saturating_sub(3)..m.first).any(|k| ctx.cues.negations.contains(&k));
        if !negated {
            continue;
        }
        let mut span = None;
        let mut condition = None;
        if let Some((ti, t)) = ctx
            .times
            .iter()
            .enumerate()
            .find(|(_, t)| t.first >= m.last && t.first <= m.last + 1)
        {
            if t.end <= ctx.today {
                // "no assessment between 1 Sept and 31 Oct": a period that ended before
                // today is those dates, not "the last N days"
                condition = Some(Box::new(super::compare::period_between(
                    ctx,
                    "assessments.assessed_on",
                    t,
                )));
            } else {
                let days = (ctx.today - t.start).num_days().max(1) as u32;
                span = Some(Span {
                    n: days,
                    unit: SpanUnit::Days,
                });
            }
            *consumed_time = Some(ti);
        } else {
            let mut k = m.last;
            while matches!(
                ctx.w(k),
                "in" | "for" | "within" | "over" | "the" | "last" | "past" | "a" | "more" | "than" | "longer"
            ) {
                k += 1;
            }
            let n = ctx.tokens.get(k).and_then(|t| t.num).map(|v| v.max(1.0) as u32);
            let (n, unit_at) = match n {
                Some(n) => (n, k + 1),
                None => (1, k),
            };
            let unit = match ctx.w(unit_at) {
                "day" | "days" => Some(SpanUnit::Days),
                "week" | "weeks" => Some(SpanUnit::Weeks),
                "month" | "months" => Some(SpanUnit::Months),
                "year" | "years" => Some(SpanUnit::Years),
                _ => None,
            };
            if let Some(unit) = unit {
                span = Some(Span { n, unit });
                // "not seen for over 10 days": the span is this step's, not a comparison
                // of its own (the wound's days open)
                r.consumed.push((m.last, unit_at + 1));
            }
        }
        if span.is_none() && condition.is_none() {
            continue;
        }
        let constraint = Constraint::RelatedCount {
            per: None,
            related: "assessments".into(),
            op: CompareOp::Eq,
            value: 0,
            within: span,
            condition,
        };
        r.filters.push(Filter {
            constraint,
            first: m.first,
            span: m.span,
        });
        r.pieces.push(piece(
            ctx,
            m,
            PieceKind::Comparison,
            "assessments".into(),
            Some(Value::Integer(0)),
        ));
        used[mi] = true;
    }
}
