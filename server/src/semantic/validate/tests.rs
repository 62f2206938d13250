//! One test (or table) per validation rule, over a small valid model that each test
//! breaks in one place.

use super::*;
use crate::semantic::model::{AllowedValue, Join, Term, TermOption};

const MINI: &str = r#"
[model]
name = "mini"

[[entities]]
name = "patients"
table = "patients"
key = "id"
label = "Patient"
synonyms = ["patient", "people"]

[[entities.attributes]]
name = "id"
column = "id"
type = "integer"
role = "key"

[[entities.attributes]]
name = "birth_date"
column = "birth_date"
type = "date"

[[entities.attributes]]
name = "diabetes"
column = "diabetes"
type = "boolean"

[[entities.attributes]]
name = "age"
type = "integer"
unit = "years"
derived = { op = "years_between", from = "birth_date", to = "today" }

[[entities]]
name = "wounds"
table = "wounds"
key = "id"
label = "Wound"
synonyms = ["wound", "ulcer"]
default_time_dimension = "onset"

[[entities.attributes]]
name = "id"
column = "id"
type = "integer"
role = "key"

[[entities.attributes]]
name = "patient_id"
column = "patient_id"
type = "integer"
role = "foreign_key"

[[entities.attributes]]
name = "etiology"
column = "etiology"
type = "text"
allowed = { source = "static", values = [
  { value = "pressure_injury", synonyms = ["bed sore"] },
  { value = "diabetic_foot_ulcer", synonyms = ["DFU"] },
] }

[[entities.attributes]]
name = "depth"
column = "depth"
type = "text"
weight = 0.8
allowed = { source = "static", values = [{ value = "superficial" }, { value = "full_thickness" }] }

[[entities.attributes]]
name = "onset_date"
column = "onset_date"
type = "date"

[[entities.attributes]]
name = "healed_date"
column = "healed_date"
type = "date"

[[entities.attributes]]
name = "initial_area"
column = "initial_area_cm2"
type = "real"
unit = "cm2"

[[entities.attributes]]
name = "days_open"
type = "integer"
unit = "days"
derived = { op = "days_between", from = "onset_date", to = "healed_date", if_null = "today" }

[[entities.attributes]]
name = "latest_area"
type = "real"
unit = "cm2"
derived = { op = "latest", attribute = "assessments.area" }

[[entities]]
name = "assessments"
table = "assessments"
key = "id"
label = "Assessment"
synonyms = ["visit"]
default_time_dimension = "assessed"

[[entities.attributes]]
name = "id"
column = "id"
type = "integer"
role = "key"

[[entities.attributes]]
name = "wound_id"
column = "wound_id"
type = "integer"
role = "foreign_key"

[[entities.attributes]]
name = "assessed_on"
column = "assessed_on"
type = "date"

[[entities.attributes]]
name = "area"
column = "area_cm2"
type = "real"
unit = "cm2"

[[entities.attributes]]
name = "exudate"
column = "exudate"
type = "text"
allowed = { source = "static", values = [{ value = "low" }, { value = "high" }] }

[[joins]]
from = "wounds.patient_id"
to = "patients.id"

[[joins]]
from = "assessments.wound_id"
to = "wounds.id"

[[time_dimensions]]
name = "onset"
attribute = "wounds.onset_date"
label = "Onset"

[[time_dimensions]]
name = "assessed"
attribute = "assessments.assessed_on"
label = "Assessment date"
grains = ["week", "month"]

[[measures]]
name = "wound_count"
label = "Number of wounds"
entity = "wounds"
agg = "count"

[[measures]]
name = "avg_area"
label = "Average area"
entity = "assessments"
agg = "avg"
attribute = "assessments.area"

[[measures]]
name = "healing_rate"
label = "Healing rate"
entity = "wounds"
agg = "share"
condition = { kind = "not_null", attribute = "wounds.healed_date" }

[[areas]]
name = "wounds"
label = "Wounds"
entities = ["wounds"]
attributes = ["wounds.etiology"]
measures = ["wound_count"]
related = ["patients"]
suggestions = [{ text = "Break down by etiology", kind = "breakdown" }]

[[areas]]
name = "patients"
label = "Patients"
entities = ["patients"]

[[terms]]
id = "large"
phrase = "large"
variants = ["big"]
kind = "size"
applies_to = ["wounds", "assessments"]
question = "What counts as a large wound?"

[[terms.options]]
id = "gt10"
label = "Larger than 10 cm²"
default = true
constraint = { kind = "compare", attribute = "wounds.latest_area", op = "gt", value = 10, unit = "cm2" }

[[terms.options]]
id = "gt25"
label = "Larger than 25 cm²"
constraint = { kind = "compare", attribute = "wounds.latest_area", op = "gt", value = 25.0, unit = "cm2" }

[[terms]]
id = "recent"
phrase = "recent"
kind = "time"
applies_to = ["wounds"]
question = "How recent?"

[[terms.options]]
id = "d30"
label = "Last 30 days"
default = true
constraint = { kind = "time_window", last = { n = 30, unit = "days" } }

[[terms.options]]
id = "d90"
label = "Last 90 days"
constraint = { kind = "time_window", dimension = "assessed", last = { n = 90, unit = "days" } }
change = { kind = "set_grain", grain = "week", dimension = "assessed" }

[[terms]]
id = "date"
phrase = "date"
kind = "column"
applies_to = ["wounds"]
question = "Which date?"

