//! Tokenizers built from GGUF metadata (byte-level BPE) or loaded from a `tokenizer.json`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{BPE, Vocab};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::{AddedToken, Tokenizer};

use crate::error::{LlmError, Result};
use crate::gguf::content::read_content;
use crate::gguf::file::{GgufFile, Value};

/// A model's tokenizer with the special-token facts generation needs.
///
/// Built by [`crate::GgufModel::load`]; public so callers can count tokens exactly as the
/// model will see them (e.g. to fit a prompt into a token budget).
#[derive(Clone)]
pub struct LlmTokenizer {
    inner: Tokenizer,
    /// Token text by id (from the GGUF vocabulary, or the tokenizer.json's).
    vocab: HashMap<u32, String>,
    bos: Option<u32>,
    eos: Option<u32>,
    add_bos: bool,
    source: PathBuf,
}

impl std::fmt::Debug for LlmTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmTokenizer")
            .field("vocab_size", &self.vocab.len())
            .field("bos", &self.bos)
            .field("eos", &self.eos)
            .field("add_bos", &self.add_bos)
            .field("source", &self.source)
            .finish()
    }
}

impl LlmTokenizer {
    /// Builds the byte-level BPE tokenizer that a `gpt2`-style GGUF file declares: the GGUF
    /// vocabulary and merges, pre-tokenizer `Sequence[Digits(individual_digits=true),
    /// ByteLevel(add_prefix_space=false)]`, ByteLevel decoder, and every token of type 2..=5
    /// (unknown, control, user-defined, unused) registered as a special token.
    ///
    /// This matches the `tokenizer.json` SmolLM2 ships (candle's own `TokenizerFromGguf` adds a
    /// prefix space, which changes the first token of every text).
    ///
    /// ```no_run
    /// let t = pgraphrag_llm::LlmTokenizer::from_gguf("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref())?;
    /// assert_eq!(t.vocab_size(), 49152);
    /// # Ok::<(), pgraphrag_llm::LlmError>(())
    /// ```
    pub fn from_gguf(path: &Path) -> Result<Self> {
        let (ct, _, _) = read_content(path)?;
        Self::from_metadata(&ct, path)
    }

