//! Engine and store types → the protocol types the API and the UI show. Pure: no I/O.

use crate::engine::{self, AllowedValuesSnapshot, Ambiguity, CustomValue, QueryPlan};
use crate::semantic::{SemanticModel, unit_symbol};
use crate::sql::{ColumnSource, Rendered};
use crate::warehouse::exec::QueryRows;
use app::protocol::{
    Assumption, AssumptionSource, Choice, CustomInput, OpenQuestion, Question, ResultColumn, ResultTable,
    Suggestion, ThinkingStep,
};

/// Most allowed values listed in a custom-value picker.
const MAX_PICKER_VALUES: usize = 100;

/// An option's preview: how many records its answer would cover, and which records
/// (the entity of the option's own plan: the question's subject, not necessarily the
/// entity the ambiguous word belongs to).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Preview {
    pub count: Option<i64>,
    pub entity: String,
}

/// An ambiguity's options as radio choices, with their previews when known.
pub fn choices(a: &Ambiguity, previews: Option<&[Preview]>) -> Vec<Choice> {
    a.options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let preview = previews.and_then(|p| p.get(i)).filter(|p| p.count.is_some());
            Choice {
                id: o.id.clone(),
                label: o.label.clone(),
                description: o.description.clone(),
                default: o.default,
                count: preview.and_then(|p| p.count),
                counts_of: preview.map(|p| p.entity.replace('_', " ")).unwrap_or_default(),
            }
        })
        .collect()
}

/// One question of a clarification round.
pub fn question(
    model: &SemanticModel,
    a: &Ambiguity,
    previews: Option<&[Preview]>,
    allowed: &AllowedValuesSnapshot,
) -> Question {
    Question {
        id: a.id.clone(),
        kind: a.kind.as_str().to_owned(),
        text: a.question.clone(),
        reason: a.reason.clone(),
        span_text: a.text.clone(),
        options: choices(a, previews),
        custom: custom_input(model, &a.custom, allowed),
        priority: priority(a.severity).to_owned(),
        confidence: rounded(a.confidence),
    }
}

/// A question's priority as the panel shows it.
pub fn priority(s: engine::Severity) -> &'static str {
    match s {
        engine::Severity::Critical => "critical",
        engine::Severity::High => "important",
        engine::Severity::Medium | engine::Severity::Low => "helpful",
    }
}

fn rounded(c: f64) -> f64 {
    (c.clamp(0.0, 1.0) * 100.0).round() / 100.0
}

/// What custom value a question takes, for the input's type and hint.
pub fn custom_input(model: &SemanticModel, c: &CustomValue, allowed: &AllowedValuesSnapshot) -> CustomInput {
    match c {
        CustomValue::None => CustomInput {
            kind: "none".into(),
            ..CustomInput::default()
        },
        CustomValue::Number { unit, .. } => CustomInput {
            kind: "number".into(),
            placeholder: match unit {
                Some(u) => format!("e.g. 15 ({})", unit_symbol(u)),
                None => "e.g. 15".into(),
            },
            unit: unit.as_deref().map(|u| unit_symbol(u).to_owned()),
            allowed_values: Vec::new(),
        },
        CustomValue::DateRange { .. } => CustomInput {
            kind: "date_range".into(),
            placeholder: "e.g. 2025-01-01..2025-06-30".into(),
            unit: None,
            allowed_values: Vec::new(),
        },
        CustomValue::AllowedValue { attribute } => CustomInput {
            kind: "allowed_value".into(),
            placeholder: "pick a value".into(),
            unit: None,
            allowed_values: super::answers::pickable_values(model, allowed, attribute)
                .into_iter()
                .take(MAX_PICKER_VALUES)
                .map(|(_, label)| label)
                .collect(),
        },
        CustomValue::FreeConstraint { .. } => CustomInput {
            kind: "free_constraint".into(),
            placeholder: "e.g. area > 15".into(),
            unit: None,
            allowed_values: Vec::new(),
        },
    }
}

/// An open question (non-interactive mode): asked nowhere, its default assumed.
pub fn open_question(a: &Ambiguity) -> OpenQuestion {
    OpenQuestion {
        id: a.id.clone(),
        text: a.question.clone(),
        assumed_option_id: a.default_option().map(|o| o.id.clone()).unwrap_or_default(),
        options: choices(a, None),
    }
}

