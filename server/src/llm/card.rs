//! What is sent to the language model, and nothing else (the README lists it):
//! a compact schema card built from the semantic model, the question with anything
//! that looks like an identifier masked, the words the engine could not read, the
//! thread's previous plan with values of identifying columns masked, the answers
//! already given (ids and kinds only) and today's date.
//!
//! Never sent: patient names, record numbers, birth dates, any value of a `pii` or
//! identifier/label/key column, free-text values, rows, counts, SQL, user names.

use crate::engine::{AllowedValuesSnapshot, QueryPlan, Resolution, Resolutions};
use crate::semantic::{AttributeRole, SemanticModel};
use chrono::NaiveDate;
use serde_json::{Value, json};

/// Most allowed values listed per attribute.
const MAX_VALUES: usize = 40;

/// True for attributes whose values may be sent (non-identifying, not free text).
pub fn sendable_values(model: &SemanticModel, qualified: &str) -> bool {
    model.attribute(qualified).is_some_and(|r| {
        let a = r.attribute;
        !a.pii && a.role == AttributeRole::Attribute && a.allowed.is_some()
    })
}

/// True for attributes that identify a person or a row (never read by a proposed piece).
pub fn identifying(model: &SemanticModel, qualified: &str) -> bool {
    model.attribute(qualified).is_some_and(|r| {
        let a = r.attribute;
        a.pii
            || matches!(
                a.role,
                AttributeRole::Identifier | AttributeRole::Key | AttributeRole::ForeignKey
            )
    })
}

/// The schema card: entities with typed attributes (units, allowed values of
/// non-identifying columns), joins, measures, time dimensions and the dictionary terms
/// with their option ids.
pub fn schema_card(model: &SemanticModel, allowed: &AllowedValuesSnapshot) -> Value {
    let entities: Vec<Value> = model
        .entities
        .iter()
        .map(|e| {
            let attributes: Vec<Value> = e
                .attributes
                .iter()
                .filter(|a| !matches!(a.role, AttributeRole::Key | AttributeRole::ForeignKey))
                .map(|a| {
                    let q = format!("{}.{}", e.name, a.name);
                    let mut o = json!({"name": q, "type": a.ty.as_str()});
                    if let Some(u) = &a.unit {
                        o["unit"] = json!(u);
                    }
                    if a.pii || a.role != AttributeRole::Attribute {
                        o["identifying"] = json!(true);
                    } else if sendable_values(model, &q) {
                        let from_db: Vec<String> = allowed
                            .get(&q)
                            .map(|v| v.values.iter().take(MAX_VALUES).cloned().collect())
                            .unwrap_or_default();
                        let values: Vec<String> = if from_db.is_empty() {
                            a.allowed
                                .as_ref()
                                .map(|l| {
                                    l.listed()
                                        .iter()
                                        .take(MAX_VALUES)
                                        .map(|v| v.value.to_string())
                                        .collect()
                                })
                                .unwrap_or_default()
                        } else {
                            from_db
                        };
                        if !values.is_empty() {
                            o["values"] = json!(values);
                        }
                    }
                    o
                })
                .collect();
            let mut o = json!({"name": e.name, "label": e.label, "attributes": attributes});
            if !e.synonyms.is_empty() {
                o["synonyms"] = json!(e.synonyms);
            }
            if let Some(t) = &e.default_time_dimension {
                o["default_time_dimension"] = json!(t);
            }
            o
        })
        .collect();
    let joins: Vec<Value> = model.joins.iter().map(|j| json!([j.from, j.to])).collect();
    let measures: Vec<Value> = model
        .measures
        .iter()
        .map(|m| json!({"name": m.name, "label": m.label, "entity": m.entity}))
        .collect();
    let time_dimensions: Vec<Value> = model
        .time_dimensions
        .iter()
        .map(|t| json!({"name": t.name, "attribute": t.attribute}))
        .collect();
    let terms: Vec<Value> = model
        .terms
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "phrase": t.phrase,
                "applies_to": t.applies_to,
                "options": t.options.iter().map(|o| json!([o.id, o.label])).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "entities": entities,
        "joins": joins,
        "measures": measures,
        "time_dimensions": time_dimensions,
        "terms": terms,
    })
}

