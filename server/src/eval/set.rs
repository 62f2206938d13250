//! The labeled question set (`server/eval/questions/*.toml`): its types, loading and
//! validation. The format is documented in `server/eval/README.md`.
//!
//! Loading checks everything a typo could break silently: unique ids, the holdout rule
//! (`holdout` ⇔ id divisible by 5), the fields each behaviour needs, dictionary terms
//! and option ids that exist in the model, spans that occur in the question. It never
//! looks at the engine or the database.

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::engine::AmbiguityKind;
use crate::semantic::{Constraint, PlanChange, SemanticModel};

/// Where the labeled set lives in the repository.
pub const DEFAULT_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/eval/questions");

/// The gold key of the result expected without any clarification.
pub const ANSWER_KEY: &str = "answer";
/// The gold key of the result after a `pick_constraint` / `pick_change` answer.
pub const CUSTOM_KEY: &str = "custom";

/// What the engine should do with a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Behaviour {
    /// Ask a clarification question first.
    Ask,
    /// Answer directly; nothing is ambiguous.
    Answer,
    /// Answer with the default reading, shown as an assumption.
    AnswerWithAssumption,
    /// Refuse: out of domain, unintelligible, hostile or data-changing.
    Refuse,
}

impl Behaviour {
    /// The name used in the files.
    pub fn as_str(self) -> &'static str {
        match self {
            Behaviour::Ask => "ask",
            Behaviour::Answer => "answer",
            Behaviour::AnswerWithAssumption => "answer_with_assumption",
            Behaviour::Refuse => "refuse",
        }
    }

    /// The engine should ask or refuse (a positive for ambiguity detection).
    pub fn is_positive(self) -> bool {
        matches!(self, Behaviour::Ask | Behaviour::Refuse)
    }

    /// A clear question: the engine should answer at once (with or without badges).
    pub fn is_clear(self) -> bool {
        matches!(self, Behaviour::Answer | Behaviour::AnswerWithAssumption)
    }
}

/// One expected ambiguity of an item.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// The ambiguity kind (the engine's names).
    pub kind: AmbiguityKind,
    /// The words of the question it concerns.
    pub span: String,
    /// The dictionary term behind it, when there is one.
    #[serde(default)]
    pub term: Option<String>,
    /// The option the simulated user picks (an option id).
    #[serde(default)]
    pub pick: Option<String>,
    /// The typed constraint the simulated user means, when no option id is known.
    #[serde(default)]
    pub pick_constraint: Option<Constraint>,
    /// The typed plan change the simulated user means, when no option id is known.
    #[serde(default)]
    pub pick_change: Option<PlanChange>,
    /// Involved in an `ask` item but should be assumed, not asked (a secondary,
    /// non-critical ambiguity next to the critical one): asking it is a false positive.
    #[serde(default)]
    pub assumed: bool,
}

impl Expected {
    /// The simulated user has an answer for this ambiguity.
    pub fn has_pick(&self) -> bool {
        self.pick.is_some() || self.pick_constraint.is_some() || self.pick_change.is_some()
    }
}

/// One labeled question.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// Unique id (the holdout rule is on it).
    pub id: u32,
    /// The question as a clinician would type it.
    pub question: String,
    /// The previous question of the thread, for follow-ups.
    #[serde(default)]
    pub previous: Option<String>,
    /// What the engine should do.
    pub behaviour: Behaviour,
    /// In the holdout part (the engine must not be tuned on it).
    pub holdout: bool,
    /// The ambiguities involved (none for `answer`).
    #[serde(default)]
    pub expect: Vec<Expected>,
    /// Gold SQL (SQLite) by interpretation: `answer`, an option id, or `custom`.
    #[serde(default)]
    pub gold: BTreeMap<String, String>,
    /// The question's family (blind items: "negation", "ids", "dates_ages" …), for the
    /// per-family figures.
    #[serde(default)]
    pub family: Option<String>,
    /// The file the item came from (set by the loader).
    #[serde(skip)]
    pub file: String,
}

impl Item {
    /// The expected ambiguity the simulated user answers (the first with a pick).
    pub fn primary(&self) -> Option<&Expected> {
        self.expect.iter().find(|e| e.has_pick())
    }

