//! The Analytics report (F21, F24), rendered on the server only: figures and
//! hand-drawn SVG charts as HTML that the Analytics page shows as it is. Nothing here
//! is compiled into the browser bundle.

use super::analytics::RangeControls;
use crate::components::ui::Card;
use crate::protocol::{
    Analytics, AnalyticsDay, AnalyticsTerm, FeedbackReason, FeedbackSummary, ModelCallsDay, VerifiedUse,
};
use leptos::prelude::*;

/// The report as HTML; `preset`: the "last N days" the page was asked for, if any.
pub fn render(a: Analytics, preset: Option<u32>) -> String {
    let owner = Owner::new();
    owner.with(|| view! { <AnalyticsBody a preset /> }.to_html())
}

/// A duration for people: "850 ms", "4.2 s", "3 min 5 s".
pub fn duration(ms: Option<i64>) -> String {
    match ms {
        None => "—".into(),
        Some(ms) if ms < 1000 => format!("{ms} ms"),
        Some(ms) if ms < 60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        Some(ms) => {
            let s = ms / 1000;
            format!("{} min {} s", s / 60, s % 60)
        }
    }
}

fn percent(rate: Option<f64>) -> String {
    match rate {
        Some(r) => format!("{:.0}%", r * 100.0),
        None => "—".into(),
    }
}

#[component]
fn AnalyticsBody(a: Analytics, preset: Option<u32>) -> impl IntoView {
    let t = a.totals.clone();
    let answers = t.auto_resolved + t.answered_after_round;
    let kpis = [
        (
            "Questions asked",
            t.questions.to_string(),
            format!("{} answered directly, {} clarified", t.auto_resolved, t.clarified),
            "kpi-questions",
        ),
        (
            "Clarification rate",
            percent(t.clarification_rate()),
            "Questions that needed a clarification panel".to_string(),
            "kpi-clarification-rate",
        ),
        (
            "Abandonment",
            percent(t.abandonment_rate()),
            format!(
                "{} of {} finished rounds left unanswered{}",
                t.rounds_abandoned,
                t.rounds_answered + t.rounds_abandoned,
                if t.rounds_open > 0 {
                    format!(" · {} open", t.rounds_open)
                } else {
                    String::new()
                }
            ),
            "kpi-abandonment",
        ),
        (
            "Auto-resolution",
            percent(t.auto_resolution_rate()),
            format!(
                "Answers that needed no clarification round; {} of them by a clinician's remembered or usual definition",
                t.auto_resolved_by_preference
            ),
            "kpi-auto-resolution",
        ),
        (
            "Saved questions",
            percent(a.saved_rate()),
            format!(
                "{} saved, of {} answers",
                a.saved,
                t.auto_resolved + t.answered_after_round
            ),
            "kpi-saved",
        ),
        (
            "Time to answer (median)",
            duration(t.median_ms),
            format!(
                "From the question to the final answer, after any rounds; 90% within {}",
                duration(t.p90_ms)
            ),
            "kpi-time-to-answer",
        ),
        (
            "Accepted without edit",
            percent(t.accept_without_edit_rate()),
            format!(
                "{} of {answers} answers kept as given: no choice or assumption changed afterwards",
                answers - t.answers_revised
            ),
            "kpi-accept-without-edit",
        ),
        (
            "Repeat clarifications",
            percent(t.repeat_clarification_rate()),
            format!(
                "{} of {} rounds asked a clinician about a word they had been asked about in the 30 days before",
                t.repeat_rounds, t.rounds
            ),
            "kpi-repeat-clarification",
        ),
        (
            "Follow-up pills",
            percent(t.pill_coverage()),
            format!(
                "{} of {} answers offered at least two follow-up suggestions",
                t.pill_answers_two_plus, t.pill_answers
            ),
            "kpi-pill-coverage",
        ),
        (
            "Pill click-through",
            percent(t.pill_click_through()),
            format!(
                "{} of {} suggestions shown were clicked",
                t.pills_clicked, t.pills_shown
            ),
            "kpi-pill-click-through",
        ),
    ];
    let period = match preset {
        Some(n) => format!("Last {n} days"),
        None => format!("{} days", a.days.len()),
    };
    let subtitle = format!(
        "How often clinicians are asked to clarify, what they choose, and where Clarion has to guess. {period}: {} to {}, UTC.",
        a.since, a.until
    );
    let csv = format!("/api/v1/admin/analytics.csv?from={}&until={}", a.since, a.until);
    let (from, until) = (a.since.clone(), a.until.clone());
    let empty = t.questions == 0 && t.rounds == 0;
    let days = a.days.clone();
    let days2 = a.days.clone();
    let days3 = a.days.clone();
    let days4 = a.days.clone();
    let days5 = a.days.clone();
    view! {
        <div class="mb-8">
            <h1 class="text-2xl font-semibold tracking-tight text-slate-900">"Analytics"</h1>
            <p class="mt-1 max-w-3xl text-sm text-slate-600" data-testid="analytics-period">{subtitle}</p>
        </div>
        <RangeControls from until preset csv />
        <dl class="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-5">
            {kpis
                .into_iter()
                .map(|(name, value, help, testid)| {
                    view! {
                        <div class="rounded-xl border border-slate-200 bg-white p-5 shadow-sm">
                            <dt class="text-sm font-medium text-slate-600">{name}</dt>
                            <dd class="mt-2 text-3xl font-semibold tabular-nums text-slate-900" data-testid=testid>{value}</dd>
                            <dd class="mt-1 text-xs text-slate-500">{help}</dd>
                        </div>
                    }
                })
                .collect_view()}
        </dl>
        {empty.then(|| view! {
            <p class="mt-6 rounded-lg border border-dashed border-slate-300 bg-white px-4 py-3 text-sm text-slate-600" data-testid="analytics-empty">
                "No questions have been asked in this period yet, so the charts are empty."
            </p>
        })}
        <div class="mt-6 grid gap-6 xl:grid-cols-2">
            <Card title="Clarification rate over time" description="Share of each day's questions that needed a clarification panel (line), with the number of questions asked (bars).">
                <RateChart days />
            </Card>
            <Card title="Rounds per day" description="Clarification rounds answered, left unanswered (cancelled or expired), and still open.">
                <RoundsChart days=days2 />
            </Card>
        </div>
        <div class="mt-6 grid gap-6 xl:grid-cols-2">
            <Card title="Time from question to final answer" description="Per day: the median (bar) and the 90th percentile (tick) of the time from the question to its final answer, after any clarification rounds.">
                <TimeChart days=days3 />
            </Card>
            <Card title="Follow-up suggestions per day" description="Suggestion pills shown under answers (wide bars) and clicked (narrow bars).">
                <PillsChart days=days5 />
            </Card>
        </div>
        <div class="mt-6">
            <Card title="Per-day figures" description="The figures of the charts as a table, one row per day (UTC), with the totals; the CSV download holds the same and every rate.">
                <DayTable days=days4 totals=t.clone() />
            </Card>
        </div>
        <div class="mt-6">
            <Card title="Most frequent ambiguous terms" description="The words Clarion asked about most, and what people chose for each, with each choice's success rate: the share of the answers it led to that got a thumbs-up or a follow-up question and no thumbs-down. The best guess is marked.">
                <TermsChart terms=a.terms.clone() />
            </Card>
        </div>
        <div class="mt-6">
            <Card title="Feedback" description="Thumbs up and down on answers, the reasons given with thumbs down, and whether clarification questions were helpful, in this period (a changed vote counts once, as it stands).">
                <Feedback f=a.feedback.clone() />
            </Card>
        </div>
        <div class="mt-6">
            <Card title="Language model calls" description="Calls to the optional language model (only made for words Clarion's own reader could not read), per day: failures fall back to Clarion's own question. What was sent is never stored.">
                <ModelCalls days=a.model_calls.clone() />
            </Card>
        </div>
        <div class="mt-6">
            <Card title="Verified questions" description="Questions an administrator verified (on the Verified questions page), how many questions each has answered as defined, with no clarification, and the thumbs up and down on those answers.">
                <VerifiedUses list=a.verified.clone() />
            </Card>
        </div>
        <div class="mt-6">
            <Card title="How these figures are counted">
                <Definitions />
            </Card>
        </div>
    }
}

