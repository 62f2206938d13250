//! Validation of a parsed [`SemanticModel`]: every reference resolves, every literal
//! has the type of its attribute, every term is a proper multiple-choice question.
//!
//! All problems are collected (not just the first), each naming its entry, so an admin
//! fixes a model in one pass. The rules are listed in `server/docs/semantic-model.md`.
//! Pure: no I/O; the database schema, when known, is passed in as [`SchemaInfo`].

use std::collections::{HashMap, HashSet};

use super::load::{ModelError, Problem};
use super::lookup::normalize_phrase;
use super::model::{
    AllowedValues, Attribute, AttributeType, CompareOp, Constraint, DateOperand, Derived, Entity, MeasureAgg,
    PlanChange, SemanticModel, Span, TermKind, Value, split_qualified,
};
use super::schema::SchemaInfo;

/// Fewest and most options a term may have.
pub const OPTIONS_RANGE: std::ops::RangeInclusive<usize> = 2..=5;

impl SemanticModel {
    /// Checks the whole model; with a schema, tables and columns (and their types) too.
    /// `file` is used in messages.
    pub fn validate(&self, file: &str, schema: Option<&SchemaInfo>) -> Result<(), ModelError> {
        // Lookups are cached; validate against a fresh copy so that a model changed after
        // a lookup is judged as it is now.
        let mut fresh = self.clone();
        fresh.reindex();
        let mut v = Validator {
            model: &fresh,
            schema,
            problems: Vec::new(),
        };
        v.run();
        if v.problems.is_empty() {
            Ok(())
        } else {
            Err(ModelError::Invalid {
                file: file.to_owned(),
                problems: v.problems,
            })
        }
    }
}

impl SemanticModel {
    /// Checks one typed constraint proposed from outside the model file (a language
    /// model's plan piece) with the same rules as the file's own constraints, for
    /// questions about any of `entities`. `Err` lists every problem.
    pub fn check_constraint(&self, c: &Constraint, entities: &[String]) -> Result<(), Vec<String>> {
        let mut v = Validator {
            model: self,
            schema: None,
            problems: Vec::new(),
        };
        v.constraint("proposed constraint", c, entities);
        v.into_result()
    }

    /// Checks one typed plan change proposed from outside the model file, like
    /// [`SemanticModel::check_constraint`].
    pub fn check_change(&self, ch: &PlanChange, entities: &[String]) -> Result<(), Vec<String>> {
        let mut v = Validator {
            model: self,
            schema: None,
            problems: Vec::new(),
        };
        v.change("proposed change", ch, entities);
        v.into_result()
    }
}

struct Validator<'m> {
    model: &'m SemanticModel,
    schema: Option<&'m SchemaInfo>,
    problems: Vec<Problem>,
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn q(s: &str) -> String {
    format!("\"{s}\"")
}

/// Levenshtein distance, for "did you mean" hints.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

fn did_you_mean<'a>(wrong: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    // A name that extends or truncates the right one ("onset" for "onset_date") counts
    // as one edit away.
    let score = |c: &str| {
        if c.starts_with(wrong) || wrong.starts_with(c) {
            1
        } else {
            distance(wrong, c)
        }
    };
    let best = candidates.map(|c| (score(c), c)).min_by_key(|(d, _)| *d);
    match best {
        Some((d, c)) if d <= (wrong.len() / 3).max(2) => format!(" (did you mean \"{c}\"?)"),
        _ => String::new(),
    }
}

