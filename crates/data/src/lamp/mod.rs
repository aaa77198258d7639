//! LaMP's file formats (`LaMP-Benchmark/LaMP`): the `*_questions.json` files (questions with
//! their user profiles) and the `*_outputs.json` files (gold or predicted outputs), read into
//! the vocabulary of `pgraphrag-core` ([`LampQuestion`], [`LampProfileItem`](pgraphrag_core::LampProfileItem), [`LampGold`]).
//!
//! * Questions: a JSON list of `{"id", "input", "profile": [{"id", "date"?, ...task fields}],
//!   "user_id"?}`. The Avocado builder (`data/avocado/create_avocado_dataset.py`) writes its
//!   `test_questions.json` wrapped as `{"task": "LaMP_6", "golds": [questions...]}`; the
//!   readers accept that shape too. Unknown question fields (such as the `output` that
//!   `merge_with_rank.py` attaches) are ignored.
//! * Outputs: `{"task": "LaMP_N", "golds": [{"id", "output"}]}`; predictions use the same
//!   shape.
//!
//! Values: `input` must be a string. Ids, dates, outputs and profile fields may be strings or
//! JSON numbers; a number becomes the text Python's `str()` gives after `json.load` (`5` is
//! `"5"`, `4.0` is `"4.0"`), so LaMP-3's `score` reads the same whether a file stores it as
//! `"5"` or `5`. (Two corners differ from Python: integers beyond 64 bits are read as floats, and the
//! literal `-0` reads as the float `-0.0`, both as serde_json parses them.) Any other JSON
//! type (null, boolean, list, object) is an error naming the field.
//!
//! Errors ([`Error`]) name the file and, for shape errors, the record (0-based
//! index in the list), the profile item and the field, and the question id where it is known.
//! Writes are atomic ([`write_atomic`]) and use Python's `json.dump`
//! layout (`ensure_ascii`, `", "` and `": "` separators).
//!
//! ```
//! use pgraphrag_core::{LampGold, LampProfileItem, LampQuestion, LampTask};
//! use pgraphrag_data::lamp;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let q = dir.path().join("dev_questions.json");
//! std::fs::write(&q, r#"[{"id": "310", "input": "... review: Great soap",
//!     "profile": [{"id": "3100", "text": "Lovely", "score": 5}]}]"#).unwrap();
//! let questions = lamp::read_questions_for(&q, LampTask::Lamp3).unwrap();
//! assert_eq!(questions[0].profile[0].get("score"), Some("5"));
//! assert!(lamp::read_questions_for(&q, LampTask::Lamp4).is_err()); // no "title"
//!
//! let o = dir.path().join("dev_outputs.json");
//! lamp::write_outputs(&o, LampTask::Lamp3, &[LampGold { id: "310".into(), output: "5".into() }]).unwrap();
//! let (task, golds) = lamp::read_outputs(&o).unwrap();
//! assert_eq!((task.as_str(), golds[0].output.as_str()), ("LaMP_3", "5"));
//! ```

mod read;

use std::path::Path;

use pgraphrag_core::{LampGold, LampQuestion, LampTask};
use pgraphrag_text::py::{DumpOptions, json_dump_to};
use serde::Serialize;

use crate::{Error, Result, write_atomic};

pub use read::{parse_outputs, parse_questions};

fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a LaMP questions file (a list of questions, or the Avocado builder's
/// `{"task", "golds": [...]}` wrapping), without checking the task fields.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("q.json");
/// std::fs::write(&p, r#"{"task": "LaMP_6", "golds": [{"id": "6", "input": "Generate a subject for the following email: hi", "profile": []}]}"#).unwrap();
/// let qs = pgraphrag_data::lamp::read_questions(&p).unwrap();
/// assert_eq!(qs[0].id, "6");
/// ```
pub fn read_questions(path: &Path) -> Result<Vec<LampQuestion>> {
    parse_questions(&read_bytes(path)?, path)
}

/// Reads a LaMP questions file and checks that every profile item has the fields `task`'s
/// prompts read ([`LampTask::profile_fields`]); the error names the record, the item, the
/// field and the question id.
///
/// ```
/// use pgraphrag_core::LampTask;
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("q.json");
/// std::fs::write(&p, r#"[{"id": "q1", "input": "x", "profile": [{"id": "p1", "text": "t"}]}]"#).unwrap();
/// assert!(pgraphrag_data::lamp::read_questions_for(&p, LampTask::Lamp7).is_ok());
/// let e = pgraphrag_data::lamp::read_questions_for(&p, LampTask::Lamp3).unwrap_err().to_string();
/// assert!(e.contains("profile[0]") && e.contains("\"score\"") && e.contains("q1"), "{e}");
/// ```
pub fn read_questions_for(path: &Path, task: LampTask) -> Result<Vec<LampQuestion>> {
    let questions = read_questions(path)?;
    check_fields(&questions, task, path)?;
    Ok(questions)
}

/// Checks that every profile item of `questions` has `task`'s fields (what
/// [`read_questions_for`] checks after reading); `path` names the file in the error.
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampQuestion, LampTask};
/// let q = LampQuestion::new("q1", "x").with_profile(vec![LampProfileItem::new("p").with("text", "t")]);
/// assert!(pgraphrag_data::lamp::check_fields(&[q.clone()], LampTask::Lamp7, "f.json").is_ok());
/// assert!(pgraphrag_data::lamp::check_fields(&[q], LampTask::Lamp4, "f.json").is_err());
/// ```
pub fn check_fields(
    questions: &[LampQuestion],
    task: LampTask,
    path: impl AsRef<Path>,
) -> Result<()> {
    for (ri, q) in questions.iter().enumerate() {
        for (pi, item) in q.profile.iter().enumerate() {
            if let Some(field) = task.profile_fields().iter().find(|f| item.get(f).is_none()) {
                return Err(Error::Schema {
                    path: path.as_ref().to_path_buf(),
                    record: Some(ri),
                    review: Some(pi),
                    field: (*field).to_string(),
                    message: format!("missing (question id {:?}; {task} needs it)", q.id),
                });
            }
        }
    }
    Ok(())
}

fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    write_atomic(path, |w| {
        json_dump_to(&mut *w, value, &DumpOptions::default()).map_err(std::io::Error::other)
    })
}

/// Writes a LaMP questions file (a JSON list, as LaMP's own files), atomically.
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampQuestion};
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("q.json");
/// let q = LampQuestion::new("q1", "Paraphrase the following tweet without any explanation before or after it: hi")
///     .with_profile(vec![LampProfileItem::new("p1").with("text", "héllo").dated("2020-01-02")]);
/// pgraphrag_data::lamp::write_questions(&p, &[q.clone()]).unwrap();
/// assert_eq!(pgraphrag_data::lamp::read_questions(&p).unwrap(), vec![q]);
/// ```
pub fn write_questions(path: &Path, questions: &[LampQuestion]) -> Result<()> {
    write_json(path, questions)
}

/// Reads a LaMP outputs (or predictions) file: the `task` value as written (`LaMP_N`) and
/// the golds in file order.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("o.json");
/// std::fs::write(&p, r#"{"task": "LaMP_1", "golds": [{"id": "1", "output": "[2]"}]}"#).unwrap();
/// let (task, golds) = pgraphrag_data::lamp::read_outputs(&p).unwrap();
/// assert_eq!(task, "LaMP_1");
/// assert_eq!(golds[0].output, "[2]");
/// ```
pub fn read_outputs(path: &Path) -> Result<(String, Vec<LampGold>)> {
    parse_outputs(&read_bytes(path)?, path)
}

/// Writes a LaMP outputs file `{"task": "LaMP_N", "golds": [...]}` (the task's
/// [`LampTask::outputs_name`]), atomically.
///
/// ```
/// use pgraphrag_core::{LampGold, LampTask};
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("o.json");
/// pgraphrag_data::lamp::write_outputs(&p, LampTask::Lamp2Old, &[LampGold { id: "1".into(), output: "sports".into() }]).unwrap();
/// assert_eq!(std::fs::read_to_string(&p).unwrap(), r#"{"task": "LaMP_2", "golds": [{"id": "1", "output": "sports"}]}"#);
/// ```
pub fn write_outputs(path: &Path, task: LampTask, golds: &[LampGold]) -> Result<()> {
    #[derive(Serialize)]
    struct Outputs<'a> {
        task: &'a str,
        golds: &'a [LampGold],
    }
    write_json(
        path,
        &Outputs {
            task: task.outputs_name(),
            golds,
        },
    )
}
