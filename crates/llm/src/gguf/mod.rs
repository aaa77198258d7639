//! The GGUF format, the crate's bottom layer: the container reader ([`file`](mod@file)), typed
//! metadata accessors ([`metadata`]), opening and checking a model file ([`content`]), the llama
//! dimensions ([`dims`]) and the option enums ([`options`]). Nothing here imports from the
//! layers above (tokenizer, template, LoRA, engines, model); this file only declares the
//! modules and re-exports nothing, so each user names the file it needs.

pub(crate) mod content;
pub(crate) mod dims;
pub(crate) mod file;
mod metadata;
pub(crate) mod options;
