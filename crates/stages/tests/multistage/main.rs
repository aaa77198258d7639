//! The multistage writing stages (`pgraphrag_stages::multistage`), one test binary: the
//! immediate context, generation input, keywords, weak labels and the real-model stage tests.
mod context;
mod generation;
mod keywords;
mod labels;
mod smollm;
