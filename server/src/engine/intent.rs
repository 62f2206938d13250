//! Stage 6 — intent: what the clinician wants done with the rows, with a confidence.
//!
//! Reads the structural words of the question ("how many", "list", "average", "top 5",
//! "by clinic", "trend", "compare", pronouns, negations, follow-up openers) into
//! [`Cues`], then [`decide`]s the [`Intent`]. Explicit cues give 0.9–1.0; a bare noun
//! phrase ("open wounds") is read as a list at 0.85; with nothing to go on the
//! confidence falls below 0.6 and the engine asks an intent-level question first (F1).
//! Pure.

use crate::semantic::{CompareOp, MeasureAgg, SortOrder};

use super::plan::Intent;
use super::tokenize::{Token, TokenKind};

/// "his", "her", "she" …: a patient or clinician said before ("list his wounds", "what
/// does she have"), pointing back like "their".
pub(crate) fn is_personal_pronoun(word: &str) -> bool {
    matches!(word, "his" | "her" | "him" | "he" | "she")
}

/// A ranking cue: "top 5", "10 largest", "the most".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RankCue {
    /// First token.
    pub first: usize,
    /// One past the last token.
    pub last: usize,
    /// How many, when said.
    pub n: Option<u32>,
    /// Direction.
    pub order: SortOrder,
    /// "most"/"fewest": ranks by a count of what follows.
    pub by_count: bool,
    /// A superlative that says what to rank by ("oldest", "deepest").
    pub superlative: Option<&'static str>,
    /// "second-highest", "3rd most": how many ranked rows come before the one asked for.
    pub skip: u32,
}

/// Structural words of the question, by token position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cues {
    /// "how many", "number of", "count".
    pub count: Option<usize>,
    /// "list", "show", "which", "who" … (strong list words).
    pub list: Option<usize>,
    /// "what", "get" … (weak).
    pub weak_list: Option<usize>,
    /// "data", "report", "numbers": a request with nothing said about what.
    pub data_word: Option<usize>,
    /// "has it changed", "going up": a trend asked as a yes/no question.
    pub change_verb: Option<usize>,
    /// An aggregate word and its aggregation (token range).
    pub agg: Option<(usize, usize, MeasureAgg)>,
    /// "percentage of", "proportion", "share of" (token range).
    pub share: Option<(usize, usize)>,
    /// "top 5", "highest" …
    pub rank: Option<RankCue>,
    /// "trend", "over time" (token range).
    pub trend: Option<(usize, usize)>,
    /// "compare", "vs" (token range).
    pub compare: Option<(usize, usize)>,
    /// Tokens just after a grouping word ("by", "per", "for each", "across").
    pub group_at: Vec<usize>,
    /// Tokens just after "per"/"each" (a unit of analysis when it names the counted entity).
    pub per_at: Vec<usize>,
    /// Tokens just after "sorted/ordered/ranked by" (a ranking key).
    pub sort_at: Vec<usize>,
    /// Tokens just after "then by" following a sort ("sorted by onset date, then by wound
    /// id"): the keys that order rows equal on the ones before.
    pub then_by_at: Vec<usize>,
    /// An ordering said as an instruction ("listed from most to fewest", "highest first",
    /// "in descending order"): token range and direction. Not a ranking: every row stays.
    pub sort_instruction: Option<(usize, usize, SortOrder)>,
    /// The instruction said it in time words ("oldest first", "most recent first"):
    /// ascending means earliest date first.
    pub sort_temporal: bool,
    /// Negation words.
    pub negations: Vec<usize>,
    /// Pronouns pointing back ("it", "them", "those" …).
    pub pronouns: Vec<usize>,
    /// "who"/"whose".
    pub who: Option<usize>,
    /// The question opens like a refinement ("only", "what about", "and for" …).
    pub follow_lead: bool,
    /// "instead", "rather".
    pub instead: bool,
    /// "also", "as well", "and also".
    pub also: bool,
    /// "widen that to the whole Coastal region", "expand it to all clinics": a follow-up
    /// that says the place (or other records) more broadly, replacing what narrowed them.
    pub widen: bool,
    /// "what about everywhere": widened to every place, with no record word for it.
    pub everywhere: bool,
    /// "more about", "tell me more", "details".
    pub more_about: bool,
    /// Number of words (not punctuation).
    pub words: usize,
    /// "smoking and wounds", "diabetes and healing": two topics joined by "and" with no
    /// word saying what is wanted of them (no verb, question word or linking word).
    pub bare_pair: bool,
    /// "wounds whose highest pain score ever was below 3": an extreme over every visit
    /// compared with a number, a filter rather than a ranking.
    pub history_extreme: Option<HistoryExtreme>,
}

fn w(tokens: &[Token], k: usize) -> &str {
    tokens.get(k).map_or("", |t| t.text.as_str())
}

/// The count word of "<sorted|ordered|ranked …> by [the] <number|no|count …> of …" when
/// the verb of ordering is at `verb`: a sort key said as a count.
fn sort_count_at(tokens: &[Token], verb: usize) -> Option<usize> {
    if !matches!(
        w(tokens, verb),
        "sorted" | "sort" | "ordered" | "order" | "ranked" | "rank" | "arranged" | "listed"
    ) || w(tokens, verb + 1) != "by"
    {
        return None;
    }
    let j = if w(tokens, verb + 2) == "the" {
        verb + 3
    } else {
        verb + 2
    };
    matches!(
        w(tokens, j),
        "number" | "numbers" | "no" | "nr" | "num" | "count" | "#"
    )
    .then_some(j)
}

/// "just the MRN and how many wounds", "showing the name and the number of visits": a
/// count said as one more column of a list of columns, not the question's count.
pub(crate) fn count_in_column_list(tokens: &[Token], k: usize) -> bool {
    let mut j = k;
    if w(tokens, j.wrapping_sub(1)) == "the" {
        j -= 1;
    }
    if !matches!(w(tokens, j.wrapping_sub(1)), "and" | "plus" | "+" | "&") {
        return false;
    }
    (j.saturating_sub(7)..j - 1).any(|i| {
        matches!(
            w(tokens, i),
            "just" | "only" | "showing" | "show" | "include" | "including" | "columns" | "column"
        )
    })
}