    /// [`Self::from_gguf`] from an already read header.
    pub(crate) fn from_metadata(ct: &GgufFile, path: &Path) -> Result<Self> {
        let err = |reason: String| LlmError::Tokenizer {
            path: path.to_path_buf(),
            reason,
        };
        let kind = ct.md_str("tokenizer.ggml.model").unwrap_or("");
        if kind != "gpt2" {
            return Err(err(format!(
                "GGUF tokenizer model `{kind}` cannot be rebuilt from metadata (only byte-level BPE `gpt2` can); pass a tokenizer.json with GgufOptions::tokenizer_json or put `{}` next to the model",
                sibling_tokenizer_name(path)
            )));
        }
        let tokens = ct.md_strings("tokenizer.ggml.tokens").map_err(err)?;
        if tokens.is_empty() {
            return Err(err("`tokenizer.ggml.tokens` is empty".into()));
        }
        if let Some(Value::Array(types)) = ct.get("tokenizer.ggml.token_type")
            && types.len() != tokens.len()
        {
            return Err(err(format!(
                "`tokenizer.ggml.token_type` has {} entries for {} tokens",
                types.len(),
                tokens.len()
            )));
        }
        for key in ["tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"] {
            if let Some(id) = ct.md_u32(key)
                && id as usize >= tokens.len()
            {
                return Err(err(format!(
                    "`{key}` is {id}, past the vocabulary of {} tokens",
                    tokens.len()
                )));
            }
        }
        let merges: Vec<(String, String)> = ct
            .md_strings("tokenizer.ggml.merges")
            .map_err(err)?
            .into_iter()
            .map(|m| {
                m.split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| err(format!("merge `{m}` has no space")))
            })
            .collect::<Result<_>>()?;
        let vocab_map: Vocab = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let mut builder = BPE::builder().vocab_and_merges(vocab_map, merges);
        if let Some(unk) = ct
            .md_u32("tokenizer.ggml.unknown_token_id")
            .or_else(|| ct.md_u32("tokenizer.ggml.unk_token_id"))
            .and_then(|i| tokens.get(i as usize))
        {
            builder = builder.unk_token(unk.clone());
        }
        let bpe = builder
            .build()
            .map_err(|e| err(format!("building BPE: {e}")))?;
        let mut tk = Tokenizer::new(bpe);
        tk.with_pre_tokenizer(Some(Sequence::new(vec![
            Digits::new(true).into(),
            ByteLevel::new(false, true, true).into(),
        ])));
        tk.with_decoder(Some(ByteLevelDecoder::new(false, true, true)));
        if let Some(Value::Array(types)) = ct.get("tokenizer.ggml.token_type") {
            let specials: Vec<AddedToken> = types
                .iter()
                .enumerate()
                .filter(|(_, t)| matches!(t.as_u32_lossless(), Some(2..=5)))
                .filter_map(|(i, _)| tokens.get(i))
                .map(|t| AddedToken::from(t.clone(), true))
                .collect();
            tk.add_special_tokens(specials)
                .map_err(|e| err(format!("registering special tokens: {e}")))?;
        }
        let vocab = tokens
            .into_iter()
            .enumerate()
            .map(|(i, t)| (i as u32, t))
            .collect();
        Ok(LlmTokenizer {
            inner: tk,
            vocab,
            bos: ct.md_u32("tokenizer.ggml.bos_token_id"),
            eos: ct.md_u32("tokenizer.ggml.eos_token_id"),
            add_bos: ct.md_bool("tokenizer.ggml.add_bos_token").unwrap_or(false),
            source: path.to_path_buf(),
        })
    }

    /// Loads a Hugging Face `tokenizer.json`; BOS/EOS ids and whether to add BOS come from the
    /// metadata of the GGUF model `gguf` (the model's own facts), the text pipeline from the
    /// file.
    pub fn from_json(json: &Path, gguf: &Path) -> Result<Self> {
        let (ct, _, _) = read_content(gguf)?;
        Self::from_json_with(json, &ct)
    }

    /// [`Self::from_json`] with the model's header already read.
    pub(crate) fn from_json_with(json: &Path, ct: &GgufFile) -> Result<Self> {
        if !json.exists() {
            return Err(LlmError::ModelNotFound {
                path: json.to_path_buf(),
            });
        }
        let inner = Tokenizer::from_file(json).map_err(|e| LlmError::Tokenizer {
            path: json.to_path_buf(),
            reason: format!("cannot read tokenizer.json: {e}"),
        })?;
        let vocab: HashMap<u32, String> = inner
            .get_vocab(true)
            .into_iter()
            .map(|(t, i)| (i, t))
            .collect();
        if vocab.is_empty() {
            return Err(LlmError::Tokenizer {
                path: json.to_path_buf(),
                reason: "the tokenizer.json has an empty vocabulary".into(),
            });
        }
        Ok(LlmTokenizer {
            inner,
            vocab,
            bos: ct.md_u32("tokenizer.ggml.bos_token_id"),
            eos: ct.md_u32("tokenizer.ggml.eos_token_id"),
            add_bos: ct.md_bool("tokenizer.ggml.add_bos_token").unwrap_or(false),
            source: json.to_path_buf(),
        })
    }

    /// Encodes `text`; special-token strings in it (e.g. `<|im_start|>`) become their ids.
    /// Never adds BOS (see [`Self::add_bos`]).
    ///
    /// ```no_run
    /// # fn main() -> pgraphrag_llm::Result<()> {
    /// let m = pgraphrag_llm::GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), Default::default())?;
    /// let ids = m.tokenizer().encode("Hello world")?;
    /// assert_eq!(m.tokenizer().decode(&ids)?, "Hello world");
    /// # Ok(()) }
    /// ```
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        self.inner
            .encode_fast(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| LlmError::Tokenizer {
                path: self.source.clone(),
                reason: format!("encoding failed: {e}"),
            })
    }

    /// Decodes ids to text, dropping special tokens.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.inner
            .decode(ids, true)
            .map_err(|e| LlmError::Tokenizer {
                path: self.source.clone(),
                reason: format!("decoding failed: {e}"),
            })
    }

    /// The id of a token given its exact text (`<|im_end|>`), if the vocabulary has it.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The text of token `id` as stored in the vocabulary (byte-level form for BPE models).
    pub fn token_text(&self, id: u32) -> Option<&str> {
        self.vocab.get(&id).map(|s| s.as_str())
    }

    /// Vocabulary size.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// Beginning-of-sequence id, if the model declares one.
    pub fn bos(&self) -> Option<u32> {
        self.bos
    }

    /// End-of-sequence id, if the model declares one.
    pub fn eos(&self) -> Option<u32> {
        self.eos
    }

    /// Whether the model expects BOS before a raw prompt (`tokenizer.ggml.add_bos_token`).
    pub fn add_bos(&self) -> bool {
        self.add_bos
    }

    /// The underlying `tokenizers` tokenizer.
    pub fn inner(&self) -> &Tokenizer {
        &self.inner
    }
}

/// Counts [`LlmTokenizer::encode`]'s ids (special-token strings count as one token each; BOS
/// is not added): what `pgraphrag-stages`' fitting rule measures budgets in.
impl pgraphrag_core::TokenCounter for LlmTokenizer {
    fn count(&self, text: &str) -> pgraphrag_core::Result<usize> {
        self.encode(text)
            .map(|ids| ids.len())
            .map_err(pgraphrag_core::Error::backend)
    }
}

/// `gemma-3-270m-q4_k_m.gguf` → `gemma-3-270m-q4_k_m.tokenizer.json`.
pub(crate) fn sibling_tokenizer_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{stem}.tokenizer.json")
}
