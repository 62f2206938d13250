//! The reader's working state and the helpers every reading step uses: which mentions
//! are spoken for, what earlier steps found for later ones, and how a mention becomes a
//! linked piece.

use crate::semantic::{
    AttributeRole, AttributeType, CompareOp, Constraint, Derived, MeasureAgg, SemanticModel, Value,
    split_qualified,
};

use crate::engine::link::Mention;
use crate::engine::plan_ops::attribute_label;
use crate::engine::reading::{Ctx, Reading};
use crate::engine::vocab::Target;
use crate::engine::{LinkMethod, LinkedPiece, PieceKind};

/// What the steps of [`super::read`] share while they read one question.
pub(crate) struct State {
    /// The reading so far.
    pub r: Reading,
    /// Mentions already given a role (`used[mi]`).
    pub used: Vec<bool>,
    /// A time expression a step consumed ("not assessed in 2 weeks").
    pub consumed_time: Option<usize>,
    /// The mention that is the ranking key ("top 5 clinics by healing rate").
    pub rank_key_mention: Option<usize>,
    /// Measures named (mention, measure).
    pub measures: Vec<(usize, usize)>,
    /// The entity a ranking ranks.
    pub rank_subject: Option<String>,
    /// Entity words named (mention, entity), in order.
    pub explicit: Vec<(usize, String)>,
    /// The entity as far as it is known before the values are read.
    pub provisional_entity: Option<String>,
    /// The date column named or implied ("healed", "new").
    pub time_dim: Option<String>,
    /// A comparison (its first token) another step read ("highest pain ever below 3").
    pub skip_cmp: Option<usize>,
}

impl State {
    pub(crate) fn new(ctx: &Ctx<'_>) -> Self {
        State {
            r: Reading::new(ctx.grains.first().map(|g| g.grain)),
            used: vec![false; ctx.mentions.len()],
            consumed_time: None,
            rank_key_mention: None,
            measures: Vec::new(),
            rank_subject: None,
            explicit: Vec::new(),
            provisional_entity: None,
            time_dim: None,
            skip_cmp: None,
        }
    }
}

pub(super) fn qualified(model: &SemanticModel, e: usize, a: usize) -> String {
    format!(
        "{}.{}",
        model.entities[e].name, model.entities[e].attributes[a].name
    )
}

pub(super) fn attr_weight(model: &SemanticModel, q: &str) -> f64 {
    model.attribute(q).map_or(1.0, |r| r.attribute.weight)
}

pub(super) fn how(m: &Mention) -> LinkMethod {
    if m.fuzzy || (m.entries.is_empty() && m.values.iter().all(|v| v.prefix)) {
        LinkMethod::Fuzzy
    } else if m.exact() || !m.values.is_empty() {
        LinkMethod::Exact
    } else {
        LinkMethod::Synonym
    }
}

pub(super) fn piece(
    ctx: &Ctx<'_>,
    m: &Mention,
    kind: PieceKind,
    target: String,
    value: Option<Value>,
) -> LinkedPiece {
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

/// The entity a mention names or implies (entity word, value, attribute).
pub(super) fn mention_entity(model: &SemanticModel, m: &Mention) -> Option<String> {
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
pub(super) fn counted_entity_measure(model: &SemanticModel, m: &Mention) -> Option<usize> {
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

pub(super) fn groupable(model: &SemanticModel, e: usize, a: usize) -> bool {
    groupable_attr(&model.entities[e].attributes[a])
}

/// An attribute records can be grouped by: not a key, not personal unless a label.
pub(super) fn groupable_attr(attr: &crate::semantic::Attribute) -> bool {
    !matches!(attr.role, AttributeRole::Key) && !attr.pii || attr.role == AttributeRole::Label
}

/// A column whose values have an order to rank or sort by (a number or a date), not a key.
pub(super) fn sortable(model: &SemanticModel, e: usize, a: usize) -> bool {
    model.entities[e].attributes[a].ty.is_ordered() && !keyed(model, e, a)
}

/// A text column a list can be put in the order of when the question says so ("sorted by
/// etiology", "alphabetically by location"): not a key, and not a figure to rank by.
pub(super) fn sortable_as_text(model: &SemanticModel, e: usize, a: usize) -> bool {
    model.entities[e].attributes[a].ty == AttributeType::Text && !keyed(model, e, a)
}

fn keyed(model: &SemanticModel, e: usize, a: usize) -> bool {
    matches!(
        model.entities[e].attributes[a].role,
        AttributeRole::Key | AttributeRole::ForeignKey
    )
}

pub(super) fn value_label(model: &SemanticModel, attribute: &str, v: &Value) -> String {
    model
        .value_label(attribute, v)
        .map(str::to_owned)
        .unwrap_or_else(|| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
}

pub(super) fn draft_label(name: &str) -> String {
    let l = attribute_label(name);
    let mut c = l.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().collect::<String>() + c.as_str())
}

pub(super) use crate::engine::plan_ops::across_many;

/// `attribute = value`, negated: "never"/"no"/"without" a value of a related row is "no
/// related row has it" (`not`); of the row itself, the other value (booleans) or `not`.
pub(super) fn negated_equals(
    model: &SemanticModel,
    from: Option<&str>,
    attribute: String,
    value: Value,
    negated: bool,
) -> Constraint {
    let eq = |value| Constraint::Compare {
        attribute: attribute.clone(),
        op: CompareOp::Eq,
        value,
        unit: None,
    };
    match value {
        Value::Bool(b) if negated && !across_many(model, from, &attribute) => eq(Value::Bool(!b)),
        v if negated => Constraint::Not { of: Box::new(eq(v)) },
        v => eq(v),
    }
}
