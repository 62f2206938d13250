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
    let mut codes: Vec<(usize, String)> = Vec::new();
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
        codes.push((k, qualified(ctx.model, e, a)));
    }
    // a code said on its own ("what clinic is CL0000123 registered at", "wounds of
    // CL0000010 and CL0000011"): the identifier, when the model has one text identifier
    let mut text_ids = ctx.model.entities.iter().enumerate().flat_map(|(e, x)| {
        x.attributes
            .iter()
            .enumerate()
            .filter(|(_, at)| {
                at.role == AttributeRole::Identifier && at.ty == crate::semantic::AttributeType::Text
            })
            .map(move |(a, _)| (e, a))
    });
    if let (Some((e, a)), None) = (text_ids.next(), text_ids.next()) {
        for (k, t) in ctx.tokens.iter().enumerate() {
            if identifiers.contains(&k) || covered(k) || !is_code(&t.text) {
                continue;
            }
            identifiers.push(k);
            codes.push((k, qualified(ctx.model, e, a)));
        }
    }
    // one filter per identifier: several codes are any of them
    let mut attributes: Vec<&String> = codes.iter().map(|(_, a)| a).collect();
    attributes.dedup();
    for attribute in attributes {
        let of: Vec<usize> = codes
            .iter()
            .filter(|(_, a)| a == attribute)
            .map(|(k, _)| *k)
            .collect();
        let values: Vec<Value> = of
            .iter()
            // "patient CL0000417's wounds": the code without its possessive
            .map(|&k| {
                let typed = ctx.tokens[k].span.slice(ctx.question);
                let bare = typed
                    .strip_suffix("'s")
                    .or_else(|| typed.strip_suffix("’s"))
                    .or_else(|| typed.strip_suffix("'S"))
                    .unwrap_or(typed);
                Value::Text(bare.to_owned())
            })
            .collect();
        let first = of[0];
        let span = crate::engine::TextSpan::new(
            ctx.tokens[first].span.start,
            ctx.tokens[of[of.len() - 1]].span.end,
        );
        let constraint = if let [v] = values.as_slice() {
            Constraint::Compare {
                attribute: attribute.clone(),
                op: CompareOp::Eq,
                value: v.clone(),
                unit: None,
            }
        } else {
            Constraint::InSet {
                attribute: attribute.clone(),
                values: values.clone(),
            }
        };
        r.filters.push(Filter {
            constraint,
            first,
            span,
        });
        for (&k, value) in of.iter().zip(values) {
            let t = &ctx.tokens[k];
            r.pieces.push(LinkedPiece {
                kind: PieceKind::Value,
                target: attribute.clone(),
                value: Some(value),
                text: t.span.slice(ctx.question).to_owned(),
                span: Some(t.span),
                how: LinkMethod::Exact,
                confidence: EXACT,
            });
        }
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
        // "at presentation", "on admission", "at baseline": an event of care, not a place
        let event = matches!(
            t.text.as_str(),
            "presentation"
                | "baseline"
                | "admission"
                | "intake"
                | "referral"
                | "discharge"
                | "diagnosis"
                | "onset"
        );
        let after_place = !event && matches!(ctx.w(k.wrapping_sub(1)), "at" | "from" | "named" | "called");
        if capitalised || after_place {
            r.unknown_names.push(t.span);
        }
    }
}

/// A record code as people type one: a few letters then at least four digits
/// ("CL0000123", "mrn00042"), never a word, a year or a unit ("cm2", "Q3", "2025").
fn is_code(word: &str) -> bool {
    let letters = word.chars().take_while(char::is_ascii_alphabetic).count();
    let digits = word
        .chars()
        .skip(letters)
        .take_while(char::is_ascii_digit)
        .count();
    (1..=4).contains(&letters) && digits >= 4 && letters + digits == word.chars().count()
}
