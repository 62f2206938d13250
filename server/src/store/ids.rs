//! Opaque, unguessable ids for rows that appear in URLs and API bodies.
//!
//! 128 random bits from the operating system, as 32 lowercase hex characters.
//! Knowing one id tells nothing about another (unlike a counter), so an id
//! cannot be guessed; ownership is still checked on every read.

use serde::{Deserialize, Serialize};
use std::fmt;

/// `n` random bytes from the operating system's CSPRNG, hex-encoded.
pub(crate) fn random_hex(n: usize) -> String {
    let mut buf = vec![0u8; n];
    // The OS random source does not fail on supported platforms; if it ever
    // did, continuing with predictable ids or tokens would be worse than stopping.
    getrandom::fill(&mut buf).expect("the operating system's random number source failed");
    hex(&buf)
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0x0f) as usize] as char);
    }
    s
}

macro_rules! opaque_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A fresh random id.
            pub fn random() -> Self {
                $name(random_hex(16))
            }

            /// Wraps text received from a client. Not validated: an id that was
            /// never issued simply matches no row.
            pub fn new(s: impl Into<String>) -> Self {
                $name(s.into())
            }

            /// The id as text (for URLs and binding).
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// True when the text has the shape of an issued id (32 lowercase hex
            /// characters); lets the HTTP layer reject junk without a query.
            pub fn is_well_formed(&self) -> bool {
                self.0.len() == 32 && self.0.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }
    };
}

opaque_id!(
    /// A conversation thread.
    ThreadId
);
opaque_id!(
    /// A clarification round (the `clarification_id` of the API).
    RoundId
);
opaque_id!(
    /// One entry of a user's query history.
    HistoryId
);
opaque_id!(
    /// One of a user's saved questions (F27).
    SavedId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_are_32_hex_characters_and_differ() {
        let a = ThreadId::random();
        let b = ThreadId::random();
        assert!(a.is_well_formed() && b.is_well_formed(), "{a} {b}");
        assert_ne!(a, b);
    }

    #[test]
    fn junk_is_not_well_formed() {
        for junk in ["", "1", "../../etc/passwd", &"g".repeat(32), &"A".repeat(32)] {
            assert!(!RoundId::new(junk).is_well_formed(), "{junk}");
        }
    }

    #[test]
    fn hex_encodes_every_byte_as_two_digits() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }

    #[test]
    fn ids_serialize_as_plain_strings() {
        let id = RoundId::new("abc");
        assert_eq!(serde_json::to_string(&id).unwrap(), r#""abc""#);
    }
}
