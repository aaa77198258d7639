//! The pipelines beyond PGraphRAG's grid, end to end through the binary, one test binary: the
//! cold-start item summaries (`bench --item-summaries`) and the multistage writing commands
//! (`multistage build|run|export`).
mod cold_start;
mod common;
mod multistage_build;
mod multistage_run;
