//! Training data from JSON lines of `{"prompt", "target"}` (the records
//! [`pgraphrag_data::PromptRecord`] describes: what `pgraphrag bench --export-prompts` and the
//! LaMP / multistage exports write), turned into [`AnswerExample`]s by the model's own
//! prompt formatting.

use std::io::BufRead;
use std::path::Path;

use pgraphrag_core::Prompt;
use pgraphrag_data::PromptRecord;
use pgraphrag_llm::GgufModel;

use crate::error::{Result, TrainError};
use crate::lm::AnswerExample;

/// Turns prompts and answers into token ids. [`GgufModel`] implements it with exactly what
/// generation feeds the model ([`GgufModel::prompt_tokens`]: the chat template, BOS for raw
/// prompts), so a model is trained on the inputs it is later asked.
pub trait ExampleEncoder {
    /// The ids the model reads for `prompt` before answering.
    fn prompt_ids(&self, prompt: &Prompt) -> std::result::Result<Vec<u32>, String>;
    /// The ids of the answer, ending with the token that ends the model's turn (so the
    /// trained model learns to stop).
    fn answer_ids(&self, answer: &str) -> std::result::Result<Vec<u32>, String>;
}

impl ExampleEncoder for GgufModel {
    fn prompt_ids(&self, prompt: &Prompt) -> std::result::Result<Vec<u32>, String> {
        self.prompt_tokens(prompt).map_err(|e| e.to_string())
    }

    /// The answer's tokens, then the chat template's end-of-turn token (`<|im_end|>` for
    /// ChatML) or, without a template, the tokenizer's EOS.
    fn answer_ids(&self, answer: &str) -> std::result::Result<Vec<u32>, String> {
        let mut ids = self.tokenizer().encode(answer).map_err(|e| e.to_string())?;
        let end = match self.template() {
            Some(t) => self.tokenizer().token_id(t.end_of_turn()),
            None => self.tokenizer().eos(),
        };
        ids.extend(end);
        Ok(ids)
    }
}

/// The examples of a data file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerData {
    /// One example per usable line, in file order.
    pub examples: Vec<AnswerExample>,
    /// Non-blank lines read.
    pub lines: usize,
    /// Lines left out because prompt and answer together exceed the token limit.
    pub too_long: usize,
}

