//! Feedback forms (issue 15, point 3) as plain HTML: thumbs up / down on an answer and
//! "Was this question helpful?" on a clarification round. They are `<form
//! method="post" action="/feedback">` with no island logic (the server answers and
//! shows the confirmation), kept as two text templates so the browser bundle carries
//! only these strings. An answer's vote comes back to its thread with a confirmation;
//! a round's vote is answered inside the small frame next to its buttons, so the open
//! panel stays as it is.

const B: &str = "rounded-lg border border-slate-300 bg-white px-2.5 py-1 text-sm font-medium text-slate-800 hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-teal-600";

/// `{h}`: the answer's history id; `{b}`: the button classes.
const ANSWER: &str = r#"<div class="flex flex-nowrap items-start gap-2 text-sm" data-testid="answer-feedback"><span class="py-1 text-slate-600">Was this answer right?</span><form method="post" action="/feedback" class="shrink-0"><input type="hidden" name="history_id" value="{h}"><button name="rating" value="up" class="{b}" data-testid="thumbs-up">👍 Yes</button></form><details class="min-w-0"><summary class="{b} cursor-pointer list-none" data-testid="thumbs-down">👎 No</summary><form method="post" action="/feedback" class="mt-2 flex flex-col gap-2"><input type="hidden" name="history_id" value="{h}"><input type="hidden" name="rating" value="down"><label class="flex flex-col gap-1 text-slate-700">What was wrong? (optional)<select name="reason" class="rounded-lg border border-slate-300 bg-white px-2 py-1"><option value="">Choose a reason</option><option value="wrong_cohort">Wrong patients or wounds</option><option value="wrong_numbers">Wrong numbers</option><option value="too_many_questions">Too many questions</option><option value="other">Other</option></select></label><label class="flex flex-col gap-1 text-slate-700">Comment (optional)<textarea name="comment" maxlength="1000" rows="2" class="rounded-lg border border-slate-300 px-2 py-1"></textarea></label><button class="{b} self-start" data-testid="send-thumbs-down">Send 👎</button></form></details></div>"#;

/// `{c}`: the round's id.
const ROUND: &str = r#"<form method="post" action="/feedback" target="hf-{c}" class="flex flex-wrap items-center gap-2 border-t border-slate-100 px-5 py-3 text-sm" data-testid="round-feedback"><input type="hidden" name="clarification_id" value="{c}"><span class="text-slate-600">Was this question helpful?</span><button name="helpful" value="yes" class="{b}">Yes</button><button name="helpful" value="no" class="{b}">No</button><iframe name="hf-{c}" title="Feedback confirmation" class="h-7 w-64 border-0"></iframe></form>"#;

/// Only an id's letters and digits go into the markup.
fn id(s: &str) -> String {
    s.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The thumbs up / down forms of one answer.
pub fn answer_html(history_id: &str) -> String {
    ANSWER.replace("{h}", &id(history_id)).replace("{b}", B)
}

/// The "Was this question helpful?" form of one round.
pub fn round_html(clarification_id: &str) -> String {
    ROUND.replace("{c}", &id(clarification_id)).replace("{b}", B)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_carry_only_the_ids_letters_and_digits() {
        let a = answer_html("ab12\"><script>");
        assert!(a.contains(r#"value="ab12script""#), "{a}");
        assert!(!a.contains("{h}") && !a.contains("{b}"));
        assert_eq!(a.matches("action=\"/feedback\"").count(), 2);
        let r = round_html("ff00");
        assert!(
            r.contains(r#"target="hf-ff00""#) && r.contains(r#"name="hf-ff00""#),
            "{r}"
        );
    }
}
