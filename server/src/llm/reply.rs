//! What the language model may answer: typed plan pieces or one clarification, in the
//! model file's own Constraint / PlanChange syntax — never SQL. The JSON Schema sent as
//! `response_format` is generated from these types, and every reply is parsed into them
//! again here (serde with unknown fields denied), then bounded (lengths, option counts,
//! one default) and searched for anything that looks like SQL text.

use crate::semantic::{Constraint, PlanChange};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Longest label or question text accepted from the model.
pub const MAX_TEXT: usize = 160;

/// The reply: readings of the words the engine could not read, or one question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ModelReply {
    /// One typed reading per word that has a clear meaning in this data.
    Plan {
        /// The readings (at most one per unexplained word).
        pieces: Vec<ProposedPiece>,
    },
    /// The words can sensibly mean different things: one question with 2–5 options.
    Clarification {
        /// The unexplained word(s) the question is about, exactly as given.
        word: String,
        /// The question, short and hypothesis-first ("Do you mean … ?").
        question: String,
        /// 2–5 options; exactly one has `default: true`.
        options: Vec<ProposedOption>,
    },
}

/// One word read as a typed constraint (a filter) or a plan change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposedPiece {
    /// The unexplained word(s) this piece reads, exactly as given.
    pub word: String,
    /// What it means, in a few words a clinician reads ("Latest area above 15 cm²").
    pub label: String,
    /// A filter in the model's constraint syntax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<Constraint>,
    /// A plan change in the model's syntax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<PlanChange>,
}

/// One option of a proposed clarification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposedOption {
    /// Short label.
    pub label: String,
    /// One line saying what it selects.
    #[serde(default)]
    pub description: String,
    /// The best guess (exactly one option).
    #[serde(default)]
    pub default: bool,
    /// A filter in the model's constraint syntax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<Constraint>,
    /// A plan change in the model's syntax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<PlanChange>,
}

/// The JSON Schema of [`ModelReply`], sent as `response_format.json_schema.schema`.
pub fn reply_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(ModelReply)).unwrap_or(serde_json::Value::Null)
}

/// Why a reply was not usable as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyError {
    /// Not JSON at all.
    Malformed(String),
    /// JSON, but not the shape asked for (or out of bounds).
    Schema(String),
}

/// Parses the model's message content: plain JSON, or JSON in a Markdown code fence.
pub fn parse(content: &str) -> Result<ModelReply, ReplyError> {
    let text = strip_fence(content.trim());
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ReplyError::Malformed(format!("not JSON ({e})")))?;
    let reply: ModelReply = serde_json::from_value(value)
        .map_err(|e| ReplyError::Schema(format!("does not match the reply schema ({e})")))?;
    check_bounds(&reply)?;
    Ok(reply)
}

fn strip_fence(s: &str) -> &str {
    let Some(rest) = s.strip_prefix("```") else {
        return s;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

fn check_bounds(reply: &ModelReply) -> Result<(), ReplyError> {
    let long = |s: &str| s.chars().count() > MAX_TEXT;
    match reply {
        ModelReply::Plan { pieces } => {
            if pieces.len() > 8 {
                return Err(ReplyError::Schema(format!("{} pieces (at most 8)", pieces.len())));
            }
            if pieces.iter().any(|p| long(&p.label) || long(&p.word)) {
                return Err(ReplyError::Schema("a label is too long".into()));
            }
        }
        ModelReply::Clarification {
            question, options, ..
        } => {
            if !(2..=5).contains(&options.len()) {
                return Err(ReplyError::Schema(format!(
                    "a clarification with {} options (2 to 5)",
                    options.len()
                )));
            }
            if options.iter().filter(|o| o.default).count() != 1 {
                return Err(ReplyError::Schema(
                    "a clarification needs exactly one default".into(),
                ));
            }
            if long(question) || options.iter().any(|o| long(&o.label) || long(&o.description)) {
                return Err(ReplyError::Schema("a question or label is too long".into()));
            }
        }
    }
    Ok(())
}

/// Text that reads like SQL (a statement, a comment, a tautology): anything of the
/// model's that carries it is discarded. Ordinary labels ("area from the first visit")
/// pass.
pub fn looks_like_sql(text: &str) -> bool {
    let t = format!(
        " {} ",
        text.to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    );
    let has = |w: &str| t.contains(w);
    has("--")
        || has("/*")
        || has(";")
        || (has(" select ") && has(" from "))
        || has(" union ")
        || has(" insert into ")
        || has(" delete from ")
        || has(" drop table ")
        || (has(" update ") && has(" set "))
        || has("1=1")
        || has("' or ")
        || has(" or 1")
        || has(" pragma ")
        || has(" exec(")
        || has(" truncate ")
        || has(" alter table ")
}

/// Every string anywhere in a JSON value.
pub fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out)
        }),
        _ => {}
    }
}

/// True when any text of `x` (labels, values, names) looks like SQL.
pub fn carries_sql(x: &impl Serialize) -> bool {
    let mut all = Vec::new();
    if let Ok(v) = serde_json::to_value(x) {
        strings(&v, &mut all);
    }
    all.iter().any(|s| looks_like_sql(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_both_reply_kinds_and_the_constraint_syntax() {
        let s = reply_schema().to_string();
        for needle in [
            "\"plan\"",
            "\"clarification\"",
            "\"compare\"",
            "\"in_set\"",
            "\"choose_attribute\"",
        ] {
            assert!(s.contains(needle), "{needle} missing from the schema");
        }
    }

    #[test]
    fn parses_a_plan_in_a_fence_and_refuses_other_shapes() {
        let ok = r#"```json
{"kind":"plan","pieces":[{"word":"big","label":"Latest area above 15 cm²","constraint":{"kind":"compare","attribute":"wounds.latest_area","op":"gt","value":15,"unit":"cm2"}}]}
```"#;
        assert!(matches!(parse(ok), Ok(ModelReply::Plan { pieces }) if pieces.len() == 1));
        assert!(matches!(parse("I think you mean"), Err(ReplyError::Malformed(_))));
        assert!(matches!(
            parse(r#"{"kind":"sql","query":"SELECT 1"}"#),
            Err(ReplyError::Schema(_))
        ));
        let extra = r#"{"kind":"plan","pieces":[{"word":"x","label":"y","sql":"SELECT * FROM patients"}]}"#;
        assert!(matches!(parse(extra), Err(ReplyError::Schema(_))));
        let one_option =
            r#"{"kind":"clarification","word":"x","question":"q?","options":[{"label":"a","default":true}]}"#;
        assert!(matches!(parse(one_option), Err(ReplyError::Schema(_))));
        let two_defaults = r#"{"kind":"clarification","word":"x","question":"q?","options":[{"label":"a","default":true},{"label":"b","default":true}]}"#;
        assert!(matches!(parse(two_defaults), Err(ReplyError::Schema(_))));
    }

    #[test]
    fn sql_text_is_recognised_and_labels_are_not() {
        for s in [
            "SELECT * FROM patients",
            "x'; DROP TABLE wounds; --",
            "1=1",
            "a' OR 'a'='a",
            "venous union select mrn",
        ] {
            assert!(looks_like_sql(s), "{s}");
        }
        for s in [
            "Latest area above 15 cm²",
            "Area reduced by less than 40% over 4 weeks",
            "Measured from the first visit",
            "Selected wounds",
        ] {
            assert!(!looks_like_sql(s), "{s}");
        }
    }
}
