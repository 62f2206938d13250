//! Stage 4 — schema linking: which words of the question name which parts of the model.
//!
//! Greedy longest match over the question's words against the [`EngineIndex`] (entity,
//! attribute, value, measure, time-dimension and dictionary phrases) and the database
//! values of the snapshot. Words the model does not know are corrected towards the
//! closest model word first ("wuonds" → "wounds"), and such matches are marked fuzzy
//! (confidence 0.85, F4). Then comparisons with numbers are read: `area > 25 cm²`,
//! `patients over 80`, `larger than 10 cm2`, `7 or more`, `more than 3 wounds`, with
//! units converted to the attribute's unit.
//!
//! Linking only says what words *may* mean (a word can name several things); choosing a
//! reading is the job of [`super::draft`] and [`super::ambiguity`]. Pure.

use crate::semantic::{AttributeType, CompareOp, Derived, SemanticModel, split_qualified};

use super::TextSpan;
use super::tokenize::{Token, TokenKind, singular};
use super::vocab::{EngineIndex, Entry, Target, ValueHit, ValueLookup, is_common_word};

/// Confidence of an exact or synonym link.
pub const EXACT: f64 = 1.0;
/// Confidence of a fuzzy (typo-corrected) link.
pub const FUZZY: f64 = 0.85;
/// Confidence of a default applied for something the question did not say.
pub const DEFAULT: f64 = 0.7;

/// A run of words that names something in the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Mention {
    /// First token.
    pub first: usize,
    /// One past the last token.
    pub last: usize,
    /// Bytes of the question.
    pub span: TextSpan,
    /// The normalised phrase that matched.
    pub phrase: String,
    /// Model meanings (several when the phrase is ambiguous).
    pub entries: Vec<Entry>,
    /// Database values of the snapshot.
    pub values: Vec<ValueHit>,
    /// A typo correction was needed.
    pub fuzzy: bool,
}

impl Mention {
    /// The confidence of the link itself (before weights).
    pub fn confidence(&self) -> f64 {
        if self.fuzzy || self.values.iter().all(|v| v.prefix) && self.entries.is_empty() {
            FUZZY
        } else {
            EXACT
        }
    }

    /// The meanings `pick` keeps.
    fn targets<T: Copy + 'static>(&self, pick: fn(&Target) -> Option<T>) -> impl Iterator<Item = T> + '_ {
        self.entries.iter().filter_map(move |e| pick(&e.target))
    }

    /// The terms among the meanings.
    pub fn terms(&self) -> impl Iterator<Item = usize> + '_ {
        self.targets(|t| if let Target::Term(x) = *t { Some(x) } else { None })
    }

    /// True when the phrase names a value of an attribute ("smokers", "open"), from the
    /// model or the database's values.
    pub fn names_value(&self) -> bool {
        !self.values.is_empty() || self.entries.iter().any(|e| matches!(e.target, Target::Value(..)))
    }

    /// The entities among the meanings.
    /// The attributes whose values the phrase names (model values and database values).
    pub fn value_attributes(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| match &e.target {
                Target::Value(a, _) => Some(a.clone()),
                _ => None,
            })
            .collect();
        v.extend(self.values.iter().map(|h| h.attribute.clone()));
        v
    }

    pub fn entity(&self) -> Option<usize> {
        self.targets(|t| if let Target::Entity(x) = *t { Some(x) } else { None })
            .next()
    }

    /// The measure among the meanings.
    pub fn measure(&self) -> Option<usize> {
        self.targets(|t| {
            if let Target::Measure(x) = *t {
                Some(x)
            } else {
                None
            }
        })
        .next()
    }

    /// The attributes among the meanings.
    pub fn attributes(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.targets(|t| {
            if let Target::Attribute(a, b) = *t {
                Some((a, b))
            } else {
                None
            }
        })
    }

    /// The time dimension among the meanings.
    pub fn time_dimension(&self) -> Option<usize> {
        self.targets(|t| {
            if let Target::TimeDimension(x) = *t {
                Some(x)
            } else {
                None
            }
        })
        .next()
    }

    /// True when the phrase was the thing's own name (not a synonym).
    pub fn exact(&self) -> bool {
        self.entries.iter().any(|e| e.exact)
    }
}

/// The word forms used for matching: the token text, or its correction.
struct Forms {
    forms: Vec<Option<(String, bool)>>,
    segment: Vec<usize>,
}

fn forms(tokens: &[Token], index: &EngineIndex) -> Forms {
    let mut forms = Vec::with_capacity(tokens.len());
    let mut segment = Vec::with_capacity(tokens.len());
    let mut seg = 0;
    for (i, t) in tokens.iter().enumerate() {
        if t.kind == TokenKind::Punct
            && matches!(t.text.as_str(), "," | ";" | "?" | "!" | ":" | "(" | ")" | "\"")
        {
            seg += 1;
        }
        segment.push(seg);
        if !t.is_wordlike() {
            forms.push(None);
            continue;
        }
        // clinical shorthand the model does not list
        let expanded = match t.text.as_str() {
            "pts" | "pats" => Some("patients"),
            "pt" => Some("patient"),
            "assmt" | "assmnt" => Some("assessment"),
            "assmts" | "assmnts" => Some("assessments"),
            "hx" => Some("history"),
            // "staged 3 or 4", "graded 2": the participle names the value as "stage 3" does
            "staged" | "graded" | "categorised" | "categorized"
                if tokens.get(i + 1).is_some_and(|n| n.kind == TokenKind::Number) =>
            {
                Some(match t.text.as_str() {
                    "staged" => "stage",
                    "graded" => "grade",
                    _ => "category",
                })
            }
            _ => None,
        };
        if let Some(e) = expanded {
            forms.push(Some((e.to_owned(), false)));
            continue;
        }
        let known = t.kind != TokenKind::Word
            || index.knows_word(&t.text)
            || is_common_word(&t.text)
            || !index.lookup(&t.text).is_empty()
            || singular(&t.text).is_some_and(|s| index.knows_word(&s) || !index.lookup(&s).is_empty());
        if known {
            forms.push(Some((t.text.clone(), false)));
        } else if let Some(c) = index.correct(&t.text) {
            forms.push(Some((c.to_owned(), true)));
        } else {
            forms.push(Some((t.text.clone(), false)));
        }
    }
    Forms { forms, segment }
}

