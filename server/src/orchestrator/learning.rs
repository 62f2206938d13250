//! Learning from a clinician's answers (F12, issue 15 point 4): which of their past
//! answers are preselected, and which are applied without asking as "your usual
//! definition", by the rule the design documents specify.
//!
//! For one ambiguity signature (`term:serious@wounds`: the same term on the same
//! entity), a choice is applied automatically when, for that user,
//! - it was given at least [`LearningRule::min_uses`] times,
//! - at least [`LearningRule::min_successes`] of those answers were successful (a
//!   thumbs-up, or an answer kept without edits), and
//! - its confidence is above [`LearningRule::min_confidence`], where confidence is the
//!   share of the user's answers to that signature that chose it (a clinician who said
//!   "full thickness" four times and "larger than 25 cm²" once has 0.8 for the first,
//!   which is not above 0.8: still asked, the usual answer preselected).
//!
//! A choice given `min_uses` times that misses the other two conditions is preselected
//! (offered as the default) and still asked. A remembered choice ("Remember my
//! choice") always wins. Only the dictionary's options are learned this way; a custom
//! value is applied automatically only when remembered. Pure: no I/O.

use crate::store::{Preference, PreferenceChoice};
use std::collections::BTreeMap;

/// The rule's numbers (`CLARION_LEARN_MIN_USES`, `CLARION_LEARN_MIN_SUCCESSES`,
/// `CLARION_LEARN_MIN_CONFIDENCE`; README lists them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LearningRule {
    /// Times the same answer must have been given (default 3); also the count from
    /// which it is preselected.
    pub min_uses: i64,
    /// Successful uses needed before it is applied without asking (default 1).
    pub min_successes: i64,
    /// The share of the user's answers to the signature that must have chosen it, strictly
    /// above this (default 0.8).
    pub min_confidence: f64,
}

impl Default for LearningRule {
    fn default() -> Self {
        LearningRule {
            min_uses: 3,
            min_successes: 1,
            min_confidence: 0.8,
        }
    }
}

/// What a user's answers teach, per signature: the option to preselect, and the options
/// applied without asking.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Learned {
    /// Signature → option preselected (still asked).
    pub offered: BTreeMap<String, String>,
    /// Signature → option applied without asking ("your usual definition").
    pub usual: BTreeMap<String, String>,
}

/// How many answers a user gave per signature, whatever the choice: the denominator of
/// each choice's confidence. Read once per request.
#[derive(Clone, Debug, Default)]
pub struct Totals<'p>(BTreeMap<&'p str, i64>);

impl<'p> Totals<'p> {
    /// Sums one user's preferences by signature.
    pub fn of(prefs: &'p [Preference]) -> Self {
        let mut t = BTreeMap::new();
        for p in prefs {
            *t.entry(p.signature.as_str()).or_insert(0) += p.count.max(0);
        }
        Totals(t)
    }

    /// The confidence of one stored choice: its share of the user's answers to the same
    /// signature.
    pub fn confidence(&self, p: &Preference) -> f64 {
        match self.0.get(p.signature.as_str()) {
            Some(&total) if total > 0 => p.count.max(0) as f64 / total as f64,
            _ => 0.0,
        }
    }
}

impl LearningRule {
    /// Applies the rule to one user's preferences. Remembered signatures are left out:
    /// the remembered choice applies there, whatever was learned.
    pub fn learn(&self, prefs: &[Preference]) -> Learned {
        let totals = Totals::of(prefs);
        let remembered: std::collections::BTreeSet<&str> = prefs
            .iter()
            .filter(|p| p.remembered)
            .map(|p| p.signature.as_str())
            .collect();
        let mut out = Learned::default();
        for p in prefs {
            let PreferenceChoice::Option(o) = &p.choice else {
                continue;
            };
            if p.count < self.min_uses || remembered.contains(p.signature.as_str()) {
                continue;
            }
            // the most used choice of a signature decides (the store lists by count)
            if out.offered.contains_key(&p.signature) {
                continue;
            }
            out.offered.insert(p.signature.clone(), o.clone());
            if p.successes >= self.min_successes && totals.confidence(p) > self.min_confidence {
                out.usual.insert(p.signature.clone(), o.clone());
            }
        }
        out
    }
}