/// A scoped user's badges (issue 16): which clinics the answer covers, and the clinics
/// the question named that are outside their access (never their numbers).
pub fn scope_badges(access: &super::Access, outside: &[String]) -> Vec<Assumption> {
    let badge = |piece: &str, assumed: String| Assumption {
        piece: piece.into(),
        assumed,
        source: AssumptionSource::Default,
        ambiguity_id: None,
        option_id: None,
        options: Vec::new(),
        confidence: Some(1.0),
        reasoning: "Your account may see only these clinics (an administrator sets this).".into(),
    };
    let mut out = Vec::new();
    if access.scope.ids().is_some() {
        let names: Vec<&str> = access.visible.iter().map(|v| v.1.as_str()).collect();
        out.push(badge(
            "clinics",
            if names.is_empty() {
                "none: your account has no clinics assigned".into()
            } else {
                format!("only yours ({})", names.join(", "))
            },
        ));
    }
    if !outside.is_empty() {
        out.push(badge(
            "outside your access",
            format!(
                "{}: not counted; this answer covers only the clinics you may see",
                outside.join(", ")
            ),
        ));
    }
    out
}

/// The engine's assumptions as badges, each with its alternatives when still open, its
/// confidence and a line on why it was assumed.
pub fn assumptions(u: &engine::Understanding) -> Vec<Assumption> {
    u.assumptions
        .iter()
        .map(|a| {
            let amb = a.ambiguity_id.as_deref().and_then(|id| u.ambiguity(id));
            let (confidence, reasoning) = why(u, a, amb);
            Assumption {
                piece: a.piece.clone(),
                assumed: a.assumed.clone(),
                source: match a.source {
                    engine::AssumptionSource::Default => AssumptionSource::Default,
                    engine::AssumptionSource::SavedDefinition => AssumptionSource::SavedDefinition,
                    engine::AssumptionSource::LowConfidenceLink => AssumptionSource::LowConfidence,
                },
                ambiguity_id: a.ambiguity_id.clone(),
                option_id: a.option_id.clone(),
                options: amb.map(|amb| choices(amb, None)).unwrap_or_default(),
                confidence,
                reasoning,
            }
        })
        .collect()
}

/// An assumption's confidence and its one-line reasoning, from what the engine measured.
fn why(u: &engine::Understanding, a: &engine::Assumption, amb: Option<&Ambiguity>) -> (Option<f64>, String) {
    match (a.source, amb) {
        (engine::AssumptionSource::SavedDefinition, _) => (
            Some(1.0),
            format!(
                "You chose this for “{}” and asked Clarion to remember it.",
                a.piece
            ),
        ),
        (engine::AssumptionSource::Default, Some(amb)) => {
            let why_not_asked = match amb.severity {
                engine::Severity::Critical | engine::Severity::High => {
                    "not asked because of your clarification settings or the rounds already used"
                }
                _ => "not asked because a different reading changes the answer little",
            };
            (
                Some(rounded(amb.confidence)),
                format!(
                    "The usual meaning of “{}” (1 of {} readings), {why_not_asked}.",
                    a.piece,
                    amb.options.len()
                ),
            )
        }
        (engine::AssumptionSource::Default, None) => {
            (None, format!("Clarion's best guess for “{}”.", a.piece))
        }
        (engine::AssumptionSource::LowConfidenceLink, _) => {
            let link = u
                .pieces
                .iter()
                .filter(|p| a.span.is_some() && p.span == a.span)
                .map(|p| p.confidence)
                .reduce(f64::min);
            (
                link.map(rounded),
                match link {
                    Some(c) => format!(
                        "“{}” was read with {:.0} % confidence (a close spelling, a similar word or a reading the data cannot express exactly).",
                        a.piece,
                        c * 100.0
                    ),
                    None => format!(
                        "“{}” could not be read exactly; this is the closest reading.",
                        a.piece
                    ),
                },
            )
        }
    }
}

/// Marks the badges of choices the learning rule applied (the engine reports them as
/// remembered ones) as "your usual definition".
pub fn mark_usual(assumptions: &mut [Assumption], usual: &std::collections::BTreeMap<String, String>) {
    for a in assumptions.iter_mut() {
        if a.source == AssumptionSource::SavedDefinition
            && let (Some(amb), Some(opt)) = (a.ambiguity_id.as_deref(), a.option_id.as_deref())
            && super::learning::usual_for(usual, amb) == Some(opt)
        {
            a.source = AssumptionSource::UsualDefinition;
            a.reasoning = format!(
                "Your usual answer for “{}”: given often enough, successfully, and almost every time you were asked.",
                a.piece
            );
        }
    }
}