impl<'m> Validator<'m> {
    fn into_result(self) -> Result<(), Vec<String>> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(self.problems.into_iter().map(|p| p.message).collect())
        }
    }

    fn problem(&mut self, entry: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            entry: entry.to_owned(),
            message: message.into(),
        });
    }

    fn run(&mut self) {
        if self.model.model.name.trim().is_empty() {
            self.problem("[model]", "name is empty");
        }
        self.entities();
        self.joins();
        self.time_dimensions();
        self.derived_cycles();
        self.measures();
        self.areas();
        self.terms();
    }

    // ---------- references ----------

    fn entity(&mut self, entry: &str, name: &str) -> Option<&'m Entity> {
        let found = self.model.entity(name);
        if found.is_none() {
            let hint = self
                .model
                .find_entity(name)
                .map(|e| format!(" (did you mean \"{}\"?)", e.name))
                .unwrap_or_else(|| did_you_mean(name, self.model.entities.iter().map(|e| e.name.as_str())));
            self.problem(entry, format!("unknown entity {}{hint}", q(name)));
        }
        found
    }

    /// Resolves a qualified attribute, reporting an unknown one with a hint.
    fn attribute(&mut self, entry: &str, qualified: &str) -> Option<(&'m Entity, &'m Attribute)> {
        if let Some(r) = self.model.attribute(qualified) {
            return Some((r.entity, r.attribute));
        }
        let Some((e, a)) = split_qualified(qualified) else {
            self.problem(
                entry,
                format!(
                    "{} is not a qualified attribute (write \"entity.attribute\")",
                    q(qualified)
                ),
            );
            return None;
        };
        let hint = match self
            .model
            .find_entity(e)
            .and_then(|ent| ent.attribute(a).map(|_| ent))
        {
            Some(ent) => format!(" (did you mean \"{}.{a}\"?)", ent.name),
            None => {
                let all: Vec<String> = self
                    .model
                    .entities
                    .iter()
                    .flat_map(|en| {
                        en.attributes
                            .iter()
                            .map(move |at| format!("{}.{}", en.name, at.name))
                    })
                    .collect();
                did_you_mean(qualified, all.iter().map(String::as_str))
            }
        };
        self.problem(entry, format!("unknown attribute {}{hint}", q(qualified)));
        None
    }

    fn reachable(&mut self, entry: &str, from: &str, to: &str, what: &str) {
        if self.model.entity(from).is_some()
            && self.model.entity(to).is_some()
            && self.model.join_path(from, to).is_none()
        {
            self.problem(
                entry,
                format!("{what} cannot be reached from entity {} (no join path)", q(from)),
            );
        }
    }

    fn span(&mut self, entry: &str, span: &Span) {
        if span.n == 0 {
            self.problem(entry, "a time span must be at least 1");
        }
    }

    // ---------- entities and attributes ----------

    fn entities(&mut self) {
        let mut names = HashSet::new();
        let mut words: HashMap<String, &str> = HashMap::new();
        for e in &self.model.entities {
            let entry = format!("entity {}", q(&e.name));
            if !is_identifier(&e.name) {
                self.problem(&entry, "the name must be a plain identifier (letters, digits, _)");
            }
            if !names.insert(e.name.as_str()) {
                self.problem(&entry, "duplicate entity name");
            }
            if !is_identifier(&e.table) {
                self.problem(&entry, format!("table {} is not a plain identifier", q(&e.table)));
            } else if let Some(s) = self.schema
                && !s.tables.contains_key(&e.table)
            {
                let hint = did_you_mean(&e.table, s.tables.keys().map(String::as_str));
                self.problem(&entry, format!("unknown table {}{hint}", q(&e.table)));
            }
            let mut listed = HashSet::new();
            for w in &e.synonyms {
                if !listed.insert(normalize_phrase(w)) {
                    self.problem(&entry, format!("synonym {} is listed twice", q(w)));
                }
            }
            // The name and label may repeat a synonym; only another entity may not.
            let mut own = HashSet::new();
            for w in std::iter::once(&e.name).chain([&e.label]).chain(&e.synonyms) {
                let n = normalize_phrase(w);
                if !own.insert(n.clone()) {
                    continue;
                }
                match words.get(&n) {
                    Some(other) => self.problem(
                        &entry,
                        format!("synonym {} is also used by entity {}", q(w), q(other)),
                    ),
                    None => {
                        words.insert(n, &e.name);
                    }
                }
            }
            if e.attribute(&e.key).is_none() {
                self.problem(
                    &entry,
                    format!("key {} is not an attribute of the entity", q(&e.key)),
                );
            }
            if let Some(d) = &e.display_attribute
                && e.attribute(d).is_none()
            {
                self.problem(
                    &entry,
                    format!("display_attribute {} is not an attribute of the entity", q(d)),
                );
            }
            for a in &e.list_attributes {
                if e.attribute(a).is_none() {
                    self.problem(
                        &entry,
                        format!("list_attributes: {} is not an attribute of the entity", q(a)),
                    );
                }
            }
            for t in &e.unknown_word_terms {
                match self.model.terms.iter().find(|x| x.id == *t) {
                    None => self.problem(&entry, format!("unknown_word_terms: unknown term {}", q(t))),
                    Some(x) if !x.applies_to.is_empty() && !x.applies_to.contains(&e.name) => self.problem(
                        &entry,
                        format!("unknown_word_terms: term {} does not apply to this entity", q(t)),
                    ),
                    Some(_) => {}
                }
            }
            if let Some(d) = &e.default_time_dimension {
                match self.model.time_dimension(d) {
                    None => self.problem(&entry, format!("unknown default time dimension {}", q(d))),
                    Some(dim) => {
                        if let Some((owner, _)) = split_qualified(&dim.attribute) {
                            self.reachable(&entry, &e.name, owner, &format!("time dimension {}", q(d)));
                        }
                    }
                }
            }
            let mut attr_names = HashSet::new();
            let mut attr_words: HashMap<String, &str> = HashMap::new();
            for a in &e.attributes {
                let aentry = format!("attribute \"{}.{}\"", e.name, a.name);
                if !attr_names.insert(a.name.as_str()) {
                    self.problem(&aentry, "duplicate attribute name");
                }
                let mut listed = HashSet::new();
                for w in &a.synonyms {
                    if !listed.insert(normalize_phrase(w)) {
                        self.problem(&aentry, format!("synonym {} is listed twice", q(w)));
                    }
                }
                for w in std::iter::once(&a.name).chain(&a.synonyms) {
                    let n = normalize_phrase(w);
                    match attr_words.get(&n) {
                        Some(other) if *other != a.name => self.problem(
                            &aentry,
                            format!(
                                "synonym {} is also used by attribute \"{}.{other}\"",
                                q(w),
                                e.name
                            ),
                        ),
                        Some(_) => {}
                        None => {
                            attr_words.insert(n, &a.name);
                        }
                    }
                }
                self.attribute_def(e, a, &aentry);
            }
        }
    }

    fn attribute_def(&mut self, e: &'m Entity, a: &'m Attribute, entry: &str) {
        if !is_identifier(&a.name) {
            self.problem(entry, "the name must be a plain identifier (letters, digits, _)");
        }
        if !(a.weight > 0.0 && a.weight <= 1.0) {
            self.problem(entry, format!("weight {} is outside (0, 1]", a.weight));
        }
        match (&a.column, &a.derived) {
            (Some(_), Some(_)) => self.problem(entry, "has both a column and a derivation; keep one"),
            (None, None) => self.problem(entry, "has neither a column nor a derivation"),
            (Some(column), None) => {
                if !is_identifier(column) {
                    self.problem(entry, format!("column {} is not a plain identifier", q(column)));
                } else if let Some(s) = self.schema
                    && let Some(table) = s.tables.get(&e.table)
                {
                    match table.columns.get(column) {
                        None => {
                            let hint = did_you_mean(column, table.columns.keys().map(String::as_str));
                            self.problem(
                                entry,
                                format!("unknown column {} of table {}{hint}", q(column), q(&e.table)),
                            )
                        }
                        Some(info) if !info.fits(a.ty) => self.problem(
                            entry,
                            format!(
                                "column {}.{} is {}, which cannot hold type {}",
                                e.table, column, info.sql_type, a.ty
                            ),
                        ),
                        Some(_) => {}
                    }
                }
            }
            (None, Some(d)) => self.derived(e, a, d, entry),
        }
        if let Some(allowed) = &a.allowed {
            if let AllowedValues::Static { values } = allowed
                && values.is_empty()
            {
                self.problem(
                    entry,
                    "static allowed values are empty (list values or use source = \"database\")",
                );
            }
            let mut seen_values = Vec::new();
            let mut seen_words: HashMap<String, String> = HashMap::new();
            for v in allowed.listed() {
                if let Err(m) = value_fits(a.ty, &v.value) {
                    self.problem(entry, format!("allowed value {v}: {m}", v = v.value));
                }
                if seen_values.contains(&&v.value) {
                    self.problem(entry, format!("allowed value {} is listed twice", v.value));
                }
                seen_values.push(&v.value);
                for w in &v.synonyms {
                    let n = normalize_phrase(w);
                    let this = v.value.to_string();
                    match seen_words.get(&n) {
                        Some(other) if *other != this => self.problem(
                            entry,
                            format!("synonym {} is used by allowed values {other} and {this}", q(w)),
                        ),
                        _ => {
                            seen_words.insert(n, this);
                        }
                    }
                }
            }
        }
    }

    fn same_entity_attr(&mut self, e: &'m Entity, entry: &str, name: &str) -> Option<&'m Attribute> {
        let found = e.attribute(name);
        if found.is_none() {
            let hint = did_you_mean(name, e.attributes.iter().map(|a| a.name.as_str()));
            self.problem(entry, format!("unknown attribute \"{}.{name}\"{hint}", e.name));
        }
        found
    }

    fn date_operand(&mut self, e: &'m Entity, entry: &str, d: &DateOperand) {
        if let DateOperand::Attribute(name) = d
            && let Some(a) = self.same_entity_attr(e, entry, name)
            && a.ty != AttributeType::Date
        {
            self.problem(entry, format!("\"{}.{name}\" is {}, not a date", e.name, a.ty));
        }
    }

    fn derived(&mut self, e: &'m Entity, a: &'m Attribute, d: &'m Derived, entry: &str) {
        let expected: Option<AttributeType> = match d {
            Derived::DaysBetween { from, to, if_null } => {
                for op in [Some(from), Some(to), if_null.as_ref()].into_iter().flatten() {
                    self.date_operand(e, entry, op);
                }
                Some(AttributeType::Integer)
            }
            Derived::YearsBetween { from, to } => {
                self.date_operand(e, entry, from);
                self.date_operand(e, entry, to);
                Some(AttributeType::Integer)
            }
            Derived::Latest { attribute, by } | Derived::First { attribute, by } => {
                let source = self.attribute(entry, attribute);
                if let Some((se, _)) = source {
                    if se.name == e.name {
                        self.problem(
                            entry,
                            format!("{} must name an attribute of a related entity", q(attribute)),
                        );
                    }
                    self.reachable(entry, &e.name, &se.name, &format!("attribute {}", q(attribute)));
                    match by {
                        Some(b) => {
                            if let Some((be, ba)) = self.attribute(entry, b) {
                                if be.name != se.name {
                                    self.problem(
                                        entry,
                                        format!("{} must belong to entity {}", q(b), q(&se.name)),
                                    );
                                }
                                if ba.ty != AttributeType::Date {
                                    self.problem(entry, format!("{} is {}, not a date", q(b), ba.ty));
                                }
                            }
                        }
                        None if se.default_time_dimension.is_none() => self.problem(
                            entry,
                            format!("entity {} has no default time dimension; give `by`", q(&se.name)),
                        ),
                        None => {}
                    }
                }
                source.map(|(_, sa)| sa.ty)
            }
            Derived::CountRelated { entity } => {
                if self.entity(entry, entity).is_some() {
                    self.reachable(entry, &e.name, entity, &format!("entity {}", q(entity)));
                }
                Some(AttributeType::Integer)
            }
            Derived::PercentChange { from, to } => {
                for name in [from, to] {
                    if let Some(x) = self.same_entity_attr(e, entry, name)
                        && !x.ty.is_numeric()
                    {
                        self.problem(entry, format!("\"{}.{name}\" is {}, not a number", e.name, x.ty));
                    }
                }
                Some(AttributeType::Real)
            }
            Derived::Difference { from, to } => {
                let mut ty = None;
                for name in [from, to] {
                    if let Some(x) = self.same_entity_attr(e, entry, name) {
                        if !x.ty.is_numeric() {
                            self.problem(entry, format!("\"{}.{name}\" is {}, not a number", e.name, x.ty));
                        }
                        ty = match (ty, x.ty) {
                            (Some(AttributeType::Real), _) | (_, AttributeType::Real) => {
                                Some(AttributeType::Real)
                            }
                            (_, t) => Some(t),
                        };
                    }
                }
                ty
            }
        };
        if let Some(t) = expected
            && t != a.ty
        {
            self.problem(
                entry,
                format!(
                    "the derivation gives type {t}, but the attribute is declared {}",
                    a.ty
                ),
            );
        }
    }

    fn derived_cycles(&mut self) {
        let mut deps: HashMap<String, Vec<String>> = HashMap::new();
        for e in &self.model.entities {
            for a in &e.attributes {
                let local = |n: &str| format!("{}.{n}", e.name);
                let ds: Vec<String> = match &a.derived {
                    Some(Derived::DaysBetween { from, to, if_null }) => {
                        [Some(from), Some(to), if_null.as_ref()]
                            .into_iter()
                            .flatten()
                            .filter_map(|d| match d {
                                DateOperand::Attribute(n) => Some(local(n)),
                                DateOperand::Today => None,
                            })
                            .collect()
                    }
                    Some(Derived::YearsBetween { from, to }) => [from, to]
                        .into_iter()
                        .filter_map(|d| match d {
                            DateOperand::Attribute(n) => Some(local(n)),
                            DateOperand::Today => None,
                        })
                        .collect(),
                    Some(Derived::Latest { attribute, by } | Derived::First { attribute, by }) => {
                        std::iter::once(attribute.clone()).chain(by.clone()).collect()
                    }
                    Some(Derived::PercentChange { from, to } | Derived::Difference { from, to }) => {
                        vec![local(from), local(to)]
                    }
                    Some(Derived::CountRelated { .. }) | None => Vec::new(),
                };
                deps.insert(local(&a.name), ds);
            }
        }
        let mut reported = HashSet::new();
        let mut names: Vec<&String> = deps.keys().collect();
        names.sort();
        for start in names {
            // Depth-first from `start`; a path back to `start` is a cycle.
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = HashSet::new();
            while let Some((node, path)) = stack.pop() {
                for next in deps.get(&node).into_iter().flatten() {
                    if next == start {
                        if path.iter().all(|p| !reported.contains(p)) {
                            reported.extend(path.iter().cloned());
                            let chain = path
                                .iter()
                                .chain([start])
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(" → ");
                            self.problem(
                                &format!("attribute {}", q(start)),
                                format!("the derivation refers back to itself: {chain}"),
                            );
                        }
                    } else if seen.insert(next.clone()) {
                        let mut p = path.clone();
                        p.push(next.clone());
                        stack.push((next.clone(), p));
                    }
                }
            }
        }
    }

    // ---------- joins, time dimensions, measures, areas ----------

    fn joins(&mut self) {
        let mut seen = HashSet::new();
        for j in &self.model.joins {
            let entry = format!("join \"{} -> {}\"", j.from, j.to);
            if !seen.insert((j.from.as_str(), j.to.as_str())) {
                self.problem(&entry, "duplicate join");
            }
            let from = self.attribute(&entry, &j.from);
            let to = self.attribute(&entry, &j.to);
            if let (Some((fe, fa)), Some((te, ta))) = (from, to) {
                if fe.name == te.name {
                    self.problem(&entry, "a join must connect two different entities");
                }
                if fa.ty != ta.ty {
                    self.problem(&entry, format!("joins {} to {}", fa.ty, ta.ty));
                }
                if fa.derived.is_some() || ta.derived.is_some() {
                    self.problem(&entry, "a join must use plain columns, not derived attributes");
                }
            }
        }
    }

    fn time_dimensions(&mut self) {
        let mut names = HashSet::new();
        for d in &self.model.time_dimensions {
            let entry = format!("time dimension {}", q(&d.name));
            if !names.insert(d.name.as_str()) {
                self.problem(&entry, "duplicate time dimension name");
            }
            if let Some((_, a)) = self.attribute(&entry, &d.attribute)
                && a.ty != AttributeType::Date
            {
                self.problem(
                    &entry,
                    format!("attribute {} is {}, not a date", q(&d.attribute), a.ty),
                );
            }
        }
    }

    fn measures(&mut self) {
        let mut names = HashSet::new();
        for m in &self.model.measures {
            let entry = format!("measure {}", q(&m.name));
            if !names.insert(m.name.as_str()) {
                self.problem(&entry, "duplicate measure name");
            }
            if self.entity(&entry, &m.entity).is_none() {
                continue;
            }
            let needs_attribute = !matches!(m.agg, MeasureAgg::Count | MeasureAgg::Share);
            match (&m.attribute, needs_attribute) {
                (None, true) => self.problem(&entry, format!("{} needs an attribute", m.agg.as_str())),
                (Some(a), _) => {
                    if let Some((ae, at)) = self.attribute(&entry, a) {
                        self.reachable(&entry, &m.entity, &ae.name, &format!("attribute {}", q(a)));
                        let ok = match m.agg {
                            MeasureAgg::Sum | MeasureAgg::Avg | MeasureAgg::Median => at.ty.is_numeric(),
                            MeasureAgg::Min | MeasureAgg::Max => at.ty.is_ordered(),
                            _ => true,
                        };
                        if !ok {
                            self.problem(
                                &entry,
                                format!(
                                    "cannot aggregate {} attribute {} with {}",
                                    at.ty,
                                    q(a),
                                    m.agg.as_str()
                                ),
                            );
                        }
                    }
                }
                (None, false) => {}
            }
            let ctx = [m.entity.clone()];
            match (&m.condition, m.agg) {
                (None, MeasureAgg::Share) => self.problem(&entry, "share needs a condition"),
                (Some(_), agg) if agg != MeasureAgg::Share => {
                    self.problem(&entry, "only a share measure takes a condition (use filter)")
                }
                (Some(c), _) => self.constraint(&entry, c, &ctx),
                (None, _) => {}
            }
            if let Some(f) = &m.filter {
                self.constraint(&entry, f, &ctx);
            }
        }
    }

    fn areas(&mut self) {
        let mut names = HashSet::new();
        for a in &self.model.areas {
            let entry = format!("area {}", q(&a.name));
            if !names.insert(a.name.as_str()) {
                self.problem(&entry, "duplicate area name");
            }
            if a.entities.is_empty() {
                self.problem(&entry, "lists no entities");
            }
            for e in &a.entities {
                self.entity(&entry, e);
            }
            for at in &a.attributes {
                self.attribute(&entry, at);
            }
            for m in &a.measures {
                if self.model.measure(m).is_none() {
                    self.problem(&entry, format!("unknown measure {}", q(m)));
                }
            }
            for r in &a.related {
                if r == &a.name {
                    self.problem(&entry, "an area cannot be related to itself");
                } else if self.model.area(r).is_none() {
                    self.problem(&entry, format!("unknown related area {}", q(r)));
                }
            }
            for s in &a.suggestions {
                if s.text.trim().is_empty() {
                    self.problem(&entry, "a suggestion has no text");
                }
            }
        }
    }

    // ---------- the dictionary ----------

    fn terms(&mut self) {
        let mut ids = HashSet::new();
        let mut phrases: HashMap<String, &str> = HashMap::new();
        for t in &self.model.terms {
            let entry = format!("term {}", q(&t.id));
            if t.id.trim().is_empty() {
                self.problem(&entry, "the id is empty");
            }
            if !ids.insert(t.id.as_str()) {
                self.problem(&entry, "duplicate term id");
            }
            for p in t.phrases() {
                let n = normalize_phrase(p);
                if n.is_empty() {
                    self.problem(&entry, "a phrase or variant is empty");
                    continue;
                }
                match phrases.get(&n) {
                    Some(other) if *other == t.id => {
                        self.problem(&entry, format!("phrase {} is listed twice", q(p)))
                    }
                    Some(other) => self.problem(
                        &entry,
                        format!("phrase {} is also used by term {}", q(p), q(other)),
                    ),
                    None => {
                        phrases.insert(n, &t.id);
                    }
                }
            }
            if t.question.trim().is_empty() {
                self.problem(&entry, "the question is empty");
            }
            if t.applies_to.is_empty() {
                self.problem(&entry, "applies_to lists no entities");
            }
            let mut ctx = Vec::new();
            for e in &t.applies_to {
                if self.entity(&entry, e).is_some() {
                    ctx.push(e.clone());
                }
            }
            if !OPTIONS_RANGE.contains(&t.options.len()) {
                self.problem(
                    &entry,
                    format!("has {} options; a term needs 2 to 5", t.options.len()),
                );
            }
            match t.options.iter().filter(|o| o.default).count() {
                1 => {}
                0 => self.problem(
                    &entry,
                    "no option is the default (set default = true on exactly one)",
                ),
                n => self.problem(
                    &entry,
                    format!("{n} options are marked default; exactly one must be"),
                ),
            }
            let mut option_ids = HashSet::new();
            for o in &t.options {
                let oentry = format!("term {}, option {}", q(&t.id), q(&o.id));
                if !option_ids.insert(o.id.as_str()) {
                    self.problem(&oentry, "duplicate option id");
                }
                if o.label.trim().is_empty() {
                    self.problem(&oentry, "the label is empty");
                }
                if o.constraint.is_none() && o.change.is_none() {
                    self.problem(&oentry, "has neither a constraint nor a change");
                }
                if t.kind == TermKind::Column
                    && (o.constraint.is_some()
                        || !matches!(o.change, Some(PlanChange::ChooseAttribute { .. })))
                {
                    self.problem(
                        &oentry,
                        "a column term's options must each be a choose_attribute change only",
                    );
                }
                if let Some(c) = &o.constraint {
                    self.constraint(&oentry, c, &ctx);
                }
                if let Some(ch) = &o.change {
                    self.change(&oentry, ch, &ctx);
                }
                if let Some(w) = &o.when {
                    if !matches!(
                        w,
                        Constraint::Compare {
                            op: CompareOp::Eq,
                            ..
                        } | Constraint::InSet { .. }
                    ) {
                        self.problem(&oentry, "`when` must be an equality or a set of values");
                    }
                    self.constraint(&format!("{oentry}, when"), w, &ctx);
                }
            }
        }
    }

    // ---------- typed constraints and plan changes ----------

    /// Checks a constraint applied to questions about any of `ctx` (entity names).
    fn constraint(&mut self, entry: &str, c: &Constraint, ctx: &[String]) {
        match c {
            Constraint::Compare {
                attribute,
                op,
                value,
                unit,
            } => {
                if let Some(a) = self.typed_attribute(entry, attribute, ctx) {
                    if op.is_ordering() && !a.ty.is_ordered() {
                        self.problem(
                            entry,
                            format!(
                                "cannot compare {} attribute {} with {}",
                                a.ty,
                                q(attribute),
                                op.as_str()
                            ),
                        );
                    }
                    self.literal(entry, attribute, a, value);
                    self.unit(entry, attribute, a, unit.as_deref());
                }
            }
            Constraint::Between {
                attribute,
                min,
                max,
                unit,
            } => {
                if let Some(a) = self.typed_attribute(entry, attribute, ctx) {
                    if !a.ty.is_ordered() {
                        self.problem(
                            entry,
                            format!("between needs a number or date, {} is {}", q(attribute), a.ty),
                        );
                    }
                    let ok_min = self.literal(entry, attribute, a, min);
                    let ok_max = self.literal(entry, attribute, a, max);
                    let reversed = match (min, max) {
                        (Value::Text(x), Value::Text(y)) => x > y,
                        _ => matches!((min.as_f64(), max.as_f64()), (Some(x), Some(y)) if x > y),
                    };
                    if ok_min && ok_max && reversed {
                        self.problem(entry, format!("between has min {min} above max {max}"));
                    }
                    self.unit(entry, attribute, a, unit.as_deref());
                }
            }
            Constraint::InSet { attribute, values } => {
                if let Some(a) = self.typed_attribute(entry, attribute, ctx) {
                    if values.is_empty() {
                        self.problem(entry, format!("in_set on {} lists no values", q(attribute)));
                    }
                    for v in values {
                        self.literal(entry, attribute, a, v);
                    }
                }
            }
            Constraint::IsNull { attribute } | Constraint::NotNull { attribute } => {
                self.typed_attribute(entry, attribute, ctx);
            }
            Constraint::TimeWindow {
                dimension,
                last: span,
            }
            | Constraint::OlderThan { dimension, age: span } => {
                self.span(entry, span);
                self.dimension(entry, dimension.as_deref(), ctx);
            }
            Constraint::Change {
                attribute,
                per,
                over,
                op: _,
                pct,
            } => {
                self.span(entry, over);
                if !pct.is_finite() {
                    self.problem(entry, "change pct must be a finite number");
                }
                if let Some(a) = self.typed_attribute(entry, attribute, ctx) {
                    if !a.ty.is_numeric() {
                        self.problem(
                            entry,
                            format!("change needs a numeric attribute, {} is {}", q(attribute), a.ty),
                        );
                    }
                    let owner = split_qualified(attribute).map_or("", |(e, _)| e);
                    if self
                        .model
                        .entity(owner)
                        .is_some_and(|e| e.default_time_dimension.is_none())
                    {
                        self.problem(
                            entry,
                            format!(
                                "change needs dated rows, but entity {} has no default time dimension",
                                q(owner)
                            ),
                        );
                    }
                    if self.entity(entry, per).is_some() {
                        self.reachable(entry, per, owner, &format!("attribute {}", q(attribute)));
                    }
                }
                for e in ctx {
                    self.reachable(entry, e, per, &format!("entity {}", q(per)));
                }
            }
            Constraint::RelatedCount {
                per,
                related,
                op: _,
                value: _,
                within,
                condition,
            } => {
                let Some(rel) = self.entity(entry, related) else {
                    return;
                };
                if let Some(c) = condition {
                    for a in c.attributes() {
                        if !a.starts_with(&format!("{related}.")) {
                            self.problem(
                                entry,
                                format!(
                                    "the condition of a related count must be on {}, not {}",
                                    q(related),
                                    q(a)
                                ),
                            );
                        }
                    }
                }
                if let Some(w) = within {
                    self.span(entry, w);
                    if rel.default_time_dimension.is_none() {
                        self.problem(
                            entry,
                            format!(
                                "within needs dated rows, but entity {} has no default time dimension",
                                q(related)
                            ),
                        );
                    }
                }
                let counting: Vec<String> = match per {
                    Some(p) => {
                        if self.entity(entry, p).is_none() {
                            return;
                        }
                        for e in ctx {
                            self.reachable(entry, e, p, &format!("entity {}", q(p)));
                        }
                        vec![p.clone()]
                    }
                    None => ctx.to_vec(),
                };
                for e in &counting {
                    if e == related {
                        self.problem(
                            entry,
                            format!("related_count counts entity {} within itself", q(e)),
                        );
                    }
                    self.reachable(entry, e, related, &format!("entity {}", q(related)));
                }
            }
            Constraint::All { of } | Constraint::Any { of } => {
                if of.is_empty() {
                    self.problem(entry, format!("{} has no members", c.kind_name()));
                }
                for m in of {
                    self.constraint(entry, m, ctx);
                }
            }
            Constraint::Not { of } => self.constraint(entry, of, ctx),
        }
    }

    /// Resolves an attribute and checks it is reachable from every context entity.
    fn typed_attribute(&mut self, entry: &str, qualified: &str, ctx: &[String]) -> Option<&'m Attribute> {
        let (owner, a) = self.attribute(entry, qualified)?;
        for e in ctx {
            self.reachable(entry, e, &owner.name, &format!("attribute {}", q(qualified)));
        }
        Some(a)
    }

    /// Checks a literal against an attribute's type and static allowed values.
    fn literal(&mut self, entry: &str, qualified: &str, a: &Attribute, value: &Value) -> bool {
        if let Err(m) = value_fits(a.ty, value) {
            self.problem(entry, format!("value {value} for {}: {m}", q(qualified)));
            return false;
        }
        if let Some(allowed @ AllowedValues::Static { .. }) = self.model.allowed_values(qualified)
            && !allowed
                .listed()
                .iter()
                .any(|v| &v.value == value || same_number(&v.value, value))
        {
            let list: Vec<String> = allowed.listed().iter().map(|v| v.value.to_string()).collect();
            self.problem(
                entry,
                format!(
                    "value {value} is not an allowed value of {} (allowed: {})",
                    q(qualified),
                    list.join(", ")
                ),
            );
            return false;
        }
        true
    }

    fn unit(&mut self, entry: &str, qualified: &str, a: &Attribute, unit: Option<&str>) {
        if let Some(u) = unit
            && a.unit.as_deref() != Some(u)
        {
            let has = a
                .unit
                .as_deref()
                .map_or("no unit".to_owned(), |x| format!("unit \"{x}\""));
            self.problem(
                entry,
                format!("unit \"{u}\" does not match {} which has {has}", q(qualified)),
            );
        }
    }

    fn dimension(&mut self, entry: &str, dimension: Option<&str>, ctx: &[String]) {
        match dimension {
            Some(d) => match self.model.time_dimension(d) {
                None => {
                    let hint = did_you_mean(d, self.model.time_dimensions.iter().map(|t| t.name.as_str()));
                    self.problem(entry, format!("unknown time dimension {}{hint}", q(d)));
                }
                Some(dim) => {
                    let owner = split_qualified(&dim.attribute).map_or("", |(e, _)| e).to_owned();
                    for e in ctx {
                        self.reachable(entry, e, &owner, &format!("time dimension {}", q(d)));
                    }
                }
            },
            None => {
                for e in ctx {
                    if self
                        .model
                        .entity(e)
                        .is_some_and(|x| x.default_time_dimension.is_none())
                    {
                        self.problem(
                            entry,
                            format!(
                                "no dimension given and entity {} has no default time dimension",
                                q(e)
                            ),
                        );
                    }
                }
            }
        }
    }

    fn change(&mut self, entry: &str, ch: &PlanChange, ctx: &[String]) {
        match ch {
            PlanChange::ChooseAttribute { attribute } => {
                self.typed_attribute(entry, attribute, ctx);
            }
            PlanChange::ChooseEntity { entity } => {
                self.entity(entry, entity);
            }
            PlanChange::ChooseMeasure { measure } => {
                if self.model.measure(measure).is_none() {
                    let hint = did_you_mean(measure, self.model.measures.iter().map(|m| m.name.as_str()));
                    self.problem(entry, format!("unknown measure {}{hint}", q(measure)));
                }
            }
            PlanChange::ChooseAggregation { .. } => {}
            PlanChange::SetLimit { n } => {
                if *n == 0 {
                    self.problem(entry, "set_limit needs n of at least 1");
                }
            }
            PlanChange::Sort {
                attribute,
                order: _,
                limit,
            } => {
                if let Some(a) = self.typed_attribute(entry, attribute, ctx)
                    && !a.ty.is_ordered()
                    && a.ty != AttributeType::Text
                {
                    self.problem(
                        entry,
                        format!("cannot sort by {} attribute {}", a.ty, q(attribute)),
                    );
                }
                if *limit == Some(0) {
                    self.problem(entry, "sort limit must be at least 1");
                }
            }
            PlanChange::Rank {
                measure,
                per,
                order: _,
                limit,
            } => {
                if *limit == 0 {
                    self.problem(entry, "rank limit must be at least 1");
                }
                let m = self.model.measure(measure);
                if m.is_none() {
                    let hint = did_you_mean(measure, self.model.measures.iter().map(|m| m.name.as_str()));
                    self.problem(entry, format!("unknown measure {}{hint}", q(measure)));
                }
                if self.entity(entry, per).is_some()
                    && let Some(m) = m
                {
                    self.reachable(entry, per, &m.entity, &format!("measure {}", q(measure)));
                }
            }
            PlanChange::SetGrain { grain, dimension } => {
                self.dimension(entry, dimension.as_deref(), ctx);
                if let Some(d) = dimension.as_deref().and_then(|d| self.model.time_dimension(d))
                    && !d.grains.is_empty()
                    && !d.grains.contains(grain)
                {
                    self.problem(
                        entry,
                        format!("time dimension {} has no {} grain", q(&d.name), grain.as_str()),
                    );
                }
            }
        }
    }
}