/// What each figure means (the page's own glossary).
#[component]
fn Definitions() -> impl IntoView {
    const ITEMS: [(&str, &str); 11] = [
        (
            "Question",
            "A question answered directly, or one that got a clarification panel (counted once, however many rounds it took). Re-running an answer with a changed choice is not a new question.",
        ),
        (
            "Clarification rate",
            "Questions that got a clarification panel, over questions.",
        ),
        (
            "Abandonment",
            "Rounds cancelled or left until they expired, over rounds answered or abandoned (rounds still open are not counted yet).",
        ),
        (
            "Auto-resolution",
            "Answers that needed no round, over answers; those settled by a clinician's remembered or usual definition are counted apart.",
        ),
        (
            "Time to answer",
            "For an answer that needed no round, the time Clarion took; after rounds, from the question to the answer after the last round, including the time the clinician spent choosing. Median and 90th percentile over the answers of the period.",
        ),
        (
            "Accepted without edit",
            "Answers whose choices and assumptions were not changed afterwards (a change re-runs the question in its thread), over answers.",
        ),
        (
            "Repeat clarifications",
            "Rounds that asked a clinician about a word (the same ambiguity) they had already been asked about in the 30 days before, over rounds.",
        ),
        (
            "Success rate of a choice",
            "Of the answers a choice led to, the share that got a thumbs-up or a follow-up question (what learning counts as success) and are not voted thumbs down.",
        ),
        (
            "Follow-up pills",
            "Answers that offered at least two follow-up suggestions, over answers (answers from before this was recorded are left out).",
        ),
        (
            "Pill click-through",
            "Follow-up suggestions clicked, over suggestions shown (revised answers show theirs too).",
        ),
        (
            "Saved questions",
            "Questions saved in the period, over answers in it.",
        ),
    ];
    view! {
        <dl class="grid gap-x-8 gap-y-3 text-sm md:grid-cols-2" data-testid="analytics-definitions">
            {ITEMS.into_iter().map(|(term, def)| view! {
                <div>
                    <dt class="font-medium text-slate-900">{term}</dt>
                    <dd class="text-slate-600">{def}</dd>
                </div>
            }).collect_view()}
        </dl>
    }
}