/// Reads a JSON Lines file of [`PromptRecord`]s (`prompt` and `target` required; `system`,
/// `raw`, `id` and any other field optional) into [`AnswerExample`]s through `encoder`.
/// Blank lines are skipped; examples longer than `max_tokens` (prompt and answer) are
/// counted in [`AnswerData::too_long`] and left out.
///
/// Errors name the file and the line: [`TrainError::DataLine`] for bad JSON, a missing or
/// empty `prompt` or `target`, text the encoder refuses; [`TrainError::NoData`] for a file
/// without any usable example; [`TrainError::Io`] when it cannot be read.
///
/// ```no_run
/// let model = pgraphrag_llm::GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), Default::default())?;
/// let data = pgraphrag_train::load_answer_examples("runs/train.jsonl".as_ref(), &model, Some(1024))?;
/// println!("{} examples, {} too long", data.examples.len(), data.too_long);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_answer_examples(
    path: &Path,
    encoder: &dyn ExampleEncoder,
    max_tokens: Option<usize>,
) -> Result<AnswerData> {
    let file = std::fs::File::open(path).map_err(|source| TrainError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_answer_examples(std::io::BufReader::new(file), path, encoder, max_tokens)
}

/// Checks the shape of an examples file before any model loads: every line JSON with a
/// non-empty `prompt` and `target`, at least one example, the file readable UTF-8. Returns the
/// number of examples. The errors are [`load_answer_examples`]'s, naming the file and the
/// line; what only the model can tell (the tokens, their number) is checked when it loads.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("train.jsonl");
/// std::fs::write(&p, "{\"prompt\": \"Hi\", \"target\": \"4\"}\n").unwrap();
/// assert_eq!(pgraphrag_train::check_answer_file(&p).unwrap(), 1);
/// std::fs::write(&p, "").unwrap();
/// assert!(matches!(pgraphrag_train::check_answer_file(&p), Err(pgraphrag_train::TrainError::NoData { .. })));
/// ```
pub fn check_answer_file(path: &Path) -> Result<usize> {
    /// One token for any text: only the records' shape is checked.
    struct Shape;
    impl ExampleEncoder for Shape {
        fn prompt_ids(&self, _: &Prompt) -> std::result::Result<Vec<u32>, String> {
            Ok(vec![0])
        }
        fn answer_ids(&self, _: &str) -> std::result::Result<Vec<u32>, String> {
            Ok(vec![0])
        }
    }
    load_answer_examples(path, &Shape, None).map(|d| d.examples.len())
}

/// [`load_answer_examples`] over any reader (`path` names it in errors).
///
/// ```
/// use pgraphrag_core::Prompt;
/// use pgraphrag_train::{ExampleEncoder, TrainError, parse_answer_examples};
/// /// One id per byte, BOS 1 first, and the end of turn 2 after answers.
/// struct Bytes;
/// impl ExampleEncoder for Bytes {
///     fn prompt_ids(&self, p: &Prompt) -> Result<Vec<u32>, String> {
///         let text: String = p.messages().iter().map(|m| m.content.as_str()).collect();
///         Ok(std::iter::once(1).chain(text.bytes().map(u32::from)).collect())
///     }
///     fn answer_ids(&self, a: &str) -> Result<Vec<u32>, String> {
///         Ok(a.bytes().map(u32::from).chain(std::iter::once(2)).collect())
///     }
/// }
/// let text = "{\"prompt\": \"Hi\", \"target\": \"Rating: 4\"}\n\n{\"system\": \"S\", \"prompt\": \"x\", \"target\": \"5\"}\n";
/// let data = parse_answer_examples(text.as_bytes(), "t.jsonl".as_ref(), &Bytes, None)?;
/// assert_eq!(data.examples.len(), 2);
/// assert_eq!(data.examples[0].prompt, [1, 72, 105]);
/// assert_eq!(data.examples[1].answer, [53, 2]);
///
/// let bad = "{\"prompt\": \"Hi\", \"target\": \"4\"}\n{\"prompt\": \"Hi\"}\n";
/// let err = parse_answer_examples(bad.as_bytes(), "t.jsonl".as_ref(), &Bytes, None).unwrap_err();
/// assert!(matches!(err, TrainError::DataLine { line: 2, .. }));
/// assert_eq!(err.to_string(), "t.jsonl:2: no `target` (each line needs \"prompt\" and \"target\")");
/// # Ok::<(), TrainError>(())
/// ```
pub fn parse_answer_examples(
    reader: impl BufRead,
    path: &Path,
    encoder: &dyn ExampleEncoder,
    max_tokens: Option<usize>,
) -> Result<AnswerData> {
    let mut data = AnswerData {
        examples: Vec::new(),
        lines: 0,
        too_long: 0,
    };
    for (i, line) in reader.lines().enumerate() {
        let bad = |reason: String| TrainError::DataLine {
            path: path.to_path_buf(),
            line: i + 1,
            reason,
        };
        let line = line.map_err(|e| bad(format!("cannot read: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        data.lines += 1;
        let value: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| bad(format!("not JSON: {e}")))?;
        for field in ["prompt", "target"] {
            if value.get(field).is_none() {
                return Err(bad(format!(
                    "no `{field}` (each line needs \"prompt\" and \"target\")"
                )));
            }
        }
        let rec: PromptRecord =
            serde_json::from_value(value).map_err(|e| bad(format!("not a prompt record: {e}")))?;
        if rec.target.trim().is_empty() {
            return Err(bad("the target is empty".into()));
        }
        if rec.prompt.is_empty() {
            return Err(bad("the prompt is empty".into()));
        }
        let prompt = encoder
            .prompt_ids(&rec.to_prompt())
            .map_err(|e| bad(format!("encoding the prompt: {e}")))?;
        let answer = encoder
            .answer_ids(&rec.target)
            .map_err(|e| bad(format!("encoding the target: {e}")))?;
        if prompt.is_empty() || answer.is_empty() {
            return Err(bad("the prompt or the target encodes to no tokens".into()));
        }
        if max_tokens.is_some_and(|m| prompt.len() + answer.len() > m) {
            data.too_long += 1;
            continue;
        }
        data.examples.push(AnswerExample { prompt, answer });
    }
    if data.examples.is_empty() {
        let reason = if data.lines == 0 {
            "no examples: the file is empty (write one with `pgraphrag bench ... --export-prompts FILE`)"
                .to_string()
        } else {
            format!(
                "none of its {} examples fits in {} tokens",
                data.lines,
                max_tokens.unwrap_or(0)
            )
        };
        return Err(TrainError::NoData {
            path: path.to_path_buf(),
            reason,
        });
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bytes;
    impl ExampleEncoder for Bytes {
        fn prompt_ids(&self, p: &Prompt) -> std::result::Result<Vec<u32>, String> {
            let text: String = match p {
                Prompt::Raw(s) => s.clone(),
                Prompt::Chat(m) => m.iter().map(|m| m.content.as_str()).collect(),
            };
            Ok(text.bytes().map(u32::from).collect())
        }
        fn answer_ids(&self, a: &str) -> std::result::Result<Vec<u32>, String> {
            Ok(a.bytes().map(u32::from).collect())
        }
    }

    fn parse(text: &str, max: Option<usize>) -> Result<AnswerData> {
        parse_answer_examples(text.as_bytes(), Path::new("d.jsonl"), &Bytes, max)
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse("", None).unwrap_err();
        assert!(matches!(e, TrainError::NoData { .. }), "{e}");
        assert!(e.to_string().starts_with("d.jsonl: no examples"), "{e}");
        let e = parse("\n  \n", None).unwrap_err();
        assert!(matches!(e, TrainError::NoData { .. }), "{e}");
        let ok = "{\"prompt\":\"p\",\"target\":\"t\"}\n";
        let e = parse(&format!("{ok}{{\"prompt\": \"p\", \"target\": \n"), None).unwrap_err();
        assert!(
            matches!(&e, TrainError::DataLine { line: 2, reason, .. } if reason.starts_with("not JSON")),
            "{e}"
        );
        let e = parse(&format!("{ok}\n{{\"target\":\"t\"}}\n"), None).unwrap_err();
        assert!(matches!(e, TrainError::DataLine { line: 3, .. }), "{e}");
        assert!(e.to_string().contains("no `prompt`"), "{e}");
        let e = parse("{\"prompt\":\"p\",\"target\":\"  \"}", None).unwrap_err();
        assert_eq!(e.to_string(), "d.jsonl:1: the target is empty");
        let e = parse("{\"prompt\":\"p\",\"target\":4}", None).unwrap_err();
        assert!(e.to_string().contains("not a prompt record"), "{e}");
        let e = parse("[1, 2]", None).unwrap_err();
        assert!(e.to_string().contains("no `prompt`"), "{e}");
    }

    #[test]
    fn long_examples_are_counted_and_left_out() {
        let text = "{\"prompt\":\"abc\",\"target\":\"d\"}\n{\"prompt\":\"a\",\"target\":\"d\",\"raw\":true}\n";
        let d = parse(text, Some(3)).unwrap();
        assert_eq!((d.lines, d.too_long, d.examples.len()), (2, 1, 1));
        assert_eq!(d.examples[0].prompt, [97]);
        let e = parse(text, Some(1)).unwrap_err();
        assert!(
            e.to_string()
                .contains("none of its 2 examples fits in 1 tokens"),
            "{e}"
        );
    }
}
