//! The supervised example of the generator's fine-tuning: a prompt as the bench sends it and
//! the answer wanted, one JSON line each (`pgraphrag bench --export-prompts` writes them,
//! `pgraphrag train lora` reads them).
use pgraphrag_core::Prompt;
use serde::{Deserialize, Serialize};

/// One supervised example: a prompt as the bench sends it, and the answer wanted, in the
/// format the prompt asks for (`pgraphrag_eval::answer_text`).
///
/// `system` and `prompt` are the chat's system and user messages ([`Prompt::Chat`]: the
/// model formats them with its chat template); with `raw`, `prompt` is the exact string fed
/// to the model ([`Prompt::Raw`]).
///
/// ```
/// let line = r#"{"id":"u1","config":"none_k1","system":"S","prompt":"P","target":"Rating: 4"}"#;
/// let r: pgraphrag_data::PromptRecord = serde_json::from_str(line).unwrap();
/// assert_eq!(r.to_prompt(), pgraphrag_core::Prompt::user("P").with_system("S"));
/// assert_eq!(serde_json::to_string(&r).unwrap(), line);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptRecord {
    /// The user id.
    #[serde(default)]
    pub id: String,
    /// The grid cell (`mode_k`) the prompt was built for (the first, when several cells
    /// build the same prompt).
    #[serde(default)]
    pub config: String,
    /// The system message, if the prompt has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The user message (or, with `raw`, the whole model input).
    pub prompt: String,
    /// The answer to learn.
    pub target: String,
    /// `prompt` is sent to the model verbatim, without the chat template.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raw: bool,
}

impl PromptRecord {
    /// The [`Prompt`] the record stands for: the chat (system message, then the user
    /// message), or the raw string.
    pub fn to_prompt(&self) -> Prompt {
        if self.raw {
            return Prompt::Raw(self.prompt.clone());
        }
        let p = Prompt::user(self.prompt.clone());
        match &self.system {
            Some(s) => p.with_system(s.clone()),
            None => p,
        }
    }
}
