//! Custom values typed in a clarification panel (F7): a free constraint such as
//! `area > 15`, `pain 7 or more` or `etiology venous leg ulcer`, read with the same
//! linker as questions and checked against the model. A bad value gets an error a person
//! can act on; nothing is guessed. Pure.

use crate::semantic::{AttributeType, CompareOp, Constraint, SemanticModel, Value};

use super::link::{self, Subject};
use super::plan_ops;
use super::reading::{Cmp, CmpSubject};
use super::time;
use super::tokenize::tokenize;
use super::vocab::{EngineIndex, Target, ValueLookup};

/// Why a custom value was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CustomValueError {
    /// What to tell the user.
    pub message: String,
}

fn err(message: impl Into<String>) -> CustomValueError {
    CustomValueError {
        message: message.into(),
    }
}

/// Reads one condition for rows of `entity` (`area > 15`, `pain 7 or more`, `stage 4`,
/// `diabetes`, `not smoker`).
pub fn parse_custom_constraint(
    model: &SemanticModel,
    entity: &str,
    text: &str,
) -> Result<Constraint, CustomValueError> {
    let example = "Try something like \"area > 15\" or \"pain 7 or more\".";
    if text.trim().is_empty() {
        return Err(err(format!("Please type a condition. {example}")));
    }
    if text.chars().count() > 200 {
        return Err(err("That condition is too long (200 characters at most)."));
    }
    if model.entity(entity).is_none() {
        return Err(err(format!("Unknown entity \"{entity}\".")));
    }
    let index = EngineIndex::for_model(model);
    let tokens = tokenize(text);
    let blocked: Vec<bool> = vec![false; tokens.len()];
    let values = ValueLookup::default();
    let mentions = link::link(&tokens, &index, &values, &blocked);
    let comparisons = link::comparisons(model, &tokens, &mentions, &blocked);
    if let Some(c) = comparisons.first() {
        let attribute = match &c.subject {
            Subject::Attribute(a) => a.clone(),
            Subject::ColumnTerm(t) => first_attribute_option(model, *t, entity).ok_or_else(|| {
                err(format!(
                    "\"{}\" is not something I can compare. {example}",
                    model.terms[*t].phrase
                ))
            })?,
            Subject::Size => "wounds.latest_area".into(),
            Subject::Implied(e) if e == "patients" => "patients.age".into(),
            Subject::Implied(_) | Subject::Related(_) => {
                return Err(err(format!(
                    "Please say what to compare, e.g. \"area > 15\". {example}"
                )));
            }
        };
        let attribute = match attribute.split_once('.') {
            Some(("assessments", _)) if matches!(entity, "wounds" | "patients") => {
                plan_ops::latest_of(model, &attribute).unwrap_or(attribute)
            }
            _ => attribute,
        };
        let ty = model
            .attribute_type(&attribute)
            .ok_or_else(|| err(format!("Unknown attribute \"{attribute}\".")))?;
        if !ty.is_ordered() {
            return Err(err(format!(
                "{} is not a number, so it cannot be compared with {}.",
                plan_ops::attribute_label(attribute.split('.').nth(1).unwrap_or(&attribute)),
                c.value
            )));
        }
        if model
            .join_path(entity, attribute.split('.').next().unwrap_or(""))
            .is_none()
        {
            return Err(err(format!("{attribute} is not related to {entity}.")));
        }
        if let (Some(u), Some(au)) = (
            c.unit.as_deref(),
            model.attribute(&attribute).and_then(|r| r.attribute.unit.clone()),
        ) && link::convert(1.0, u, &au).is_none()
        {
            return Err(err(format!(
                "The unit {u} does not fit {} (measured in {}).",
                attribute,
                crate::semantic::unit_symbol(&au)
            )));
        }
        let read = Cmp {
            subject: CmpSubject::Attribute(attribute.clone()),
            op: c.op,
            value: c.value,
            upper: c.upper,
            unit: c.unit.clone(),
            span: c.span,
            first: c.first,
            negated: false,
        };
        return Ok(plan_ops::comparison_constraint(model, &read, &attribute));
    }
    let negated = tokens
        .iter()
        .any(|t| matches!(t.text.as_str(), "not" | "no" | "non" | "without"));
    for m in &mentions {
        for e in &m.entries {
            match &e.target {
                Target::Value(a, v) => {
                    let c = Constraint::Compare {
                        attribute: a.clone(),
                        op: CompareOp::Eq,
                        value: v.clone(),
                        unit: None,
                    };
                    return Ok(plan_ops::negate(c, negated));
                }
                Target::Attribute(ei, ai) => {
                    let attr = &model.entities[*ei].attributes[*ai];
                    if attr.ty == AttributeType::Boolean {
                        let q = format!("{}.{}", model.entities[*ei].name, attr.name);
                        return Ok(Constraint::Compare {
                            attribute: q,
                            op: CompareOp::Eq,
                            value: Value::Bool(!negated),
                            unit: None,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    if !time::find_times(&tokens, chrono::NaiveDate::default()).is_empty() {
        return Err(err("Dates go in the date-range field."));
    }
    Err(err(format!(
        "I couldn't read a condition in \"{}\". {example}",
        text.trim()
    )))
}

/// Reads a clarification answer typed "in your own words" (F28) for rows of `entity`: a
/// time ("since March", "in the last 30 days", "before 2025-06-01") becomes a range on
/// the date the text names ("started since March") or the entity's default date; anything
/// else is read as a condition like [`parse_custom_constraint`] ("area over 15").
/// Returns the constraint with its readable form ("latest area > 15 cm²"), or a message
/// saying what can be read. Pure: `today` is a parameter.
pub fn read_own_words(
    model: &SemanticModel,
    entity: &str,
    text: &str,
    today: chrono::NaiveDate,
) -> Result<(Constraint, String), CustomValueError> {
    let tokens = tokenize(text);
    let times = time::find_times(&tokens, today);
    if let Some(t) = times.first().filter(|t| !t.all_time) {
        let dimension = tokens
            .iter()
            .find_map(|tok| model.find_time_dimension(&tok.text))
            .filter(|d| {
                model
                    .join_path(entity, d.attribute.split('.').next().unwrap_or(""))
                    .is_some()
            })
            .or_else(|| model.default_time_dimension(entity));
        let Some(d) = dimension else {
            return Err(err(format!(
                "{entity} have no date to read \"{}\" against. {OWN_WORDS_HINT}",
                text.trim()
            )));
        };
        let last = t.end.pred_opt().unwrap_or(t.end).max(t.start);
        let c = Constraint::Between {
            attribute: d.attribute.clone(),
            min: Value::Text(t.start.to_string()),
            max: Value::Text(last.to_string()),
            unit: None,
        };
        return Ok((c, format!("{} {}", d.label, t.label)));
    }
    match parse_custom_constraint(model, entity, text) {
        Ok(c) => {
            let label = super::explain::describe(model, entity, &c);
            Ok((c, label))
        }
        Err(e) if e.message.starts_with("Dates go") => Err(err(format!(
            "I couldn't read a date in \"{}\". {OWN_WORDS_HINT}",
            text.trim()
        ))),
        Err(e) => Err(err(format!("{} {OWN_WORDS_HINT}", e.message))),
    }
}

/// What Clarion's own reader accepts in a free-text answer (said with every refusal).
pub const OWN_WORDS_HINT: &str = "I can read a condition such as \"area over 15\", \"pain 7 or more\" or \"venous leg ulcer\", or a time such as \"since March\" or \"in the last 30 days\".";

fn first_attribute_option(model: &SemanticModel, term: usize, entity: &str) -> Option<String> {
    let t = &model.terms[term];
    let attrs: Vec<&str> = t
        .options
        .iter()
        .filter_map(|o| match &o.change {
            Some(crate::semantic::PlanChange::ChooseAttribute { attribute }) => Some(attribute.as_str()),
            _ => None,
        })
        .collect();
    attrs
        .iter()
        .find(|a| a.starts_with(&format!("{entity}.")))
        .or(attrs.first())
        .map(|a| (*a).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_conditions_become_model_checked_constraints() {
        let m = SemanticModel::wound_care();
        let ok = [
            ("area > 15", "wounds.latest_area"),
            ("pain 7 or more", "wounds.latest_pain"),
            ("bmi over 30", "patients.bmi"),
            ("diabetes", "patients.diabetes"),
            ("venous leg ulcer", "wounds.etiology"),
        ];
        for (text, attr) in ok {
            let c = parse_custom_constraint(&m, "wounds", text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert!(c.attributes().contains(&attr), "{text}: {c:?}");
        }
    }

    #[test]
    fn bad_custom_values_get_a_message_a_person_can_act_on() {
        let m = SemanticModel::wound_care();
        for text in ["", "purple elephants", "area > 15 kg/m2", "etiology > 4"] {
            let e = parse_custom_constraint(&m, "wounds", text).expect_err(text);
            assert!(!e.message.is_empty());
        }
    }

    #[test]
    fn own_words_read_conditions_and_times_and_say_what_they_accept() {
        let m = SemanticModel::wound_care();
        let today = chrono::NaiveDate::from_ymd_opt(2026, 5, 20).unwrap();
        let (c, label) = read_own_words(&m, "wounds", "area over 15", today).unwrap();
        assert!(c.attributes().contains(&"wounds.latest_area"), "{c:?}");
        assert!(label.contains("15"), "{label}");
        let (c, label) = read_own_words(&m, "wounds", "since March", today).unwrap();
        match &c {
            Constraint::Between { min, .. } => assert_eq!(min, &Value::Text("2026-03-01".into())),
            other => panic!("{other:?}"),
        }
        assert!(label.to_lowercase().contains("march"), "{label}");
        let e = read_own_words(&m, "wounds", "the ones that worry me", today).unwrap_err();
        assert!(e.message.contains("since March"), "{e}");
    }
}
