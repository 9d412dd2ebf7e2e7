//! Rebuilds the server when a file of the browser client (`src/web/`) is
//! added, changed or removed: `rust-embed` builds the folder into the binary,
//! and without this Cargo would not notice a new file. (The migrations are
//! named one by one in `store/migrations.rs`, whose test finds a new one.)

fn main() {
    println!("cargo:rerun-if-changed=src/web");
}