    /// The gold key after one simulated answer: the primary pick's option id, or
    /// `custom` for a typed answer.
    pub fn pick_key(&self) -> Option<&str> {
        let e = self.primary()?;
        match &e.pick {
            Some(id) if self.gold.contains_key(id) => Some(id),
            _ if self.gold.contains_key(CUSTOM_KEY) => Some(CUSTOM_KEY),
            Some(id) => Some(id),
            None => None,
        }
    }

    /// The gold SQL after one simulated answer.
    pub fn gold_after_answer(&self) -> Option<&str> {
        self.pick_key().and_then(|k| self.gold.get(k)).map(String::as_str)
    }

    /// The gold SQL with every default applied (what a non-interactive caller gets).
    pub fn gold_best_guess(&self, model: &SemanticModel) -> Option<&str> {
        if let Some(sql) = self.gold.get(ANSWER_KEY) {
            return Some(sql);
        }
        // An ask item whose pick is the term's default: that gold is the best guess too.
        let e = self.primary()?;
        let default = model.term(e.term.as_deref()?)?.default_option()?;
        (e.pick.as_deref() == Some(default.id.as_str()))
            .then(|| self.gold.get(&default.id))
            .flatten()
            .map(String::as_str)
    }

    /// Which part of the set the item is in.
    pub fn part(&self) -> Part {
        if self.id >= BLIND_FROM {
            Part::Blind
        } else if self.holdout {
            Part::Holdout
        } else {
            Part::Tuned
        }
    }
}

/// A part of the set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The 80 % the engine may be tuned on.
    Tuned,
    /// The 20 % it must not be tuned on (every id divisible by 5).
    Holdout,
    /// Written blind (ids from [`BLIND_FROM`]): by someone who read only the schema, the
    /// Glossary page and README, scored before anyone tuned on them.
    Blind,
}

/// Ids from here on are blind items (`blind*.toml`).
pub const BLIND_FROM: u32 = 2000;

impl Part {
    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Tuned => "tuned",
            Part::Holdout => "holdout",
            Part::Blind => "blind",
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The fixed holdout rule: every item whose id is divisible by 5.
pub fn is_holdout_id(id: u32) -> bool {
    id.is_multiple_of(5)
}

/// The whole labeled set, sorted by id.
#[derive(Clone, Debug, Default)]
pub struct LabeledSet {
    /// The items.
    pub items: Vec<Item>,
}

/// Why the set could not be loaded: every problem found, one per line.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    #[error("cannot read {path}: {reason}")]
    Io { path: PathBuf, reason: String },
    #[error("{file}: {reason}")]
    Parse { file: String, reason: String },
    #[error("the labeled set has problems:\n{}", .0.join("\n"))]
    Invalid(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    item: Vec<Item>,
}

impl LabeledSet {
    /// Loads every `*.toml` file of `dir` (in name order) and validates the whole set
    /// against `model`.
    pub fn load(dir: &Path, model: &SemanticModel) -> Result<LabeledSet, SetError> {
        let io = |e: std::io::Error| SetError::Io {
            path: dir.to_owned(),
            reason: e.to_string(),
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        let mut texts = Vec::with_capacity(files.len());
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|e| SetError::Io {
                path: path.clone(),
                reason: e.to_string(),
            })?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            texts.push((name, text));
        }
        Self::from_texts(texts.iter().map(|(n, t)| (n.as_str(), t.as_str())), model)
    }

