//! The reading of a question: what the read stage ([`super::read`]) produces from the
//! linked question ([`Ctx`]) and every later stage consumes — the entity, metric,
//! groupings, filters, terms, values, comparisons, time range, ranking, columns and the
//! linked pieces with their confidences. Types only.

use chrono::NaiveDate;

use crate::semantic::{CompareOp, Constraint, Grain, MeasureAgg, SemanticModel, SortOrder, Value};

use super::intent::Cues;
use super::link::{Comparison, Mention};
use super::plan::{Intent, QueryPlan};
use super::time::{GrainExpr, TimeExpr};
use super::tokenize::Token;
use super::{LinkedPiece, TextSpan};

/// Confidence of a value named by its first words only ("Summit" for "Summit Care
/// Home"): below a typo correction, so it is always shown as an assumption.
pub(crate) const PREFIX: f64 = 0.8;

/// Everything the reading looks at.
pub(crate) struct Ctx<'a> {
    pub model: &'a SemanticModel,
    pub tokens: &'a [Token],
    pub mentions: &'a [Mention],
    pub comparisons: &'a [Comparison],
    pub times: &'a [TimeExpr],
    pub grains: &'a [GrainExpr],
    pub cues: &'a Cues,
    pub question: &'a str,
    pub today: NaiveDate,
    pub previous: Option<&'a QueryPlan>,
    pub allowed: &'a super::AllowedValuesSnapshot,
}

impl Ctx<'_> {
    /// The word at token `k` ("" past the end).
    pub(crate) fn w(&self, k: usize) -> &str {
        self.tokens.get(k).map_or("", |t| t.text.as_str())
    }

    /// The text span of tokens `first..last`.
    pub(crate) fn span_of(&self, first: usize, last: usize) -> TextSpan {
        let start = self.tokens.get(first).map_or(0, |t| t.span.start);
        let end = self
            .tokens
            .get(last.saturating_sub(1))
            .map_or(start, |t| t.span.end);
        TextSpan::new(start, end.max(start))
    }

    /// The question text of a span.
    pub(crate) fn text(&self, span: TextSpan) -> String {
        span.slice(self.question).to_owned()
    }

    /// True when the comparison word compares two periods ("2024 vs 2025"): then it is
    /// not a comparison of values.
    pub(crate) fn compares_periods(&self) -> bool {
        self.cues.compare.is_some_and(|(a, _)| {
            self.times.iter().any(|t| t.last <= a) && self.times.iter().any(|t| t.first > a)
        })
    }

    /// A comparison of values or groups was asked ("compare DFUs and VLUs").
    pub(crate) fn compares_values(&self) -> bool {
        self.cues.compare.is_some() && !self.compares_periods()
    }

    /// The mention covering token `k`.
    pub(crate) fn mention_covering(&self, k: usize) -> Option<usize> {
        self.mentions.iter().position(|m| m.first <= k && k < m.last)
    }
}

/// What the metric of the plan is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MetricSpec {
    /// No metric (a list).
    None,
    /// Count the rows of the entity.
    Count,
    /// A named measure.
    Measure(usize),
    /// An aggregate of an attribute.
    Agg { agg: MeasureAgg, attribute: String },
    /// An aggregate of a column term ("average size"): the attribute is an ambiguity.
    AggColumn {
        agg: MeasureAgg,
        term: usize,
        mention: usize,
    },
    /// The share of rows matching the condition part of the question.
    Share,
    /// A measure-kind term ("rate", "outcomes"): which measure is an ambiguity.
    TermMeasure { term: usize, mention: usize },
}

/// "the average of each wound's largest area": each record's extreme of a per-visit
/// measurement, then aggregated.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PerRecord {
    /// The aggregate over the records (average, median).
    pub outer: MeasureAgg,
    /// Each record's extreme (max, min).
    pub inner: MeasureAgg,
    /// The record entity (`wounds`, `patients`).
    pub record: String,
    /// The per-visit attribute (`assessments.area`).
    pub attribute: String,
    /// "largest area".
    pub span: TextSpan,
    /// The tokens read ("average of each wound's largest area").
    pub tokens: (usize, usize),
}

