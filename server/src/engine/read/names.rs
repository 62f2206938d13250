//! Words that look like names the model does not know ("at Riverside").

use crate::semantic::{AttributeRole, CompareOp, Constraint, Value};

use crate::engine::link::EXACT;
use crate::engine::reading::{Ctx, Filter, Reading};
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

use super::state::qualified;

/// Capitalised or place-like words that nothing in the model or the snapshot matched.
pub(super) fn read_unknown_names(ctx: &Ctx<'_>, r: &mut Reading) {
    let covered = |k: usize| {
        ctx.mentions.iter().any(|m| m.first <= k && k < m.last)
            || ctx.times.iter().any(|t| t.first <= k && k < t.last)
            || ctx.comparisons.iter().any(|c| c.first <= k && k < c.last)
    };
    // an identifier after its name ("MRN CL0000042") is a value as typed
    let mut identifiers: Vec<usize> = Vec::new();
    for m in ctx.mentions {
        // "MRN CL0000042", or the entity's own word before a code: "pt CL0000137"
        let own_identifier = || {
            m.entity().and_then(|e| {
                ctx.model.entities[e]
                    .attributes
                    .iter()
                    .position(|x| x.role == AttributeRole::Identifier)
                    .map(|a| (e, a))
            })
        };
        let named = m
            .attributes()
            .find(|&(e, a)| ctx.model.entities[e].attributes[a].role == AttributeRole::Identifier);
        let Some((e, a)) = named.or_else(own_identifier) else {
            continue;
        };
        let k = if matches!(ctx.w(m.last), "is" | "of" | "=" | "number" | "no" | ":") {
            m.last + 1
        } else {
            m.last
        };
        let Some(t) = ctx.tokens.get(k) else { continue };
        let looks_like_id = t.is_wordlike()
            && t.text.chars().any(|c| c.is_ascii_digit())
            && t.text.chars().all(|c| c.is_ascii_alphanumeric());
        // after the entity's own word a bare number is its record id ("patient 17"),
        // read elsewhere; a code with letters is its identifier ("pt CL0000137")
        let code = t.text.chars().any(|c| c.is_ascii_alphabetic());
        if !looks_like_id || covered(k) || (named.is_none() && !code) {
            continue;
        }
        identifiers.push(k);
        let value = Value::Text(t.span.slice(ctx.question).to_owned());
        let attribute = qualified(ctx.model, e, a);
        r.filters.push(Filter {
            constraint: Constraint::Compare {
                attribute: attribute.clone(),
                op: CompareOp::Eq,
                value: value.clone(),
                unit: None,
            },
            first: k,
            span: t.span,
        });
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Value,
            target: attribute,
            value: Some(value),
            text: t.span.slice(ctx.question).to_owned(),
            span: Some(t.span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
    }
    let first_word = ctx.tokens.iter().position(|t| t.is_wordlike()).unwrap_or(0);
    for (k, t) in ctx.tokens.iter().enumerate() {
        if t.kind != crate::engine::tokenize::TokenKind::Word
            || covered(k)
            || t.text.chars().count() < 3
            || identifiers.contains(&k)
        {
            continue;
        }
        if crate::engine::vocab::is_common_word(&t.text)
            || crate::engine::tokenize::number_word(&t.text).is_some()
        {
            continue;
        }
        let original = t.span.slice(ctx.question);
        let capitalised = k != first_word && original.chars().next().is_some_and(char::is_uppercase);
        let after_place = matches!(ctx.w(k.wrapping_sub(1)), "at" | "from" | "named" | "called");
        if capitalised || after_place {
            r.unknown_names.push(t.span);
        }
    }
}
