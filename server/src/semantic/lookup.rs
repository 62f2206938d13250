//! Lookups over a [`SemanticModel`] that the engine, renderer and warehouse need:
//! by name, by synonym, by qualified attribute, by phrase, and join paths.
//!
//! Word lookups are normalised with [`normalize_phrase`] (case, hyphens and
//! underscores ignored). The lookup tables are built once, on first use, so a model
//! built in code or deserialised directly works the same as a loaded one. Pure: no
//! I/O, no validation (a model with duplicates answers with the first entry).

use std::collections::{HashMap, VecDeque};

use super::model::{
    AllowedValues, Attribute, AttributeType, Derived, Entity, Join, Measure, SchemaArea, SemanticModel, Term,
    TermOption, TimeDimension, Value,
};

/// Lowercases, turns `-` and `_` into spaces and collapses whitespace: the form in which
/// words, synonyms and phrases are compared ("Hard-to-heal" → "hard to heal").
pub fn normalize_phrase(text: &str) -> String {
    let mapped: String = text
        .chars()
        .map(|c| if c == '-' || c == '_' { ' ' } else { c })
        .collect::<String>()
        .to_lowercase();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An attribute together with the entity it belongs to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttributeRef<'a> {
    /// The owning entity.
    pub entity: &'a Entity,
    /// The attribute.
    pub attribute: &'a Attribute,
}

impl AttributeRef<'_> {
    /// `entity.attribute`.
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.entity.name, self.attribute.name)
    }
}

/// One step of a join path, in the direction travelled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JoinStep<'a> {
    /// The join used.
    pub join: &'a Join,
    /// True when travelled from the referencing side to the referenced side
    /// (many → one); false for one → many, where a filter means "at least one".
    pub forward: bool,
}

/// A database-sourced attribute the allowed-values provider should load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseColumn {
    /// Qualified attribute (`wounds.location`).
    pub attribute: String,
    /// Table name.
    pub table: String,
    /// Column name.
    pub column: String,
}

/// Lookup tables (indices into the model's vectors), built on first use.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    entity_words: HashMap<String, usize>,
    attributes: HashMap<String, (usize, usize)>,
    attribute_words: HashMap<String, Vec<(usize, usize)>>,
    term_ids: HashMap<String, usize>,
    term_phrases: HashMap<String, usize>,
    measure_words: HashMap<String, usize>,
    time_words: HashMap<String, usize>,
    max_term_words: usize,
}

impl Index {
    fn build(model: &SemanticModel) -> Index {
        let mut ix = Index::default();
        for (ei, e) in model.entities.iter().enumerate() {
            for w in std::iter::once(&e.name).chain([&e.label]).chain(&e.synonyms) {
                ix.entity_words.entry(normalize_phrase(w)).or_insert(ei);
            }
            for (ai, a) in e.attributes.iter().enumerate() {
                ix.attributes
                    .entry(format!("{}.{}", e.name, a.name))
                    .or_insert((ei, ai));
                let mut words: Vec<String> = std::iter::once(&a.name)
                    .chain(&a.synonyms)
                    .map(|w| normalize_phrase(w))
                    .collect();
                words.dedup();
                for w in words {
                    let v = ix.attribute_words.entry(w).or_default();
                    if !v.contains(&(ei, ai)) {
                        v.push((ei, ai));
                    }
                }
            }
        }
        for (ti, t) in model.terms.iter().enumerate() {
            ix.term_ids.entry(t.id.clone()).or_insert(ti);
            for p in std::iter::once(&t.phrase).chain(&t.variants) {
                let n = normalize_phrase(p);
                ix.max_term_words = ix.max_term_words.max(n.split(' ').count());
                ix.term_phrases.entry(n).or_insert(ti);
            }
        }
        for (mi, m) in model.measures.iter().enumerate() {
            for w in std::iter::once(&m.name).chain([&m.label]).chain(&m.synonyms) {
                ix.measure_words.entry(normalize_phrase(w)).or_insert(mi);
            }
        }
        for (di, d) in model.time_dimensions.iter().enumerate() {
            for w in std::iter::once(&d.name).chain([&d.label]).chain(&d.synonyms) {
                ix.time_words.entry(normalize_phrase(w)).or_insert(di);
            }
        }
        ix
    }
}

impl SemanticModel {
    fn ix(&self) -> &Index {
        self.index.get_or_init(|| Index::build(self))
    }

    /// Drops the cached lookup tables; call after changing a model that was already
    /// looked up in (the tables are rebuilt on the next lookup).
    pub fn reindex(&mut self) {
        self.index = std::sync::OnceLock::new();
    }