fn same_number(a: &Value, b: &Value) -> bool {
    matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y)
}

/// Whether a literal can be compared with an attribute of type `ty`.
pub(crate) fn value_fits(ty: AttributeType, value: &Value) -> Result<(), String> {
    let ok = match (ty, value) {
        (AttributeType::Text, Value::Text(_)) => true,
        (AttributeType::Integer, Value::Integer(_)) => true,
        (AttributeType::Integer, Value::Real(r)) => r.fract() == 0.0,
        (AttributeType::Real, Value::Integer(_)) => true,
        (AttributeType::Real, Value::Real(r)) => r.is_finite(),
        (AttributeType::Boolean, Value::Bool(_)) => true,
        (AttributeType::Date, Value::Text(s)) => {
            return chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .map(|_| ())
                .map_err(|_| format!("{s:?} is not an ISO date (YYYY-MM-DD)"));
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{} does not fit type {ty}", value.kind_name()))
    }
}

/// The operators an attribute type supports (for the engine's custom-value input).
pub fn operators_for(ty: AttributeType) -> &'static [CompareOp] {
    use CompareOp::*;
    if ty.is_ordered() {
        &[Gt, Gte, Lt, Lte, Eq, Ne]
    } else {
        &[Eq, Ne]
    }
}

#[cfg(test)]
mod tests;