#[component]
fn DayTable(days: Vec<AnalyticsDay>, totals: AnalyticsDay) -> impl IntoView {
    const TH: &str = "px-2 py-2 text-right font-medium text-slate-600";
    const TD: &str = "px-2 py-1.5 text-right tabular-nums text-slate-900";
    let row = |label: String, d: &AnalyticsDay, strong: bool| {
        let class = if strong {
            "border-t border-slate-300 font-semibold"
        } else {
            "border-t border-slate-100"
        };
        view! {
            <tr class=class data-testid=if strong { "day-total" } else { "day-row" }>
                <th scope="row" class="px-2 py-1.5 text-left font-normal text-slate-700">{label}</th>
                <td class=TD>{d.questions}</td>
                <td class=TD>{d.clarified}</td>
                <td class=TD>{d.auto_resolved + d.answered_after_round}</td>
                <td class=TD>{duration(d.median_ms)}</td>
                <td class=TD>{d.answers_revised}</td>
                <td class=TD>{d.rounds}</td>
                <td class=TD>{d.rounds_abandoned}</td>
                <td class=TD>{d.repeat_rounds}</td>
                <td class=TD>{d.pills_shown}</td>
                <td class=TD>{d.pills_clicked}</td>
            </tr>
        }
    };
    view! {
        <div class="max-h-96 overflow-auto" tabindex="0" role="region" aria-label="Per-day figures">
            <table class="min-w-full text-sm" data-testid="day-table">
                <caption class="sr-only">"Per-day figures, oldest first, with the totals"</caption>
                <thead class="sticky top-0 bg-white">
                    <tr>
                        <th scope="col" class="px-2 py-2 text-left font-medium text-slate-600">"Day (UTC)"</th>
                        <th scope="col" class=TH>"Questions"</th>
                        <th scope="col" class=TH>"Clarified"</th>
                        <th scope="col" class=TH>"Answers"</th>
                        <th scope="col" class=TH>"Median time"</th>
                        <th scope="col" class=TH>"Revised"</th>
                        <th scope="col" class=TH>"Rounds"</th>
                        <th scope="col" class=TH>"Abandoned"</th>
                        <th scope="col" class=TH>"Repeat rounds"</th>
                        <th scope="col" class=TH>"Pills shown"</th>
                        <th scope="col" class=TH>"Pills clicked"</th>
                    </tr>
                </thead>
                <tbody>
                    {days.iter().map(|d| row(d.date.clone(), d, false)).collect_view()}
                    {row("All days".to_string(), &totals, true)}
                </tbody>
            </table>
        </div>
    }
}

fn reason_label(r: FeedbackReason) -> &'static str {
    match r {
        FeedbackReason::WrongCohort => "Wrong patients or wounds",
        FeedbackReason::WrongNumbers => "Wrong numbers",
        FeedbackReason::TooManyQuestions => "Too many questions",
        FeedbackReason::Other => "Other",
    }
}

