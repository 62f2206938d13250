//! Stage 2 — the model's vocabulary, indexed once per model.
//!
//! An [`EngineIndex`] maps every normalised phrase of the model (entity names and
//! synonyms, attribute names and synonyms, allowed values with their labels and
//! synonyms, measures, time dimensions, dictionary terms) to what it means, and keeps
//! the single words bucketed by length for typo correction. Building it walks the model
//! once; every question then costs hash lookups only. [`ValueLookup`] does the same for
//! the database values of an [`AllowedValuesSnapshot`].
//!
//! Phrases are normalised with [`super::tokenize`] (the same normalisation questions
//! get), so `Hard-to-heal`, `kg/m2` and `St. Brigid's` compare as the question does.
//! Pure: no I/O.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use crate::semantic::{SemanticModel, Value};

use super::AllowedValuesSnapshot;
use super::tokenize::{TokenKind, tokenize};

/// What a phrase of the model means.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// An entity (index into `model.entities`).
    Entity(usize),
    /// An attribute (entity index, attribute index).
    Attribute(usize, usize),
    /// An allowed value of an attribute (qualified attribute, the stored value).
    Value(String, Value),
    /// A measure (index into `model.measures`).
    Measure(usize),
    /// A time dimension (index into `model.time_dimensions`).
    TimeDimension(usize),
    /// A dictionary term (index into `model.terms`).
    Term(usize),
}

/// One meaning of a phrase, and whether the phrase is the thing's own name.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The meaning.
    pub target: Target,
    /// True for names, labels and values; false for synonyms.
    pub exact: bool,
}

/// The vocabulary of one semantic model.
#[derive(Debug, Default)]
pub struct EngineIndex {
    phrases: HashMap<String, Vec<Entry>>,
    words: HashSet<String>,
    by_len: HashMap<usize, Vec<String>>,
    stems: HashMap<String, Vec<Entry>>,
    /// Words that occur only in dictionary-term phrases (vague words).
    term_words: HashSet<String>,
    max_words: usize,
    fingerprint: u64,
}

/// Normalises a phrase the way questions are normalised: words only, lowercase, one
/// space between them.
pub fn normalise(phrase: &str) -> String {
    let mut out = String::new();
    for t in tokenize(phrase) {
        if matches!(t.kind, TokenKind::Punct | TokenKind::Op) {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&t.text);
    }
    out
}

impl EngineIndex {
    /// Indexes a model.
    pub fn build(model: &SemanticModel) -> Self {
        let mut ix = EngineIndex {
            fingerprint: fingerprint(model),
            ..EngineIndex::default()
        };
        for (ei, e) in model.entities.iter().enumerate() {
            ix.add(&e.name, Target::Entity(ei), true);
            ix.add(&e.label, Target::Entity(ei), true);
            for s in &e.synonyms {
                ix.add(s, Target::Entity(ei), false);
            }
            for (ai, a) in e.attributes.iter().enumerate() {
                if !matches!(
                    a.role,
                    crate::semantic::AttributeRole::Key | crate::semantic::AttributeRole::ForeignKey
                ) {
                    ix.add(&a.name, Target::Attribute(ei, ai), true);
                }
                for s in &a.synonyms {
                    ix.add(s, Target::Attribute(ei, ai), false);
                }
                let Some(allowed) = &a.allowed else { continue };
                let qualified = format!("{}.{}", e.name, a.name);
                for v in allowed.listed() {
                    let target = Target::Value(qualified.clone(), v.value.clone());
                    if let Some(s) = v.value.as_str() {
                        ix.add(s, target.clone(), true);
                    }
                    if !v.label.is_empty() {
                        ix.add(&v.label, target.clone(), true);
                    }
                    for s in &v.synonyms {
                        ix.add(s, target.clone(), false);
                    }
                }
            }
        }
        for (mi, m) in model.measures.iter().enumerate() {
            // measure names are identifiers ("avg_area"); people use the label and synonyms
            ix.add(&m.label, Target::Measure(mi), true);
            for s in &m.synonyms {
                ix.add(s, Target::Measure(mi), false);
            }
        }
        for (di, d) in model.time_dimensions.iter().enumerate() {
            for s in &d.synonyms {
                ix.add(s, Target::TimeDimension(di), false);
            }
        }
        for (ti, t) in model.terms.iter().enumerate() {
            for p in t.phrases() {
                ix.add(p, Target::Term(ti), true);
            }
        }
        let mut schema_words: HashSet<String> = HashSet::new();
        for (k, entries) in &ix.phrases {
            if entries.iter().any(|e| !matches!(e.target, Target::Term(_))) {
                schema_words.extend(k.split(' ').map(str::to_owned));
            }
        }
        ix.term_words = ix
            .words
            .iter()
            .filter(|w| !schema_words.contains(*w))
            .cloned()
            .collect();
        for w in &ix.words {
            ix.by_len.entry(w.chars().count()).or_default().push(w.clone());
        }
        let singles: Vec<(String, Vec<Entry>)> = ix
            .phrases
            .iter()
            .filter(|(k, _)| !k.contains(' '))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (word, entries) in singles {
            if let Some(s) = stem(&word) {
                let list = ix.stems.entry(s).or_default();
                for e in entries {
                    if !list.iter().any(|x| x.target == e.target) {
                        list.push(e);
                    }
                }
            }
        }
        for list in ix.by_len.values_mut() {
            list.sort();
        }
        ix
    }

