//! The files of a BERT checkpoint folder, checked and read before the model loads: the
//! safetensors extent, `tokenizer_config.json`, a WordPiece tokenizer from `vocab.txt`.

use std::path::Path;

use tokenizers::Tokenizer;

use crate::{Error, Result};

pub(super) fn model_err(path: &Path, message: impl Into<String>) -> Error {
    Error::Model {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Checks a safetensors file's extent before it is mapped: the 8-byte header length, the JSON
/// header within the file, and every tensor's byte range within the data that follows (a file
/// cut short is refused naming what is missing, rather than as "incomplete metadata").
pub(super) fn check_safetensors(path: &Path) -> Result<()> {
    use std::io::Read;
    let bad = |m: String| model_err(path, m);
    let mut f = std::fs::File::open(path).map_err(|e| bad(format!("cannot open: {e}")))?;
    let len = f
        .metadata()
        .map_err(|e| bad(format!("cannot stat: {e}")))?
        .len();
    let mut n = [0u8; 8];
    f.read_exact(&mut n)
        .map_err(|_| bad(format!("truncated: {len} bytes, no 8-byte header length")))?;
    let n = u64::from_le_bytes(n);
    // safetensors' own limit on the header (100 MB).
    if n > len.saturating_sub(8) || n > 100_000_000 {
        return Err(bad(format!(
            "truncated or not safetensors: a header of {n} bytes does not fit in {len} bytes"
        )));
    }
    let mut header = vec![0u8; n as usize];
    f.read_exact(&mut header)
        .map_err(|e| bad(format!("cannot read the header: {e}")))?;
    let header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&header)
        .map_err(|e| bad(format!("the safetensors header is not a JSON object: {e}")))?;
    let data = len - 8 - n;
    for (name, t) in header.iter().filter(|(k, _)| *k != "__metadata__") {
        let end = t
            .get("data_offsets")
            .and_then(|o| o.get(1))
            .and_then(|e| e.as_u64())
            .ok_or_else(|| bad(format!("tensor `{name}` has no data_offsets")))?;
        if end > data {
            return Err(bad(format!(
                "truncated: tensor `{name}` ends at byte {end} of the data, which holds {data} bytes"
            )));
        }
    }
    Ok(())
}

pub(super) fn compute(e: candle_core::Error) -> Error {
    Error::Compute(e.to_string())
}

/// Reads `tokenizer_config.json`'s `model_max_length` and `do_lower_case`, when present.
pub(super) fn tokenizer_config(dir: &Path) -> (Option<usize>, Option<bool>) {
    let Ok(text) = std::fs::read_to_string(dir.join("tokenizer_config.json")) else {
        return (None, None);
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return (None, None);
    };
    // transformers writes a huge sentinel (1e30) when the tokenizer has no limit.
    let max = v
        .get("model_max_length")
        .and_then(|m| m.as_f64())
        .filter(|m| *m >= 1.0 && *m <= 1e6)
        .map(|m| m as usize);
    (max, v.get("do_lower_case").and_then(|b| b.as_bool()))
}

/// Builds a BERT WordPiece tokenizer from `vocab.txt` (for checkpoints such as
/// `facebook/contriever` that may ship no `tokenizer.json`).
pub(super) fn tokenizer_from_vocab(dir: &Path, lowercase: bool) -> Result<Tokenizer> {
    use tokenizers::models::wordpiece::WordPiece;
    use tokenizers::normalizers::bert::BertNormalizer;
    use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
    use tokenizers::processors::bert::BertProcessing;
    let vocab = dir.join("vocab.txt");
    let vocab_s = vocab.to_string_lossy().to_string();
    let wp = WordPiece::from_file(&vocab_s)
        .unk_token("[UNK]".into())
        .build()
        .map_err(|e| model_err(&vocab, format!("cannot read the WordPiece vocabulary: {e}")))?;
    let mut tok = Tokenizer::new(wp);
    let id = |t: &str| {
        tok.token_to_id(t)
            .ok_or_else(|| model_err(&vocab, format!("the vocabulary has no {t} token")))
    };
    let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
    tok.with_normalizer(Some(BertNormalizer::new(true, true, None, lowercase)))
        .map_err(|e| model_err(&vocab, e.to_string()))?;
    tok.with_pre_tokenizer(Some(BertPreTokenizer));
    tok.with_post_processor(Some(BertProcessing::new(
        ("[SEP]".into(), sep),
        ("[CLS]".into(), cls),
    )));
    Ok(tok)
}
