//! Rebuilds the server when a file of the browser client (`src/web/`) or a
//! migration (`migrations/` at the top of the workspace) is added, changed or
//! removed: `rust-embed` and `sqlx::migrate!` build those folders into the
//! binary, and without this Cargo would not notice a new file.

fn main() {
    println!("cargo:rerun-if-changed=src/web");
    println!("cargo:rerun-if-changed=../../migrations");
}
