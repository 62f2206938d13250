//! Clinic-scoped access through the JSON API (issue 16), on SQLite and PostgreSQL.
//!
//! Three clinicians ask the same questions over the seeded demo data (3 clinics): alice
//! may see clinic 1, bob clinics 2 and 3, carol every clinic. The two scopes split the
//! clinics, so for every count alice's and bob's figures add up to carol's; every row a
//! list shows is checked against the clinical tables; every group of a by-clinic question
//! is one of the asker's clinics; option counts of a clarification round, follow-ups,
//! revisions, re-runs and replays are limited the same way; and every statement run
//! for a scoped user is audited with its scope. A change of scope applies to the next
//! question.

mod common;

use axum::http::{Method, StatusCode};
use chrono::Utc;
use common::api::{Api, test_config};
use serde_json::{Value, json};
use server::dataset::{self, GenConfig, OnExisting};
use server::store::{ClinicScope, Role};
use std::collections::{BTreeMap, BTreeSet};

/// The people asking: (token, scope).
struct People {
    alice: String,
    bob: String,
    carol: String,
    alice_id: i64,
    bob_id: i64,
}

async fn people(api: &Api) -> People {
    let store = &api.state.store;
    let bob = store.user_by_username("bob").await.unwrap().unwrap();
    store
        .set_clinic_scope(api.alice_id, &ClinicScope::clinics([1]))
        .await
        .unwrap();
    store
        .set_clinic_scope(bob.id, &ClinicScope::clinics([2, 3]))
        .await
        .unwrap();
    let (carol, _) = store
        .ensure_user("carol", "Carol", Role::Clinician, "carol-password-1")
        .await
        .unwrap();
    let (_, carol_token) = api
        .state
        .auth
        .create_api_token(carol.id, "tests", Utc::now(), None)
        .await
        .unwrap();
    People {
        alice: api.alice.clone(),
        bob: api.bob.clone(),
        carol: carol_token,
        alice_id: api.alice_id,
        bob_id: bob.id,
    }
}

async fn ask(api: &Api, token: &str, question: &str, thread: Option<&str>) -> Value {
    let mut body = json!({"question": question, "interactive": false});
    if let Some(t) = thread {
        body["thread_id"] = json!(t);
    }
    let r = api.call(token, Method::POST, "/api/v1/query", Some(body)).await;
    assert_eq!(r.status, StatusCode::OK, "{question}: {}", r.body);
    r.body
}

/// The single figure of a one-row, one-figure answer.
fn figure(a: &Value) -> f64 {
    let rows = a["table"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{}: {}", a["question"], a["table"]);
    rows[0]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_f64()
        .unwrap_or(0.0)
}

/// Rows of an answer as (first cell as text → last cell).
fn groups(a: &Value) -> BTreeMap<String, f64> {
    a["table"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_array().unwrap();
            let k = match &r[0] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k, r.last().unwrap().as_f64().unwrap_or(0.0))
        })
        .collect()
}

/// The ids in an answer's first column.
fn ids(a: &Value) -> Vec<i64> {
    a["table"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_i64().unwrap_or_else(|| panic!("not an id: {r}")))
        .collect()
}

/// The clinic of each row of `table`, read from the clinical tables directly.
async fn clinic_of(api: &Api, table: &str, id: i64) -> i64 {
    let sql = match table {
        "wounds" => "SELECT clinic_id FROM wounds WHERE id = $1",
        "patients" => "SELECT clinic_id FROM patients WHERE id = $1",
        "clinics" => "SELECT id FROM clinics WHERE id = $1",
        "clinicians" => "SELECT clinic_id FROM clinicians WHERE id = $1",
        "assessments" => {
            "SELECT w.clinic_id FROM assessments a JOIN wounds w ON w.id = a.wound_id WHERE a.id = $1"
        }
        other => panic!("{other}"),
    };
    let row: (i64,) = match &api.state.store.database() {
        server::db::Database::Sqlite(p) => sqlx::query_as(sql).bind(id).fetch_one(p).await.unwrap(),
        server::db::Database::Postgres(p) => sqlx::query_as(sql).bind(id).fetch_one(p).await.unwrap(),
    };
    row.0
}

