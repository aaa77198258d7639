//! The shipped Punkt parameters equal NLTK's `punkt_tab/english` (the model nltk 3.9.1's
//! `word_tokenize` uses). Needs the shared data folder; fails loudly when it is missing.

mod common;
use pgraphrag_text::{Language, PunktParameters, punkt::parameters};

#[test]
fn english_parameters_equal_nltk_punkt_tab() {
    let dir = common::data_dir().join("nltk/tokenizers/punkt_tab/english");
    assert!(
        dir.is_dir(),
        "missing {}: set PGRAPHRAG_DATA to the shared data folder (see docs/text.md)",
        dir.display()
    );
    let nltk = PunktParameters::from_punkt_tab_dir(&dir).expect("load punkt_tab/english");
    let ours = parameters(Language::English);
    assert_eq!(ours.abbrev_types, nltk.abbrev_types, "abbrev_types differ");
    assert_eq!(ours.collocations, nltk.collocations, "collocations differ");
    assert_eq!(
        ours.sent_starters, nltk.sent_starters,
        "sent_starters differ"
    );
    assert_eq!(
        ours.ortho_context, nltk.ortho_context,
        "ortho_context differs"
    );
    assert_eq!(
        (
            ours.abbrev_types.len(),
            ours.sent_starters.len(),
            ours.collocations.len(),
            ours.ortho_context.len()
        ),
        (156, 39, 37, 20366)
    );
}

#[test]
fn portuguese_parameters_load() {
    let p = parameters(Language::Portuguese);
    assert_eq!(
        (
            p.abbrev_types.len(),
            p.sent_starters.len(),
            p.collocations.len(),
            p.ortho_context.len()
        ),
        (72, 40, 5, 30167)
    );
    assert!(p.abbrev_types.contains("sr") && p.abbrev_types.contains("dr"));
}
