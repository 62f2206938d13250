//! CLI glue for `server eval` (anyhow lives here, not in the evaluation itself).

use super::{EvalOptions, run};

/// Runs the evaluation, prints the report (text or JSON) to standard output, and fails
/// when any part is below a CI threshold — so the exit status is the CI gate.
pub async fn cli_eval(options: &EvalOptions, json: bool, verbose: bool) -> anyhow::Result<Option<String>> {
    let report = run(options).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text(verbose));
    }
    if report.passes() {
        Ok((!json).then(|| "All evaluation thresholds met.".to_owned()))
    } else {
        anyhow::bail!(
            "evaluation below its thresholds:\n  {}",
            report.failures().join("\n  ")
        )
    }
}
