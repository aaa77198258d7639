//! Context-independent keywords (Li et al. 2023, l.118) on a hand-made corpus whose IDFs are
//! computed by hand in the comments (`ln(N / df)`, natural logarithm).
use pgraphrag_stages::multistage::{
    Idf, IdfFormula, IdfScope, Keywords, PastDoc, Synthesizer, WordFilter, join_words,
};

/// Ten documents: tea in 1 (IDF ln 10 = 2.303), scones in 2 (ln 5 = 1.609), jam in 3
/// (ln 10/3 = 1.204 < 1.5), bread in 1 (2.303).
fn corpus() -> Idf {
    Idf::from_documents([
        "tea", "scones", "scones", "jam", "jam", "jam", "bread", "x", "y", "z",
    ])
    .unwrap()
}

#[test]
fn idf_by_hand() {
    let idf = corpus();
    for (w, want) in [
        ("tea", 10f64.ln()),
        ("scones", 5f64.ln()),
        ("jam", (10.0f64 / 3.0).ln()),
        ("bread", 10f64.ln()),
        ("never", 10f64.ln()), // unseen: counted as df = 1
    ] {
        assert!((idf.idf(w) - want).abs() < 1e-12, "{w}: {}", idf.idf(w));
    }
    let smooth = corpus().formula(IdfFormula::Smooth);
    // ln((1 + 10) / (1 + 3)) + 1
    assert!((smooth.idf("jam") - ((11.0f64 / 4.0).ln() + 1.0)).abs() < 1e-12);
}

#[test]
fn frequency_then_idf_then_first_occurrence() {
    let idf = corpus();
    let past = [
        PastDoc::new("1", 1, "Tea, scones and jam. Tea again, jam again."),
        PastDoc::new("2", 2, "Scones! Bread, bread, tea. Milk."),
    ];
    // Frequencies: tea 3, scones 2, jam 2, bread 2, again 2, and 1, milk 1.
    // Dropped: "and", "again" (stopwords), "milk" (frequency one), "jam" (IDF 1.204 < 1.5).
    // Sorted: tea (3); then frequency 2: bread (IDF 2.303) before scones (1.609).
    let k = Keywords::new(WordFilter::paper(&idf));
    let scored = k.scored(&past).unwrap();
    let names: Vec<&str> = scored.iter().map(|(w, _, _)| w.as_str()).collect();
    assert_eq!(names, ["tea", "bread", "scones"]);
    assert_eq!(
        scored.iter().map(|(_, f, _)| *f).collect::<Vec<_>>(),
        [3, 2, 2]
    );
    let words = k.important_words("ignored", "ignored", &past).unwrap();
    assert_eq!(join_words(&words), "tea, bread, scones");
}

#[test]
fn at_most_twenty_words() {
    // 25 distinct unseen words (IDF ln 10 each), each twice: ties on frequency and IDF, so the
    // first 20 by first occurrence.
    let idf = corpus();
    let vocab: Vec<String> = (0..25).map(|i| format!("w{i:02}x")).collect();
    let text = format!("{} {}", vocab.join(" "), vocab.join(" "));
    let past = [PastDoc::new("1", 1, text)];
    let k = Keywords::new(WordFilter::paper(&idf));
    let words = k.important_words("", "", &past).unwrap();
    assert_eq!(words, vocab[..20]);
}

#[test]
fn idf_over_the_authors_own_documents() {
    // The other reading: IDF over the past documents themselves. Five documents: "kayak" is in
    // one (ln 5 = 1.609, kept), "river" in two (ln 2.5 = 0.916, dropped).
    let past = [
        PastDoc::new("1", 1, "Kayak kayak on the river."),
        PastDoc::new("2", 2, "The river again."),
        PastDoc::new("3", 3, "Rain."),
        PastDoc::new("4", 4, "Sun."),
        PastDoc::new("5", 5, "Wind."),
    ];
    let own = Keywords::new(WordFilter::new(IdfScope::PastDocuments(IdfFormula::Ln)));
    assert_eq!(own.important_words("", "", &past).unwrap(), ["kayak"]);
    // With two past documents no word reaches 1.5 (ln 2 = 0.69): the reading's weakness.
    assert!(own.important_words("", "", &past[..2]).unwrap().is_empty());
    // No past documents: no IDF is defined.
    assert!(own.important_words("", "", &[]).is_err());
}