[[terms.options]]
id = "onset"
label = "Onset"
default = true
change = { kind = "choose_attribute", attribute = "wounds.onset_date" }

[[terms.options]]
id = "assessed"
label = "Assessment date"
change = { kind = "choose_attribute", attribute = "assessments.assessed_on" }
"#;

fn base() -> SemanticModel {
    SemanticModel::parse_toml(MINI, "mini.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// The problem lines after `mutate`, validated against the demo schema.
fn problems_after(mutate: impl FnOnce(&mut SemanticModel)) -> Vec<String> {
    problems_with(Some(&SchemaInfo::wound_care_demo()), mutate)
}

fn problems_with(schema: Option<&SchemaInfo>, mutate: impl FnOnce(&mut SemanticModel)) -> Vec<String> {
    let mut m = base();
    mutate(&mut m);
    match m.validate("mini.toml", schema) {
        Ok(()) => Vec::new(),
        Err(e) => e.to_string().lines().map(str::to_owned).collect(),
    }
}

#[track_caller]
fn assert_rejected(mutate: impl FnOnce(&mut SemanticModel), expected: &str) {
    let problems = problems_after(mutate);
    assert!(
        problems.iter().any(|p| p.contains(expected)),
        "expected {expected:?} among {problems:#?}"
    );
}

/// One way to change the fixture, as a table row can hold it.
#[derive(Clone, Copy)]
enum Edit {
    /// Any change to the model.
    Model(fn(&mut SemanticModel)),
    /// [`with_constraint`]: the constraint of option `gt25` of term `large`.
    Constrain(&'static str),
    /// [`with_change`]: option `gt25` of term `large` becomes this plan change.
    Change(&'static str),
}
use Edit::{Change, Constrain, Model};

impl Edit {
    fn apply(self, m: &mut SemanticModel) {
        match self {
            Model(mutate) => mutate(m),
            Constrain(inline) => with_constraint(inline)(m),
            Change(inline) => with_change(inline)(m),
        }
    }
}

/// A table row: case name, the edit, and a fragment of the problem it must cause.
type Rejected = (&'static str, Edit, &'static str);

/// Validates each case's edit and fails naming every case whose outcome was not the
/// expected one: a problem containing the fragment, or with `None`, no problem at all.
#[track_caller]
fn assert_each<'a>(cases: impl ExactSizeIterator<Item = (&'a str, Edit, Option<&'a str>)>) {
    let total = cases.len();
    let failed: Vec<String> = cases
        .filter_map(|(name, edit, expected)| {
            let outcome = std::panic::catch_unwind(|| problems_after(|m| edit.apply(m)));
            match (outcome, expected) {
                (Ok(problems), None) if problems.is_empty() => None,
                (Ok(problems), Some(e)) if problems.iter().any(|p| p.contains(e)) => None,
                (Ok(problems), None) => Some(format!("{name}: expected no problems, got {problems:#?}")),
                (Ok(problems), Some(e)) => Some(format!("{name}: expected {e:?} among {problems:#?}")),
                (Err(_), _) => Some(format!("{name}: panicked (see above)")),
            }
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {total} cases failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[track_caller]
fn assert_each_rejected(cases: &[Rejected]) {
    assert_each(
        cases
            .iter()
            .map(|&(name, edit, expected)| (name, edit, Some(expected))),
    );
}

#[track_caller]
fn assert_each_accepted(cases: &[(&'static str, Edit)]) {
    assert_each(cases.iter().map(|&(name, edit)| (name, edit, None)));
}

fn term<'a>(m: &'a mut SemanticModel, id: &str) -> &'a mut Term {
    m.terms.iter_mut().find(|t| t.id == id).unwrap()
}

fn attr<'a>(m: &'a mut SemanticModel, qualified: &str) -> &'a mut Attribute {
    let (e, a) = split_qualified(qualified).unwrap();
    let entity = m.entities.iter_mut().find(|x| x.name == e).unwrap();
    entity.attributes.iter_mut().find(|x| x.name == a).unwrap()
}

fn entity<'a>(m: &'a mut SemanticModel, name: &str) -> &'a mut Entity {
    m.entities.iter_mut().find(|x| x.name == name).unwrap()
}

/// A constraint written the way the file writes it.
fn c(inline: &str) -> Constraint {
    #[derive(serde::Deserialize)]
    struct W {
        c: Constraint,
    }
    toml::from_str::<W>(&format!("c = {inline}"))
        .unwrap_or_else(|e| panic!("{inline}: {e}"))
        .c
}

/// A plan change written the way the file writes it.
fn ch(inline: &str) -> PlanChange {
    #[derive(serde::Deserialize)]
    struct W {
        c: PlanChange,
    }
    toml::from_str::<W>(&format!("c = {inline}"))
        .unwrap_or_else(|e| panic!("{inline}: {e}"))
        .c
}

/// Sets the constraint of option `gt25` of term `large` (applies to wounds, assessments).
fn with_constraint(inline: &str) -> impl FnOnce(&mut SemanticModel) {
    let constraint = c(inline);
    move |m| term(m, "large").options[1].constraint = Some(constraint)
}

fn with_change(inline: &str) -> impl FnOnce(&mut SemanticModel) {
    let change = ch(inline);
    move |m| {
        let o = &mut term(m, "large").options[1];
        o.constraint = None;
        o.change = Some(change);
    }
}

fn option(id: &str, default: bool) -> TermOption {
    TermOption {
        id: id.to_owned(),
        label: id.to_owned(),
        description: String::new(),
        default,
        constraint: Some(c(r#"{ kind = "is_null", attribute = "wounds.healed_date" }"#)),
        change: None,
        when: None,
    }
}

#[test]
fn the_minimal_fixture_is_valid_with_and_without_a_schema() {
    assert_eq!(problems_with(None, |_| {}), Vec::<String>::new());
    assert_eq!(problems_after(|_| {}), Vec::<String>::new());
}

#[test]
fn variants_the_rules_allow_are_accepted() {
    assert_each_accepted(&[
        (
            "a second join path",
            Model(|m| {
                m.joins.push(Join {
                    from: "assessments.wound_id".into(),
                    to: "patients.id".into(),
                    description: "odd".into(),
                })
            }),
        ),
        (
            "an integer literal for a real attribute",
            Constrain(r#"{ kind = "compare", attribute = "wounds.latest_area", op = "gt", value = 10 }"#),
        ),
        (
            "a whole real number for an integer attribute",
            Constrain(r#"{ kind = "compare", attribute = "wounds.days_open", op = "gt", value = 90.0 }"#),
        ),
        (
            "an ISO date for a date attribute",
            Constrain(
                r#"{ kind = "compare", attribute = "wounds.onset_date", op = "gte", value = "2024-01-31" }"#,
            ),
        ),
        (
            "a boolean compared with ne",
            Constrain(r#"{ kind = "compare", attribute = "patients.diabetes", op = "ne", value = false }"#),
        ),
        (
            "database allowed values with nothing known yet",
            Model(|m| attr(m, "wounds.depth").allowed = Some(AllowedValues::Database { known: vec![] })),
        ),
        (
            "between two ordered dates",
            Constrain(
                r#"{ kind = "between", attribute = "wounds.onset_date", min = "2024-01-01", max = "2024-12-31" }"#,
            ),
        ),
        (
            "change of a numeric attribute of dated rows",
            Constrain(
                r#"{ kind = "change", attribute = "assessments.area", per = "wounds", over = { n = 4, unit = "weeks" }, op = "lte", pct = -40 }"#,
            ),
        ),
        (
            "related_count of another reachable dated entity",
            Model(|m| {
                term(m, "large").applies_to = vec!["patients".into()];
                term(m, "large").options[0].constraint = None;
                term(m, "large").options[0].change = Some(ch(r#"{ kind = "set_limit", n = 3 }"#));
                term(m, "large").options[1].constraint = Some(c(
                    r#"{ kind = "related_count", related = "assessments", op = "gte", value = 4, within = { n = 30, unit = "days" } }"#,
                ));
            }),
        ),
        (
            "a grain the time dimension offers",
            Change(r#"{ kind = "set_grain", grain = "year", dimension = "onset" }"#),
        ),
    ]);
}

#[test]
fn a_model_and_terms_broken_in_one_place_are_rejected() {
    assert_each_rejected(&[
        (
            "model without a name",
            Model(|m| m.model.name = " ".into()),
            "mini.toml: [model]: name is empty",
        ),
        (
            "two default options",
            Model(|m| term(m, "large").options[1].default = true),
            "mini.toml: term \"large\": 2 options are marked default; exactly one must be",
        ),
        (
            "attribute qualified with an entity synonym",
            Constrain(r#"{ kind = "compare", attribute = "wound.latest_area", op = "gt", value = 25 }"#),
            "unknown attribute \"wound.latest_area\" (did you mean \"wounds.latest_area\"?)",
        ),
        (
            "unqualified attribute",
            Constrain(r#"{ kind = "is_null", attribute = "latest_area" }"#),
            "\"latest_area\" is not a qualified attribute",
        ),
        (
            "duplicate term id",
            Model(|m| {
                let mut t = m.terms[0].clone();
                t.phrase = "huge".into();
                t.variants.clear();
                m.terms.push(t);
            }),
            "term \"large\": duplicate term id",
        ),
        (
            "duplicate option id",
            Model(|m| term(m, "large").options[1].id = "gt10".into()),
            "option \"gt10\": duplicate option id",
        ),
        (
            "option with neither a constraint nor a change",
            Model(|m| term(m, "large").options[1].constraint = None),
            "term \"large\", option \"gt25\": has neither a constraint nor a change",
        ),
        (
            "empty question",
            Model(|m| term(m, "large").question = " ".into()),
            "term \"large\": the question is empty",
        ),
        (
            "empty applies_to",
            Model(|m| term(m, "large").applies_to.clear()),
            "term \"large\": applies_to lists no entities",
        ),
        (
            "column term with a non-choose_attribute option",
            Model(|m| term(m, "date").options[1].change = Some(ch(r#"{ kind = "set_limit", n = 5 }"#))),
            "term \"date\", option \"assessed\": a column term's options must each be a choose_attribute change only",
        ),
    ]);
}

#[test]
fn a_term_without_a_default_option_is_rejected_naming_the_term() {
    let problems = problems_after(|m| term(m, "large").options[0].default = false);
    assert_eq!(
        problems,
        ["mini.toml: term \"large\": no option is the default (set default = true on exactly one)"]
    );
}

#[test]
fn a_term_needs_between_two_and_five_options() {
    for (count, ok) in [(1, false), (2, true), (5, true), (6, false)] {
        let problems = problems_after(|m| {
            let t = term(m, "large");
            t.options = (0..count).map(|i| option(&format!("o{i}"), i == 0)).collect();
        });
        let rejected = problems
            .iter()
            .any(|p| p.contains(&format!("has {count} options; a term needs 2 to 5")));
        assert_eq!(rejected, !ok, "{count} options: {problems:?}");
    }
}

#[test]
fn an_unknown_attribute_in_an_option_is_rejected_naming_file_term_option_and_attribute() {
    let problems = problems_after(with_constraint(
        r#"{ kind = "compare", attribute = "wounds.size", op = "gt", value = 25 }"#,
    ));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0]
            .starts_with("mini.toml: term \"large\", option \"gt25\": unknown attribute \"wounds.size\""),
        "{problems:?}"
    );
}

#[test]
fn a_phrase_used_by_two_terms_is_rejected_even_with_other_case_or_hyphens() {
    for (taken, phrase) in [
        ("big", "big"),
        ("big", "BIG"),
        ("recent", "Recent"),
        ("very-large", "very large"),
    ] {
        let problems = problems_after(|m| {
            term(m, "large").variants.push(taken.to_owned());
            let mut t = m.terms[0].clone();
            t.id = "other".into();
            t.phrase = "huge".into();
            t.variants = vec![phrase.to_owned()];
            m.terms.push(t);
        });
        let expected = format!("term \"other\": phrase \"{phrase}\" is also used by term");
        assert!(
            problems.iter().any(|p| p.contains(&expected)),
            "{phrase}: {problems:#?}"
        );
    }
}

// ---------- unknown references ----------

#[test]
fn unknown_entities_are_rejected_wherever_they_are_referenced() {
    assert_each_rejected(&[
        (
            "applies_to",
            Model(|m| term(m, "large").applies_to.push("woundz".into())),
            "term \"large\": unknown entity \"woundz\"",
        ),
        (
            "measure",
            Model(|m| m.measures[0].entity = "ulcer".into()),
            "measure \"wound_count\": unknown entity \"ulcer\" (did you mean \"wounds\"?)",
        ),
        (
            "area",
            Model(|m| m.areas[0].entities.push("clinics".into())),
            "area \"wounds\": unknown entity \"clinics\"",
        ),
        (
            "related_count",
            Constrain(r#"{ kind = "related_count", related = "visits", op = "gte", value = 2 }"#),
            "option \"gt25\": unknown entity \"visits\"",
        ),
        (
            "rank",
            Model(|m| {
                term(m, "large").options[1].change = Some(ch(
                    r#"{ kind = "rank", measure = "wound_count", per = "clinics", order = "desc", limit = 5 }"#,
                ))
            }),
            "option \"gt25\": unknown entity \"clinics\"",
        ),
        (
            "choose_entity",
            Model(|m| {
                term(m, "large").options[1].change =
                    Some(ch(r#"{ kind = "choose_entity", entity = "people" }"#))
            }),
            "unknown entity \"people\" (did you mean \"patients\"?)",
        ),
        (
            "count_related",
            Model(|m| {
                attr(m, "patients.age").derived = Some(Derived::CountRelated {
                    entity: "sores".into(),
                })
            }),
            "attribute \"patients.age\": unknown entity \"sores\"",
        ),
        (
            "change per",
            Constrain(
                r#"{ kind = "change", attribute = "assessments.area", per = "wound", over = { n = 4, unit = "weeks" }, op = "lte", pct = -40 }"#,
            ),
            "unknown entity \"wound\" (did you mean \"wounds\"?)",
        ),
    ]);
}

#[test]
fn unknown_attributes_are_rejected_wherever_they_are_referenced() {
    assert_each_rejected(&[
        (
            "join",
            Model(|m| m.joins[0].to = "patients.key".into()),
            "join \"wounds.patient_id -> patients.key\": unknown attribute \"patients.key\"",
        ),
        (
            "measure",
            Model(|m| m.measures[1].attribute = Some("assessments.size".into())),
            "measure \"avg_area\": unknown attribute \"assessments.size\"",
        ),
        (
            "area",
            Model(|m| m.areas[0].attributes.push("wounds.cause".into())),
            "area \"wounds\": unknown attribute \"wounds.cause\"",
        ),
        (
            "time dimension",
            Model(|m| m.time_dimensions[0].attribute = "wounds.onset".into()),
            "time dimension \"onset\": unknown attribute \"wounds.onset\" (did you mean \"wounds.onset_date\"?)",
        ),
        (
            "choose_attribute",
            Model(|m| {
                term(m, "date").options[1].change = Some(ch(
                    r#"{ kind = "choose_attribute", attribute = "assessments.date" }"#,
                ))
            }),
            "term \"date\", option \"assessed\": unknown attribute \"assessments.date\"",
        ),
        (
            "derived latest",
            Model(|m| latest_area_of(m, "assessments.area_cm2")),
            "attribute \"wounds.latest_area\": unknown attribute \"assessments.area_cm2\"",
        ),
        (
            "derived days",
            Model(|m| days_open_since(m, "onset")),
            "attribute \"wounds.days_open\": unknown attribute \"wounds.onset\"",
        ),
        (
            "nested constraint",
            Constrain(
                r#"{ kind = "not", of = { kind = "any", of = [{ kind = "all", of = [{ kind = "is_null", attribute = "wounds.healed" }] }] } }"#,
            ),
            "unknown attribute \"wounds.healed\"",
        ),
    ]);
}

#[test]
fn other_unknown_or_unreachable_references_are_rejected() {
    assert_each_rejected(&[
        (
            "entity key",
            Model(|m| entity(m, "wounds").key = "wound_id".into()),
            "entity \"wounds\": key \"wound_id\" is not an attribute",
        ),
        (
            "entity display_attribute",
            Model(|m| entity(m, "wounds").display_attribute = Some("name".into())),
            "entity \"wounds\": display_attribute \"name\" is not an attribute",
        ),
        (
            "entity list_attributes",
            Model(|m| entity(m, "wounds").list_attributes = vec!["status".into(), "colour".into()]),
            "entity \"wounds\": list_attributes: \"colour\" is not an attribute",
        ),
        (
            "entity unknown_word_terms: unknown term",
            Model(|m| entity(m, "wounds").unknown_word_terms = vec!["infected".into(), "grotty".into()]),
            "entity \"wounds\": unknown_word_terms: unknown term \"grotty\"",
        ),
        (
            "entity default time dimension",
            Model(|m| entity(m, "wounds").default_time_dimension = Some("started".into())),
            "entity \"wounds\": unknown default time dimension \"started\"",
        ),
        (
            "choose_measure in an option",
            Change(r#"{ kind = "choose_measure", measure = "healing_rates" }"#),
            "unknown measure \"healing_rates\" (did you mean \"healing_rate\"?)",
        ),
        (
            "time_window dimension in an option",
            Constrain(r#"{ kind = "time_window", dimension = "visit", last = { n = 7, unit = "days" } }"#),
            "unknown time dimension \"visit\"",
        ),
        (
            "area measure",
            Model(|m| m.areas[0].measures.push("volume".into())),
            "area \"wounds\": unknown measure \"volume\"",
        ),
        (
            "area related area",
            Model(|m| m.areas[0].related.push("clinics".into())),
            "area \"wounds\": unknown related area \"clinics\"",
        ),
        (
            "area related to itself",
            Model(|m| m.areas[0].related.push("wounds".into())),
            "an area cannot be related to itself",
        ),
        (
            "area without entities",
            Model(|m| m.areas[1].entities.clear()),
            "area \"patients\": lists no entities",
        ),
        (
            "attribute with no join path",
            Model(|m| {
                m.joins.remove(0);
                term(m, "large").options[1].constraint = Some(c(
                    r#"{ kind = "compare", attribute = "patients.diabetes", op = "eq", value = true }"#,
                ));
            }),
            "option \"gt25\": attribute \"patients.diabetes\" cannot be reached from entity \"wounds\" (no join path)",
        ),
    ]);
}

// ---------- schema ----------

#[test]
fn an_unknown_table_is_rejected_when_a_schema_is_given_and_accepted_without_one() {
    let rename = |m: &mut SemanticModel| entity(m, "wounds").table = "wound".into();
    assert!(problems_with(None, rename).is_empty());
    assert_rejected(
        rename,
        "entity \"wounds\": unknown table \"wound\" (did you mean \"wounds\"?)",
    );
}

#[test]
fn an_unknown_column_is_rejected_when_a_schema_is_given() {
    let rename = |m: &mut SemanticModel| attr(m, "assessments.area").column = Some("area".into());
    assert!(problems_with(None, rename).is_empty());
    assert_rejected(
        rename,
        "attribute \"assessments.area\": unknown column \"area\" of table \"assessments\"",
    );
}

#[test]
fn columns_of_the_wrong_sql_type_and_names_that_are_not_plain_identifiers_are_rejected() {
    assert_each_rejected(&[
        (
            "column sql type",
            Model(|m| attr(m, "wounds.etiology").column = Some("initial_area_cm2".into())),
            "column wounds.initial_area_cm2 is REAL, which cannot hold type text",
        ),
        (
            "table name",
            Model(|m| entity(m, "wounds").table = "wounds; drop table x".into()),
            "table \"wounds; drop table x\" is not a plain identifier",
        ),
        (
            "column name",
            Model(|m| attr(m, "wounds.depth").column = Some("depth\"".into())),
            "column \"depth\"\" is not a plain identifier",
        ),
        (
            "attribute name",
            Model(|m| entity(m, "wounds").attributes[2].name = "wound.etiology".into()),
            "plain identifier",
        ),
    ]);
}

// ---------- entities and attributes ----------

fn static_values<'a>(m: &'a mut SemanticModel, qualified: &str) -> &'a mut Vec<AllowedValue> {
    match &mut attr(m, qualified).allowed {
        Some(AllowedValues::Static { values }) => values,
        _ => panic!("{qualified} has no static allowed values"),
    }
}

/// `wounds.days_open` counted from `from` (an attribute of wounds) to today.
fn days_open_since(m: &mut SemanticModel, from: &str) {
    attr(m, "wounds.days_open").derived = Some(Derived::DaysBetween {
        from: DateOperand::Attribute(from.into()),
        to: DateOperand::Today,
        if_null: None,
    });
}

/// `wounds.latest_area` as the latest value of `attribute`.
fn latest_area_of(m: &mut SemanticModel, attribute: &str) {
    attr(m, "wounds.latest_area").derived = Some(Derived::Latest {
        attribute: attribute.into(),
        by: None,
    });
}

fn allowed_value(v: Value, synonyms: &[&str]) -> AllowedValue {
    AllowedValue {
        value: v,
        label: String::new(),
        synonyms: synonyms.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn broken_entities_and_attributes_are_rejected() {
    assert_each_rejected(&[
        (
            "duplicate entity name",
            Model(|m| entity(m, "assessments").name = "wounds".into()),
            "entity \"wounds\": duplicate entity name",
        ),
        (
            "duplicate attribute name",
            Model(|m| entity(m, "wounds").attributes[3].name = "etiology".into()),
            "attribute \"wounds.etiology\": duplicate attribute name",
        ),
        (
            "duplicate measure name",
            Model(|m| m.measures[1].name = "wound_count".into()),
            "measure \"wound_count\": duplicate measure name",
        ),
        (
            "duplicate time dimension name",
            Model(|m| m.time_dimensions[1].name = "onset".into()),
            "time dimension \"onset\": duplicate time dimension name",
        ),
        (
            "duplicate area name",
            Model(|m| m.areas[1].name = "wounds".into()),
            "area \"wounds\": duplicate area name",
        ),
        (
            "entity synonym shared by two entities",
            Model(|m| entity(m, "assessments").synonyms.push("Ulcer".into())),
            "entity \"assessments\": synonym \"Ulcer\" is also used by entity \"wounds\"",
        ),
        (
            "attribute synonym shared by two attributes",
            Model(|m| {
                attr(m, "wounds.onset_date").synonyms.push("date".into());
                attr(m, "wounds.healed_date").synonyms.push("Date".into());
            }),
            "attribute \"wounds.healed_date\": synonym \"Date\" is also used by attribute \"wounds.onset_date\"",
        ),
        (
            "both a column and a derivation",
            Model(|m| attr(m, "wounds.latest_area").column = Some("initial_area_cm2".into())),
            "attribute \"wounds.latest_area\": has both a column and a derivation; keep one",
        ),
        (
            "neither a column nor a derivation",
            Model(|m| attr(m, "wounds.etiology").column = None),
            "attribute \"wounds.etiology\": has neither a column nor a derivation",
        ),
        (
            "empty static allowed values",
            Model(|m| attr(m, "wounds.depth").allowed = Some(AllowedValues::Static { values: vec![] })),
            "attribute \"wounds.depth\": static allowed values are empty",
        ),
        (
            "allowed value of the wrong type",
            Model(|m| static_values(m, "wounds.depth").push(allowed_value(Value::Integer(3), &[]))),
            "allowed value 3: an integer does not fit type text",
        ),
        (
            "allowed value listed twice",
            Model(|m| static_values(m, "wounds.depth").push(allowed_value("superficial".into(), &[]))),
            "allowed value \"superficial\" is listed twice",
        ),
        (
            "synonym shared by two allowed values",
            Model(|m| {
                static_values(m, "wounds.etiology")[1]
                    .synonyms
                    .push("Bed-sore".into())
            }),
            "synonym \"Bed-sore\" is used by allowed values \"pressure_injury\" and \"diabetic_foot_ulcer\"",
        ),
        (
            "integer derivation declared real",
            Model(|m| attr(m, "wounds.days_open").ty = AttributeType::Real),
            "attribute \"wounds.days_open\": the derivation gives type integer, but the attribute is declared real",
        ),
        (
            "real derivation declared integer",
            Model(|m| attr(m, "wounds.latest_area").ty = AttributeType::Integer),
            "the derivation gives type real, but the attribute is declared integer",
        ),
        (
            "days_between over a number",
            Model(|m| days_open_since(m, "initial_area")),
            "\"wounds.initial_area\" is real, not a date",
        ),
        (
            "percent_change over text",
            Model(|m| {
                let a = attr(m, "wounds.latest_area");
                a.derived = Some(Derived::PercentChange {
                    from: "etiology".into(),
                    to: "initial_area".into(),
                });
            }),
            "\"wounds.etiology\" is text, not a number",
        ),
        (
            "latest over the entity's own attribute",
            Model(|m| latest_area_of(m, "wounds.initial_area")),
            "must name an attribute of a related entity",
        ),
        (
            "time dimension on a number",
            Model(|m| m.time_dimensions[0].attribute = "wounds.initial_area".into()),
            "time dimension \"onset\": attribute \"wounds.initial_area\" is real, not a date",
        ),
    ]);
}

#[test]
fn weights_outside_zero_to_one_are_rejected() {
    for (weight, ok) in [
        (1.0, true),
        (0.8, true),
        (0.01, true),
        (0.0, false),
        (-0.5, false),
        (1.5, false),
        (f64::NAN, false),
    ] {
        let problems = problems_after(|m| attr(m, "wounds.depth").weight = weight);
        let rejected = problems.iter().any(|p| p.contains("is outside (0, 1]"));
        assert_eq!(rejected, !ok, "weight {weight}: {problems:?}");
    }
}

#[test]
fn a_derivation_that_refers_back_to_itself_is_rejected() {
    let problems = problems_after(|m| {
        let a = attr(m, "wounds.latest_area");
        a.derived = Some(Derived::PercentChange {
            from: "initial_area".into(),
            to: "area_change".into(),
        });
        let mut change = a.clone();
        change.name = "area_change".into();
        change.derived = Some(Derived::PercentChange {
            from: "initial_area".into(),
            to: "latest_area".into(),
        });
        entity(m, "wounds").attributes.push(change);
    });
    let cycles: Vec<_> = problems
        .iter()
        .filter(|p| p.contains("refers back to itself"))
        .collect();
    assert_eq!(cycles.len(), 1, "one report per cycle: {problems:#?}");
    assert!(
        cycles[0].contains("wounds.area_change → wounds.latest_area → wounds.area_change"),
        "{cycles:?}"
    );
}

// ---------- joins and measures ----------

#[test]
fn broken_joins_and_measures_are_rejected() {
    assert_each_rejected(&[
        (
            "join between columns of two types",
            Model(|m| m.joins[0].to = "patients.birth_date".into()),
            "joins integer to date",
        ),
        (
            "join within one entity",
            Model(|m| m.joins[0].to = "wounds.id".into()),
            "a join must connect two different entities",
        ),
        (
            "join on a derived attribute",
            Model(|m| m.joins[0].to = "patients.age".into()),
            "a join must use plain columns",
        ),
        (
            "duplicate join",
            Model(|m| m.joins.push(m.joins[0].clone())),
            "duplicate join",
        ),
        (
            "avg of text",
            Model(|m| m.measures[1].attribute = Some("assessments.exudate".into())),
            "measure \"avg_area\": cannot aggregate text attribute \"assessments.exudate\" with avg",
        ),
        (
            "avg without an attribute",
            Model(|m| m.measures[1].attribute = None),
            "measure \"avg_area\": avg needs an attribute",
        ),
        (
            "share without a condition",
            Model(|m| m.measures[2].condition = None),
            "measure \"healing_rate\": share needs a condition",
        ),
        (
            "condition on a count",
            Model(|m| m.measures[0].condition = m.measures[2].condition.clone()),
            "only a share measure takes a condition",
        ),
        (
            "measure filter with a value not allowed",
            Model(|m| {
                m.measures[0].filter = Some(c(
                    r#"{ kind = "compare", attribute = "wounds.etiology", op = "eq", value = "DFU" }"#,
                ))
            }),
            "measure \"wound_count\": value \"DFU\" is not an allowed value of \"wounds.etiology\"",
        ),
    ]);
}

// ---------- typed constraints ----------

#[test]
fn ill_typed_or_empty_constraints_and_changes_are_rejected() {
    assert_each_rejected(&[
        (
            "text for a real",
            Constrain(
                r#"{ kind = "compare", attribute = "wounds.latest_area", op = "gt", value = "large" }"#,
            ),
            "value \"large\" for \"wounds.latest_area\": text does not fit type real",
        ),
        (
            "text for a boolean",
            Constrain(r#"{ kind = "compare", attribute = "patients.diabetes", op = "eq", value = "yes" }"#),
            "text does not fit type boolean",
        ),
        (
            "integer for text",
            Constrain(r#"{ kind = "compare", attribute = "wounds.etiology", op = "eq", value = 3 }"#),
            "an integer does not fit type text",
        ),
        (
            "fractional real for an integer",
            Constrain(r#"{ kind = "compare", attribute = "wounds.days_open", op = "gt", value = 6.5 }"#),
            "a real number does not fit type integer",
        ),
        (
            "text that is not an ISO date",
            Constrain(
                r#"{ kind = "compare", attribute = "wounds.onset_date", op = "gt", value = "last week" }"#,
            ),
            "\"last week\" is not an ISO date",
        ),
        (
            "text in an integer set",
            Constrain(r#"{ kind = "in_set", attribute = "patients.age", values = [60, "old"] }"#),
            "text does not fit type integer",
        ),
        (
            "value outside the static allowed values",
            Constrain(
                r#"{ kind = "in_set", attribute = "wounds.depth", values = ["full_thickness", "deep"] }"#,
            ),
            "value \"deep\" is not an allowed value of \"wounds.depth\" (allowed: \"superficial\", \"full_thickness\")",
        ),
        (
            "value outside the allowed values, through latest",
            Model(|m| {
                let a = attr(m, "wounds.latest_area");
                a.ty = AttributeType::Text;
                a.unit = None;
                a.derived = Some(Derived::Latest {
                    attribute: "assessments.exudate".into(),
                    by: None,
                });
                term(m, "large").options[0].constraint = Some(c(
                    r#"{ kind = "compare", attribute = "wounds.latest_area", op = "eq", value = "heavy" }"#,
                ));
                term(m, "large").options[1].constraint = Some(c(
                    r#"{ kind = "compare", attribute = "wounds.latest_area", op = "eq", value = "high" }"#,
                ));
            }),
            "value \"heavy\" is not an allowed value of \"wounds.latest_area\"",
        ),
        (
            "ordering operator on text",
            Constrain(r#"{ kind = "compare", attribute = "wounds.etiology", op = "gt", value = "burn" }"#),
            "cannot compare text attribute \"wounds.etiology\" with gt",
        ),
        (
            "between on a boolean",
            Constrain(r#"{ kind = "between", attribute = "patients.diabetes", min = false, max = true }"#),
            "between needs a number or date, \"patients.diabetes\" is boolean",
        ),
        (
            "unit that differs from the attribute's",
            Constrain(
                r#"{ kind = "compare", attribute = "wounds.latest_area", op = "gt", value = 10, unit = "cm" }"#,
            ),
            "unit \"cm\" does not match \"wounds.latest_area\" which has unit \"cm2\"",
        ),
        (
            "unit on an attribute without one",
            Constrain(
                r#"{ kind = "compare", attribute = "patients.diabetes", op = "eq", value = true, unit = "cm" }"#,
            ),
            "which has no unit",
        ),
        (
            "between with min above max",
            Constrain(
                r#"{ kind = "between", attribute = "patients.age", min = 80, max = 65, unit = "years" }"#,
            ),
            "between has min 80 above max 65",
        ),
        (
            "time window without a dimension on an entity without a default",
            Model(|m| term(m, "recent").applies_to.push("patients".into())),
            "term \"recent\", option \"d30\": no dimension given and entity \"patients\" has no default time dimension",
        ),
        (
            "change of text",
            Constrain(
                r#"{ kind = "change", attribute = "assessments.exudate", per = "wounds", over = { n = 4, unit = "weeks" }, op = "lte", pct = -40 }"#,
            ),
            "change needs a numeric attribute, \"assessments.exudate\" is text",
        ),
        (
            "change of undated rows",
            Constrain(
                r#"{ kind = "change", attribute = "patients.age", per = "patients", over = { n = 4, unit = "weeks" }, op = "lte", pct = -40 }"#,
            ),
            "change needs dated rows, but entity \"patients\" has no default time dimension",
        ),
        (
            "related_count within itself",
            Constrain(r#"{ kind = "related_count", related = "wounds", op = "gte", value = 2 }"#),
            "related_count counts entity \"wounds\" within itself",
        ),
        (
            "related_count within a span, of undated rows",
            Model(|m| {
                term(m, "large").applies_to = vec!["wounds".into()];
                term(m, "large").options[1].constraint = Some(c(
                    r#"{ kind = "related_count", per = "wounds", related = "patients", op = "gte", value = 1, within = { n = 30, unit = "days" } }"#,
                ));
            }),
            "within needs dated rows, but entity \"patients\" has no default time dimension",
        ),
        (
            "empty all",
            Constrain(r#"{ kind = "all", of = [] }"#),
            "all has no members",
        ),
        (
            "empty any",
            Constrain(r#"{ kind = "any", of = [] }"#),
            "any has no members",
        ),
        (
            "empty in_set",
            Constrain(r#"{ kind = "in_set", attribute = "wounds.depth", values = [] }"#),
            "lists no values",
        ),
        (
            "zero time span",
            Constrain(r#"{ kind = "older_than", age = { n = 0, unit = "days" } }"#),
            "a time span must be at least 1",
        ),
        (
            "zero set_limit",
            Change(r#"{ kind = "set_limit", n = 0 }"#),
            "set_limit needs n of at least 1",
        ),
        (
            "zero rank limit",
            Change(
                r#"{ kind = "rank", measure = "wound_count", per = "patients", order = "desc", limit = 0 }"#,
            ),
            "rank limit must be at least 1",
        ),
        (
            "zero sort limit",
            Change(r#"{ kind = "sort", attribute = "wounds.latest_area", order = "desc", limit = 0 }"#),
            "sort limit must be at least 1",
        ),
        (
            "grain the time dimension does not offer",
            Change(r#"{ kind = "set_grain", grain = "year", dimension = "assessed" }"#),
            "time dimension \"assessed\" has no year grain",
        ),
        (
            "sort by a boolean",
            Change(r#"{ kind = "sort", attribute = "patients.diabetes", order = "desc" }"#),
            "cannot sort by boolean attribute \"patients.diabetes\"",
        ),
    ]);
}

// ---------- reporting ----------

#[test]
fn every_problem_is_reported_each_on_its_own_line_naming_the_file() {
    let problems = problems_after(|m| {
        term(m, "large").options[0].default = false;
        m.measures[0].entity = "x".into();
        attr(m, "wounds.depth").weight = 2.0;
    });
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(
        problems.iter().all(|p| p.starts_with("mini.toml: ")),
        "{problems:#?}"
    );
}

#[test]
fn a_model_changed_after_a_lookup_is_validated_as_it_is_now() {
    let mut m = base();
    assert!(m.attribute("wounds.latest_area").is_some());
    attr(&mut m, "wounds.latest_area").name = "current_area".into();
    let err = m.validate("mini.toml", None).unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown attribute \"wounds.latest_area\""),
        "{err}"
    );
    assert_eq!(err.problems().len(), 2, "both options of \"large\": {err}");
}

#[test]
fn operators_offered_for_custom_values_follow_the_attribute_type() {
    assert_eq!(operators_for(AttributeType::Text), [CompareOp::Eq, CompareOp::Ne]);
    assert_eq!(operators_for(AttributeType::Boolean).len(), 2);
    assert_eq!(operators_for(AttributeType::Real).len(), 6);
    assert_eq!(operators_for(AttributeType::Date).len(), 6);
}

#[test]
fn an_options_when_must_be_a_value_of_a_known_attribute() {
    let with_when = |w: &str| {
        let mut m = SemanticModel::wound_care();
        let t = m
            .terms
            .iter_mut()
            .find(|t| t.id == "stage_column")
            .expect("stage_column");
        let o = t
            .options
            .iter_mut()
            .find(|o| o.id == "stage")
            .expect("stage option");
        assert!(
            o.when.is_some(),
            "the shipped model settles the stage by pressure injuries"
        );
        o.when = Some(c(w));
        match m.validate("wound_care.toml", None) {
            Ok(()) => String::new(),
            Err(e) => e.to_string(),
        }
    };
    let p = with_when(r#"{ kind = "compare", attribute = "wounds.etiology", op = "gt", value = "x" }"#);
    assert!(p.contains("`when` must be an equality"), "{p}");
    let p = with_when(r#"{ kind = "compare", attribute = "wounds.no_such", op = "eq", value = "x" }"#);
    assert!(p.contains("no_such"), "{p}");
    let p = with_when(
        r#"{ kind = "compare", attribute = "wounds.etiology", op = "eq", value = "pressure_injury" }"#,
    );
    assert!(p.is_empty(), "{p}");
}
