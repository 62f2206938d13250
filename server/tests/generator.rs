//! A question generator as a property test (issue 12, point 7): a seeded combinatorial
//! generator over the model's own vocabulary — entities, attributes, values, dictionary
//! terms, time phrases, negations, counts, groupings, follow-ups, typos, filler and words
//! nobody knows — produces at least 20,000 questions per run. For every one:
//!
//! - the engine does not panic, and gives the same understanding twice;
//! - every plan it answers with renders in both dialects (no plan outside the model, no
//!   plan the renderer rejects), and so does the plan of every default it offers — or the
//!   engine refuses with help (given the renderer's rules, as the server gives them);
//! - every unknown word it was given is asked about, shown as an assumption, or the
//!   question is refused — never dropped without a trace (F26).
//!
//! Deterministic: the seed is fixed (override with `CLARION_GEN_SEED`, the count with
//! `CLARION_GEN_COUNT`), so a failure names the question that reproduces it.

use std::panic::{AssertUnwindSafe, catch_unwind};

use chrono::NaiveDate;
use server::engine::{
    ConversationContext, Decision, EngineIndex, EngineInput, QueryPlan, Resolutions, Understanding,
    understand,
};
use server::semantic::{SemanticModel, Value};
use server::sql::{Dialect, RenderCheck, render};

/// xorshift64*: tiny, seeded, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// The model's vocabulary, by role.
struct Vocab {
    entities: Vec<String>,
    attributes: Vec<String>,
    values: Vec<String>,
    terms: Vec<String>,
    numeric: Vec<String>,
    groupable: Vec<String>,
}

fn vocab(model: &SemanticModel) -> Vocab {
    let mut v = Vocab {
        entities: Vec::new(),
        attributes: Vec::new(),
        values: Vec::new(),
        terms: Vec::new(),
        numeric: Vec::new(),
        groupable: Vec::new(),
    };
    for e in &model.entities {
        v.entities.push(e.label.to_lowercase() + "s");
        v.entities.extend(e.synonyms.iter().cloned());
        for a in &e.attributes {
            let name = a.name.replace('_', " ");
            v.attributes.push(name.clone());
            v.attributes.extend(a.synonyms.iter().cloned());
            if let Some(allowed) = &a.allowed {
                for value in allowed.listed() {
                    v.values.push(value.label.to_lowercase());
                    v.values.extend(value.synonyms.iter().cloned());
                    if let Value::Text(t) = &value.value {
                        v.values.push(t.replace('_', " "));
                    }
                }
                v.groupable.push(name.clone());
            }
            if a.ty.is_numeric() {
                v.numeric.push(name);
            }
        }
    }
    for t in &model.terms {
        v.terms.push(t.phrase.clone());
        v.terms.extend(t.variants.iter().cloned());
    }
    v
}

const LEADS: &[&str] = &[
    "",
    "",
    "",
    "show me",
    "list",
    "how many",
    "no. of",
    "count of",
    "what is the average",
    "which",
    "give me",
    "i need",
    "pls show",
    "can you tell me",
    "what percentage of",
    "top 5",
    "the 3 oldest",
    "median",
];
const TIMES: &[&str] = &[
    "",
    "",
    "",
    "last month",
    "in the last 30 days",
    "this year",
    "in 2025",
    "since january",
    "last week",
    "between march and june 2026",
    "over the past 6 months",
    "yesterday",
    "in q3 2026",
    "ever",
];
const NEGATIONS: &[&str] = &[
    "",
    "",
    "",
    "",
    "no",
    "not",
    "without",
    "never",
    "non",
    "aren't",
    "haven't had",
];
const GROUPS: &[&str] = &["", "", "", "by", "per", "for each", "broken down by"];
const FILLERS: &[&str] = &[
    "",
    "",
    "please",
    "thanks",
    "right now",
    "for me",
    "quickly",
    "at the moment",
];
const FOLLOWS: &[&str] = &["what about", "and", "only", "same but", "now by", "instead"];
const COMPARISONS: &[&str] = &[
    "over",
    "more than",
    "at least",
    "under",
    "less than",
    "between 2 and",
];
const SYLLABLES: &[&str] = &[
    "zor", "plim", "vask", "trun", "quel", "brix", "mond", "fesh", "glu", "yarb",
];

/// A word nobody knows (checked against the model's vocabulary by the caller).
fn nonsense(rng: &mut Rng) -> String {
    let n = 2 + rng.below(2);
    (0..n).map(|_| *rng.pick(SYLLABLES)).collect()
}

fn typo(rng: &mut Rng, word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    if chars.len() < 5 {
        return word.to_owned();
    }
    let i = 1 + rng.below(chars.len() - 2);
    let mut out = chars.clone();
    out.swap(i, i + 1);
    out.into_iter().collect()
}

struct Generated {
    question: String,
    previous: Option<String>,
    unknown: Option<String>,
}

