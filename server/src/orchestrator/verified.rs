//! Verified questions (issue 16, part 2): an administrator promotes an answered
//! question — their own or any user's — with the clarifications it was answered with, under a name and
//! the phrasings it should match. A new question matches when its text is one of the
//! phrasings (compared after [`normalise`]) or when the engine reads it into the same
//! plan; it is then answered by the verified definition, asks nothing, and shows
//! "Verified by <administrator>". The asker's clinic scope still applies: the verified
//! plan goes through the same scoping as every other plan.

use super::{HistoryResume, Orchestrator, OrchestratorError};
use crate::engine::{ConversationContext, QueryPlan, Resolutions};
use crate::store::{HistoryId, NewVerified, Verified};
use app::protocol::ErrorCode;
use chrono::Utc;
use serde::{Deserialize, Serialize};

/// Most phrasings one verified question matches.
pub const MAX_PHRASINGS: usize = 50;
/// Longest name.
pub const MAX_NAME_CHARS: usize = 120;

/// What a verified question is answered with (its `definition_json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Definition {
    pub resolutions: Resolutions,
    pub context: ConversationContext,
}

/// A verified question in force for one request.
#[derive(Clone, Debug)]
pub(super) struct InForce {
    pub id: i64,
    pub name: String,
    pub by: String,
    /// The administrator's question: what the engine reads.
    pub question: String,
    pub definition: Definition,
    pub plan: QueryPlan,
    pub phrasings: Vec<String>,
}

impl InForce {
    fn of(v: &Verified) -> Option<Self> {
        Some(InForce {
            id: v.id,
            name: v.name.clone(),
            by: v.verified_by_name.clone(),
            question: v.question.clone(),
            definition: serde_json::from_str(&v.definition_json).ok()?,
            plan: serde_json::from_str(&v.plan_json).ok()?,
            phrasings: v.phrasings.clone(),
        })
    }

    /// The badge text: "Verified by Alex Morgan".
    pub fn badge(&self) -> String {
        format!("Verified by {} · {}", self.by, self.name)
    }

    /// Whether `plan` is this question's plan (read on any day).
    pub fn same_plan(&self, plan: &QueryPlan) -> bool {
        let mut mine = self.plan.clone();
        mine.today = plan.today;
        &mine == plan
    }
}

/// A phrasing as compared: lower case, words of letters and digits separated by one
/// space ("How many open wounds?" and "how many  open wounds" are the same).
pub fn normalise(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The phrasings to store: the question's own and every given one, normalised, without
/// repeats or empties; a message when there are too many or one is too long.
pub fn phrasings(question: &str, given: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for p in std::iter::once(question).chain(given.iter().map(String::as_str)) {
        if p.chars().count() > crate::engine::MAX_QUESTION_CHARS {
            return Err(format!(
                "A phrasing is longer than {} characters.",
                crate::engine::MAX_QUESTION_CHARS
            ));
        }
        let n = normalise(p);
        if !n.is_empty() && !out.contains(&n) {
            out.push(n);
        }
    }
    if out.len() > MAX_PHRASINGS {
        return Err(format!("At most {MAX_PHRASINGS} phrasings."));
    }
    Ok(out)
}

fn checked_name(name: &str) -> Result<String, OrchestratorError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(OrchestratorError::bad(
            ErrorCode::BadName,
            format!("Give the verified question a name of 1 to {MAX_NAME_CHARS} characters."),
        ));
    }
    Ok(name.to_owned())
}

impl Orchestrator {
    /// Promotes an answered question `history_id` — the administrator's or anyone's
    /// (callers check that `admin_id` is an administrator) — with the clarifications its
    /// asker answered, to a verified question verified by `admin_id`.
    pub async fn verify(
        &self,
        admin_id: i64,
        history_id: &str,
        name: &str,
        given: &[String],
    ) -> Result<Verified, OrchestratorError> {
        let name = checked_name(name)?;
        let hid = HistoryId::new(history_id.to_owned());
        if !hid.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let entry = self.inner.store.any_history_entry(&hid).await?;
        let resume: HistoryResume = serde_json::from_str(&entry.clarifications_json).unwrap_or_default();
        let definition = Definition {
            resolutions: resume.resolutions,
            context: resume.context,
        };
        let phrasings = phrasings(&entry.question, given)
            .map_err(|m| OrchestratorError::bad(ErrorCode::BadPhrasings, m))?;
        let definition_json = serde_json::to_string(&definition).map_err(OrchestratorError::internal)?;
        Ok(self
            .inner
            .store
            .add_verified(
                NewVerified {
                    name: &name,
                    question: &entry.question,
                    phrasings: &phrasings,
                    definition_json: &definition_json,
                    plan_json: &entry.plan_json,
                    verified_by: admin_id,
                },
                Utc::now(),
            )
            .await?)
    }

    /// Renames a verified question and replaces its phrasings (its own question's
    /// phrasing is always kept).
    pub async fn edit_verified(
        &self,
        id: i64,
        name: &str,
        given: &[String],
    ) -> Result<Verified, OrchestratorError> {
        let name = checked_name(name)?;
        let v = self.inner.store.verified(id).await?;
        let phrasings =
            phrasings(&v.question, given).map_err(|m| OrchestratorError::bad(ErrorCode::BadPhrasings, m))?;
        Ok(self.inner.store.edit_verified(id, &name, &phrasings).await?)
    }

    /// Retires a verified question: new questions no longer match it.
    pub async fn retire_verified(&self, id: i64) -> Result<(), OrchestratorError> {
        Ok(self.inner.store.retire_verified(id, Utc::now()).await?)
    }

    /// Everyone's recent answered questions, newest first, with their askers' names:
    /// what an administrator may verify.
    pub async fn recent_answers(
        &self,
        limit: i64,
    ) -> Result<Vec<(app::protocol::HistoryItem, String)>, OrchestratorError> {
        Ok(self
            .inner
            .store
            .recent_history_all(limit.clamp(1, 200))
            .await?
            .into_iter()
            .map(|(e, asker)| (super::history_item(e), asker))
            .collect())
    }

    /// The verified questions in force.
    pub async fn verified_questions(&self) -> Result<Vec<Verified>, OrchestratorError> {
        Ok(self.inner.store.active_verified().await?)
    }

    /// The verified questions in force, readable (a row that no longer reads is skipped).
    pub(super) async fn in_force(&self) -> Result<Vec<InForce>, OrchestratorError> {
        Ok(self
            .inner
            .store
            .active_verified()
            .await?
            .iter()
            .filter_map(InForce::of)
            .collect())
    }
}

/// The verified question one of whose phrasings is `question`.
pub(super) fn by_phrasing<'a>(all: &'a [InForce], question: &str) -> Option<&'a InForce> {
    let q = normalise(question);
    all.iter().find(|v| v.phrasings.contains(&q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrasings_compare_words_not_case_spacing_or_punctuation() {
        assert_eq!(normalise("  How many OPEN wounds?? "), "how many open wounds");
        assert_eq!(
            phrasings(
                "How many open wounds?",
                &[
                    "how many open wounds".into(),
                    "open wound count".into(),
                    " ? ".into()
                ]
            ),
            Ok(vec![
                "how many open wounds".to_owned(),
                "open wound count".to_owned()
            ])
        );
        let many: Vec<String> = (0..60).map(|i| format!("q {i}")).collect();
        assert!(phrasings("q", &many).is_err());
    }
}
