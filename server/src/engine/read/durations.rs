//! Durations: the day count between two dates ("days from onset to healed") and the
//! time to heal ("healed within 90 days").

use crate::semantic::{AttributeType, CompareOp, Constraint, DateOperand, Derived, Value, split_qualified};

use crate::engine::link::{self, EXACT, Mention};
use crate::engine::reading::{Ctx, Filter, Reading};
use crate::engine::vocab::Target;
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

use super::state::{State, qualified};

/// "days from onset to healed": the day count between two dates.
pub(super) fn days_between_step(ctx: &Ctx<'_>, st: &mut State) {
    if let Some((attribute, x, y)) = days_between(ctx) {
        st.used[x] = true;
        st.used[y] = true;
        st.r.days_between = Some(attribute);
    }
}

/// "days from onset to healed", "time between onset and healing": the model's derived
/// day count between those two dates (`days_between`), when it has one. Qualified name.
/// Returns the attribute and the two mentions.
pub(crate) fn days_between(ctx: &Ctx<'_>) -> Option<(String, usize, usize)> {
    let model = ctx.model;
    // the date attribute (entity, attribute name) a mention names: a date attribute, a
    // time dimension ("healed"), or a value whose word is also a time dimension's
    let date_of = |m: &Mention| -> Option<(String, String)> {
        let qualified = m
            .attributes()
            .find(|&(e, a)| model.entities[e].attributes[a].ty == AttributeType::Date)
            .map(|(e, a)| qualified(model, e, a))
            .or_else(|| {
                m.time_dimension()
                    .map(|t| model.time_dimensions[t].attribute.clone())
            })
            .or_else(|| model.find_time_dimension(&m.phrase).map(|t| t.attribute.clone()))
            .or_else(|| {
                // "healing" for the "healed" date: the same verb
                let stem: String = m.phrase.chars().take(4).collect();
                (m.last == m.first + 1 && stem.chars().count() == 4)
                    .then(|| {
                        model.time_dimensions.iter().find(|t| {
                            t.name.starts_with(&stem) && m.phrase.starts_with(&t.name[..4.min(t.name.len())])
                        })
                    })
                    .flatten()
                    .map(|t| t.attribute.clone())
            })?;
        split_qualified(&qualified).map(|(e, a)| (e.to_owned(), a.to_owned()))
    };
    let mention_at = |k: usize| ctx.mentions.iter().position(|m| m.first == k);
    for k in 0..ctx.tokens.len() {
        if !matches!(
            ctx.w(k),
            "days" | "day" | "time" | "duration" | "interval" | "weeks" | "months"
        ) {
            continue;
        }
        let j = if matches!(ctx.w(k + 1), "from" | "between") {
            k + 1
        } else if ctx.w(k + 1) == "it" && ctx.w(k + 2) == "took" && ctx.w(k + 3) == "from" {
            k + 3
        } else {
            continue;
        };
        let Some(xi) = mention_at(j + 1) else {
            continue;
        };
        let x = &ctx.mentions[xi];
        let y_at = if matches!(ctx.w(x.last), "to" | "and" | "until" | "till") {
            x.last + 1
        } else {
            continue;
        };
        let Some(yi) = mention_at(y_at) else {
            continue;
        };
        let y = &ctx.mentions[yi];
        let (Some((e1, from)), Some((e2, to))) = (date_of(x), date_of(y)) else {
            continue;
        };
        if e1 != e2 {
            continue;
        }
        let entity = model.entity(&e1)?;
        let found = entity.attributes.iter().find(|a| match &a.derived {
            Some(Derived::DaysBetween {
                from: DateOperand::Attribute(f),
                to: DateOperand::Attribute(t),
                ..
            }) => *f == from && *t == to,
            _ => false,
        });
        if let Some(a) = found {
            return Some((format!("{e1}.{}", a.name), xi, yi));
        }
    }
    None
}

pub(super) fn read_healed_within(ctx: &Ctx<'_>, r: &mut Reading) {
    for m in ctx.mentions {
        let healed = m.entries.iter().any(|e| matches!(&e.target, Target::Value(a, Value::Text(v)) if a == "wounds.status" && v == "healed"))
            || m.measure().is_some_and(|x| ctx.model.measures[x].name == "healed_wound_count")
            || m.phrase.split(' ').any(|w| matches!(w, "heal" | "healed"));
        if !healed {
            continue;
        }
        let mut k = m.last;
        let mut op = CompareOp::Lte;
        while matches!(
            ctx.w(k),
            "within" | "in" | "under" | "inside" | "less" | "than" | "more" | "after" | "over"
        ) {
            if matches!(ctx.w(k), "more" | "after" | "over") {
                op = CompareOp::Gt;
            }
            if ctx.w(k) == "less" || ctx.w(k) == "under" {
                op = CompareOp::Lt;
            }
            k += 1;
        }
        if k == m.last {
            continue;
        }
        let Some(n) = ctx.tokens.get(k).filter(|t| t.num.is_some()).and_then(|t| t.num) else {
            continue;
        };
        let Some((unit, _)) = link::unit_at(ctx.tokens, k + 1) else {
            continue;
        };
        let Some(days) = link::convert(n, unit, "days") else {
            continue;
        };
        let span = ctx.span_of(m.first, k + 2);
        let c = Constraint::Compare {
            attribute: "wounds.healing_days".into(),
            op,
            value: Value::Integer(days.round() as i64),
            unit: Some("days".into()),
        };
        r.filters.push(Filter {
            constraint: c,
            first: m.first,
            span,
        });
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Comparison,
            target: "wounds.healing_days".into(),
            value: Some(Value::Integer(days.round() as i64)),
            text: span.slice(ctx.question).to_owned(),
            span: Some(span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
    }
}
