//! How a timestamp is stored: the one dialect difference in the store.
//!
//! PostgreSQL has `TIMESTAMPTZ`. SQLite has no time type, so timestamps are
//! `TEXT` there, and expiry checks (`expires_at > $3`) compare text. That is only
//! correct if every stored value has the same fixed-width UTC form, so [`Ts`]
//! writes `2025-03-01T09:30:00.123456Z` (always six fractional digits, always
//! `Z`) instead of relying on sqlx's variable-width default. Times are truncated
//! to microseconds on both backends so a value reads back exactly as written.

use chrono::{DateTime, SubsecRound, Utc};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueRef};
use sqlx::sqlite::{SqliteArgumentValue, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Postgres, Sqlite, Type};
use std::borrow::Cow;

/// A UTC timestamp as stored by Clarion (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Ts(pub DateTime<Utc>);

impl Ts {
    /// Truncates to what both backends can hold (microseconds).
    pub(crate) fn of(t: DateTime<Utc>) -> Ts {
        Ts(t.trunc_subsecs(6))
    }

    fn sqlite_text(&self) -> String {
        self.0
            .trunc_subsecs(6)
            .format("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string()
    }
}

impl Type<Sqlite> for Ts {
    fn type_info() -> SqliteTypeInfo {
        <String as Type<Sqlite>>::type_info()
    }

    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <DateTime<Utc> as Type<Sqlite>>::compatible(ty)
    }
}

impl<'q> Encode<'q, Sqlite> for Ts {
    fn encode_by_ref(&self, buf: &mut Vec<SqliteArgumentValue<'q>>) -> Result<IsNull, BoxDynError> {
        buf.push(SqliteArgumentValue::Text(Cow::Owned(self.sqlite_text())));
        Ok(IsNull::No)
    }
}

impl<'r> Decode<'r, Sqlite> for Ts {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Ts(<DateTime<Utc> as Decode<'r, Sqlite>>::decode(value)?))
    }
}

impl Type<Postgres> for Ts {
    fn type_info() -> PgTypeInfo {
        <DateTime<Utc> as Type<Postgres>>::type_info()
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        <DateTime<Utc> as Type<Postgres>>::compatible(ty)
    }
}

impl Encode<'_, Postgres> for Ts {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <DateTime<Utc> as Encode<'_, Postgres>>::encode_by_ref(&self.0.trunc_subsecs(6), buf)
    }
}

impl<'r> Decode<'r, Postgres> for Ts {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Ts(<DateTime<Utc> as Decode<'r, Postgres>>::decode(value)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn sqlite_text_is_fixed_width_so_text_order_is_time_order() {
        let whole = Ts::of(Utc.with_ymd_and_hms(2025, 3, 1, 9, 30, 0).unwrap());
        let later = Ts::of(whole.0 + chrono::Duration::microseconds(1));
        assert_eq!(whole.sqlite_text(), "2025-03-01T09:30:00.000000Z");
        assert_eq!(later.sqlite_text(), "2025-03-01T09:30:00.000001Z");
        assert!(whole.sqlite_text() < later.sqlite_text());
        assert_eq!(whole.sqlite_text().len(), later.sqlite_text().len());
    }

    #[test]
    fn nanoseconds_are_truncated_to_microseconds() {
        let t = Utc.timestamp_opt(1_700_000_000, 123_456_789).unwrap();
        assert_eq!(Ts::of(t).0.timestamp_subsec_nanos(), 123_456_000);
    }
}
