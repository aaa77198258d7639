//! The CLI's one [`Progress`] implementation: an indicatif bar on stderr.
//!
//! Libraries report progress through `pgraphrag_core::Progress`; this renders it. The bar is
//! hidden when `--quiet` is given or stderr is not a terminal.
use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use pgraphrag_core::Progress;

/// A progress bar on stderr; each [`Progress::start`] begins a fresh bar.
pub struct Bar {
    enabled: bool,
    notes: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Bar {
    /// A bar that draws unless `quiet` or stderr is not a terminal.
    pub fn new(quiet: bool) -> Self {
        Bar {
            enabled: !quiet && std::io::stderr().is_terminal(),
            notes: true,
            bar: Mutex::new(None),
        }
    }

    /// A bar for a training run: with `quiet`, neither the bar nor the run's notes (its step,
    /// validation and checkpoint lines) are shown.
    pub fn for_training(quiet: bool) -> Self {
        Bar {
            notes: !quiet,
            ..Bar::new(quiet)
        }
    }

    fn with(&self, f: impl FnOnce(&ProgressBar)) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            f(b)
        }
    }
}

impl Progress for Bar {
    fn start(&self, total: u64, what: &str) {
        if !self.enabled {
            return;
        }
        let b = ProgressBar::new(total);
        let what: String = what.chars().filter(|c| *c != '{' && *c != '}').collect();
        if let Ok(style) = ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {what} ({{eta}} left) {{msg}}"
        )) {
            b.set_style(style);
        }
        let mut slot = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = slot.replace(b) {
            old.finish_and_clear();
        }
    }

    fn advance(&self, n: u64) {
        self.with(|b| b.inc(n));
    }

    fn message(&self, message: &str) {
        let m = message.to_string();
        self.with(|b| b.set_message(m));
    }

    /// A line on stderr, above the bar while one is drawn (a training run's with `--quiet`:
    /// none).
    fn note(&self, line: &str) {
        if !self.notes {
            return;
        }
        let slot = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        match slot.as_ref() {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            b.finish_and_clear();
        }
    }
}
