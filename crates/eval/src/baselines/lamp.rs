//! LaMP's rows: a question's query and its user's dated profile as an [`Example`], and the
//! baselines of the generation tasks (LaMP-4 headlines, LaMP-5 paper titles, LaMP-6 e-mail
//! subjects, LaMP-7 tweets) and of LaMP-3's ratings.
//!
//! The LaMP grid (`pgraphrag lamp grid`) runs the first `--limit` questions of the questions
//! file in file order; pass the same questions, and their golds from the outputs file, in the
//! same order.
use std::collections::{HashMap, HashSet};

use pgraphrag_core::{LampGold, LampProfileItem, LampQuestion, LampTask, Language, SummaryScope};
use pgraphrag_prompt::lamp::{QuerySource, extract_query};

use super::pgraphrag::{validation_rating_constant, validation_text_constant};
use super::predict::{Bm25Rule, Earlier, Example, MatchOn, NamedBaseline, Pool, Predictor};
use crate::{Error, Result};

/// The profile fields of a task's input and output (`None` for the classification tasks).
fn fields(task: LampTask) -> Option<(&'static str, &'static str)> {
    match task {
        LampTask::Lamp3 => Some(("text", "score")),
        LampTask::Lamp4 | LampTask::Lamp6 => Some(("text", "title")),
        LampTask::Lamp5 => Some(("abstract", "title")),
        LampTask::Lamp7 => Some(("text", "text")),
        LampTask::Lamp1 | LampTask::Lamp2 | LampTask::Lamp2Old => None,
    }
}

