//! Which visit a per-visit value is about: "at the latest assessment", "at any visit".

use crate::engine::plan_ops::latest_of;
use crate::engine::reading::{Ctx, Reading};

use super::state::qualified;

/// "at the latest assessment" / "at the last visit" (latest) or "at any visit" (any).
pub(super) fn read_visit_hint(ctx: &Ctx<'_>, r: &mut Reading, used: &mut [bool]) {
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
        let visit_word = |i: usize| {
            matches!(
                ctx.w(i),
                "assessment" | "visit" | "review" | "measurement" | "reading" | "assessments" | "visits"
            )
        };
        // "had an assessment showing …", "at least one assessment with …", "one or more
        // visits recording …": a value of some visit, not of the latest one
        let showing = |i: usize| {
            matches!(
                ctx.w(i),
                "showing"
                    | "with"
                    | "recording"
                    | "that"
                    | "where"
                    | "which"
                    | "documenting"
                    | "noting"
                    | "of"
                    | "reporting"
                    | "having"
                    | "flagging"
                    | "in"
                    | "during"
                    | "between"
                    | "from"
                    | "since"
            )
        };
        let latest = match (ctx.w(j), ctx.w(j + 1)) {
            ("last" | "latest" | "newest" | "current", _) => Some((true, j + 1)),
            ("most", "recent") => Some((true, j + 2)),
            ("any" | "every" | "some", _) if j > k => Some((false, j + 1)),
            ("a" | "an" | "one" | "some" | "any", _) if visit_word(j + 1) && showing(j + 2) => {
                Some((false, j + 1))
            }
            ("at", "least") if ctx.w(j + 2) == "one" && visit_word(j + 3) => Some((false, j + 3)),
            ("one", "or") if ctx.w(j + 2) == "more" && visit_word(j + 3) => Some((false, j + 3)),
            _ => None,
        };
        let Some((hint, at)) = latest else { continue };
        if !visit_word(at) {
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
    // "the largest area ever recorded", "highest pain of all time", "across all their
    // assessments": a measurement over the whole history, every visit counts
    let history = (0..ctx.tokens.len()).any(|k| {
        matches!(ctx.w(k), "ever" | "all-time")
            || ctx.w(k) == "all" && ctx.w(k + 1) == "time"
            || matches!(ctx.w(k), "across" | "over" | "among")
                && ctx.w(k + 1) == "all"
                && (k + 2..k + 4).any(|i| matches!(ctx.w(i), "assessments" | "visits" | "measurements"))
    });
    if history {
        r.visit_hint = Some(false);
    }
}