/// A remembered or usual choice's badge that has no alternatives to change it to.
pub fn needs_alternatives(a: &Assumption) -> bool {
    matches!(
        a.source,
        AssumptionSource::SavedDefinition | AssumptionSource::UsualDefinition
    ) && a.options.is_empty()
        && a.ambiguity_id.is_some()
        && a.option_id.as_deref() != Some("custom")
}

/// Gives those badges the options of their ambiguity as `own` (a reading without the
/// remembered choices) would have asked it.
pub fn offer_alternatives(assumptions: &mut [Assumption], own: &engine::Understanding) {
    for a in assumptions.iter_mut().filter(|a| needs_alternatives(a)) {
        if let Some(amb) = a.ambiguity_id.as_deref().and_then(|id| own.ambiguity(id)) {
            a.options = choices(amb, None);
        }
    }
}

/// The choices made in a question's rounds as badges ("You chose"), with the options of
/// each (and their counts) to change it on the answer. `chosen` holds how each reads in
/// the thread ("serious: Infected"), for a typed value.
pub fn chosen_badges(
    ambiguities: &[&Ambiguity],
    previews: &[Vec<Preview>],
    resolutions: &engine::Resolutions,
    chosen: &[(String, String)],
) -> Vec<Assumption> {
    ambiguities
        .iter()
        .zip(previews)
        .map(|(a, p)| {
            let typed = || {
                chosen
                    .iter()
                    .find(|c| c.0 == a.id)
                    .and_then(|c| c.1.split_once(": "))
                    .map(|(_, v)| v.to_owned())
                    .unwrap_or_default()
            };
            let (option_id, assumed) = match resolutions.answers.get(&a.id) {
                Some(engine::Resolution::Option { id }) => (
                    id.clone(),
                    a.option(id).map(|o| o.label.clone()).unwrap_or_else(typed),
                ),
                _ => ("custom".to_owned(), typed()),
            };
            Assumption {
                piece: engine::piece_name(a),
                assumed,
                source: AssumptionSource::Chosen,
                ambiguity_id: Some(a.id.clone()),
                option_id: Some(option_id),
                options: choices(a, Some(p)),
                confidence: Some(1.0),
                reasoning: "You chose this when Clarion asked.".to_owned(),
            }
        })
        .collect()
}

/// Badges for the remembered custom values the engine applied (it reports them as
/// answers, since they reach it as resolutions): "your saved definition", like a
/// remembered option. Ambiguities answered in this conversation are not badges.
pub fn saved_custom_assumptions(
    u: &engine::Understanding,
    answered: &engine::Resolutions,
    saved: &std::collections::BTreeMap<String, super::answers::SavedCustom>,
) -> Vec<Assumption> {
    u.applied
        .iter()
        .filter(|c| c.option_id == "custom" && !answered.answers.contains_key(&c.ambiguity_id))
        .filter_map(|c| {
            let s = saved.get(&c.ambiguity_id)?;
            let (piece, assumed) = s
                .label
                .split_once(" = ")
                .unwrap_or((c.ambiguity_id.as_str(), s.label.as_str()));
            Some(Assumption {
                piece: piece.to_owned(),
                assumed: assumed.to_owned(),
                source: AssumptionSource::SavedDefinition,
                ambiguity_id: Some(c.ambiguity_id.clone()),
                option_id: Some("custom".to_owned()),
                options: Vec::new(),
                confidence: Some(1.0),
                reasoning: "The value you typed and asked Clarion to remember.".to_owned(),
            })
        })
        .collect()
}

