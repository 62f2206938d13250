//! Durations: the day count between two dates ("days from onset to healed") and the
//! time to heal ("healed within 90 days").

use crate::semantic::{
    AttributeType, CompareOp, Constraint, DateOperand, Derived, SemanticModel, Value, split_qualified,
};

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
    } else if let Some((attribute, first, last)) = first_to_last(ctx) {
        // the words of the span ("between the first and the last assessment") are all
        // spoken for: the mentions inside it and the connecting words
        for (mi, m) in ctx.mentions.iter().enumerate() {
            if m.first >= first && m.last <= last {
                st.used[mi] = true;
            }
        }
        let span = ctx.span_of(first, last);
        st.r.pieces.push(LinkedPiece {
            kind: PieceKind::Attribute,
            target: attribute.clone(),
            value: None,
            text: span.slice(ctx.question).to_owned(),
            span: Some(span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
        st.r.consumed.push((first, last));
        st.r.days_between = Some(attribute);
    } else if let Some(message) = days_between_not_kept(ctx) {
        st.r.cannot_compute = Some(message);
    }
}

/// The model's day counts from a record's first dated child row to its latest one
/// (`days_between` of a `first` and a `latest` of the same child date), by entity:
/// (entity, qualified attribute).
pub(crate) fn first_to_last_spans(model: &SemanticModel) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in &model.entities {
        let child_date = |name: &str, latest: bool| {
            e.attributes
                .iter()
                .find(|a| a.name == name)
                .and_then(|a| match (&a.derived, latest) {
                    (Some(Derived::First { attribute, .. }), false)
                    | (Some(Derived::Latest { attribute, .. }), true) => Some(attribute.clone()),
                    _ => None,
                })
        };
        for a in &e.attributes {
            if let Some(Derived::DaysBetween {
                from: DateOperand::Attribute(f),
                to: DateOperand::Attribute(t),
                ..
            }) = &a.derived
                && let (Some(x), Some(y)) = (child_date(f, false), child_date(t, true))
                && x == y
            {
                out.push((e.name.clone(), format!("{}.{}", e.name, a.name)));
            }
        }
    }
    out
}

/// "days between the first and the last assessment", "the gap between their first ever
/// visit and their most recent one", "time from first to latest assessment", "how long
/// between the initial and the final review": the model's day count from a record's first
/// visit to its latest one, for the record the question is about (a wound's, else a
/// patient's, when the model has both). Returns the attribute and the token range read.
pub(crate) fn first_to_last(ctx: &Ctx<'_>) -> Option<(String, usize, usize)> {
    let spans = first_to_last_spans(ctx.model);
    if spans.is_empty() {
        return None;
    }
    let first_word = |k: usize| matches!(ctx.w(k), "first" | "earliest" | "initial" | "1st" | "opening");
    let last_word = |k: usize| {
        matches!(
            ctx.w(k),
            "last" | "latest" | "final" | "newest" | "most" | "recent" | "current"
        )
    };
    let visit_word = |k: usize| {
        matches!(
            ctx.w(k),
            "assessment"
                | "assessments"
                | "visit"
                | "visits"
                | "review"
                | "reviews"
                | "measurement"
                | "measurements"
                | "appointment"
                | "appointments"
                | "encounter"
                | "encounters"
                | "assessed"
                | "seen"
                | "one"
        )
    };
    for k in 0..ctx.tokens.len() {
        let head = matches!(
            ctx.w(k),
            "days"
                | "day"
                | "time"
                | "duration"
                | "interval"
                | "gap"
                | "span"
                | "weeks"
                | "months"
                | "period"
        ) || ctx.w(k) == "long" && ctx.w(k.wrapping_sub(1)) == "how";
        if !head {
            continue;
        }
        // "days between", "gap from", "time elapsed between", "how long was it between"
        let Some(j) = (k + 1..k + 5).find(|&j| matches!(ctx.w(j), "between" | "from")) else {
            continue;
        };
        let Some(f) = (j + 1..j + 6).find(|&i| first_word(i)) else {
            continue;
        };
        let Some(c) =
            (f + 1..f + 6).find(|&i| matches!(ctx.w(i), "and" | "to" | "until" | "till" | "through"))
        else {
            continue;
        };
        let Some(l) = (c + 1..c + 5).find(|&i| last_word(i)) else {
            continue;
        };
        let mut end = l + 1;
        while last_word(end) {
            end += 1;
        }
        let said_visit = (f..end + 2).any(visit_word);
        if !said_visit {
            continue;
        }
        if visit_word(end) {
            end += 1;
        }
        // whose span: the first record named in the question that has one
        let outside = |m: &&Mention| m.last <= j || m.first >= end;
        let named = ctx.mentions.iter().filter(outside).find_map(|m| {
            let entity = m
                .entity()
                .map(|e| ctx.model.entities[e].name.clone())
                .or_else(|| {
                    m.attributes()
                        .next()
                        .map(|(e, _)| ctx.model.entities[e].name.clone())
                })
                .or_else(|| {
                    m.entries.iter().find_map(|x| match &x.target {
                        Target::Value(a, _) => split_qualified(a).map(|(e, _)| e.to_owned()),
                        _ => None,
                    })
                })
                .or_else(|| {
                    m.values
                        .first()
                        .and_then(|v| split_qualified(&v.attribute).map(|(e, _)| e.to_owned()))
                })?;
            spans.iter().find(|(e, _)| *e == entity).map(|(_, a)| a.clone())
        });
        let by_word = ctx.tokens.iter().find_map(|t| {
            let e = match t.text.as_str() {
                "wound" | "wounds" | "ulcer" | "ulcers" | "injury" | "injuries" => "wounds",
                "patient" | "patients" | "pt" | "pts" | "person" | "people" => "patients",
                _ => return None,
            };
            spans.iter().find(|(x, _)| x == e).map(|(_, a)| a.clone())
        });
        let attribute = named
            .or(by_word)
            .or_else(|| spans.iter().find(|(e, _)| e == "wounds").map(|(_, a)| a.clone()))
            .unwrap_or_else(|| spans[0].1.clone());
        // the head is part of it: "how many days", "average interval", "the gap"
        let start = if ctx.w(k.wrapping_sub(2)) == "how" && matches!(ctx.w(k - 1), "many" | "much") {
            k - 2
        } else if ctx.w(k) == "long" {
            k - 1
        } else {
            k
        };
        return Some((attribute, start, end));
    }
    None
}

/// "days from onset to healed", "time between onset and healing": the model's derived
/// day count between those two dates (`days_between`), when it has one. Qualified name.
/// Returns the attribute and the two mentions.
/// "average number of days between onset and the first assessment": a day count between
/// two dates said, of which the model keeps no count (only those of its `days_between`
/// attributes; read when neither `days_between` nor `first_to_last` found one) — the
/// message that says so, with the counts it does keep.
fn days_between_not_kept(ctx: &Ctx<'_>) -> Option<String> {
    let model = ctx.model;
    let dated = |m: &Mention| {
        m.attributes()
            .any(|(e, a)| model.entities[e].attributes[a].ty == AttributeType::Date)
            || m.time_dimension().is_some()
    };
    let k = (0..ctx.tokens.len()).find(|&k| {
        matches!(ctx.w(k), "days" | "weeks" | "months" | "time") && matches!(ctx.w(k + 1), "between" | "from")
    })?;
    let dates: Vec<&Mention> = ctx
        .mentions
        .iter()
        .filter(|m| m.first > k + 1 && m.first <= k + 8 && dated(m))
        .collect();
    let [x, y, ..] = dates.as_slice() else {
        return None;
    };
    let kept: Vec<String> = model
        .entities
        .iter()
        .flat_map(|e| {
            e.attributes.iter().filter_map(|a| match &a.derived {
                Some(Derived::DaysBetween { .. }) if !a.description.is_empty() => {
                    // the description's first sentence
                    a.description
                        .split(['.', ';'])
                        .next()
                        .map(|d| d.trim().to_lowercase())
                }
                _ => None,
            })
        })
        .collect();
    Some(format!(
        "I can't count the days between \"{}\" and \"{}\": the data keeps day counts only for {}.",
        ctx.text(x.span),
        ctx.text(y.span),
        kept.join("; ")
    ))
}

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
        let mut y_at = if matches!(ctx.w(x.last), "to" | "and" | "until" | "till") {
            x.last + 1
        } else {
            continue;
        };
        // "… and the first assessment", "… to their last visit"
        if matches!(ctx.w(y_at), "the" | "their" | "its" | "his" | "her") {
            y_at += 1;
        }
        let Some(yi) = mention_at(y_at) else {
            continue;
        };
        let y = &ctx.mentions[yi];
        let (Some((e1, from)), Some((e2, mut to))) = (date_of(x), date_of(y)) else {
            continue;
        };
        if e1 != e2 {
            // "onset and the first assessment": the record's own date derived the same way
            // (a wound's first assessment, not its patient's)
            let derived = |e: &str, a: &str| {
                model
                    .attribute(&format!("{e}.{a}"))
                    .and_then(|r| r.attribute.derived.clone())
            };
            let Some(same) = derived(&e2, &to).and_then(|d| {
                model
                    .entity(&e1)?
                    .attributes
                    .iter()
                    .find(|a| a.derived.as_ref() == Some(&d))
                    .map(|a| a.name.clone())
            }) else {
                continue;
            };
            to = same;
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

/// "how many days was wound 1500 open before it healed", "how long has it been open":
/// "open" after a verb of being is the duration asked about, not the wound's status now
/// (wound 1500 has healed; a status filter would leave nothing to measure).
pub(super) fn open_as_duration(ctx: &Ctx<'_>, st: &mut State) {
    let n = ctx.tokens.len();
    let Some(cue) = (0..n).find(|&k| {
        ctx.w(k) == "how"
            && (ctx.w(k + 1) == "long"
                || ctx.w(k + 1) == "many" && matches!(ctx.w(k + 2), "days" | "weeks" | "months"))
    }) else {
        return;
    };
    let being = |w: &str| {
        matches!(
            w,
            "been" | "was" | "were" | "is" | "stayed" | "remained" | "stay" | "remain" | "kept"
        )
    };
    for (mi, m) in ctx.mentions.iter().enumerate() {
        let k = m.first;
        // "how many days was wound 1500 open", "how long has it been open" — not "how
        // long were the open wounds …", where "open" names the records
        let before_noun = ctx
            .mentions
            .iter()
            .any(|o| o.first == k + 1 && o.entity().is_some());
        if st.used[mi]
            || m.last != k + 1
            || ctx.w(k) != "open"
            || k < cue
            || before_noun
            || !(being(ctx.w(k - 1)) || (cue..k).any(|i| being(ctx.w(i))))
            || !m.value_attributes().iter().any(|a| a.ends_with(".status"))
        {
            continue;
        }
        st.used[mi] = true;
        st.r.consumed.push((k, k + 1));
    }
}
