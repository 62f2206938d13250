//! The model's proposals → typed pieces, checked like everything else: the model file's
//! own rules for constraints and plan changes (attributes exist and are reachable from
//! the question's entity, literals have the attribute's type and unit), values only
//! from the allowed values, never an identifying attribute, never text that looks like
//! SQL. A valid piece has confidence 0.75, an invalid one 0.3 (F4).

use super::card::identifying;
use super::reply::carries_sql;
use crate::engine::{AllowedValuesSnapshot, Resolution};
use crate::semantic::{CompareOp, Constraint, PlanChange, SemanticModel, Value};

/// Confidence of a proposed piece that passed every check (F4).
pub const VALID: f64 = 0.75;
/// Confidence of a proposed piece that failed a check (F4).
pub const INVALID: f64 = 0.3;

/// A proposal checked against the model: its typed resolution, or why it was refused.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub label: String,
    pub outcome: Result<Resolution, String>,
}

impl Checked {
    pub fn confidence(&self) -> f64 {
        if self.outcome.is_ok() { VALID } else { INVALID }
    }
}

/// Checks one proposal (a constraint or a change, with its label) for questions about `entity`.
pub fn check(
    model: &SemanticModel,
    allowed: &AllowedValuesSnapshot,
    entity: &str,
    label: &str,
    constraint: Option<&Constraint>,
    change: Option<&PlanChange>,
) -> Checked {
    let outcome = (|| {
        if carries_sql(&label) || constraint.is_some_and(carries_sql) || change.is_some_and(carries_sql) {
            return Err("it carried SQL text; discarded".to_owned());
        }
        let entities = [entity.to_owned()];
        match (constraint, change) {
            (Some(c), None) => {
                if let Some(a) = c.attributes().into_iter().find(|a| identifying(model, a)) {
                    return Err(format!("it reads an identifying column ({a})"));
                }
                model.check_constraint(c, &entities).map_err(|p| p.join("; "))?;
                allowed_values(model, allowed, c)?;
                Ok(Resolution::Custom {
                    constraint: c.clone(),
                })
            }
            (None, Some(ch)) => {
                model.check_change(ch, &entities).map_err(|p| p.join("; "))?;
                Ok(Resolution::Change { change: ch.clone() })
            }
            (Some(_), Some(_)) => Err("it gave both a constraint and a change".to_owned()),
            (None, None) => Err("it gave neither a constraint nor a change".to_owned()),
        }
    })();
    Checked {
        label: label.trim().to_owned(),
        outcome,
    }
}

/// Text values compared with `eq`/`ne`/`in_set` must be allowed values of their attribute
/// (the database's, or the model's own list) when the attribute has such a list.
fn allowed_values(
    model: &SemanticModel,
    allowed: &AllowedValuesSnapshot,
    c: &Constraint,
) -> Result<(), String> {
    let mut problem = None;
    c.visit(&mut |c| {
        let (attribute, values): (&str, Vec<&Value>) = match c {
            Constraint::InSet { attribute, values } => (attribute, values.iter().collect()),
            Constraint::Compare {
                attribute,
                op: CompareOp::Eq | CompareOp::Ne,
                value,
                ..
            } => (attribute, vec![value]),
            _ => return,
        };
        let mut known: Vec<String> = allowed
            .get(attribute)
            .map(|v| v.values.clone())
            .unwrap_or_default();
        if let Some(l) = model.allowed_values(attribute) {
            known.extend(l.listed().iter().map(|v| v.value.to_string()));
        }
        if known.is_empty() || allowed.get(attribute).is_some_and(|v| v.truncated) {
            return;
        }
        for v in values {
            if let Value::Text(t) = v
                && !known.iter().any(|k| k == t)
            {
                problem.get_or_insert_with(|| format!("\"{t}\" is not a known value of {attribute}"));
            }
        }
    });
    problem.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> (SemanticModel, AllowedValuesSnapshot) {
        let m = SemanticModel::wound_care();
        let s = AllowedValuesSnapshot::from_model_static(&m);
        (m, s)
    }

    fn parse(json: &str) -> Constraint {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_valid_constraint_is_075_and_an_unknown_column_03() {
        let (m, s) = model();
        let ok =
            parse(r#"{"kind":"compare","attribute":"wounds.latest_area","op":"gt","value":15,"unit":"cm2"}"#);
        let c = check(&m, &s, "wounds", "Latest area above 15 cm²", Some(&ok), None);
        assert_eq!(c.confidence(), VALID, "{:?}", c.outcome);
        let bad = parse(r#"{"kind":"compare","attribute":"wounds.stall_index","op":"gt","value":1}"#);
        let c = check(&m, &s, "wounds", "Stalled", Some(&bad), None);
        assert_eq!(c.confidence(), INVALID);
        assert!(c.outcome.unwrap_err().contains("stall_index"));
    }

    #[test]
    fn values_units_identifiers_and_sql_are_refused() {
        let (m, s) = model();
        let value = parse(r#"{"kind":"in_set","attribute":"wounds.etiology","values":["werewolf_bite"]}"#);
        assert!(check(&m, &s, "wounds", "x", Some(&value), None).outcome.is_err());
        let unit =
            parse(r#"{"kind":"compare","attribute":"wounds.latest_area","op":"gt","value":15,"unit":"kg"}"#);
        assert!(check(&m, &s, "wounds", "x", Some(&unit), None).outcome.is_err());
        let mrn = parse(r#"{"kind":"in_set","attribute":"patients.mrn","values":["CL0000001"]}"#);
        let e = check(&m, &s, "patients", "x", Some(&mrn), None)
            .outcome
            .unwrap_err();
        assert!(e.contains("identifying"), "{e}");
        let smuggled = parse(
            r#"{"kind":"in_set","attribute":"wounds.etiology","values":["x'; DROP TABLE wounds; --"]}"#,
        );
        let e = check(&m, &s, "wounds", "x", Some(&smuggled), None)
            .outcome
            .unwrap_err();
        assert!(e.contains("SQL"), "{e}");
        let label = parse(r#"{"kind":"not_null","attribute":"wounds.healed_date"}"#);
        let e = check(&m, &s, "wounds", "SELECT * FROM patients", Some(&label), None)
            .outcome
            .unwrap_err();
        assert!(e.contains("SQL"), "{e}");
    }
}