    fn add(&mut self, phrase: &str, target: Target, exact: bool) {
        let key = normalise(phrase);
        if key.is_empty() {
            return;
        }
        let n = key.split(' ').count();
        self.max_words = self.max_words.max(n);
        for w in key.split(' ') {
            if w.chars().count() >= 4 && w.chars().all(char::is_alphabetic) {
                self.words.insert(w.to_owned());
            }
        }
        let list = self.phrases.entry(key).or_default();
        if let Some(existing) = list.iter_mut().find(|e| e.target == target) {
            existing.exact |= exact;
        } else {
            list.push(Entry { target, exact });
        }
    }

    /// What a normalised phrase means (empty when nothing).
    pub fn lookup(&self, phrase: &str) -> &[Entry] {
        self.phrases.get(phrase).map_or(&[], Vec::as_slice)
    }

    /// The most words any phrase has.
    pub fn max_words(&self) -> usize {
        self.max_words
    }

    /// What a single word means by its stem ("smoke" → the smoker attribute), when its
    /// exact form is not in the model.
    pub fn by_stem(&self, word: &str) -> &[Entry] {
        stem(word)
            .and_then(|s| self.stems.get(&s))
            .map_or(&[], Vec::as_slice)
    }

    /// True when the word occurs in some model phrase.
    pub fn knows_word(&self, word: &str) -> bool {
        self.words.contains(word)
    }

    /// The model word closest to `word` within a small edit distance (1 for words of 5–7
    /// letters, 2 from 8), when exactly one is closest. Short words are never corrected.
    pub fn correct(&self, word: &str) -> Option<&str> {
        let len = word.chars().count();
        if len < 5 || !word.chars().all(char::is_alphabetic) {
            return None;
        }
        let max = if len >= 8 { 2 } else { 1 };
        let mut found: Vec<(&str, usize)> = Vec::new();
        for l in len.saturating_sub(max)..=len + max {
            for cand in self.by_len.get(&l).into_iter().flatten() {
                // a short word is not corrected into a vague dictionary word ("grant" is
                // not "giant"): a wrong vague word would change the cohort
                if len < 6 && self.term_words.contains(cand) {
                    continue;
                }
                // nor two letters away from one ("recording" is not "recurring"): a vague
                // word read from a real word the model does not know changes the cohort
                let max = if self.term_words.contains(cand) { 1 } else { max };
                if let Some(d) = bounded_distance(word, cand, max) {
                    found.push((cand, d));
                }
            }
        }
        let min = found.iter().map(|&(_, d)| d).min()?;
        // Among the closest: same first letter, then vowel-for-vowel slips ("diabetis"
        // → "diabetes", not "diabetic"), then the longest shared ends.
        let score = |cand: &str| {
            let same_first = cand.chars().next() == word.chars().next();
            let vowel_slips = if cand.chars().count() == len {
                word.chars()
                    .zip(cand.chars())
                    .filter(|&(a, b)| a != b && is_vowel(a) && is_vowel(b))
                    .count()
            } else {
                0
            };
            let prefix = word.chars().zip(cand.chars()).take_while(|(a, b)| a == b).count();
            let suffix = word
                .chars()
                .rev()
                .zip(cand.chars().rev())
                .take_while(|(a, b)| a == b)
                .count();
            (same_first, vowel_slips, prefix + suffix)
        };
        let mut best: Vec<(&str, (bool, usize, usize))> = found
            .into_iter()
            .filter(|&(_, d)| d == min)
            .map(|(c, _)| (c, score(c)))
            .collect();
        best.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        match best.as_slice() {
            [] => None,
            [(only, _)] => Some(only),
            [(first, s1), (_, s2), ..] => (s1 != s2).then_some(*first),
        }
    }

