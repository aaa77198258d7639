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

use pgraphrag_core::{LampGold, LampQuestion, LampTask, RATING_SCALE};
use pgraphrag_text::py::{self, DumpOptions, json_dump_to};
use serde::Serialize;

use crate::error::OutOfRange;
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
/// prompts read ([`LampTask::profile_fields`]), and for LaMP-3 that every `score` is a rating
/// from 1 to 5; the error names the record, the item, the field and the question id.
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
            if task == LampTask::Lamp3
                && let Some(score) = item.get("score")
                && !is_rating(score)
            {
                return Err(OutOfRange {
                    path: path.as_ref().to_path_buf(),
                    record: ri,
                    review: Some(pi),
                    field: "score",
                    id: q.id.clone(),
                    value: format!("{score:?}"),
                    expected: LAMP3_RATING.into(),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// What a LaMP-3 rating (a gold or a profile item's `score`) must be, in
/// [`Error::OutOfRange`]'s words.
const LAMP3_RATING: &str = "a rating from 1 to 5 (LaMP-3's scale)";

/// Whether `s` reads (as LaMP's evaluation reads it, Python's `float(s.strip())`) as a
/// rating on [`RATING_SCALE`].
fn is_rating(s: &str) -> bool {
    py::float(py::strip(s)).is_ok_and(|x| RATING_SCALE.contains(&x))
}

/// Checks that every gold of `golds` lies in `task`'s domain, so that no gold scores as a
/// wrong number: LaMP-3's golds are ratings on [`RATING_SCALE`]; the other classification
/// tasks' golds are among [`LampTask::labels`] (after LaMP's `strip()`); generation tasks and
/// LaMP-2-old (no fixed label set) take any text. The error ([`Error::OutOfRange`]) names
/// `path`, the record, the field `output` and the question id.
///
/// ```
/// use pgraphrag_core::{LampGold, LampTask};
/// use pgraphrag_data::lamp::check_golds;
/// let g = |o: &str| vec![LampGold { id: "q1".into(), output: o.into() }];
/// assert!(check_golds(&g("4"), LampTask::Lamp3, "o.json").is_ok());
/// let e = check_golds(&g("-99"), LampTask::Lamp3, "o.json").unwrap_err().to_string();
/// assert!(e.contains("record 0 (id \"q1\"), field \"output\": \"-99\" is not a rating from 1 to 5"), "{e}");
/// assert!(check_golds(&g("[3]"), LampTask::Lamp1, "o.json").is_err());
/// assert!(check_golds(&g("anything"), LampTask::Lamp4, "o.json").is_ok());
/// ```
pub fn check_golds(golds: &[LampGold], task: LampTask, path: impl AsRef<Path>) -> Result<()> {
    let labels = task.labels().filter(|_| task != LampTask::Lamp3);
    let expected = match labels {
        Some(l) => format!("one of {task}'s labels ({})", l.join(", ")),
        None => LAMP3_RATING.into(),
    };
    let bad = golds.iter().position(|g| match (task, labels) {
        (LampTask::Lamp3, _) => !is_rating(&g.output),
        (_, Some(l)) => !l.contains(&py::strip(&g.output)),
        (_, None) => false,
    });
    match bad {
        None => Ok(()),
        Some(ri) => Err(OutOfRange {
            path: path.as_ref().to_path_buf(),
            record: ri,
            review: None,
            field: "output",
            id: golds[ri].id.clone(),
            value: format!("{:?}", golds[ri].output),
            expected,
        }
        .into()),
    }
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

/// Reads a LaMP outputs file of `task` to score against: its `task` value must name `task`
/// (`LaMP_N`, as [`LampTask::outputs_name`]) and every gold must lie in the task's domain
/// ([`check_golds`]); errors name the file, the record, the field and the question id.
///
/// ```
/// use pgraphrag_core::LampTask;
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("o.json");
/// std::fs::write(&p, r#"{"task": "LaMP_3", "golds": [{"id": "1", "output": "5"}, {"id": "2", "output": "-99"}]}"#).unwrap();
/// let e = pgraphrag_data::lamp::read_outputs_for(&p, LampTask::Lamp3).unwrap_err().to_string();
/// assert!(e.contains("record 1 (id \"2\"), field \"output\""), "{e}");
/// let e = pgraphrag_data::lamp::read_outputs_for(&p, LampTask::Lamp4).unwrap_err().to_string();
/// assert!(e.contains("field \"task\"") && e.contains("LaMP-4"), "{e}");
/// ```
pub fn read_outputs_for(path: &Path, task: LampTask) -> Result<Vec<LampGold>> {
    let (name, golds) = read_outputs(path)?;
    let same = name
        .parse::<LampTask>()
        .is_ok_and(|t| t.outputs_name() == task.outputs_name());
    if !same {
        return Err(Error::Schema {
            path: path.to_path_buf(),
            record: None,
            review: None,
            field: "task".into(),
            message: format!(
                "{name:?} is not {task}'s outputs ({:?}); pass the outputs file of the questions' task",
                task.outputs_name()
            ),
        });
    }
    check_golds(&golds, task, path)?;
    Ok(golds)
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

#[cfg(test)]
mod tests {
    use pgraphrag_core::LampProfileItem;

    use super::*;

    fn golds(outputs: &[&str]) -> Vec<LampGold> {
        outputs
            .iter()
            .enumerate()
            .map(|(i, o)| LampGold {
                id: format!("q{i}"),
                output: o.to_string(),
            })
            .collect()
    }

    #[test]
    fn golds_outside_the_task_domain_are_refused() {
        let ok = golds(&["1", " 5\n", "3.0", "4.5"]);
        check_golds(&ok, LampTask::Lamp3, "o.json").unwrap();
        for bad in ["-99", "0", "6", "five", "nan", "inf", ""] {
            let g = golds(&["3", bad]);
            let e = check_golds(&g, LampTask::Lamp3, "o.json").unwrap_err();
            assert!(
                matches!(&e, Error::OutOfRange(o) if (o.record, o.review, o.field, o.id.as_str()) == (1, None, "output", "q1")),
                "{bad}: {e:?}"
            );
        }
        check_golds(&golds(&["[1]", " [2] "]), LampTask::Lamp1, "o.json").unwrap();
        let e = check_golds(&golds(&["[1]", "1"]), LampTask::Lamp1, "o.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("one of LaMP-1's labels ([1], [2])"), "{e}");
        check_golds(&golds(&["comedy"]), LampTask::Lamp2, "o.json").unwrap();
        assert!(check_golds(&golds(&["news"]), LampTask::Lamp2, "o.json").is_err());
        check_golds(&golds(&["anything", ""]), LampTask::Lamp2Old, "o.json").unwrap();
        check_golds(&golds(&["-99"]), LampTask::Lamp7, "o.json").unwrap();
    }

    #[test]
    fn lamp3_profile_scores_must_be_ratings() {
        let q = |score: &str| {
            LampQuestion::new("q7", "x").with_profile(vec![
                LampProfileItem::new("p0")
                    .with("text", "t")
                    .with("score", "4"),
                LampProfileItem::new("p1")
                    .with("text", "t")
                    .with("score", score),
            ])
        };
        check_fields(&[q("5")], LampTask::Lamp3, "q.json").unwrap();
        let e = check_fields(&[q("99999")], LampTask::Lamp3, "q.json").unwrap_err();
        assert!(
            matches!(&e, Error::OutOfRange(o) if (o.record, o.review, o.field, o.id.as_str()) == (0, Some(1), "score", "q7")),
            "{e:?}"
        );
        // Another task's prompts do not read the score.
        check_fields(&[q("99999")], LampTask::Lamp7, "q.json").unwrap();
    }

    #[test]
    fn outputs_of_another_task_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("o.json");
        write_outputs(&p, LampTask::Lamp2Old, &golds(&["sports"])).unwrap();
        assert_eq!(read_outputs_for(&p, LampTask::Lamp2Old).unwrap().len(), 1);
        let e = read_outputs_for(&p, LampTask::Lamp3).unwrap_err();
        assert!(
            matches!(&e, Error::Schema { field, .. } if field == "task"),
            "{e:?}"
        );
        std::fs::write(&p, r#"{"task": "whatever", "golds": []}"#).unwrap();
        assert!(read_outputs_for(&p, LampTask::Lamp4).is_err());
    }
}
