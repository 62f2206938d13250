//! Loading a semantic model from TOML: parse, then validate (rules in `validate.rs`).
//!
//! Every failure names the file, the entry and the problem, e.g.
//! `wound_care.toml: term "large", option "gt25": unknown attribute "wounds.size"`,
//! so a bad model stops the server at startup with a message an admin can act on.
//! The only I/O here is reading the model file in [`SemanticModel::from_path`]; the
//! shipped wound-care model is compiled in.

use std::fmt;
use std::path::Path;

use super::model::SemanticModel;
use super::schema::SchemaInfo;

/// The shipped wound-care model (`server/models/wound_care.toml`), compiled in.
pub const WOUND_CARE_TOML: &str = include_str!("../../models/wound_care.toml");

/// The file name used in messages about the compiled-in model.
pub const WOUND_CARE_FILE: &str = "wound_care.toml";

/// One thing wrong with a model: the entry it concerns and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The entry, e.g. `term "large", option "gt25"`.
    pub entry: String,
    /// The problem, e.g. `unknown attribute "wounds.size"`.
    pub message: String,
}

/// Why a model could not be loaded. Belongs to the semantic layer; startup turns it
/// into a fatal error, the CLI prints it.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be read.
    #[error("{file}: cannot read the model file: {source}")]
    Io {
        /// The path as given.
        file: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, or does not fit the format (unknown key, wrong type).
    #[error("{file}: line {line}, column {column}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The file parses but the model is inconsistent; every problem found is listed.
    #[error("{}", DisplayProblems(file, problems))]
    Invalid {
        /// The file.
        file: String,
        /// All problems, in file order.
        problems: Vec<Problem>,
    },
}

impl ModelError {
    /// The validation problems (empty for I/O and syntax errors).
    pub fn problems(&self) -> &[Problem] {
        match self {
            ModelError::Invalid { problems, .. } => problems,
            _ => &[],
        }
    }
}

struct DisplayProblems<'a>(&'a String, &'a Vec<Problem>);

impl fmt::Display for DisplayProblems<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.1.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{}: {}: {}", self.0, p.entry, p.message)?;
        }
        Ok(())
    }
}

impl SemanticModel {
    /// Parses and validates a model (no schema check). `file_name` is used in messages.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<SemanticModel, ModelError> {
        SemanticModel::from_toml_str_with_schema(text, file_name, None)
    }

    /// Parses and validates a model; with a schema, tables and columns are checked too.
    pub fn from_toml_str_with_schema(
        text: &str,
        file_name: &str,
        schema: Option<&SchemaInfo>,
    ) -> Result<SemanticModel, ModelError> {
        let mut model = SemanticModel::parse_toml(text, file_name)?;
        model.validate(file_name, schema)?;
        if let Some(schema) = schema {
            model.mark_not_null(schema);
        }
        Ok(model)
    }

    /// Marks the column attributes the schema declares `NOT NULL`.
    pub fn mark_not_null(&mut self, schema: &SchemaInfo) {
        for e in &mut self.entities {
            let Some(table) = schema.tables.get(&e.table) else {
                continue;
            };
            for a in &mut e.attributes {
                if let Some(col) = a.column.as_deref().and_then(|c| table.columns.get(c)) {
                    a.not_null |= !col.nullable;
                }
            }
        }
    }

    /// Parses a model without validating it (for tools that repair or merge models).
    pub fn parse_toml(text: &str, file_name: &str) -> Result<SemanticModel, ModelError> {
        toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |span| line_column(text, span.start));
            ModelError::Syntax {
                file: file_name.to_owned(),
                line,
                column,
                message: e.message().to_owned(),
            }
        })
    }

    /// Reads, parses and validates a model file; messages name the path as given.
    pub fn from_path(path: &Path, schema: Option<&SchemaInfo>) -> Result<SemanticModel, ModelError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            file: file.clone(),
            source,
        })?;
        SemanticModel::from_toml_str_with_schema(&text, &file, schema)
    }

    /// The shipped wound-care model, validated against the demo schema.
    ///
    /// # Panics
    /// Only if the compiled-in file is invalid, which the test suite rules out.
    pub fn wound_care() -> SemanticModel {
        let schema = SchemaInfo::wound_care_demo();
        SemanticModel::from_toml_str_with_schema(WOUND_CARE_TOML, WOUND_CARE_FILE, Some(&schema))
            .unwrap_or_else(|e| panic!("the compiled-in model is invalid:\n{e}"))
    }

    /// The shipped wound-care model, loaded once per process and shared (tests and
    /// benchmarks call this thousands of times; loading takes milliseconds).
    pub fn wound_care_shared() -> &'static SemanticModel {
        static MODEL: std::sync::OnceLock<SemanticModel> = std::sync::OnceLock::new();
        MODEL.get_or_init(SemanticModel::wound_care)
    }

    /// The model as TOML (what `introspect` writes).
    pub fn to_toml_string(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(self)
    }
}