/// The learned choice behind an ambiguity id (`term:serious@wounds`, or its base
/// `term:serious` when the learned one was stored without an entity), as the engine
/// matches remembered choices.
pub fn usual_for<'m>(usual: &'m BTreeMap<String, String>, ambiguity_id: &str) -> Option<&'m str> {
    crate::engine::lookup_pref(usual, ambiguity_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn pref(sig: &str, option: &str, count: i64, successes: i64, remembered: bool) -> Preference {
        Preference {
            id: 0,
            user_id: 1,
            signature: sig.into(),
            choice: PreferenceChoice::Option(option.into()),
            label: format!("{sig} = {option}"),
            count,
            successes,
            remembered,
            created_at: Utc::now(),
            last_used_at: Utc::now(),
        }
    }

    #[test]
    fn three_successful_consistent_uses_are_applied_without_asking() {
        let rule = LearningRule::default();
        let l = rule.learn(&[pref("term:serious@wounds", "deep", 3, 1, false)]);
        assert_eq!(
            l.usual.get("term:serious@wounds").map(String::as_str),
            Some("deep")
        );
        assert_eq!(
            l.offered.get("term:serious@wounds").map(String::as_str),
            Some("deep")
        );
    }

    #[test]
    fn each_condition_of_the_rule_is_needed() {
        let rule = LearningRule::default();
        // two uses: neither preselected nor applied
        let l = rule.learn(&[pref("s", "a", 2, 2, false)]);
        assert!(l.offered.is_empty() && l.usual.is_empty());
        // never successful: preselected, still asked
        let l = rule.learn(&[pref("s", "a", 5, 0, false)]);
        assert_eq!(l.offered.get("s").map(String::as_str), Some("a"));
        assert!(l.usual.is_empty());
        // 4 of 5 answers (0.8) is not above 0.8: preselected, still asked
        let l = rule.learn(&[pref("s", "a", 4, 3, false), pref("s", "b", 1, 1, false)]);
        assert_eq!(l.offered.get("s").map(String::as_str), Some("a"));
        assert!(l.usual.is_empty());
        // 5 of 6 (0.83) is
        let l = rule.learn(&[pref("s", "a", 5, 1, false), pref("s", "b", 1, 0, false)]);
        assert_eq!(l.usual.get("s").map(String::as_str), Some("a"));
    }

    #[test]
    fn a_remembered_choice_wins_over_a_learned_one() {
        let rule = LearningRule::default();
        let l = rule.learn(&[pref("s", "a", 9, 9, false), pref("s", "b", 1, 0, true)]);
        assert!(l.usual.is_empty() && l.offered.is_empty());
    }

    #[test]
    fn the_numbers_are_configuration() {
        let strict = LearningRule {
            min_uses: 5,
            min_successes: 2,
            min_confidence: 0.9,
        };
        assert!(strict.learn(&[pref("s", "a", 4, 4, false)]).usual.is_empty());
        assert!(strict.learn(&[pref("s", "a", 5, 1, false)]).usual.is_empty());
        assert_eq!(
            strict
                .learn(&[pref("s", "a", 5, 2, false)])
                .usual
                .get("s")
                .map(String::as_str),
            Some("a")
        );
    }

    #[test]
    fn a_usual_choice_matches_the_ambiguity_with_or_without_its_entity() {
        let mut usual = BTreeMap::new();
        usual.insert("term:serious".to_owned(), "deep".to_owned());
        assert_eq!(usual_for(&usual, "term:serious@wounds"), Some("deep"));
        assert_eq!(usual_for(&usual, "term:large@wounds"), None);
    }
}