    /// The cached index of a model: built once per model (keyed by the model's address
    /// and a fingerprint of its contents), shared by every question.
    pub fn for_model(model: &SemanticModel) -> Arc<EngineIndex> {
        type Cache = Mutex<Vec<(usize, u64, Arc<EngineIndex>)>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
        let addr = model as *const SemanticModel as usize;
        let fp = fingerprint(model);
        let mut guard = cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, ix)) = guard.iter().find(|(a, f, _)| *a == addr && *f == fp) {
            return Arc::clone(ix);
        }
        let ix = Arc::new(EngineIndex::build(model));
        guard.retain(|(a, _, _)| *a != addr);
        if guard.len() >= 16 {
            guard.remove(0);
        }
        guard.push((addr, fp, Arc::clone(&ix)));
        ix
    }

    /// True when this index was built from a model with these contents.
    pub fn matches(&self, model: &SemanticModel) -> bool {
        self.fingerprint == fingerprint(model)
    }
}

/// A cheap content hash of a model (names, phrases and option ids), so a cached index is
/// rebuilt when a model at the same address changed.
fn fingerprint(model: &SemanticModel) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |s: &str| {
        for b in s.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(&model.model.name);
    eat(&model.model.version);
    for e in &model.entities {
        eat(&e.name);
        e.synonyms.iter().for_each(|s| eat(s));
        for a in &e.attributes {
            eat(&a.name);
            a.synonyms.iter().for_each(|s| eat(s));
            if let Some(allowed) = &a.allowed {
                for v in allowed.listed() {
                    eat(&v.label);
                    v.synonyms.iter().for_each(|s| eat(s));
                }
            }
        }
    }
    for m in &model.measures {
        eat(&m.name);
        m.synonyms.iter().for_each(|s| eat(s));
    }
    for t in &model.terms {
        eat(&t.id);
        t.variants.iter().for_each(|s| eat(s));
        t.applies_to.iter().for_each(|s| eat(s));
        for o in &t.options {
            eat(&o.id);
            eat(if o.default { "d" } else { "-" });
        }
    }
    h
}

/// A crude stem: common English endings removed, at least 4 letters kept.
pub fn stem(word: &str) -> Option<String> {
    if !word.chars().all(char::is_alphabetic) {
        return None;
    }
    for suffix in ["ings", "ing", "ers", "er", "es", "ed", "e", "s"] {
        if let Some(s) = word.strip_suffix(suffix)
            && s.chars().count() >= 4
        {
            return Some(s.to_owned());
        }
    }
    (word.chars().count() >= 4).then(|| word.to_owned())
}

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y')
}

/// Damerau–Levenshtein (optimal string alignment) distance, or `None` when above `max`.
pub fn bounded_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        let mut row_min = usize::MAX;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return None;
        }
    }
    let v = d[a.len() * w + b.len()];
    (v <= max).then_some(v)
}

/// One database value a phrase of the question may name.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueHit {
    /// Qualified attribute.
    pub attribute: String,
    /// The stored value.
    pub value: String,
    /// Matched on a leading part of a longer value ("Riverside" for "Riverside Care Home").
    pub prefix: bool,
}

/// The database values of a snapshot, by normalised phrase (whole values and leading
/// parts of multi-word values).
#[derive(Debug, Default)]
pub struct ValueLookup {
    exact: HashMap<String, Vec<ValueHit>>,
    prefixes: HashMap<String, Vec<ValueHit>>,
    max_words: usize,
}

impl ValueLookup {
    /// Indexes a snapshot.
    pub fn build(snapshot: &AllowedValuesSnapshot) -> Self {
        let mut lk = ValueLookup::default();
        for (attribute, values) in snapshot.iter() {
            for v in &values.values {
                let key = normalise(v);
                if key.is_empty() {
                    continue;
                }
                let words: Vec<&str> = key.split(' ').collect();
                lk.max_words = lk.max_words.max(words.len());
                let hit = ValueHit {
                    attribute: attribute.to_owned(),
                    value: v.clone(),
                    prefix: false,
                };
                push_unique(lk.exact.entry(key.clone()).or_default(), hit);
                for k in 1..words.len() {
                    let prefix = words[..k].join(" ");
                    if prefix.chars().count() < 5 || is_common_word(&prefix) {
                        continue;
                    }
                    let hit = ValueHit {
                        attribute: attribute.to_owned(),
                        value: v.clone(),
                        prefix: true,
                    };
                    push_unique(lk.prefixes.entry(prefix).or_default(), hit);
                }
            }
        }
        lk
    }