fn count_at(tokens: &[Token], k: usize) -> Option<u32> {
    let t = tokens.get(k)?;
    if !matches!(t.kind, TokenKind::Number | TokenKind::NumberWord) || t.text.ends_with(char::is_alphabetic) {
        return None;
    }
    let v = t.num?;
    ((1.0..=1000.0).contains(&v) && v.fract() == 0.0).then_some(v as u32)
}

/// An ordinal of 2 or more at token `k` ("second", "3rd"): its number.
fn ordinal_at(tokens: &[Token], k: usize) -> Option<u32> {
    let t = tokens.get(k)?;
    let n = match t.text.as_str() {
        "second" => 2,
        "third" => 3,
        "fourth" => 4,
        "fifth" => 5,
        "sixth" => 6,
        "seventh" => 7,
        "eighth" => 8,
        "ninth" => 9,
        "tenth" => 10,
        other => {
            // "2nd", "3rd": the tokenizer keeps the suffix on ordinal numbers
            let digits = other.strip_suffix("nd").or_else(|| other.strip_suffix("rd"));
            let digits = digits.or_else(|| other.strip_suffix("th"));
            digits
                .and_then(|d| d.parse::<u32>().ok())
                .filter(|&n| (2..=100).contains(&n))?
        }
    };
    Some(n)
}

/// An ordering said as an instruction, not a ranking: "from most to fewest", "highest to
/// lowest", "largest first", "in descending order", "descending".
fn sort_instruction(tokens: &[Token]) -> Option<(usize, usize, SortOrder)> {
    temporal_sort(tokens).or_else(|| figure_sort(tokens))
}

/// "oldest first", "newest first", "most recent first", "earliest first".
fn temporal_sort(tokens: &[Token]) -> Option<(usize, usize, SortOrder)> {
    for k in 0..tokens.len() {
        let (order, first) = match (w(tokens, k), w(tokens, k.wrapping_sub(1))) {
            ("oldest" | "earliest", _) => (SortOrder::Asc, k),
            ("newest" | "latest", _) => (SortOrder::Desc, k),
            ("recent", "most") => (SortOrder::Desc, k - 1),
            _ => continue,
        };
        // "oldest to newest", "from most recent to oldest": both ends of the time order,
        // closing the clause (not "from earliest to latest assessment", a duration)
        let other = match (w(tokens, k + 2), w(tokens, k + 3)) {
            ("newest" | "latest", _) => Some((SortOrder::Asc, 1)),
            ("most", "recent") => Some((SortOrder::Asc, 2)),
            ("oldest" | "earliest", _) => Some((SortOrder::Desc, 1)),
            _ => None,
        };
        if w(tokens, k + 1) == "to"
            && let Some((o, len)) = other.filter(|&(o, _)| o == order)
            && matches!(
                w(tokens, k + 2 + len),
                "" | "," | "." | ";" | ")" | "please" | "pls"
            )
        {
            let first = if w(tokens, first.wrapping_sub(1)) == "from" {
                first - 1
            } else {
                first
            };
            return Some((first, k + 2 + len, o));
        }
        if w(tokens, k + 1) == "first" {
            return Some((first, k + 2, order));
        }
        if matches!(w(tokens, k + 1), "on" | "at") && w(tokens, k + 2) == "top" {
            return Some((first, k + 3, order));
        }
        // "oldest onset first", "newest assessment date first": the date named between
        if let Some(end) = named_first(tokens, k + 1) {
            return Some((first, end, order));
        }
    }
    None
}

/// "… onset first", "… bmi first", "… assessment date first" closing an instruction: one
/// or two words naming what is sorted, then "first" ending the clause (not "first
/// assessment", which is a visit). Returns the token after "first".
fn named_first(tokens: &[Token], from: usize) -> Option<usize> {
    (from + 1..=from + 2).find_map(|f| {
        let named = (from..f).all(|i| {
            tokens
                .get(i)
                .is_some_and(|t| t.kind == super::tokenize::TokenKind::Word)
        });
        let closes = matches!(
            w(tokens, f + 1),
            "" | "," | "." | ";" | ")" | "then" | "and" | "please" | "pls" | "only" | "-"
        );
        (w(tokens, f) == "first"
            && named
            && closes
            && (from..f)
                .all(|i| !matches!(w(tokens, i), "the" | "a" | "an" | "their" | "its" | "his" | "her")))
        .then_some(f + 1)
    })
}

/// "from most to fewest", "highest count first", "in descending order".
fn figure_sort(tokens: &[Token]) -> Option<(usize, usize, SortOrder)> {
    let high = |s: &str| {
        matches!(
            s,
            "most"
                | "highest"
                | "largest"
                | "biggest"
                | "greatest"
                | "max"
                | "high"
                | "big"
                | "top"
                | "longest"
                | "deepest"
                | "widest"
        )
    };
    let low = |s: &str| {
        matches!(
            s,
            "least"
                | "fewest"
                | "lowest"
                | "smallest"
                | "min"
                | "low"
                | "small"
                | "bottom"
                | "shortest"
                | "shallowest"
                | "narrowest"
        )
    };
    for k in 0..tokens.len() {
        let word = w(tokens, k);
        // "from most to fewest", "highest to lowest"
        if (high(word) || low(word)) && w(tokens, k + 1) == "to" {
            let other = w(tokens, k + 2);
            if high(word) && low(other) || low(word) && high(other) {
                let first = if w(tokens, k.wrapping_sub(1)) == "from" {
                    k - 1
                } else {
                    k
                };
                let order = if high(word) {
                    SortOrder::Desc
                } else {
                    SortOrder::Asc
                };
                return Some((first, k + 3, order));
            }
        }
        // "highest first", "most first", "smallest first", "highest count first"
        let figure_word = matches!(
            w(tokens, k + 1),
            "count" | "counts" | "number" | "numbers" | "value" | "values" | "total" | "totals" | "figure"
        );
        let first_at = if figure_word {
            k + 2
        } else if w(tokens, k + 1) != "first"
            && let Some(end) = named_first(tokens, k + 1)
        {
            // "highest bmi first", "largest initial area first"
            end - 1
        } else {
            k + 1
        };
        if (high(word) || low(word)) && w(tokens, first_at) == "first" {
            let order = if high(word) {
                SortOrder::Desc
            } else {
                SortOrder::Asc
            };
            return Some((k, first_at + 1, order));
        }
        // "in descending order", "descending", "desc"
        if matches!(
            word,
            "descending" | "desc" | "ascending" | "asc" | "decreasing" | "increasing"
        ) && (matches!(w(tokens, k + 1), "order" | "") || w(tokens, k.wrapping_sub(1)) == "in")
        {
            let order = if matches!(word, "descending" | "desc" | "decreasing") {
                SortOrder::Desc
            } else {
                SortOrder::Asc
            };
            let first = if w(tokens, k.wrapping_sub(1)) == "in" {
                k - 1
            } else {
                k
            };
            let last = if w(tokens, k + 1) == "order" { k + 2 } else { k + 1 };
            return Some((first, last, order));
        }
    }
    None
}

