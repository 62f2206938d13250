//! Clinic scope in what a clarification offers (issue 16): a scoped account is offered
//! only options and picker values naming what it may see. The lists of names in scope
//! are read through the scoped renderer, like any statement run for the account.
//!
//! Must not: change how a question is understood (the engine still reads every name, so
//! a question naming another clinic is recognised and answered with a note).

use super::{Access, Orchestrator};
use crate::engine::{self, AllowedValuesSnapshot, QueryPlan};
use crate::store::ClinicScope;
use std::collections::BTreeMap;

impl Orchestrator {
    /// `allowed` with the clinic names limited to the clinics `access` may see, and every
    /// other list of clinic-owned names (`lists`) to those in scope (what pickers list;
    /// the engine still reads every name, so a question naming another clinic is
    /// recognised and answered with a note instead of a guess).
    pub(super) fn scoped_allowed<'a>(
        &self,
        allowed: &'a AllowedValuesSnapshot,
        access: &Access,
        lists: &BTreeMap<String, Vec<String>>,
    ) -> std::borrow::Cow<'a, AllowedValuesSnapshot> {
        let mut out = std::borrow::Cow::Borrowed(allowed);
        if access.scope != ClinicScope::All
            && let Some(paths) = self.inner.scope_paths.as_ref()
        {
            let out = out.to_mut();
            if let Some(display) = paths.clinic_display() {
                out.insert(
                    display,
                    access.visible.iter().map(|v| v.1.clone()).collect(),
                    false,
                );
            }
            for (attribute, values) in lists {
                if Some(attribute.as_str()) != paths.clinic_display() && allowed.get(attribute).is_some() {
                    out.insert(attribute, values.clone(), false);
                }
            }
        }
        out
    }

    /// The values of each of `attributes` (clinic-owned names, see
    /// [`super::ScopePaths::is_listed`]) among the rows `access` may see, read through the
    /// scoped renderer; the clinic names are the visible clinics'. A list that cannot be
    /// read is empty (nothing offered rather than everything).
    async fn scoped_lists(
        &self,
        access: &Access,
        attributes: &std::collections::BTreeSet<String>,
    ) -> BTreeMap<String, Vec<String>> {
        let mut out = BTreeMap::new();
        let Some(paths) = self.inner.scope_paths.as_ref() else {
            return out;
        };
        let rows = paths.rows(&access.scope);
        for attribute in attributes {
            if Some(attribute.as_str()) == paths.clinic_display() {
                out.insert(
                    attribute.clone(),
                    access.visible.iter().map(|v| v.1.clone()).collect(),
                );
                continue;
            }
            let Some((entity, _)) = crate::semantic::split_qualified(attribute) else {
                continue;
            };
            let mut plan = QueryPlan::new(entity, self.today());
            plan.intent = engine::Intent::GroupBy;
            plan.dimensions = vec![engine::plan::Dimension::Attribute {
                attribute: attribute.clone(),
            }];
            let values = match crate::sql::render_scoped(
                &plan,
                self.inner.model,
                self.inner.dialect,
                10_000,
                crate::sql::SummaryUse::LIVE,
                &rows,
            ) {
                Ok(r) => match self.inner.warehouse.run(&r).await {
                    Ok(result) => result
                        .rows
                        .iter()
                        .filter_map(|row| row.first()?.as_str().map(str::to_owned))
                        .collect(),
                    Err(e) => {
                        tracing::warn!(error = %e, "a scoped list was not read");
                        Vec::new()
                    }
                },
                Err(e) => {
                    tracing::warn!(error = %e, "a scoped list did not render");
                    Vec::new()
                }
            };
            out.insert(attribute.clone(), values);
        }
        out
    }

    /// For a scoped account: the options of `u`'s ambiguities that name a clinic (or a
    /// clinic's record, such as a clinician) outside its access are not offered — in a
    /// clarification round, as open questions or as an assumption's alternatives. When
    /// the best guess was one of them, leaving the word out (or the first option left)
    /// becomes the best guess; the answer itself is still scoped with a note. Returns the
    /// scoped lists read, for the pickers.
    pub(super) async fn hide_outside_options(
        &self,
        u: &mut engine::Understanding,
        access: &Access,
    ) -> BTreeMap<String, Vec<String>> {
        let Some(paths) = self.inner.scope_paths.as_ref() else {
            return BTreeMap::new();
        };
        if access.scope == ClinicScope::All {
            return BTreeMap::new();
        }
        let mut wanted = std::collections::BTreeSet::new();
        for a in &u.ambiguities {
            for o in &a.options {
                if let Some(c) = &o.effect.constraint {
                    paths.named_attributes(c, &mut wanted);
                }
            }
            if let engine::CustomValue::AllowedValue { attribute } = &a.custom
                && paths.is_listed(attribute)
            {
                wanted.insert(attribute.clone());
            }
        }
        if wanted.is_empty() {
            return BTreeMap::new();
        }
        let lists = self.scoped_lists(access, &wanted).await;
        for a in &mut u.ambiguities {
            let before = a.options.len();
            a.options.retain(|o| {
                !o.effect
                    .constraint
                    .as_ref()
                    .is_some_and(|c| paths.hides(c, &access.scope, &lists))
            });
            if a.options.len() < before && !a.options.iter().any(|o| o.default) {
                let i = a.options.iter().position(|o| o.id == "ignore").unwrap_or(0);
                if let Some(o) = a.options.get_mut(i) {
                    o.default = true;
                }
            }
        }
        lists
    }
}