    /// Builds the set from `(file name, TOML text)` pairs and validates it.
    pub fn from_texts<'a>(
        texts: impl IntoIterator<Item = (&'a str, &'a str)>,
        model: &SemanticModel,
    ) -> Result<LabeledSet, SetError> {
        let mut items = Vec::new();
        for (name, text) in texts {
            let file: File = toml::from_str(text).map_err(|e| SetError::Parse {
                file: name.to_owned(),
                reason: e.to_string(),
            })?;
            items.extend(file.item.into_iter().map(|mut i| {
                i.file = name.to_owned();
                // a blind `refuse` item may leave its kind implied: out of domain
                if i.id >= BLIND_FROM && i.behaviour == Behaviour::Refuse && i.expect.is_empty() {
                    i.expect.push(Expected {
                        kind: AmbiguityKind::OutOfDomain,
                        span: i
                            .question
                            .split_whitespace()
                            .next()
                            .unwrap_or_default()
                            .to_owned(),
                        term: None,
                        pick: None,
                        pick_constraint: None,
                        pick_change: None,
                        assumed: false,
                    });
                }
                i
            }));
        }
        items.sort_by_key(|i| i.id);
        let set = LabeledSet { items };
        let problems = set.problems(model);
        if problems.is_empty() {
            Ok(set)
        } else {
            Err(SetError::Invalid(problems))
        }
    }

    /// The items of one part (both parts for `None`).
    pub fn part(&self, part: Option<Part>) -> impl Iterator<Item = &Item> {
        self.items
            .iter()
            .filter(move |i| part.is_none_or(|p| i.part() == p))
    }

    /// The ids of the holdout part.
    pub fn holdout_ids(&self) -> Vec<u32> {
        self.part(Some(Part::Holdout)).map(|i| i.id).collect()
    }

    /// Every problem with the set, as `id N (file): what is wrong`.
    pub fn problems(&self, model: &SemanticModel) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for item in &self.items {
            let mut bad = |what: String| out.push(format!("id {} ({}): {what}", item.id, item.file));
            if !seen.insert(item.id) {
                bad("duplicate id".into());
            }
            if item.id >= BLIND_FROM {
                if item.holdout {
                    bad("a blind item is not in the holdout (holdout = false)".into());
                }
            } else if item.holdout != is_holdout_id(item.id) {
                bad(format!(
                    "holdout must be {} (every id divisible by 5 is held out)",
                    is_holdout_id(item.id)
                ));
            }
            if item.question.trim().is_empty() {
                bad("empty question".into());
            }
            let has_answer = item.gold.contains_key(ANSWER_KEY);
            match item.behaviour {
                Behaviour::Answer => {
                    if !item.expect.is_empty() {
                        bad("an `answer` item expects no ambiguity".into());
                    }
                    if !has_answer {
                        bad("an `answer` item needs gold.answer".into());
                    }
                }
                Behaviour::AnswerWithAssumption => {
                    if item.expect.is_empty() {
                        bad("an `answer_with_assumption` item needs the expected ambiguity".into());
                    }
                    // blind items may leave the default reading's rows unlabeled
                    if !has_answer && item.id < BLIND_FROM {
                        bad("an `answer_with_assumption` item needs gold.answer".into());
                    }
                }
                Behaviour::Ask => {
                    if item.expect.is_empty() {
                        bad("an `ask` item needs the expected ambiguity".into());
                    }
                    if let Some(key) = item.pick_key()
                        && !item.gold.contains_key(key)
                    {
                        bad(format!("no gold SQL for the simulated answer {key:?}"));
                    }
                    if item.primary().is_none() && !item.gold.is_empty() {
                        bad("gold SQL but nothing for the simulated user to pick".into());
                    }
                }
                Behaviour::Refuse => {
                    if !item.gold.is_empty() {
                        bad("a `refuse` item has no gold SQL".into());
                    }
                    if !item.expect.iter().all(|e| e.kind == AmbiguityKind::OutOfDomain)
                        || item.expect.is_empty()
                    {
                        bad("a `refuse` item expects exactly the out_of_domain kind".into());
                    }
                }
            }
            let question = item.question.to_lowercase();
            for e in &item.expect {
                if e.assumed && item.behaviour != Behaviour::Ask {
                    bad("`assumed` only marks a secondary ambiguity of an `ask` item".into());
                }
                if !question.contains(&e.span.to_lowercase()) {
                    bad(format!("span {:?} is not in the question", e.span));
                }
                let picks = [
                    e.pick.is_some(),
                    e.pick_constraint.is_some() || e.pick_change.is_some(),
                ];
                if e.pick_constraint.is_some() && e.pick_change.is_some() {
                    bad("give pick_constraint or pick_change, not both".into());
                }
                match e.term.as_deref() {
                    Some(term_id) => match model.term(term_id) {
                        None => bad(format!("unknown dictionary term {term_id:?}")),
                        Some(term) => {
                            if let Some(pick) = &e.pick
                                && term.option(pick).is_none()
                            {
                                bad(format!("term {term_id:?} has no option {pick:?}"));
                            }
                        }
                    },
                    // a structural option with no typed effect ("every assessment") can
                    // only be picked by its id, with gold SQL under that id
                    None if picks[0]
                        && !picks[1]
                        && item.behaviour == Behaviour::Ask
                        && !e.pick.as_ref().is_some_and(|p| item.gold.contains_key(p)) =>
                    {
                        bad("a pick by option id without a term needs a typed fallback (pick_constraint) or gold SQL under that id".into())
                    }
                    None => {}
                }
            }
            for key in item.gold.keys() {
                let known = key == ANSWER_KEY
                    || key == CUSTOM_KEY
                    || item
                        .expect
                        .iter()
                        .any(|e| e.pick.as_deref() == Some(key.as_str()))
                    || item
                        .primary()
                        .and_then(|e| e.term.as_deref())
                        .and_then(|t| model.term(t))
                        .is_some_and(|t| t.option(key).is_some());
                if !known {
                    bad(format!(
                        "gold key {key:?} is neither `answer`, `custom` nor an option of the term"
                    ));
                }
            }
            if item.previous.as_deref().is_some_and(|p| p.trim().is_empty()) {
                bad("empty previous question".into());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> SemanticModel {
        SemanticModel::wound_care()
    }

    fn load(text: &str) -> Result<LabeledSet, SetError> {
        LabeledSet::from_texts([("t.toml", text)], &model())
    }

    fn problems(text: &str) -> String {
        match load(text) {
            Err(SetError::Invalid(p)) => p.join("\n"),
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn the_repository_set_loads_and_follows_its_own_rules() {
        let mut set = LabeledSet::load(Path::new(DEFAULT_DIR), &model()).unwrap_or_else(|e| panic!("{e}"));
        // the written-blind batches follow their own mix
        set.items.retain(|i| i.part() != Part::Blind);
        assert!(set.items.len() >= 250, "{} items", set.items.len());
        let ambiguous = set
            .items
            .iter()
            .filter(|i| !matches!(i.behaviour, Behaviour::Answer | Behaviour::Refuse))
            .count();
        assert!(
            ambiguous * 100 >= set.items.len() * 40,
            "{ambiguous} ambiguous of {}",
            set.items.len()
        );
        let holdout = set.holdout_ids().len();
        assert!(
            // ids divisible by 5. Tuned-only additions (written by whoever tunes the engine,
            // who must not write holdout items) have pulled it to 15.1 % (61/405); new
            // holdout items must come from someone who does not tune, as the blind ones do.
            holdout * 100 >= set.items.len() * 15 && holdout * 5 <= set.items.len() + 5,
            "{holdout} held out"
        );
    }

    #[test]
    fn every_dictionary_term_and_every_ambiguity_kind_is_covered() {
        let m = model();
        let set = LabeledSet::load(Path::new(DEFAULT_DIR), &m).unwrap();
        let terms: BTreeSet<&str> = set
            .items
            .iter()
            .flat_map(|i| &i.expect)
            .filter_map(|e| e.term.as_deref())
            .collect();
        let missing: Vec<&str> = m
            .terms
            .iter()
            .map(|t| t.id.as_str())
            .filter(|t| !terms.contains(t))
            .collect();
        assert!(missing.is_empty(), "terms without a question: {missing:?}");
        let asked: BTreeSet<AmbiguityKind> = set
            .items
            .iter()
            .filter(|i| i.behaviour.is_positive())
            .flat_map(|i| &i.expect)
            .map(|e| e.kind)
            .collect();
        use AmbiguityKind::*;
        for kind in [
            VagueQualifier,
            Column,
            Entity,
            Value,
            MissingTimeWindow,
            MissingCohort,
            ThresholdWithoutNumber,
            Aggregation,
            RankingWithoutMeasure,
            UnresolvedReference,
            OutOfDomain,
            Intent,
        ] {
            assert!(
                asked.contains(&kind),
                "no ask/refuse question of kind {}",
                kind.as_str()
            );
        }
    }

    #[test]
    fn the_holdout_rule_is_checked() {
        let p = problems(
            "[[item]]\nid = 10\nquestion = \"how many open wounds\"\nbehaviour = \"answer\"\nholdout = false\n\
             [item.gold]\nanswer = \"SELECT 1\"\n",
        );
        assert!(p.contains("holdout must be true"), "{p}");
    }

    #[test]
    fn an_unknown_option_or_a_span_not_in_the_question_is_refused() {
        let p = problems(
            r#"[[item]]
id = 1
question = "large wounds"
behaviour = "ask"
holdout = false
[[item.expect]]
kind = "vague_qualifier"
span = "huge"
term = "large"
pick = "gt1000"
[item.gold]
gt1000 = "SELECT 1"
"#,
        );
        assert!(p.contains("no option \"gt1000\""), "{p}");
        assert!(p.contains("span \"huge\""), "{p}");
    }

    #[test]
    fn misspelt_fields_are_errors_not_silently_ignored() {
        let err =
            load("[[item]]\nid = 1\nquestion = \"x\"\nbehavior = \"answer\"\nholdout = false\n").unwrap_err();
        assert!(err.to_string().contains("behavior"), "{err}");
    }

    #[test]
    fn refuse_items_carry_no_sql_and_answer_items_need_it() {
        let p = problems(
            "[[item]]\nid = 1\nquestion = \"drop table wounds\"\nbehaviour = \"refuse\"\nholdout = false\n\
             [[item.expect]]\nkind = \"out_of_domain\"\nspan = \"drop\"\n[item.gold]\nanswer = \"SELECT 1\"\n\
             [[item]]\nid = 2\nquestion = \"how many wounds\"\nbehaviour = \"answer\"\nholdout = false\n",
        );
        assert!(
            p.contains("id 1 (t.toml): a `refuse` item has no gold SQL"),
            "{p}"
        );
        assert!(
            p.contains("id 2 (t.toml): an `answer` item needs gold.answer"),
            "{p}"
        );
    }

    #[test]
    fn the_gold_after_an_answer_is_keyed_by_the_pick_or_custom() {
        let set = load(
            r#"[[item]]
id = 1
question = "top 10 wounds"
behaviour = "ask"
holdout = false
[[item.expect]]
kind = "ranking_without_measure"
span = "top 10"
pick_change = { kind = "sort", attribute = "wounds.latest_area", order = "desc", limit = 10 }
[item.gold]
custom = "SELECT 2"

[[item]]
id = 2
question = "how many serious wounds"
behaviour = "ask"
holdout = false
[[item.expect]]
kind = "vague_qualifier"
span = "serious"
term = "serious"
pick = "full_thickness"
[item.gold]
full_thickness = "SELECT 3"
"#,
        )
        .unwrap();
        let m = model();
        assert_eq!(set.items[0].gold_after_answer(), Some("SELECT 2"));
        assert_eq!(set.items[0].gold_best_guess(&m), None);
        assert_eq!(set.items[1].gold_after_answer(), Some("SELECT 3"));
        assert_eq!(
            set.items[1].gold_best_guess(&m),
            Some("SELECT 3"),
            "the pick is the default"
        );
    }

    #[test]
    fn blind_items_are_their_own_part_with_a_family_and_may_expect_an_unknown_word() {
        let set = load(
            r#"
[[item]]
id = 2001
question = "stalling wounds"
behaviour = "ask"
holdout = false
family = "unknown_word"
[[item.expect]]
kind = "unknown_word"
span = "stalling"
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let i = &set.items[0];
        assert_eq!(i.part(), Part::Blind);
        assert_eq!(i.family.as_deref(), Some("unknown_word"));
        assert_eq!(i.expect[0].kind, crate::engine::AmbiguityKind::UnknownWord);
        let p = problems(
            r#"
[[item]]
id = 2005
question = "stalling wounds"
behaviour = "refuse"
holdout = true
[[item.expect]]
kind = "out_of_domain"
span = "stalling"
"#,
        );
        assert!(p.contains("blind item is not in the holdout"), "{p}");
    }
}