/// "largest wound size at Lakeview", "highest pain score this year", "smallest initial
/// area of DFUs": a superlative followed by a measured column (an attribute with a
/// number, or a column word such as "size") and no entity before it is the maximum or
/// minimum of that column, not a ranking of rows ("the largest wounds", "which clinic
/// has the highest …" and "the 5 largest" stay rankings). Turns the ranking cue into an
/// aggregate cue and returns the superlative's token, if any.
pub fn superlative_aggregate(
    c: &mut Cues,
    tokens: &[Token],
    mentions: &[super::link::Mention],
    model: &crate::semantic::SemanticModel,
) -> Option<usize> {
    use crate::semantic::{PlanChange, TermKind};
    if c.agg.is_some() {
        return None;
    }
    let numeric = |e: usize, a: usize| model.entities[e].attributes[a].ty.is_numeric();
    let measured = |m: &super::link::Mention| {
        m.entity().is_none()
            && m.measure().is_none()
            && (m.attributes().any(|(e, a)| numeric(e, a))
                || m.terms().any(|t| {
                    let term = &model.terms[t];
                    term.kind == TermKind::Column
                        && term.options.iter().any(|o| {
                            matches!(&o.change, Some(PlanChange::ChooseAttribute { attribute })
                                if model.attribute_type(attribute).is_some_and(|ty| ty.is_numeric()))
                        })
                }))
    };
    // "earliest assessment date", "latest onset date": the extreme of a date column
    let dated = |m: &super::link::Mention| {
        m.entity().is_none()
            && m.measure().is_none()
            && m.attributes()
                .any(|(e, a)| model.entities[e].attributes[a].ty == crate::semantic::AttributeType::Date)
    };
    for k in 0..tokens.len() {
        // "oldest onset first", "highest bmi first": an order to lay rows out in
        if c.sort_instruction.is_some_and(|(a, b, _)| a <= k && k < b) {
            continue;
        }
        // "deepest depth", "longest length", "heaviest bmi": a ranking superlative said of
        // the measurement itself (not of records: "the deepest wounds") is its extreme
        let of_itself = matches!(
            w(tokens, k),
            "deepest" | "shallowest" | "longest" | "shortest" | "heaviest" | "lightest"
        );
        if of_itself && !mentions.iter().any(|m| m.first == k + 1 && measured(m)) {
            continue;
        }
        let (agg, date_word) = match w(tokens, k) {
            "largest" | "biggest" | "greatest" | "highest" | "peak" | "deepest" | "longest" | "heaviest" => {
                (MeasureAgg::Max, false)
            }
            "smallest" | "lowest" | "shallowest" | "shortest" | "lightest" => (MeasureAgg::Min, false),
            "earliest" | "first" | "oldest" => (MeasureAgg::Min, true),
            "latest" | "last" | "newest" => (MeasureAgg::Max, true),
            _ => continue,
        };
        if date_word {
            // "5 open wounds at Harborview with the earliest onset": that many records
            // ranked by the date, not the date's extreme
            let counted_records = mentions.iter().any(|m| {
                m.last <= k && m.entity().is_some() && (0..m.first).any(|j| count_at(tokens, j).is_some())
            });
            if counted_records {
                continue;
            }
            let next = mentions.iter().find(|m| m.first == k + 1);
            if next.is_some_and(&dated)
                && !mentions
                    .iter()
                    .any(|m| m.first <= k && k < m.last && m.last - m.first > 1)
            {
                if c.rank.is_some_and(|r| r.first <= k && k < r.last) {
                    c.rank = None;
                }
                c.agg = Some((k, k + 1, agg));
                return Some(k);
            }
            continue;
        }
        if count_at(tokens, k + 1).is_some() || count_at(tokens, k.wrapping_sub(1)).is_some() {
            return None;
        }
        // "second largest initial area", "3rd highest bmi": one ranked row after the ones
        // before it, never the extreme itself (an aggregate cannot skip rows)
        if let Some(o) = ordinal_at(tokens, k.wrapping_sub(1)) {
            if c.rank.is_none() {
                c.rank = Some(RankCue {
                    first: k - 1,
                    last: k + 1,
                    n: Some(1),
                    order: if agg == MeasureAgg::Max {
                        SortOrder::Desc
                    } else {
                        SortOrder::Asc
                    },
                    by_count: false,
                    superlative: None,
                    skip: o - 1,
                });
            }
            return None;
        }
        // inside a longer name ("largest area" is a measure of its own)
        if mentions
            .iter()
            .any(|m| m.first <= k && k < m.last && m.last - m.first > 1)
        {
            return None;
        }
        if mentions.iter().any(|m| m.last <= k && m.entity().is_some()) {
            return None;
        }
        // "the largest single area measurement": a word saying one value at a time
        let mut j = k + 1;
        while matches!(w(tokens, j), "single" | "individual" | "one") {
            j += 1;
        }
        let next = mentions.iter().find(|m| m.first == j)?;
        if !measured(next) {
            return None;
        }
        if c.rank.is_some_and(|r| r.first <= k && k < r.last) {
            c.rank = None;
        }
        c.agg = Some((k, j, agg));
        return Some(k);
    }
    None
}

/// The maximum or minimum of a per-visit measurement over a record's history, compared
/// with a number ("patients whose lowest pain score across all visits was 6 or more").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HistoryExtreme {
    /// The superlative's token.
    pub at: usize,
    /// Max or min.
    pub agg: MeasureAgg,
    /// The first token of the measurement's mention.
    pub mention_first: usize,
    /// The comparison: operator and number (in the measurement's own unit when none was said).
    pub op: CompareOp,
    pub value: f64,
    /// One past the comparison's last token.
    pub last: usize,
    /// The linker's comparison over the same words (its first token), if it made one.
    pub cmp_first: Option<usize>,
}

