//! Chat templates: hand-written formatters for the families this crate runs.
//!
//! Each formatter reproduces the Jinja template its model family ships (for
//! `add_generation_prompt = true`); [`ChatTemplate::detect`] picks one from the GGUF
//! `tokenizer.chat_template` metadata, falling back on the architecture.

use pgraphrag_core::{Message, Role};

/// How chat messages are turned into one prompt string.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChatTemplate {
    /// ChatML (SmolLM2, Qwen): `<|im_start|>{role}\n{content}<|im_end|>\n` per message, then
    /// `<|im_start|>assistant\n`. When the first message is not a system message and
    /// `default_system` is set, `<|im_start|>system\n{default_system}<|im_end|>\n` comes first
    /// (SmolLM2's template does this with "You are a helpful AI assistant named SmolLM, trained
    /// by Hugging Face").
    ChatMl {
        /// The system prompt the template inserts when none is given.
        default_system: Option<String>,
    },
    /// Llama 3: `<|begin_of_text|>` then `<|start_header_id|>{role}<|end_header_id|>\n\n{content
    /// trimmed}<|eot_id|>` per message, then the assistant header.
    Llama3,
    /// Gemma (2 and 3): `<bos>`, then `<start_of_turn>{user|model}\n{content trimmed}<end_of_turn>\n`
    /// per message, then `<start_of_turn>model\n`. A system message is prepended to the first
    /// user turn followed by a blank line, as Gemma 3's template does.
    Gemma,
}

impl ChatTemplate {
    /// Picks the formatter for a model from its `tokenizer.chat_template` (when present) or its
    /// `general.architecture`. `None` when neither says.
    ///
    /// ```
    /// use pgraphrag_llm::ChatTemplate;
    /// let t = ChatTemplate::detect(Some("{{'<|im_start|>' + message['role']}}"), "llama");
    /// assert_eq!(t, Some(ChatTemplate::ChatMl { default_system: None }));
    /// assert_eq!(ChatTemplate::detect(None, "gemma3"), Some(ChatTemplate::Gemma));
    /// ```
    pub fn detect(jinja: Option<&str>, architecture: &str) -> Option<Self> {
        if let Some(j) = jinja {
            if j.contains("<|im_start|>") {
                return Some(ChatTemplate::ChatMl {
                    default_system: default_chatml_system(j),
                });
            }
            if j.contains("<|start_header_id|>") {
                return Some(ChatTemplate::Llama3);
            }
            if j.contains("<start_of_turn>") {
                return Some(ChatTemplate::Gemma);
            }
        }
        match architecture {
            "gemma3" | "gemma2" | "gemma" => Some(ChatTemplate::Gemma),
            "qwen2" | "qwen3" => Some(ChatTemplate::ChatMl {
                default_system: None,
            }),
            _ => None,
        }
    }

    /// Formats `messages` for generation (the assistant turn is opened at the end).
    ///
    /// ```
    /// use pgraphrag_core::Prompt;
    /// use pgraphrag_llm::ChatTemplate;
    /// let t = ChatTemplate::ChatMl { default_system: None };
    /// let p = Prompt::user("Hi").with_system("Be brief.");
    /// assert_eq!(
    ///     t.format(p.messages()),
    ///     "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    /// );
    /// ```
    pub fn format(&self, messages: &[Message]) -> String {
        let mut out = String::new();
        match self {
            ChatTemplate::ChatMl { default_system } => {
                if let (Some(sys), Some(first)) = (default_system, messages.first())
                    && first.role != Role::System
                {
                    out.push_str(&format!("<|im_start|>system\n{sys}<|im_end|>\n"));
                }
                for m in messages {
                    out.push_str(&format!(
                        "<|im_start|>{}\n{}<|im_end|>\n",
                        role_name(m.role),
                        m.content
                    ));
                }
                out.push_str("<|im_start|>assistant\n");
            }
            ChatTemplate::Llama3 => {
                out.push_str("<|begin_of_text|>");
                for m in messages {
                    out.push_str(&format!(
                        "<|start_header_id|>{}<|end_header_id|>\n\n{}<|eot_id|>",
                        role_name(m.role),
                        m.content.trim()
                    ));
                }
                out.push_str("<|start_header_id|>assistant<|end_header_id|>\n\n");
            }
            ChatTemplate::Gemma => {
                out.push_str("<bos>");
                let mut system: Option<&str> = None;
                let mut first_turn = true;
                for m in messages {
                    if m.role == Role::System {
                        system = Some(m.content.as_str());
                        continue;
                    }
                    let role = if m.role == Role::Assistant {
                        "model"
                    } else {
                        "user"
                    };
                    let content = match (first_turn, system.take()) {
                        (true, Some(s)) => format!("{s}\n\n{}", m.content),
                        _ => m.content.clone(),
                    };
                    first_turn = false;
                    out.push_str(&format!(
                        "<start_of_turn>{role}\n{}<end_of_turn>\n",
                        content.trim()
                    ));
                }
                if let Some(s) = system {
                    // Only a system message: Gemma has no system turn, so it becomes a user turn.
                    out.push_str(&format!("<start_of_turn>user\n{}<end_of_turn>\n", s.trim()));
                }
                out.push_str("<start_of_turn>model\n");
            }
        }
        out
    }

    /// The token text that ends an assistant turn in this format.
    pub fn end_of_turn(&self) -> &'static str {
        match self {
            ChatTemplate::ChatMl { .. } => "<|im_end|>",
            ChatTemplate::Llama3 => "<|eot_id|>",
            ChatTemplate::Gemma => "<end_of_turn>",
        }
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// Extracts the literal default system prompt from a ChatML Jinja template
/// (`'<|im_start|>system\n...<|im_end|>\n'` inside a `{% if loop.first ... %}` block).
fn default_chatml_system(jinja: &str) -> Option<String> {
    let start = jinja.find("<|im_start|>system\n")? + "<|im_start|>system\n".len();
    let rest = &jinja[start..];
    let end = rest.find("<|im_end|>")?;
    let sys = &rest[..end];
    // A template that interpolates the system message itself has no literal default.
    if sys.contains("{{") || sys.contains("message") || sys.contains('\'') {
        return None;
    }
    Some(sys.replace("\\n", "\n"))
}
