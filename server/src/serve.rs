//! Starting and stopping the HTTP server.

use crate::config::Config;
use crate::db::Database;
use crate::db::redact_url;
use crate::error::StartupError;
use crate::state::AppState;
use crate::store::{Role, Store};
use leptos::config::LeptosOptions;
use std::future::Future;

/// Demo accounts (published passwords): created only when `Config::demo` (the
/// embedded default on a loopback address, or `CLARION_DEMO=1`).
pub const DEMO_ACCOUNTS: [(&str, &str, Role, &str); 3] = [
    ("demo", "Dr. Dana Reyes", Role::Clinician, "clarion-demo"),
    ("admin", "Alex Morgan", Role::Admin, "clarion-admin"),
    ("nurse", "Sam Okafor, RN", Role::Clinician, "clarion-nurse"),
];

/// Demo accounts limited to some clinics (issue 16), set when the account is created:
/// the wound nurse sees Lakeview Community Wound Care (2) and Harborview Care Home (3)
/// of the demo data. The other demo accounts see every clinic.
pub const DEMO_SCOPES: [(&str, &[i64]); 1] = [("nurse", &[2, 3])];

/// Leptos options from our typed config (no Cargo.toml metadata needed at run time).
pub fn leptos_options(config: &Config) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(app::OUTPUT_NAME)
        .site_root(config.site_root.clone())
        .site_pkg_dir("pkg")
        .site_addr(config.addr)
        .env(leptos::config::Env::PROD)
        .build()
}

/// Opens and migrates the database and, in demo mode, seeds the demo data and
/// creates the demo accounts (otherwise none: use `server user add`). The
/// embedded default seeds its demo data on any address. Returns the state and
/// whether demo accounts were created now.
pub async fn prepare(config: &Config) -> Result<(AppState, bool), StartupError> {
    let model = load_model()?;
    tracing::info!(
        model = %model.model.name,
        entities = model.entities.len(),
        terms = model.terms.len(),
        "semantic model loaded and validated"
    );
    let db = Database::connect_and_migrate(&config.database_url).await?;
    tracing::info!(database = %redact_url(&config.database_url), backend = ?db.backend(), "database ready");
    if config.embedded || config.demo {
        // The demo data ends on the day the database is created (or on CLARION_TODAY),
        // so "the last 7 days" on a fresh demo has data in it.
        let anchor = config
            .orchestrator
            .today
            .unwrap_or_else(|| chrono::Utc::now().date_naive());
        let seeded = crate::dataset::seed_if_empty(&db, &crate::dataset::GenConfig::demo_ending_on(anchor))
            .await
            .map_err(|e| StartupError::Migration {
                url: redact_url(&config.database_url),
                reason: e.to_string(),
            })?;
        if let Some(report) = seeded {
            tracing::info!(
                elapsed_ms = report.elapsed.as_millis() as u64,
                "demo data: {report}"
            );
        }
    }
    let store = Store::new(db);
    let mut created = false;
    if config.demo {
        for (username, name, role, password) in DEMO_ACCOUNTS {
            let failed = |e: crate::store::StoreError| StartupError::Migration {
                url: redact_url(&config.database_url),
                reason: e.to_string(),
            };
            let (user, new) = store
                .ensure_user(username, name, role, password)
                .await
                .map_err(failed)?;
            if new && let Some((_, ids)) = DEMO_SCOPES.iter().find(|(u, _)| *u == username) {
                let scope = crate::store::ClinicScope::clinics(ids.iter().copied());
                store.set_clinic_scope(user.id, &scope).await.map_err(failed)?;
            }
            created |= new;
        }
    }
    let auth_config = crate::auth::AuthConfig::from_env()?;
    Ok((
        AppState::with_auth_config(leptos_options(config), store, auth_config)
            .with_orchestrator_config(config.orchestrator.clone()),
        created,
    ))
}

/// Loads and validates the semantic model against the clinical schema. A
/// problem stops the start-up with a message naming the file, entry and problem.
pub fn load_model() -> Result<crate::semantic::SemanticModel, StartupError> {
    use crate::semantic::{SchemaInfo, SemanticModel, WOUND_CARE_FILE, WOUND_CARE_TOML};
    SemanticModel::from_toml_str_with_schema(
        WOUND_CARE_TOML,
        WOUND_CARE_FILE,
        Some(&SchemaInfo::wound_care_demo()),
    )
    .map_err(|e| StartupError::Model(e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")))
}

/// Binds, serves until `shutdown` resolves, then drains connections and closes the pool.
pub async fn serve(
    config: &Config,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), StartupError> {
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| StartupError::Bind {
            addr: config.addr.to_string(),
            reason: e.to_string(),
        })?;
    let db = state.store.database().clone();
    // Load the allowed values in the background: the listener is already bound, so
    // readiness does not wait for it; a question asked meanwhile loads what it needs.
    let orchestrator = state.orchestrator.clone();
    tokio::spawn(async move {
        let started = std::time::Instant::now();
        orchestrator.warm_up().await;
        tracing::info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "orchestrator warmed up (allowed values loaded)"
        );
    });
    // The language model (F24): say whether it is on and check, in the background, that
    // its endpoint answers; an unreachable endpoint never stops the start-up.
    match state.orchestrator.llm() {
        None => tracing::info!("language model: off (set CLARION_LLM_URL to use one)"),
        Some(llm) => {
            let endpoint = llm.config().endpoint_display();
            let model = llm.config().model.clone();
            tracing::info!(endpoint = %endpoint, model = %model, key = llm.config().api_key.is_some(), "language model: on");
            let orchestrator = state.orchestrator.clone();
            tokio::spawn(async move {
                if let Some(llm) = orchestrator.llm() {
                    match llm.probe().await {
                        Ok(()) => tracing::info!(endpoint = %endpoint, "language model: endpoint reachable"),
                        Err(why) => tracing::warn!(
                            endpoint = %endpoint,
                            why = %why,
                            "language model: endpoint not reachable now; questions fall back to the engine until it is"
                        ),
                    }
                }
            });
        }
    }
    // Housekeeping of the sign-in state, hourly (every replica may run it: deletes are idempotent).
    // and of the clarification loop (rounds, and threads when a retention is set).
    let (auth, loop_state) = (state.auth.clone(), state.orchestrator.clone());
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(3600));
        loop {
            every.tick().await;
            let now = chrono::Utc::now();
            match auth.housekeeping(now).await {
                Ok((sessions, failures)) => {
                    tracing::info!(sessions, failures, "housekeeping: old sign-in state deleted")
                }
                Err(e) => tracing::warn!(error = %e, "housekeeping failed; retrying in an hour"),
            }
            match loop_state.housekeeping(now).await {
                Ok((rounds, threads)) => {
                    tracing::info!(rounds, threads, "housekeeping: old rounds and threads deleted")
                }
                Err(e) => tracing::warn!(error = %e, "housekeeping of rounds failed; retrying in an hour"),
            }
        }
    });
    let app = crate::http::router(state);
    tracing::info!(addr = %config.addr, "Clarion is listening on http://{}", config.addr);
    // The peer address feeds the per-address sign-in rate limit.
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
    .map_err(|e| StartupError::Bind {
        addr: config.addr.to_string(),
        reason: e.to_string(),
    })?;
    db.close().await;
    tracing::info!("shut down cleanly");
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown signal received; finishing open requests");
}