/// "open wounds where the lowest pain score across all visits was 6 or more", "patients
/// whose maximum bmi … ", "wounds whose highest ever pain score was below 3": a record
/// (named before the superlative) kept by the extreme of a per-visit measurement over all
/// its visits, compared with a number. Not a ranking: every record that qualifies stays.
/// Clears the ranking cue the superlative set.
pub fn history_extreme(
    c: &mut Cues,
    tokens: &[Token],
    mentions: &[super::link::Mention],
    comparisons: &[super::link::Comparison],
    model: &crate::semantic::SemanticModel,
) {
    // an aggregate word elsewhere ("average of each wound's highest …") is another reading
    if c.agg
        .is_some_and(|(a, b, _)| b != a + 1 || !matches!(w(tokens, a), "max" | "maximum" | "min" | "minimum"))
    {
        return;
    }
    let per_visit = |m: &super::link::Mention| {
        m.entity().is_none()
            && m.measure().is_none()
            && m.attributes().any(|(e, a)| {
                let ent = &model.entities[e];
                let q = format!("{}.{}", ent.name, ent.attributes[a].name);
                ent.attributes[a].ty.is_numeric()
                    && model.entity("wounds").is_some_and(|w| {
                        w.attributes.iter().any(|x| {
                            matches!(&x.derived, Some(crate::semantic::Derived::Latest { attribute, .. }) if *attribute == q)
                        })
                    })
            })
    };
    let records = |name: &str| matches!(name, "wounds" | "patients");
    for k in 0..tokens.len() {
        let agg = match w(tokens, k) {
            "highest" | "max" | "maximum" | "peak" => MeasureAgg::Max,
            "lowest" | "min" | "minimum" => MeasureAgg::Min,
            _ => continue,
        };
        // the records it is said of come first ("wounds whose highest …", "open wounds
        // where the lowest …")
        let owner_before = mentions.iter().any(|m| {
            m.last <= k
                && (m.entity().is_some_and(|e| records(&model.entities[e].name))
                    || m.measure().is_some_and(|x| records(&model.measures[x].entity)))
        });
        if !owner_before {
            continue;
        }
        let mut j = k + 1;
        while matches!(w(tokens, j), "ever" | "recorded" | "documented") {
            j += 1;
        }
        let Some(m) = mentions.iter().find(|m| m.first == j) else {
            continue;
        };
        if !per_visit(m) {
            continue;
        }
        // a number compared a few words after it ("… across all visits was 6 or more",
        // "… ever was below 3")
        let found = comparisons
            .iter()
            .find(|x| x.first >= m.first && x.first <= m.last + 6 && x.upper.is_none())
            .map(|x| (x.op, x.value, x.last, Some(x.first)))
            .or_else(|| {
                (m.last..m.last + 7).find_map(|i| {
                    let (words, op) = super::link::op_phrase_at(tokens, i)?;
                    let n = tokens
                        .get(i + words.len())
                        .filter(|t| t.kind == TokenKind::Number)?;
                    Some((op, n.num?, i + words.len() + 1, None))
                })
            });
        let Some((op, value, last, cmp_first)) = found else {
            continue;
        };
        if c.agg.is_some_and(|(a, _, _)| a != k) {
            continue;
        }
        if c.rank.is_some_and(|r| r.first <= k && k < r.last) {
            c.rank = None;
        }
        c.agg = None;
        c.history_extreme = Some(HistoryExtreme {
            at: k,
            agg,
            mention_first: m.first,
            op,
            value,
            last,
            cmp_first,
        });
        return;
    }
}