/// Links the question's words to the model. `blocked` tokens (time expressions) are
/// skipped.
pub fn link(tokens: &[Token], index: &EngineIndex, values: &ValueLookup, blocked: &[bool]) -> Vec<Mention> {
    let f = forms(tokens, index);
    let max = index.max_words().max(values.max_words()).clamp(1, 8);
    // every phrase that matches, then the best non-overlapping ones: longer first, and a
    // phrase starting with a function word ("with infection") loses to one that does not
    // ("infection signs")
    let mut candidates: Vec<(f64, Mention)> = Vec::new();
    for i in 0..tokens.len() {
        if f.forms[i].is_none() || blocked.get(i).copied().unwrap_or(false) {
            continue;
        }
        for n in 1..=max {
            let Some(p) = phrase_words(&f, tokens, blocked, i, n) else {
                continue;
            };
            let (words, fuzzy) = (p.words, p.fuzzy);
            // a database value is matched on the words as written: "Oak Ridge Limb
            // Preservation Center" is a clinic even though "preservation" alone would be
            // corrected to "presentation", and "Bayside Nursing & Rehabilitation Center"
            // even with its "&" (values are indexed without punctuation)
            let found = if p.inner_punct {
                whole_value(values, &p.written)
            } else {
                lookup_phrase(index, values, &words, fuzzy)
                    .or_else(|| fuzzy.then(|| whole_value(values, &p.written)).flatten())
            };
            if let Some(m) = found {
                let last = i + n;
                // "the 5 most recent assessments": a count of records, not the date of a
                // record's latest visit
                if n > 1
                    && i > 0
                    && tokens[i - 1].kind == TokenKind::Number
                    && words.last().is_some_and(|w| w.ends_with('s'))
                    && !m.0.is_empty()
                    && m.0.iter().all(|e| matches!(e.target, Target::TimeDimension(_)))
                {
                    continue;
                }
                let mut score = n as f64;
                if is_common_word(&words[0]) && n > 1 {
                    score -= 0.5;
                }
                if m.2 {
                    score -= 0.1;
                }
                candidates.push((
                    score,
                    Mention {
                        first: i,
                        last,
                        span: TextSpan::new(tokens[i].span.start, tokens[last - 1].span.end),
                        phrase: words.join(" "),
                        entries: m.0,
                        values: m.1,
                        fuzzy: m.2,
                    },
                ));
            }
        }
    }
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.first.cmp(&b.1.first)));
    let mut taken = vec![false; tokens.len()];
    let mut out: Vec<Mention> = Vec::new();
    for (_, m) in candidates {
        if taken[m.first..m.last].iter().any(|t| *t) {
            continue;
        }
        taken[m.first..m.last].iter_mut().for_each(|t| *t = true);
        out.push(m);
    }
    shared_head_lists(tokens, index, values, &mut taken, &mut out);
    out.sort_by_key(|m| m.first);
    split_listed_terms(tokens, index, values, &mut out);
    out
}

/// "moderate or high exudate", "slough or necrotic tissue": a value listed before a
/// dictionary phrase whose first word is another value of the same attribute ("high
/// exudate") lists two values; the phrase is read as that value and its attribute's word.
fn split_listed_terms(tokens: &[Token], index: &EngineIndex, values: &ValueLookup, out: &mut Vec<Mention>) {
    let mut i = 0;
    while i + 1 < out.len() {
        let (m, n) = (&out[i], &out[i + 1]);
        let attrs = m.value_attributes();
        let joined =
            n.first == m.last + 1 && matches!(tokens[m.last].text.as_str(), "or" | "and" | "," | "/");
        if attrs.is_empty() || !joined || n.last - n.first != 2 || n.terms().next().is_none() {
            i += 1;
            continue;
        }
        let words: Vec<String> = n.phrase.split(' ').map(str::to_owned).collect();
        let (Some(head), Some(tail)) = (
            lookup_phrase(index, values, &words[..1], false),
            lookup_phrase(index, values, &words[1..], false),
        ) else {
            i += 1;
            continue;
        };
        let head = Mention {
            first: n.first,
            last: n.first + 1,
            span: tokens[n.first].span,
            phrase: words[0].clone(),
            entries: head.0,
            values: head.1,
            fuzzy: false,
        };
        if !head.value_attributes().iter().any(|a| attrs.contains(a)) {
            i += 1;
            continue;
        }
        let tail = Mention {
            first: n.first + 1,
            last: n.last,
            span: tokens[n.first + 1].span,
            phrase: words[1].clone(),
            entries: tail.0,
            values: tail.1,
            fuzzy: false,
        };
        out.splice(i + 1..i + 2, [head, tail]);
        i += 2;
    }
}

/// "stage 3 and 4", "stage 2, 3 or 4": numbers listed after a value whose words end in a
/// number share its head word; each is the value "<head> <number>" of the same attribute.
fn shared_head_lists(
    tokens: &[Token],
    index: &EngineIndex,
    values: &ValueLookup,
    taken: &mut [bool],
    out: &mut Vec<Mention>,
) {
    let mut added = Vec::new();
    for m in out.iter() {
        if m.last - m.first < 2 || tokens[m.last - 1].kind != TokenKind::Number {
            continue;
        }
        let attrs = m.value_attributes();
        if attrs.is_empty() {
            continue;
        }
        let head: Vec<String> = m.phrase.split(' ').map(str::to_owned).collect();
        let head = &head[..head.len() - 1];
        let mut k = m.last;
        while k + 1 < tokens.len()
            && matches!(tokens[k].text.as_str(), "," | "and" | "or" | "&" | "/" | "nor")
            && tokens[k + 1].kind == TokenKind::Number
            && !taken[k + 1]
        {
            let mut words = head.to_vec();
            words.push(tokens[k + 1].text.clone());
            let Some(found) = lookup_phrase(index, values, &words, false) else {
                break;
            };
            let next = Mention {
                first: k + 1,
                last: k + 2,
                span: tokens[k + 1].span,
                phrase: words.join(" "),
                entries: found.0,
                values: found.1,
                fuzzy: false,
            };
            if !next.value_attributes().iter().any(|a| attrs.contains(a)) {
                break;
            }
            taken[k + 1] = true;
            added.push(next);
            k += 2;
        }
    }
    out.extend(added);
}