/// A grouping.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DimSpec {
    /// A qualified attribute.
    Attribute(String),
    /// A column term ("by date", "by clinic"): the attribute is chosen by the detectors.
    ColumnTerm { term: usize, mention: usize },
}

/// A grouping with where it was said.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Dim {
    pub spec: DimSpec,
    pub span: TextSpan,
}

/// A typed filter read directly from the question.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Filter {
    pub constraint: Constraint,
    pub first: usize,
    pub span: TextSpan,
}

/// A dictionary term used as a qualifier, with the entity it modifies.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TermUse {
    pub term: usize,
    pub mention: usize,
    pub anchor: String,
    pub negated: bool,
    pub first: usize,
}

/// A phrase matching several values (of one or several attributes).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ValueChoice {
    pub mention: usize,
    pub hits: Vec<(String, Value, String)>,
    pub negated: bool,
    pub first: usize,
}

/// What a comparison's attribute is, once read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CmpSubject {
    /// Known.
    Attribute(String),
    /// Chosen among a column term's options compatible with the unit.
    Column { term: usize },
    /// A per-visit attribute compared for wounds/patients: the latest value or any visit.
    Aggregation { per_visit: String, latest: String },
}

/// A comparison with a number, read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cmp {
    pub subject: CmpSubject,
    pub op: CompareOp,
    pub value: f64,
    pub upper: Option<f64>,
    pub unit: Option<String>,
    pub span: TextSpan,
    pub first: usize,
    pub negated: bool,
}

/// The time range, read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TimeSpec {
    pub start: NaiveDate,
    pub end: NaiveDate,
    pub label: String,
    pub span: TextSpan,
    /// A time dimension named in the question.
    pub dimension: Option<String>,
    /// "all time": remove any range.
    pub all_time: bool,
}

/// What a ranking ranks by.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RankKey {
    /// Not said ("top 10 wounds").
    None,
    /// A measure, per the subject entity.
    Measure(usize),
    /// An attribute of the subject entity.
    Attribute(String),
    /// How many rows of another entity each subject row has ("the most open wounds").
    CountOf(String),
    /// How many rows of `counted` each value of `attribute` has ("the most common
    /// etiology", "which discipline recorded the most assessments").
    CountBy { attribute: String, counted: String },
    /// How many rows of the entity each group of the question's groupings has ("top 4
    /// locations by wound count": which attribute "locations" is stays the word's own
    /// question).
    CountPerGroup(String),
    /// An aggregate of a measured attribute per value of `attribute` ("bottom 3
    /// etiologies by mean initial area").
    AggBy {
        attribute: String,
        agg: MeasureAgg,
        measured: String,
    },
}

/// A ranking, read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RankSpec {
    pub n: Option<u32>,
    pub order: SortOrder,
    pub key: RankKey,
    /// The entity ranked (clinics in "top 5 clinics by healing rate").
    pub subject: Option<String>,
    pub span: TextSpan,
    /// Ranked rows skipped before the ones asked for ("the second-highest": 1).
    pub skip: u32,
    /// "clinicians ranked by …" with no number: every row, in rank order (no top-N cut).
    pub every: bool,
}

/// Two or more values of one attribute compared ("DFU vs VLU").
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CompareSpec {
    pub attribute: String,
    pub values: Vec<Value>,
}

/// A list column.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ColSpec {
    Attribute(String),
    ColumnTerm { term: usize, mention: usize },
}

/// "more … than usual": a threshold without a number.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ThresholdGap {
    pub span: TextSpan,
    pub op: CompareOp,
    /// An attribute, or `None` for "more visits" (a count of assessments).
    pub attribute: Option<String>,
    pub related: Option<String>,
}

/// Where the entity came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntitySource {
    /// Named in the question ("wounds").
    Named,
    /// The entity of a named measure.
    Measure,
    /// Implied by a value, attribute or comparison ("DFUs" → wounds).
    Implied,
    /// Only a dictionary term points at it.
    Term,
    /// "who" → patients.
    Who,
    /// Carried over from the previous question.
    Context,
    /// Nothing.
    Missing,
}