/// Reads the cues. `in_phrase(k)` says whether token `k` is inside a multi-word model
/// phrase (such words are not cues: "most recent", "top performing").
pub fn cues(tokens: &[Token], in_phrase: impl Fn(usize) -> bool) -> Cues {
    let mut c = Cues {
        words: tokens.iter().filter(|t| t.is_wordlike()).count(),
        ..Cues::default()
    };
    let first_word = tokens.iter().position(|t| t.is_wordlike()).unwrap_or(0);
    c.sort_instruction = sort_instruction(tokens);
    c.sort_temporal = c.sort_instruction.is_some() && temporal_sort(tokens).is_some();
    let instruction = c.sort_instruction;
    for k in 0..tokens.len() {
        let word = w(tokens, k);
        let next = w(tokens, k + 1);
        let free = !in_phrase(k) && !instruction.is_some_and(|(a, b, _)| a <= k && k < b);
        // "sorted by number of assessments", "ranked by no. of wounds": the sort key, not
        // a count of the records
        let sort_key = (k.saturating_sub(3)..k).any(|v| sort_count_at(tokens, v) == Some(k));
        let column = count_in_column_list(tokens, k);
        match word {
            "number" | "numbers" | "no" | "nr" | "num" | "count" if sort_key || column => {}
            "how" if column && matches!(next, "many" | "much") => {}
            // "how many days has it been open", "how many weeks did it take to heal": a
            // duration of the record, not a count of records
            "how"
                if next == "many"
                    && matches!(w(tokens, k + 2), "days" | "weeks" | "months")
                    && matches!(
                        w(tokens, k + 3),
                        "has" | "have" | "had" | "did" | "does" | "was" | "were" | "is"
                    ) => {}
            "how" if matches!(next, "many" | "much") => {
                c.count.get_or_insert(k);
            }
            "number" | "numbers"
                if next == "of"
                    && (w(tokens, k.wrapping_sub(1)) != "the"
                        || !matches!(
                            w(tokens, k.wrapping_sub(2)),
                            "highest" | "most" | "largest" | "lowest"
                        )) =>
            {
                c.count.get_or_insert(k);
            }
            // "no. of", "nr of", "num. of", "# of"
            "no" | "nr" | "num" | "#" if next == "of" || next == "." && w(tokens, k + 2) == "of" => {
                c.count.get_or_insert(k);
            }
            "count" | "counts" | "tally" | "tallies" | "quantity" => {
                c.count.get_or_insert(k);
            }
            "list" | "show" | "display" | "find" | "identify" | "which" | "who" | "whom" | "whose"
            | "give" | "pull" | "fetch" | "retrieve" | "name" | "names" | "see" | "view" => {
                if free || matches!(word, "which" | "who") {
                    c.list.get_or_insert(k);
                }
                if matches!(word, "who" | "whom" | "whose") {
                    c.who.get_or_insert(k);
                }
            }
            "what" | "get" | "tell" => {
                c.weak_list.get_or_insert(k);
            }
            "data" | "information" | "info" | "stats" | "statistics" | "report" | "overview" | "summary"
            | "stuff" | "things" | "dashboard" | "figures" | "numbers" | "details" => {
                c.data_word.get_or_insert(k);
            }
            _ => {}
        }
        // aggregates
        let agg = match word {
            "average" | "avg" | "mean" | "averages" => Some(MeasureAgg::Avg),
            "median" => Some(MeasureAgg::Median),
            "sum" | "summed" | "sums" => Some(MeasureAgg::Sum),
            // "10 or more assessments in total": altogether, not a sum
            "total" if next != "number" && !matches!(next, "of") && w(tokens, k.wrapping_sub(1)) != "in" => {
                Some(MeasureAgg::Sum)
            }
            "minimum" | "min" => Some(MeasureAgg::Min),
            "maximum" | "max" => Some(MeasureAgg::Max),
            _ => None,
        };
        if let Some(a) = agg
            && c.agg.is_none()
        {
            c.agg = Some((k, k + 1, a));
        }
        if word == "total" && next == "number" {
            c.count.get_or_insert(k);
        }
        if matches!(
            word,
            "percentage" | "proportion" | "percent" | "fraction" | "share" | "ratio" | "%"
        ) && (matches!(next, "of" | "that" | "who" | "which")
            || matches!(w(tokens, k.wrapping_sub(1)), "what" | "the"))
            && c.share.is_none()
        {
            c.share = Some((k, k + 1));
        }
        // ranking
        if c.rank.is_none() && free {
            let rank = match word {
                "top" => Some((SortOrder::Desc, false)),
                "bottom" => Some((SortOrder::Asc, false)),
                "highest" | "most" | "greatest" => {
                    Some((SortOrder::Desc, matches!(word, "most" | "greatest")))
                }
                "lowest" | "fewest" | "least" => Some((SortOrder::Asc, matches!(word, "fewest" | "least"))),
                _ => None,
            };
            if let Some((order, by_count)) = rank {
                // "second-highest", "the 3rd most": one row, after the ones ranked before it
                let ordinal = ordinal_at(tokens, k.wrapping_sub(1));
                let n_after = count_at(tokens, k + 1);
                let n_before = count_at(tokens, k.wrapping_sub(1)).filter(|_| ordinal.is_none());
                let n = n_after.or(n_before);
                let first = if n_before.is_some() && n_after.is_none() {
                    k - 1
                } else {
                    k
                };
                let last = if n_after.is_some() { k + 2 } else { k + 1 };
                // "most" as in "most of", "at most", "at least" are not rankings
                let not_rank = matches!((w(tokens, k.wrapping_sub(1)), word), ("at", "most" | "least"))
                    || (word == "most" && next == "of")
                    || (word == "least" && next == "one")
                    // "the 5 most recent assessments": the newest records, in time order
                    // (a cut of a list, read with the other instructions)
                    || (word == "most" && next == "recent" && n_before.is_some());
                if !not_rank {
                    let (first, n, skip) = match ordinal {
                        Some(o) => (k - 1, Some(1), o - 1),
                        None => (first, n, 0),
                    };
                    c.rank = Some(RankCue {
                        first,
                        last,
                        n,
                        order,
                        by_count,
                        superlative: None,
                        skip,
                    });
                }
            }
            // "clinicians sorted by number of assessments": a ranking of every row by a
            // count, like "ranked by" (most first unless the question says otherwise)
            let sorted_by_count =
                !matches!(word, "ranked" | "rank" | "listed") && sort_count_at(tokens, k).is_some();
            if (matches!(word, "rank" | "ranking" | "ranked") || sorted_by_count) && c.rank.is_none() {
                c.rank = Some(RankCue {
                    first: k,
                    last: k + 1,
                    n: None,
                    order: SortOrder::Desc,
                    by_count: false,
                    superlative: None,
                    skip: 0,
                });
            }
            let superlative = match word {
                "oldest" => Some(("oldest", SortOrder::Desc)),
                "youngest" => Some(("youngest", SortOrder::Asc)),
                "deepest" => Some(("deepest", SortOrder::Desc)),
                "heaviest" => Some(("heaviest", SortOrder::Desc)),
                "longest" => Some(("longest", SortOrder::Desc)),
                "shortest" => Some(("shortest", SortOrder::Asc)),
                _ => None,
            };
            if let Some((s, order)) = superlative
                && c.rank.is_none()
            {
                let ordinal = ordinal_at(tokens, k.wrapping_sub(1));
                let n_before = count_at(tokens, k.wrapping_sub(1)).filter(|_| ordinal.is_none());
                let first = if n_before.is_some() || ordinal.is_some() {
                    k - 1
                } else {
                    k
                };
                c.rank = Some(RankCue {
                    first,
                    last: k + 1,
                    n: if ordinal.is_some() { Some(1) } else { n_before },
                    order,
                    by_count: false,
                    superlative: Some(s),
                    skip: ordinal.map_or(0, |o| o - 1),
                });
            }
        }
        // trend
        if c.trend.is_none() {
            if matches!(word, "trend" | "trends" | "trending" | "evolution" | "evolved") {
                c.trend = Some((k, k + 1));
            } else if (word == "over" && next == "time") || (word == "time" && next == "series") {
                c.trend = Some((k, k + 2));
            }
        }
        // "has the healing rate changed", "is it going up"
        if c.change_verb.is_none() && free {
            let change = matches!(
                word,
                "changed"
                    | "changing"
                    | "increased"
                    | "increasing"
                    | "decreased"
                    | "decreasing"
                    | "rising"
                    | "risen"
                    | "falling"
                    | "fallen"
                    | "dropping"
                    | "dropped"
                    | "climbing"
                    | "climbed"
            ) || (matches!(word, "going" | "gone" | "go" | "went")
                && matches!(next, "up" | "down"));
            if change {
                c.change_verb = Some(k);
                c.trend.get_or_insert((k, k + 1));
            }
        }
        // compare
        if c.compare.is_none()
            && matches!(
                word,
                "compare"
                    | "comparing"
                    | "comparison"
                    | "vs"
                    | "versus"
                    | "compared"
                    | "against"
                    | "differ"
                    | "difference"
            )
        {
            c.compare = Some((k, k + 1));
        }
        // grouping
        match word {
            "by" | "across" | "per" | "each" | "every" => {
                let prev = w(tokens, k.wrapping_sub(1));
                if matches!(
                    prev,
                    "sorted"
                        | "ordered"
                        | "ranked"
                        | "sort"
                        | "order"
                        | "rank"
                        | "alphabetically"
                        | "arranged"
                ) {
                    c.sort_at.push(k + 1);
                } else if word == "by"
                    && prev == "then"
                    && (!c.sort_at.is_empty()
                        || !c.then_by_at.is_empty()
                        || c.sort_instruction.is_some_and(|(_, b, _)| b <= k))
                {
                    // "sorted by onset date, oldest first, then by wound id", "highest pain
                    // first, then by visit date": a second key
                    c.then_by_at.push(k + 1);
                } else if word == "by"
                    && prev == "broken"
                    && matches!(w(tokens, k.wrapping_sub(2)), "ties" | "tie")
                {
                    // "ties broken by name": an instruction on equal rows (read with the
                    // other instructions), not a grouping by name
                } else if word == "by"
                    && matches!(
                        prev,
                        "done" | "performed" | "out" | "conducted" | "completed" | "made" | "undertaken"
                    )
                    && !matches!(
                        next,
                        "month" | "week" | "year" | "quarter" | "day" | "clinic" | "etiology"
                    )
                {
                    // "assessments done by clinicians based at …", "visits carried out by
                    // podiatrists": who did them (a filter on the agent), not a grouping
                } else if matches!(word, "each" | "every") && prev == "for"
                    || matches!(word, "by" | "across" | "per")
                {
                    let skip = if matches!(next, "each" | "every" | "the") {
                        2
                    } else {
                        1
                    };
                    c.group_at.push(k + skip);
                    if matches!(word, "per") || matches!(next, "each" | "every") {
                        c.per_at.push(k + skip);
                    }
                } else if matches!(word, "each" | "every")
                    && matches!(
                        prev,
                        "list"
                            | "show"
                            | "display"
                            | "give"
                            | "print"
                            | "me"
                            | "get"
                            | "fetch"
                            | "see"
                            | "up"
                            | "retrieve"
                            | "find"
                            | "view"
                            | "export"
                            | "want"
                            | "need"
                            | "pull"
                    )
                    && !matches!(w(tokens, k + 2), "'s" | "s" | "'")
                {
                    // "list every wound of pt 39", "show me each assessment of wound 100":
                    // the determiner of what is listed (all of them), not a grouping
                } else if matches!(word, "each" | "every") {
                    // "did each clinician do", "each clinic's …"
                    c.group_at.push(k + 1);
                    c.per_at.push(k + 1);
                }
            }
            "breakdown" | "split" | "grouped" | "broken" if matches!(next, "by" | "down") => {}
            _ => {}
        }
        // negation
        if matches!(
            word,
            "not"
                | "non"
                | "no"
                | "nobody"
                | "noone"
                | "without"
                | "excluding"
                | "except"
                | "exclude"
                | "excluded"
                | "never"
                | "havent"
                | "hasnt"
                | "hadnt"
                | "isnt"
                | "arent"
                | "wasnt"
                | "werent"
                | "dont"
                | "doesnt"
                | "didnt"
        ) && !(word == "no" && (next == "of" || next == "." && w(tokens, k + 2) == "of"))
            || (word == "other" && next == "than")
            // "leave out pressure injuries", "leaving out burns", "apart from DFUs", "aside
            // from Bayside", "omitting surgical wounds"
            || (matches!(word, "leave" | "leaving" | "left") && next == "out")
            || (matches!(word, "apart" | "aside") && next == "from")
            || matches!(word, "omit" | "omitting" | "omitted")
            // "patients none of whose wounds have healed", "none of their wounds healed"
            || (word == "none" && next == "of" && matches!(w(tokens, k + 2), "whose" | "their" | "its" | "the" | "his" | "her"))
            || (word == "none" && next == "of")
        {
            c.negations.push(k);
        }
        // pronouns
        let pronoun = match word {
            // "whatever their status", "no matter its stage": not pointing back
            "their" | "its"
                if matches!(w(tokens, k.wrapping_sub(1)), "whatever" | "whichever" | "matter") =>
            {
                false
            }
            // "in their 80s", "in their seventies": an age, not pointing back
            "their"
                if w(tokens, k.wrapping_sub(1)) == "in"
                    && super::tokenize::age_decade_at(tokens, k + 1).is_some() =>
            {
                false
            }
            "it" | "them" | "they" | "those" | "these" | "ones" | "their" | "its" => true,
            w if is_personal_pronoun(w) || w == "hers" => true,
            "same" => matches!(next, "again" | "for" | "but" | "as" | "thing") || k == first_word,
            "that" | "this" => {
                let prev = w(tokens, k.wrapping_sub(1));
                next.is_empty()
                    || matches!(prev, "about" | "on" | "of" | "for" | "with")
                    || next == "?"
                    // the object of a verb, before a particle or a preposition: "break that
                    // down by clinic", "split this by etiology", "redo that for 2024"
                    || matches!(
                        prev,
                        "break" | "split" | "sort" | "order" | "group" | "filter" | "narrow" | "limit" | "restrict"
                            | "widen" | "expand" | "broaden" | "extend" | "do" | "redo" | "repeat" | "rerun" | "run" | "chart" | "plot" | "graph" | "rank"
                            | "slice" | "cut" | "divide" | "separate" | "compare" | "show" | "give" | "make"
                            | "count" | "list" | "rerank" | "reorder" | "resort"
                    ) && matches!(
                        next,
                        "down" | "up" | "out" | "by" | "per" | "for" | "to" | "into" | "in" | "over" | "across"
                            | "again" | "," | "." | "but" | "and" | "with" | "without" | "only" | "as" | "from"
                    )
                    // "show me that wound's visits", "what is this patient's age": one record
                    // pointed at (not "patients that wound nurses saw")
                    || matches!(
                        prev,
                        "me" | "show" | "is" | "was" | "does" | "did" | "has" | "had" | "in" | "at" | "from" | "to"
                            | "list" | "see" | "get"
                    ) && matches!(
                        next.trim_end_matches("'s"),
                        "wound" | "patient" | "clinic" | "clinician" | "assessment" | "visit" | "pt" | "person"
                    )
            }
            _ => false,
        };
        if pronoun {
            c.pronouns.push(k);
        }
        if matches!(word, "instead" | "rather") {
            c.instead = true;
        }
        if word == "also" || (word == "as" && next == "well") {
            c.also = true;
        }
        if matches!(
            word,
            "widen" | "expand" | "broaden" | "extend" | "widening" | "expanding"
        ) && (k + 1..(k + 4).min(tokens.len())).any(|j| w(tokens, j) == "to")
        {
            c.widen = true;
        }
        // "what about the whole Coastal region?": a short follow-up that names a place
        // as a whole
        if c.words <= 8 && matches!(word, "whole" | "entire") && w(tokens, k.wrapping_sub(1)) == "the" {
            c.widen = true;
        }
        // "and across all sites?", "what about everywhere", "for all clinics": a short
        // follow-up that names every place instead of one
        if c.words <= 6
            && (word == "everywhere"
                || matches!(word, "across" | "for" | "at" | "in" | "over")
                    && next == "all"
                    && matches!(
                        w(tokens, k + 2),
                        "sites"
                            | "clinics"
                            | "locations"
                            | "regions"
                            | "facilities"
                            | "services"
                            | "centres"
                            | "centers"
                    ))
        {
            c.widen = true;
            c.everywhere |= word == "everywhere";
        }
        if (word == "more" && matches!(next, "about" | "on" | "detail" | "details" | "info"))
            || word == "details"
        {
            c.more_about = true;
        }
    }
    // follow-up openers
    let mut k = first_word;
    while matches!(
        w(tokens, k),
        "ok" | "okay" | "so" | "now" | "then" | "great" | "thanks" | "and" | "but" | "also" | "," | "well"
    ) {
        if matches!(w(tokens, k), "and" | "but" | "also" | "now" | "then") {
            c.follow_lead = true;
        }
        k += 1;
    }
    let opener = w(tokens, k);
    let opener2 = w(tokens, k + 1);
    if c.widen {
        c.follow_lead = true;
    }
    if matches!(
        opener,
        "only"
            | "just"
            | "same"
            | "instead"
            | "excluding"
            | "without"
            | "except"
            | "exclude"
            | "restrict"
            | "limit"
            | "filter"
            | "including"
            | "plus"
    ) || matches!(
        (opener, opener2),
        ("what" | "how", "about")
            | ("what", "if")
            | ("break" | "broken" | "split", "down" | "it" | "by")
            | ("and", _)
            | ("by", _)
            | ("per", _)
            | ("for", _)
            | ("in", _)
            | ("with", _)
            | ("show", "the")
            | ("tell", "me")
            | ("same", _)
            | ("now", _)
    ) {
        c.follow_lead = true;
    }
    let words: Vec<&str> = tokens
        .iter()
        .filter(|t| t.is_wordlike())
        .map(|t| t.text.as_str())
        .collect();
    c.bare_pair = (3..=6).contains(&words.len())
        && words.iter().filter(|w| **w == "and").count() == 1
        && words.first() != Some(&"and")
        && words.last() != Some(&"and")
        && c.count.is_none()
        && c.list.is_none()
        && c.weak_list.is_none()
        && c.agg.is_none()
        && c.share.is_none()
        && c.rank.is_none()
        && c.trend.is_none()
        && c.compare.is_none()
        && c.negations.is_empty()
        && c.pronouns.is_empty()
        && !words.iter().any(|w| {
            matches!(
                *w,
                "with"
                    | "without"
                    | "who"
                    | "whom"
                    | "whose"
                    | "that"
                    | "which"
                    | "where"
                    | "what"
                    | "how"
                    | "when"
                    | "in"
                    | "at"
                    | "for"
                    | "by"
                    | "of"
                    | "per"
                    | "from"
                    | "have"
                    | "has"
                    | "had"
                    | "are"
                    | "is"
                    | "were"
                    | "was"
                    | "both"
                    | "between"
                    | "on"
                    | "to"
                    | "do"
                    | "does"
                    | "did"
            )
        });
    // "Is there any patient with 8 or more wounds?", "Does Bayside have any open burns?",
    // "Has any wound ever had a width over 8 cm?": a yes/no question about whether such
    // records exist is answered by how many there are ("any open burns?" alone lists them)
    if c.count.is_none()
        && c.list.is_none()
        && c.agg.is_none()
        && c.share.is_none()
        && c.rank.is_none()
        && c.trend.is_none()
        && c.compare.is_none()
    {
        let f = first_word;
        let aux = matches!(
            w(tokens, f),
            "is" | "are" | "was" | "were" | "does" | "do" | "did" | "has" | "have" | "had"
        );
        let there = matches!(w(tokens, f), "is" | "are" | "was" | "were")
            && w(tokens, f + 1) == "there"
            && matches!(
                w(tokens, f + 2),
                "any" | "a" | "an" | "anyone" | "anybody" | "someone" | "somebody"
            );
        // "Do any of the Lakeview patients smoke?" as well as "Does Bayside have any …",
        // "does anyone have more than 6 wounds?"
        let any =
            (f..(f + 6).min(tokens.len())).find(|&k| matches!(w(tokens, k), "any" | "anyone" | "anybody"));
        if there {
            c.count = Some(f + 1);
        } else if let Some(k) = any.filter(|_| aux) {
            c.count = Some(k);
        }
    }
    c
}

