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
                r.dims.push(crate::engine::reading::Dim {
                    spec: crate::engine::reading::DimSpec::Attribute(attribute.clone()),
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
