//! The vocabulary the browser, the server functions and the JSON API share.
//!
//! Defined once, here, with serde. No server-only dependency may appear in this
//! module: it is compiled into the wasm bundle. Avoid `usize` (wasm32 is 32-bit).

use serde::{Deserialize, Serialize};

/// How eagerly Clarion asks instead of assuming (moves the confidence-gate thresholds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sensitivity {
    /// Ask only when a guess would very likely be wrong.
    Fewer,
    /// The default thresholds (0.6 / 0.85).
    #[default]
    Balanced,
    /// Ask whenever any piece is less than certain.
    More,
}

impl Sensitivity {
    /// Every variant, in the order the UI lists them.
    pub const ALL: [Sensitivity; 3] = [Sensitivity::Fewer, Sensitivity::Balanced, Sensitivity::More];

    /// Stable machine name (stored in the database, used in forms and the API).
    pub fn as_str(self) -> &'static str {
        match self {
            Sensitivity::Fewer => "fewer",
            Sensitivity::Balanced => "balanced",
            Sensitivity::More => "more",
        }
    }

    /// Human label for the settings page.
    pub fn label(self) -> &'static str {
        match self {
            Sensitivity::Fewer => "Fewer questions",
            Sensitivity::Balanced => "Balanced",
            Sensitivity::More => "More questions",
        }
    }

    /// One line on what the choice means.
    pub fn help(self) -> &'static str {
        match self {
            Sensitivity::Fewer => "Assume more; ask only when a guess is likely wrong.",
            Sensitivity::Balanced => "Ask when a piece of the question is unclear.",
            Sensitivity::More => "Ask whenever any part is less than certain.",
        }
    }

    /// Parses the machine name; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// A clinician's preferences for how Clarion treats ambiguous questions (F13).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Never show a clarification panel; answer with assumption badges instead.
    pub skip_clarifications: bool,
    /// How readily to ask.
    pub sensitivity: Sensitivity,
}

/// What the page header needs to know about who is signed in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserSummary {
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitivity_round_trips_through_its_machine_name() {
        for s in Sensitivity::ALL {
            assert_eq!(Sensitivity::parse(s.as_str()), Some(s));
        }
        assert_eq!(Sensitivity::parse("'; DROP TABLE settings; --"), None);
        assert_eq!(Sensitivity::parse(""), None);
    }

    #[test]
    fn settings_serialize_with_snake_case_sensitivity() {
        let s = Settings {
            skip_clarifications: true,
            sensitivity: Sensitivity::More,
        };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"skip_clarifications":true,"sensitivity":"more"}"#);
    }
}
