//! The subcommands beyond `check`, `grade` and `mcp`, kept out of `main.rs` so it stays a
//! dispatcher.

pub mod offline;
