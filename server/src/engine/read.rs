//! Stage 5 — reading: what each linked phrase does in the question.
//!
//! [`read`] decides the role of every linked phrase — the entity counted or listed, the
//! metric, groupings ("by clinic"), filters (values, booleans, comparisons, dictionary
//! terms with the entity they modify), the time range and its date column, a ranking, list
//! columns, a comparison between values, words that point back, words nothing matches —
//! and collects the linked pieces with their confidences (F4). The result, a
//! [`Reading`], is what the ambiguity detectors look at and what [`super::draft`] builds
//! the plan from. Follow-ups are recognised here (see [`super::context`]).
//!
//! Pure. Only model names and typed literals come out of it, never question text (an
//! identifier typed after its name, "MRN CL0000042", is a typed value).

use chrono::NaiveDate;

use crate::semantic::{
    Aggregation, AttributeRole, AttributeType, CompareOp, Constraint, DateOperand, Derived, Grain,
    MeasureAgg, PlanChange, SemanticModel, SortOrder, Span, SpanUnit, TermKind, Value, split_qualified,
};

use super::context;
use super::intent::{self, Cues, Evidence};
use super::link::{self, Comparison, DEFAULT, EXACT, Mention, Subject};
use super::plan::{Intent, QueryPlan};
use super::time::{GrainExpr, TimeExpr};
use super::tokenize::{Token, TokenKind};
use super::vocab::Target;
use super::{LinkMethod, LinkedPiece, PieceKind, TextSpan};

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
    fn w(&self, k: usize) -> &str {
        self.tokens.get(k).map_or("", |t| t.text.as_str())
    }

    fn span_of(&self, first: usize, last: usize) -> TextSpan {
        let start = self.tokens.get(first).map_or(0, |t| t.span.start);
        let end = self
            .tokens
            .get(last.saturating_sub(1))
            .map_or(start, |t| t.span.end);
        TextSpan::new(start, end.max(start))
    }

    fn text(&self, span: TextSpan) -> String {
        span.slice(self.question).to_owned()
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

// =====================================================================================
// Reading
// =====================================================================================

fn qualified(model: &SemanticModel, e: usize, a: usize) -> String {
    format!(
        "{}.{}",
        model.entities[e].name, model.entities[e].attributes[a].name
    )
}

fn attr_weight(model: &SemanticModel, q: &str) -> f64 {
    model.attribute(q).map_or(1.0, |r| r.attribute.weight)
}

fn how(m: &Mention) -> LinkMethod {
    if m.fuzzy || (m.entries.is_empty() && m.values.iter().all(|v| v.prefix)) {
        LinkMethod::Fuzzy
    } else if m.exact() || !m.values.is_empty() {
        LinkMethod::Exact
    } else {
        LinkMethod::Synonym
    }
}

fn piece(ctx: &Ctx<'_>, m: &Mention, kind: PieceKind, target: String, value: Option<Value>) -> LinkedPiece {
    let method = how(m);
    let mut confidence = m.confidence();
    if method == LinkMethod::Fuzzy {
        // a guess about a weighted field drops a tier
        if let Some((e, a)) = m.attributes().next() {
            confidence *= ctx.model.entities[e].attributes[a].weight;
        } else if let Some(v) = &value {
            let _ = v;
            confidence *= attr_weight(ctx.model, &target);
        }
    }
    LinkedPiece {
        kind,
        target,
        value,
        text: ctx.text(m.span),
        span: Some(m.span),
        how: method,
        confidence,
    }
}

/// True when token `k` is negated ("not", "non", "without", "no", "excluding").
fn negated_at(ctx: &Ctx<'_>, first: usize) -> bool {
    let neg = &ctx.cues.negations;
    let is_neg = |k: usize| neg.contains(&k);
    if first == 0 {
        return false;
    }
    // "not diabetic", "without any", "other than", "not marked as diabetic", "aren't
    // getting any better", "who have never been infected": the negation may stand a few
    // linking words before what it negates
    let mut k = first;
    for _ in 0..4 {
        if k == 0 {
            return false;
        }
        k -= 1;
        if is_neg(k) {
            return true;
        }
        if !matches!(
            ctx.w(k),
            "a" | "an"
                | "any"
                | "than"
                | "the"
                | "marked"
                | "flagged"
                | "recorded"
                | "listed"
                | "coded"
                | "labelled"
                | "labeled"
                | "classed"
                | "classified"
                | "documented"
                | "known"
                | "as"
                | "been"
                | "being"
                | "be"
                | "currently"
                | "getting"
                | "yet"
                | "ever"
                | "had"
                | "have"
                | "has"
                | "got"
                | "with"
        ) {
            return false;
        }
    }
    false
}

/// The entity a mention names or implies (entity word, value, attribute).
fn mention_entity(model: &SemanticModel, m: &Mention) -> Option<String> {
    if let Some(e) = m.entity() {
        return Some(model.entities[e].name.clone());
    }
    for e in &m.entries {
        if let Target::Value(a, _) = &e.target {
            return split_qualified(a).map(|(e, _)| e.to_owned());
        }
    }
    m.values
        .first()
        .and_then(|h| split_qualified(&h.attribute).map(|(e, _)| e.to_owned()))
}

/// The plain count measure of the entity that a count-of-related attribute's phrase
/// names with nothing but count words: "number of visits", "visit count", "how many
/// visits" (the wounds' assessment count) → the assessments' count. `None` when the phrase
/// says more ("number of assessments done"), names no entity, or the model has no
/// unfiltered count measure of it.
fn counted_entity_measure(model: &SemanticModel, m: &Mention) -> Option<usize> {
    let words: Vec<&str> = m.phrase.split(' ').collect();
    let counts = |w: &&str| matches!(*w, "number" | "numbers" | "count" | "many");
    if !words.iter().any(counts) {
        return None;
    }
    let rest: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !counts(w) && !matches!(*w, "of" | "how"))
        .collect();
    let named = model.find_entity(&rest.join(" "))?;
    let counts_it = m.attributes().any(|(e, a)| {
        matches!(&model.entities[e].attributes[a].derived, Some(Derived::CountRelated { entity }) if *entity == named.name)
    });
    if !counts_it {
        return None;
    }
    model
        .measures
        .iter()
        .position(|x| x.entity == named.name && x.agg == MeasureAgg::Count && x.filter.is_none())
}

