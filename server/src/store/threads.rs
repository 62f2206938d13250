//! Conversation threads and their messages. A follow-up question ("only the
//! diabetic ones") is read against the thread it belongs to.

use super::ids::ThreadId;
use super::time::Ts;
use super::{Store, StoreError, StoreTx};
use chrono::{DateTime, Utc};

/// A conversation: one or more questions that refine each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    pub id: ThreadId,
    pub user_id: i64,
    /// Usually the first question, shortened by the caller.
    pub title: String,
    pub created_at: DateTime<Utc>,
    /// When the last message was added.
    pub updated_at: DateTime<Utc>,
}

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageRole {
    /// The clinician (a question or an answer to a clarification).
    User,
    /// Clarion (an answer or a clarification round).
    Assistant,
}

impl MessageRole {
    fn as_str(self) -> &'static str {
        match self {
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "user" => Ok(MessageRole::User),
            "assistant" => Ok(MessageRole::Assistant),
            other => Err(StoreError::Corrupt(format!("message role {other:?}"))),
        }
    }
}

/// A message to append to a thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewMessage<'a> {
    pub role: MessageRole,
    /// What is shown: the question, or the one-sentence restatement of an answer.
    pub body: &'a str,
    /// Structured data the orchestrator needs later (e.g. the answer's final
    /// plan, for follow-ups and pronouns), as JSON text.
    pub payload_json: Option<&'a str>,
    /// A question sent by clicking a follow-up suggestion pill (Analytics' click-through).
    pub from_suggestion: bool,
}

/// A stored message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub id: i64,
    pub thread_id: ThreadId,
    pub role: MessageRole,
    pub body: String,
    pub payload_json: Option<String>,
    pub created_at: DateTime<Utc>,
}

type ThreadRow = (String, i64, String, Ts, Ts);

fn thread_from_row((id, user_id, title, created, updated): ThreadRow) -> Thread {
    Thread {
        id: ThreadId::new(id),
        user_id,
        title,
        created_at: created.0,
        updated_at: updated.0,
    }
}

type MessageRow = (i64, String, String, String, Option<String>, Ts);

fn message_from_row(
    (id, thread_id, role, body, payload_json, created): MessageRow,
) -> Result<Message, StoreError> {
    Ok(Message {
        id,
        thread_id: ThreadId::new(thread_id),
        role: MessageRole::parse(&role)?,
        body,
        payload_json,
        created_at: created.0,
    })
}

impl Store {
    /// Starts a thread for `user_id`.
    pub async fn create_thread(
        &self,
        user_id: i64,
        title: &str,
        now: DateTime<Utc>,
    ) -> Result<Thread, StoreError> {
        let mut tx = self.begin().await?;
        let thread = tx.create_thread(user_id, &ThreadId::random(), title, now).await?;
        tx.commit().await?;
        Ok(thread)
    }