/// The question read into roles.
#[derive(Clone, Debug)]
pub(crate) struct Reading {
    pub entity: Option<String>,
    pub entity_source: EntitySource,
    pub entity_span: Option<TextSpan>,
    pub term_entities: Vec<String>,
    pub intent: Intent,
    pub intent_confidence: f64,
    pub metric: MetricSpec,
    pub metric_span: Option<TextSpan>,
    pub dims: Vec<Dim>,
    pub grain: Option<Grain>,
    pub filters: Vec<Filter>,
    pub terms: Vec<TermUse>,
    pub values: Vec<ValueChoice>,
    pub cmps: Vec<Cmp>,
    pub time: Option<TimeSpec>,
    pub rank: Option<RankSpec>,
    pub columns: Vec<ColSpec>,
    pub compare: Option<CompareSpec>,
    pub share_from: Option<usize>,
    pub gaps: Vec<ThresholdGap>,
    pub pieces: Vec<LinkedPiece>,
    pub unresolved_pronoun: Option<TextSpan>,
    pub follow_up: bool,
    /// "per wound" with an aggregate: the unit of analysis was said.
    pub per_unit: Option<String>,
    /// "without the etiology filter": attributes whose filters a follow-up drops.
    pub remove: Vec<String>,
    /// A time dimension named or implied ("healed", "new"), for the range or trend.
    pub time_dimension: Option<String>,
    /// A value of a per-visit attribute said of wounds or patients ("wounds with high
    /// exudate"): the latest visit, or any visit.
    pub visit_values: Vec<VisitValue>,
    /// Words that look like names the model does not know ("at Riverside").
    pub unknown_names: Vec<TextSpan>,
    /// "at the latest assessment" (true) or "at any visit" (false).
    pub visit_hint: Option<bool>,
    /// "… both slough and signs of infection at the same visit": the values said of the
    /// visits hold on one visit, not each on a visit of its own.
    pub same_visit: bool,
    /// "… at some visit in the past 2 weeks but not at their last assessment": the values
    /// said of the visits do not hold at the record's latest visit.
    pub not_at_latest: bool,
    /// "… infection signs at their latest visit but none at their first": the values said
    /// of the visits do not hold at the record's first visit.
    pub not_at_first: bool,
    /// "… high exudate at every visit": the values said of the visits hold at each of the
    /// record's visits (no visit where they do not), not at some visit.
    pub every_visit: bool,
    /// With `visit_hint = Some(true)`: the visit said is the record's first one ("area at
    /// the first assessment", "first measured area"), not its latest.
    pub visit_first: bool,
    /// "slough at the first assessment but granulation at the latest one": values said
    /// from this token on are of the other visit (the first, or the latest when
    /// `visit_first`) than the values said before.
    pub other_visit_from: Option<usize>,
    /// The tokens that said it ("at their latest assessment": "their" points nowhere).
    pub visit_hint_at: Option<(usize, usize)>,
    /// "how many at Riverside", "how many did podiatrists see": the entity is only the
    /// context of the count, not what is counted.
    pub count_context_only: bool,
    /// "is the healing rate improving": a trend word used as a change over time.
    pub change_term: Option<usize>,
    /// Readings the plan cannot express exactly, said as assumptions (span, what was done).
    pub notes: Vec<(TextSpan, String)>,
    /// "days from onset to healed": the model's derived day count between two dates.
    pub days_between: Option<String>,
    /// A computation the question asks for that the model has no way to make ("days
    /// between onset and the first assessment"): said, never answered with something else.
    pub cannot_compute: Option<String>,
    /// "the average of each wound's largest area": an aggregate of each record's extreme.
    pub per_record: Option<PerRecord>,
    /// Token ranges a step read as part of what it did ("common" in "the most common
    /// etiology", "one row per", "from most to fewest"), for the word accounting.
    pub consumed: Vec<(usize, usize)>,
    /// An ordering said as an instruction ("listed from most to fewest").
    pub sort: Option<SortOrder>,
    /// "sorted by onset date, oldest first": the rows are ordered by this attribute
    /// (qualified) or, when `None` inside, by the entity's own date.
    pub sort_by: Option<(Option<String>, SortOrder)>,
    /// "…, then by wound id": further keys (qualified attributes of the listed records),
    /// each with its direction, for rows equal on the ones before.
    pub then_by: Vec<(String, SortOrder)>,
    /// "the number of open wounds and the number of healed wounds": further count measures
    /// of the same records, shown beside the metric (model measure indices).
    pub extra_measures: Vec<usize>,
    /// "the number of smokers and the number of non-smokers": counts of the records under
    /// conditions said by values, side by side (condition, column label).
    pub count_conditions: Vec<(Constraint, String)>,
    /// Decimal places asked for ("round to 1 decimal").
    pub round: Option<u8>,
    /// "show all if tied", "ties included": rows tied with the last one kept are kept.
    pub limit_ties: bool,
    /// "the 5 wounds with the largest area": how many of the ranked rows are shown, said
    /// before the records a ranking word orders.
    pub top_n: Option<u32>,
    /// How many rows of a list were asked for ("limit 15", "only 20 patients").
    pub row_limit: Option<u32>,
    /// Groups kept by their count ("etiologies with more than 20 wounds").
    pub having: Option<(CompareOp, f64)>,
    /// "area at first assessment vs latest area": a measurement's first and latest values
    /// shown side by side as list columns (the question lists, whatever its "vs" says).
    pub side_by_side: bool,
    /// Mentions no reading step gave a role (their words are not explained by them).
    pub unused: Vec<usize>,
    /// Comparisons (their first token) no reading step could use: their words are not
    /// explained by them ("etiologies with more than 100" with nothing counted).
    pub unread_comparisons: Vec<usize>,
    /// Mentions of known words used in a way nothing reads ("large clinics": "large" is
    /// defined for wounds): unexplained even though the word is known.
    pub not_understood: Vec<usize>,
}

