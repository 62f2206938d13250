//! One conformance suite for Clarion's own tables, run against SQLite and PostgreSQL.

mod common;

use app::protocol::{Sensitivity, Settings};
use server::store::{Role, Store};

#[tokio::test]
async fn settings_default_then_persist_and_update_on_every_backend() {
    for t in common::all_backends().await {
        let backend = t.db.backend();
        let store = Store::new(t.db.clone());
        let (user, created) = store
            .ensure_user("nurse", "Nurse Kim", Role::Clinician, "pw")
            .await
            .unwrap();
        assert!(created, "{backend:?}");
        assert_eq!(
            store.settings(user.id).await.unwrap(),
            Settings::default(),
            "{backend:?}"
        );

        let s = Settings {
            skip_clarifications: true,
            sensitivity: Sensitivity::More,
        };
        store.save_settings(user.id, &s).await.unwrap();
        assert_eq!(store.settings(user.id).await.unwrap(), s, "{backend:?}");

        let s2 = Settings {
            skip_clarifications: false,
            sensitivity: Sensitivity::Fewer,
        };
        store.save_settings(user.id, &s2).await.unwrap();
        assert_eq!(store.settings(user.id).await.unwrap(), s2, "{backend:?}");
        t.cleanup().await;
    }
}

#[tokio::test]
async fn ensure_user_is_idempotent_and_keeps_users_apart() {
    for t in common::all_backends().await {
        let store = Store::new(t.db.clone());
        let (a, created_a) = store.ensure_user("a", "A", Role::Clinician, "pw").await.unwrap();
        let (a2, created_again) = store
            .ensure_user("a", "Someone else", Role::Admin, "x")
            .await
            .unwrap();
        assert!(created_a && !created_again);
        assert_eq!(a, a2, "an existing account is never overwritten");
        let (b, _) = store.ensure_user("b", "B", Role::Admin, "pw").await.unwrap();
        assert!(b.is_admin && !a.is_admin);

        store
            .save_settings(
                a.id,
                &Settings {
                    skip_clarifications: true,
                    sensitivity: Sensitivity::More,
                },
            )
            .await
            .unwrap();
        assert_eq!(
            store.settings(b.id).await.unwrap(),
            Settings::default(),
            "b does not see a's settings"
        );
        assert_eq!(store.first_user().await.unwrap().unwrap().username, "a");
        t.cleanup().await;
    }
}

#[tokio::test]
async fn hostile_usernames_are_data_not_sql() {
    for t in common::all_backends().await {
        let store = Store::new(t.db.clone());
        let evil = "x'; DROP TABLE users; --";
        let (u, _) = store
            .ensure_user(evil, "Evil", Role::Clinician, "pw")
            .await
            .unwrap();
        assert_eq!(u.username, evil);
        assert!(store.user_by_username(evil).await.unwrap().is_some());
        assert!(store.user_by_username("x").await.unwrap().is_none());
        t.cleanup().await;
    }
}

#[tokio::test]
async fn migrations_are_idempotent() {
    for t in common::all_backends().await {
        t.db.migrate().await.expect("second migration run is a no-op");
        let again = server::db::Database::connect_and_migrate(&t.url)
            .await
            .expect("reconnect + migrate");
        again.ping().await.unwrap();
        again.close().await;
        t.cleanup().await;
    }
}