/// Reads the question.
pub(crate) fn read(ctx: &Ctx<'_>) -> Reading {
    let model = ctx.model;
    let ms = ctx.mentions;
    let mut used = vec![false; ms.len()];
    let mut r = Reading {
        entity: None,
        entity_source: EntitySource::Missing,
        entity_span: None,
        term_entities: Vec::new(),
        intent: Intent::List,
        intent_confidence: 0.0,
        metric: MetricSpec::None,
        metric_span: None,
        dims: Vec::new(),
        grain: ctx.grains.first().map(|g| g.grain),
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
        visit_hint_at: None,
        count_context_only: false,
        change_term: None,
        notes: Vec::new(),
        days_between: None,
    };
    let mention_covering = |k: usize| ms.iter().position(|m| m.first <= k && k < m.last);

    // mentions inside comparisons belong to them
    for c in ctx.comparisons {
        for (mi, m) in ms.iter().enumerate() {
            if m.first < c.last && c.first < m.last && Some(mi) != c.subject_mention {
                // the subject mention is consumed below with its role
                used[mi] = true;
            }
        }
    }
    for c in ctx.comparisons {
        if let Some(mi) = c.subject_mention {
            used[mi] = true;
        }
    }
    // a rank word that is also a value ("bottom") is a rank word
    if let Some(rc) = ctx.cues.rank {
        for (mi, m) in ms.iter().enumerate() {
            let ranking_term = m.terms().any(|t| model.terms[t].kind == TermKind::Ranking);
            if m.first >= rc.first && m.last <= rc.last && !ranking_term {
                used[mi] = true;
            }
        }
    }

    // ---- "without the etiology filter" (relaxing a follow-up)
    for k in 0..ctx.tokens.len() {
        if !matches!(
            ctx.w(k),
            "filter" | "filters" | "condition" | "restriction" | "criterion"
        ) {
            continue;
        }
        if let Some(mi) = ms
            .iter()
            .position(|m| m.last == k || m.last + 1 == k && ctx.w(m.last) == "value")
        {
            let m = &ms[mi];
            let mut attrs: Vec<String> = m.attributes().map(|(e, a)| qualified(model, e, a)).collect();
            for e in &m.entries {
                if let Target::Term(t) = e.target {
                    for o in &model.terms[t].options {
                        if let Some(PlanChange::ChooseAttribute { attribute }) = &o.change {
                            attrs.push(attribute.clone());
                        }
                    }
                }
            }
            if !attrs.is_empty() {
                r.remove.extend(attrs);
                used[mi] = true;
            }
        }
    }

    // ---- "at the latest assessment", "at any visit"
    read_visit_hint(ctx, &mut r, &mut used);

    // ---- "wound id 100", "patient #42", "pt 42": a record named by its key
    read_ids(ctx, &mut r);

    // ---- "how many distinct wound locations": a count of an attribute's values
    read_distinct(ctx, &mut r, &mut used);

    // ---- "whatever their status", "regardless of diabetes": no filter on that
    read_regardless(ctx, &mut used);

    // ---- "days from onset to healed": the day count between two dates
    if let Some((attribute, x, y)) = days_between(ctx) {
        used[x] = true;
        used[y] = true;
        r.days_between = Some(attribute);
    }

    // ---- "not assessed in 2 weeks", "no assessment in the last 30 days"
    let mut consumed_time: Option<usize> = None;
    read_not_seen(ctx, &mut r, &mut used, &mut consumed_time);

    // ---- threshold gaps: "more visits than usual", "pain higher than normal"
    read_gaps(ctx, &mut r, &mut used);

    // ---- groupings ("by clinic", "per region", "for each clinic")
    let rank_by: Option<usize> = ctx.cues.rank.map(|rc| rc.last);
    let mut group_starts: Vec<usize> = ctx.cues.group_at.clone();
    for (mi, m) in ms.iter().enumerate() {
        if matches!(ctx.w(m.first), "by" | "per" | "each") && m.last > m.first + 1 {
            group_starts.push(m.first + 1);
            let _ = mi;
        }
    }
    group_starts.sort_unstable();
    group_starts.dedup();
    let in_grain = |k: usize| ctx.grains.iter().any(|g| g.first <= k && k < g.last);
    let mut rank_key_mention: Option<usize> = None;
    for &g in &group_starts {
        if in_grain(g) || in_grain(g.saturating_sub(1)) {
            continue;
        }
        let mut k = g;
        while let Some(mi) = mention_covering(k).filter(|&mi| !used[mi]) {
            let m = &ms[mi];
            // "top 5 clinics by healing rate": a measure after "by" is the ranking key
            if let Some(mx) = m.measure() {
                if ctx.cues.rank.is_some() || rank_by.is_some() {
                    rank_key_mention = Some(mi);
                    used[mi] = true;
                    let _ = mx;
                }
                break;
            }
            let is_per = ctx.cues.per_at.contains(&k);
            let mut spec = None;
            // "by clinic care setting": an entity word followed by one of its attributes
            let word_entity = m
                .phrase
                .split(' ')
                .find_map(|w| model.find_entity(w))
                .and_then(|e| model.entities.iter().position(|x| x.name == e.name));
            let compound = m.entity().or(word_entity).and_then(|e| {
                ms.iter().position(|o| o.first == m.last).and_then(|oi| {
                    ms[oi]
                        .attributes()
                        .find(|&(oe, oa)| oe == e && groupable(model, oe, oa))
                        .map(|(oe, oa)| (oi, qualified(model, oe, oa)))
                })
            });
            if let Some((oi, q)) = compound {
                used[oi] = true;
                spec = Some(DimSpec::Attribute(q));
            } else if let Some(t) = m.terms().find(|&t| model.terms[t].kind == TermKind::Column) {
                spec = Some(DimSpec::ColumnTerm { term: t, mention: mi });
            } else if let Some(e) = m.entity() {
                let ent = &model.entities[e];
                if is_per && ctx.cues.agg.is_some() && ctx.cues.count.is_none() {
                    r.per_unit = Some(ent.name.clone());
                    used[mi] = true;
                    break;
                }
                let own_attr = ms.iter().position(|o| o.first == m.last).and_then(|oi| {
                    ms[oi]
                        .attributes()
                        .find(|&(oe, oa)| oe == e && groupable(model, oe, oa))
                        .map(|(oe, oa)| (oi, qualified(model, oe, oa)))
                });
                if let Some((oi, q)) = own_attr {
                    // "by patient mobility": the entity's attribute, not the entity
                    used[oi] = true;
                    spec = Some(DimSpec::Attribute(q));
                } else if let Some(d) = &ent.display_attribute {
                    spec = Some(DimSpec::Attribute(format!("{}.{}", ent.name, d)));
                } else {
                    spec = Some(DimSpec::Attribute(format!("{}.{}", ent.name, ent.key)));
                }
            } else if let Some((e, a)) = m.attributes().find(|&(e, a)| groupable(model, e, a)) {
                if ctx.cues.rank.is_some() && ctx.cues.sort_at.is_empty() && rank_key_mention.is_none() {
                    // "top 10 wounds by area": a ranking key
                    rank_key_mention = Some(mi);
                    used[mi] = true;
                    break;
                }
                spec = Some(DimSpec::Attribute(qualified(model, e, a)));
            }
            let Some(spec) = spec else { break };
            used[mi] = true;
            let span = m.span;
            let target = match &spec {
                DimSpec::Attribute(a) => a.clone(),
                DimSpec::ColumnTerm { term, .. } => model.terms[*term].id.clone(),
            };
            let mut p = piece(ctx, m, PieceKind::Dimension, target, None);
            if matches!(spec, DimSpec::ColumnTerm { .. }) {
                p.confidence = p.confidence.min(EXACT);
            }
            r.pieces.push(p);
            r.dims.push(Dim { spec, span });
            // "by clinic and etiology"
            if matches!(ctx.w(m.last), "and" | "," | "&" | "then") {
                k = m.last + 1;
                if matches!(ctx.w(k), "by" | "per") {
                    k += 1;
                }
                continue;
            }
            break;
        }
    }
    for &s in &ctx.cues.sort_at {
        if let Some(mi) = mention_covering(s).filter(|&mi| !used[mi]) {
            rank_key_mention = Some(mi);
            used[mi] = true;
        }
    }

    // ---- measures
    let mut measures: Vec<(usize, usize)> = Vec::new();
    let mut measure_time_dim: Option<String> = None;
    for (mi, m) in ms.iter().enumerate() {
        if used[mi] {
            continue;
        }
        // "number of visits", "visit count": count words and a word for what a
        // count-of-related attribute counts say "count the visits" as much as "number of
        // assessments" (which also names the measure), when nothing else is the subject
        let other_subject = || {
            ms.iter()
                .enumerate()
                .any(|(oi, o)| oi != mi && !used[oi] && (o.entity().is_some() || o.measure().is_some()))
        };
        let counted = m
            .measure()
            .is_none()
            .then(|| counted_entity_measure(model, m))
            .flatten()
            .filter(|_| !other_subject());
        if let Some(mx) = m.measure().or(counted) {
            // "number of wounds" after "with"/"by" is the patients' attribute; as a
            // question it is the count
            let prev = ctx.w(m.first.wrapping_sub(1));
            // "compare the number of patients at …" is the count
            let compared = prev == "the" && matches!(ctx.w(m.first.wrapping_sub(2)), "compare" | "comparing");
            let attr_reading = m.attributes().next().is_some()
                && !compared
                && (matches!(prev, "with" | "highest" | "most" | "lowest" | "fewest" | "the")
                    || ctx.comparisons.iter().any(|c| c.subject_mention == Some(mi))
                    || ctx.cues.agg.is_some() && model.measures[mx].agg == MeasureAgg::Count);
            if attr_reading {
                continue;
            }
            let m_def = &model.measures[mx];
            let count_word = m.phrase.split(' ').any(|w| {
                matches!(
                    w,
                    "number"
                        | "count"
                        | "many"
                        | "numbers"
                        | "caseload"
                        | "headcount"
                        | "volume"
                        | "activity"
                )
            });
            if m_def.agg == MeasureAgg::Count
                && ctx.cues.count.is_none()
                && ctx.cues.rank.is_none()
                && !count_word
            {
                // "show their open wounds", "wounds healed in 2024": rows, not a count
                if let Some(f) = &m_def.filter {
                    r.filters.push(Filter {
                        constraint: f.clone(),
                        first: m.first,
                        span: m.span,
                    });
                    // the status names the date column ("healed")
                    if let Constraint::Compare {
                        value: Value::Text(v),
                        ..
                    } = f
                        && model.time_dimension(v).is_some()
                    {
                        measure_time_dim.get_or_insert_with(|| v.clone());
                    }
                }
                if r.entity.is_none() {
                    r.entity = Some(m_def.entity.clone());
                    r.entity_source = EntitySource::Named;
                    r.entity_span = Some(m.span);
                }
                r.pieces
                    .push(piece(ctx, m, PieceKind::Entity, m_def.entity.clone(), None));
                used[mi] = true;
                continue;
            }
            measures.push((mi, mx));
            used[mi] = true;
        }
    }

    // ---- ranking key
    let mut rank_subject: Option<String> = None;
    if let Some(rc) = ctx.cues.rank {
        // the entity right after the cue ("top 5 clinics") is the one ranked
        if let Some(mi) = mention_covering(rc.last).or_else(|| mention_covering(rc.last + 1))
            && let Some(e) = ms[mi].entity()
            && !used[mi]
            && !rc.by_count
        {
            rank_subject = Some(model.entities[e].name.clone());
        }
        if rank_subject.is_none() {
            // "which clinic has the most …", "clinics with the highest …"
            rank_subject = ms.iter().rev().filter(|m| m.last <= rc.first).find_map(|m| {
                m.entity().map(|e| model.entities[e].name.clone()).or_else(|| {
                    m.terms().next().and_then(|_| {
                        m.phrase
                            .split(' ')
                            .find_map(|w| model.find_entity(w))
                            .map(|e| e.name.clone())
                    })
                })
            });
        }
        if rank_subject.is_none() && rc.by_count && ctx.cues.who.is_some() {
            rank_subject = Some("patients".into());
        }
        let count_measure_after = measures
            .iter()
            .find(|(mi, mx)| ms[*mi].first >= rc.last && model.measures[*mx].agg == MeasureAgg::Count)
            .map(|&(_, mx)| mx);
        let superlative_attr = rc.superlative.map(|s| {
            let subject = rank_subject
                .clone()
                .or_else(|| r.entity.clone())
                .unwrap_or_else(|| "patients".into());
            match (s, subject.as_str()) {
                ("oldest" | "youngest", "patients") => "patients.age",
                ("oldest" | "youngest" | "longest", _) => "wounds.days_open",
                ("deepest", _) => "wounds.latest_depth",
                ("heaviest", _) => "patients.bmi",
                _ => "wounds.latest_area",
            }
        });
        let key = if let Some(a) = superlative_attr {
            RankKey::Attribute(a.to_owned())
        } else if let Some(mi) = rank_key_mention {
            let m = &ms[mi];
            if let Some(mx) = m.measure() {
                RankKey::Measure(mx)
            } else if let Some((e, a)) = m.attributes().next() {
                RankKey::Attribute(qualified(model, e, a))
            } else {
                RankKey::None
            }
        } else if let (true, Some(mx)) = (rc.by_count, count_measure_after) {
            RankKey::Measure(mx)
        } else if rc.by_count {
            // "the most open wounds": count of the entity after the cue
            let after = (rc.last..ctx.tokens.len()).find_map(|k| {
                mention_covering(k).filter(|&mi| !used[mi] && mention_entity(model, &ms[mi]).is_some())
            });
            match after.and_then(|mi| mention_entity(model, &ms[mi])) {
                Some(e) => RankKey::CountOf(e),
                None => RankKey::None,
            }
        } else if let Some((mi, mx)) = measures
            .first()
            .copied()
            .filter(|(mi, _)| ms[*mi].first >= rc.last)
        {
            // "highest healing rate"
            let _ = mi;
            RankKey::Measure(mx)
        } else {
            // "highest pain": the attribute right after the cue
            let after = mention_covering(rc.last).filter(|&mi| !used[mi]);
            match after.and_then(|mi| {
                ms[mi]
                    .attributes()
                    .find(|&(e, a)| sortable(model, e, a))
                    .map(|x| (mi, x))
            }) {
                Some((mi, (e, a))) => {
                    used[mi] = true;
                    RankKey::Attribute(qualified(model, e, a))
                }
                None => RankKey::None,
            }
        };
        if let RankKey::Measure(mx) = key {
            measures.retain(|&(_, m)| m != mx);
            if measures.is_empty() {
                // keep the measure as the metric too
                if let Some(mi) = rank_key_mention {
                    measures.push((mi, mx));
                }
            }
        }
        let n_before_subject = rc.n.or_else(|| {
            ms.iter()
                .filter(|m| m.last <= rc.first && m.entity().is_some())
                .filter_map(|m| m.first.checked_sub(1))
                .find_map(|k| {
                    ctx.tokens
                        .get(k)
                        .filter(|t| {
                            matches!(
                                t.kind,
                                super::tokenize::TokenKind::Number | super::tokenize::TokenKind::NumberWord
                            )
                        })
                        .and_then(|t| t.num)
                })
                .filter(|v| *v >= 1.0 && *v <= 1000.0 && v.fract() == 0.0)
                .map(|v| v as u32)
        });
        r.rank = Some(RankSpec {
            n: n_before_subject,
            order: rc.order,
            key,
            subject: rank_subject.clone(),
            span: ctx.span_of(rc.first, rc.last),
        });
    }

    // ---- entity
    let explicit: Vec<(usize, String)> = ms
        .iter()
        .enumerate()
        .filter(|(mi, m)| !used[*mi] && m.entity().is_some() && m.measure().is_none())
        .filter(|(_, m)| {
            // a column term that is also an entity word ("clinic") is the entity
            !m.entries.iter().any(|e| matches!(e.target, Target::Value(..)))
        })
        .map(|(mi, m)| (mi, model.entities[m.entity().unwrap_or(0)].name.clone()))
        .collect();
    // the entity word of a comparison subject ("patients over 80") is the entity too
    let implied_by_cmp = ctx.comparisons.iter().find_map(|c| match &c.subject {
        Subject::Implied(e) => Some(e.clone()),
        _ => None,
    });
    let earlier_named = r.entity_span.is_some_and(|s| {
        explicit
            .first()
            .is_some_and(|(mi, _)| s.start < ms[*mi].span.start)
    });
    if let Some((mi, e)) = explicit.first().filter(|_| !earlier_named) {
        r.entity = Some(e.clone());
        r.entity_source = EntitySource::Named;
        r.entity_span = Some(ms[*mi].span);
        used[*mi] = true;
        r.pieces
            .push(piece(ctx, &ms[*mi], PieceKind::Entity, e.clone(), None));
    } else if let Some(e) = implied_by_cmp.filter(|_| r.entity.is_none()) {
        r.entity = Some(e.clone());
        r.entity_source = EntitySource::Named;
    }
    if let Some(u) = &r.per_unit {
        r.entity = Some(u.clone());
        r.entity_source = EntitySource::Named;
    }
    // the remaining entity words are filters' context ("patients with wounds"): used
    for (mi, _) in explicit.iter().skip(1) {
        used[*mi] = true;
    }

    // ---- metric
    if let Some(&(mi, mx)) = measures.first() {
        r.metric = MetricSpec::Measure(mx);
        r.metric_span = Some(ms[mi].span);
        r.pieces.push(piece(
            ctx,
            &ms[mi],
            PieceKind::Measure,
            model.measures[mx].name.clone(),
            None,
        ));
        r.entity = Some(model.measures[mx].entity.clone());
        r.entity_source = EntitySource::Measure;
    }

    // ---- "patients with no wounds", "clinicians without any assessments", "patients
    // with wounds": having (or not having) related rows at all
    read_having_related(ctx, &mut r, &explicit);

    // ---- "healed within 90 days": the time to heal
    read_healed_within(ctx, &mut r);

    // ---- words that look like names the model does not know ("at Riverside")
    read_unknown_names(ctx, &mut r);

    // the entity, as far as it is known before the values are read (a value of another
    // entity implies it: "open arterial ulcers with slough" are wounds)
    let counted_rows = || {
        // "assessments in september that …": a count measure's word said as rows names
        // its entity
        ms.iter().find_map(|m| {
            m.measure()
                .filter(|&mx| {
                    model.measures[mx].agg == MeasureAgg::Count && model.measures[mx].filter.is_none()
                })
                .map(|mx| model.measures[mx].entity.clone())
        })
    };
    let provisional_entity = r.entity.clone().or_else(counted_rows).or_else(|| {
        ms.iter()
            .enumerate()
            .filter(|(mi, _)| !used[*mi])
            .find_map(|(_, m)| {
                m.entries.iter().find_map(|e| match &e.target {
                    Target::Value(a, _) if !a.starts_with("assessments.") => {
                        split_qualified(a).map(|(e, _)| e.to_owned())
                    }
                    _ => None,
                })
            })
    });

    // ---- values, booleans, attributes, terms, time dimensions
    let mut time_dim: Option<String> = measure_time_dim;
    for mi in 0..ms.len() {
        if used[mi] {
            continue;
        }
        let m = &ms[mi];
        let negated = negated_at(ctx, m.first);
        // a value-kind or qualifier term wins over a plain value ("foot", "necrotic")
        let term = m.terms().next();
        let entity_phrase = m.phrase.split(' ').all(|w| {
            matches!(w, "by" | "per" | "which" | "each" | "what" | "every") || model.find_entity(w).is_some()
        });
        if let Some(t) = term
            && r.entity.is_none()
            && let Some(e) = m.phrase.split(' ').find_map(|w| model.find_entity(w))
            && (entity_phrase || model.terms[t].kind != TermKind::Column)
        {
            // "diabetic wounds", "which clinic": the noun is the entity
            r.entity = Some(e.name.clone());
            r.entity_source = EntitySource::Named;
            r.entity_span = Some(m.span);
            if model.terms[t].kind == TermKind::Column {
                r.pieces
                    .push(piece(ctx, m, PieceKind::Entity, e.name.clone(), None));
                used[mi] = true;
                continue;
            }
        }
        if let Some(t) = term {
            let kind = model.terms[t].kind;
            if kind == TermKind::Column {
                // not in a grouping: an entity word ("clinic"), an attribute ("depth") or
                // a list column ("date", "size")
                if let Some(e) = m.entity() {
                    if r.entity.is_none() {
                        r.entity = Some(model.entities[e].name.clone());
                        r.entity_source = EntitySource::Named;
                        r.entity_span = Some(m.span);
                        r.pieces.push(piece(
                            ctx,
                            m,
                            PieceKind::Entity,
                            model.entities[e].name.clone(),
                            None,
                        ));
                    }
                    used[mi] = true;
                    continue;
                }
                if ctx.cues.agg.is_some()
                    && matches!(r.metric, MetricSpec::None)
                    && let Some((_, _, agg)) = ctx.cues.agg
                {
                    r.metric = MetricSpec::AggColumn {
                        agg,
                        term: t,
                        mention: mi,
                    };
                    r.metric_span = Some(m.span);
                    used[mi] = true;
                    continue;
                }
                let per_row = ctx.tokens[m.last..]
                    .iter()
                    .take(6)
                    .any(|t| matches!(t.text.as_str(), "have" | "has" | "been" | "each" | "every"));
                if m.phrase.starts_with("how ") && matches!(r.metric, MetricSpec::None) && !per_row {
                    // "how long …", "how big …": a question about that column, averaged
                    let heal = ctx
                        .tokens
                        .iter()
                        .any(|t| matches!(t.text.as_str(), "heal" | "healed" | "healing" | "close"));
                    if heal {
                        for (oi, o) in ms.iter().enumerate() {
                            if o.phrase
                                .split(' ')
                                .any(|w| matches!(w, "heal" | "healed" | "healing" | "close"))
                            {
                                used[oi] = true;
                            }
                        }
                    }
                    r.metric = if heal && m.phrase == "how long" {
                        MetricSpec::Agg {
                            agg: MeasureAgg::Avg,
                            attribute: "wounds.healing_days".into(),
                        }
                    } else {
                        MetricSpec::AggColumn {
                            agg: MeasureAgg::Avg,
                            term: t,
                            mention: mi,
                        }
                    };
                    r.metric_span = Some(m.span);
                    used[mi] = true;
                    continue;
                }
                if matches!(model.terms[t].id.as_str(), "date") && m.phrase == "when" {
                    // "when …?": the date asked about
                    r.columns.push(ColSpec::ColumnTerm { term: t, mention: mi });
                    used[mi] = true;
                    continue;
                }
                if matches!(model.terms[t].id.as_str(), "name_column") && m.phrase == "who" {
                    used[mi] = true;
                    continue;
                }
                if matches!(m.phrase.as_str(), "where" | "when") && m.first > 0 {
                    // "wounds where pain ≥ 8": a relative word, not a column
                    used[mi] = true;
                    continue;
                }
                r.columns.push(ColSpec::ColumnTerm { term: t, mention: mi });
                used[mi] = true;
                continue;
            }
            if kind == TermKind::Aggregation && matches!(model.terms[t].id.as_str(), "average" | "total") {
                used[mi] = true;
                continue;
            }
            let after_noun = m.first > 0
                && ms.iter().any(|o| {
                    o.last == m.first
                        && (o.entity().is_some()
                            || !o.values.is_empty()
                            || o.entries.iter().any(|e| matches!(e.target, Target::Value(..))))
                });
            if kind == TermKind::Measure
                && matches!(m.phrase.as_str(), "numbers" | "number" | "volume")
                && after_noun
            {
                // "DFU numbers": how many of them
                used[mi] = true;
                continue;
            }
            // "a significant difference", "a growing number": the word qualifies a
            // quantity, not the rows
            if matches!(
                ctx.w(m.last),
                "number"
                    | "numbers"
                    | "difference"
                    | "differences"
                    | "change"
                    | "changes"
                    | "increase"
                    | "decrease"
                    | "rise"
                    | "fall"
                    | "amount"
                    | "proportion"
                    | "share"
                    | "rate"
                    | "rates"
                    | "trend"
                    | "gap"
                    | "variation"
                    | "effect"
                    | "impact"
                    | "drop"
                    | "jump"
            ) && kind != TermKind::Measure
            {
                used[mi] = true;
                continue;
            }
            // "is the healing rate improving", "is the number of VLUs growing": a change
            // over time asked about a measure, not a kind of wound
            let yes_no = matches!(ctx.w(0), "is" | "are" | "has" | "have" | "did" | "does" | "do");
            let after_quantity = ms.iter().any(|o| {
                o.last <= m.first
                    && o.last + 3 >= m.first
                    && o.measure()
                        .is_some_and(|x| model.measures[x].agg != MeasureAgg::Count || yes_no)
            }) || ctx.cues.count.is_some_and(|c| c < m.first) && yes_no;
            if kind == TermKind::Trend && model.terms[t].id != "over_time" && after_quantity {
                r.change_term = Some(m.first);
                used[mi] = true;
                continue;
            }
            r.terms.push(TermUse {
                term: t,
                mention: mi,
                anchor: String::new(),
                negated,
                first: m.first,
            });
            used[mi] = true;
            continue;
        }
        if let Some(d) = m.time_dimension() {
            time_dim = Some(model.time_dimensions[d].name.clone());
        }
        // values
        let mut hits: Vec<(String, Value, String)> = Vec::new();
        for e in &m.entries {
            if let Target::Value(a, v) = &e.target
                && !hits.iter().any(|(ha, hv, _)| ha == a && hv == v)
            {
                hits.push((a.clone(), v.clone(), value_label(model, a, v)));
            }
        }
        for h in &m.values {
            let v = Value::Text(h.value.clone());
            if !hits.iter().any(|(ha, hv, _)| *ha == h.attribute && *hv == v) {
                hits.push((h.attribute.clone(), v, h.value.clone()));
            }
        }
        if !hits.is_empty() {
            used[mi] = true;
            // a value named like a time dimension ("healed") also names the date column
            for (_, v, _) in &hits {
                if let Some(s) = v.as_str()
                    && model.time_dimension(s).is_some()
                {
                    time_dim.get_or_insert_with(|| s.to_owned());
                }
            }
            let per_visit = hits.len() == 1
                && hits[0].0.starts_with("assessments.")
                && matches!(provisional_entity.as_deref(), Some("wounds" | "patients"));
            if per_visit && let Some(latest) = latest_of(model, &hits[0].0) {
                let (a, v, label) = hits.remove(0);
                r.pieces
                    .push(piece(ctx, m, PieceKind::Value, a.clone(), Some(v.clone())));
                if let Some(hint) = r.visit_hint {
                    let attr = if hint { latest } else { a };
                    let c = Constraint::Compare {
                        attribute: attr,
                        op: CompareOp::Eq,
                        value: v,
                        unit: None,
                    };
                    r.filters.push(Filter {
                        constraint: negate(c, negated),
                        first: m.first,
                        span: m.span,
                    });
                    continue;
                }
                r.visit_values.push(VisitValue {
                    per_visit: a,
                    latest,
                    value: v,
                    label,
                    first: m.first,
                    span: m.span,
                    negated,
                });
                continue;
            }
            if hits.len() == 1 {
                // a single prefix match ("Riverside"), or only prefix matches: a
                // low-confidence link
                let prefix = hits[0].1.as_str().is_some() && m.values.iter().any(|h| h.prefix)
                    || m.values.iter().all(|h| h.prefix) && m.entries.is_empty();
                let (a, v, _) = hits.remove(0);
                let mut p = piece(ctx, m, PieceKind::Value, a.clone(), Some(v.clone()));
                if prefix {
                    p.how = LinkMethod::Fuzzy;
                    p.confidence = PREFIX;
                }
                r.pieces.push(p);
                let c = Constraint::Compare {
                    attribute: a,
                    op: CompareOp::Eq,
                    value: v,
                    unit: None,
                };
                r.filters.push(Filter {
                    constraint: negate(c, negated),
                    first: m.first,
                    span: m.span,
                });
            } else {
                r.values.push(ValueChoice {
                    mention: mi,
                    hits,
                    negated,
                    first: m.first,
                });
            }
            continue;
        }
        // attributes
        let attrs: Vec<(usize, usize)> = m.attributes().collect();
        if let Some(&(e, a)) = attrs.first() {
            let attr = &model.entities[e].attributes[a];
            let q = qualified(model, e, a);
            used[mi] = true;
            if attr.ty == AttributeType::Boolean
                && ctx.cues.compare.is_none()
                && q.starts_with("assessments.")
                && matches!(provisional_entity.as_deref(), Some("wounds" | "patients"))
                && let Some(latest) = latest_of(model, &q)
            {
                r.pieces.push(piece(
                    ctx,
                    m,
                    PieceKind::Attribute,
                    q.clone(),
                    Some(Value::Bool(!negated)),
                ));
                match r.visit_hint {
                    Some(hint) => {
                        let attribute = if hint { latest } else { q };
                        let c = Constraint::Compare {
                            attribute,
                            op: CompareOp::Eq,
                            value: Value::Bool(!negated),
                            unit: None,
                        };
                        r.filters.push(Filter {
                            constraint: c,
                            first: m.first,
                            span: m.span,
                        });
                    }
                    None => r.visit_values.push(VisitValue {
                        per_visit: q,
                        latest,
                        value: Value::Bool(!negated),
                        label: draft_label(&attr.name),
                        first: m.first,
                        span: m.span,
                        negated: false,
                    }),
                }
                continue;
            }
            if attr.ty == AttributeType::Boolean && ctx.cues.compare.is_none() {
                r.pieces.push(piece(
                    ctx,
                    m,
                    PieceKind::Attribute,
                    q.clone(),
                    Some(Value::Bool(!negated)),
                ));
                let c = Constraint::Compare {
                    attribute: q,
                    op: CompareOp::Eq,
                    value: Value::Bool(!negated),
                    unit: None,
                };
                r.filters.push(Filter {
                    constraint: c,
                    first: m.first,
                    span: m.span,
                });
                continue;
            }
            if attr.ty == AttributeType::Boolean {
                // "compare smokers and non-smokers"
                r.compare = Some(CompareSpec {
                    attribute: q.clone(),
                    values: Vec::new(),
                });
                r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
                continue;
            }
            if attr.ty == AttributeType::Date
                && let Some((_, _, agg @ (MeasureAgg::Min | MeasureAgg::Max))) = ctx.cues.agg
                && matches!(r.metric, MetricSpec::None)
            {
                // "earliest assessment date", "latest onset date": that date's extreme
                r.metric = MetricSpec::Agg {
                    agg,
                    attribute: q.clone(),
                };
                r.metric_span = Some(m.span);
                r.entity.get_or_insert_with(|| model.entities[e].name.clone());
                r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
                continue;
            }
            if attr.ty == AttributeType::Date {
                if let Some(d) = model.time_dimensions.iter().find(|d| d.attribute == q) {
                    time_dim.get_or_insert_with(|| d.name.clone());
                }
                if ctx.times.is_empty() {
                    r.columns.push(ColSpec::Attribute(q.clone()));
                }
                r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
                continue;
            }
            // an aggregate of the attribute ("average bmi", "max pain", "pain scores over time")
            let trend_agg =
                (ctx.cues.trend.is_some() || !ctx.grains.is_empty()).then_some((0, 0, MeasureAgg::Avg));
            let term_agg = typical_agg(ctx).map(|a| (0, 0, a));
            if let Some((_, _, agg)) = ctx.cues.agg.or(term_agg).or(trend_agg)
                && matches!(r.metric, MetricSpec::None)
                && attr.ty.is_numeric()
                && !matches!(attr.role, AttributeRole::Key | AttributeRole::ForeignKey)
            {
                r.metric = MetricSpec::Agg {
                    agg,
                    attribute: q.clone(),
                };
                r.metric_span = Some(m.span);
                r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
                continue;
            }
            let names_a_value = ms.iter().any(|o| {
                o.first.abs_diff(m.last) <= 2 || m.first.abs_diff(o.last) <= 2
            } && o.entries.iter().any(|e| matches!(&e.target, Target::Value(a, _) if *a == q)));
            if !names_a_value {
                r.columns.push(ColSpec::Attribute(q.clone()));
            }
            r.pieces.push(piece(ctx, m, PieceKind::Attribute, q, None));
            continue;
        }
        if m.time_dimension().is_some() {
            used[mi] = true;
        }
    }
    if let Some(d) = &time_dim
        && let Some(mi) = ms.iter().position(|m| {
            m.time_dimension()
                .is_some_and(|x| model.time_dimensions[x].name == *d)
        })
    {
        r.pieces
            .push(piece(ctx, &ms[mi], PieceKind::TimeDimension, d.clone(), None));
    }

    // ---- comparisons
    for c in ctx.comparisons {
        read_comparison(ctx, &mut r, c);
    }

    // ---- entity fallbacks
    if r.entity.is_none() {
        let implied = r
            .filters
            .iter()
            .flat_map(|f| {
                f.constraint
                    .attributes()
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .chain(r.values.iter().flat_map(|v| v.hits.iter().map(|h| h.0.clone())))
            .chain(r.cmps.iter().map(|c| match &c.subject {
                CmpSubject::Attribute(a) => a.clone(),
                CmpSubject::Column { .. } | CmpSubject::Aggregation { .. } => "wounds.id".to_owned(),
            }))
            .find_map(|a| split_qualified(&a).map(|(e, _)| e.to_owned()));
        let from_metric = match &r.metric {
            MetricSpec::Agg { attribute, .. } => split_qualified(attribute).map(|(e, _)| e.to_owned()),
            _ => None,
        };
        if let Some(e) = from_metric.or(implied) {
            r.entity = Some(e);
            r.entity_source = EntitySource::Implied;
        } else if let Some(e) = rank_subject.clone() {
            r.entity = Some(e);
            r.entity_source = EntitySource::Named;
        } else if ctx.cues.who.is_some() {
            r.entity = Some("patients".into());
            r.entity_source = EntitySource::Who;
        } else if let Some(t) = r
            .terms
            .iter()
            .find(|t| model.terms[t.term].kind != TermKind::Measure)
        {
            let applies = &model.terms[t.term].applies_to;
            r.term_entities = applies.clone();
            if let Some(e) = applies.first() {
                r.entity = Some(e.clone());
                r.entity_source = EntitySource::Term;
            }
        } else if let Some(ColSpec::ColumnTerm { term, .. }) = r.columns.first() {
            if let Some(e) = model.terms[*term].applies_to.first() {
                r.entity = Some(e.clone());
                r.entity_source = EntitySource::Term;
            }
        } else if let Some(e) = r.dims.iter().find_map(|d| match &d.spec {
            DimSpec::Attribute(a) => split_qualified(a).map(|(e, _)| e.to_owned()),
            DimSpec::ColumnTerm { .. } => None,
        }) {
            // "break down by etiology" with nothing else: that attribute's entity
            r.entity = Some(e);
            r.entity_source = EntitySource::Implied;
        }
    }
    if r.entity_source == EntitySource::Implied
        && matches!(r.entity.as_deref(), Some("clinics" | "clinicians"))
    {
        let context_word = |k: usize| matches!(ctx.w(k), "at" | "in" | "from" | "did" | "does" | "do" | "by");
        let verb_after = |k: usize| {
            matches!(
                ctx.w(k),
                "see"
                    | "saw"
                    | "seen"
                    | "treat"
                    | "treated"
                    | "assess"
                    | "assessed"
                    | "visit"
                    | "visited"
                    | "do"
                    | "did"
                    | "have"
                    | "had"
            ) && !matches!(ctx.w(k + 1), "we" | "you" | "they" | "i" | "there")
        };
        r.count_context_only = r.pieces.iter().filter(|p| p.kind == PieceKind::Value).any(|p| {
            let Some(span) = p.span else { return false };
            let Some(k) = ctx.tokens.iter().position(|t| t.span.start == span.start) else {
                return false;
            };
            let last = ctx
                .tokens
                .iter()
                .rposition(|t| t.span.end == span.end)
                .unwrap_or(k);
            (k > 0 && context_word(k - 1)) || verb_after(last + 1)
        });
    }
    if r.entity_source == EntitySource::Who && ctx.cues.who.is_some() {
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Entity,
            target: "patients".into(),
            value: None,
            text: ctx.w(ctx.cues.who.unwrap_or(0)).to_owned(),
            span: ctx.cues.who.map(|k| ctx.span_of(k, k + 1)),
            how: LinkMethod::Default,
            confidence: DEFAULT,
        });
    }

    // ---- pronouns
    for &p in &ctx.cues.pronouns {
        if r.visit_hint_at.is_some_and(|(a, b)| (a..b).contains(&p)) {
            continue;
        }
        let before = ms
            .iter()
            .any(|m| m.last <= p && mention_entity(model, m).is_some())
            || r.entity_source == EntitySource::Named
                && r.entity_span.is_some_and(|s| s.end <= ctx.tokens[p].span.start);
        let followed_by_noun = mention_covering(p + 1).is_some_and(|mi| ms[mi].entity().is_some());
        let demonstrative = matches!(ctx.w(p), "that" | "this" | "those" | "these" | "ones" | "same");
        // "the open ones" point back even after a value; a named entity is what they are
        let before = if matches!(ctx.w(p), "ones" | "same") {
            ms.iter().any(|m| m.last <= p && m.entity().is_some())
        } else {
            before
        };
        // "that clinic", "those patients" point back even with a noun; "it", "them",
        // "their" point back unless something was named before them
        let unresolved = if demonstrative {
            !before || followed_by_noun
        } else {
            !before
        };
        if unresolved {
            let end = if demonstrative && followed_by_noun {
                mention_covering(p + 1).map_or(p + 1, |mi| ms[mi].last)
            } else {
                p + 1
            };
            r.unresolved_pronoun.get_or_insert(ctx.span_of(p, end));
        }
    }

    // ---- follow-up
    r.follow_up = ctx.previous.is_some() && context::is_follow_up(ctx, &r);
    if r.follow_up
        && let Some(prev) = ctx.previous
        && (r.entity.is_none()
            || matches!(
                r.entity_source,
                EntitySource::Term | EntitySource::Who | EntitySource::Implied
            ))
    {
        // the fragment is about the previous question's rows
        r.entity = Some(prev.entity.clone());
        r.entity_source = EntitySource::Context;
        r.term_entities.clear();
    }

    // ---- anchor the terms: which entity each modifies
    for i in 0..r.terms.len() {
        let anchor = term_anchor(ctx, &r, r.terms[i].mention);
        r.terms[i].anchor = anchor;
    }

    // ---- "worst 3 VLUs": a ranking word the dictionary defines for other entities still
    // asks for a ranking, by what is not said
    if r.rank.is_none() {
        let entity = r.entity.clone().unwrap_or_else(|| "wounds".into());
        if let Some(pos) = r.terms.iter().position(|t| {
            let term = &model.terms[t.term];
            term.kind == TermKind::Ranking
                && !term.applies_to.contains(&t.anchor)
                && !term.applies_to.contains(&entity)
        }) {
            let t = r.terms.remove(pos);
            let m = &ms[t.mention];
            let num = |k: usize| {
                ctx.tokens
                    .get(k)
                    .filter(|x| {
                        matches!(
                            x.kind,
                            super::tokenize::TokenKind::Number | super::tokenize::TokenKind::NumberWord
                        )
                    })
                    .and_then(|x| x.num)
                    .filter(|v| (1.0..=1000.0).contains(v) && v.fract() == 0.0)
                    .map(|v| v as u32)
            };
            let n = num(m.last).or_else(|| m.first.checked_sub(1).and_then(num));
            let order = if matches!(
                m.phrase.as_str(),
                "smallest" | "tiniest" | "quiet" | "quietest" | "least busy"
            ) {
                SortOrder::Asc
            } else {
                SortOrder::Desc
            };
            let last = if num(m.last).is_some() { m.last + 1 } else { m.last };
            r.rank = Some(RankSpec {
                n,
                order,
                key: RankKey::None,
                subject: Some(entity),
                span: ctx.span_of(m.first, last),
            });
        }
    }

    // ---- "new wounds this month": the time range says how new; the term names the date
    if !ctx.times.is_empty() || ctx.cues.trend.is_some() || !ctx.grains.is_empty() {
        let mut keep = Vec::new();
        for t in std::mem::take(&mut r.terms) {
            let term = &model.terms[t.term];
            let window_dim = term.default_option().and_then(|o| match &o.constraint {
                Some(Constraint::TimeWindow { dimension, .. }) => Some(dimension.clone()),
                _ => None,
            });
            match window_dim {
                Some(dim) if term.kind == TermKind::Time && !t.negated => {
                    let dim = dim.or_else(|| {
                        model
                            .entity(&t.anchor)
                            .and_then(|e| e.default_time_dimension.clone())
                    });
                    if let Some(d) = dim {
                        time_dim.get_or_insert(d);
                    }
                    used[t.mention] = true;
                }
                _ => keep.push(t),
            }
        }
        r.terms = keep;
    }

    r.time_dimension = time_dim.clone();

    // ---- the time range
    if let Some(t) = ctx
        .times
        .iter()
        .enumerate()
        .find(|(i, _)| Some(*i) != consumed_time)
        .map(|(_, t)| t)
    {
        r.time = Some(TimeSpec {
            start: t.start,
            end: t.end,
            label: t.label.clone(),
            span: ctx.span_of(t.first, t.last),
            dimension: time_dim.clone(),
            all_time: t.all_time,
        });
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Time,
            target: t.label.clone(),
            value: None,
            text: ctx.text(ctx.span_of(t.first, t.last)),
            span: Some(ctx.span_of(t.first, t.last)),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
    }
    if let Some(g) = ctx.grains.first() {
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Dimension,
            target: format!("grain:{}", g.grain.as_str()),
            value: None,
            text: ctx.text(ctx.span_of(g.first, g.last)),
            span: Some(ctx.span_of(g.first, g.last)),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
    }

    // ---- compare: two values of one attribute
    if ctx.cues.compare.is_some() || ctx.cues.words <= 12 {
        let mut by_attr: Vec<(String, Vec<Value>)> = Vec::new();
        for f in &r.filters {
            if let Constraint::Compare {
                attribute,
                op: CompareOp::Eq,
                value,
                ..
            } = &f.constraint
            {
                match by_attr.iter_mut().find(|(a, _)| a == attribute) {
                    Some((_, vs)) => vs.push(value.clone()),
                    None => by_attr.push((attribute.clone(), vec![value.clone()])),
                }
            }
        }
        if let Some((a, vs)) = by_attr.into_iter().find(|(_, vs)| vs.len() >= 2) {
            r.filters.retain(|f| !matches!(&f.constraint, Constraint::Compare { attribute, op: CompareOp::Eq, .. } if *attribute == a));
            if ctx.cues.compare.is_some() {
                r.compare = Some(CompareSpec {
                    attribute: a,
                    values: vs,
                });
            } else {
                // "DFUs and VLUs": either of them
                let first = r.pieces.iter().position(|p| p.target == a).unwrap_or(0);
                let _ = first;
                r.filters.push(Filter {
                    constraint: Constraint::InSet {
                        attribute: a,
                        values: vs,
                    },
                    first: 0,
                    span: TextSpan::default(),
                });
            }
        }
    }
    if ctx.cues.compare.is_some() && r.compare.is_none() && r.dims.is_empty() {
        // "compare clinics": the entity named after "compare" is the grouping
        if let Some((ci, _)) = ctx.cues.compare
            && let Some(mi) = (ci + 1..ctx.tokens.len()).find_map(mention_covering)
            && let Some(e) = ms[mi].entity()
        {
            let ent = &model.entities[e];
            if r.entity.as_deref() == Some(ent.name.as_str())
                && ent.display_attribute.is_some()
                && matches!(r.metric, MetricSpec::None)
            {
                // "compare clinics" alone: count wounds per clinic
            }
            if let Some(d) = &ent.display_attribute
                && r.entity.as_deref() != Some(ent.name.as_str())
            {
                r.dims.push(Dim {
                    spec: DimSpec::Attribute(format!("{}.{}", ent.name, d)),
                    span: ms[mi].span,
                });
            }
        }
    }

    // ---- share: "what percentage of wounds are infected"
    if let Some((s, _)) = ctx.cues.share {
        let split = (s + 1..ctx.tokens.len()).find(|&k| {
            matches!(
                ctx.w(k),
                "that"
                    | "which"
                    | "who"
                    | "are"
                    | "were"
                    | "is"
                    | "was"
                    | "have"
                    | "has"
                    | "had"
                    | "got"
                    | "became"
                    | "ended"
            ) && k > s + 2
        });
        r.share_from = split.or_else(|| {
            // no verb: the last filter or term is the condition
            let last_filter = r.filters.iter().map(|f| f.first).max();
            let last_term = r.terms.iter().map(|t| t.first).max();
            last_filter.max(last_term)
        });
        if !matches!(r.metric, MetricSpec::Measure(_)) {
            r.metric = MetricSpec::Share;
        }
    }

    // ---- intent
    let mut ev = Evidence {
        measure: match &r.metric {
            MetricSpec::Measure(mx) => Some(model.measures[*mx].agg),
            MetricSpec::Agg { agg, .. } | MetricSpec::AggColumn { agg, .. } => Some(*agg),
            MetricSpec::Share => Some(MeasureAgg::Share),
            MetricSpec::TermMeasure { .. } => Some(MeasureAgg::Share),
            _ => None,
        },
        entity: r.entity.is_some() && r.entity_source != EntitySource::Term,
        filters: !r.filters.is_empty()
            || !r.terms.is_empty()
            || !r.values.is_empty()
            || !r.cmps.is_empty()
            || !r.gaps.is_empty(),
        dimensions: !r.dims.is_empty(),
        grain: r.grain.is_some(),
        two_values: r.compare.is_some(),
        ranking_term: false,
        trend_term: false,
    };
    for t in &r.terms {
        let term = &model.terms[t.term];
        if term.kind == TermKind::Ranking && term.applies_to.contains(&t.anchor) {
            ev.ranking_term = true;
        }
        if term.id == "over_time" {
            ev.trend_term = true;
        }
        if term.kind == TermKind::Measure {
            ev.measure = ev.measure.or(Some(MeasureAgg::Share));
        }
    }
    if r.change_term.is_some() {
        ev.trend_term = true;
    }
    if r.entity_source == EntitySource::Term {
        ev.filters = true;
    }
    let (intent, conf) = intent::decide(ctx.cues, &ev);
    r.intent = intent;
    r.intent_confidence = conf;
    // metric for the intent
    if matches!(r.metric, MetricSpec::None) {
        let measure_term = r
            .terms
            .iter()
            .find(|t| model.terms[t.term].kind == TermKind::Measure)
            .map(|t| (t.term, t.mention));
        match (intent, measure_term) {
            (
                Intent::Count | Intent::GroupBy | Intent::Trend | Intent::Compare | Intent::Aggregate,
                Some((term, mention)),
            ) => {
                r.metric = MetricSpec::TermMeasure { term, mention };
                r.terms.retain(|t| t.term != term);
            }
            (Intent::Count | Intent::GroupBy | Intent::Trend | Intent::Compare, None) => {
                r.metric = MetricSpec::Count
            }
            (Intent::Aggregate, None) => r.metric = MetricSpec::Count,
            _ => {}
        }
    } else if let Some(pos) = r
        .terms
        .iter()
        .position(|t| model.terms[t.term].kind == TermKind::Measure)
    {
        // "rate" next to a named measure adds nothing
        r.terms.remove(pos);
    }
    let (conf, intent_how) = if r.follow_up && conf < 0.9 {
        (1.0, LinkMethod::Context)
    } else if conf >= 0.9 {
        (conf, LinkMethod::Exact)
    } else {
        (conf, LinkMethod::Default)
    };
    r.intent_confidence = conf;
    if let Some(p) = r.pieces.iter_mut().find(|p| p.kind == PieceKind::Intent) {
        p.confidence = conf;
    } else {
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Intent,
            target: intent_name(intent).into(),
            value: None,
            text: String::new(),
            span: None,
            how: intent_how,
            confidence: conf,
        });
    }
    r
}