/// The words of a candidate phrase: as matched (corrections applied) and as written.
struct PhraseWords {
    words: Vec<String>,
    written: Vec<String>,
    /// Some word was a correction.
    fuzzy: bool,
    /// Punctuation inside the phrase was skipped ("Nursing & Rehabilitation").
    inner_punct: bool,
}

fn phrase_words(f: &Forms, tokens: &[Token], blocked: &[bool], i: usize, n: usize) -> Option<PhraseWords> {
    if i + n > tokens.len() {
        return None;
    }
    let mut p = PhraseWords {
        words: Vec::with_capacity(n),
        written: Vec::with_capacity(n),
        fuzzy: false,
        inner_punct: false,
    };
    for (k, token) in tokens.iter().enumerate().skip(i).take(n) {
        if blocked.get(k).copied().unwrap_or(false) || f.segment[k] != f.segment[i] {
            return None;
        }
        match f.forms[k].as_ref() {
            Some((w, fz)) => {
                p.words.push(w.clone());
                p.written.push(token.text.clone());
                p.fuzzy |= *fz;
            }
            // only a value can span punctuation, and only between two words
            None if k > i && k + 1 < i + n && matches!(token.kind, TokenKind::Punct | TokenKind::Op) => {
                p.inner_punct = true;
            }
            None => return None,
        }
    }
    Some(p)
}

/// A database value whose whole normalised text is these words (no corrections, no
/// leading parts): the match of last resort for words as written.
fn whole_value(values: &ValueLookup, written: &[String]) -> Option<Found> {
    let hits = values.exact(&written.join(" "));
    (written.len() > 1 && !hits.is_empty()).then(|| (Vec::new(), hits.to_vec(), false))
}

type Found = (Vec<Entry>, Vec<ValueHit>, bool);

fn lookup_phrase(index: &EngineIndex, values: &ValueLookup, words: &[String], fuzzy: bool) -> Option<Found> {
    let phrase = words.join(" ");
    let mut entries = index.lookup(&phrase).to_vec();
    let mut hits = values.exact(&phrase).to_vec();
    let mut fuzzy = fuzzy;
    if entries.is_empty() && hits.is_empty() {
        // plural of the last word ("pressure ulcers" → "pressure ulcer")
        if let Some(last) = words.last().and_then(|w| singular(w)) {
            let mut alt = words[..words.len() - 1].to_vec();
            alt.push(last);
            let alt = alt.join(" ");
            entries = index.lookup(&alt).to_vec();
            hits = values.exact(&alt).to_vec();
        }
    }
    if entries.is_empty() && hits.is_empty() && words.len() == 1 && !is_common_word(&words[0]) {
        // the same word with another ending ("smoke" for "smoker")
        entries = index
            .by_stem(&words[0])
            .iter()
            .filter(|e| {
                matches!(
                    e.target,
                    Target::Entity(_) | Target::Attribute(..) | Target::Value(..)
                )
            })
            .cloned()
            .collect();
        fuzzy |= !entries.is_empty();
    }
    if entries.is_empty() && hits.is_empty() && !(words.len() == 1 && is_common_word(&words[0])) {
        hits = values.prefix(&phrase).to_vec();
        if !hits.is_empty() {
            fuzzy |= false;
        }
    }
    // a single common word never names a value on its own ("high", "none", "back")
    if words.len() == 1 && entries.is_empty() && hits.iter().all(|h| h.prefix) && is_common_word(&words[0]) {
        return None;
    }
    (!entries.is_empty() || !hits.is_empty()).then_some((entries, hits, fuzzy))
}

// =====================================================================================
// Comparisons
// =====================================================================================

/// What a comparison compares.
#[derive(Clone, Debug, PartialEq)]
pub enum Subject {
    /// A qualified attribute.
    Attribute(String),
    /// A column term (`size`, `area`, `length`): the attribute is chosen by the
    /// ambiguity detectors (term index).
    ColumnTerm(usize),
    /// How many related rows (`more than 3 wounds`): the related entity.
    Related(String),
    /// A number with nothing to say what it measures, after this entity ("patients
    /// over 80"); empty after a word for the thread's records ("the ones under 30").
    Implied(String),
    /// Wound size implied by "larger/bigger/smaller than" or an area unit: resolved
    /// through the `size` column term.
    Size,
}

/// A word for people with nothing else said of them ("anyone", "anybody", "people"): a
/// number after it is their age.
pub(crate) fn is_people_word(w: &str) -> bool {
    matches!(
        w,
        "anyone" | "anybody" | "someone" | "somebody" | "everyone" | "people"
    )
}

/// A comparison with a number: `area > 25 cm²`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// First token (the subject's, when it is before the operator).
    pub first: usize,
    /// One past the last token.
    pub last: usize,
    /// Bytes of the question.
    pub span: TextSpan,
    /// What is compared.
    pub subject: Subject,
    /// The mention the subject came from.
    pub subject_mention: Option<usize>,
    /// Operator.
    pub op: CompareOp,
    /// The number (in `unit`).
    pub value: f64,
    /// Upper bound for `between`.
    pub upper: Option<f64>,
    /// Unit code as written (`cm2`, `cm`, `days`, `years`, `kg/m2`, `percent`, `points`).
    pub unit: Option<String>,
    /// The comparative word used ("larger", "older"), if any.
    pub comparative: Option<String>,
}

