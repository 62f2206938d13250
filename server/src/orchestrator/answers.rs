//! Answers to a clarification round → typed [`Resolution`]s (F7, F8).
//!
//! An option id must be one the question offered; a custom value is read according to
//! the question's custom-value kind (a number with its unit, a date range, one of the
//! allowed values, or a free constraint checked by the engine's parser). Anything else
//! is refused with a message saying what is wrong. Pure: no I/O, nothing stored.

use super::OrchestratorError;
use crate::engine::{
    AllowedValuesSnapshot, Ambiguity, CustomValue, Resolution, Resolutions, parse_custom_constraint,
};
use crate::semantic::{Constraint, SemanticModel, Value, unit_symbol};
use crate::store::{Preference, PreferenceChoice};
use app::protocol::ErrorCode;
use chrono::NaiveDate;
use std::collections::BTreeMap;

/// A remembered custom value (F12): applied to later questions with the same
/// ambiguity exactly like an answer, and reported as "your saved definition".
#[derive(Clone, Debug, PartialEq)]
pub struct SavedCustom {
    /// The validated constraint, as stored when it was answered.
    pub constraint: Constraint,
    /// How it is shown ("large = 15").
    pub label: String,
}

/// Ambiguity signature → the remembered custom value. A stored value that no longer
/// reads as a constraint is skipped (and logged), never an error: the question is
/// then simply asked again.
pub fn saved_customs(prefs: &[Preference]) -> BTreeMap<String, SavedCustom> {
    let mut out = BTreeMap::new();
    for p in prefs.iter().filter(|p| p.remembered) {
        let PreferenceChoice::Custom(json) = &p.choice else {
            continue;
        };
        match serde_json::from_str::<Constraint>(json) {
            Ok(constraint) => {
                out.insert(
                    p.signature.clone(),
                    SavedCustom {
                        constraint,
                        label: p.label.clone(),
                    },
                );
            }
            Err(e) => tracing::warn!(preference = p.id, error = %e, "unreadable remembered custom value"),
        }
    }
    out
}

/// `answered` plus every remembered custom value whose ambiguity was not answered in
/// this conversation (an answer given now always wins over a saved definition). The
/// engine applies a resolution only to an ambiguity it detects, so the extra entries
/// change nothing for questions without that ambiguity.
pub fn with_saved_customs(answered: &Resolutions, saved: &BTreeMap<String, SavedCustom>) -> Resolutions {
    let mut out = answered.clone();
    for (signature, s) in saved {
        out.answers
            .entry(signature.clone())
            .or_insert_with(|| Resolution::Custom {
                constraint: s.constraint.clone(),
            });
    }
    out
}

/// Reads one answer for `a`: exactly one of an option id, a custom value or "I don't know".
pub fn resolution(
    model: &SemanticModel,
    allowed: &AllowedValuesSnapshot,
    entity: Option<&str>,
    a: &Ambiguity,
    option_id: Option<&str>,
    custom: Option<&str>,
    dont_know: bool,
) -> Result<Resolution, OrchestratorError> {
    let given = usize::from(option_id.is_some()) + usize::from(custom.is_some()) + usize::from(dont_know);
    if given != 1 {
        return Err(OrchestratorError::bad(
            ErrorCode::InvalidAnswer,
            format!(
                "Answer \"{}\" with exactly one of: option_id, custom, dont_know.",
                a.question
            ),
        ));
    }
    if dont_know {
        return Ok(Resolution::DontKnow);
    }
    if let Some(id) = option_id {
        if a.option(id).is_none() {
            let ids: Vec<&str> = a.options.iter().map(|o| o.id.as_str()).collect();
            return Err(OrchestratorError::bad(
                ErrorCode::UnknownOption,
                format!(
                    "\"{id}\" is not an option of \"{}\". Choose one of: {}.",
                    a.question,
                    ids.join(", ")
                ),
            ));
        }
        return Ok(Resolution::Option { id: id.to_owned() });
    }
    let text = custom.unwrap_or_default();
    let constraint = custom_constraint(model, allowed, entity, &a.custom, text)
        .map_err(|m| OrchestratorError::bad(ErrorCode::InvalidCustomValue, m))?;
    Ok(Resolution::Custom { constraint })
}