#[component]
fn Feedback(f: FeedbackSummary) -> impl IntoView {
    let votes = f.thumbs_up + f.thumbs_down;
    let ratio = (votes > 0).then(|| f.thumbs_up as f64 / votes as f64);
    let helpful_votes = f.helpful_yes + f.helpful_no;
    let helpful = (helpful_votes > 0).then(|| f.helpful_yes as f64 / helpful_votes as f64);
    let figures = [
        ("👍 Thumbs up", f.thumbs_up.to_string(), "feedback-up"),
        ("👎 Thumbs down", f.thumbs_down.to_string(), "feedback-down"),
        ("Share thumbs up", percent(ratio), "feedback-ratio"),
        (
            "Clarification helpful (yes / no)",
            format!("{} / {}", f.helpful_yes, f.helpful_no),
            "feedback-helpful",
        ),
        ("Share helpful", percent(helpful), "feedback-helpful-ratio"),
    ];
    let most = f.reasons.iter().map(|r| r.1).max().unwrap_or(0).max(1);
    view! {
        <div class="flex flex-col gap-5" data-testid="feedback-card">
            <dl class="grid grid-cols-2 gap-4 sm:grid-cols-5">
                {figures
                    .into_iter()
                    .map(|(name, value, testid)| view! {
                        <div>
                            <dt class="text-xs font-medium text-slate-600">{name}</dt>
                            <dd class="mt-1 text-2xl font-semibold tabular-nums text-slate-900" data-testid=testid>{value}</dd>
                        </div>
                    })
                    .collect_view()}
            </dl>
            <div>
                <h3 class="text-sm font-medium text-slate-700">"Reasons given with thumbs down"</h3>
                <ul class="mt-2 flex flex-col gap-1.5" data-testid="feedback-reasons">
                    {f.reasons
                        .into_iter()
                        .map(|(r, n)| {
                            let width = format!("width: {}%", n * 100 / most);
                            view! {
                                <li class="grid grid-cols-[12rem_1fr_3rem] items-center gap-3 text-sm">
                                    <span class="text-slate-700">{reason_label(r)}</span>
                                    <span class="h-3 rounded bg-slate-100" aria-hidden="true">
                                        <span class="block h-3 rounded bg-rose-400" style=width></span>
                                    </span>
                                    <span class="text-right tabular-nums text-slate-900" data-testid="feedback-reason-count">{n}</span>
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
            </div>
        </div>
    }
}

#[component]
fn VerifiedUses(list: Vec<VerifiedUse>) -> impl IntoView {
    if list.is_empty() {
        return view! {
            <p class="text-sm text-slate-600" data-testid="verified-uses-none">
                "No verified questions yet. An administrator verifies an answered question on "
                <a class="font-medium text-teal-700 underline" href="/admin/verified">"Verified questions"</a>
                "; questions that match it are then answered that way."
            </p>
        }
        .into_any();
    }
    view! {
        <div class="overflow-x-auto">
            <table class="min-w-full text-sm" data-testid="verified-uses">
                <thead>
                    <tr>
                        <th scope="col" class="px-3 py-2 text-left font-medium text-slate-600">"Name"</th>
                        <th scope="col" class="px-3 py-2 text-left font-medium text-slate-600">"Verified by"</th>
                        <th scope="col" class="px-3 py-2 text-right font-medium text-slate-600">"Questions answered"</th>
                        <th scope="col" class="px-3 py-2 text-right font-medium text-slate-600">"👍 Up"</th>
                        <th scope="col" class="px-3 py-2 text-right font-medium text-slate-600">"👎 Down"</th>
                    </tr>
                </thead>
                <tbody>
                    {list
                        .into_iter()
                        .map(|v| view! {
                            <tr class="border-t border-slate-100">
                                <th scope="row" class="px-3 py-2 text-left font-normal text-slate-900">{v.name}</th>
                                <td class="px-3 py-2 text-slate-700">{v.verified_by}</td>
                                <td class="px-3 py-2 text-right tabular-nums text-slate-900">{v.uses}</td>
                                <td class="px-3 py-2 text-right tabular-nums text-slate-900" data-testid="verified-up">{v.thumbs_up}</td>
                                <td class="px-3 py-2 text-right tabular-nums text-slate-900" data-testid="verified-down">{v.thumbs_down}</td>
                            </tr>
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

#[component]
fn ModelCalls(days: Vec<ModelCallsDay>) -> impl IntoView {
    if days.is_empty() {
        return view! {
            <p class="text-sm text-slate-600" data-testid="model-calls-none">
                "No calls in this period. The language model is off unless an administrator configures an endpoint (CLARION_LLM_URL); questions Clarion reads itself never call it."
            </p>
        }
        .into_any();
    }
    let total = days.iter().fold(ModelCallsDay::default(), |mut t, d| {
        t.mean_latency_ms =
            (t.mean_latency_ms * t.calls + d.mean_latency_ms * d.calls) / (t.calls + d.calls).max(1);
        t.calls += d.calls;
        t.failures += d.failures;
        t.tokens += d.tokens;
        t
    });
    const TH: &str = "px-3 py-2 text-left font-medium text-slate-600";
    const TD: &str = "px-3 py-2 text-right tabular-nums text-slate-900";
    let row = |label: String, d: &ModelCallsDay, strong: bool| {
        let class = if strong {
            "border-t border-slate-300 font-semibold"
        } else {
            "border-t border-slate-100"
        };
        view! {
            <tr class=class>
                <th scope="row" class="px-3 py-2 text-left font-normal text-slate-700">{label}</th>
                <td class=TD>{d.calls}</td>
                <td class=TD>{d.failures}</td>
                <td class=TD>{d.tokens}</td>
                <td class=TD>{format!("{} ms", d.mean_latency_ms)}</td>
            </tr>
        }
    };
    view! {
        <div class="overflow-x-auto">
            <table class="min-w-full text-sm" data-testid="model-calls">
                <thead>
                    <tr>
                        <th scope="col" class=TH>"Day (UTC)"</th>
                        <th scope="col" class=format!("{TH} text-right")>"Calls"</th>
                        <th scope="col" class=format!("{TH} text-right")>"Failed"</th>
                        <th scope="col" class=format!("{TH} text-right")>"Tokens"</th>
                        <th scope="col" class=format!("{TH} text-right")>"Mean latency"</th>
                    </tr>
                </thead>
                <tbody>
                    {days.iter().map(|d| row(d.date.clone(), d, false)).collect_view()}
                    {row("All days".to_string(), &total, true)}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

// ---- charts: hand-drawn SVG ------------------------------------------------------------

const W: f64 = 640.0;
const H: f64 = 220.0;
const LEFT: f64 = 40.0;
const RIGHT: f64 = 40.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

fn plot_w() -> f64 {
    W - LEFT - RIGHT
}

fn plot_h() -> f64 {
    H - TOP - BOTTOM
}

/// A short day label ("03-01") for the x axis.
fn short_date(iso: &str) -> String {
    iso.get(5..10).unwrap_or(iso).to_string()
}

/// Which day indexes get an x-axis label (about six, always the last).
fn label_days(n: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(6).max(1);
    let mut v: Vec<usize> = (0..n).rev().step_by(step).collect();
    v.reverse();
    v
}

/// A "nice" axis maximum at or above `m` (1, 2, 5 × 10ⁿ).
fn nice_max(m: i64) -> i64 {
    if m <= 4 {
        return 4;
    }
    let mut base = 1;
    loop {
        for k in [1, 2, 5] {
            if k * base >= m {
                return k * base;
            }
        }
        base *= 10;
    }
}

fn f(x: f64) -> String {
    format!("{x:.1}")
}

#[component]
fn XAxis(days: Vec<AnalyticsDay>) -> impl IntoView {
    let n = days.len();
    let slot = plot_w() / n.max(1) as f64;
    label_days(n)
        .into_iter()
        .map(|i| {
            let x = LEFT + slot * (i as f64 + 0.5);
            view! {
                <text x=f(x) y=f(H - 8.0) text-anchor="middle" class="fill-slate-500" font-size="11">
                    {short_date(&days[i].date)}
                </text>
            }
        })
        .collect_view()
}

#[component]
fn RateChart(days: Vec<AnalyticsDay>) -> impl IntoView {
    let n = days.len().max(1);
    let slot = plot_w() / n as f64;
    let vmax = nice_max(days.iter().map(|d| d.questions).max().unwrap_or(0));
    let y_rate = |r: f64| TOP + plot_h() * (1.0 - r);
    let y_count = |c: i64| TOP + plot_h() * (1.0 - c as f64 / vmax as f64);
    // The line is broken on days without questions (no rate to draw).
    let mut path = String::new();
    let mut pen_down = false;
    let mut points = Vec::new();
    for (i, d) in days.iter().enumerate() {
        match d.clarification_rate() {
            Some(r) => {
                let (x, y) = (LEFT + slot * (i as f64 + 0.5), y_rate(r));
                path.push_str(&format!("{}{},{} ", if pen_down { "L" } else { "M" }, f(x), f(y)));
                pen_down = true;
                points.push((x, y, d.date.clone(), r, d.clarified, d.questions));
            }
            None => pen_down = false,
        }
    }
    let summary = {
        let total: i64 = days.iter().map(|d| d.questions).sum();
        let clarified: i64 = days.iter().map(|d| d.clarified).sum();
        format!(
            "Clarification rate per day over {} days: {} of {} questions needed a clarification panel.",
            days.len(),
            clarified,
            total
        )
    };
    let aria = summary.clone();
    view! {
        <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=aria class="h-auto w-full" data-testid="chart-clarification-rate">
            <title>{summary}</title>
            // grid and axes: rate on the left, question count on the right
            {[0.0, 0.5, 1.0].into_iter().map(|r| view! {
                <line x1=f(LEFT) x2=f(W - RIGHT) y1=f(y_rate(r)) y2=f(y_rate(r)) class="stroke-slate-200" stroke-width="1" />
                <text x=f(LEFT - 6.0) y=f(y_rate(r) + 4.0) text-anchor="end" class="fill-slate-500" font-size="11">
                    {format!("{:.0}%", r * 100.0)}
                </text>
                <text x=f(W - RIGHT + 6.0) y=f(y_rate(r) + 4.0) text-anchor="start" class="fill-slate-400" font-size="11">
                    {format!("{:.0}", vmax as f64 * r)}
                </text>
            }).collect_view()}
            {days.iter().enumerate().filter(|(_, d)| d.questions > 0).map(|(i, d)| {
                let x = LEFT + slot * i as f64 + slot * 0.15;
                let y = y_count(d.questions);
                view! {
                    <rect x=f(x) y=f(y) width=f(slot * 0.7) height=f(TOP + plot_h() - y) rx="1.5" class="fill-slate-200">
                        <title>{format!("{}: {} questions", d.date, d.questions)}</title>
                    </rect>
                }
            }).collect_view()}
            <path d=path fill="none" class="stroke-teal-700" stroke-width="2" stroke-linejoin="round" stroke-linecap="round" />
            {points.into_iter().map(|(x, y, date, r, c, q)| view! {
                <circle cx=f(x) cy=f(y) r="3" class="fill-white stroke-teal-700" stroke-width="2">
                    <title>{format!("{date}: {:.0}% ({c} of {q} questions clarified)", r * 100.0)}</title>
                </circle>
            }).collect_view()}
            <XAxis days=days.clone() />
        </svg>
        <ul class="mt-2 flex flex-wrap gap-4 text-xs text-slate-600" aria-hidden="true">
            <li class="flex items-center gap-1.5"><span class="inline-block h-0.5 w-4 bg-teal-700"></span>"Clarification rate (left axis)"</li>
            <li class="flex items-center gap-1.5"><span class="inline-block h-3 w-3 rounded-sm bg-slate-200"></span>"Questions asked (right axis)"</li>
        </ul>
    }
}

#[component]
fn RoundsChart(days: Vec<AnalyticsDay>) -> impl IntoView {
    let n = days.len().max(1);
    let slot = plot_w() / n as f64;
    let vmax = nice_max(days.iter().map(|d| d.rounds).max().unwrap_or(0));
    let y = |c: f64| TOP + plot_h() * (1.0 - c / vmax as f64);
    let total_answered: i64 = days.iter().map(|d| d.rounds_answered).sum();
    let total_abandoned: i64 = days.iter().map(|d| d.rounds_abandoned).sum();
    let total_open: i64 = days.iter().map(|d| d.rounds_open).sum();
    let summary = format!(
        "Clarification rounds per day: {total_answered} answered, {total_abandoned} left unanswered, {total_open} still open."
    );
    let aria = summary.clone();
    view! {
        <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=aria class="h-auto w-full" data-testid="chart-rounds">
            <title>{summary}</title>
            {[0.0, 0.5, 1.0].into_iter().map(|r| view! {
                <line x1=f(LEFT) x2=f(W - RIGHT) y1=f(y(vmax as f64 * r)) y2=f(y(vmax as f64 * r)) class="stroke-slate-200" stroke-width="1" />
                <text x=f(LEFT - 6.0) y=f(y(vmax as f64 * r) + 4.0) text-anchor="end" class="fill-slate-500" font-size="11">
                    {format!("{:.0}", vmax as f64 * r)}
                </text>
            }).collect_view()}
            {days.iter().enumerate().filter(|(_, d)| d.rounds > 0).map(|(i, d)| {
                let x = LEFT + slot * i as f64 + slot * 0.15;
                let w = slot * 0.7;
                let a = d.rounds_answered as f64;
                let b = d.rounds_abandoned as f64;
                let o = d.rounds_open as f64;
                let tip = format!("{}: {} answered, {} unanswered, {} open", d.date, d.rounds_answered, d.rounds_abandoned, d.rounds_open);
                view! {
                    <g>
                        <title>{tip}</title>
                        <rect x=f(x) y=f(y(a)) width=f(w) height=f(y(0.0) - y(a)) class="fill-teal-600" />
                        <rect x=f(x) y=f(y(a + b)) width=f(w) height=f(y(a) - y(a + b)) class="fill-rose-400" />
                        <rect x=f(x) y=f(y(a + b + o)) width=f(w) height=f(y(a + b) - y(a + b + o)) class="fill-amber-300" />
                    </g>
                }
            }).collect_view()}
            <XAxis days=days.clone() />
        </svg>
        <ul class="mt-2 flex flex-wrap gap-4 text-xs text-slate-600" aria-hidden="true">
            <li class="flex items-center gap-1.5"><span class="inline-block h-3 w-3 rounded-sm bg-teal-600"></span>"Answered"</li>
            <li class="flex items-center gap-1.5"><span class="inline-block h-3 w-3 rounded-sm bg-rose-400"></span>"Left unanswered"</li>
            <li class="flex items-center gap-1.5"><span class="inline-block h-3 w-3 rounded-sm bg-amber-300"></span>"Still open"</li>
        </ul>
    }
}

#[component]
fn TimeChart(days: Vec<AnalyticsDay>) -> impl IntoView {
    let n = days.len().max(1);
    let slot = plot_w() / n as f64;
    let top = days
        .iter()
        .filter_map(|d| d.p90_ms.or(d.median_ms))
        .max()
        .unwrap_or(0);
    // the axis in milliseconds, rounded up to a "nice" number (1, 2, 5 × 10ⁿ)
    let vmax = nice_max(top) as f64;
    let y = |ms: i64| TOP + plot_h() * (1.0 - ms as f64 / vmax);
    let answered = days.iter().filter(|d| d.median_ms.is_some()).count();
    let summary = format!(
        "Time from question to final answer per day over {} days ({} days with answers).",
        days.len(),
        answered
    );
    let aria = summary.clone();
    view! {
        <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=aria class="h-auto w-full" data-testid="chart-time-to-answer">
            <title>{summary}</title>
            {[0.0, 0.5, 1.0].into_iter().map(|r| {
                let ms = (vmax * r) as i64;
                view! {
                    <line x1=f(LEFT) x2=f(W - RIGHT) y1=f(y(ms)) y2=f(y(ms)) class="stroke-slate-200" stroke-width="1" />
                    <text x=f(LEFT - 6.0) y=f(y(ms) + 4.0) text-anchor="end" class="fill-slate-500" font-size="11">
                        {axis_duration(ms)}
                    </text>
                }
            }).collect_view()}
            {days.iter().enumerate().filter_map(|(i, d)| d.median_ms.map(|m| (i, d, m))).map(|(i, d, m)| {
                let x = LEFT + slot * i as f64 + slot * 0.2;
                let w = slot * 0.6;
                let tip = format!("{}: median {}, 90% within {}", d.date, duration(Some(m)), duration(d.p90_ms));
                view! {
                    <g>
                        <title>{tip}</title>
                        <rect x=f(x) y=f(y(m)) width=f(w) height=f(y(0) - y(m)) rx="1.5" class="fill-sky-500" />
                        {d.p90_ms.map(|p| view! {
                            <line x1=f(x) x2=f(x + w) y1=f(y(p)) y2=f(y(p)) class="stroke-slate-700" stroke-width="2" />
                        })}
                    </g>
                }
            }).collect_view()}
            <XAxis days=days.clone() />
        </svg>
        <ul class="mt-2 flex flex-wrap gap-4 text-xs text-slate-600" aria-hidden="true">
            <li class="flex items-center gap-1.5"><span class="inline-block h-3 w-3 rounded-sm bg-sky-500"></span>"Median"</li>
            <li class="flex items-center gap-1.5"><span class="inline-block h-0.5 w-4 bg-slate-700"></span>"90th percentile"</li>
        </ul>
    }
}

/// A short axis label for a duration (it must fit left of the plot): "0", "500ms", "2 s", "5 min".
fn axis_duration(ms: i64) -> String {
    match ms {
        0 => "0".into(),
        ms if ms < 1000 => format!("{ms}ms"),
        ms if ms < 60_000 => format!("{} s", (ms as f64 / 1000.0 * 10.0).round() / 10.0),
        ms => format!("{} min", (ms as f64 / 60_000.0 * 10.0).round() / 10.0),
    }
}

#[component]
fn PillsChart(days: Vec<AnalyticsDay>) -> impl IntoView {
    let n = days.len().max(1);
    let slot = plot_w() / n as f64;
    let vmax = nice_max(
        days.iter()
            .map(|d| d.pills_shown.max(d.pills_clicked))
            .max()
            .unwrap_or(0),
    );
    let y = |c: i64| TOP + plot_h() * (1.0 - c as f64 / vmax as f64);
    let shown: i64 = days.iter().map(|d| d.pills_shown).sum();
    let clicked: i64 = days.iter().map(|d| d.pills_clicked).sum();
    let summary = format!(
        "Follow-up suggestions per day over {} days: {shown} shown, {clicked} clicked.",
        days.len()
    );
    let aria = summary.clone();
    view! {
        <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=aria class="h-auto w-full" data-testid="chart-pills">
            <title>{summary}</title>
            {[0.0, 0.5, 1.0].into_iter().map(|r| {
                let c = (vmax as f64 * r) as i64;
                view! {
                    <line x1=f(LEFT) x2=f(W - RIGHT) y1=f(y(c)) y2=f(y(c)) class="stroke-slate-200" stroke-width="1" />
                    <text x=f(LEFT - 6.0) y=f(y(c) + 4.0) text-anchor="end" class="fill-slate-500" font-size="11">{c}</text>
                }
            }).collect_view()}
            {days.iter().enumerate().filter(|(_, d)| d.pills_shown > 0 || d.pills_clicked > 0).map(|(i, d)| {
                let x = LEFT + slot * i as f64 + slot * 0.15;
                let w = slot * 0.7;
                let tip = format!("{}: {} shown, {} clicked", d.date, d.pills_shown, d.pills_clicked);
                view! {
                    <g>
                        <title>{tip}</title>
                        <rect x=f(x) y=f(y(d.pills_shown)) width=f(w) height=f(y(0) - y(d.pills_shown)) rx="1.5" class="fill-teal-100" />
                        <rect x=f(x + w * 0.25) y=f(y(d.pills_clicked)) width=f(w * 0.5) height=f(y(0) - y(d.pills_clicked)) rx="1" class="fill-teal-700" />
                    </g>
                }
            }).collect_view()}
            <XAxis days=days.clone() />
        </svg>
        <ul class="mt-2 flex flex-wrap gap-4 text-xs text-slate-600" aria-hidden="true">
            <li class="flex items-center gap-1.5"><span class="inline-block h-3 w-3 rounded-sm bg-teal-100"></span>"Shown"</li>
            <li class="flex items-center gap-1.5"><span class="inline-block h-3 w-3 rounded-sm bg-teal-700"></span>"Clicked"</li>
        </ul>
    }
}

/// Fill classes for the choices of a term, most chosen first.
const CHOICE_FILLS: [&str; 5] = [
    "fill-teal-600",
    "fill-sky-500",
    "fill-violet-400",
    "fill-amber-400",
    "fill-slate-400",
];
const CHOICE_BG: [&str; 5] = [
    "bg-teal-600",
    "bg-sky-500",
    "bg-violet-400",
    "bg-amber-400",
    "bg-slate-400",
];

#[component]
fn TermsChart(terms: Vec<AnalyticsTerm>) -> impl IntoView {
    if terms.is_empty() {
        return view! {
            <p class="text-sm text-slate-500" data-testid="terms-empty">"No clarification questions were asked in this period."</p>
        }
        .into_any();
    }
    let max_asked = terms.iter().map(|t| t.asked).max().unwrap_or(1).max(1) as f64;
    view! {
        <ol class="divide-y divide-slate-100" data-testid="ambiguous-terms">
            {terms.into_iter().map(|t| {
                let answered: i64 = t.choices.iter().map(|c| c.count).sum();
                let width_pct = t.asked as f64 / max_asked * 100.0;
                let mut x = 0.0;
                let segments = t.choices.iter().enumerate().map(|(i, c)| {
                    let w = if answered > 0 { c.count as f64 / answered as f64 * 100.0 } else { 0.0 };
                    let seg = view! {
                        <rect x=format!("{x:.2}") y="0" width=format!("{w:.2}") height="10" class=CHOICE_FILLS[i.min(4)]>
                            <title>{format!("{}: {}", c.label, c.count)}</title>
                        </rect>
                    };
                    x += w;
                    seg
                }).collect_view();
                let asked_text = match t.asked { 1 => "asked once".to_string(), n => format!("asked {n} times") };
                let applies = (!t.applies_to.is_empty()).then(|| format!(" · {}", t.applies_to));
                view! {
                    <li class="grid gap-3 py-4 md:grid-cols-[12rem_1fr]" data-testid="ambiguous-term">
                        <div>
                            <p class="text-sm font-semibold text-slate-900">"“" {t.phrase.clone()} "”"</p>
                            <p class="text-xs text-slate-500">{asked_text}{applies}</p>
                            <div class="mt-1.5 h-1.5 rounded-full bg-slate-100" aria-hidden="true">
                                <div class="h-1.5 rounded-full bg-slate-400" style=format!("width: {width_pct:.1}%")></div>
                            </div>
                        </div>
                        <div>
                            {if answered > 0 {
                                view! {
                                    <svg viewBox="0 0 100 10" preserveAspectRatio="none" class="h-3 w-full overflow-hidden rounded" aria-hidden="true">
                                        {segments}
                                    </svg>
                                }.into_any()
                            } else {
                                view! { <p class="text-xs text-slate-500">"Not answered yet."</p> }.into_any()
                            }}
                            <ul class="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-700" aria-label=format!("What people chose for “{}”", t.phrase)>
                                {t.choices.iter().enumerate().map(|(i, c)| view! {
                                    <li class="flex items-center gap-1.5">
                                        <span class=format!("inline-block h-2.5 w-2.5 rounded-sm {}", CHOICE_BG[i.min(4)]) aria-hidden="true"></span>
                                        <span>{c.label.clone()}</span>
                                        {c.default.then(|| view! { <span class="rounded bg-slate-100 px-1 text-[10px] font-medium uppercase tracking-wide text-slate-600">"best guess"</span> })}
                                        <span class="tabular-nums text-slate-500">{format!("× {}", c.count)}</span>
                                        {c.success_rate().map(|r| view! {
                                            <span class="tabular-nums text-emerald-800" data-testid="choice-success">
                                                {format!("· {:.0}% successful ({} of {})", r * 100.0, c.successes, c.answers)}
                                            </span>
                                        })}
                                    </li>
                                }).collect_view()}
                            </ul>
                        </div>
                    </li>
                }
            }).collect_view()}
        </ol>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_the_unit_that_fits() {
        assert_eq!(duration(None), "—");
        assert_eq!(duration(Some(850)), "850 ms");
        assert_eq!(duration(Some(4_200)), "4.2 s");
        assert_eq!(duration(Some(185_000)), "3 min 5 s");
        assert_eq!(axis_duration(0), "0");
        assert_eq!(axis_duration(500), "500ms");
        assert_eq!(axis_duration(2_000), "2 s");
        assert_eq!(axis_duration(300_000), "5 min");
    }

    #[test]
    fn axis_maxima_are_round_numbers_at_or_above_the_data() {
        assert_eq!(nice_max(0), 4);
        assert_eq!(nice_max(7), 10);
        assert_eq!(nice_max(11), 20);
        assert_eq!(nice_max(120), 200);
    }

    #[test]
    fn about_six_day_labels_always_ending_on_the_last_day() {
        let l = label_days(30);
        assert_eq!(*l.last().unwrap(), 29);
        assert!(l.len() <= 7, "{l:?}");
        assert_eq!(label_days(1), vec![0]);
        assert!(label_days(0).is_empty());
    }
}
