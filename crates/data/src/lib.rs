//! # pgraphrag-data
//!
//! Loaders and writers for PGraphRAG splits and ranking files, LaMP and MovieLens data, with typed errors naming file and record.
#![deny(missing_docs)]