/// What a "pick a value" answer may be, as (stored value, what people read): the
/// database's values (cached) with the model's labels where it has them, else the
/// model's own list (a static list is never in the cache).
pub fn pickable_values(
    model: &SemanticModel,
    allowed: &AllowedValuesSnapshot,
    attribute: &str,
) -> Vec<(String, String)> {
    let listed = model.allowed_values(attribute);
    let label = |v: &str| {
        listed
            .and_then(|l| l.label_for(&Value::Text(v.to_owned())))
            .unwrap_or(v)
            .to_owned()
    };
    match allowed.get(attribute) {
        Some(cached) if !cached.values.is_empty() => {
            cached.values.iter().map(|v| (v.clone(), label(v))).collect()
        }
        _ => listed
            .map(|l| {
                l.listed()
                    .iter()
                    .filter_map(|a| match &a.value {
                        Value::Text(t) => Some((t.clone(), label(t))),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// A custom value as a typed constraint, or what is wrong with it.
pub fn custom_constraint(
    model: &SemanticModel,
    allowed: &AllowedValuesSnapshot,
    entity: Option<&str>,
    kind: &CustomValue,
    text: &str,
) -> Result<Constraint, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("The custom value is empty. Type a value or pick one of the options.".into());
    }
    if text.chars().count() > 200 {
        return Err("That custom value is too long (200 characters at most).".into());
    }
    let free = |entity: &str| parse_custom_constraint(model, entity, text).map_err(|e| e.message);
    match kind {
        CustomValue::None => Err("This question takes one of its options, not a custom value.".into()),
        CustomValue::Number { attribute, op, unit } => {
            if let Some(value) = number(text, unit.as_deref()) {
                return Ok(Constraint::Compare {
                    attribute: attribute.clone(),
                    op: *op,
                    value,
                    unit: unit.clone(),
                });
            }
            let owner = attribute.split('.').next().unwrap_or_default();
            free(entity.unwrap_or(owner)).map_err(|m| {
                let unit = unit
                    .as_deref()
                    .map(|u| format!(" (in {})", unit_symbol(u)))
                    .unwrap_or_default();
                format!("\"{text}\" is not a number{unit}. {m}")
            })
        }
        CustomValue::DateRange { attribute } => date_range(attribute, text),
        CustomValue::AllowedValue { attribute } => {
            // The stored value or its label, as the picker shows it.
            let values = pickable_values(model, allowed, attribute);
            if let Some((v, _)) = values
                .iter()
                .find(|(v, label)| v.eq_ignore_ascii_case(text) || label.eq_ignore_ascii_case(text))
            {
                return Ok(Constraint::InSet {
                    attribute: attribute.clone(),
                    values: vec![Value::Text(v.clone())],
                });
            }
            let owner = attribute.split('.').next().unwrap_or_default();
            free(entity.unwrap_or(owner)).map_err(|m| {
                let some: Vec<&str> = values.iter().take(8).map(|(_, l)| l.as_str()).collect();
                if some.is_empty() {
                    m
                } else {
                    format!(
                        "\"{text}\" is not a known value. Known values include: {}.",
                        some.join(", ")
                    )
                }
            })
        }
        CustomValue::FreeConstraint { entity: e } => free(e),
    }
}

/// `15`, `15.5`, `15 cm2`, `15cm²`: the number, when the rest is the expected unit.
fn number(text: &str, unit: Option<&str>) -> Option<Value> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '-'))
        .map_or(t.len(), |(i, _)| i);
    let (num, rest) = t.split_at(end);
    let rest = rest.trim();
    if !rest.is_empty() {
        let u = unit?;
        if !(rest.eq_ignore_ascii_case(u) || rest == unit_symbol(u)) {
            return None;
        }
    }
    if let Ok(i) = num.parse::<i64>() {
        return Some(Value::Integer(i));
    }
    num.parse::<f64>().ok().filter(|f| f.is_finite()).map(Value::Real)
}

/// `2025-01-01..2025-06-30` or `2025-01-01 to 2025-06-30` (both days included).
fn date_range(attribute: &str, text: &str) -> Result<Constraint, String> {
    let bad = || format!("\"{text}\" is not a date range. Write it like 2025-01-01..2025-06-30.");
    let (a, b) = text
        .split_once("..")
        .or_else(|| text.split_once(" to "))
        .ok_or_else(bad)?;
    let parse = |s: &str| NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").map_err(|_| bad());
    let (start, end) = (parse(a)?, parse(b)?);
    if end < start {
        return Err(format!("The range ends ({end}) before it starts ({start})."));
    }
    Ok(Constraint::Between {
        attribute: attribute.to_owned(),
        min: Value::Text(start.to_string()),
        max: Value::Text(end.to_string()),
        unit: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_may_carry_the_questions_unit_and_nothing_else() {
        assert_eq!(number("15", Some("cm2")), Some(Value::Integer(15)));
        assert_eq!(number("15 cm2", Some("cm2")), Some(Value::Integer(15)));
        assert_eq!(number("15cm²", Some("cm2")), Some(Value::Integer(15)));
        assert_eq!(number("2.5", None), Some(Value::Real(2.5)));
        assert_eq!(number("15 kg", Some("cm2")), None);
        assert_eq!(number("big", Some("cm2")), None);
    }

    #[test]
    fn a_picked_value_may_be_a_stored_value_or_its_label_from_the_cache_or_the_models_list() {
        let model = SemanticModel::wound_care();
        let depth = CustomValue::AllowedValue {
            attribute: "wounds.depth".into(),
        };
        // A static list is never cached: the model's list (with its labels) is offered.
        let none = AllowedValuesSnapshot::empty();
        let offered = pickable_values(&model, &none, "wounds.depth");
        assert!(
            offered.contains(&("full_thickness".into(), "Full thickness".into())),
            "{offered:?}"
        );
        let in_set = |v: &str| Constraint::InSet {
            attribute: "wounds.depth".into(),
            values: vec![Value::Text(v.into())],
        };
        for typed in ["Full thickness", "full thickness", "full_thickness"] {
            assert_eq!(
                custom_constraint(&model, &none, Some("wounds"), &depth, typed),
                Ok(in_set("full_thickness")),
                "{typed}"
            );
        }
        let e = custom_constraint(&model, &none, Some("wounds"), &depth, "purple").unwrap_err();
        assert!(e.contains("Partial thickness"), "the error lists labels: {e}");

        // Cached database values come with the model's labels where it has them.
        let mut cached = AllowedValuesSnapshot::empty();
        cached.insert(
            "wounds.etiology",
            vec!["venous_leg_ulcer".into(), "other_kind".into()],
            false,
        );
        let offered = pickable_values(&model, &cached, "wounds.etiology");
        assert_eq!(
            offered,
            vec![
                ("venous_leg_ulcer".into(), "Venous leg ulcer".into()),
                ("other_kind".into(), "other_kind".into())
            ]
        );
    }

    #[test]
    fn date_ranges_are_read_and_backwards_ones_refused() {
        assert!(date_range("wounds.onset_date", "2025-01-01..2025-06-30").is_ok());
        assert!(date_range("wounds.onset_date", "2025-01-01 to 2025-06-30").is_ok());
        assert!(date_range("wounds.onset_date", "2025-06-30..2025-01-01").is_err());
        assert!(date_range("wounds.onset_date", "last spring").is_err());
    }
}
