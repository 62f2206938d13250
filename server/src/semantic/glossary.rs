//! The model's vocabulary as the Glossary page shows it (F20).
//!
//! Pure conversion from [`SemanticModel`] to the shared protocol type; no I/O.

use super::model::{AllowedValues, AttributeRole, AttributeType, SemanticModel, Value, unit_symbol};
use app::protocol::{Glossary, GlossaryAttribute, GlossaryEntity, GlossaryOption, GlossaryTerm};

/// Builds the glossary: terms alphabetical by phrase, entities in model order,
/// keys and foreign keys left out (they mean nothing to a clinician).
pub fn glossary(model: &SemanticModel) -> Glossary {
    let label_of = |entity: &str| {
        model
            .entity(entity)
            .map(|e| e.label.clone())
            .unwrap_or_else(|| entity.to_string())
    };
    let mut terms: Vec<GlossaryTerm> = model
        .terms
        .iter()
        .map(|t| GlossaryTerm {
            id: t.id.clone(),
            phrase: t.phrase.clone(),
            variants: t.variants.clone(),
            kind: serde_json::to_value(t.kind)
                .ok()
                .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
                .unwrap_or_default(),
            applies_to: t.applies_to.iter().map(|e| label_of(e)).collect(),
            question: t.question.clone(),
            description: match &t.standard {
                Some(standard) => format!(
                    "{}{}The default follows a published definition ({standard}), so it is applied and shown as an assumption you can change rather than asked.",
                    t.description,
                    if t.description.is_empty() { "" } else { " " }
                ),
                None => t.description.clone(),
            },
            options: t
                .options
                .iter()
                .map(|o| GlossaryOption {
                    label: o.label.clone(),
                    description: o.description.clone(),
                    default: o.default,
                })
                .collect(),
        })
        .collect();
    terms.sort_by_key(|t| t.phrase.to_lowercase());

    let entities = model
        .entities
        .iter()
        .map(|e| GlossaryEntity {
            name: e.name.clone(),
            label: e.label.clone(),
            description: e.description.clone(),
            synonyms: e.synonyms.clone(),
            attributes: e
                .attributes
                .iter()
                .filter(|a| !matches!(a.role, AttributeRole::Key | AttributeRole::ForeignKey))
                .map(|a| GlossaryAttribute {
                    name: a.name.replace('_', " "),
                    description: a.description.clone(),
                    kind: match a.ty {
                        AttributeType::Text => "text",
                        AttributeType::Integer | AttributeType::Real => "number",
                        AttributeType::Boolean => "yes/no",
                        AttributeType::Date => "date",
                    }
                    .to_string(),
                    unit: a.unit.as_deref().map(unit_symbol).unwrap_or_default().to_string(),
                    synonyms: a.synonyms.clone(),
                    values: a
                        .allowed
                        .as_ref()
                        .map(AllowedValues::listed)
                        .unwrap_or_default()
                        .iter()
                        .map(|v| {
                            if v.label.is_empty() {
                                match &v.value {
                                    Value::Text(s) => s.replace('_', " "),
                                    other => other.to_string(),
                                }
                            } else {
                                v.label.clone()
                            }
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    Glossary {
        terms,
        entities,
        verified: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_glossary_lists_every_term_with_exactly_one_default_option() {
        let model = SemanticModel::wound_care_shared();
        let g = glossary(model);
        assert_eq!(g.terms.len(), model.terms.len());
        assert!(g.terms.len() >= 50);
        for t in &g.terms {
            assert_eq!(t.options.iter().filter(|o| o.default).count(), 1, "{}", t.id);
            assert!(!t.applies_to.is_empty(), "{}", t.id);
        }
        let phrases: Vec<_> = g.terms.iter().map(|t| t.phrase.to_lowercase()).collect();
        let mut sorted = phrases.clone();
        sorted.sort();
        assert_eq!(phrases, sorted, "alphabetical");
    }

    #[test]
    fn the_glossary_hides_keys_and_shows_units_and_value_labels() {
        let g = glossary(SemanticModel::wound_care_shared());
        let wounds = g.entities.iter().find(|e| e.name == "wounds").expect("wounds");
        assert!(
            wounds
                .attributes
                .iter()
                .all(|a| a.name != "id" && a.name != "patient id")
        );
        let area = wounds.attributes.iter().find(|a| a.unit == "cm²");
        assert!(area.is_some(), "some wound attribute is measured in cm²");
        let etiology = wounds
            .attributes
            .iter()
            .find(|a| a.name == "etiology")
            .expect("etiology");
        assert!(etiology.values.len() >= 8, "{:?}", etiology.values);
        let large = g.terms.iter().find(|t| t.phrase == "large").expect("large");
        assert_eq!(large.kind, "size");
        assert!(large.applies_to.contains(&"Wound".to_string()));
    }
}
