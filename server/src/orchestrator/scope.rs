//! Clinic scope (issue 16): the clinics an account may see, as a typed constraint on
//! every plan the orchestrator runs.
//!
//! Where each entity meets a clinic is read from the semantic model, not written here:
//! the clinic entity's own key, or the first many-to-one join path (joins in file order,
//! shortest first) that ends at the clinic entity. In the wound-care model that is
//! `clinics.id`, `clinicians.clinic_id`, `patients.clinic_id` (the registered clinic),
//! `wounds.clinic_id` (the treating clinic) and, for assessments, the assessed wound's
//! `wounds.clinic_id`. A row is visible when that clinic is in the scope, and so is every
//! row a statement reads to answer about it: [`ScopePaths::rows`] gives the renderer one
//! constraint per entity, rendered on every table reference (`crate::sql::scope`), so a
//! patient's wound count counts only the wounds in scope, a clinician's assessment count
//! only the assessments of wounds in scope, and a parent outside the scope (a referred
//! wound's patient registered at another clinic) is not joined: its attributes read as
//! empty and filters on them do not hold.
//!
//! An entity with no path to a clinic cannot be scoped: a scoped account is refused
//! such a plan (fail closed) rather than shown every row.
//!
//! A question that names a clinic outside the scope is answered about what the account
//! may see: the named clinic is taken out of the plan and the answer carries a note,
//! never that clinic's numbers (the scope constraint would hide them anyway).
//!
//! Must not: render SQL (the renderer does, with every id bound), read the database, or
//! know about HTTP. The engine never sees the scope.

use crate::engine::QueryPlan;
use crate::semantic::{AttributeRole, AttributeType, CompareOp, Constraint, SemanticModel, Value};
use crate::sql::RowScope;
use crate::store::ClinicScope;
use std::collections::BTreeMap;

/// The entity a scope lists rows of.
pub const CLINIC_ENTITY: &str = "clinics";

/// How every entity of a model reaches the clinic entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopePaths {
    /// The clinic entity's key, qualified (`clinics.id`).
    key: String,
    /// The attribute naming a clinic for people (`clinics.name`).
    display: Option<String>,
    /// Entity → the qualified attribute holding its clinic id.
    per_entity: BTreeMap<String, String>,
    /// Text attributes whose values name clinic-owned records (every text attribute of
    /// the clinic entity, the names of clinicians …): a scoped account is offered only
    /// the values in its scope.
    listed: Vec<String>,
}

/// Why a plan could not be scoped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{entity} records have no clinic, so they cannot be limited to your clinics")]
pub struct Unscoped {
    pub entity: String,
}

/// A scoped plan and what was taken out of the question to scope it.
#[derive(Clone, Debug, PartialEq)]
pub struct Scoped {
    pub plan: QueryPlan,
    /// The clinics the question named that are outside the scope (names, or "clinic 7").
    pub outside: Vec<String>,
    /// The rows of every entity the plan's statement may read: rendered on every table
    /// it reads, not only the plan's own (`crate::sql::scope`).
    pub rows: RowScope,
}

