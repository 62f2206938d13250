//! Rebuild when a migration is added or changed: `sqlx::migrate!` embeds the
//! migration files at compile time, and cargo does not track them otherwise.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
