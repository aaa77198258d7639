//! The supervised example of the generator's fine-tuning: a prompt as the bench sends it and
//! the answer wanted, one JSON line each (`pgraphrag bench --export-prompts` writes them,
//! `pgraphrag train lora` reads them).
use pgraphrag_core::{Prompt, Role};
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
    /// The record of `prompt` (a user message, a system message then a user message, or a
    /// raw string) answered by `target`; `None` for any other chat, which a record cannot
    /// hold.
    ///
    /// ```
    /// use pgraphrag_core::Prompt;
    /// use pgraphrag_data::PromptRecord;
    /// let p = Prompt::user("P").with_system("S");
    /// let r = PromptRecord::from_prompt("u1", "none_k1", &p, "Rating: 4").unwrap();
    /// assert_eq!((r.system.as_deref(), r.raw), (Some("S"), false));
    /// assert_eq!(r.to_prompt(), p);
    /// assert!(PromptRecord::from_prompt("u1", "x", &Prompt::Raw("R".into()), "t").unwrap().raw);
    /// ```
    pub fn from_prompt(
        id: impl Into<String>,
        config: impl Into<String>,
        prompt: &Prompt,
        target: impl Into<String>,
    ) -> Option<PromptRecord> {
        let (system, text, raw) = match prompt {
            Prompt::Raw(s) => (None, s.clone(), true),
            Prompt::Chat(m) => match m.as_slice() {
                [u] if u.role == Role::User => (None, u.content.clone(), false),
                [s, u] if s.role == Role::System && u.role == Role::User => {
                    (Some(s.content.clone()), u.content.clone(), false)
                }
                _ => return None,
            },
        };
        Some(PromptRecord {
            id: id.into(),
            config: config.into(),
            system,
            prompt: text,
            target: target.into(),
            raw,
        })
    }

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