/// The intent, with its confidence, from the cues and what was linked.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Evidence {
    /// The aggregation of a linked measure.
    pub measure: Option<MeasureAgg>,
    /// An entity is named (or implied by a value).
    pub entity: bool,
    /// Some filter, value, term or comparison was linked.
    pub filters: bool,
    /// A grouping was linked.
    pub dimensions: bool,
    /// A time grain ("by month").
    pub grain: bool,
    /// Two or more values of one attribute ("DFU vs VLU", "smokers and non-smokers").
    pub two_values: bool,
    /// A ranking term ("busiest", "largest").
    pub ranking_term: bool,
    /// A trend term ("over time").
    pub trend_term: bool,
}

/// Decides the intent.
pub fn decide(c: &Cues, e: &Evidence) -> (Intent, f64) {
    let metric = e.measure.is_some() || c.agg.is_some() || c.share.is_some();
    if c.compare.is_some() && (e.two_values || e.dimensions || e.entity || metric) {
        return (Intent::Compare, 0.9);
    }
    // "smoking and wounds": two topics side by side, nothing said of how they relate
    if c.bare_pair && !e.two_values && !e.dimensions && !e.grain && e.measure.is_none() {
        return (Intent::List, 0.5);
    }
    if c.trend.is_some() || e.trend_term || (e.grain && !e.dimensions) {
        return (
            Intent::Trend,
            if c.trend.is_some() || e.grain { 0.95 } else { 0.9 },
        );
    }
    if c.rank.is_some() || e.ranking_term {
        let explicit = c.rank.is_some_and(|r| r.n.is_some());
        return (Intent::Rank, if explicit || e.ranking_term { 0.95 } else { 0.9 });
    }
    if e.dimensions {
        return (
            Intent::GroupBy,
            if metric || c.count.is_some() { 0.95 } else { 0.9 },
        );
    }
    if let Some(m) = e.measure
        && c.count.is_none()
        && c.list.is_none()
    {
        return if m == MeasureAgg::Count {
            (Intent::Count, 0.95)
        } else {
            (Intent::Aggregate, 0.95)
        };
    }
    if c.agg.is_some() || c.share.is_some() {
        return (Intent::Aggregate, 0.95);
    }
    if c.count.is_some() || e.measure == Some(MeasureAgg::Count) {
        return (Intent::Count, 0.95);
    }
    if let Some(m) = e.measure {
        return if m == MeasureAgg::Count {
            (Intent::Count, 0.9)
        } else {
            (Intent::Aggregate, 0.9)
        };
    }
    if c.data_word.is_some() && !e.filters && !e.dimensions && c.count.is_none() {
        // "wound stuff", "patient data": which stuff?
        return (Intent::List, 0.5);
    }
    if c.list.is_some() {
        return (Intent::List, if e.entity || e.filters { 0.95 } else { 0.5 });
    }
    if e.entity || e.filters {
        return (
            Intent::List,
            if c.weak_list.is_some() || e.filters {
                0.9
            } else {
                0.85
            },
        );
    }
    (Intent::List, 0.3)
}

