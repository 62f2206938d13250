//! A record named by its key ("wound id 100", "patient #42", "pt 42").

use crate::semantic::{AttributeRole, CompareOp, Constraint, Value};

use crate::engine::link::EXACT;
use crate::engine::reading::{Ctx, Filter, Reading};
use crate::engine::tokenize::TokenKind;
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

/// "healed within 90 days", "healed in under 6 weeks": the healing time is at most that.
/// "wound id 100", "patient #42", "pt 42's wounds", "clinic number 3": an entity word,
/// then "id" / "#" / "number" / "no" (or nothing, after a singular word), then a whole
/// number — a filter on that entity's key. A number is compared with a key only when it
/// was said as an identifier like this.
pub(super) fn read_ids(ctx: &Ctx<'_>, r: &mut Reading) {
    let model = ctx.model;
    let in_time = |k: usize| ctx.times.iter().any(|t| t.first <= k && k < t.last);
    let in_cmp = |k: usize| ctx.comparisons.iter().any(|c| c.first <= k && k < c.last);
    for m in ctx.mentions {
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
        let whole =
            t.kind == TokenKind::Number && t.num.is_some_and(|n| n >= 0.0 && n.fract() == 0.0 && n < 1e12);
        if !whole || in_time(k) || in_cmp(k) || !(said_as_id || singular && word != "pts") {
            continue;
        }
        let id = t.num.unwrap_or_default() as i64;
        let attribute = format!("{}.{}", entity.name, key.name);
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
