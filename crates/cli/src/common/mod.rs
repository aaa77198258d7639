//! Helpers shared by several commands, below every command module: no file here imports a
//! command module (`*_cmd.rs` and their subcommand files), so commands share code through
//! here and never import each other. Each file serves one family of commands.
pub mod kragrec;
pub mod lamp;
pub mod profile_store;
pub mod summarizer;
pub mod train;
