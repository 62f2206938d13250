//! Saved questions (F27): a user saves one of their answers under a name, with the
//! clarifications it was answered with (the history entry's resolutions, context and
//! verified definition), and re-runs it later against today's data with exactly those —
//! through the same path as History's re-run ([`Orchestrator::rerun_resume`]), so it
//! never asks and the user's clinic scope of the day applies.
//!
//! Before a run, and for every item the list shows, the saved definition is read again
//! (the pure engine, sub-millisecond, no query): when a choice it was answered with is
//! no longer offered (a value gone from the data), a verified definition it used was
//! retired, or the question would now be read into another plan, it *no longer applies*.
//! Running it is then refused (422 `no_longer_applies`) with what changed, and the user
//! is offered to ask it afresh — the cohort is never changed silently.

use super::{HistoryResume, Orchestrator, OrchestratorError, answers, verified};
use crate::engine::{Decision, EngineInput, GateThresholds, LinkMethod, QueryPlan, Resolution, understand};
use crate::semantic::{Constraint, Value};
use crate::sql::RenderCheck;
use crate::store::{HistoryId, NewSaved, Saved, SavedId};
use app::protocol::{Answer, ErrorCode, SavedQuestion};
use chrono::Utc;
use std::time::Instant;

/// Longest name of a saved question.
pub const MAX_NAME_CHARS: usize = 120;
/// Most saved questions one user keeps (the list shows them all).
pub const MAX_SAVED_PER_USER: i64 = 500;

/// A name as stored: control characters read as spaces, trimmed, 1–120 characters.
fn checked_name(name: &str) -> Result<String, OrchestratorError> {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let name = cleaned.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(OrchestratorError::bad(
            ErrorCode::BadName,
            format!("Give the saved question a name of 1 to {MAX_NAME_CHARS} characters."),
        ));
    }
    Ok(name.to_owned())
}

fn saved_id(id: &str) -> Result<SavedId, OrchestratorError> {
    let id = SavedId::new(id.trim().to_owned());
    if id.is_well_formed() {
        Ok(id)
    } else {
        Err(OrchestratorError::NotFound)
    }
}

/// Whether a saved definition still gives the same records, and if not, why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applies {
    /// What changed, one sentence each; empty when it still applies.
    pub changes: Vec<String>,
    /// The verified definition's badge, when one answered it and is in force.
    pub verified: Option<String>,
}

impl Orchestrator {
    /// Saves answer `history_id` of `user_id` under `name`.
    pub async fn save_question(
        &self,
        user_id: i64,
        history_id: &str,
        name: &str,
    ) -> Result<SavedQuestion, OrchestratorError> {
        let name = checked_name(name)?;
        let hid = HistoryId::new(history_id.trim().to_owned());
        if !hid.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let store = &self.inner.store;
        let entry = store.history_entry(user_id, &hid).await?;
        if store.saved_count_of(user_id).await? >= MAX_SAVED_PER_USER {
            return Err(OrchestratorError::Refused {
                code: ErrorCode::Conflict,
                message: format!(
                    "You have {MAX_SAVED_PER_USER} saved questions, the most kept: delete one first."
                ),
            });
        }
        let resume: HistoryResume = serde_json::from_str(&entry.clarifications_json).unwrap_or_default();
        let saved = store
            .add_saved(
                user_id,
                NewSaved {
                    name: &name,
                    question: &entry.question,
                    definition_json: &entry.clarifications_json,
                    plan_json: &entry.plan_json,
                    source_history_id: Some(entry.id.as_str()),
                    clarified: !resume.chosen.is_empty(),
                },
                Utc::now(),
            )
            .await?;
        let applies = self.applies(user_id, &saved).await?;
        Ok(item(saved, applies))
    }

    /// Answer `history_id` of `user_id` as the save form shows it (404 for anyone else's).
    pub async fn saved_draft(
        &self,
        user_id: i64,
        history_id: &str,
    ) -> Result<app::protocol::HistoryItem, OrchestratorError> {
        let hid = HistoryId::new(history_id.trim().to_owned());
        if !hid.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let entry = self.inner.store.history_entry(user_id, &hid).await?;
        Ok(super::history_item(entry))
    }

    /// `user_id`'s saved questions, newest first, each with whether it still applies.
    pub async fn saved_questions(&self, user_id: i64) -> Result<Vec<SavedQuestion>, OrchestratorError> {
        let all = self.inner.store.saved_list(user_id, MAX_SAVED_PER_USER).await?;
        if all.is_empty() {
            return Ok(Vec::new());
        }
        let cx = self.check_context(user_id).await?;
        Ok(all
            .into_iter()
            .map(|s| {
                let applies = self.applies_with(&cx, &s.question, &s.definition_json, &s.plan_json);
                item(s, applies)
            })
            .collect())
    }