    /// Values whose whole normalised text is `phrase`.
    pub fn exact(&self, phrase: &str) -> &[ValueHit] {
        self.exact.get(phrase).map_or(&[], Vec::as_slice)
    }

    /// Multi-word values starting with `phrase`.
    pub fn prefix(&self, phrase: &str) -> &[ValueHit] {
        self.prefixes.get(phrase).map_or(&[], Vec::as_slice)
    }

    /// The most words a value has.
    pub fn max_words(&self) -> usize {
        self.max_words
    }
}

fn push_unique(list: &mut Vec<ValueHit>, hit: ValueHit) {
    if !list
        .iter()
        .any(|h| h.attribute == hit.attribute && h.value == hit.value)
    {
        list.push(hit);
    }
}

/// Everyday words that are never corrected towards a model word and never start a value.
pub fn is_common_word(word: &str) -> bool {
    static COMMON: OnceLock<HashSet<&'static str>> = OnceLock::new();
    COMMON
        .get_or_init(|| {
            [
                "a",
                "about",
                "above",
                "across",
                "after",
                "again",
                "against",
                "ago",
                "all",
                "also",
                "am",
                "among",
                "an",
                "and",
                "any",
                "anyone",
                "are",
                "around",
                "as",
                "at",
                "average",
                "be",
                "because",
                "been",
                "before",
                "being",
                "below",
                "best",
                "between",
                "both",
                "breakdown",
                "broken",
                "but",
                "by",
                "can",
                "change",
                "changed",
                "come",
                "compare",
                "compared",
                "comparison",
                "could",
                "count",
                "counts",
                "data",
                "day",
                "days",
                "did",
                "display",
                "do",
                "does",
                "doing",
                "done",
                "down",
                "during",
                "each",
                "either",
                "else",
                "ever",
                "every",
                "except",
                "excluding",
                "few",
                "fewer",
                "fewest",
                "find",
                "first",
                "for",
                "from",
                "get",
                "give",
                "given",
                "going",
                "got",
                "greater",
                "group",
                "grouped",
                "had",
                "has",
                "have",
                "having",
                "he",
                "her",
                "here",
                "higher",
                "highest",
                "him",
                "his",
                "how",
                "however",
                "i",
                "if",
                "in",
                "include",
                "including",
                "instead",
                "into",
                "is",
                "it",
                "its",
                "just",
                "know",
                "last",
                "least",
                "less",
                "like",
                "list",
                "look",
                "lower",
                "lowest",
                "made",
                "make",
                "many",
                "maximum",
                "me",
                "might",
                "minimum",
                "month",
                "months",
                "monthly",
                "more",
                "most",
                "much",
                "must",
                "my",
                "need",
                "never",
                "next",
                "no",
                "non",
                "nor",
                "not",
                "now",
                "number",
                "of",
                "off",
                "on",
                "once",
                "one",
                "ones",
                "only",
                "or",
                "order",
                "ordered",
                "other",
                "others",
                "our",
                "out",
                "over",
                "past",
                "per",
                "please",
                "quarter",
                "quarters",
                "rank",
                "ranked",
                "ranking",
                "rather",
                "same",
                "see",
                "seen",
                "show",
                "shows",
                "since",
                "so",
                "some",
                "sort",
                "sorted",
                "split",
                "still",
                "such",
                "sum",
                "tell",
                "than",
                "that",
                "the",
                "their",
                "them",
                "then",
                "there",
                "these",
                "they",
                "this",
                "those",
                "through",
                "to",
                "today",
                "top",
                "total",
                "trend",
                "under",
                "until",
                "up",
                "us",
                "versus",
                "very",
                "vs",
                "want",
                "was",
                "we",
                "week",
                "weeks",
                "weekly",
                "were",
                "what",
                "when",
                "where",
                "whether",
                "which",
                "while",
                "who",
                "whom",
                "whose",
                "why",
                "will",
                "with",
                "within",
                "without",
                "would",
                "year",
                "years",
                "yearly",
                "yesterday",
                "you",
                "your",
                "between",
                "quarterly",
                "annually",
                "january",
                "february",
                "march",
                "april",
                "may",
                "june",
                "july",
                "august",
                "september",
                "october",
                "november",
                "december",
                "percentage",
                "percent",
                "proportion",
                "share",
                "ratio",
                "highest",
                "largest",
                "smallest",
                "bottom",
                "median",
                "mean",
                "maximum",
                "minimum",
                "exactly",
                "least",
                "being",
                "there",
                "their",
                "things",
                "thing",
                "stuff",
                "info",
                "information",
                "details",
                "detail",
                "records",
                "record",
                "rows",
                "table",
                "tables",
                "entries",
                "items",
                "overview",
                "summary",
                "summarise",
                "summarize",
                "report",
                "would",
                "should",
                "could",
                "shall",
                "these",
                "those",
                "other",
                "another",
                "others",
                "everything",
                "anything",
                "something",
                "nothing",
                "people",
                "between",
                "since",
                "start",
                "starting",
                "ending",
                "end",
                "ended",
                "begin",
                "beginning",
                "following",
                "previous",
                "prior",
                "earlier",
                "later",
                "latest",
                "recently",
                "current",
                "older",
                "younger",
                "bigger",
                "smaller",
                "larger",
                "longer",
                "shorter",
                "deeper",
                "wider",
                "across",
                "along",
                "versus",
                "twice",
                "times",
                "time",
                "again",
                "back",
                "forward",
                "ahead",
                // "distinct patients": never a typo of "district"
                "distinct",
                "unique",
                "different",
                "separate",
                "individual",
            ]
            .into_iter()
            .collect()
        })
        .contains(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> SemanticModel {
        SemanticModel::wound_care()
    }

    #[test]
    fn phrases_are_normalised_like_questions() {
        assert_eq!(normalise("Hard-to-heal"), "hard to heal");
        assert_eq!(normalise("St. Brigid's Care Home"), "st brigid care home");
        assert_eq!(normalise("kg/m2"), "kg m2");
    }

    #[test]
    fn the_index_knows_entities_values_measures_and_terms() {
        let m = model();
        let ix = EngineIndex::build(&m);
        assert!(
            ix.lookup("ulcers")
                .iter()
                .any(|e| matches!(e.target, Target::Entity(_)))
        );
        assert!(
            ix.lookup("dfu")
                .iter()
                .any(|e| matches!(&e.target, Target::Value(a, _) if a == "wounds.etiology"))
        );
        assert!(
            ix.lookup("healing rate")
                .iter()
                .any(|e| matches!(e.target, Target::Measure(_)))
        );
        assert!(
            ix.lookup("large")
                .iter()
                .any(|e| matches!(e.target, Target::Term(_)))
        );
        assert!(
            ix.lookup("hard to heal")
                .iter()
                .any(|e| matches!(e.target, Target::Term(_)))
        );
    }

    #[test]
    fn typos_are_corrected_to_the_one_closest_model_word() {
        let m = model();
        let ix = EngineIndex::build(&m);
        let table = [
            ("wuonds", "wounds"),
            ("presure", "pressure"),
            ("clinc", "clinic"),
            ("diabetis", "diabetes"),
        ];
        for (typo, want) in table {
            assert_eq!(ix.correct(typo), Some(want), "{typo}");
        }
        assert_eq!(ix.correct("zzzzzz"), None);
        assert_eq!(ix.correct("abc"), None, "short words are never corrected");
    }

    #[test]
    fn edit_distance_counts_transpositions_as_one() {
        assert_eq!(bounded_distance("wuonds", "wounds", 1), Some(1));
        assert_eq!(bounded_distance("kitten", "sitting", 2), None);
        assert_eq!(bounded_distance("kitten", "sitting", 3), Some(3));
    }

    #[test]
    fn the_cached_index_is_rebuilt_when_the_model_changes() {
        let mut m = model();
        let a = EngineIndex::for_model(&m);
        let b = EngineIndex::for_model(&m);
        assert!(Arc::ptr_eq(&a, &b));
        m.entities[0].synonyms.push("surgery".into());
        let c = EngineIndex::for_model(&m);
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(c.matches(&m));
    }

    #[test]
    fn snapshot_values_match_whole_and_leading_words() {
        let mut s = AllowedValuesSnapshot::empty();
        s.insert(
            "clinics.name",
            vec!["Riverside Community Wound Care".into(), "Mercy Care Home".into()],
            false,
        );
        let lk = ValueLookup::build(&s);
        assert_eq!(lk.exact("mercy care home").len(), 1);
        assert_eq!(lk.prefix("riverside").len(), 1);
        assert!(lk.prefix("mercy").first().is_some_and(|h| h.prefix));
    }
}
