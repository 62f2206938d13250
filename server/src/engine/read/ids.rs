//! A record named by its key ("wound id 100", "patient #42", "pt 42").

use crate::semantic::{AttributeRole, CompareOp, Constraint, Value};

use crate::engine::link::EXACT;
use crate::engine::reading::{Ctx, Filter, Reading};
use crate::engine::tokenize::TokenKind;
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

use super::state::State;

/// "wound id 100", "patient #42", "pt 42's wounds", "clinic number 3": an entity word,
/// then "id" / "#" / "number" / "no" (or nothing, after a singular word), then a whole
/// number — a filter on that entity's key. A number is compared with a key only when it
/// was said as an identifier like this.
///
/// A record named by its id right before records it has many of ("wound 1234's
/// assessments", "pt 42's visits", "wound #88: all assessments", "clinic 3 clinicians") is
/// the parent of the records listed, not what is listed: its mention is spoken for, so the
/// entity is the one named after it. "assessment ids", "the id numbers of …", "record
/// numbers for …" without a number after them ask for the records themselves.
pub(super) fn read_ids(ctx: &Ctx<'_>, st: &mut State) {
    let mut parents = Vec::new();
    read_ids_into(ctx, &mut st.r, &mut parents);
    for mi in parents {
        st.used[mi] = true;
    }
    records_said_as_ids(ctx, st);
}

/// The records a record named by its id (entity `parent`, its number at token `k`) is
/// said to own right after it: "'s assessments", ": all assessments", ", wounds".
fn owned_after(ctx: &Ctx<'_>, parent: &str, k: usize) -> bool {
    let mut j = k + 1;
    while j < k + 7
        && matches!(
            ctx.w(j),
            "'" | "s"
                | ":"
                | "-"
                | ","
                | ";"
                | "all"
                | "the"
                | "its"
                | "their"
                | "his"
                | "her"
                | "every"
                | "each"
                | "list"
                | "show"
                | "me"
                | "display"
                | "give"
                | "get"
                | "any"
        )
    {
        j += 1;
    }
    let Some(o) = ctx.mentions.iter().find(|o| o.first == j) else {
        return false;
    };
    let Some(e) = o.entity() else {
        return false;
    };
    // "wound 12's assessment 7": a record of its own, not the parent's records
    let own_id = ctx
        .tokens
        .get(o.last)
        .is_some_and(|t| t.kind == TokenKind::Number)
        || matches!(ctx.w(o.last), "id" | "#" | "number" | "no" | "nr");
    !own_id && ctx.model.has_many(parent, &ctx.model.entities[e].name)
}

/// "assessment ids", "the id numbers of open wounds", "record numbers for wound 12",
/// "identifiers of …": when no number follows, the words ask for the records themselves
/// (a list shows their ids), not for a value.
fn records_said_as_ids(ctx: &Ctx<'_>, st: &mut State) {
    let n = ctx.tokens.len();
    // the records' word, or a count measure naming them ("open wounds")
    let entity_at = |i: usize| {
        ctx.mentions
            .iter()
            .any(|m| m.first == i && (m.entity().is_some() || m.measure().is_some()))
    };
    for k in 0..n {
        let len = match (ctx.w(k), ctx.w(k + 1)) {
            ("id" | "ids" | "identifier" | "identifiers", "number" | "numbers" | "nos" | "nrs") => 2,
            ("record" | "records", "number" | "numbers" | "ids" | "nos" | "nrs") => 2,
            ("id" | "ids" | "identifiers", _) => 1,
            _ => continue,
        };
        let end = k + len;
        // "wound id 100", "ids 4 and 7": an id said with its number is a filter (above)
        if ctx.tokens.get(end).is_some_and(|t| t.kind == TokenKind::Number) || ctx.w(end) == "#" {
            continue;
        }
        let after_records = ctx.mentions.iter().any(|m| m.last == k && m.entity().is_some());
        let mut j = end;
        let of_records = matches!(ctx.w(j), "of" | "for") && {
            j += 1;
            while matches!(ctx.w(j), "the" | "all" | "our" | "every" | "each" | "any") {
                j += 1;
            }
            // "ids of the open wounds": the records' word, after the words saying which
            (j..j + 4).any(entity_at)
        };
        if !(after_records || of_records) {
            continue;
        }
        // the words are read; a model phrase inside them ("record") is spoken for
        for (mi, m) in ctx.mentions.iter().enumerate() {
            if m.first >= k && m.last <= end {
                st.used[mi] = true;
            }
        }
        st.r.consumed.push((k, end));
    }
}

