//! Escaping text written into HTML by hand (the chart's markup, the server's plain pages).

/// Appends `s` as element text, or as an attribute's value in double or single quotes:
/// `&`, `<`, `>`, `"` and `'` escaped.
pub fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// `s` escaped, as a new string.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_character_that_ends_text_or_an_attribute_is_escaped() {
        assert_eq!(
            super::escape(r#"<a href="x">Tom & Jerry's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
    }
}