/// Operator phrases before a number, longest first: (words, operator, comparative word).
const OPS_BEFORE: &[(&[&str], CompareOp)] = &[
    (&["more", "than"], CompareOp::Gt),
    (&["greater", "than"], CompareOp::Gt),
    (&["higher", "than"], CompareOp::Gt),
    (&["bigger", "than"], CompareOp::Gt),
    (&["larger", "than"], CompareOp::Gt),
    (&["longer", "than"], CompareOp::Gt),
    (&["older", "than"], CompareOp::Gt),
    (&["deeper", "than"], CompareOp::Gt),
    (&["wider", "than"], CompareOp::Gt),
    (&["heavier", "than"], CompareOp::Gt),
    (&["worse", "than"], CompareOp::Gt),
    (&["at", "least"], CompareOp::Gte),
    (&["no", "less", "than"], CompareOp::Gte),
    (&["not", "less", "than"], CompareOp::Gte),
    (&["a", "minimum", "of"], CompareOp::Gte),
    (&["minimum", "of"], CompareOp::Gte),
    (&["less", "than"], CompareOp::Lt),
    (&["fewer", "than"], CompareOp::Lt),
    (&["lower", "than"], CompareOp::Lt),
    (&["smaller", "than"], CompareOp::Lt),
    (&["younger", "than"], CompareOp::Lt),
    (&["shorter", "than"], CompareOp::Lt),
    (&["shallower", "than"], CompareOp::Lt),
    (&["at", "most"], CompareOp::Lte),
    (&["no", "more", "than"], CompareOp::Lte),
    (&["not", "more", "than"], CompareOp::Lte),
    (&["a", "maximum", "of"], CompareOp::Lte),
    (&["maximum", "of"], CompareOp::Lte),
    (&["up", "to"], CompareOp::Lte),
    (&["equal", "to"], CompareOp::Eq),
    (&["exactly"], CompareOp::Eq),
    (&["equals"], CompareOp::Eq),
    (&["over"], CompareOp::Gt),
    (&["above"], CompareOp::Gt),
    (&["exceeding"], CompareOp::Gt),
    (&["under"], CompareOp::Lt),
    (&["below"], CompareOp::Lt),
    (&["beyond"], CompareOp::Gt),
];

/// The operator phrase of [`OPS_BEFORE`] starting at token `k`, if any: its words and
/// operator.
pub(crate) fn op_phrase_at(tokens: &[Token], k: usize) -> Option<(&'static [&'static str], CompareOp)> {
    OPS_BEFORE.iter().copied().find(|(words, _)| {
        words
            .iter()
            .enumerate()
            .all(|(i, word)| tokens.get(k + i).is_some_and(|t| t.text == *word))
    })
}

const COMPARATIVES: &[&str] = &[
    "bigger",
    "larger",
    "smaller",
    "longer",
    "shorter",
    "older",
    "younger",
    "deeper",
    "shallower",
    "wider",
    "heavier",
];

fn op_symbol(s: &str) -> Option<CompareOp> {
    Some(match s {
        ">" => CompareOp::Gt,
        ">=" => CompareOp::Gte,
        "<" => CompareOp::Lt,
        "<=" => CompareOp::Lte,
        "=" => CompareOp::Eq,
        "!=" => CompareOp::Ne,
        _ => return None,
    })
}

/// Reads a unit after a number: returns (unit code, tokens used).
/// The unit after a number in a comparison: "pts" is points only when a score measured in
/// points was named just before ("pain above 6 pts"); otherwise clinicians mean patients
/// ("clinics with more than 200 pts registered"), and it is not a unit.
fn unit_for(
    model: &SemanticModel,
    tokens: &[Token],
    mentions: &[Mention],
    i: usize,
) -> Option<(&'static str, usize)> {
    let found = unit_at(tokens, i)?;
    if tokens.get(i).is_some_and(|t| t.text == "pts") {
        let scored = mentions.iter().any(|m| {
            m.last < i
                && m.last + 5 >= i
                && m.attributes()
                    .any(|(e, a)| model.entities[e].attributes[a].unit.as_deref() == Some("points"))
        });
        if !scored {
            return None;
        }
    }
    Some(found)
}

pub fn unit_at(tokens: &[Token], i: usize) -> Option<(&'static str, usize)> {
    let w = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    let two = (w(i), w(i + 1));
    let unit = match two {
        ("sq" | "square", "cm" | "cms" | "centimetres" | "centimeters" | "centimetre" | "centimeter") => {
            return Some(("cm2", 2));
        }
        ("sq" | "square", "mm" | "millimetres" | "millimeters") => return Some(("mm2", 2)),
        ("cm", "sq" | "squared") | ("cm", "2") => return Some(("cm2", 2)),
        ("kg", "/") if w(i + 2) == "m2" => return Some(("kg/m2", 3)),
        ("kg", "m2") => return Some(("kg/m2", 2)),
        ("/", "10") => return Some(("points", 2)),
        ("out", "of") if w(i + 2) == "10" => return Some(("points", 3)),
        _ => match w(i) {
            "cm2" | "cmsq" => "cm2",
            "mm2" => "mm2",
            "cm" | "cms" | "centimetres" | "centimeters" | "centimetre" | "centimeter" => "cm",
            "mm" | "millimetres" | "millimeters" => "mm",
            "%" | "percent" | "pct" => "percent",
            "day" | "days" => "days",
            "week" | "weeks" | "wk" | "wks" => "weeks",
            "month" | "months" | "mo" | "mos" => "months",
            "year" | "years" | "yr" | "yrs" | "yo" => "years",
            "point" | "points" | "pts" => "points",
            "bmi" => "kg/m2",
            _ => return None,
        },
    };
    Some((unit, 1))
}

/// Converts `value` from `from` to the attribute unit `to`; `None` when incompatible.
pub fn convert(value: f64, from: &str, to: &str) -> Option<f64> {
    if from == to {
        return Some(value);
    }
    Some(match (from, to) {
        ("mm2", "cm2") => value / 100.0,
        ("mm", "cm") => value / 10.0,
        ("weeks", "days") => value * 7.0,
        ("months", "days") => value * 30.0,
        ("years", "days") => value * 365.0,
        ("days", "weeks") => value / 7.0,
        ("months", "years") => value / 12.0,
        _ => return None,
    })
}