    /// One of `user_id`'s saved questions (404 for anyone else's).
    pub async fn saved_question(&self, user_id: i64, id: &str) -> Result<SavedQuestion, OrchestratorError> {
        let saved = self.inner.store.saved(user_id, &saved_id(id)?).await?;
        let applies = self.applies(user_id, &saved).await?;
        Ok(item(saved, applies))
    }

    /// Renames one of `user_id`'s saved questions.
    pub async fn rename_saved(
        &self,
        user_id: i64,
        id: &str,
        name: &str,
    ) -> Result<SavedQuestion, OrchestratorError> {
        let id = saved_id(id)?;
        let name = checked_name(name)?;
        let saved = self.inner.store.rename_saved(user_id, &id, &name).await?;
        let applies = self.applies(user_id, &saved).await?;
        Ok(item(saved, applies))
    }

    /// Deletes one of `user_id`'s saved questions.
    pub async fn delete_saved(&self, user_id: i64, id: &str) -> Result<(), OrchestratorError> {
        Ok(self.inner.store.delete_saved(user_id, &saved_id(id)?).await?)
    }

    /// Runs a saved question against today's data, in a new thread, with exactly its
    /// clarifications (never asking), under the user's clinic scope of today. A
    /// definition that no longer applies is refused with what changed.
    pub async fn run_saved(&self, user_id: i64, id: &str) -> Result<Answer, OrchestratorError> {
        let started = Instant::now();
        let id = saved_id(id)?;
        let saved = self.inner.store.saved(user_id, &id).await?;
        let applies = self.applies(user_id, &saved).await?;
        if !applies.changes.is_empty() {
            return Err(no_longer_applies(&format!("“{}”", saved.name), &applies));
        }
        let resume: HistoryResume =
            serde_json::from_str(&saved.definition_json).map_err(OrchestratorError::internal)?;
        let _slot = self.slot(user_id)?;
        let answer = self
            .rerun_resume(user_id, &saved.question, resume, started)
            .await?;
        if let Err(e) = self.inner.store.count_saved_run(user_id, &id, Utc::now()).await {
            tracing::warn!(error = %e, "a saved question's run was not counted");
        }
        Ok(answer)
    }

    async fn applies(&self, user_id: i64, saved: &Saved) -> Result<Applies, OrchestratorError> {
        let cx = self.check_context(user_id).await?;
        Ok(self.applies_with(&cx, &saved.question, &saved.definition_json, &saved.plan_json))
    }

    pub(super) async fn check_context(&self, user_id: i64) -> Result<CheckContext, OrchestratorError> {
        Ok(CheckContext {
            loaded: self.load(user_id).await?,
            in_force: self.in_force().await?,
            all_verified: self.inner.store.all_verified().await?,
        })
    }

    /// Reads a saved question (or a history entry) again as its run would (same engine
    /// input, no query) and says what no longer applies: `definition_json` is what it
    /// was answered with, `plan_json` the plan it ran.
    pub(super) fn applies_with(
        &self,
        cx: &CheckContext,
        question: &str,
        definition_json: &str,
        plan_json: &str,
    ) -> Applies {
        let Ok(resume) = serde_json::from_str::<HistoryResume>(definition_json) else {
            return Applies {
                changes: vec!["Its stored definition can no longer be read.".into()],
                verified: None,
            };
        };
        let saved_plan: Option<QueryPlan> = serde_json::from_str(plan_json).ok();
        if let Some(vid) = resume.verified {
            return match cx.in_force.iter().find(|v| v.id == vid) {
                Some(v) => Applies {
                    changes: Vec::new(),
                    verified: Some(v.badge()),
                },
                None => {
                    let name = cx
                        .all_verified
                        .iter()
                        .find(|(id, _)| *id == vid)
                        .map(|(_, n)| format!("“{n}”"))
                        .unwrap_or_else(|| "it was answered with".into());
                    Applies {
                        changes: vec![format!(
                            "The verified definition {name} was retired by an administrator."
                        )],
                        verified: None,
                    }
                }
            };
        }
        let model = self.inner.model;
        let loaded = &cx.loaded;
        let resolutions = answers::with_saved_customs(&resume.resolutions, &loaded.saved_customs);
        let check = RenderCheck { model };
        let input = EngineInput::new(model, question, self.today())
            .with_check(&check)
            .with_allowed(&loaded.allowed)
            .with_context(&resume.context)
            .with_preferences(&loaded.preferences)
            .with_thresholds(GateThresholds::for_sensitivity(loaded.settings.sensitivity))
            .with_resolutions(&resolutions);
        let u = understand(&input);
        let mut changes = Vec::new();
        if let Decision::Refuse { message, .. } = &u.decision {
            changes.push(format!("Clarion no longer answers it: {message}"));
            return Applies {
                changes,
                verified: None,
            };
        }
        let label = |id: &str| {
            resume
                .chosen
                .iter()
                .find(|(a, _)| a == id)
                .map(|(_, l)| format!("“{l}”"))
                .unwrap_or_else(|| format!("the answer to “{id}”"))
        };
        for (id, r) in &resume.resolutions.answers {
            if matches!(r, Resolution::DontKnow) {
                continue;
            }
            let applied = u.applied.iter().find(|a| &a.ambiguity_id == id);
            match applied {
                Some(a) if a.how == LinkMethod::Answered => {}
                Some(_) if u.ambiguity(id).is_some() => changes.push(format!(
                    "Your choice {} is no longer one of the options (it is not in today's data).",
                    label(id)
                )),
                _ => changes.push(format!(
                    "Your choice {} no longer applies: the question is no longer read that way.",
                    label(id)
                )),
            }
            if let Resolution::Custom { constraint } = r {
                for (attribute, v) in text_values(constraint) {
                    if let Some(values) = loaded.allowed.get(attribute)
                        && !values.truncated
                        && !values.values.iter().any(|x| x == v)
                    {
                        changes.push(format!("“{v}” is no longer in today's data."));
                    }
                }
            }
        }
        if changes.is_empty()
            && let (Some(before), Some(now)) = (&saved_plan, &u.plan)
        {
            let mut before = before.clone();
            before.today = now.today;
            if &before != now {
                // say why when a new question explains it
                let new: Vec<String> = u
                    .questions()
                    .filter(|a| !resume.resolutions.answers.contains_key(&a.id))
                    .map(|a| format!("It would now need a new clarification: {}", a.question))
                    .collect();
                if new.is_empty() {
                    changes.push(
                        "It is now read into a different query (a value, a definition or one of your remembered choices changed)."
                            .into(),
                    );
                } else {
                    changes.extend(new);
                }
            }
        }
        changes.dedup();
        Applies {
            changes,
            verified: None,
        }
    }
}