    /// The entity with this model name.
    pub fn entity(&self, name: &str) -> Option<&Entity> {
        self.entities.iter().find(|e| e.name == name)
    }

    /// The entity a word means: its name, label or a synonym ("ulcers" → wounds).
    pub fn find_entity(&self, word: &str) -> Option<&Entity> {
        self.ix()
            .entity_words
            .get(&normalize_phrase(word))
            .map(|&i| &self.entities[i])
    }

    /// The attribute named `entity.attribute` (model names, not synonyms).
    pub fn attribute(&self, qualified: &str) -> Option<AttributeRef<'_>> {
        self.ix().attributes.get(qualified).map(|&(ei, ai)| {
            let entity = &self.entities[ei];
            AttributeRef {
                entity,
                attribute: &entity.attributes[ai],
            }
        })
    }

    /// The type of the attribute named `entity.attribute`.
    pub fn attribute_type(&self, qualified: &str) -> Option<AttributeType> {
        self.attribute(qualified).map(|r| r.attribute.ty)
    }

    /// Every attribute a word may mean, across entities, in model order. More than one
    /// result is a column ambiguity for the engine to resolve.
    pub fn find_attributes(&self, word: &str) -> Vec<AttributeRef<'_>> {
        self.ix()
            .attribute_words
            .get(&normalize_phrase(word))
            .map_or_else(Vec::new, |v| {
                v.iter()
                    .map(|&(ei, ai)| {
                        let entity = &self.entities[ei];
                        AttributeRef {
                            entity,
                            attribute: &entity.attributes[ai],
                        }
                    })
                    .collect()
            })
    }

    /// The allowed values that apply to an attribute: its own, or for a `latest`/`first`
    /// derivation those of the attribute it reads.
    /// The model's label for a value of an attribute, when it has one (see
    /// [`AllowedValues::label_for`]).
    pub fn value_label(&self, qualified: &str, v: &Value) -> Option<&str> {
        self.allowed_values(qualified)?.label_for(v)
    }

    pub fn allowed_values(&self, qualified: &str) -> Option<&AllowedValues> {
        let mut current = self.attribute(qualified)?;
        for _ in 0..8 {
            if let Some(allowed) = &current.attribute.allowed {
                return Some(allowed);
            }
            match &current.attribute.derived {
                Some(Derived::Latest { attribute, .. } | Derived::First { attribute, .. }) => {
                    current = self.attribute(attribute)?;
                }
                _ => return None,
            }
        }
        None
    }

    /// Database-sourced plain-column attributes, for the allowed-values provider's
    /// allow-list.
    pub fn database_sourced(&self) -> Vec<DatabaseColumn> {
        let mut out = Vec::new();
        for e in &self.entities {
            for a in &e.attributes {
                if let (Some(AllowedValues::Database { .. }), Some(column)) = (&a.allowed, &a.column) {
                    out.push(DatabaseColumn {
                        attribute: format!("{}.{}", e.name, a.name),
                        table: e.table.clone(),
                        column: column.clone(),
                    });
                }
            }
        }
        out
    }

    /// The term with this id.
    pub fn term(&self, id: &str) -> Option<&Term> {
        self.ix().term_ids.get(id).map(|&i| &self.terms[i])
    }

    /// The term whose phrase or a variant is `phrase` (normalised).
    pub fn find_term(&self, phrase: &str) -> Option<&Term> {
        self.ix()
            .term_phrases
            .get(&normalize_phrase(phrase))
            .map(|&i| &self.terms[i])
    }

    /// The most words any term phrase or variant has (how long an n-gram to try).
    pub fn max_term_words(&self) -> usize {
        self.ix().max_term_words
    }

    /// The terms that are ambiguous for an entity.
    pub fn terms_for<'a>(&'a self, entity: &'a str) -> impl Iterator<Item = &'a Term> + 'a {
        self.terms
            .iter()
            .filter(move |t| t.applies_to.iter().any(|e| e == entity))
    }

    /// The measure with this name.
    pub fn measure(&self, name: &str) -> Option<&Measure> {
        self.measures.iter().find(|m| m.name == name)
    }

    /// The measure a word means (name, label or synonym).
    pub fn find_measure(&self, word: &str) -> Option<&Measure> {
        self.ix()
            .measure_words
            .get(&normalize_phrase(word))
            .map(|&i| &self.measures[i])
    }

    /// The time dimension with this name.
    pub fn time_dimension(&self, name: &str) -> Option<&TimeDimension> {
        self.time_dimensions.iter().find(|d| d.name == name)
    }

    /// The time dimension a word means ("started" → onset).
    pub fn find_time_dimension(&self, word: &str) -> Option<&TimeDimension> {
        self.ix()
            .time_words
            .get(&normalize_phrase(word))
            .map(|&i| &self.time_dimensions[i])
    }

    /// An entity's default time dimension.
    pub fn default_time_dimension(&self, entity: &str) -> Option<&TimeDimension> {
        self.entity(entity)?
            .default_time_dimension
            .as_deref()
            .and_then(|d| self.time_dimension(d))
    }

    /// The schema area with this name.
    pub fn area(&self, name: &str) -> Option<&SchemaArea> {
        self.areas.iter().find(|a| a.name == name)
    }

    /// The areas an entity belongs to.
    pub fn areas_of<'a>(&'a self, entity: &'a str) -> impl Iterator<Item = &'a SchemaArea> + 'a {
        self.areas
            .iter()
            .filter(move |a| a.entities.iter().any(|e| e == entity))
    }

    /// True when each `from` row has at most one `to` row: the same entity, or a path of
    /// many-to-one steps only (a wound's clinic).
    pub fn has_one(&self, from: &str, to: &str) -> bool {
        self.join_path(from, to)
            .is_some_and(|p| p.iter().all(|s| s.forward))
    }

    /// True when a `from` row can have many `to` rows: a path of one-to-many steps only
    /// (a clinic's patients, a patient's wounds' assessments).
    pub fn has_many(&self, from: &str, to: &str) -> bool {
        self.join_path(from, to)
            .is_some_and(|p| !p.is_empty() && p.iter().all(|s| !s.forward))
    }

    /// The join path from one entity to another (empty when they are the same): the
    /// shortest one that does not go up to a shared parent and back down to its other
    /// children, when such a path exists within two more steps. "Patients seen by a
    /// podiatrist" reach clinicians through their wounds' assessments (who assessed
    /// them), not through the clinic (who works where the patient is registered) — a
    /// sibling-through-a-parent path only when nothing else connects them. Ties go to
    /// the joins declared first in the file.
    pub fn join_path(&self, from: &str, to: &str) -> Option<Vec<JoinStep<'_>>> {
        if from == to {
            return self.entity(from).map(|_| Vec::new());
        }
        let shortest = self.shortest_path(from, to)?;
        if !up_then_down(&shortest) {
            return Some(shortest);
        }
        let mut best: Option<Vec<JoinStep<'_>>> = None;
        let mut path = Vec::new();
        let mut seen = vec![from.to_owned()];
        self.paths(from, to, shortest.len() + 2, &mut path, &mut seen, &mut |p| {
            if !up_then_down(p) && best.as_ref().is_none_or(|b| p.len() < b.len()) {
                best = Some(p.to_vec());
            }
        });
        Some(best.unwrap_or(shortest))
    }

    /// Every simple path from `at` to `to` of at most `max` steps, in declaration order.
    fn paths<'a>(
        &'a self,
        at: &str,
        to: &str,
        max: usize,
        path: &mut Vec<JoinStep<'a>>,
        seen: &mut Vec<String>,
        found: &mut impl FnMut(&[JoinStep<'a>]),
    ) {
        if path.len() >= max {
            return;
        }
        for join in &self.joins {
            let (a, b) = (join.from_entity(), join.to_entity());
            let (next, forward) = if a == at {
                (b, true)
            } else if b == at {
                (a, false)
            } else {
                continue;
            };
            if seen.iter().any(|s| s == next) {
                continue;
            }
            path.push(JoinStep { join, forward });
            if next == to {
                found(path);
            } else {
                seen.push(next.to_owned());
                self.paths(next, to, max, path, seen, found);
                seen.pop();
            }
            path.pop();
        }
    }

    /// The shortest join path (breadth first).
    fn shortest_path(&self, from: &str, to: &str) -> Option<Vec<JoinStep<'_>>> {
        let mut came_from: HashMap<&str, (&str, JoinStep<'_>)> = HashMap::new();
        let mut queue = VecDeque::from([from]);
        while let Some(at) = queue.pop_front() {
            for join in &self.joins {
                let (a, b) = (join.from_entity(), join.to_entity());
                let (next, forward) = if a == at {
                    (b, true)
                } else if b == at {
                    (a, false)
                } else {
                    continue;
                };
                if next == from || came_from.contains_key(next) {
                    continue;
                }
                came_from.insert(next, (at, JoinStep { join, forward }));
                if next == to {
                    let mut path = Vec::new();
                    let mut cur = to;
                    while cur != from {
                        let (prev, step) = came_from[cur];
                        path.push(step);
                        cur = prev;
                    }
                    path.reverse();
                    return Some(path);
                }
                queue.push_back(next);
            }
        }
        None
    }
}

