//! Feedback forms (issue 15, point 3) as plain HTML: thumbs up / down on an answer and
//! "Was this question helpful?" on a clarification round. They are `<form
//! method="post" action="/feedback">` with no island logic (the server answers and
//! shows the confirmation), kept as two short text templates so the browser bundle
//! carries little more than these strings. An answer's vote comes back to its thread
//! with a confirmation (a thumbs down also with the optional reason form, rendered on
//! the server: `pages::ask::FeedbackBanner`); a round's vote is answered inside the
//! small frame next to its buttons, so the open panel stays as it is.

use leptos::prelude::*;

/// `@`: the answer's history id. "👎 No" comes back to the thread, which asks (in
/// server-rendered markup, outside the island) for an optional reason and comment.
/// The `fb…` classes are in `style/main.css`; unquoted attributes are plain HTML and
/// keep the bundle small.
const ANSWER: &str = r#"<form method=post action=/feedback class=fb><input type=hidden name=history_id value=@><span class=fb-t>Was this answer right?</span><button name=rating value=up class=fb-b>👍 Yes</button><button name=rating value=down class=fb-b>👎 No</button></form>"#;

/// `@`: the round's id. The vote is answered inside the frame.
const ROUND: &str = r#"<form method=post action=/feedback target=hf@ class=fb-r><input type=hidden name=clarification_id value=@><span class=fb-t>Was this question helpful?</span><button name=helpful value=yes class=fb-b>Yes</button><button name=helpful value=no class=fb-b>No</button><iframe name=hf@ title="Feedback confirmation" class=fb-x></iframe></form>"#;

/// The thumbs up / down form of one answer.
pub fn answer_view(history_id: &str) -> AnyView {
    form(ANSWER, history_id)
}

/// The "Was this question helpful?" form of one round.
pub fn round_view(clarification_id: &str) -> AnyView {
    form(ROUND, clarification_id)
}

/// The form with its id (one of the server's hex ids) filled in, in one `<div>`: a
/// single view type shared by every place a form appears (each new view type costs the
/// bundle its own code).
fn form(template: &str, id: &str) -> AnyView {
    let html = template.replace('@', id);
    view! { <div inner_html=html></div> }.into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_templates_hold_one_form_each_with_every_field() {
        for (t, fields) in [
            (ANSWER, &["history_id", "rating"][..]),
            (ROUND, &["clarification_id", "helpful"][..]),
        ] {
            assert_eq!(t.matches("<form method=post action=/feedback").count(), 1, "{t}");
            for f in fields {
                assert!(t.contains(&format!("name={f} ")), "{f} in {t}");
            }
            assert!(t.contains("value=@"));
        }
        assert!(ROUND.contains("target=hf@") && ROUND.contains("name=hf@"));
    }
}