impl Reading {
    /// A reading with nothing read yet (`grain`: the trend grain said, if any).
    pub(crate) fn new(grain: Option<Grain>) -> Self {
        Reading {
            entity: None,
            entity_source: EntitySource::Missing,
            entity_span: None,
            term_entities: Vec::new(),
            intent: Intent::List,
            intent_confidence: 0.0,
            metric: MetricSpec::None,
            metric_span: None,
            dims: Vec::new(),
            grain,
            filters: Vec::new(),
            terms: Vec::new(),
            values: Vec::new(),
            cmps: Vec::new(),
            time: None,
            rank: None,
            columns: Vec::new(),
            compare: None,
            share_from: None,
            gaps: Vec::new(),
            pieces: Vec::new(),
            unresolved_pronoun: None,
            follow_up: false,
            per_unit: None,
            remove: Vec::new(),
            time_dimension: None,
            visit_values: Vec::new(),
            unknown_names: Vec::new(),
            visit_hint: None,
            same_visit: false,
            not_at_latest: false,
            not_at_first: false,
            every_visit: false,
            visit_first: false,
            other_visit_from: None,
            visit_hint_at: None,
            count_context_only: false,
            change_term: None,
            notes: Vec::new(),
            days_between: None,
            cannot_compute: None,
            per_record: None,
            consumed: Vec::new(),
            sort: None,
            sort_by: None,
            then_by: Vec::new(),
            extra_measures: Vec::new(),
            count_conditions: Vec::new(),
            unused: Vec::new(),
            unread_comparisons: Vec::new(),
            not_understood: Vec::new(),
            round: None,
            limit_ties: false,
            top_n: None,
            row_limit: None,
            having: None,
            side_by_side: false,
        }
    }
}

/// A value of a per-visit attribute said of wounds or patients.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VisitValue {
    pub per_visit: String,
    pub latest: String,
    pub value: Value,
    pub label: String,
    pub first: usize,
    pub span: TextSpan,
    pub negated: bool,
}