/// LaMP's `YYYY-MM-DD` as the number `YYYYMMDD` (which sorts by date); `None` otherwise.
fn date_number(date: &str) -> Option<i64> {
    let digits: String = date.split('-').collect();
    (digits.len() == 8 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

fn earlier(item: &LampProfileItem, input: &str, output: &str) -> Earlier {
    let i = item.get(input).unwrap_or("").to_string();
    let o = item
        .get(output)
        .map(str::to_string)
        .filter(|o| !o.trim().is_empty());
    let document = match &o {
        Some(o) if input != output => format!("{o} {i}").trim().to_string(),
        _ => i.clone(),
    };
    Earlier {
        input: i,
        output: o,
        document,
        time: item.date.as_deref().and_then(date_number),
    }
}

/// The [`Example`] of a LaMP question: the query of its input (LaMP's `prompts.py` rule: the
/// article of LaMP-4, the abstract of LaMP-5, the e-mail body of LaMP-6, the tweet of LaMP-7,
/// the review of LaMP-3) and the user's profile items, dated (`YYYYMMDD`) when the file has
/// dates. Classification tasks and inputs without their query marker are errors.
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampQuestion, LampTask};
/// use pgraphrag_eval::baselines::{Predictor, lamp_example};
/// let mut q = LampQuestion::new("q1", "Generate a headline for the following article: Rain is due. More later.");
/// let mut old = LampProfileItem::new("1").with("title", "Sun ahead").with("text", "Sunny days");
/// old.date = Some("2020-01-02".into());
/// let mut new = LampProfileItem::new("2").with("title", "Storm warning").with("text", "Wind");
/// new.date = Some("2021-05-06".into());
/// q.profile = vec![old, new];
/// let ex = lamp_example(LampTask::Lamp4, &q).unwrap();
/// assert_eq!(ex.input, "Rain is due. More later.");
/// assert_eq!(Predictor::Latest.predict(&ex).unwrap().as_deref(), Some("Storm warning"));
/// ```
pub fn lamp_example(task: LampTask, question: &LampQuestion) -> Result<Example> {
    let (input, output) = fields(task).ok_or_else(|| {
        Error::InvalidInput(format!(
            "{task} has no baselines here (a classification task)"
        ))
    })?;
    let query = extract_query(task, &question.input, QuerySource::Prompts)
        .map_err(|e| Error::InvalidInput(format!("question {}: {e}", question.id)))?;
    Ok(Example {
        id: question.id.clone(),
        input: query,
        history: question
            .profile
            .iter()
            .map(|p| earlier(p, input, output))
            .collect(),
        neighbors: Vec::new(),
    })
}

/// The gold outputs of `questions`, in their order, from an outputs file's `golds` (matched by
/// question id, as the LaMP grid matches them); a question without a gold is an error.
///
/// ```
/// use pgraphrag_core::{LampGold, LampQuestion};
/// use pgraphrag_eval::baselines::lamp_golds;
/// let qs = [LampQuestion::new("b", "x"), LampQuestion::new("a", "y")];
/// let golds = [LampGold { id: "a".into(), output: "4".into() }, LampGold { id: "b".into(), output: "2".into() }];
/// assert_eq!(lamp_golds(&qs, &golds).unwrap(), ["2", "4"]);
/// assert!(lamp_golds(&[LampQuestion::new("c", "z")], &golds).is_err());
/// ```
pub fn lamp_golds(questions: &[LampQuestion], golds: &[LampGold]) -> Result<Vec<String>> {
    let by_id: HashMap<&str, &str> = golds
        .iter()
        .map(|g| (g.id.as_str(), g.output.as_str()))
        .collect();
    questions
        .iter()
        .map(|q| {
            by_id
                .get(q.id.as_str())
                .map(|g| g.to_string())
                .ok_or_else(|| {
                    Error::InvalidInput(format!("question {:?} has no gold output", q.id))
                })
        })
        .collect()
}

/// The golds the constant baselines are chosen on: those of every `validation` question (for
/// example the builder's dev split, whose users the train split never has), refusing any
/// validation question that is evaluated or whose user (`user_id`, else the question id) has
/// an evaluated question: the constants are never chosen on the evaluated users.
///
/// ```
/// use pgraphrag_core::{LampGold, LampQuestion};
/// use pgraphrag_eval::baselines::lamp_validation_golds;
/// let user = |id: &str, u: &str| LampQuestion { user_id: Some(u.into()), ..LampQuestion::new(id, "x") };
/// let golds = [LampGold { id: "d1".into(), output: "5".into() }];
/// assert_eq!(lamp_validation_golds(&[user("t1", "ann")], &[user("d1", "bob")], &golds).unwrap(), ["5"]);
/// let e = lamp_validation_golds(&[user("t1", "bob")], &[user("d1", "bob")], &golds).unwrap_err();
/// assert!(e.to_string().contains("bob"));
/// ```
pub fn lamp_validation_golds(
    evaluated: &[LampQuestion],
    validation: &[LampQuestion],
    golds: &[LampGold],
) -> Result<Vec<String>> {
    let key = |q: &LampQuestion| q.summary_key(SummaryScope::User).to_string();
    let users: HashSet<String> = evaluated.iter().map(key).collect();
    let ids: HashSet<&str> = evaluated.iter().map(|q| q.id.as_str()).collect();
    if let Some(q) = validation
        .iter()
        .find(|q| ids.contains(q.id.as_str()) || users.contains(&key(q)))
    {
        return Err(Error::InvalidInput(format!(
            "validation question {:?} (user {:?}) belongs to an evaluated user: choose the \
             constants on other users (another split)",
            q.id,
            key(q)
        )));
    }
    lamp_golds(validation, golds)
}

/// The baselines of a LaMP task, in table order, with `const_val` chosen on `validation_golds`
/// (golds of questions other than the evaluated ones; see
/// [`super::pgraphrag_baselines`] for the rule):
///
/// * LaMP-4, 5, 6: `first_{k}_words` and `first_sentence` of the article, abstract or e-mail
///   (English), `const_val`, `user_latest` (the latest dated profile item's headline, title or
///   subject), `user_bm25` (that of the item whose article, abstract or body is closest by BM25);
/// * LaMP-7: `input` (the tweet itself), `user_latest`, `user_bm25`, `const_val`;
/// * LaMP-3: `always_1` … `always_5`, `const_val`, `user_mean` (the profile's mean score
///   rounded to a label, halves up), `user_mode` (both falling back to `const_val`).
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_eval::baselines::lamp_baselines;
/// let b = lamp_baselines(LampTask::Lamp6, 10, &["Meeting moved".to_string()]).unwrap();
/// assert_eq!(b[0].name, "first_10_words");
/// assert!(lamp_baselines(LampTask::Lamp1, 10, &[]).is_err());
/// ```
pub fn lamp_baselines(
    task: LampTask,
    words: usize,
    validation_golds: &[String],
) -> Result<Vec<NamedBaseline>> {
    use NamedBaseline as B;
    let user_bm25 = || {
        B::new(
            "user_bm25",
            Predictor::MostSimilar {
                pool: Pool::User,
                on: MatchOn::Input,
                rule: Bm25Rule::Lamp,
            },
        )
    };
    Ok(match task {
        LampTask::Lamp4 | LampTask::Lamp5 | LampTask::Lamp6 => vec![
            B::new(format!("first_{words}_words"), Predictor::FirstWords(words)),
            B::new(
                "first_sentence",
                Predictor::FirstSentence(Language::English),
            ),
            B::new("const_val", validation_text_constant(validation_golds)?),
            B::new("user_latest", Predictor::Latest),
            user_bm25(),
        ],
        LampTask::Lamp7 => vec![
            B::new("input", Predictor::Input),
            B::new("user_latest", Predictor::Latest),
            user_bm25(),
            B::new("const_val", validation_text_constant(validation_golds)?),
        ],
        LampTask::Lamp3 => {
            let constant = validation_rating_constant(validation_golds)?;
            let mut v: Vec<B> = (1..=5)
                .map(|r| B::new(format!("always_{r}"), Predictor::Constant(r.to_string())))
                .collect();
            v.push(B::new("const_val", constant.clone()));
            v.push(B::new("user_mean", Predictor::MeanLabel(Pool::User)).or(constant.clone()));
            v.push(B::new("user_mode", Predictor::ModeRating(Pool::User)).or(constant));
            v
        }
        LampTask::Lamp1 | LampTask::Lamp2 | LampTask::Lamp2Old => {
            return Err(Error::InvalidInput(format!(
                "{task} has no baselines here (a classification task)"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, date: Option<&str>, title: &str, text: &str) -> LampProfileItem {
        let mut p = LampProfileItem::new(id)
            .with("title", title)
            .with("text", text);
        p.date = date.map(str::to_string);
        p
    }

    #[test]
    fn lamp6_copies_the_previous_subject_and_the_closest_one() {
        let mut q = LampQuestion::new(
            "q",
            "Generate a subject for the following email: Please review the budget draft.",
        );
        q.profile = vec![
            item(
                "1",
                Some("2001-03-04"),
                "Budget draft v1",
                "the budget draft is attached",
            ),
            item("2", Some("2001-05-01"), "Lunch?", "are you free for lunch"),
            item("3", Some("2001-01-01"), "", "no subject here"),
        ];
        let ex = lamp_example(LampTask::Lamp6, &q).unwrap();
        assert_eq!(ex.input, "Please review the budget draft.");
        let b = lamp_baselines(LampTask::Lamp6, 10, &["Budget".to_string()]).unwrap();
        let answers: Vec<String> = b.iter().map(|b| b.answer(&ex).unwrap().0).collect();
        assert_eq!(
            answers,
            vec![
                "Please review the budget draft.",
                "Please review the budget draft.",
                "Budget",
                "Lunch?",
                "Budget draft v1"
            ]
        );
    }

    #[test]
    fn undated_profiles_empty_profiles_and_bad_inputs() {
        // No dates: the first item in profile order counts as the latest.
        let mut q = LampQuestion::new("q", "Generate a headline for the following article: A.");
        q.profile = vec![
            item("1", None, "First", "x"),
            item("2", None, "Second", "y"),
        ];
        let ex = lamp_example(LampTask::Lamp4, &q).unwrap();
        assert_eq!(
            Predictor::Latest.predict(&ex).unwrap().as_deref(),
            Some("First")
        );
        let empty = lamp_example(
            LampTask::Lamp4,
            &LampQuestion::new("e", "Generate a headline for the following article: B."),
        )
        .unwrap();
        assert_eq!(Predictor::Latest.predict(&empty).unwrap(), None);
        let bad = LampQuestion::new("b", "no marker here");
        assert!(lamp_example(LampTask::Lamp4, &bad).is_err());
        assert!(lamp_example(LampTask::Lamp2, &q).is_err());
        assert_eq!(date_number("2020-01-02"), Some(20200102));
        assert_eq!(date_number("2020-1-2"), None);
    }

    #[test]
    fn lamp3_ratings_fall_back_to_the_validation_constant() {
        let mut q = LampQuestion::new("q", "What is the score of the following review: fine");
        q.profile = vec![
            LampProfileItem::new("1")
                .with("text", "a")
                .with("score", "2"),
            LampProfileItem::new("2")
                .with("text", "b")
                .with("score", "4"),
        ];
        let ex = lamp_example(LampTask::Lamp3, &q).unwrap();
        let val = ["5".to_string(), "5".to_string(), "4".to_string()];
        let b = lamp_baselines(LampTask::Lamp3, 10, &val).unwrap();
        let get = |name: &str, ex: &Example| {
            b.iter()
                .find(|b| b.name == name)
                .unwrap()
                .answer(ex)
                .unwrap()
                .0
        };
        assert_eq!(get("user_mean", &ex), "3");
        assert_eq!(get("user_mode", &ex), "4");
        assert_eq!(get("const_val", &ex), "5");
        let alone = lamp_example(LampTask::Lamp3, &LampQuestion::new("q", "review: ok")).unwrap();
        assert_eq!(get("user_mean", &alone), "5");
        // The mean is rounded to a label, halves up.
        for (scores, mean) in [(&["4", "5"][..], "5"), (&["4", "4", "5"][..], "4")] {
            let mut q = LampQuestion::new("q", "review: ok");
            q.profile = scores
                .iter()
                .map(|s| {
                    LampProfileItem::new("p")
                        .with("text", "x")
                        .with("score", *s)
                })
                .collect();
            assert_eq!(
                get("user_mean", &lamp_example(LampTask::Lamp3, &q).unwrap()),
                mean
            );
        }
    }
}