/// Follow-up pills.
pub fn suggestions(s: &[engine::Suggestion]) -> Vec<Suggestion> {
    s.iter()
        .map(|s| Suggestion {
            text: s.text.clone(),
            kind: serde_json::to_value(s.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            cross_area: s.cross_area,
        })
        .collect()
}

/// A thinking step; `duration` is measured by the orchestrator.
pub fn step(name: &str, detail: impl Into<String>, duration: Option<std::time::Duration>) -> ThinkingStep {
    ThinkingStep {
        name: name.to_owned(),
        detail: detail.into(),
        duration_ms: duration.map(|d| (d.as_secs_f64() * 1e6).round() / 1e3),
    }
}

/// The engine's own steps, as sub-steps of the measured "understood" step.
pub fn engine_steps(u: &engine::Understanding) -> Vec<ThinkingStep> {
    u.steps
        .iter()
        .map(|s| step(&s.name, s.detail.clone(), None))
        .collect()
}

/// The columns an answer's table shows: all but the keys a grouping by a record's label
/// carries ([`ColumnSource::GroupKey`]). Where two groups share a label (two clinicians
/// with one name), the key is said in the label instead ("Jo Lee (id 12)"), so each row
/// names its record.
fn shown_columns(rendered: &Rendered, rows: &mut QueryRows, model: &SemanticModel) -> Vec<usize> {
    let mut shown = Vec::new();
    for (k, c) in rendered.columns.iter().enumerate() {
        let ColumnSource::GroupKey { attribute } = &c.source else {
            shown.push(k);
            continue;
        };
        let Some(entity) = attribute.split_once('.').and_then(|(e, _)| model.entity(e)) else {
            continue;
        };
        let Some(display) = &entity.display_attribute else {
            continue;
        };
        let label_attr = format!("{}.{display}", entity.name);
        let Some(l) = rendered.columns.iter().position(
            |c| matches!(&c.source, ColumnSource::Attribute { attribute } if *attribute == label_attr),
        ) else {
            continue;
        };
        // a label naming more than one record (the same record on several rows, one per
        // month, is no namesake)
        let mut keys: std::collections::HashMap<String, std::collections::HashSet<String>> =
            std::collections::HashMap::new();
        for row in &rows.rows {
            if let (Some(label), Some(key)) = (row.get(l), row.get(k)) {
                keys.entry(label.to_string()).or_default().insert(key.to_string());
            }
        }
        for row in &mut rows.rows {
            let (Some(label), Some(key)) = (row.get(l), row.get(k)) else {
                continue;
            };
            if keys.get(&label.to_string()).is_some_and(|k| k.len() > 1) {
                let text = label.as_str().map_or_else(|| label.to_string(), str::to_owned);
                row[l] = serde_json::Value::String(format!("{text} (id {key})"));
            }
        }
    }
    shown
}

/// The rows of an answer with typed columns and units. Coded values of attributes with
/// labelled allowed values are shown as their labels ("venous_leg_ulcer" → "Venous leg
/// ulcer"), as a clinician reads them; everything else is passed through unchanged.
pub fn table(
    rendered: &Rendered,
    mut rows: QueryRows,
    model: &SemanticModel,
    plan: &QueryPlan,
) -> ResultTable {
    for (i, c) in rendered.columns.iter().enumerate() {
        let ColumnSource::Attribute { attribute } = &c.source else {
            continue;
        };
        let Some(allowed) = model.allowed_values(attribute) else {
            continue;
        };
        for row in &mut rows.rows {
            if let Some(serde_json::Value::String(code)) = row.get_mut(i)
                && let Some(label) = allowed.label_for_text(code)
            {
                // the code's own buffer takes the label (no allocation when it fits)
                code.clear();
                code.push_str(label);
            }
        }
    }

    let shown = shown_columns(rendered, &mut rows, model);
    let columns = shown
        .iter()
        .map(|&i| &rendered.columns[i])
        .map(|c| {
            let attribute = match &c.source {
                ColumnSource::Attribute { attribute } => Some(attribute.as_str()),
                ColumnSource::Metric { index } => {
                    plan.metrics.get(*index).and_then(|m| m.attribute.as_deref())
                }
                ColumnSource::Bucket { .. } | ColumnSource::RowCount | ColumnSource::GroupKey { .. } => None,
            };
            let unit = attribute
                .and_then(|a| model.attribute(a))
                .and_then(|r| r.attribute.unit.as_deref())
                .map(|u| unit_symbol(u).to_owned());
            ResultColumn {
                name: c.name.clone(),
                label: c.label.clone(),
                kind: c.ty.as_str().to_owned(),
                unit,
            }
        })
        .collect();
    if shown.len() < rendered.columns.len() {
        for row in &mut rows.rows {
            let mut cells = std::mem::take(row).into_iter().map(Some).collect::<Vec<_>>();
            *row = shown
                .iter()
                .map(|&i| cells.get_mut(i).and_then(Option::take).unwrap_or_default())
                .collect();
        }
    }
    ResultTable {
        columns,
        row_count: u32::try_from(rows.rows.len()).unwrap_or(u32::MAX),
        rows: rows.rows,
        truncated: rows.truncated,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use app::protocol::{ResultColumn, ResultTable};
    use serde_json::json;

    fn table() -> ResultTable {
        let col = |name: &str, kind: &str, unit: Option<&str>| ResultColumn {
            name: name.into(),
            label: format!("{name} \"label\""),
            kind: kind.into(),
            unit: unit.map(str::to_owned),
        };
        ResultTable {
            columns: vec![
                col("id", "integer", None),
                col("area", "real", Some("cm²")),
                col("note", "text", None),
                col("open", "boolean", None),
            ],
            rows: vec![
                vec![json!(1), json!(2.0), json!("a \"quoted\"\n ✓ \u{1}"), json!(true)],
                vec![json!(i64::MAX), json!(-0.125), json!(null), json!(false)],
                vec![json!(-3), json!(1e300), json!(""), json!(null)],
            ],
            row_count: 3,
            truncated: true,
            ..Default::default()
        }
    }

    /// The table's fields exactly as the derived serialization wrote them before it was
    /// serialized once per answer.
    #[derive(serde::Serialize)]
    struct Reference<'a> {
        columns: &'a Vec<ResultColumn>,
        rows: &'a Vec<Vec<serde_json::Value>>,
        row_count: u32,
        truncated: bool,
    }

    #[test]
    fn a_table_serialized_once_is_written_again_byte_for_byte() {
        let plain = table();
        let reference = serde_json::to_string(&Reference {
            columns: &plain.columns,
            rows: &plain.rows,
            row_count: plain.row_count,
            truncated: plain.truncated,
        })
        .unwrap();
        assert_eq!(serde_json::to_string(&plain).unwrap(), reference);
        let mut kept = plain.clone();
        let text = kept.serialize_once().unwrap().to_owned();
        assert_eq!(text, reference, "what is stored with the History entry");
        assert_eq!(kept.serialized.get(), Some(reference.as_str()));
        assert_eq!(serde_json::to_string(&kept).unwrap(), reference, "what is sent");
        // inside other values, as the answer carries it
        assert_eq!(
            serde_json::to_string(&json!({"table": serde_json::to_value(&kept).unwrap()})).unwrap(),
            serde_json::to_string(&json!({"table": serde_json::to_value(&plain).unwrap()})).unwrap()
        );
        assert_eq!(
            serde_json::to_vec(&vec![&kept, &plain]).unwrap(),
            serde_json::to_vec(&vec![&plain, &plain]).unwrap()
        );
        // it compares, clones and reads back as the table it is
        assert_eq!(kept, plain);
        assert_eq!(serde_json::to_string(&kept.clone()).unwrap(), reference);
        let back: ResultTable = serde_json::from_str(&text).unwrap();
        assert_eq!(back, plain);
        assert!(back.serialized.get().is_none(), "never read from the JSON");
        // serializing once again after a change keeps the new fields, not the old text
        kept.rows.pop();
        kept.row_count = 2;
        let again = kept.serialize_once().unwrap().to_owned();
        assert_ne!(again, reference);
        assert_eq!(serde_json::to_string(&kept).unwrap(), again);
    }

    /// Every coded value of the wound-care model reads as the same label through the
    /// text look-up as through the general one; anything else has none.
    #[test]
    fn a_coded_cell_reads_as_the_label_the_model_gives_it() {
        use crate::semantic::{SemanticModel, Value, WOUND_CARE_FILE, WOUND_CARE_TOML};
        let model = SemanticModel::from_toml_str(WOUND_CARE_TOML, WOUND_CARE_FILE).unwrap();
        let mut labelled = 0;
        let qualified = model
            .entities
            .iter()
            .flat_map(|e| e.attributes.iter().map(move |a| format!("{}.{}", e.name, a.name)));
        for attribute in qualified {
            let Some(allowed) = model.allowed_values(&attribute) else {
                continue;
            };
            for v in allowed.listed() {
                let Value::Text(code) = &v.value else {
                    assert_eq!(allowed.label_for_text(&v.value.to_string()), None);
                    continue;
                };
                assert_eq!(
                    allowed.label_for_text(code),
                    allowed.label_for(&v.value),
                    "{attribute}: {code}"
                );
                labelled += usize::from(allowed.label_for_text(code).is_some());
            }
            for other in ["", "no_such_code", "Venous leg ulcer", "1"] {
                assert_eq!(
                    allowed.label_for_text(other),
                    allowed.label_for(&Value::Text(other.to_owned())),
                    "{attribute}: {other}"
                );
            }
        }
        assert!(labelled > 10, "the model labels its codes: {labelled}");
    }
}