/// A range of two numbers: "between N and M", "between the ages of N and M", "N to M",
/// "N - M", "from N to M", "in their 70s" (a decade of age).
struct Range {
    low: f64,
    high: f64,
    /// The token of the first number.
    numbers_at: usize,
    /// One past the range's last token.
    after: usize,
    /// The words said it is an age ("the ages of", "in their 70s").
    age: bool,
}

fn range_at(tokens: &[Token], i: usize) -> Option<Range> {
    let w = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    // "in their 70s", "in his eighties"
    if w(i) == "in" && matches!(w(i + 1), "their" | "his" | "her") {
        let (n, after) = super::tokenize::age_decade_at(tokens, i + 2)?;
        return Some(Range {
            low: n,
            high: n + 9.0,
            numbers_at: i + 2,
            after,
            age: true,
        });
    }
    let (mut j, mut age) = (i, false);
    let between = w(i) == "between";
    if between || w(i) == "from" {
        j += 1;
        if w(j) == "the" {
            j += 1;
        }
        if matches!(w(j), "ages" | "age") {
            age = true;
            j += 1;
            if w(j) == "of" {
                j += 1;
            }
        }
    }
    let low = number(tokens, j)?;
    let joiner = w(j + 1);
    let ok = if between {
        matches!(joiner, "and" | "to" | "-")
    } else {
        matches!(joiner, "to" | "-")
    };
    if !ok {
        return None;
    }
    let high = number(tokens, j + 2)?;
    if high < low {
        return None;
    }
    Some(Range {
        low,
        high,
        numbers_at: j,
        after: j + 3,
        age,
    })
}

fn number(tokens: &[Token], i: usize) -> Option<f64> {
    let t = tokens.get(i)?;
    if matches!(t.kind, TokenKind::Number | TokenKind::NumberWord) {
        t.num
    } else {
        None
    }
}

