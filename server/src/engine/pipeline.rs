//! The pipeline that runs the stages in order (see the module list in `mod.rs`) and
//! assembles the [`Understanding`]. Pure.

use std::sync::Arc;

use super::ambiguity::{self, Candidate};
use super::context;
use super::coverage;
use super::draft;
use super::explain;
use super::gate::{self, Settlement};
use super::intent;
use super::link;
use super::plan::{Dimension, Intent, OrderBy, OrderKey, QueryPlan};
use super::plan_ops::{self, Chosen};
use super::read;
use super::reading::{Ctx, Reading};
use super::suggest;
use super::time;
use super::tokenize::{Token, tokenize};
use super::vocab;
use super::vocab::EngineIndex;
use super::{
    Ambiguity, AmbiguityKind, Assumption, AssumptionSource, ConversationContext, DOMAIN_MESSAGE, Decision,
    EngineInput, LinkMethod, LinkedPiece, MAX_QUESTION_CHARS, PieceKind, PlanPatch, RefuseReason, TextSpan,
    ThinkingStep, TimeMention, Understanding,
};
use crate::semantic::{MeasureAgg, SemanticModel, TermKind};

fn refused(
    input: &EngineInput<'_>,
    reason: RefuseReason,
    message: String,
    steps: Vec<ThinkingStep>,
) -> Understanding {
    Understanding {
        question: input.question.chars().take(MAX_QUESTION_CHARS).collect(),
        intent: Intent::List,
        intent_confidence: 0.0,
        entity: None,
        pieces: Vec::new(),
        times: Vec::new(),
        ambiguities: Vec::new(),
        applied: Vec::new(),
        decision: Decision::Refuse {
            reason,
            message: message.clone(),
        },
        plan: None,
        assumptions: Vec::new(),
        restatement: message,
        suggestions: Vec::new(),
        steps,
        confidence: 0.0,
        follow_up: false,
        area: None,
    }
}

fn step(name: &str, detail: impl Into<String>) -> ThinkingStep {
    ThinkingStep {
        name: name.into(),
        detail: detail.into(),
    }
}

/// Runs the whole pipeline.
pub(crate) fn run(input: &EngineInput<'_>) -> Understanding {
    let owned;
    let index: &EngineIndex = match input.index {
        Some(ix) => ix,
        None => {
            owned = EngineIndex::for_model(input.model);
            Arc::as_ref(&owned)
        }
    };
    run_with(input, index, true)
}

/// Understands `text` as a follow-up of `plan` (no suggestions): the plan it leads to.
pub(crate) fn follow(
    model: &SemanticModel,
    index: &EngineIndex,
    plan: &QueryPlan,
    text: &str,
) -> Option<QueryPlan> {
    let context = ConversationContext {
        previous: Some(plan.clone()),
        same_area_streak: 0,
    };
    let input = EngineInput::new(model, text, plan.today)
        .with_context(&context)
        .with_index(index);
    let u = run_with(&input, index, false);
    u.plan
}

struct Stages<'t> {
    tokens: Vec<Token>,
    times: Vec<time::TimeExpr>,
    grains: Vec<time::GrainExpr>,
    mentions: Vec<link::Mention>,
    comparisons: Vec<link::Comparison>,
    cues: intent::Cues,
    _p: std::marker::PhantomData<&'t ()>,
}