async fn clinic_names(api: &Api) -> BTreeMap<i64, String> {
    api.state
        .orchestrator
        .clinics(&ClinicScope::All)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

/// Counts: alice's and bob's add up to carol's.
const COUNTS: &[&str] = &[
    "how many open wounds",
    "number of patients with diabetes",
    "how many DFUs",
    "count of healed wounds",
    "how many wounds",
    "how many patients",
    "how many clinics are there",
    "how many assessments",
    "how many venous leg ulcers",
    "number of assessments in the last 30 days",
    "how many pressure injuries",
    "how many clinicians",
    "how many venous leg ulcers are open",
    "how many patients are smokers",
    "number of wounds healed in the last 90 days",
];

/// Lists: (question, the table of the ids in the first column).
const LISTS: &[(&str, &str)] = &[
    ("list open VLUs", "wounds"),
    ("list the clinics", "clinics"),
    ("list patients with diabetes", "patients"),
    ("list infected wounds", "wounds"),
    ("list the clinicians", "clinicians"),
];

/// Group-bys by clinic: every group is one of the asker's clinics.
const BY_CLINIC: &[&str] = &[
    "number of wounds by clinic",
    "open wounds by clinic",
    "patients by clinic",
];

/// Group-bys by something else: each group's figures add up.
const BY_OTHER: &[&str] = &[
    "wounds by etiology",
    "number of assessments by clinician discipline",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_scoped_clinicians_asking_the_same_questions_never_see_a_row_outside_their_clinics() {
    for db in common::all_backends().await {
        dataset::seed(
            &db.db,
            &GenConfig::new(5, dataset::DEFAULT_SEED),
            OnExisting::Refuse,
        )
        .await
        .expect("seed");
        let api = Api::over(db, test_config()).await;
        let p = people(&api).await;
        let names = clinic_names(&api).await;
        assert_eq!(names.len(), 3, "{names:?}");
        let mut asked = 0;

        for q in COUNTS {
            let (a, b, c) = (
                figure(&ask(&api, &p.alice, q, None).await),
                figure(&ask(&api, &p.bob, q, None).await),
                figure(&ask(&api, &p.carol, q, None).await),
            );
            asked += 1;
            eprintln!("{q}: alice {a} + bob {b} = everyone {c}");
            assert_eq!(a + b, c, "{q}: alice {a} + bob {b} != everyone {c}");
            assert!(
                c == 0.0 || (a < c && b < c) || q.contains("clinics"),
                "{q}: {a} {b} {c}"
            );
        }
        for (q, table) in LISTS {
            let mut seen = BTreeSet::new();
            for (token, scope) in [(&p.alice, &[1][..]), (&p.bob, &[2, 3][..])] {
                let a = ask(&api, token, q, None).await;
                assert_eq!(a["table"]["truncated"], false, "{q}");
                for id in ids(&a) {
                    let clinic = clinic_of(&api, table, id).await;
                    assert!(
                        scope.contains(&clinic),
                        "{q}: {table} {id} of clinic {clinic} shown to {scope:?}"
                    );
                    seen.insert(id);
                }
            }
            let all: BTreeSet<i64> = ids(&ask(&api, &p.carol, q, None).await).into_iter().collect();
            assert_eq!(seen, all, "{q}: the two scopes together show every row");
            asked += 1;
        }
        for q in BY_CLINIC {
            let all = groups(&ask(&api, &p.carol, q, None).await);
            for (token, scope) in [(&p.alice, &[1][..]), (&p.bob, &[2, 3][..])] {
                let mine = groups(&ask(&api, token, q, None).await);
                assert!(!mine.is_empty(), "{q}");
                for (clinic, n) in &mine {
                    let id = names.iter().find(|(_, name)| *name == clinic).map(|(id, _)| *id);
                    assert!(
                        id.is_some_and(|id| scope.contains(&id)),
                        "{q}: group {clinic} shown to {scope:?}"
                    );
                    assert_eq!(all.get(clinic), Some(n), "{q}: {clinic}");
                }
            }
            asked += 1;
        }
        for q in BY_OTHER {
            let all = groups(&ask(&api, &p.carol, q, None).await);
            let a = groups(&ask(&api, &p.alice, q, None).await);
            let b = groups(&ask(&api, &p.bob, q, None).await);
            for (k, n) in &all {
                let sum = a.get(k).unwrap_or(&0.0) + b.get(k).unwrap_or(&0.0);
                assert_eq!(sum, *n, "{q}: {k}");
            }
            asked += 1;
        }

        // A named clinic: inside the scope it is answered as asked; outside, the answer
        // covers the asker's clinics with a note, never the named clinic's figure.
        let riverside = &names[&1];
        let q = "how many open wounds at riverside";
        let everyone = figure(&ask(&api, &p.carol, q, None).await);
        let alice = ask(&api, &p.alice, q, None).await;
        assert_eq!(figure(&alice), everyone);
        let bob = ask(&api, &p.bob, q, None).await;
        let bob_all = figure(&ask(&api, &p.bob, "how many open wounds", None).await);
        assert_eq!(figure(&bob), bob_all, "bob is answered about his own clinics");
        let note = bob["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["piece"] == "outside your access")
            .unwrap_or_else(|| panic!("no note: {}", bob["assumptions"]));
        assert!(
            note["assumed"].as_str().unwrap().contains(riverside.as_str()),
            "{note}"
        );
        assert!(
            !alice["assumptions"].to_string().contains("outside your access"),
            "{}",
            alice["assumptions"]
        );
        asked += 1;

        // Follow-ups in a thread stay in scope: asked by all three, they add up too.
        let mut follow_ups = Vec::new();
        for token in [&p.alice, &p.bob, &p.carol] {
            let first = ask(&api, token, "how many open wounds", None).await;
            let thread = first["thread_id"].as_str().unwrap().to_owned();
            follow_ups.push(ask(&api, token, "only the venous leg ulcers", Some(&thread)).await);
        }
        let follow = follow_ups[1].clone();
        let (fa, fb, fc) = (figure(&follow_ups[0]), figure(&follow), figure(&follow_ups[2]));
        assert_eq!(fa + fb, fc, "{}", follow["restatement"]);
        assert!(fc > 0.0 && fb < fc, "{fa} {fb} {fc}");
        asked += 1;

        // Replays (`/history/{id}/rows`) and re-runs use the scope in force now.
        let hid = follow["history_id"].as_str().unwrap().to_owned();
        let rows = api
            .call(&p.bob, Method::POST, &format!("/api/v1/history/{hid}/rows"), None)
            .await;
        assert_eq!(rows.status, StatusCode::OK);
        assert_eq!(rows.body["rows"], follow["table"]["rows"]);
        let rerun = api.state.orchestrator.rerun(p.bob_id, &hid).await.unwrap();
        assert_eq!(
            serde_json::to_value(&rerun.table).unwrap()["rows"],
            follow["table"]["rows"]
        );
        asked += 1;

        // Option counts of a clarification round: alice's and bob's add up to carol's.
        let round = |token: String| {
            let api = &api;
            async move {
                let r = api
                    .call(
                        &token,
                        Method::POST,
                        "/api/v1/query",
                        Some(json!({"question": "show me serious wounds"})),
                    )
                    .await;
                assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
                r.body["questions"][0]["options"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| (o["id"].as_str().unwrap().to_owned(), o["count"].as_i64()))
                    .collect::<Vec<_>>()
            }
        };
        let (ra, rb, rc) = (
            round(p.alice.clone()).await,
            round(p.bob.clone()).await,
            round(p.carol.clone()).await,
        );
        let mut counted = 0;
        for ((a, b), c) in ra.iter().zip(&rb).zip(&rc) {
            assert_eq!((&a.0, &b.0), (&c.0, &c.0));
            if let (Some(x), Some(y), Some(z)) = (a.1, b.1, c.1) {
                assert_eq!(x + y, z, "option {}", c.0);
                counted += 1;
            }
        }
        assert!(counted > 0, "no option was counted: {rc:?}");
        asked += 1;

        // A revision keeps the scope.
        let answer = ask(&api, &p.alice, "show me serious wounds", None).await;
        let assumption = answer["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["ambiguity_id"].is_string() && a["options"].as_array().is_some_and(|o| o.len() > 1))
            .unwrap_or_else(|| panic!("nothing to revise: {}", answer["assumptions"]))
            .clone();
        let other = assumption["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] != assumption["option_id"])
            .unwrap()["id"]
            .clone();
        let revised = api
            .call(
                &p.alice,
                Method::POST,
                "/api/v1/query/revise",
                Some(json!({"history_id": answer["history_id"], "ambiguity_id": assumption["ambiguity_id"], "option_id": other})),
            )
            .await;
        assert_eq!(revised.status, StatusCode::OK, "{}", revised.body);
        for id in ids(&revised.body) {
            assert_eq!(
                clinic_of(&api, "wounds", id).await,
                1,
                "revised answer shows wound {id}"
            );
        }
        asked += 1;

        // Every statement run for a scoped user was audited with the scope.
        for (id, label) in [(p.alice_id, "1"), (p.bob_id, "2,3")] {
            let log = api.state.store.audit_log_of(id, 1000).await.unwrap();
            assert!(!log.is_empty());
            assert!(
                log.iter().all(|e| e.scope.as_deref() == Some(label)),
                "{label}: {log:?}"
            );
        }

        // /api/v1/me shows the scope; an administrator changes it; it applies at once.
        let me = api.call(&p.bob, Method::GET, "/api/v1/me", None).await;
        assert_eq!(me.status, StatusCode::OK);
        assert_eq!(me.body["all_clinics"], false);
        assert_eq!(me.body["clinic_ids"], json!([2, 3]));
        let before = figure(&ask(&api, &p.bob, "how many wounds", None).await);
        api.state
            .store
            .set_clinic_scope(p.bob_id, &ClinicScope::clinics([2]))
            .await
            .unwrap();
        let after = figure(&ask(&api, &p.bob, "how many wounds", None).await);
        assert!(after < before, "{after} !< {before}");
        api.state
            .store
            .set_clinic_scope(p.bob_id, &ClinicScope::All)
            .await
            .unwrap();
        let everything = figure(&ask(&api, &p.carol, "how many wounds", None).await);
        assert_eq!(
            figure(&ask(&api, &p.bob, "how many wounds", None).await),
            everything
        );

        assert!(asked >= 30, "only {asked} questions");
        api.finish().await;
    }
}

#[tokio::test]
async fn administrators_set_scopes_through_the_api_and_clinicians_cannot() {
    let api = Api::start(common::TestDb::sqlite().await, test_config()).await;
    let store = &api.state.store;
    let (admin, _) = store
        .ensure_user("root", "Root", Role::Admin, "root-password-1")
        .await
        .unwrap();
    let (_, admin_token) = api
        .state
        .auth
        .create_api_token(admin.id, "tests", Utc::now(), None)
        .await
        .unwrap();
    let path = format!("/api/v1/admin/users/{}/clinics", api.alice_id);
    let body = json!({"all_clinics": false, "clinic_ids": [2, 1, 2]});
    let refused = api.call(&api.bob, Method::PUT, &path, Some(body.clone())).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let set = api.call(&admin_token, Method::PUT, &path, Some(body)).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(set.body["clinic_ids"], json!([1, 2]));
    assert_eq!(
        store.clinic_scope(api.alice_id).await.unwrap(),
        ClinicScope::clinics([1, 2])
    );
    // Breaking the schema is a 400; keeping it but naming no clinic is a 422 `bad_scope`.
    for (bad, want) in [
        (
            json!({"all_clinics": true, "clinic_ids": [1]}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"all_clinics": false, "clinic_ids": [0]}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"all_clinics": false, "clinic_ids": [2.5]}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (json!({"all_clinics": "yes"}), StatusCode::BAD_REQUEST),
        (json!({"clinics": [1]}), StatusCode::BAD_REQUEST),
    ] {
        let r = api
            .call(&admin_token, Method::PUT, &path, Some(bad.clone()))
            .await;
        assert_eq!(r.status, want, "{bad}: {}", r.body);
        assert!(r.body["code"].is_string());
    }
    // JSON Schema's integers include 3.0: the same clinic as 3.
    let whole = api
        .call(
            &admin_token,
            Method::PUT,
            &path,
            Some(json!({"all_clinics": false, "clinic_ids": [1.0, 2]})),
        )
        .await;
    assert_eq!(whole.status, StatusCode::OK, "{}", whole.body);
    assert_eq!(whole.body["clinic_ids"], json!([1, 2]));
    let missing = api
        .call(
            &admin_token,
            Method::PUT,
            "/api/v1/admin/users/999999/clinics",
            Some(json!({"all_clinics": true})),
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let list = api
        .call(&admin_token, Method::GET, "/api/v1/admin/users", None)
        .await;
    assert_eq!(list.status, StatusCode::OK);
    let alice = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "alice")
        .unwrap();
    assert_eq!(alice["clinic_ids"], json!([1, 2]));
    let root = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "root")
        .unwrap();
    assert_eq!(root["all_clinics"], true);
    // an account with no clinics sees nothing, and is told so
    store
        .set_clinic_scope(api.alice_id, &ClinicScope::clinics([]))
        .await
        .unwrap();
    let a = api
        .call(
            &api.alice,
            Method::POST,
            "/api/v1/query",
            Some(json!({"question": "how many wounds", "interactive": false})),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(figure(&a.body), 0.0);
    assert!(
        a.body["assumptions"].to_string().contains("no clinics assigned"),
        "{}",
        a.body
    );
    api.finish().await;
}

fn cli(database_url: &str, args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_server"))
        .args(["user"])
        .args(args)
        .env("DATABASE_URL", database_url)
        .env("CLARION_LOG", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn the_user_command_adds_a_scoped_account_and_changes_its_scope() {
    for t in common::all_backends().await {
        let store = server::store::Store::new(t.db.clone());
        let out = cli(
            &t.url,
            &[
                "add",
                "--username",
                "kim",
                "--name",
                "Nurse Kim",
                "--clinics",
                "3,1",
            ],
            "a-long-password\n",
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("clinics: 1,3"));
        let kim = store.user_by_username("kim").await.unwrap().unwrap();
        assert_eq!(
            store.clinic_scope(kim.id).await.unwrap(),
            ClinicScope::clinics([1, 3])
        );
        let listed = String::from_utf8_lossy(&cli(&t.url, &["list"], "").stdout).into_owned();
        assert!(listed.contains("CLINICS") && listed.contains("1,3"), "{listed}");

        let out = cli(&t.url, &["scope", "kim", "--clinics", "2"], "");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            store.clinic_scope(kim.id).await.unwrap(),
            ClinicScope::clinics([2])
        );
        let out = cli(&t.url, &["scope", "kim", "--all"], "");
        assert!(out.status.success());
        assert_eq!(store.clinic_scope(kim.id).await.unwrap(), ClinicScope::All);
        for bad in [
            &["scope", "kim"][..],
            &["scope", "kim", "--clinics", "1,x"],
            &["scope", "kim", "--clinics", "1", "--all"],
            &["scope", "nobody", "--all"],
        ] {
            let out = cli(&t.url, bad, "");
            assert!(!out.status.success(), "{bad:?} succeeded");
        }
        t.cleanup().await;
    }
}

#[tokio::test]
async fn the_access_page_lists_accounts_with_every_clinic_and_saves_a_scope() {
    let api = Api::start(common::TestDb::sqlite().await, test_config()).await;
    let store = &api.state.store;
    let (admin, _) = store
        .ensure_user("root", "Root <admin>", Role::Admin, "root-password-1")
        .await
        .unwrap();
    let (_, admin_token) = api
        .state
        .auth
        .create_api_token(admin.id, "tests", Utc::now(), None)
        .await
        .unwrap();
    let (status, _, _) = api.page(&api.bob, Method::GET, "/admin/access", None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, html, _) = api.page(&admin_token, Method::GET, "/admin/access", None).await;
    assert_eq!(status, StatusCode::OK);
    let names = clinic_names(&api).await;
    for name in names.values() {
        assert!(html.contains(&name.replace('&', "&amp;")), "{name} missing");
    }
    assert!(
        html.contains("Root &lt;admin&gt;") && !html.contains("Root <admin>"),
        "escaped"
    );
    assert!(html.contains(r#"data-username="alice""#));
    let form = format!("user_id={}&access=some&clinic_1=on&clinic_3=on", api.alice_id);
    let (status, _, location) = api
        .page(&admin_token, Method::POST, "/admin/access", Some(&form))
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some("/admin/access?saved=ok"));
    assert_eq!(
        store.clinic_scope(api.alice_id).await.unwrap(),
        ClinicScope::clinics([1, 3])
    );
    let (_, html, _) = api
        .page(&admin_token, Method::GET, "/admin/access?saved=ok", None)
        .await;
    assert!(html.contains("Saved."));
    assert!(
        html.contains(&format!("Sees: {}, {}", names[&1], names[&3]).replace('&', "&amp;")),
        "{html}"
    );
    let (status, _, location) = api
        .page(
            &admin_token,
            Method::POST,
            "/admin/access",
            Some("user_id=1&access=maybe"),
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some("/admin/access?saved=bad"));
    assert_eq!(
        store.clinic_scope(api.alice_id).await.unwrap(),
        ClinicScope::clinics([1, 3])
    );
    let (status, _, _) = api
        .page(&api.bob, Method::POST, "/admin/access", Some(&form))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    api.finish().await;
}
