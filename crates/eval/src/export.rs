//! The bench's own prompts with their gold answers, as training data: one
//! `{"id", "config", "system", "prompt", "target"}` JSON line per distinct prompt, which
//! `pgraphrag-train` reads (`load_answer_examples`) to fine-tune the generator on exactly
//! what `pgraphrag bench` asks it.

use std::collections::HashSet;
use std::path::Path;

use pgraphrag_core::{Prompt, RankedProfile};
pub use pgraphrag_data::PromptRecord;
use pgraphrag_prompt::pgraphrag::Task;

use crate::error::{Error, Result};
use crate::grid::Bench;
use crate::table::gold;

/// The gold answer written as the bench's prompts ask for it: `Rating: 4`, `Review title:
/// …`, `Review text: …` (the prefixes extraction removes).
///
/// ```
/// use pgraphrag_prompt::pgraphrag::Task;
/// assert_eq!(pgraphrag_eval::answer_text(Task::Rating, "4"), "Rating: 4");
/// assert_eq!(pgraphrag_eval::answer_text(Task::Title, "Great"), "Review title: Great");
/// ```
pub fn answer_text(task: Task, gold: &str) -> String {
    match task {
        Task::Rating => format!("Rating: {gold}"),
        Task::Title => format!("Review title: {gold}"),
        Task::Text => format!("Review text: {gold}"),
    }
}

impl Bench {
    /// Every distinct prompt of the grid over `profiles` with its user's gold answer
    /// ([`answer_text`] of [`gold`]), user by user and cell by cell as [`Bench::plan`]
    /// orders them; a prompt several cells share appears once. Profiles whose gold is empty
    /// (no title, no text, no rating) are skipped.
    ///
    /// ```
    /// use pgraphrag_core::{Entry, RankedProfile};
    /// use pgraphrag_eval::{Bench, RunConfig};
    /// use pgraphrag_prompt::pgraphrag::{Mode, Task};
    /// let p = RankedProfile {
    ///     user_id: "u1".into(),
    ///     target: Entry { title: Some("T".into()), rating: Some(4.0), ..Default::default() },
    ///     ..Default::default()
    /// };
    /// let bench = Bench::new(Task::Rating, vec![RunConfig::new(Mode::None, 1), RunConfig::new(Mode::User, 1)]);
    /// let recs = bench.prompt_records(&[p]).unwrap();
    /// assert_eq!(recs.len(), 2);
    /// assert_eq!((recs[0].id.as_str(), recs[0].config.as_str()), ("u1", "none_k1"));
    /// assert_eq!(recs[0].target, "Rating: 4");
    /// assert!(recs[0].system.is_some()); // the GPT system message, as the bench sends it
    /// ```
    pub fn prompt_records(&self, profiles: &[RankedProfile]) -> Result<Vec<PromptRecord>> {
        let mut seen: HashSet<Prompt> = HashSet::new();
        let mut out = Vec::new();
        for p in profiles {
            let g = gold(p, self.task);
            if g.is_empty() || g == "None" {
                continue;
            }
            for &c in &self.configs {
                let prompt = self.prompt(p, c);
                if !seen.insert(prompt.clone()) {
                    continue;
                }
                let record = PromptRecord::from_prompt(
                    p.user_id.clone(),
                    c.to_string(),
                    &prompt,
                    answer_text(self.task, &g),
                )
                .ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "the prompt of user {} ({c}) is not a system + user chat nor a raw string",
                        p.user_id
                    ))
                })?;
                out.push(record);
            }
        }
        Ok(out)
    }
}

/// Writes `records` as JSON lines to `path`, atomically (see [`pgraphrag_data::write_atomic`]).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use pgraphrag_eval::{PromptRecord, write_prompt_records};
/// let r = PromptRecord { id: "u".into(), config: "none_k1".into(), system: None,
///                        prompt: "P".into(), target: "Rating: 5".into(), raw: false };
/// let path = dir.path().join("train.jsonl");
/// write_prompt_records(&path, &[r]).unwrap();
/// assert_eq!(std::fs::read_to_string(&path).unwrap(),
///            "{\"id\":\"u\",\"config\":\"none_k1\",\"prompt\":\"P\",\"target\":\"Rating: 5\"}\n");
/// ```
pub fn write_prompt_records(path: &Path, records: &[PromptRecord]) -> Result<()> {
    let mut s = String::new();
    for r in records {
        s.push_str(&serde_json::to_string(r).map_err(|e| Error::InvalidInput(e.to_string()))?);
        s.push('\n');
    }
    crate::output::write_file(path, s.as_bytes())
}