fn run_with(input: &EngineInput<'_>, index: &EngineIndex, with_suggestions: bool) -> Understanding {
    let q = input.question;
    let model = input.model;
    let mut steps = Vec::new();
    let chars = q.chars().count();
    if q.trim().is_empty() {
        return refused(
            input,
            RefuseReason::Empty,
            format!("Please type a question. {DOMAIN_MESSAGE}"),
            steps,
        );
    }
    if chars > MAX_QUESTION_CHARS {
        let msg = format!(
            "That question is too long ({chars} characters; the limit is {MAX_QUESTION_CHARS}). Please ask it in fewer words."
        );
        return refused(input, RefuseReason::TooLong, msg, steps);
    }

    // 1–4: tokenize, time, link
    let tokens = tokenize(q);
    let times = time::find_times(&tokens, input.today);
    let grains = time::find_grains(&tokens);
    let mut blocked = vec![false; tokens.len()];
    for t in &times {
        blocked[t.first..t.last.min(tokens.len())]
            .iter_mut()
            .for_each(|b| *b = true);
    }
    for g in &grains {
        blocked[g.first..g.last.min(tokens.len())]
            .iter_mut()
            .for_each(|b| *b = true);
        // "by onset month": the date's word is linked (it says which date)
        if let Some(d) = g.date_word.filter(|&d| d < tokens.len()) {
            blocked[d] = false;
        }
    }
    let values = input.allowed.lookup();
    // "high-maintenance", "low-key": a word hyphenated to a word nothing knows is part of
    // that unknown compound (asked about whole), never linked alone ("high" exudate)
    let unknown = |t: &super::tokenize::Token| {
        t.kind == super::tokenize::TokenKind::Word
            && !index.knows_word(&t.text)
            && !super::vocab::is_common_word(&t.text)
            && index.lookup(&t.text).is_empty()
            && values.exact(&t.text).is_empty()
            && index.correct(&t.text).is_none()
    };
    for k in 0..tokens.len().saturating_sub(1) {
        let (a, b) = (&tokens[k], &tokens[k + 1]);
        let hyphenated = q
            .get(a.span.end..b.span.start)
            .is_some_and(|between| matches!(between, "-" | "‐" | "‑"));
        if hyphenated && (unknown(a) || unknown(b)) {
            blocked[k] = true;
            blocked[k + 1] = true;
        }
    }
    let mentions = link::link(&tokens, index, values, &blocked);
    let comparisons = link::comparisons(model, &tokens, &mentions, &blocked);
    let substantive = mentions.iter().any(|m| {
        !m.values.is_empty()
            || m.entries.iter().any(|e| match &e.target {
                vocab::Target::Term(t) => {
                    !matches!(model.terms[*t].kind, TermKind::Column | TermKind::Aggregation)
                }
                _ => true,
            })
    }) || !comparisons.is_empty()
        || !times.is_empty()
        || !grains.is_empty();
    steps.push(step(
        "Read the question",
        format!("{} words", tokens.iter().filter(|t| t.is_wordlike()).count()),
    ));

    // words inside a phrase of the model ("responding to treatment") are that phrase's
    let in_phrase: Vec<bool> = (0..tokens.len())
        .map(|k| {
            mentions
                .iter()
                .any(|m| m.last - m.first > 1 && m.first <= k && k < m.last)
        })
        .collect();
    if let Some((reason, why)) = ambiguity::out_of_domain(&tokens, substantive, &in_phrase) {
        let lead = if why.is_empty() {
            String::new()
        } else {
            format!("{why} ")
        };
        let message =
            format!("{lead}{DOMAIN_MESSAGE} For example: \"How many open wounds are there by clinic?\"");
        steps.push(step("Out of scope", message.clone()));
        return refused(input, reason, message, steps);
    }
    let linked: Vec<(usize, usize)> = mentions.iter().map(|m| (m.first, m.last)).collect();
    if let Some(what) = coverage::not_recorded(&tokens, &linked) {
        let message = format!(
            "The data does not record {what}, so I can't answer that. It holds wounds (type, location, size, stage, status, dates), patients (age, sex, diabetes, smoking, mobility, BMI), assessments (area, depth, tissue, exudate, pain, infection) and clinics. For example: \"How many open wounds are there by clinic?\""
        );
        steps.push(step("Not recorded", what));
        return refused(input, RefuseReason::OutOfDomain, message, steps);
    }
    let multiword = |k: usize| {
        mentions
            .iter()
            .any(|m| m.first <= k && k < m.last && m.last - m.first > 1 && m.measure().is_none())
    };
    let mut cues = intent::cues(&tokens, multiword);
    intent::history_extreme(&mut cues, &tokens, &mentions, &comparisons, model);
    // "the largest area ever measured", "the smallest depth any assessment measured": the
    // dictionary's ranking phrase "the largest" names records ("the largest wounds"); before
    // a measured column it is that column's extreme, as without "the"
    let the_superlative = |m: &link::Mention| {
        m.last == m.first + 2
            && tokens.get(m.first).is_some_and(|t| t.text == "the")
            && m.entity().is_none()
            && m.terms().any(|t| model.terms[t].kind == TermKind::Ranking)
    };
    let superlative = if cues.history_extreme.is_some() {
        None
    } else {
        let bare: Vec<link::Mention> = mentions.iter().filter(|m| !the_superlative(m)).cloned().collect();
        intent::superlative_aggregate(&mut cues, &tokens, &bare, model)
    };
    let mentions = match superlative {
        // the superlative is the aggregate, not a ranking word
        Some(k) => mentions
            .into_iter()
            .filter(|m| m.last != k + 1 || m.first != k && !the_superlative(m))
            .collect(),
        None => mentions,
    };
    let comparisons = if superlative.is_some() {
        link::comparisons(model, &tokens, &mentions, &blocked)
    } else {
        comparisons
    };
    let st = Stages {
        tokens,
        times,
        grains,
        mentions,
        comparisons,
        cues,
        _p: std::marker::PhantomData,
    };
    let structural = st.cues.count.is_some()
        || st.cues.list.is_some()
        || st.cues.agg.is_some()
        || st.cues.rank.is_some()
        || st.cues.trend.is_some()
        || st.cues.compare.is_some()
        || st.cues.share.is_some()
        || st.cues.data_word.is_some()
        || st
            .tokens
            .first()
            .is_some_and(|t| matches!(t.text.as_str(), "how" | "what" | "which" | "show" | "list"));
    let has_previous = input.context.previous.is_some();
    let points_back = st.cues.pronouns.iter().any(|&p| {
        matches!(
            st.tokens[p].text.as_str(),
            "it" | "them" | "they" | "that" | "this" | "those" | "these"
        )
    });
    if !(substantive || structural || points_back || has_previous && st.cues.follow_lead) {
        let reason =
            if st.tokens.iter().any(|t| t.is_wordlike() && t.text.len() > 1) && st.mentions.is_empty() {
                RefuseReason::Unintelligible
            } else {
                RefuseReason::OutOfDomain
            };
        let message = format!(
            "I didn't understand that. {DOMAIN_MESSAGE} For example: \"How many open wounds are there by clinic?\""
        );
        steps.push(step("Not understood", "nothing in the question matches the data"));
        return refused(input, reason, message, steps);
    }

    let ctx = Ctx {
        model,
        tokens: &st.tokens,
        mentions: &st.mentions,
        comparisons: &st.comparisons,
        times: &st.times,
        grains: &st.grains,
        cues: &st.cues,
        question: q,
        today: input.today,
        previous: input.context.previous.as_ref(),
        allowed: input.allowed,
    };
    let reading = read::read(&ctx);
    if let Some(message) = &reading.cannot_compute {
        let mut steps = steps;
        steps.push(step("Cannot answer", message.clone()));
        return refused(input, RefuseReason::CannotAnswer, message.clone(), steps);
    }
    steps.push(step(
        "Understood intent",
        format!(
            "{} (confidence {:.2})",
            plan_ops::intent_name(reading.intent),
            reading.intent_confidence
        ),
    ));
    if let Some(e) = &reading.entity {
        steps.push(step("Matched tables", e.clone()));
    }
    for t in &st.times {
        steps.push(step(
            "Time range",
            format!("{} ({} to {})", t.label, t.start, t.end),
        ));
    }

    // 7: detect; 9: settle (answers, remembered choices, gate scores)
    let mut detected = ambiguity::detect(&ctx, &reading, input.thresholds.low);
    // F26: every word is used by a piece, a known filler, or unexplained — and then said
    let asked: Vec<TextSpan> = detected
        .candidates
        .iter()
        .filter_map(|c| c.ambiguity.span)
        .collect();
    let cov = coverage::of_question(&ctx, &reading, &asked);
    if cov.too_little() {
        // in question order: words nothing explained and names nothing in the data knows
        let mut said: Vec<(usize, String)> = cov
            .unexplained
            .iter()
            .map(|u| (u.span.start, u.text.clone()))
            .chain(
                reading
                    .unknown_names
                    .iter()
                    .map(|s| (s.start, s.slice(input.question).to_owned())),
            )
            .collect();
        said.sort();
        let words: Vec<String> = said.into_iter().map(|(_, w)| format!("\"{w}\"")).collect();
        let message = format!(
            "I didn't understand enough of that to answer: I don't know {} in this data. {DOMAIN_MESSAGE} For example: \"How many open wounds are there by clinic?\"",
            words.join(", ")
        );
        steps.push(step(
            "Not understood",
            format!("unexplained: {}", words.join(", ")),
        ));
        return refused(input, RefuseReason::Unintelligible, message, steps);
    }
    ambiguity::unknown_words(&ctx, &reading, &cov, &mut detected);
    // "only the diabetic ones" after "open pressure injuries": a refinement keeps a subset
    // of the previous rows, so a best guess that contradicts one of its conditions (a
    // diabetic foot ulcer is not a pressure injury) gives way to one that does not
    if reading.follow_up
        && let Some(prev) = &input.context.previous
    {
        for c in &mut detected.candidates {
            plan_ops::prefer_consistent_default(&mut c.ambiguity.options, prev);
        }
    }
    let settlement = gate::settle(
        &mut detected.candidates,
        input.preferences,
        input.resolutions,
        input.thresholds,
    );
    for c in &detected.candidates {
        steps.push(step(
            "Ambiguous term found",
            format!("{} ({})", c.ambiguity.text_or_kind(), c.ambiguity.kind.as_str()),
        ));
    }
    for a in &settlement.applied {
        let what = match a.how {
            LinkMethod::Remembered => "Applied your saved definition",
            LinkMethod::Answered => "Applied your answer",
            _ => "Used the best guess",
        };
        steps.push(step(what, format!("{} = {}", a.ambiguity_id, a.option_id)));
    }

    // 8: the plan
    let fragment = draft::build(&ctx, &reading, &detected, &settlement.chosen);
    let replaced = detected.candidates.iter().zip(&settlement.chosen).any(|(c, ch)| {
        c.slot == plan_ops::Slot::Plan
            && matches!(ch, Chosen::Effect(e) if matches!(e.patch, Some(PlanPatch::ReplacePlan { .. })))
    });
    let plan = match (&input.context.previous, reading.follow_up && !replaced) {
        (Some(prev), true) => context::merge(model, prev, fragment, &ctx, &reading),
        _ => fragment,
    };
    if reading.follow_up {
        steps.push(step("Follow-up", "refined the previous question"));
    }
    let mut plan = plan;
    // "the 5 wounds with the largest area": the ranked rows shown, whatever number a
    // ranking word's reading comes with
    if let Some(n) = reading.top_n
        && !plan.order.is_empty()
        && plan.limit_per_group.is_none()
        && plan.offset.is_none()
    {
        plan.limit = Some(n);
        plan.limit_ties = reading.limit_ties;
    }
    // "average days from onset to healed": the model's day count between the two dates
    let said_agg = ctx.cues.agg.map(|(_, _, agg)| agg).or_else(|| {
        ctx.tokens.iter().find_map(|t| match t.text.as_str() {
            "average" | "avg" | "mean" => Some(MeasureAgg::Avg),
            "median" => Some(MeasureAgg::Median),
            _ => None,
        })
    });
    if let Some(attribute) = reading.days_between.clone()
        && let Some(agg) = said_agg
        && !reading.follow_up
    {
        plan.metrics = vec![plan_ops::agg_metric(model, agg, &attribute)];
        if plan.dimensions.is_empty() {
            plan.intent = Intent::Aggregate;
        }
        plan.order.clear();
        plan.limit = None;
    } else if let Some(attribute) = reading.days_between.clone()
        && !reading.follow_up
        && plan.dimensions.is_empty()
        && matches!(plan.intent, Intent::List | Intent::Count)
        && !plan
            .filters
            .iter()
            .any(|f| f.attributes().contains(&attribute.as_str()))
        && reading.cmps.is_empty()
    {
        // "for each healed burn, no. of days from onset to healed date", "how many days
        // did wound 12 take to heal": each record's day count, shown — never dropped
        plan.intent = Intent::List;
        plan.metrics.clear();
        if !plan.columns.contains(&attribute) {
            plan.columns.push(attribute);
        }
    }
    // "the average of each wound's largest area": each record's extreme, then aggregated
    if let Some(pr) = reading.per_record.clone()
        && !reading.follow_up
    {
        let mut m = plan_ops::agg_metric(model, pr.outer, &pr.attribute);
        let record_label = model
            .entity(&pr.record)
            .map_or_else(|| pr.record.clone(), |e| e.label.to_lowercase());
        let extreme = if pr.inner == MeasureAgg::Min {
            "smallest"
        } else {
            "largest"
        };
        let word = if pr.outer == MeasureAgg::Median {
            "Median"
        } else {
            "Average"
        };
        let unit = model
            .attribute(&pr.attribute)
            .and_then(|a| a.attribute.unit.clone())
            .map(|u| format!(" ({})", crate::semantic::unit_symbol(&u)))
            .unwrap_or_default();
        let name = plan_ops::attribute_label(pr.attribute.rsplit('.').next().unwrap_or(&pr.attribute));
        m.label = format!("{word} of each {record_label}'s {extreme} {name}{unit}");
        plan.entity = pr.record.clone();
        plan.metrics = vec![m];
        plan.per_record = Some(pr.inner);
        plan.columns.clear();
        plan.intent = if plan.dimensions.is_empty() {
            Intent::Aggregate
        } else {
            Intent::GroupBy
        };
        if plan.intent == Intent::Aggregate {
            plan.order.clear();
            plan.limit = None;
        }
    }
    // "which etiology has the highest average pain score": that attribute's groups,
    // ranked by the metric, the first one
    if let Some((attribute, order)) = read::ranking::which_attribute_extreme(&ctx)
        && !reading.follow_up
    {
        if plan.metrics.is_empty() {
            // "the most wounds" counts them; "the lowest average area" averages the
            // attribute the rows were ranked by
            let ranked_by = plan.order.iter().find_map(|o| match &o.key {
                OrderKey::Attribute { attribute } => Some(attribute.clone()),
                OrderKey::Metric { .. } => None,
            });
            plan.metrics.push(match (ctx.cues.agg, ranked_by) {
                (Some((_, _, agg)), Some(a)) => plan_ops::agg_metric(model, agg, &a),
                _ => plan_ops::count_metric(model, &plan.entity),
            });
        }
        plan.intent = Intent::Rank;
        plan.dimensions = vec![Dimension::Attribute { attribute }];
        plan.order = vec![OrderBy {
            key: OrderKey::Metric { index: 0 },
            order,
        }];
        plan.limit = Some(1);
        plan.columns.clear();
    }

    plan_ops::fold_negations(model, &mut plan);
    plan_ops::show_counted(model, &mut plan);
    plan_ops::related_count_as_groups(model, &mut plan, ctx.cues.list.is_some());
    if !reading.follow_up {
        record_of_latest_visit(&ctx, &reading, &mut plan);
    }
    let candidates = std::mem::take(&mut detected.candidates);
    let u = assemble(
        input,
        index,
        &ctx,
        &reading,
        candidates,
        &detected,
        settlement,
        plan,
        steps,
        with_suggestions,
    );
    // No plan that cannot run: the renderer's rules, checked before deciding to answer.
    // A clarification's plan is checked too: it is the best guess a non-interactive
    // caller (or one who skips the questions) runs.
    if let (Some(check), Some(plan)) = (input.check, &u.plan)
        && let Err(why) = check.check(plan)
    {
        let message = format!(
            "I can't answer that as I read it ({}): {why}. Try naming the records and the one thing to compute, e.g. \"average latest wound area by clinic\".",
            lower_first(&u.restatement)
        );
        let mut steps = u.steps;
        steps.push(step("Cannot answer", why));
        return refused(input, RefuseReason::CannotAnswer, message, steps);
    }
    u
}