/// Finds comparisons. `mentions` are the linked phrases (a subject is looked up among
/// them); `blocked` tokens (time expressions) are never part of a comparison.
pub fn comparisons(
    model: &SemanticModel,
    tokens: &[Token],
    mentions: &[Mention],
    blocked: &[bool],
) -> Vec<Comparison> {
    let w = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    let mention_at = |k: usize| mentions.iter().position(|m| m.first <= k && k < m.last);
    let mut out: Vec<Comparison> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if blocked.get(i).copied().unwrap_or(false) {
            i += 1;
            continue;
        }
        // operator before the number
        let mut op = None;
        let mut op_len = 0;
        let mut comparative = None;
        if let Some(o) = op_symbol(w(i)) {
            op = Some(o);
            op_len = 1;
        } else if let Some((words, o)) = op_phrase_at(tokens, i) {
            op = Some(o);
            op_len = words.len();
            comparative = COMPARATIVES
                .iter()
                .find(|c| **c == words[0])
                .map(|c| (*c).to_owned());
        }
        // "between N and M", "between the ages of N and M", "aged 50-60", "50 to 60 years
        // old", "from 2 to 5 cm2", "in their 70s"
        if let Some(range) = range_at(tokens, i) {
            let (unit, ulen) = unit_for(model, tokens, mentions, range.after)
                .map_or((None, 0), |(u, l)| (Some(u.to_owned()), l));
            let last = range.after + ulen;
            let before = if w(i) == "between" { i } else { range.numbers_at };
            let (subject, sm, first) = if range.age {
                (Some(Subject::Attribute("patients.age".into())), None, i)
            } else if w(i) == "between" || unit.is_some() || matches!(w(i.wrapping_sub(1)), "aged" | "age") {
                subject_before(model, tokens, mentions, before, None, unit.as_deref())
            } else {
                // "pain 4 to 6": only a measurement named right before the numbers
                match subject_before(model, tokens, mentions, before, None, None) {
                    s @ (Some(Subject::Attribute(_) | Subject::ColumnTerm(_)), _, _) => s,
                    _ => (None, None, i),
                }
            };
            if let Some(subject) = subject {
                let unit = if range.age { Some("years".to_owned()) } else { unit };
                out.push(Comparison {
                    first: first.min(i),
                    last,
                    span: TextSpan::new(tokens[first.min(i)].span.start, tokens[last - 1].span.end),
                    subject,
                    subject_mention: sm,
                    op: CompareOp::Gte,
                    value: range.low,
                    upper: Some(range.high),
                    unit,
                    comparative: None,
                });
                i = last;
                continue;
            }
        }
        // "pain 10", "bmi 35", "a pain score of 9", "pain of 9 or 10": a number (or two
        // consecutive whole numbers) right after a numeric attribute
        let linked = |k: usize| matches!(w(k), "of" | "is" | "was" | "at" | "=" | "scored" | "score");
        let upper_of = |v: f64| {
            (w(i + 1) == "or"
                && number(tokens, i + 2) == Some(v + 1.0)
                && v.fract() == 0.0
                && !matches!(
                    w(i + 3),
                    "more" | "higher" | "above" | "over" | "greater" | "less" | "fewer"
                ))
            .then_some(v + 1.0)
        };
        if op.is_none()
            && let Some(v) = number(tokens, i)
            && mention_at(i).is_none()
            && i > 0
            && let Some(mi) = mentions.iter().position(|m| {
                m.last == i
                    || m.last + 1 == i && linked(i - 1)
                    || linked(i - 1) && latest_visit_phrase(tokens, i - 1) == Some(m.last)
            })
            && (!matches!(w(i + 1), "or" | "and" | "+" | "plus") || upper_of(v).is_some())
            && unit_for(model, tokens, mentions, i + 1)
                .is_none_or(|(u, _)| !matches!(u, "days" | "weeks" | "months" | "years"))
            && let Some(subject @ (Subject::Attribute(_) | Subject::ColumnTerm(_))) =
                attribute_subject(model, &mentions[mi], None)
        {
            let m = &mentions[mi];
            let upper = upper_of(v);
            let last = if upper.is_some() { i + 3 } else { i + 1 };
            out.push(Comparison {
                first: m.first,
                last,
                span: TextSpan::new(tokens[m.first].span.start, tokens[last - 1].span.end),
                subject,
                subject_mention: Some(mi),
                op: if upper.is_some() {
                    CompareOp::Gte
                } else {
                    CompareOp::Eq
                },
                value: v,
                upper,
                unit: None,
                comparative: None,
            });
            i = last;
            continue;
        }
        // "scored 8 or more for pain", "scored 10/10 on pain": a score, then the measurement
        // it is of
        if op.is_none()
            && i > 0
            && matches!(
                w(i - 1),
                "scored" | "rated" | "scoring" | "rating" | "score" | "scores"
            )
            && let Some(v) = number(tokens, i)
            && mention_at(i).is_none()
        {
            let mut k = i + 1;
            if w(k) == "/" && number(tokens, k + 1).is_some() {
                k += 2;
            }
            let (o, plen) = match (w(k), w(k + 1)) {
                ("or" | "and", "more" | "higher" | "above" | "over" | "greater") => (CompareOp::Gte, 2),
                ("or" | "and", "less" | "lower" | "below" | "under" | "fewer") => (CompareOp::Lte, 2),
                ("+", _) => (CompareOp::Gte, 1),
                _ => (CompareOp::Eq, 0),
            };
            k += plen;
            if matches!(w(k), "for" | "on" | "in")
                && let Some(mi) = mentions.iter().position(|m| m.first == k + 1)
                && let Some(subject @ Subject::Attribute(_)) = attribute_subject(model, &mentions[mi], None)
            {
                let last = mentions[mi].last;
                out.push(Comparison {
                    first: i - 1,
                    last,
                    span: TextSpan::new(tokens[i - 1].span.start, tokens[last - 1].span.end),
                    subject,
                    subject_mention: Some(mi),
                    op: o,
                    value: v,
                    upper: None,
                    unit: None,
                    comparative: None,
                });
                i = last;
                continue;
            }
        }
        let Some(mut op) = op else {
            // "7 or more", "80+", "aged 80 and over"
            if let Some(v) = number(tokens, i)
                && mention_at(i).is_none()
            {
                let (unit, ulen) = unit_for(model, tokens, mentions, i + 1)
                    .map_or((None, 0), |(u, l)| (Some(u.to_owned()), l));
                let mut k = i + 1 + ulen;
                // "80 years old or more", "65 years of age or older"
                if ulen > 0 && w(k) == "old" {
                    k += 1;
                } else if ulen > 0 && w(k) == "of" && w(k + 1) == "age" {
                    k += 2;
                }
                let post_at = |k: usize| match (w(k), w(k + 1)) {
                    ("or" | "and", "more" | "higher" | "above" | "over" | "greater" | "older") => {
                        Some((CompareOp::Gte, 2))
                    }
                    ("or" | "and", "less" | "fewer" | "lower" | "below" | "under" | "younger") => {
                        Some((CompareOp::Lte, 2))
                    }
                    ("+", _) => Some((CompareOp::Gte, 1)),
                    ("plus", _) => Some((CompareOp::Gte, 1)),
                    _ => None,
                };
                // "8 wounds or more", "3 visits or fewer": the counted records between the
                // number and the words that make it a bound
                let records_then_bound = if post_at(k).is_none() && unit.is_none() {
                    match subject_after(model, tokens, mentions, k) {
                        (Some(s), sm, l) if l > k => {
                            post_at(l).map(|(o, plen)| (o, Some(s), sm, i, l + plen))
                        }
                        _ => None,
                    }
                } else {
                    None
                };
                let bound = records_then_bound.or_else(|| {
                    let (o, plen) = post_at(k)?;
                    let last = k + plen;
                    let after = if unit.is_none() {
                        subject_after(model, tokens, mentions, last)
                    } else {
                        (None, None, last)
                    };
                    Some(match after {
                        (Some(s), m, l) => (o, Some(s), m, i, l),
                        _ => {
                            let (s, m, f) = subject_before(model, tokens, mentions, i, None, unit.as_deref());
                            (o, s, m, f, last)
                        }
                    })
                });
                if let Some((o, Some(subject), sm, first, last)) = bound {
                    out.push(Comparison {
                        first,
                        last,
                        span: TextSpan::new(tokens[first].span.start, tokens[last - 1].span.end),
                        subject,
                        subject_mention: sm,
                        op: o,
                        value: v,
                        upper: None,
                        unit,
                        comparative: None,
                    });
                    i = last;
                    continue;
                }
            }
            i += 1;
            continue;
        };
        // the number after the operator ("over the age of 80": skip "the age of")
        let mut k = i + op_len;
        let mut age_words = false;
        if w(k) == "the" && w(k + 1) == "age" && w(k + 2) == "of" {
            k += 3;
            age_words = true;
        }
        let Some(mut value) = number(tokens, k) else {
            i += 1;
            continue;
        };
        if mention_at(k).is_some() {
            // "stage 4" and friends are values, not numbers
            i += 1;
            continue;
        }
        let (mut unit, ulen) =
            unit_for(model, tokens, mentions, k + 1).map_or((None, 0), |(u, l)| (Some(u.to_owned()), l));
        let mut last = k + 1 + ulen;
        if age_words && unit.is_none() {
            unit = Some("years".into());
        }
        // "N or more" after an operator word is redundant; "over 7 or more" → gte
        if matches!((w(last), w(last + 1)), ("or", "more") | ("or", "above")) {
            op = CompareOp::Gte;
            last += 2;
        }
        // "more than 3 wounds": what follows the number is counted
        let after = if unit.is_none() {
            subject_after(model, tokens, mentions, last)
        } else {
            (None, None, last)
        };
        let (subject, sm, first) = match &after {
            (Some(s), m, _) => (Some(s.clone()), *m, i),
            _ => subject_before(
                model,
                tokens,
                mentions,
                i,
                comparative.as_deref(),
                unit.as_deref(),
            ),
        };
        let last = if after.0.is_some() { after.2 } else { last };
        let (subject, sm, last) = match subject {
            Some(s) => (Some(s), sm, last),
            None => {
                let (s, m, l) = subject_after(model, tokens, mentions, last);
                (s, m, l.max(last))
            }
        };
        let subject = subject.or_else(|| age_words.then(|| Subject::Attribute("patients.age".into())));
        let Some(subject) = subject else {
            i += 1;
            continue;
        };
        if let Subject::Related(_) = subject
            && value.fract() != 0.0
        {
            value = value.floor();
        }
        out.push(Comparison {
            first,
            last,
            span: TextSpan::new(tokens[first].span.start, tokens[last.max(first + 1) - 1].span.end),
            subject,
            subject_mention: sm,
            op,
            value,
            upper: None,
            unit,
            comparative,
        });
        i = last.max(i + 1);
    }
    out
}

