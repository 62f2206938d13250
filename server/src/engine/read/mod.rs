//! Stage 5 — reading: what each linked phrase does in the question.
//!
//! [`read`] decides the role of every linked phrase — the entity counted or listed, the
//! metric, groupings ("by clinic"), filters (values, booleans, comparisons, dictionary
//! terms with the entity they modify), the time range and its date column, a ranking, list
//! columns, a comparison between values, words that point back, words nothing matches —
//! and collects the linked pieces with their confidences (F4). The result, a
//! [`Reading`], is what the ambiguity detectors look at and what [`super::draft`] builds
//! the plan from.
//!
//! [`read`] is the list of steps, in order; each step is in the file of its concept:
//!
//! | file | what becomes a plan piece there |
//! |---|---|
//! | `entity.rs` | the entity named, implied, or left to a fallback |
//! | `measures.rs` | measures, the metric, "how many distinct …", shares |
//! | `groupings.rs` | "by clinic", "per region", sort keys |
//! | `ranking.rs` | "top 5 …", superlatives, "which etiology has the highest …" |
//! | `values.rs` | values, booleans, attributes, per-visit values |
//! | `terms.rs` | dictionary terms and the entity each modifies |
//! | `time.rs` | the time range, its date column ("more than 10 days since their last assessment": the last visit's date), the trend grain |
//! | `compare.rs` | comparisons ("area over 10"), two values compared, threshold gaps |
//! | `negation.rs` | "not", "no wounds", "never", "regardless of", "not seen in 2 weeks" |
//! | `durations.rs` | days between two dates, "healed within 90 days" |
//! | `visits.rs` | "at the latest assessment", "at any visit", "area at the first assessment" |
//! | `extremes.rs` | an aggregate of each record's extreme: "average of each wound's largest area"; the date of the last or first record: "date of the last assessment"; the record with the earliest or latest date: "which resident has the earliest date of birth" |
//! | `first_latest.rs` | a measurement's first and latest values side by side: "area at first assessment vs latest area", "initial and current area of wound 12" |
//! | `versus.rs` | two values of one record compared: "latest area above the first one", "shrank since the first visit" |
//! | `ids.rs` | a record named by its key ("wound id 100"), the parent of the records listed ("wound 1234's assessments", "pt 42's visits"); "assessment ids" as the records |
//! | `names.rs` | words that look like names the model does not know |
//! | `follow_up.rs` | refinements of the previous question, words that point back |
//! | `instructions.rs` | layout said in the question: "one row per month", "from most to fewest", "include healed ones", "in reverse chronological order", "in date order" |
//! | `intent.rs` | the intent and the metric it needs |
//!
//! What no step used is accounted for by [`super::coverage`].
//!
//! Pure. Only model names and typed literals come out of it, never question text (an
//! identifier typed after its name, "MRN CL0000042", is a typed value).

mod compare;
mod durations;
mod entity;
mod extremes;
mod first_latest;
mod follow_up;
mod groupings;
mod ids;
mod instructions;
mod intent;
mod measures;
mod names;
mod negation;
pub(crate) mod ranking;
mod state;
mod terms;
mod time;
mod values;
mod versus;
mod visits;

use super::reading::{Ctx, Reading};
use state::State;

/// Reads the question: each step gives roles to the mentions the earlier ones left.
pub(crate) fn read(ctx: &Ctx<'_>) -> Reading {
    let mut st = State::new(ctx);
    time::grain_date(ctx, &mut st);
    versus::change_by_amount(ctx, &mut st);
    versus::change_since_first(ctx, &mut st);
    compare::claim_comparison_words(ctx, &mut st);
    ranking::claim_rank_words(ctx, &mut st);
    follow_up::relaxed_filters(ctx, &mut st);
    visits::read_not_at_latest(ctx, &mut st.r, &mut st.used);
    visits::read_visit_hint(ctx, &mut st.r, &mut st.used);
    extremes::which_record_extreme(ctx, &mut st);
    extremes::which_record_by_date(ctx, &mut st);
    extremes::ranking_word_by_measure(ctx, &mut st);
    first_latest::first_and_latest(ctx, &mut st);
    visits::read_history_extreme(ctx, &mut st);
    versus::two_measurements(ctx, &mut st);
    extremes::per_record(ctx, &mut st);
    ids::read_ids(ctx, &mut st);
    visits::nth_visit(ctx, &mut st);
    measures::read_distinct(ctx, &mut st.r, &mut st.used);
    negation::read_regardless(ctx, &mut st.used);
    negation::read_quantifiers(ctx, &mut st);
    durations::days_between_step(ctx, &mut st);
    durations::open_as_duration(ctx, &mut st);
    negation::read_not_seen(ctx, &mut st.r, &mut st.used, &mut st.consumed_time);
    compare::read_gaps(ctx, &mut st.r, &mut st.used);
    measures::read_count_per_parent(ctx, &mut st);
    groupings::groupings(ctx, &mut st);
    measures::measures(ctx, &mut st);
    ranking::rank(ctx, &mut st);
    entity::named(ctx, &mut st);
    measures::metric(ctx, &mut st);
    measures::average_measure_badge(ctx, &mut st);
    negation::read_having_related(ctx, &mut st.r, &st.explicit, &mut st.consumed_time);
    durations::read_healed_within(ctx, &mut st.r);
    names::read_unknown_names(ctx, &mut st.r);
    entity::provisional(ctx, &mut st);
    values::values(ctx, &mut st);
    compare::comparisons(ctx, &mut st);
    compare::dangling_operators(ctx, &mut st);
    measures::counts_of_values(ctx, &mut st);
    entity::fallback(ctx, &mut st);
    follow_up::pronouns(ctx, &mut st);
    follow_up::follow_up(ctx, &mut st);
    terms::anchor_terms(ctx, &mut st);
    ranking::ranking_term(ctx, &mut st);
    time::time_terms(ctx, &mut st);
    time::range(ctx, &mut st);
    time::date_named_for_periods(ctx, &mut st);
    compare::two_values(ctx, &mut st);
    extremes::date_of_extreme(ctx, &mut st);
    extremes::per_each_record(ctx, &mut st);
    instructions::instructions(ctx, &mut st);
    measures::share(ctx, &mut st);
    intent::intent(ctx, &mut st);
    st.r.unused = (0..st.used.len()).filter(|&mi| !st.used[mi]).collect();
    st.r
}