impl ScopePaths {
    /// The paths of `model`, or `None` when it has no [`CLINIC_ENTITY`] (no scoping possible:
    /// a scoped account is then refused every plan).
    pub fn from_model(model: &SemanticModel) -> Option<Self> {
        let clinic = model.entities.iter().find(|e| e.name == CLINIC_ENTITY)?;
        let key = format!("{}.{}", clinic.name, clinic.key);
        let display = clinic
            .display_attribute
            .as_ref()
            .map(|d| format!("{}.{d}", clinic.name));
        let mut per_entity = BTreeMap::new();
        per_entity.insert(clinic.name.clone(), key.clone());
        for e in &model.entities {
            if e.name == clinic.name {
                continue;
            }
            // Breadth first over many-to-one joins (`from` holds the reference), in file order.
            let mut frontier = vec![e.name.as_str()];
            let mut seen = vec![e.name.as_str()];
            'search: while !frontier.is_empty() {
                let mut next = Vec::new();
                for at in frontier {
                    for j in model.joins.iter().filter(|j| j.from_entity() == at) {
                        if j.to_entity() == clinic.name {
                            per_entity.insert(e.name.clone(), j.from.clone());
                            break 'search;
                        }
                        if !seen.contains(&j.to_entity()) {
                            seen.push(j.to_entity());
                            next.push(j.to_entity());
                        }
                    }
                }
                frontier = next;
            }
        }
        let listed = model
            .entities
            .iter()
            .filter(|e| per_entity.contains_key(&e.name))
            .flat_map(|e| {
                let is_clinic = e.name == clinic.name;
                e.attributes
                    .iter()
                    .filter(move |a| {
                        a.ty == AttributeType::Text
                            && a.column.is_some()
                            && (a.role == AttributeRole::Label
                                || (is_clinic && a.role == AttributeRole::Attribute))
                    })
                    .map(move |a| format!("{}.{}", e.name, a.name))
            })
            .collect();
        Some(ScopePaths {
            key,
            display,
            per_entity,
            listed,
        })
    }

    /// The qualified attribute holding `entity`'s clinic id.
    pub fn attribute(&self, entity: &str) -> Option<&str> {
        self.per_entity.get(entity).map(String::as_str)
    }

    /// The clinic entity's key (`clinics.id`) and display attribute (`clinics.name`).
    pub fn clinic_key(&self) -> &str {
        &self.key
    }

    /// The attribute naming a clinic (`clinics.name`).
    pub fn clinic_display(&self) -> Option<&str> {
        self.display.as_deref()
    }

    /// The scope as the constraint added to a plan over `entity`; `None` for all clinics.
    pub fn constraint(&self, entity: &str, scope: &ClinicScope) -> Result<Option<Constraint>, Unscoped> {
        let ClinicScope::Clinics(ids) = scope else {
            return Ok(None);
        };
        let attribute = self
            .attribute(entity)
            .ok_or_else(|| Unscoped {
                entity: entity.to_owned(),
            })?
            .to_owned();
        Ok(Some(if ids.is_empty() {
            // No clinic at all: a constraint no row meets.
            Constraint::All {
                of: vec![
                    Constraint::IsNull {
                        attribute: attribute.clone(),
                    },
                    Constraint::NotNull { attribute },
                ],
            }
        } else {
            Constraint::InSet {
                attribute,
                values: ids.iter().map(|&id| Value::Integer(id)).collect(),
            }
        }))
    }

    /// The rows of every entity `scope` allows, for the renderer: each entity with a path
    /// to a clinic gets its constraint; one without none, so a statement reading it is
    /// refused under a limited scope.
    pub fn rows(&self, scope: &ClinicScope) -> RowScope {
        match scope {
            ClinicScope::All => RowScope::All,
            ClinicScope::Clinics(_) => RowScope::limited(
                self.per_entity
                    .keys()
                    .filter_map(|e| self.constraint(e, scope).ok().flatten().map(|c| (e.clone(), c))),
            ),
        }
    }

    /// `plan` limited to `scope`: clinics the question named outside the scope are taken
    /// out (and reported), then the scope constraint is added. `visible` are the scope's
    /// clinics as (id, display name), for reading clinics named by name.
    pub fn apply(
        &self,
        plan: &QueryPlan,
        scope: &ClinicScope,
        visible: &[(i64, String)],
    ) -> Result<Scoped, Unscoped> {
        let mut plan = plan.clone();
        let mut outside = Vec::new();
        if let Some(c) = self.constraint(&plan.entity, scope)? {
            plan.filters = std::mem::take(&mut plan.filters)
                .into_iter()
                .filter_map(|f| self.narrow(f, scope, visible, &mut outside))
                .collect();
            plan.filters.push(c);
        }
        Ok(Scoped {
            plan,
            outside,
            rows: self.rows(scope),
        })
    }

    /// Whether `attribute`'s values name clinic-owned records, so that a scoped account is
    /// offered only those in its scope (clarification options, pickers).
    pub fn is_listed(&self, attribute: &str) -> bool {
        self.listed.iter().any(|a| a == attribute)
    }

    /// The listed attributes (see [`Self::is_listed`]) a constraint names by a text value.
    pub fn named_attributes(&self, c: &Constraint, out: &mut std::collections::BTreeSet<String>) {
        c.visit(&mut |m| match m {
            Constraint::Compare { attribute, .. } | Constraint::InSet { attribute, .. }
                if self.is_listed(attribute) =>
            {
                out.insert(attribute.clone());
            }
            _ => {}
        });
    }

    /// Whether an option's constraint names a record outside `scope`: a clinic id outside
    /// it, a clinic named by a foreign key's text, or a value of a listed attribute that
    /// is not among `lists` (the values the account may see, per attribute). Options that
    /// do are not offered to the account.
    pub fn hides(&self, c: &Constraint, scope: &ClinicScope, lists: &BTreeMap<String, Vec<String>>) -> bool {
        let visible = |attribute: &str, v: &Value| -> bool {
            match v {
                Value::Integer(id) if self.is_clinic_id(attribute) => scope.allows(*id),
                Value::Text(t) => {
                    let list = if self.is_clinic_id(attribute) {
                        self.display.as_ref().and_then(|d| lists.get(d))
                    } else if self.is_listed(attribute) {
                        lists.get(attribute)
                    } else {
                        return true;
                    };
                    list.is_some_and(|l| l.iter().any(|x| x.eq_ignore_ascii_case(t.trim())))
                }
                _ => true,
            }
        };
        let mut hidden = false;
        c.visit(&mut |m| match m {
            Constraint::Compare {
                attribute,
                op: CompareOp::Eq,
                value,
                ..
            } => hidden |= !visible(attribute, value),
            Constraint::InSet { attribute, values } => {
                hidden |= values.iter().any(|v| !visible(attribute, v));
            }
            _ => {}
        });
        hidden
    }

    /// Whether `attribute` holds a clinic id (the key or a reference to it).
    fn is_clinic_id(&self, attribute: &str) -> bool {
        attribute == self.key || self.per_entity.values().any(|a| a == attribute)
    }

    /// A filter without the clinics outside `scope` it names; `None` when it named only
    /// such clinics (the question is then answered for the clinics in scope).
    fn narrow(
        &self,
        c: Constraint,
        scope: &ClinicScope,
        visible: &[(i64, String)],
        outside: &mut Vec<String>,
    ) -> Option<Constraint> {
        let by_id = |v: &Value| match v {
            Value::Integer(id) => scope.allows(*id),
            _ => true,
        };
        let by_name = |v: &Value| match v {
            Value::Text(t) => visible.iter().any(|(_, n)| n.eq_ignore_ascii_case(t.trim())),
            _ => true,
        };
        let shown = |v: &Value| match v {
            Value::Integer(id) => format!("clinic {id}"),
            Value::Text(t) => t.clone(),
            other => format!("{other:?}"),
        };
        let test: Option<&dyn Fn(&Value) -> bool> = match &c {
            Constraint::InSet { attribute, .. } | Constraint::Compare { attribute, .. }
                if self.is_clinic_id(attribute) =>
            {
                Some(&by_id)
            }
            Constraint::InSet { attribute, .. } | Constraint::Compare { attribute, .. }
                if self.display.as_deref() == Some(attribute.as_str()) =>
            {
                Some(&by_name)
            }
            _ => None,
        };
        match (c, test) {
            (Constraint::InSet { attribute, values }, Some(ok)) => {
                let (keep, drop): (Vec<Value>, Vec<Value>) = values.into_iter().partition(|v| ok(v));
                outside.extend(drop.iter().map(shown));
                (!keep.is_empty()).then_some(Constraint::InSet {
                    attribute,
                    values: keep,
                })
            }
            (
                Constraint::Compare {
                    attribute,
                    op: CompareOp::Eq,
                    value,
                    unit,
                },
                Some(ok),
            ) => {
                if ok(&value) {
                    Some(Constraint::Compare {
                        attribute,
                        op: CompareOp::Eq,
                        value,
                        unit,
                    })
                } else {
                    outside.push(shown(&value));
                    None
                }
            }
            (Constraint::All { of }, _) => {
                let of: Vec<Constraint> = of
                    .into_iter()
                    .filter_map(|m| self.narrow(m, scope, visible, outside))
                    .collect();
                (!of.is_empty()).then_some(Constraint::All { of })
            }
            (other, _) => Some(other),
        }
    }
}