/// The subject before an operator at `op_at`: an attribute or column term just before
/// (skipping filler words), else one implied by a comparative or a unit, else the entity
/// just before ("patients over 80").
/// "at the latest assessment", "on the most recent visit" ending just before `end`: the
/// token where the phrase starts. A value said of the latest visit is the latest value,
/// which is what an attribute of a wound already means.
fn latest_visit_phrase(tokens: &[Token], end: usize) -> Option<usize> {
    let w = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    if end < 3
        || !matches!(
            w(end - 1),
            "assessment" | "assessments" | "visit" | "visits" | "review" | "measurement" | "check"
        )
    {
        return None;
    }
    let mut k = end - 1;
    let mut latest = false;
    while k > 0 {
        match w(k - 1) {
            "latest" | "last" | "recent" | "current" | "newest" => latest = true,
            "most" | "the" | "their" | "its" | "his" | "her" => {}
            "at" | "on" | "in" | "from" | "during" if latest => return Some(k - 1),
            _ => return None,
        }
        k -= 1;
    }
    None
}

fn subject_before(
    model: &SemanticModel,
    tokens: &[Token],
    mentions: &[Mention],
    op_at: usize,
    comparative: Option<&str>,
    unit: Option<&str>,
) -> (Option<Subject>, Option<usize>, usize) {
    let w = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    // walk back over fillers
    let mut k = op_at;
    let fillers = [
        "is",
        "was",
        "are",
        "were",
        "of",
        "score",
        "level",
        "value",
        "with",
        "a",
        "an",
        "has",
        "had",
        "have",
        "aged",
        "at",
        "that",
        "who",
        "which",
        "the",
        "their",
        "its",
        "currently",
        // a measurement said with a verb: "pain hit 9 or more", "area reached 40"
        "hit",
        "hits",
        "reached",
        "reaches",
        "scored",
        "rated",
        "measured",
    ];
    let mut steps = 0;
    while k > 0 && steps < 4 && fillers.contains(&w(k - 1)) && !mentions.iter().any(|m| m.last == k) {
        k -= 1;
        steps += 1;
    }
    // "pain score at the latest assessment was under 3": over the visit it was taken at
    if let Some(before) = latest_visit_phrase(tokens, k) {
        k = before;
    }
    if k > 0
        && let Some(mi) = mentions.iter().position(|m| m.last == k)
    {
        let m = &mentions[mi];
        if let Some(s) = attribute_subject(model, m, unit) {
            return (Some(s), Some(mi), m.first);
        }
    }
    // "just the ones under 30", "only those over 80": the records of the thread (the
    // reader takes the question's entity, or the previous question's)
    if k > 0
        && matches!(w(k - 1), "ones" | "those" | "them" | "these")
        && !mentions.iter().any(|m| m.last == k)
        && unit.is_none()
    {
        return (Some(Subject::Implied(String::new())), None, op_at);
    }
    // "is there anyone under 30 with …", "anybody over 90": people
    if k > 0 && is_people_word(w(k - 1)) && !mentions.iter().any(|m| m.last == k) && unit.is_none() {
        return (Some(Subject::Implied("patients".into())), None, op_at);
    }
    if w(op_at.saturating_sub(1)) == "aged" || w(op_at) == "aged" {
        return (
            Some(Subject::Attribute("patients.age".into())),
            None,
            op_at.saturating_sub(1),
        );
    }
    if let Some(s) = implied_by(comparative, unit) {
        return (Some(s), None, op_at);
    }
    // the entity just before: "patients over 80", "wounds over 10 cm2"
    if k > 0
        && let Some(mi) = mentions.iter().position(|m| m.last == k)
    {
        let m = &mentions[mi];
        let entity = m.entity().map(|e| model.entities[e].name.clone()).or_else(|| {
            // "how many patients are over 65"
            m.measure()
                .filter(|&x| model.measures[x].agg == crate::semantic::MeasureAgg::Count)
                .map(|x| model.measures[x].entity.clone())
        });
        if let Some(e) = entity {
            return (Some(Subject::Implied(e)), None, op_at);
        }
        // "etiologies with more than 100": a set of values said in the plural, with
        // nothing counted after the number — the records counted are unnamed (the reader
        // keeps groups by their count when the answer has groups, and reports it otherwise)
        let plural = tokens[m.last - 1].text.ends_with('s');
        let set_of_values = m
            .attributes()
            .find(|&(e, a)| {
                let ty = model.entities[e].attributes[a].ty;
                !ty.is_numeric()
                    && !matches!(
                        ty,
                        crate::semantic::AttributeType::Date | crate::semantic::AttributeType::Boolean
                    )
            })
            .map(|(e, _)| model.entities[e].name.clone())
            .or_else(|| {
                m.terms()
                    .find(|&t| model.terms[t].kind == crate::semantic::TermKind::Column)
                    .and_then(|t| model.terms[t].applies_to.first().cloned())
            });
        if plural
            && m.values.is_empty()
            && let Some(e) = set_of_values
            && matches!(w(k), "with" | "having" | "that" | "which")
        {
            return (Some(Subject::Implied(e)), Some(mi), op_at);
        }
    }
    (None, None, op_at)
}