/// The refusal of a run whose definition no longer applies.
pub(super) fn no_longer_applies(what: &str, applies: &Applies) -> OrchestratorError {
    OrchestratorError::Refused {
        code: ErrorCode::NoLongerApplies,
        message: format!(
            "{what} no longer applies, so it was not run (its records would not be the same ones): {} Ask it afresh to choose again.",
            applies.changes.join(" ")
        ),
    }
}

/// What checking saved questions needs, loaded once per request.
pub(super) struct CheckContext {
    loaded: super::Loaded,
    in_force: Vec<verified::InForce>,
    /// Every verified question, retired or not: (id, name).
    all_verified: Vec<(i64, String)>,
}

/// The (attribute, text value) pairs a custom constraint names.
fn text_values(c: &Constraint) -> Vec<(&str, &str)> {
    match c {
        Constraint::Compare {
            attribute,
            value: Value::Text(v),
            ..
        } => vec![(attribute.as_str(), v.as_str())],
        Constraint::InSet { attribute, values } => values
            .iter()
            .filter_map(|v| match v {
                Value::Text(t) => Some((attribute.as_str(), t.as_str())),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn item(s: Saved, applies: Applies) -> SavedQuestion {
    let resume: HistoryResume = serde_json::from_str(&s.definition_json).unwrap_or_default();
    SavedQuestion {
        id: s.id.as_str().to_owned(),
        name: s.name,
        question: s.question,
        chosen: resume.chosen.into_iter().map(|c| c.1).collect(),
        verified: applies.verified,
        applies: applies.changes.is_empty(),
        changes: applies.changes,
        run_count: s.run_count,
        created_at: s.created_at.to_rfc3339(),
        last_run_at: s.last_run_at.map(|t| t.to_rfc3339()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_trimmed_cleaned_of_control_characters_and_limited() {
        assert_eq!(checked_name("  Serious\u{0}wounds \n").unwrap(), "Serious wounds");
        for bad in ["", "   ", "\u{0}\u{7}", &"x".repeat(MAX_NAME_CHARS + 1)] {
            assert!(
                matches!(
                    checked_name(bad),
                    Err(OrchestratorError::BadInput {
                        code: ErrorCode::BadName,
                        ..
                    })
                ),
                "{bad:?}"
            );
        }
        assert!(checked_name(&"é".repeat(MAX_NAME_CHARS)).is_ok());
    }

    #[test]
    fn a_custom_value_names_its_text_values() {
        let c = Constraint::InSet {
            attribute: "wounds.location".into(),
            values: vec![Value::Text("heel".into()), Value::Integer(3)],
        };
        assert_eq!(text_values(&c), [("wounds.location", "heel")]);
        let n = Constraint::IsNull {
            attribute: "wounds.healed_on".into(),
        };
        assert!(text_values(&n).is_empty());
    }

    #[test]
    fn junk_ids_are_not_found_without_a_query() {
        for junk in ["", "1", "../x", &"Z".repeat(32)] {
            assert!(matches!(saved_id(junk), Err(OrchestratorError::NotFound)));
        }
    }
}
