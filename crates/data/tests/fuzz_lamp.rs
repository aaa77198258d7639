//! Fuzz target: LaMP's questions and outputs readers ([`parse_questions`], [`parse_outputs`])
//! on arbitrary bytes and on structured mutations (bit flips, JSON tokens spliced in,
//! truncations, repeated ranges) of a small questions file in both of LaMP's shapes (a list,
//! and the Avocado builder's `{"task", "golds"}` wrapping) and of an outputs file.
//!
//! Bad input must give a typed error naming the file, never a panic; what parses must serialize
//! and read back unchanged. Budget and `PGRAPHRAG_FUZZ_CASES`: see `support/fuzz.rs`.

use pgraphrag_data::Error;
use pgraphrag_data::lamp::{parse_outputs, parse_questions};
use proptest::prelude::*;

#[path = "support/fuzz.rs"]
mod fuzz;

const NAME: &str = "fuzz_lamp.json";

const JSON_TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"null",
    b"true",
    b"0",
    b"-0",
    b"1e999",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"1.5",
    b"\"\\ud800\"",
    b"\"\\u0000\"",
    b"\\",
    b"\"id\"",
    b"\"input\"",
    b"\"profile\"",
    b"\"golds\"",
    b"\"task\"",
    b"\"output\"",
    b"\"score\"",
    b"\"date\"",
    b"\"user_id\"",
    b"[]",
    b"{}",
    b"\"\"",
    b"\xff",
    b"\xe2\x80",
    b"\n",
];

const QUESTIONS: &str = r#"[{"id": "310", "input": "What is the score of the following review on a scale of 1 to 5? just answer with 1, 2, 3, 4, or 5 without further explanation. review: Works well, smells nice.",
 "profile": [{"id": "3100", "text": "Great soap", "score": 5, "date": "2019-03-01"}, {"id": "3101", "text": "Meh", "score": "2"}], "user_id": "u1"},
 {"id": "311", "input": "Generate a headline for the following article: Rain again", "profile": []}]"#;

const WRAPPED: &str = r#"{"task": "LaMP_6", "golds": [{"id": "600", "input": "Generate a subject for the following email: lunch?",
 "profile": [{"id": "6000", "title": "Re: lunch", "text": "Noon works."}]}]}"#;

const OUTPUTS: &str =
    r#"{"task": "LaMP_3", "golds": [{"id": "310", "output": "4"}, {"id": 311, "output": 5}]}"#;

fn check_questions(bytes: &[u8]) -> Result<(), TestCaseError> {
    match fuzz::no_panic(bytes, |b| parse_questions(b, NAME))? {
        Ok(qs) => {
            // The writers' serialization, in memory (write_questions adds only the atomic file).
            let b = serde_json::to_vec(&qs).unwrap();
            prop_assert_eq!(parse_questions(&b, NAME).unwrap(), qs);
        }
        Err(Error::Json { line, .. }) => prop_assert!(line >= 1),
        Err(e) => prop_assert!(e.to_string().starts_with(NAME), "{e}"),
    }
    Ok(())
}

fn check_outputs(bytes: &[u8]) -> Result<(), TestCaseError> {
    match fuzz::no_panic(bytes, |b| parse_outputs(b, NAME))? {
        Ok((_, golds)) => prop_assert!(golds.len() <= bytes.len()),
        Err(Error::Json { line, .. }) => prop_assert!(line >= 1),
        Err(e) => prop_assert!(e.to_string().starts_with(NAME), "{e}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config("lamp/bytes", 800_000))]
    #[test]
    fn lamp_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        check_questions(&bytes)?;
        check_outputs(&bytes)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("lamp/mutations", 400_000))]
    #[test]
    fn lamp_mutations(edits in fuzz::edits(8), which in 0..3u8) {
        match which {
            0 => check_questions(&fuzz::apply(QUESTIONS.as_bytes(), &edits, JSON_TOKENS))?,
            1 => check_questions(&fuzz::apply(WRAPPED.as_bytes(), &edits, JSON_TOKENS))?,
            _ => check_outputs(&fuzz::apply(OUTPUTS.as_bytes(), &edits, JSON_TOKENS))?,
        }
    }
}

#[test]
fn the_seeds_parse() {
    assert_eq!(
        parse_questions(QUESTIONS.as_bytes(), NAME).unwrap().len(),
        2
    );
    assert_eq!(
        parse_questions(WRAPPED.as_bytes(), NAME).unwrap()[0].profile[0].get("title"),
        Some("Re: lunch")
    );
    let (task, golds) = parse_outputs(OUTPUTS.as_bytes(), NAME).unwrap();
    assert_eq!(
        (
            task.as_str(),
            golds[1].id.as_str(),
            golds[1].output.as_str()
        ),
        ("LaMP_3", "311", "5")
    );
}