fn read_ids_into(ctx: &Ctx<'_>, r: &mut Reading, parents: &mut Vec<usize>) {
    let model = ctx.model;
    let in_time = |k: usize| ctx.times.iter().any(|t| t.first <= k && k < t.last);
    let in_cmp = |k: usize| ctx.comparisons.iter().any(|c| c.first <= k && k < c.last);
    for (mi, m) in ctx.mentions.iter().enumerate() {
        let Some(e) = m.entity() else {
            continue;
        };
        let entity = &model.entities[e];
        let Some(key) = entity.attributes.iter().find(|a| a.role == AttributeRole::Key) else {
            continue;
        };
        let mut k = m.last;
        let mut said_as_id = false;
        while matches!(
            ctx.w(k),
            "id" | "ids" | "#" | "number" | "no" | "nr" | "num" | "key"
        ) {
            said_as_id = true;
            k += 1;
        }
        let word = ctx.w(m.last - 1);
        let singular = crate::engine::tokenize::singular(word).is_none() || matches!(word, "pts");
        let Some(t) = ctx.tokens.get(k) else {
            continue;
        };
        let whole_at = |i: usize| {
            ctx.tokens.get(i).is_some_and(|t| {
                t.kind == TokenKind::Number && t.num.is_some_and(|n| n >= 0.0 && n.fract() == 0.0 && n < 1e12)
            }) && !in_time(i)
                && !in_cmp(i)
        };
        // "patients 5, 9 and 12", "wound ids 4 & 7": a list of whole numbers after the
        // records' word names those records
        let mut list = vec![k];
        let mut j = k + 1;
        loop {
            let mut n = j;
            while matches!(ctx.w(n), "," | "and" | "&" | "or") {
                n += 1;
            }
            if n == j || !whole_at(n) {
                break;
            }
            list.push(n);
            j = n + 1;
        }
        if !whole_at(k) || !(said_as_id || singular && word != "pts" || list.len() >= 2) {
            continue;
        }
        let attribute = format!("{}.{}", entity.name, key.name);
        if list.len() >= 2 {
            let values: Vec<Value> = list
                .iter()
                .map(|&i| Value::Integer(ctx.tokens[i].num.unwrap_or_default() as i64))
                .collect();
            let last = *list.last().unwrap_or(&k);
            let span = ctx.span_of(m.first, last + 1);
            for v in &values {
                r.pieces.push(LinkedPiece {
                    kind: PieceKind::Value,
                    target: attribute.clone(),
                    value: Some(v.clone()),
                    text: ctx.text(span),
                    span: Some(span),
                    how: LinkMethod::Exact,
                    confidence: EXACT,
                });
            }
            // "… how many wounds does each have", "… each of them": one row per record
            let each = (0..ctx.tokens.len()).any(|i| {
                ctx.w(i) == "each"
                    && !ctx
                        .mentions
                        .iter()
                        .any(|o| o.first == i + 1 || o.first <= i && i < o.last)
                    && (i < m.first || i > last)
            });
            if each {
                // one row per record, named by its label (the renderer keeps its key beside
                // it, so namesakes stay apart)
                let dim = entity
                    .display_attribute
                    .as_ref()
                    .map_or_else(|| attribute.clone(), |d| format!("{}.{d}", entity.name));
                r.dims.push(crate::engine::reading::Dim {
                    spec: crate::engine::reading::DimSpec::Attribute(dim),
                    span,
                });
            }
            r.filters.push(Filter {
                constraint: Constraint::InSet { attribute, values },
                first: m.first,
                span,
            });
            continue;
        }
        let id = t.num.unwrap_or_default() as i64;
        if owned_after(ctx, &entity.name, k) {
            parents.push(mi);
        }
        let span = ctx.span_of(m.first, k + 1);
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Value,
            target: attribute.clone(),
            value: Some(Value::Integer(id)),
            text: ctx.text(span),
            span: Some(span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
        r.filters.push(Filter {
            constraint: Constraint::Compare {
                attribute,
                op: CompareOp::Eq,
                value: Value::Integer(id),
                unit: None,
            },
            first: m.first,
            span,
        });
    }
}
