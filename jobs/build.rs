//! `sqlx::migrate!` embeds the migrations when `jobs` is compiled; a migration added later would
//! not be seen by a build that already compiled it. This makes any change under `migrations/`
//! rebuild the crate (as `sqlx migrate build-script` writes it).

fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