trait TextOrKind {
    fn text_or_kind(&self) -> String;
}

impl TextOrKind for Ambiguity {
    fn text_or_kind(&self) -> String {
        if self.text.is_empty() {
            self.kind.as_str().replace('_', " ")
        } else {
            format!("\"{}\"", self.text)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    input: &EngineInput<'_>,
    index: &EngineIndex,
    ctx: &Ctx<'_>,
    reading: &Reading,
    candidates: Vec<Candidate>,
    detected: &ambiguity::Detected,
    settlement: Settlement,
    plan: QueryPlan,
    mut steps: Vec<ThinkingStep>,
    with_suggestions: bool,
) -> Understanding {
    let model = input.model;
    let mut pieces = reading.pieces.clone();
    for s in &detected.settled {
        pieces.push(LinkedPiece {
            kind: PieceKind::Attribute,
            target: s.attribute.clone(),
            value: None,
            text: String::new(),
            span: None,
            how: LinkMethod::Exact,
            confidence: 1.0,
        });
    }
    for (c, _, _) in &detected.direct {
        pieces.push(LinkedPiece {
            kind: PieceKind::Term,
            target: c
                .attributes()
                .first()
                .map_or_else(String::new, |a| (*a).to_owned()),
            value: None,
            text: String::new(),
            span: None,
            how: LinkMethod::Synonym,
            confidence: 1.0,
        });
    }
    let mut ambiguities = Vec::new();
    let mut assumptions = Vec::new();
    for (i, c) in candidates.into_iter().enumerate() {
        let how = settlement.how[i];
        if c.slot == plan_ops::Slot::Plan && matches!(how, LinkMethod::Answered | LinkMethod::Remembered) {
            // the intent (or reference) was answered: what to do is now certain
            for p in pieces.iter_mut().filter(|p| p.kind == PieceKind::Intent) {
                p.confidence = 1.0;
                p.how = how;
            }
        }
        let a = c.ambiguity;
        let option_id = settlement.option_ids[i].clone();
        pieces.push(LinkedPiece {
            kind: match a.kind {
                AmbiguityKind::Column | AmbiguityKind::Aggregation => PieceKind::Attribute,
                AmbiguityKind::Entity => PieceKind::Entity,
                AmbiguityKind::MissingTimeWindow => PieceKind::Time,
                AmbiguityKind::Intent | AmbiguityKind::UnresolvedReference => PieceKind::Intent,
                AmbiguityKind::Value => PieceKind::Value,
                _ => PieceKind::Term,
            },
            target: format!("{}={}", a.id, option_id),
            value: None,
            text: a.text.clone(),
            span: a.span,
            how,
            confidence: a.confidence,
        });
        let label = a.option(&option_id).map(|o| {
            if o.description.is_empty() {
                o.label.clone()
            } else {
                format!("{} ({})", o.label, lower_first(&o.description))
            }
        });
        match how {
            LinkMethod::Remembered => assumptions.push(Assumption {
                piece: piece_name(&a),
                assumed: label.unwrap_or_default(),
                source: AssumptionSource::SavedDefinition,
                ambiguity_id: Some(a.id.clone()),
                option_id: Some(option_id),
                span: a.span,
            }),
            LinkMethod::Default => {
                assumptions.push(Assumption {
                    piece: piece_name(&a),
                    assumed: label.unwrap_or_default(),
                    source: AssumptionSource::Default,
                    ambiguity_id: Some(a.id.clone()),
                    option_id: Some(option_id),
                    span: a.span,
                });
            }
            _ => {}
        }
        if settlement.open[i] {
            ambiguities.push(a);
        }
    }
    // readings the plan cannot express exactly
    for (span, note) in &reading.notes {
        pieces.push(LinkedPiece {
            kind: PieceKind::Comparison,
            target: note.clone(),
            value: None,
            text: span.slice(input.question).to_owned(),
            span: Some(*span),
            how: LinkMethod::Default,
            confidence: super::link::DEFAULT,
        });
        assumptions.push(Assumption {
            piece: span.slice(input.question).to_owned(),
            assumed: note.clone(),
            source: AssumptionSource::LowConfidenceLink,
            ambiguity_id: None,
            option_id: None,
            span: Some(*span),
        });
    }
    // low-confidence links that no ambiguity covers
    for p in &pieces {
        if p.confidence < input.thresholds.high && matches!(p.how, LinkMethod::Fuzzy) {
            assumptions.push(Assumption {
                piece: p.text.clone(),
                assumed: readable_target(model, p),
                source: AssumptionSource::LowConfidenceLink,
                ambiguity_id: None,
                option_id: None,
                span: p.span,
            });
        }
    }
    ambiguities.sort_by_key(|a| a.severity);
    let decision = gate::decide(&pieces, &ambiguities, input.thresholds);
    let confidence = pieces.iter().map(|p| p.confidence).fold(1.0_f64, f64::min);
    let restatement = explain::restate(model, &plan);
    steps.push(step(
        "Decision",
        match &decision {
            Decision::Answer => "answer".to_owned(),
            Decision::AnswerWithAssumptions => format!("answer with {} assumption(s)", assumptions.len()),
            Decision::Clarify => format!("ask {} question(s)", ambiguities.iter().filter(|a| a.ask).count()),
            Decision::Refuse { .. } => "refuse".to_owned(),
        },
    ));
    let suggestions = if with_suggestions && decision != Decision::Clarify {
        suggest::suggest_with(model, &plan, input.context, &|p, t| follow(model, index, p, t))
    } else {
        Vec::new()
    };
    let times = ctx
        .times
        .iter()
        .map(|t| {
            let span = TextSpan::new(
                ctx.tokens.get(t.first).map_or(0, |x| x.span.start),
                ctx.tokens.get(t.last.saturating_sub(1)).map_or(0, |x| x.span.end),
            );
            TimeMention {
                text: span.slice(ctx.question).to_owned(),
                span,
                label: t.label.clone(),
                start: t.start,
                end: t.end,
            }
        })
        .collect();
    Understanding {
        question: input.question.to_owned(),
        intent: plan.intent,
        intent_confidence: reading.intent_confidence,
        entity: Some(plan.entity.clone()),
        pieces,
        times,
        ambiguities,
        applied: settlement.applied,
        decision,
        area: suggest::area_of(model, &plan).map(|a| a.name.clone()),
        plan: Some(plan),
        assumptions,
        restatement,
        suggestions,
        steps,
        confidence,
        follow_up: reading.follow_up,
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str().trim_end_matches('.'),
        None => String::new(),
    }
}

/// What an ambiguity is about, as a badge or a "you chose" line names it: its words,
/// or for a question about something missing, what is missing ("period").
pub fn piece_name(a: &Ambiguity) -> String {
    if !a.text.is_empty() {
        return a.text.clone();
    }
    match a.kind {
        AmbiguityKind::MissingTimeWindow => "period".into(),
        AmbiguityKind::MissingCohort | AmbiguityKind::Entity => "which records".into(),
        AmbiguityKind::Column => "date".into(),
        other => other.as_str().replace('_', " "),
    }
}

fn readable_target(model: &SemanticModel, p: &LinkedPiece) -> String {
    match (&p.value, p.kind) {
        (Some(v), PieceKind::Value) => model
            .value_label(&p.target, v)
            .map(str::to_owned)
            .unwrap_or_else(|| v.as_str().map_or_else(|| v.to_string(), str::to_owned)),
        _ => p.target.replace('_', " "),
    }
}

/// "which clinician did the most recent assessment of wound 2500": the record the latest
/// visit points to (who did it), not every record that ever did one of those visits. The
/// plan reads the latest visit of the rows the question names and shows that record's
/// name. Only for a record each visit has one of that the wound itself does not (the
/// visit's clinician), with no per-visit value said (that is a condition on the latest
/// visit, read elsewhere).
fn record_of_latest_visit(ctx: &Ctx<'_>, r: &Reading, plan: &mut QueryPlan) {
    const VISITS: &str = "assessments";
    let model = ctx.model;
    // the visit is what the record did: "did / performed / carried out the latest visit"
    let done = r.visit_hint_at.is_some_and(|(start, _)| {
        start > 0
            && matches!(
                ctx.tokens[start - 1].text.as_str(),
                "did" | "performed" | "done" | "conducted" | "completed" | "carried" | "made" | "do" | "does"
            )
    });
    if r.visit_hint != Some(true)
        || r.visit_first
        || !done
        || plan.time_range.is_some()
        || plan.filters.is_empty()
        || plan.intent != Intent::List
        || !plan.metrics.is_empty()
        || !plan.order.is_empty()
        || plan.limit.is_some()
    {
        return;
    }
    let e = plan.entity.clone();
    if e == VISITS || !model.has_one(VISITS, &e) || model.has_one("wounds", &e) || e == "wounds" {
        return;
    }
    let per_visit = format!("{VISITS}.");
    if plan
        .filters
        .iter()
        .any(|f| f.attributes().iter().any(|a| a.starts_with(&per_visit)))
    {
        return;
    }
    let Some(ent) = model.entity(&e) else { return };
    let Some(date) = model.default_time_dimension(VISITS).map(|d| d.attribute.clone()) else {
        return;
    };
    let label = format!(
        "{}.{}",
        e,
        ent.display_attribute.clone().unwrap_or_else(|| ent.key.clone())
    );
    plan.entity = VISITS.into();
    plan.columns = vec![label];
    plan.order = vec![OrderBy {
        key: OrderKey::Attribute { attribute: date },
        order: crate::semantic::SortOrder::Desc,
    }];
    plan.limit = Some(1);
}