/// Whether a rendered statement carries `scope`: every clinic id of the scope is one of
/// its bound values (the property test and the scoped-user tests check every statement).
pub fn carries(rendered: &crate::sql::Rendered, scope: &ClinicScope) -> bool {
    match scope {
        ClinicScope::All => true,
        ClinicScope::Clinics(ids) => ids.iter().all(|id| {
            rendered
                .values
                .iter()
                .any(|v| matches!(v, crate::sql::BoundValue::Int(b) if b == id))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wound_care_entity_reaches_a_clinic_through_the_models_joins() {
        let p = ScopePaths::from_model(&SemanticModel::wound_care()).unwrap();
        assert_eq!(p.attribute("clinics"), Some("clinics.id"));
        assert_eq!(p.attribute("clinicians"), Some("clinicians.clinic_id"));
        assert_eq!(p.attribute("patients"), Some("patients.clinic_id"));
        assert_eq!(p.attribute("wounds"), Some("wounds.clinic_id"));
        assert_eq!(p.attribute("assessments"), Some("wounds.clinic_id"));
        assert_eq!(p.clinic_display(), Some("clinics.name"));
    }

    #[test]
    fn a_named_clinic_outside_the_scope_is_taken_out_and_reported() {
        let model = SemanticModel::wound_care();
        let p = ScopePaths::from_model(&model).unwrap();
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
        let mut plan = QueryPlan::new("wounds", today);
        plan.filters.push(Constraint::InSet {
            attribute: "clinics.name".into(),
            values: vec![Value::Text("Riverside".into()), Value::Text("Lakeview".into())],
        });
        plan.filters.push(Constraint::Compare {
            attribute: "wounds.clinic_id".into(),
            op: CompareOp::Eq,
            value: Value::Integer(9),
            unit: None,
        });
        let scope = ClinicScope::clinics([2]);
        let s = p.apply(&plan, &scope, &[(2, "Lakeview".into())]).unwrap();
        assert_eq!(s.outside, vec!["Riverside".to_owned(), "clinic 9".to_owned()]);
        assert_eq!(
            s.plan.filters,
            vec![
                Constraint::InSet {
                    attribute: "clinics.name".into(),
                    values: vec![Value::Text("Lakeview".into())]
                },
                Constraint::InSet {
                    attribute: "wounds.clinic_id".into(),
                    values: vec![Value::Integer(2)]
                },
            ]
        );
        // all clinics: the plan is unchanged
        let all = p.apply(&plan, &ClinicScope::All, &[]).unwrap();
        assert_eq!(all.plan, plan);
        assert!(all.outside.is_empty());
    }
}