/// The aggregation a dictionary word like "typical" defaults to (median), when the
/// question has one.
fn typical_agg(ctx: &Ctx<'_>) -> Option<MeasureAgg> {
    ctx.mentions.iter().flat_map(|m| m.terms()).find_map(|t| {
        let term = &ctx.model.terms[t];
        if term.kind != TermKind::Aggregation || matches!(term.id.as_str(), "average" | "total") {
            return None;
        }
        match term.default_option()?.change.as_ref()? {
            PlanChange::ChooseAggregation {
                aggregation: Aggregation::Median,
            } => Some(MeasureAgg::Median),
            PlanChange::ChooseAggregation {
                aggregation: Aggregation::Mean,
            } => Some(MeasureAgg::Avg),
            _ => None,
        }
    })
}

/// "at the latest assessment" / "at the last visit" (latest) or "at any visit" (any).
fn read_visit_hint(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
    // "current wound area", "latest pain score": a per-visit measurement read at the
    // latest assessment
    for m in ctx.mentions {
        let lead = match (ctx.w(m.first.wrapping_sub(2)), ctx.w(m.first.wrapping_sub(1))) {
            ("most", "recent") => Some(m.first - 2),
            (_, "current" | "latest" | "newest") => Some(m.first - 1),
            _ => None,
        };
        let per_visit = m.attributes().any(|(e, a)| {
            let q = qualified(ctx.model, e, a);
            q.starts_with("assessments.") && latest_of(ctx.model, &q).is_some()
        });
        if let Some(k) = lead
            && per_visit
            && !ctx
                .mentions
                .iter()
                .any(|o| o.first <= k && k < o.last && o.last > k + 1)
        {
            r.visit_hint = Some(true);
            r.visit_hint_at = Some((k, m.first));
            for (mi, o) in ctx.mentions.iter().enumerate() {
                if o.first >= k && o.last <= m.first {
                    used[mi] = true;
                }
            }
            return;
        }
    }
    for k in 0..ctx.tokens.len() {
        let mut j = k;
        if matches!(ctx.w(j), "at" | "on" | "in" | "during" | "from") {
            j += 1;
        }
        if matches!(ctx.w(j), "the" | "their" | "its" | "each") {
            j += 1;
        }
        let latest = match (ctx.w(j), ctx.w(j + 1)) {
            ("last" | "latest" | "newest" | "current", _) => Some((true, j + 1)),
            ("most", "recent") => Some((true, j + 2)),
            ("any" | "every" | "some", _) if j > k => Some((false, j + 1)),
            _ => None,
        };
        let Some((hint, at)) = latest else { continue };
        if !matches!(
            ctx.w(at),
            "assessment" | "visit" | "review" | "measurement" | "reading" | "assessments" | "visits"
        ) {
            continue;
        }
        r.visit_hint = Some(hint);
        r.visit_hint_at = Some((k, at + 1));
        for (mi, m) in ctx.mentions.iter().enumerate() {
            if m.first >= k && m.last <= at + 1 {
                used[mi] = true;
            }
        }
        return;
    }
}