/// The question with identifier-like tokens masked: record numbers (letters and at
/// least four digits, `CL0000123`), long digit runs (six or more), e-mail addresses.
pub fn mask_question(question: &str) -> String {
    question
        .split(' ')
        .map(|w| if identifier_like(w) { "[redacted]" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

fn identifier_like(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '@');
    let digits = w.chars().filter(char::is_ascii_digit).count();
    let letters = w.chars().filter(|c| c.is_alphabetic()).count();
    let iso_date = w.len() == 10 && chrono::NaiveDate::parse_from_str(w, "%Y-%m-%d").is_ok();
    !iso_date
        && (w.contains('@')
            || (letters > 0 && digits >= 4 && !w.contains('-'))
            || (letters == 0 && digits >= 6 && !w.contains('.')))
}

/// A word that may be a person's name: capitalised, not at the start of the question
/// ("wounds of Smith"). Such a word is not sent (the deterministic question is asked).
pub fn maybe_a_name(question: &str, word: &str) -> bool {
    let first_word = question.split_whitespace().next().unwrap_or("");
    word.split_whitespace().any(|w| {
        w.chars().next().is_some_and(char::is_uppercase)
            && w.chars().skip(1).any(char::is_lowercase)
            && !first_word.eq_ignore_ascii_case(w)
    }) || word.split_whitespace().any(identifier_like)
}

/// The previous plan with every value of an identifying attribute masked.
pub fn masked_plan(model: &SemanticModel, plan: &QueryPlan) -> Value {
    let mut v = serde_json::to_value(plan).unwrap_or(Value::Null);
    mask_values(model, &mut v);
    v
}

fn mask_values(model: &SemanticModel, v: &mut Value) {
    match v {
        Value::Object(o) => {
            let hides = o.get("attribute").and_then(Value::as_str).is_some_and(|a| {
                identifying(model, a)
                    || model
                        .attribute(a)
                        .is_some_and(|r| r.attribute.role == AttributeRole::Label)
            });
            for (k, x) in o.iter_mut() {
                if hides && matches!(k.as_str(), "value" | "values" | "min" | "max") {
                    *x = json!("[redacted]");
                } else {
                    mask_values(model, x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| mask_values(model, x)),
        _ => {}
    }
}

/// The answers already given, as ids and kinds (custom values as their typed constraint
/// only when it reads no identifying attribute).
pub fn resolutions_summary(model: &SemanticModel, r: &Resolutions) -> Value {
    let items: Vec<Value> = r
        .answers
        .iter()
        .map(|(id, res)| match res {
            Resolution::Option { id: o } => json!({"ambiguity": id, "option": o}),
            Resolution::Custom { constraint } => {
                if constraint.attributes().iter().any(|a| identifying(model, a)) {
                    json!({"ambiguity": id, "custom": "[redacted]"})
                } else {
                    json!({"ambiguity": id, "custom": constraint})
                }
            }
            Resolution::Change { change } => json!({"ambiguity": id, "change": change}),
            Resolution::DontKnow => json!({"ambiguity": id, "dont_know": true}),
        })
        .collect();
    json!(items)
}

/// Today, as the model reads relative dates.
pub fn today(d: NaiveDate) -> Value {
    json!(d.format("%Y-%m-%d").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Intent;
    use crate::semantic::{Constraint, Value as V};

    #[test]
    fn the_card_lists_no_identifying_values() {
        let model = SemanticModel::wound_care();
        let snap = AllowedValuesSnapshot::from_model_static(&model);
        let card = schema_card(&model, &snap).to_string();
        assert!(card.contains("wounds.etiology"));
        assert!(
            card.contains("venous_leg_ulcer"),
            "allowed values of coded columns are sent"
        );
        assert!(card.contains("\"identifying\":true"));
        // no patient names, record numbers or birth dates in a card
        assert!(!card.contains("CL00"));
        let mut with_names = AllowedValuesSnapshot::from_model_static(&model);
        with_names.insert("patients.full_name", vec!["Ada Lovelace".into()], false);
        with_names.insert("patients.mrn", vec!["CL0000001".into()], false);
        let card = schema_card(&model, &with_names).to_string();
        assert!(!card.contains("Ada Lovelace") && !card.contains("CL0000001"));
    }

    #[test]
    fn identifiers_in_the_question_and_the_previous_plan_are_masked() {
        assert_eq!(
            mask_question("wounds of patient CL0000123 since 2025-03-01, call 5551234567 or a@b.org"),
            "wounds of patient [redacted] since 2025-03-01, call [redacted] or [redacted]"
        );
        assert_eq!(
            mask_question("area over 15 cm2 in the last 30 days"),
            "area over 15 cm2 in the last 30 days"
        );
        assert!(maybe_a_name("wounds of Smith", "Smith"));
        assert!(!maybe_a_name("Stalling wounds", "Stalling"));
        assert!(!maybe_a_name("stalling wounds", "stalling"));

        let model = SemanticModel::wound_care();
        let mut p = QueryPlan::new("patients", NaiveDate::from_ymd_opt(2026, 11, 1).unwrap());
        p.intent = Intent::List;
        p.filters.push(Constraint::InSet {
            attribute: "patients.mrn".into(),
            values: vec![V::Text("CL0000123".into())],
        });
        p.filters.push(Constraint::InSet {
            attribute: "wounds.etiology".into(),
            values: vec![V::Text("venous_leg_ulcer".into())],
        });
        let shown = masked_plan(&model, &p).to_string();
        assert!(!shown.contains("CL0000123"), "{shown}");
        assert!(shown.contains("venous_leg_ulcer"), "{shown}");
    }
}
