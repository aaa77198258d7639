//! # pgraphrag-prompt
//!
//! Prompt templates exact to the papers' released code (PGraphRAG, LaMP) and output extraction.
#![deny(missing_docs)]