/// "healed within 90 days", "healed in under 6 weeks": the healing time is at most that.
/// "wound id 100", "patient #42", "pt 42's wounds", "clinic number 3": an entity word,
/// then "id" / "#" / "number" / "no" (or nothing, after a singular word), then a whole
/// number — a filter on that entity's key. A number is compared with a key only when it
/// was said as an identifier like this.
fn read_ids(ctx: &Ctx<'_>, r: &mut Reading) {
    let model = ctx.model;
    let in_time = |k: usize| ctx.times.iter().any(|t| t.first <= k && k < t.last);
    let in_cmp = |k: usize| ctx.comparisons.iter().any(|c| c.first <= k && k < c.last);
    for m in ctx.mentions {
        let Some(e) = m.entity() else {
            continue;
        };
        let entity = &model.entities[e];
        let Some(key) = entity.attributes.iter().find(|a| a.role == AttributeRole::Key) else {
            continue;
        };
        let mut k = m.last;
        let mut said_as_id = false;
        while matches!(
            ctx.w(k),
            "id" | "ids" | "#" | "number" | "no" | "nr" | "num" | "key"
        ) {
            said_as_id = true;
            k += 1;
        }
        let word = ctx.w(m.last - 1);
        let singular = super::tokenize::singular(word).is_none() || matches!(word, "pts");
        let Some(t) = ctx.tokens.get(k) else {
            continue;
        };
        let whole =
            t.kind == TokenKind::Number && t.num.is_some_and(|n| n >= 0.0 && n.fract() == 0.0 && n < 1e12);
        if !whole || in_time(k) || in_cmp(k) || !(said_as_id || singular && word != "pts") {
            continue;
        }
        let id = t.num.unwrap_or_default() as i64;
        let attribute = format!("{}.{}", entity.name, key.name);
        let span = ctx.span_of(m.first, k + 1);
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Value,
            target: attribute.clone(),
            value: Some(Value::Integer(id)),
            text: ctx.text(span),
            span: Some(span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
        r.filters.push(Filter {
            constraint: Constraint::Compare {
                attribute,
                op: CompareOp::Eq,
                value: Value::Integer(id),
                unit: None,
            },
            first: m.first,
            span,
        });
    }
}

/// An entity word other than the subject, said right after "with"/"having" or a negation,
/// with nothing qualifying it: whether related rows exist at all. "patients with no
/// wounds" → no related wounds; "patients with wounds" → at least one. Only across a
/// one-to-many path (a patient's wounds, a clinic's patients).
fn read_having_related(ctx: &Ctx<'_>, r: &mut Reading, explicit: &[(usize, String)]) {
    let model = ctx.model;
    let Some(subject) = r.entity.clone() else {
        return;
    };
    for (mi, e) in explicit {
        let m = &ctx.mentions[*mi];
        if *e == subject || m.first == 0 {
            continue;
        }
        let one_to_many = model
            .join_path(&subject, e)
            .is_some_and(|p| !p.is_empty() && p.iter().all(|s| !s.forward));
        // qualified ("wounds that are open", "wound id 4") or part of something else
        let qualified = matches!(
            ctx.w(m.last),
            "that" | "which" | "who" | "where" | "whose" | "with" | "id" | "#" | "in" | "during" | "since"
        ) || ctx
            .tokens
            .get(m.last)
            .is_some_and(|t| t.kind == TokenKind::Number)
            || ctx.times.iter().any(|t| t.first == m.last)
            || ctx
                .comparisons
                .iter()
                .any(|c| c.first < m.last && m.first < c.last);
        if !one_to_many || qualified {
            continue;
        }
        let mut k = m.first - 1;
        while k > 0 && matches!(ctx.w(k), "any" | "a" | "an" | "single") {
            k -= 1;
        }
        let negated = ctx.cues.negations.contains(&k);
        let having = matches!(ctx.w(k), "with" | "having" | "have" | "has" | "had");
        if !(negated || having) {
            continue;
        }
        let (op, value) = if negated {
            (CompareOp::Eq, 0)
        } else {
            (CompareOp::Gte, 1)
        };
        let span = ctx.span_of(k, m.last);
        r.filters.push(Filter {
            constraint: Constraint::RelatedCount {
                per: None,
                related: e.clone(),
                op,
                value,
                within: None,
            },
            first: k,
            span,
        });
    }
}

/// "which etiology has the highest average pain score", "what location had the most
/// wounds": the answer is a value of the attribute named after "which" — the groups of
/// that attribute ranked by the metric, the first one. `(attribute, order)`.
pub(crate) fn which_attribute_extreme(ctx: &Ctx<'_>) -> Option<(String, SortOrder)> {
    let model = ctx.model;
    let first = ctx.tokens.iter().position(|t| t.is_wordlike())?;
    if !matches!(ctx.w(first), "which" | "what") {
        return None;
    }
    let m = ctx.mentions.iter().find(|m| m.first == first + 1)?;
    if m.entity().is_some() || m.measure().is_some() {
        return None;
    }
    let (e, a) = m.attributes().next()?;
    if !groupable(model, e, a) {
        return None;
    }
    let rank = ctx.cues.rank?;
    let linking = (m.last..rank.first).all(|k| {
        matches!(
            ctx.w(k),
            "has"
                | "had"
                | "have"
                | "is"
                | "was"
                | "shows"
                | "showed"
                | "with"
                | "gets"
                | "got"
                | "the"
                | "sees"
        )
    });
    (linking && rank.first > m.last).then(|| (qualified(model, e, a), rank.order))
}

/// "days from onset to healed", "time between onset and healing": the model's derived
/// day count between those two dates (`days_between`), when it has one. Qualified name.
/// Returns the attribute and the two mentions.
fn days_between(ctx: &Ctx<'_>) -> Option<(String, usize, usize)> {
    let model = ctx.model;
    // the date attribute (entity, attribute name) a mention names: a date attribute, a
    // time dimension ("healed"), or a value whose word is also a time dimension's
    let date_of = |m: &Mention| -> Option<(String, String)> {
        let qualified = m
            .attributes()
            .find(|&(e, a)| model.entities[e].attributes[a].ty == AttributeType::Date)
            .map(|(e, a)| qualified(model, e, a))
            .or_else(|| {
                m.time_dimension()
                    .map(|t| model.time_dimensions[t].attribute.clone())
            })
            .or_else(|| model.find_time_dimension(&m.phrase).map(|t| t.attribute.clone()))
            .or_else(|| {
                // "healing" for the "healed" date: the same verb
                let stem: String = m.phrase.chars().take(4).collect();
                (m.last == m.first + 1 && stem.chars().count() == 4)
                    .then(|| {
                        model.time_dimensions.iter().find(|t| {
                            t.name.starts_with(&stem) && m.phrase.starts_with(&t.name[..4.min(t.name.len())])
                        })
                    })
                    .flatten()
                    .map(|t| t.attribute.clone())
            })?;
        split_qualified(&qualified).map(|(e, a)| (e.to_owned(), a.to_owned()))
    };
    let mention_at = |k: usize| ctx.mentions.iter().position(|m| m.first == k);
    for k in 0..ctx.tokens.len() {
        if !matches!(
            ctx.w(k),
            "days" | "day" | "time" | "duration" | "interval" | "weeks" | "months"
        ) {
            continue;
        }
        let j = if matches!(ctx.w(k + 1), "from" | "between") {
            k + 1
        } else if ctx.w(k + 1) == "it" && ctx.w(k + 2) == "took" && ctx.w(k + 3) == "from" {
            k + 3
        } else {
            continue;
        };
        let Some(xi) = mention_at(j + 1) else {
            continue;
        };
        let x = &ctx.mentions[xi];
        let y_at = if matches!(ctx.w(x.last), "to" | "and" | "until" | "till") {
            x.last + 1
        } else {
            continue;
        };
        let Some(yi) = mention_at(y_at) else {
            continue;
        };
        let y = &ctx.mentions[yi];
        let (Some((e1, from)), Some((e2, to))) = (date_of(x), date_of(y)) else {
            continue;
        };
        if e1 != e2 {
            continue;
        }
        let entity = model.entity(&e1)?;
        let found = entity.attributes.iter().find(|a| match &a.derived {
            Some(Derived::DaysBetween {
                from: DateOperand::Attribute(f),
                to: DateOperand::Attribute(t),
                ..
            }) => *f == from && *t == to,
            _ => false,
        });
        if let Some(a) = found {
            return Some((format!("{e1}.{}", a.name), xi, yi));
        }
    }
    None
}

/// "how many distinct wound locations", "number of different etiologies", "count of
/// unique clinicians": how many different values the attribute takes.
fn read_distinct(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
    let model = ctx.model;
    let counting = ctx.cues.count.is_some();
    for k in 0..ctx.tokens.len() {
        if !matches!(ctx.w(k), "distinct" | "different" | "unique" | "separate") || !counting {
            continue;
        }
        let Some((mi, m)) = ctx
            .mentions
            .iter()
            .enumerate()
            .find(|(mi, m)| m.first == k + 1 && !used[*mi])
        else {
            continue;
        };
        let attribute = m
            .attributes()
            .find(|&(e, a)| groupable(model, e, a))
            .map(|(e, a)| (model.entities[e].name.clone(), qualified(model, e, a)));
        // "distinct patients": the entity's own rows, counted once each
        let attribute = attribute.or_else(|| {
            m.entity().and_then(|e| {
                let ent = &model.entities[e];
                ent.attributes
                    .iter()
                    .find(|a| a.role == AttributeRole::Key)
                    .map(|a| (ent.name.clone(), format!("{}.{}", ent.name, a.name)))
            })
        });
        let Some((entity, attribute)) = attribute else {
            continue;
        };
        if m.entity().is_some() {
            // counting an entity's rows is already distinct
            continue;
        }
        used[mi] = true;
        r.metric = MetricSpec::Agg {
            agg: MeasureAgg::CountDistinct,
            attribute: attribute.clone(),
        };
        r.metric_span = Some(ctx.span_of(k, m.last));
        r.entity = Some(entity.clone());
        r.entity_source = EntitySource::Named;
        r.pieces
            .push(piece(ctx, m, PieceKind::Attribute, attribute, None));
        return;
    }
}

/// "whatever their status", "regardless of diabetes", "irrespective of clinic", "no
/// matter their stage": the phrase after it is said so that it is *not* a filter.
fn read_regardless(ctx: &Ctx<'_>, used: &mut [bool]) {
    for k in 0..ctx.tokens.len() {
        let after = match (ctx.w(k), ctx.w(k + 1)) {
            ("regardless" | "irrespective", "of") => k + 2,
            ("whatever" | "whichever", "their" | "its" | "the") => k + 2,
            ("whatever" | "whichever", _) => k + 1,
            ("no", "matter") if matches!(ctx.w(k + 2), "their" | "its" | "the" | "what") => k + 3,
            _ => continue,
        };
        let after = if matches!(ctx.w(after), "their" | "its" | "the" | "any") {
            after + 1
        } else {
            after
        };
        for (mi, m) in ctx.mentions.iter().enumerate() {
            if m.first == after && m.entity().is_none() {
                used[mi] = true;
            }
        }
    }
}

fn read_healed_within(ctx: &Ctx<'_>, r: &mut Reading) {
    for m in ctx.mentions {
        let healed = m.entries.iter().any(|e| matches!(&e.target, Target::Value(a, Value::Text(v)) if a == "wounds.status" && v == "healed"))
            || m.measure().is_some_and(|x| ctx.model.measures[x].name == "healed_wound_count")
            || m.phrase.split(' ').any(|w| matches!(w, "heal" | "healed"));
        if !healed {
            continue;
        }
        let mut k = m.last;
        let mut op = CompareOp::Lte;
        while matches!(
            ctx.w(k),
            "within" | "in" | "under" | "inside" | "less" | "than" | "more" | "after" | "over"
        ) {
            if matches!(ctx.w(k), "more" | "after" | "over") {
                op = CompareOp::Gt;
            }
            if ctx.w(k) == "less" || ctx.w(k) == "under" {
                op = CompareOp::Lt;
            }
            k += 1;
        }
        if k == m.last {
            continue;
        }
        let Some(n) = ctx.tokens.get(k).filter(|t| t.num.is_some()).and_then(|t| t.num) else {
            continue;
        };
        let Some((unit, _)) = link::unit_at(ctx.tokens, k + 1) else {
            continue;
        };
        let Some(days) = link::convert(n, unit, "days") else {
            continue;
        };
        let span = ctx.span_of(m.first, k + 2);
        let c = Constraint::Compare {
            attribute: "wounds.healing_days".into(),
            op,
            value: Value::Integer(days.round() as i64),
            unit: Some("days".into()),
        };
        r.filters.push(Filter {
            constraint: c,
            first: m.first,
            span,
        });
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Comparison,
            target: "wounds.healing_days".into(),
            value: Some(Value::Integer(days.round() as i64)),
            text: span.slice(ctx.question).to_owned(),
            span: Some(span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
    }
}

/// True when a mention names assessments or their date.
fn names_visit(model: &SemanticModel, m: &Mention) -> bool {
    m.entity()
        .is_some_and(|e| model.entities[e].name == "assessments")
        || m.time_dimension()
            .is_some_and(|d| matches!(model.time_dimensions[d].name.as_str(), "assessed" | "last_visit"))
        || m.attributes()
            .any(|(e, a)| qualified(model, e, a) == "assessments.assessed_on")
        || m.terms().any(|t| model.terms[t].id == "overdue")
}

/// "not assessed in 2 weeks", "no assessment in the last 30 days", "not seen for a
/// month": no related assessment within the span.
fn read_not_seen(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool], consumed_time: &mut Option<usize>) {
    let ms = ctx.mentions;
    for mi in 0..ms.len() {
        let m = &ms[mi];
        if used[mi] || !names_visit(ctx.model, m) {
            continue;
        }
        let overdue = m.terms().any(|t| ctx.model.terms[t].id == "overdue");
        let negated =
            overdue || (m.first.saturating_sub(3)..m.first).any(|k| ctx.cues.negations.contains(&k));
        if !negated {
            continue;
        }
        let mut span = None;
        if let Some((ti, t)) = ctx
            .times
            .iter()
            .enumerate()
            .find(|(_, t)| t.first >= m.last && t.first <= m.last + 1)
        {
            let days = (ctx.today - t.start).num_days().max(1) as u32;
            span = Some(Span {
                n: days,
                unit: SpanUnit::Days,
            });
            *consumed_time = Some(ti);
        } else {
            let mut k = m.last;
            while matches!(
                ctx.w(k),
                "in" | "for" | "within" | "over" | "the" | "last" | "past" | "a"
            ) {
                k += 1;
            }
            let n = ctx.tokens.get(k).and_then(|t| t.num).map(|v| v.max(1.0) as u32);
            let (n, unit_at) = match n {
                Some(n) => (n, k + 1),
                None => (1, k),
            };
            let unit = match ctx.w(unit_at) {
                "day" | "days" => Some(SpanUnit::Days),
                "week" | "weeks" => Some(SpanUnit::Weeks),
                "month" | "months" => Some(SpanUnit::Months),
                "year" | "years" => Some(SpanUnit::Years),
                _ => None,
            };
            if let Some(unit) = unit {
                span = Some(Span { n, unit });
            }
        }
        let Some(within) = span else { continue };
        let constraint = Constraint::RelatedCount {
            per: None,
            related: "assessments".into(),
            op: CompareOp::Eq,
            value: 0,
            within: Some(within),
        };
        r.filters.push(Filter {
            constraint,
            first: m.first,
            span: m.span,
        });
        r.pieces.push(piece(
            ctx,
            m,
            PieceKind::Comparison,
            "assessments".into(),
            Some(Value::Integer(0)),
        ));
        used[mi] = true;
    }
}

/// Capitalised or place-like words that nothing in the model or the snapshot matched.
fn read_unknown_names(ctx: &Ctx<'_>, r: &mut Reading) {
    let covered = |k: usize| {
        ctx.mentions.iter().any(|m| m.first <= k && k < m.last)
            || ctx.times.iter().any(|t| t.first <= k && k < t.last)
            || ctx.comparisons.iter().any(|c| c.first <= k && k < c.last)
    };
    // an identifier after its name ("MRN CL0000042") is a value as typed
    let mut identifiers: Vec<usize> = Vec::new();
    for m in ctx.mentions {
        let Some((e, a)) = m
            .attributes()
            .find(|&(e, a)| ctx.model.entities[e].attributes[a].role == AttributeRole::Identifier)
        else {
            continue;
        };
        let k = if matches!(ctx.w(m.last), "is" | "of" | "=" | "number" | "no" | ":") {
            m.last + 1
        } else {
            m.last
        };
        let Some(t) = ctx.tokens.get(k) else { continue };
        let looks_like_id = t.is_wordlike()
            && t.text.chars().any(|c| c.is_ascii_digit())
            && t.text.chars().all(|c| c.is_ascii_alphanumeric());
        if !looks_like_id || covered(k) {
            continue;
        }
        identifiers.push(k);
        let value = Value::Text(t.span.slice(ctx.question).to_owned());
        let attribute = qualified(ctx.model, e, a);
        r.filters.push(Filter {
            constraint: Constraint::Compare {
                attribute: attribute.clone(),
                op: CompareOp::Eq,
                value: value.clone(),
                unit: None,
            },
            first: k,
            span: t.span,
        });
        r.pieces.push(LinkedPiece {
            kind: PieceKind::Value,
            target: attribute,
            value: Some(value),
            text: t.span.slice(ctx.question).to_owned(),
            span: Some(t.span),
            how: LinkMethod::Exact,
            confidence: EXACT,
        });
    }
    let first_word = ctx.tokens.iter().position(|t| t.is_wordlike()).unwrap_or(0);
    for (k, t) in ctx.tokens.iter().enumerate() {
        if t.kind != super::tokenize::TokenKind::Word
            || covered(k)
            || t.text.chars().count() < 3
            || identifiers.contains(&k)
        {
            continue;
        }
        if super::vocab::is_common_word(&t.text) || super::tokenize::number_word(&t.text).is_some() {
            continue;
        }
        let original = t.span.slice(ctx.question);
        let capitalised = k != first_word && original.chars().next().is_some_and(char::is_uppercase);
        let after_place = matches!(ctx.w(k.wrapping_sub(1)), "at" | "from" | "named" | "called");
        if capitalised || after_place {
            r.unknown_names.push(t.span);
        }
    }
}

/// A threshold without a number: "more visits than usual", "pain higher than normal",
/// "a bmi over the limit", "above the threshold", "too many visits".
fn read_gaps(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
    let ms = ctx.mentions;
    let norm = |w: &str| {
        matches!(
            w,
            "usual"
                | "normal"
                | "average"
                | "expected"
                | "typical"
                | "baseline"
                | "standard"
                | "avg"
                | "mean"
        )
    };
    let limit = |w: &str| {
        matches!(
            w,
            "threshold"
                | "limit"
                | "cutoff"
                | "cut"
                | "target"
                | "norm"
                | "normal"
                | "range"
                | "average"
                | "usual"
        )
    };
    let up = |w: &str| {
        matches!(
            w,
            "more"
                | "higher"
                | "greater"
                | "bigger"
                | "larger"
                | "longer"
                | "worse"
                | "older"
                | "over"
                | "above"
                | "exceeding"
                | "beyond"
                | "many"
                | "much"
                | "high"
                | "long"
                | "big"
                | "large"
                | "often"
        )
    };
    let down = |w: &str| {
        matches!(
            w,
            "fewer"
                | "less"
                | "lower"
                | "smaller"
                | "shorter"
                | "better"
                | "below"
                | "under"
                | "few"
                | "little"
                | "low"
                | "short"
                | "small"
        )
    };
    for k in 0..ctx.tokens.len() {
        // (operator position, last token, subject searched after the operator until)
        let found = if ctx.w(k) == "than" {
            let j = if ctx.w(k + 1) == "the" { k + 2 } else { k + 1 };
            if !norm(ctx.w(j)) {
                continue;
            }
            (k.saturating_sub(4)..k)
                .rev()
                .find(|&i| up(ctx.w(i)) || down(ctx.w(i)))
                .map(|op_at| (op_at, j + 1, k))
        } else if matches!(
            ctx.w(k),
            "above" | "over" | "below" | "under" | "exceeding" | "beyond" | "outside"
        ) && ctx.w(k + 1) == "the"
            && limit(ctx.w(k + 2))
        {
            Some((k, k + 3, k))
        } else if ctx.w(k) == "too" && (up(ctx.w(k + 1)) || down(ctx.w(k + 1))) {
            Some((k + 1, k + 2, k + 4))
        } else {
            None
        };
        let Some((op_at, end, until)) = found else {
            continue;
        };
        let op = if down(ctx.w(op_at)) {
            CompareOp::Lt
        } else {
            CompareOp::Gt
        };
        // the subject: a mention after the operator, or just before it
        let inside = ms.iter().position(|m| {
            m.first > op_at && m.last <= until.max(op_at + 1) + 1 && m.first < until.max(op_at + 2)
        });
        let before = ms.iter().rposition(|m| m.last <= op_at && m.last + 3 >= op_at);
        let mut attribute = None;
        let mut related = None;
        for mi in inside.into_iter().chain(before) {
            let m = &ms[mi];
            let is_inside = Some(mi) == inside;
            if let Some((e, a)) = m.attributes().next() {
                attribute = Some(qualified(ctx.model, e, a));
            } else if let Some(e) = m.entity().filter(|_| is_inside) {
                related = Some(ctx.model.entities[e].name.clone());
            } else if let Some(t) = m.terms().next()
                && ctx.model.terms[t].kind == TermKind::Column
            {
                attribute = Some(match ctx.model.terms[t].id.as_str() {
                    "length_column" | "duration_column" => "wounds.days_open".to_owned(),
                    _ => "wounds.latest_area".to_owned(),
                });
            }
            if attribute.is_some() || related.is_some() {
                used[mi] = true;
                break;
            }
        }
        if attribute.is_none() && related.is_none() {
            attribute = match ctx.w(op_at) {
                "bigger" | "larger" | "smaller" | "big" | "large" | "small" => {
                    Some("wounds.latest_area".to_owned())
                }
                "longer" | "shorter" | "older" | "long" | "short" => Some("wounds.days_open".to_owned()),
                _ => None,
            };
        }
        if attribute.is_none() && related.is_none() {
            continue;
        }
        // a per-visit measurement said of wounds: their latest value
        if let Some(a) = &attribute
            && a.starts_with("assessments.")
            && let Some(l) = latest_of(ctx.model, a)
        {
            attribute = Some(l);
        }
        // the words of the phrase ("usual" is also a dictionary word) belong to it
        for (mi, m) in ms.iter().enumerate() {
            if m.first >= op_at && m.first < end {
                used[mi] = true;
            }
        }
        r.gaps.push(ThresholdGap {
            span: ctx.span_of(op_at.min(k), end),
            op,
            attribute,
            related,
        });
    }
}

fn read_comparison(ctx: &Ctx<'_>, r: &mut Reading, c: &Comparison) {
    let model = ctx.model;
    let entity = r.entity.clone().unwrap_or_else(|| "wounds".into());
    let negated = negated_at(ctx, c.first);
    let subject = match &c.subject {
        Subject::Attribute(a) => {
            let per_visit = split_qualified(a).is_some_and(|(e, _)| e == "assessments");
            if per_visit
                && matches!(entity.as_str(), "wounds" | "patients")
                && let Some(latest) = latest_of(model, a)
            {
                match r.visit_hint {
                    Some(true) => CmpSubject::Attribute(latest),
                    Some(false) => CmpSubject::Attribute(a.clone()),
                    None => CmpSubject::Aggregation {
                        per_visit: a.clone(),
                        latest,
                    },
                }
            } else {
                CmpSubject::Attribute(a.clone())
            }
        }
        Subject::ColumnTerm(t) => CmpSubject::Column { term: *t },
        Subject::Size => match model.terms.iter().position(|t| t.id == "size") {
            Some(t) => CmpSubject::Column { term: t },
            None => CmpSubject::Attribute("wounds.latest_area".into()),
        },
        Subject::Implied(e) => {
            let unit = c.unit.as_deref();
            match (e.as_str(), unit) {
                ("patients", None | Some("years")) => CmpSubject::Attribute("patients.age".into()),
                ("patients", Some("kg/m2")) => CmpSubject::Attribute("patients.bmi".into()),
                (_, Some("days" | "weeks" | "months")) => CmpSubject::Attribute("wounds.days_open".into()),
                (_, Some("points")) => CmpSubject::Attribute("wounds.latest_pain".into()),
                ("clinics", None) => CmpSubject::Attribute("clinics.patient_count".into()),
                ("clinicians", None) => CmpSubject::Attribute("clinicians.assessment_count".into()),
                _ => match model.terms.iter().position(|t| t.id == "size") {
                    Some(t) => CmpSubject::Column { term: t },
                    None => CmpSubject::Attribute("wounds.latest_area".into()),
                },
            }
        }
        Subject::Related(rel) => {
            // "more than 2 open wounds": a related count cannot carry the status
            if let Some(mi) = c.subject_mention
                && let Some(x) = ctx.mentions[mi].measure()
                && model.measures[x].filter.is_some()
            {
                let span = ctx.mentions[mi].span;
                r.notes.push((
                    span,
                    format!("counted all {rel}, not only \"{}\"", span.slice(ctx.question)),
                ));
            }
            // "patients with more than 3 wounds": a count attribute of the entity, else a
            // related count
            let owner = r.entity.clone().unwrap_or_else(|| match rel.as_str() {
                "wounds" => "patients".into(),
                _ => "wounds".into(),
            });
            if r.entity.is_none() {
                r.entity = Some(owner.clone());
                r.entity_source = EntitySource::Implied;
            }
            let attr = model.entity(&owner).and_then(|e| {
                e.attributes
                    .iter()
                    .find(|a| matches!(&a.derived, Some(Derived::CountRelated { entity }) if *entity == *rel))
            });
            match attr {
                Some(a) => CmpSubject::Attribute(format!("{owner}.{}", a.name)),
                None => {
                    let n = c.value.max(0.0).round() as u32;
                    let constraint = Constraint::RelatedCount {
                        per: Some(owner.clone()),
                        related: rel.clone(),
                        op: c.op,
                        value: n,
                        within: None,
                    };
                    r.filters.push(Filter {
                        constraint: negate(constraint, negated),
                        first: c.first,
                        span: c.span,
                    });
                    r.pieces.push(LinkedPiece {
                        kind: PieceKind::Comparison,
                        target: format!("{owner}→{rel}"),
                        value: Some(Value::Integer(i64::from(n))),
                        text: ctx.text(c.span),
                        span: Some(c.span),
                        how: LinkMethod::Exact,
                        confidence: EXACT,
                    });
                    return;
                }
            }
        }
    };
    // "took more than 60 days to heal": the healing time, not the time open
    let heal_after = ctx.tokens[c.last.min(ctx.tokens.len())..]
        .iter()
        .take(4)
        .any(|t| matches!(t.text.as_str(), "heal" | "healed" | "close" | "closed"));
    let subject = match subject {
        CmpSubject::Attribute(a) if a == "wounds.days_open" && heal_after => {
            CmpSubject::Attribute("wounds.healing_days".into())
        }
        other => other,
    };
    let target = match &subject {
        CmpSubject::Attribute(a) => a.clone(),
        CmpSubject::Column { term } => model.terms[*term].id.clone(),
        CmpSubject::Aggregation { per_visit, .. } => per_visit.clone(),
    };
    r.pieces.push(LinkedPiece {
        kind: PieceKind::Comparison,
        target,
        value: Some(Value::Real(c.value)),
        text: ctx.text(c.span),
        span: Some(c.span),
        how: LinkMethod::Exact,
        confidence: EXACT,
    });
    r.cmps.push(Cmp {
        subject,
        op: c.op,
        value: c.value,
        upper: c.upper,
        unit: c.unit.clone(),
        span: c.span,
        first: c.first,
        negated,
    });
}

/// The wound-level "latest" attribute reading a per-visit attribute.
pub(crate) fn latest_of(model: &SemanticModel, per_visit: &str) -> Option<String> {
    derived_of(model, per_visit, true)
}

/// The wound-level "first" attribute reading a per-visit attribute.
pub(crate) fn first_of(model: &SemanticModel, per_visit: &str) -> Option<String> {
    derived_of(model, per_visit, false)
}

fn derived_of(model: &SemanticModel, per_visit: &str, latest: bool) -> Option<String> {
    let wounds = model.entity("wounds")?;
    wounds
        .attributes
        .iter()
        .find(|a| match &a.derived {
            Some(Derived::Latest { attribute, .. }) if latest => attribute == per_visit,
            Some(Derived::First { attribute, .. }) if !latest => attribute == per_visit,
            _ => false,
        })
        .map(|a| format!("wounds.{}", a.name))
        .or_else(|| {
            if latest || per_visit != "assessments.area" {
                None
            } else {
                Some("wounds.initial_area".into())
            }
        })
}

fn groupable(model: &SemanticModel, e: usize, a: usize) -> bool {
    let attr = &model.entities[e].attributes[a];
    !matches!(attr.role, AttributeRole::Key) && !attr.pii || attr.role == AttributeRole::Label
}

fn sortable(model: &SemanticModel, e: usize, a: usize) -> bool {
    let attr = &model.entities[e].attributes[a];
    attr.ty.is_ordered() && !matches!(attr.role, AttributeRole::Key | AttributeRole::ForeignKey)
}

/// The entity a term modifies: an entity word right after ("large wounds"), a value right
/// after ("serious pressure injuries"), an entity word before ("wounds that are large"),
/// else the question's entity.
fn term_anchor(ctx: &Ctx<'_>, r: &Reading, mi: usize) -> String {
    let ms = ctx.mentions;
    let m = &ms[mi];
    let fallback = r.entity.clone().unwrap_or_else(|| "wounds".into());
    // the term's own phrase may include the noun ("diabetic wounds", "foot ulcers")
    for w in m.phrase.split(' ') {
        if let Some(e) = ctx.model.find_entity(w) {
            return e.name.clone();
        }
    }
    for other in ms.iter().filter(|o| o.first >= m.last && o.first <= m.last + 2) {
        if let Some(e) = mention_entity(ctx.model, other) {
            return e;
        }
    }
    for other in ms
        .iter()
        .rev()
        .filter(|o| o.last <= m.first && o.last + 4 >= m.first)
    {
        if let Some(e) = other.entity() {
            return ctx.model.entities[e].name.clone();
        }
    }
    fallback
}

fn value_label(model: &SemanticModel, attribute: &str, v: &Value) -> String {
    model
        .value_label(attribute, v)
        .map(str::to_owned)
        .unwrap_or_else(|| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
}

pub(crate) fn intent_name(i: Intent) -> &'static str {
    match i {
        Intent::List => "list",
        Intent::Count => "count",
        Intent::Aggregate => "aggregate",
        Intent::GroupBy => "group_by",
        Intent::Rank => "rank",
        Intent::Trend => "trend",
        Intent::Compare => "compare",
    }
}

/// Negates a constraint (booleans flip; others are wrapped in `not`).
pub(crate) fn negate(c: Constraint, negated: bool) -> Constraint {
    if !negated {
        return c;
    }
    match c {
        Constraint::Compare {
            attribute,
            op: CompareOp::Eq,
            value: Value::Bool(b),
            unit,
        } => Constraint::Compare {
            attribute,
            op: CompareOp::Eq,
            value: Value::Bool(!b),
            unit,
        },
        Constraint::Compare {
            attribute,
            op: CompareOp::Eq,
            value,
            unit,
        } => Constraint::Compare {
            attribute,
            op: CompareOp::Ne,
            value,
            unit,
        },
        Constraint::Not { of } => *of,
        other => Constraint::Not { of: Box::new(other) },
    }
}

fn draft_label(name: &str) -> String {
    let l = super::draft::attribute_label(name);
    let mut c = l.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().collect::<String>() + c.as_str())
}