/// True when a path goes up a many-to-one step and later down a one-to-many one: its
/// ends are only related through a shared parent.
fn up_then_down(path: &[JoinStep<'_>]) -> bool {
    path.iter()
        .position(|s| s.forward)
        .is_some_and(|up| path[up..].iter().any(|s| !s.forward))
}

impl Entity {
    /// The attribute with this name.
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }
}

impl Term {
    /// The default option (exactly one in a validated model).
    pub fn default_option(&self) -> Option<&TermOption> {
        self.options.iter().find(|o| o.default)
    }

    /// The option with this id.
    pub fn option(&self, id: &str) -> Option<&TermOption> {
        self.options.iter().find(|o| o.id == id)
    }

    /// The phrase and its variants.
    pub fn phrases(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.phrase.as_str()).chain(self.variants.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::model::AttributeType;

    fn model() -> SemanticModel {
        SemanticModel::wound_care()
    }

    fn path_entities(m: &SemanticModel, from: &str, to: &str) -> Vec<String> {
        let mut at = from.to_owned();
        let mut out = vec![at.clone()];
        for s in m.join_path(from, to).expect("a path") {
            at = if s.forward {
                s.join.to_entity()
            } else {
                s.join.from_entity()
            }
            .to_owned();
            out.push(at.clone());
        }
        out
    }

    #[test]
    fn join_paths_prefer_what_happened_over_a_shared_parent() {
        let m = model();
        // "patients seen by a podiatrist": through the visits, not the clinic
        assert_eq!(
            path_entities(&m, "patients", "clinicians"),
            ["patients", "wounds", "assessments", "clinicians"]
        );
        assert_eq!(
            path_entities(&m, "clinicians", "patients"),
            ["clinicians", "assessments", "wounds", "patients"]
        );
        // direct joins stay direct
        assert_eq!(path_entities(&m, "patients", "clinics"), ["patients", "clinics"]);
        assert_eq!(path_entities(&m, "clinics", "patients"), ["clinics", "patients"]);
        assert_eq!(
            path_entities(&m, "wounds", "clinicians"),
            ["wounds", "assessments", "clinicians"]
        );
    }

    #[test]
    fn phrases_are_compared_without_case_hyphens_underscores_or_extra_spaces() {
        let cases = [
            ("Hard-to-Heal", "hard to heal"),
            ("  long_standing  ", "long standing"),
            ("DFU", "dfu"),
        ];
        for (input, normal) in cases {
            assert_eq!(normalize_phrase(input), normal);
        }
    }

    #[test]
    fn an_entity_is_found_by_name_label_or_synonym_in_any_case() {
        let m = model();
        for (word, entity) in [
            ("wounds", "wounds"),
            ("Wound", "wounds"),
            ("ULCERS", "wounds"),
            ("visits", "assessments"),
            ("staff", "clinicians"),
        ] {
            assert_eq!(
                m.find_entity(word).map(|e| e.name.as_str()),
                Some(entity),
                "{word}"
            );
        }
        assert!(m.find_entity("banana").is_none());
    }

    #[test]
    fn a_qualified_attribute_resolves_to_its_entity_and_type() {
        let m = model();
        let r = m.attribute("wounds.latest_area").unwrap();
        assert_eq!(
            (r.entity.name.as_str(), r.qualified()),
            ("wounds", "wounds.latest_area".to_owned())
        );
        assert_eq!(m.attribute_type("assessments.area"), Some(AttributeType::Real));
        assert_eq!(m.attribute_type("patients.age"), Some(AttributeType::Integer));
        assert_eq!(m.attribute_type("wounds.size"), None);
        assert_eq!(m.attribute_type("wounds"), None);
    }

    #[test]
    fn a_word_naming_attributes_of_several_entities_returns_all_of_them() {
        let m = model();
        let found: Vec<String> = m
            .find_attributes("depth")
            .iter()
            .map(AttributeRef::qualified)
            .collect();
        assert_eq!(found, ["wounds.depth", "assessments.depth"]);
        let found: Vec<String> = m
            .find_attributes("Time to heal")
            .iter()
            .map(AttributeRef::qualified)
            .collect();
        assert_eq!(found, ["wounds.healing_days"]);
    }

    #[test]
    fn a_term_is_found_by_phrase_or_variant_and_has_one_default() {
        let m = model();
        let t = m.find_term("Getting Better").unwrap();
        assert_eq!(t.id, "improving");
        assert_eq!(m.find_term("big").map(|t| t.id.as_str()), Some("large"));
        assert_eq!(m.term("large").unwrap().default_option().unwrap().id, "gt10");
        assert!(m.term("large").unwrap().option("gt25").is_some());
        assert!(m.find_term("purple").is_none());
        assert!(m.max_term_words() >= 3);
    }

    #[test]
    fn terms_for_an_entity_are_those_that_apply_to_it() {
        let m = model();
        let clinic_terms: Vec<&str> = m.terms_for("clinics").map(|t| t.id.as_str()).collect();
        assert!(
            clinic_terms.contains(&"busy") && clinic_terms.contains(&"best"),
            "{clinic_terms:?}"
        );
        assert!(!clinic_terms.contains(&"large"));
    }

    #[test]
    fn measures_and_time_dimensions_are_found_by_synonym() {
        let m = model();
        assert_eq!(
            m.find_measure("average time to heal").map(|x| x.name.as_str()),
            Some("avg_healing_days")
        );
        assert_eq!(
            m.find_time_dimension("started").map(|d| d.name.as_str()),
            Some("onset")
        );
        assert_eq!(
            m.default_time_dimension("assessments")
                .map(|d| d.attribute.as_str()),
            Some("assessments.assessed_on")
        );
        assert!(m.default_time_dimension("clinics").is_none());
        assert_eq!(
            m.areas_of("clinicians")
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>(),
            ["clinics"]
        );
    }

    #[test]
    fn the_join_path_is_the_shortest_and_says_which_way_each_step_goes() {
        let m = model();
        let path = m.join_path("assessments", "patients").unwrap();
        let steps: Vec<(&str, bool)> = path.iter().map(|s| (s.join.from.as_str(), s.forward)).collect();
        assert_eq!(
            steps,
            [("assessments.wound_id", true), ("wounds.patient_id", true)]
        );
        let back = m.join_path("clinics", "wounds").unwrap();
        assert_eq!(back.len(), 1);
        assert!(!back[0].forward, "clinics → wounds is one-to-many");
        // Two two-step paths reach an assessment's clinic; the one declared first wins.
        let via: Vec<&str> = m
            .join_path("assessments", "clinics")
            .unwrap()
            .iter()
            .map(|s| s.join.to_entity())
            .collect();
        assert_eq!(via, ["wounds", "clinics"]);
        assert_eq!(m.join_path("wounds", "wounds").map(|p| p.len()), Some(0));
        assert!(m.join_path("wounds", "nowhere").is_none());
    }

    #[test]
    fn allowed_values_of_a_latest_attribute_are_those_of_its_source() {
        let m = model();
        let exudate = m.allowed_values("wounds.latest_exudate").unwrap();
        assert!(exudate.is_static());
        assert_eq!(exudate.listed().len(), 4);
        assert!(m.allowed_values("wounds.latest_area").is_none());
    }

    #[test]
    fn a_coded_value_has_its_models_label_and_an_unknown_one_has_none() {
        let m = model();
        let code = |s: &str| Value::Text(s.into());
        assert_eq!(
            m.value_label("wounds.etiology", &code("venous_leg_ulcer")),
            Some("Venous leg ulcer")
        );
        assert_eq!(m.value_label("wounds.etiology", &code("no_such_code")), None);
        assert_eq!(m.value_label("wounds.latest_area", &Value::Real(3.0)), None);
    }

    #[test]
    fn database_sourced_columns_are_listed_for_the_allowed_values_provider() {
        let cols: Vec<(String, String, String)> = model()
            .database_sourced()
            .into_iter()
            .map(|c| (c.attribute, c.table, c.column))
            .collect();
        assert!(
            cols.contains(&("wounds.location".into(), "wounds".into(), "location".into())),
            "{cols:?}"
        );
        assert!(cols.contains(&("clinics.region".into(), "clinics".into(), "region".into())));
        assert!(
            !cols.iter().any(|(a, ..)| a == "wounds.etiology"),
            "static lists are not loaded"
        );
    }

    #[test]
    fn reindex_makes_lookups_see_a_changed_model() {
        let mut m = model();
        assert!(m.find_term("big").is_some());
        m.terms.retain(|t| t.id != "large");
        m.reindex();
        assert!(m.find_term("big").is_none());
    }
}