#[cfg(test)]
mod tests {
    use super::super::tokenize::tokenize;
    use super::*;

    fn cues_of(q: &str) -> Cues {
        cues(&tokenize(q), |_| false)
    }

    #[test]
    fn explicit_words_give_the_intent_with_high_confidence() {
        let e = Evidence {
            entity: true,
            ..Evidence::default()
        };
        let table = [
            ("how many wounds", Intent::Count),
            ("number of patients", Intent::Count),
            ("list wounds", Intent::List),
            ("show me the patients", Intent::List),
            ("average area", Intent::Aggregate),
            ("what percentage of wounds", Intent::Aggregate),
            ("top 5 clinics", Intent::Rank),
            ("trend of wounds", Intent::Trend),
            ("compare clinics", Intent::Compare),
        ];
        for (q, want) in table {
            let (got, conf) = decide(&cues_of(q), &e);
            assert_eq!(got, want, "{q}");
            assert!(conf >= 0.85, "{q}: {conf}");
        }
    }

    #[test]
    fn show_me_data_has_too_little_to_go_on() {
        let (_, conf) = decide(&cues_of("show me data"), &Evidence::default());
        assert!(conf < 0.6);
    }

    #[test]
    fn a_noun_phrase_is_read_as_a_list() {
        let e = Evidence {
            entity: true,
            filters: true,
            ..Evidence::default()
        };
        assert_eq!(decide(&cues_of("open wounds"), &e).0, Intent::List);
    }

