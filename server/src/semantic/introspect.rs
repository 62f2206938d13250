//! `server introspect`: drafts a starting semantic model from any SQLite or PostgreSQL schema.

/// CLI glue: introspects `database_url` and writes the model to `out` (or stdout).
/// Returns a one-line summary for the terminal.
pub async fn cli_introspect(_database_url: &str, _out: Option<&std::path::Path>) -> anyhow::Result<String> {
    anyhow::bail!("introspection is not implemented yet")
}
