//! Deterministic synthetic wound-care data (clinics, clinicians, patients, wounds, assessments).

/// CLI glue for `server seed`: fills the clinical tables of `database_url`.
/// Returns a summary (row counts, duration) for the terminal.
pub async fn cli_seed(_database_url: &str, _scale: Option<u32>, _seed: u64) -> anyhow::Result<String> {
    anyhow::bail!("seeding is not implemented yet")
}