/// 1-based line and column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::model::{Constraint, PlanChange, TermKind};
    use std::collections::BTreeMap;

    #[test]
    fn the_shipped_model_loads_and_validates_against_the_demo_schema() {
        let schema = SchemaInfo::wound_care_demo();
        let model = SemanticModel::from_toml_str_with_schema(WOUND_CARE_TOML, WOUND_CARE_FILE, Some(&schema))
            .unwrap_or_else(|e| panic!("{e}"));
        let entities: Vec<&str> = model.entities.iter().map(|e| e.name.as_str()).collect();
        for e in ["patients", "clinics", "clinicians", "wounds", "assessments"] {
            assert!(entities.contains(&e), "missing entity {e}");
        }
    }

    #[test]
    fn the_shipped_model_has_at_least_fifty_terms_each_with_two_to_five_options_and_one_default() {
        let model = SemanticModel::wound_care();
        assert!(model.terms.len() >= 50, "only {} terms", model.terms.len());
        for t in &model.terms {
            assert!(
                (2..=5).contains(&t.options.len()),
                "term {} has {} options",
                t.id,
                t.options.len()
            );
            assert_eq!(
                t.options.iter().filter(|o| o.default).count(),
                1,
                "term {} defaults",
                t.id
            );
            assert!(!t.question.trim().is_empty(), "term {} has no question", t.id);
        }
    }

    #[test]
    fn every_column_of_the_demo_schema_is_an_attribute_of_the_shipped_model() {
        let model = SemanticModel::wound_care();
        let schema = SchemaInfo::wound_care_demo();
        for (table, info) in &schema.tables {
            let entity = model
                .entities
                .iter()
                .find(|e| &e.table == table)
                .expect("entity for table");
            for column in info.columns.keys() {
                assert!(
                    entity
                        .attributes
                        .iter()
                        .any(|a| a.column.as_deref() == Some(column.as_str())),
                    "{table}.{column} has no attribute"
                );
            }
        }
    }

    #[test]
    fn the_shipped_model_has_the_column_ambiguities_of_the_demo_schema() {
        let model = SemanticModel::wound_care();
        let chosen = |phrase: &str| -> Vec<String> {
            let term = model
                .find_term(phrase)
                .unwrap_or_else(|| panic!("no term for {phrase}"));
            assert_eq!(term.kind, TermKind::Column);
            term.options
                .iter()
                .map(|o| match &o.change {
                    Some(PlanChange::ChooseAttribute { attribute }) => attribute.clone(),
                    other => panic!("{phrase}: option {} is {other:?}", o.id),
                })
                .collect()
        };
        let date = chosen("date");
        for a in [
            "wounds.onset_date",
            "assessments.assessed_on",
            "wounds.healed_date",
        ] {
            assert!(date.contains(&a.to_owned()), "date lacks {a}");
        }
        let size = chosen("size");
        for a in ["wounds.latest_area", "wounds.initial_area", "wounds.latest_depth"] {
            assert!(size.contains(&a.to_owned()), "size lacks {a}");
        }
        let clinic = chosen("clinic");
        assert!(
            clinic.contains(&"wounds.clinic_id".to_owned())
                && clinic.contains(&"patients.clinic_id".to_owned())
        );
    }

    #[test]
    fn the_shipped_model_knows_clinical_synonyms() {
        let model = SemanticModel::wound_care();
        for (word, entity) in [
            ("ulcers", "wounds"),
            ("sore", "wounds"),
            ("visit", "assessments"),
            ("site", "clinics"),
        ] {
            assert_eq!(
                model.find_entity(word).map(|e| e.name.as_str()),
                Some(entity),
                "{word}"
            );
        }
        let etiology = model.allowed_values("wounds.etiology").unwrap();
        let value_of = |word: &str| {
            etiology
                .listed()
                .iter()
                .find(|v| v.synonyms.iter().any(|s| s.eq_ignore_ascii_case(word)))
                .and_then(|v| v.value.as_str().map(str::to_owned))
        };
        assert_eq!(value_of("DFU").as_deref(), Some("diabetic_foot_ulcer"));
        assert_eq!(value_of("VLU").as_deref(), Some("venous_leg_ulcer"));
        assert_eq!(value_of("bed sore").as_deref(), Some("pressure_injury"));
        assert_eq!(
            model.find_term("Hard-to-heal").map(|t| t.id.as_str()),
            Some("hard_to_heal")
        );
    }

    #[test]
    fn critical_fields_of_the_shipped_model_carry_a_weight_below_one() {
        let model = SemanticModel::wound_care();
        for a in [
            "wounds.depth",
            "wounds.stage",
            "wounds.infected",
            "assessments.infection_signs",
        ] {
            let w = model.attribute(a).unwrap().attribute.weight;
            assert!(w < 1.0 && w > 0.0, "{a} weight {w}");
        }
    }

    #[test]
    fn the_shipped_model_serialises_to_toml_and_reads_back_unchanged() {
        let model = SemanticModel::wound_care();
        let text = model.to_toml_string().unwrap();
        let again = SemanticModel::from_toml_str(&text, "roundtrip.toml").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(model, again);
    }

    #[test]
    fn term_kinds_cover_the_ambiguity_types_of_the_product_contract() {
        let model = SemanticModel::wound_care();
        let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
        for t in &model.terms {
            *by_kind.entry(format!("{:?}", t.kind)).or_default() += 1;
        }
        for kind in [
            "Size",
            "Severity",
            "Time",
            "Trend",
            "Threshold",
            "Frequency",
            "Column",
            "Aggregation",
        ] {
            assert!(by_kind.contains_key(kind), "no {kind} term: {by_kind:?}");
        }
    }

    #[test]
    fn the_area_reduction_predictor_is_a_typed_change_constraint() {
        let model = SemanticModel::wound_care();
        let term = model.find_term("doing well").unwrap();
        let default = term.default_option().unwrap();
        let mut found = false;
        default.constraint.as_ref().unwrap().visit(&mut |c| {
            if let Constraint::Change {
                attribute,
                per,
                over,
                pct,
                ..
            } = c
            {
                found = attribute == "assessments.area"
                    && per == "wounds"
                    && over.approx_days() == 28
                    && *pct == -40.0;
            }
        });
        assert!(found, "{default:?}");
    }

    #[test]
    fn not_null_columns_are_marked_from_the_schema() {
        let m = SemanticModel::wound_care();
        let attr = |q: &str| m.attribute(q).unwrap().attribute.not_null;
        assert!(attr("assessments.assessed_on"));
        assert!(attr("wounds.onset_date"));
        assert!(
            !attr("wounds.healed_date"),
            "healed_date is NULL while a wound is open"
        );
        // derived attributes are never marked
        assert!(!attr("wounds.latest_area"));
        // without a schema nothing is assumed
        let bare = SemanticModel::from_toml_str(WOUND_CARE_TOML, WOUND_CARE_FILE).unwrap();
        assert!(
            !bare
                .attribute("assessments.assessed_on")
                .unwrap()
                .attribute
                .not_null
        );
    }

    #[test]
    fn the_shared_model_is_loaded_once_and_equals_a_fresh_load() {
        let a = SemanticModel::wound_care_shared();
        assert!(std::ptr::eq(a, SemanticModel::wound_care_shared()));
        assert_eq!(*a, SemanticModel::wound_care());
    }

    #[test]
    fn a_syntax_error_names_the_file_line_and_column() {
        let err =
            SemanticModel::from_toml_str("[model]\nname = \"x\"\nversion = = 1\n", "m.toml").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("m.toml: line 3, column"), "{text}");
    }

    #[test]
    fn an_unknown_key_is_a_syntax_error_naming_the_key() {
        let err =
            SemanticModel::from_toml_str("[model]\nname = \"x\"\nnmae = \"y\"\n", "m.toml").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("m.toml: line 3") && text.contains("nmae"), "{text}");
    }

    #[test]
    fn a_missing_file_is_reported_with_its_path() {
        let err = SemanticModel::from_path(Path::new("/nonexistent/model.toml"), None).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/model.toml: cannot read"),
            "{err}"
        );
    }

    #[test]
    fn a_model_file_on_disk_loads_with_a_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wound_care.toml");
        std::fs::write(&path, WOUND_CARE_TOML).unwrap();
        let model = SemanticModel::from_path(&path, Some(&SchemaInfo::wound_care_demo())).unwrap();
        assert_eq!(model, SemanticModel::wound_care());
    }
}