/// The subject after the number: "more than 3 wounds", "at least 2 visits".
fn subject_after(
    model: &SemanticModel,
    tokens: &[Token],
    mentions: &[Mention],
    at: usize,
) -> (Option<Subject>, Option<usize>, usize) {
    // "200 registered patients", "50 different wounds": a word that only restates what
    // is counted
    let at = if tokens.get(at).is_some_and(|t| {
        matches!(
            t.text.as_str(),
            "registered" | "distinct" | "different" | "unique" | "separate" | "individual"
        )
    }) && mentions.iter().any(|m| m.first == at + 1)
    {
        at + 1
    } else {
        at
    };
    // "seen at least 4 times", "assessed more than 10 times": the visits are counted
    if matches!(
        tokens.get(at).map(|t| t.text.as_str()),
        Some("times" | "occasions")
    ) && (at.saturating_sub(7)..at).any(|k| {
        matches!(
            tokens[k].text.as_str(),
            "seen" | "assessed" | "visited" | "reviewed" | "examined" | "checked" | "measured" | "evaluated"
        )
    }) && let Some(visits) = model.find_entity("visit")
    {
        let mi = mentions.iter().position(|m| m.first == at);
        return (Some(Subject::Related(visits.name.clone())), mi, at + 1);
    }
    let Some(mi) = mentions.iter().position(|m| m.first == at) else {
        return (None, None, at);
    };
    let m = &mentions[mi];
    if let Some(e) = m.entity() {
        return (
            Some(Subject::Related(model.entities[e].name.clone())),
            Some(mi),
            m.last,
        );
    }
    // "more than 2 open wounds": a count measure names what is counted
    if let Some(x) = m
        .measure()
        .filter(|&x| model.measures[x].agg == crate::semantic::MeasureAgg::Count)
    {
        return (
            Some(Subject::Related(model.measures[x].entity.clone())),
            Some(mi),
            m.last,
        );
    }
    // "2 or more venous leg ulcers": a value names the rows counted (its entity), when it
    // is a kind of record, not a measurement ("2 or more" of a pain score is not a count)
    let valued = m.entries.iter().find_map(|e| match &e.target {
        Target::Value(a, _) => split_qualified(a).map(|(e, _)| e.to_owned()),
        _ => None,
    });
    if let Some(e) = valued.filter(|e| e != "patients" && e != "assessments") {
        return (Some(Subject::Related(e)), Some(mi), m.last);
    }
    (None, None, at)
}

fn attribute_subject(model: &SemanticModel, m: &Mention, unit: Option<&str>) -> Option<Subject> {
    // a column term (size, area, length …) wins: its options choose the attribute
    for t in m.terms() {
        let term = &model.terms[t];
        // a column word none of whose options is a comparable non-key attribute ("which
        // clinic": treating or registered; "who": the names) is never the subject of a
        // number
        let keys_only = !term.options.iter().any(|o| match &o.change {
            Some(crate::semantic::PlanChange::ChooseAttribute { attribute }) => {
                model.attribute(attribute).is_some_and(|r| {
                    (r.attribute.ty.is_ordered() || r.attribute.ty == AttributeType::Integer)
                        && !matches!(
                            r.attribute.role,
                            crate::semantic::AttributeRole::Key | crate::semantic::AttributeRole::ForeignKey
                        )
                })
            }
            _ => true,
        });
        if term.kind == crate::semantic::TermKind::Column && !keys_only {
            return Some(Subject::ColumnTerm(t));
        }
    }
    let mut candidates: Vec<String> = Vec::new();
    for (e, a) in m.attributes() {
        let attr = &model.entities[e].attributes[a];
        let comparable = attr.ty.is_ordered() || attr.ty == AttributeType::Integer;
        // a number is never compared with a key ("clinics with at least 150 registered
        // patients" is not `patients.clinic_id >= 150`); an id is read as an id
        let key = matches!(
            attr.role,
            crate::semantic::AttributeRole::Key | crate::semantic::AttributeRole::ForeignKey
        );
        if !comparable || key {
            continue;
        }
        if let (Some(u), Some(au)) = (unit, attr.unit.as_deref())
            && convert(1.0, u, au).is_none()
        {
            continue;
        }
        candidates.push(format!("{}.{}", model.entities[e].name, attr.name));
    }
    if let Some(c) = candidates.into_iter().next() {
        return Some(Subject::Attribute(c));
    }
    // "number of wounds" style count attributes are handled as attributes above;
    // a measure word is not a subject
    None
}

/// The attribute a comparative or unit implies when no attribute is named.
fn implied_by(comparative: Option<&str>, unit: Option<&str>) -> Option<Subject> {
    let attr = match (comparative, unit) {
        (Some("older" | "younger"), Some("years") | None) => "patients.age",
        (Some("older" | "younger" | "longer" | "shorter"), Some("days" | "weeks" | "months")) => {
            "wounds.days_open"
        }
        (Some("deeper" | "shallower"), _) => "wounds.latest_depth",
        (Some("wider"), _) => "wounds.latest_width",
        (Some("longer" | "shorter"), Some("cm" | "mm")) => "wounds.latest_length",
        (Some("heavier"), _) => "patients.bmi",
        (_, Some("kg/m2")) => "patients.bmi",
        (_, Some("years")) => "patients.age",
        (_, Some("days" | "weeks" | "months")) => "wounds.days_open",
        (_, Some("points")) => "wounds.latest_pain",
        (_, Some("percent")) => "wounds.area_change_pct",
        (Some("bigger" | "larger" | "smaller"), _) | (_, Some("cm2" | "mm2")) => return Some(Subject::Size),
        _ => return None,
    };
    Some(Subject::Attribute(attr.to_owned()))
}

/// True when an attribute counts related rows (`patients.wound_count`).
pub fn counts_related(model: &SemanticModel, qualified: &str) -> Option<String> {
    let r = model.attribute(qualified)?;
    match &r.attribute.derived {
        Some(Derived::CountRelated { entity }) => Some(entity.clone()),
        _ => None,
    }
}