    #[test]
    fn ranking_cues_read_the_number_on_either_side() {
        assert_eq!(cues_of("top 10 wounds").rank.and_then(|r| r.n), Some(10));
        assert_eq!(cues_of("the 5 highest").rank.and_then(|r| r.n), Some(5));
        assert_eq!(cues_of("at most 3").rank, None);
        assert!(
            cues_of("which clinic has the most wounds")
                .rank
                .is_some_and(|r| r.by_count)
        );
    }

    #[test]
    fn grouping_words_mark_where_a_dimension_starts() {
        let c = cues_of("wounds by clinic");
        assert_eq!(c.group_at, [2]);
        let c = cues_of("count for each region");
        assert_eq!(c.group_at, [3]);
        let c = cues_of("sorted by area");
        assert!(c.group_at.is_empty());
        assert_eq!(c.sort_at, [2]);
    }

    #[test]
    fn refinements_are_recognised_by_their_opening() {
        for q in [
            "only diabetic ones",
            "what about last year",
            "and for venous ulcers?",
            "by clinic instead",
            "Same for last quarter",
        ] {
            assert!(cues_of(q).follow_lead, "{q}");
        }
        for q in ["how many wounds are open", "list patients over 80"] {
            assert!(!cues_of(q).follow_lead, "{q}");
        }
    }

    #[test]
    fn pronouns_are_found_but_relative_that_is_not() {
        assert_eq!(cues_of("tell me more about it").pronouns.len(), 1);
        assert!(cues_of("wounds that are infected").pronouns.is_empty());
        assert_eq!(cues_of("what about that?").pronouns.len(), 1);
        // a demonstrative object of a verb points back; a relative "that" does not
        assert_eq!(cues_of("break that down by clinic").pronouns.len(), 1);
        assert_eq!(cues_of("can you split this by etiology").pronouns.len(), 1);
        assert_eq!(cues_of("redo that for 2024").pronouns.len(), 1);
        assert!(
            cues_of("clinicians that saw patients by clinic")
                .pronouns
                .is_empty()
        );
    }

    #[test]
    fn a_short_follow_up_naming_a_place_as_a_whole_widens() {
        assert!(cues_of("what about the whole Coastal region?").widen);
        assert!(cues_of("and across all sites?").widen);
        assert!(
            !cues_of("how many open wounds are there in the whole network of clinics by etiology and stage")
                .widen
        );
    }
}