fn generate(rng: &mut Rng, v: &Vocab) -> Generated {
    let mut parts: Vec<String> = Vec::new();
    parts.push(rng.pick(LEADS).to_string());
    if rng.chance(35) {
        parts.push(rng.pick(&v.terms).clone());
    }
    let neg = rng.pick(NEGATIONS);
    if rng.chance(40) {
        parts.push(neg.to_string());
        parts.push(rng.pick(&v.values).clone());
    }
    let mut entity = rng.pick(&v.entities).clone();
    if rng.chance(8) {
        entity = typo(rng, &entity);
    }
    parts.push(entity);
    if rng.chance(30) {
        parts.push("with".into());
        parts.push(rng.pick(&v.attributes).clone());
        if rng.chance(60) {
            parts.push(rng.pick(COMPARISONS).to_string());
            parts.push((1 + rng.below(200)).to_string());
        }
    }
    if rng.chance(12) {
        parts.push(format!("id {}", 1 + rng.below(500)));
    }
    parts.push(rng.pick(TIMES).to_string());
    let group = rng.pick(GROUPS);
    if !group.is_empty() {
        parts.push(group.to_string());
        parts.push(rng.pick(&v.groupable).clone());
    }
    let unknown = if rng.chance(25) {
        let w = nonsense(rng);
        let at = rng.below(parts.len() + 1);
        parts.insert(at, w.clone());
        Some(w)
    } else {
        None
    };
    parts.push(rng.pick(FILLERS).to_string());
    let question = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let previous = rng.chance(15).then(|| {
        let p = format!("how many {}", rng.pick(&v.entities));
        p
    });
    let question = match &previous {
        Some(_) => format!("{} {question}", rng.pick(FOLLOWS)),
        None => question,
    };
    Generated {
        question,
        previous,
        unknown,
    }
}

fn renders(model: &SemanticModel, plan: &QueryPlan) -> Result<(), String> {
    for d in Dialect::ALL {
        render(plan, model, d).map_err(|e| format!("{} ({}): {e}", d.name(), e.code()))?;
    }
    Ok(())
}

/// Every unknown word is asked about, shown as an assumption, or the question refused.
fn accounted(u: &Understanding, word: &str) -> bool {
    matches!(u.decision, Decision::Refuse { .. })
        || u.ambiguities.iter().any(|a| a.text.to_lowercase().contains(word))
        || u.assumptions
            .iter()
            .any(|a| a.piece.to_lowercase().contains(word))
}

#[test]
fn generated_questions_never_panic_never_fail_to_render_and_never_drop_a_word() {
    let model = SemanticModel::wound_care();
    let index = EngineIndex::for_model(&model);
    let today = NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
    let v = vocab(&model);
    let seed = std::env::var("CLARION_GEN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_C1A2);
    let count: usize = std::env::var("CLARION_GEN_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut rng = Rng(seed);
    let check = RenderCheck { model: &model };
    let known: std::collections::HashSet<String> = v
        .entities
        .iter()
        .chain(&v.attributes)
        .chain(&v.values)
        .chain(&v.terms)
        .flat_map(|p| p.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    let mut failures: Vec<String> = Vec::new();
    let mut by_decision = std::collections::BTreeMap::<&str, usize>::new();
    let mut with_unknown = 0;
    for _ in 0..count {
        let g = generate(&mut rng, &v);
        if g.unknown.as_ref().is_some_and(|w| known.contains(w)) {
            continue;
        }
        let previous = g
            .previous
            .as_ref()
            .and_then(|p| understand(&EngineInput::new(&model, p, today).with_index(&index)).plan);
        let context = previous
            .map(|p| ConversationContext::after(p, 1))
            .unwrap_or_default();
        let input = EngineInput::new(&model, &g.question, today)
            .with_index(&index)
            .with_context(&context)
            .with_check(&check);
        let first = catch_unwind(AssertUnwindSafe(|| understand(&input)));
        let Ok(u) = first else {
            failures.push(format!("panic: {:?}", g.question));
            continue;
        };
        let again = understand(&input);
        if again != u {
            failures.push(format!("not deterministic: {:?}", g.question));
        }
        *by_decision
            .entry(match u.decision {
                Decision::Answer => "answer",
                Decision::AnswerWithAssumptions => "answer_with_assumptions",
                Decision::Clarify => "clarify",
                Decision::Refuse { .. } => "refuse",
            })
            .or_default() += 1;
        // a plan the engine answers with must run (a clarification's draft may not: the
        // answer decides, and the default answer's plan is checked below)
        if u.decision != Decision::Clarify
            && let Some(plan) = &u.plan
            && let Err(e) = renders(&model, plan)
        {
            failures.push(format!("render error {e}: {:?}", g.question));
        }
        if matches!(u.decision, Decision::Clarify) {
            // the user accepts every best guess: what the engine then answers must run
            let mut answers = Resolutions::empty();
            for a in u.questions() {
                if let Some(o) = a.default_option() {
                    answers = answers.with_option(a.id.clone(), o.id.clone());
                }
            }
            let after = understand(&input.with_resolutions(&answers));
            if after.decision != Decision::Clarify
                && let Some(plan) = &after.plan
                && let Err(e) = renders(&model, plan)
            {
                failures.push(format!("render error after the defaults {e}: {:?}", g.question));
            }
        }
        if let Some(w) = &g.unknown {
            with_unknown += 1;
            if !accounted(&u, w) {
                failures.push(format!("dropped {w:?}: {:?} → {}", g.question, u.restatement));
            }
        }
    }
    eprintln!("{count} generated questions ({with_unknown} with an unknown word): {by_decision:?}");
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for f in &failures {
        let k = match f
            .split_once(" (")
            .map(|(_, rest)| rest.split(')').next().unwrap_or(""))
        {
            Some(code) if f.starts_with("render error") => format!("render error {code}"),
            _ => f.split([' ', ':']).next().unwrap_or("").to_owned(),
        };
        *kinds.entry(k).or_default() += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {count} generated questions failed ({kinds:?}); first 40:\n{}",
        failures.len(),
        failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}