    /// One of the user's threads; `NotFound` if missing or someone else's.
    pub async fn thread(&self, user_id: i64, id: &ThreadId) -> Result<Thread, StoreError> {
        let sql =
            "SELECT id, user_id, title, created_at, updated_at FROM threads WHERE id = $1 AND user_id = $2";
        let row: Option<ThreadRow> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(id.as_str())
            .bind(user_id)
            .fetch_optional(p)
            .await)?;
        row.map(thread_from_row).ok_or(StoreError::NotFound)
    }

    /// The user's most recently active threads, newest first.
    pub async fn threads(&self, user_id: i64, limit: i64) -> Result<Vec<Thread>, StoreError> {
        let sql = "SELECT id, user_id, title, created_at, updated_at FROM threads WHERE user_id = $1 \
                   ORDER BY updated_at DESC, id LIMIT $2";
        let rows: Vec<ThreadRow> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .bind(limit)
            .fetch_all(p)
            .await)?;
        Ok(rows.into_iter().map(thread_from_row).collect())
    }

    /// Deletes one of the user's threads with its messages, rounds and answers.
    pub async fn delete_thread(&self, user_id: i64, id: &ThreadId) -> Result<(), StoreError> {
        let sql = "DELETE FROM threads WHERE id = $1 AND user_id = $2";
        let done = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(id.as_str())
            .bind(user_id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Deletes every user's threads unused since `before`, with their messages
    /// and rounds (retention; housekeeping). History entries stay, without a thread.
    pub async fn purge_threads(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let sql = "DELETE FROM threads WHERE updated_at <= $1";
        Ok(on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(Ts::of(before))
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }

    /// Appends a message to one of the user's threads and marks the thread
    /// active; `NotFound` if the thread is missing or someone else's.
    pub async fn append_message(
        &self,
        user_id: i64,
        thread_id: &ThreadId,
        message: NewMessage<'_>,
        now: DateTime<Utc>,
    ) -> Result<Message, StoreError> {
        let mut tx = self.begin().await?;
        let m = tx.append_message(user_id, thread_id, message, now).await?;
        tx.commit().await?;
        Ok(m)
    }

    /// Every message of one of the user's threads, oldest first; `NotFound` if
    /// the thread is missing or someone else's.
    pub async fn messages(&self, user_id: i64, thread_id: &ThreadId) -> Result<Vec<Message>, StoreError> {
        self.thread(user_id, thread_id).await?;
        let sql = "SELECT m.id, m.thread_id, m.role, m.body, m.payload_json, m.created_at \
                   FROM messages m JOIN threads t ON t.id = m.thread_id \
                   WHERE m.thread_id = $1 AND t.user_id = $2 ORDER BY m.id";
        let rows: Vec<MessageRow> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(thread_id.as_str())
            .bind(user_id)
            .fetch_all(p)
            .await)?;
        rows.into_iter().map(message_from_row).collect()
    }
}

impl StoreTx {
    /// [`Store::create_thread`] with the id chosen by the caller (so later writes
    /// of the same transaction can name the thread).
    pub async fn create_thread(
        &mut self,
        user_id: i64,
        id: &ThreadId,
        title: &str,
        now: DateTime<Utc>,
    ) -> Result<Thread, StoreError> {
        let sql = "INSERT INTO threads (id, user_id, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) \
                   RETURNING id, user_id, title, created_at, updated_at";
        let row: ThreadRow = on_tx!(self, |c| sqlx::query_as(sql)
            .bind(id.as_str())
            .bind(user_id)
            .bind(title)
            .bind(Ts::of(now))
            .fetch_one(&mut *c)
            .await)?;
        Ok(thread_from_row(row))
    }

    /// [`Store::append_message`] in this transaction.
    pub async fn append_message(
        &mut self,
        user_id: i64,
        thread_id: &ThreadId,
        message: NewMessage<'_>,
        now: DateTime<Utc>,
    ) -> Result<Message, StoreError> {
        // The INSERT … SELECT only produces a row when the thread is the user's,
        // so ownership and insertion are one statement.
        let insert = "INSERT INTO messages (thread_id, role, body, payload_json, created_at, from_suggestion) \
                      SELECT t.id, $3, $4, $5, $6, $7 FROM threads t WHERE t.id = $1 AND t.user_id = $2 \
                      RETURNING id, thread_id, role, body, payload_json, created_at";
        let touch = "UPDATE threads SET updated_at = $3 WHERE id = $1 AND user_id = $2";
        let row: Option<MessageRow> = on_tx!(self, |c| {
            let row: Option<MessageRow> = sqlx::query_as(insert)
                .bind(thread_id.as_str())
                .bind(user_id)
                .bind(message.role.as_str())
                .bind(message.body)
                .bind(message.payload_json)
                .bind(Ts::of(now))
                .bind(message.from_suggestion)
                .fetch_optional(&mut *c)
                .await?;
            if row.is_some() {
                sqlx::query(touch)
                    .bind(thread_id.as_str())
                    .bind(user_id)
                    .bind(Ts::of(now))
                    .execute(&mut *c)
                    .await?;
            }
            Ok::<_, sqlx::Error>(row)
        })?;
        message_from_row(row.ok_or(StoreError::NotFound)?)
    }
}
