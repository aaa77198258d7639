//! The weak-label builders of the multistage pipeline (Li et al. 2023, l.104–106 and 122–130) on
//! hand-made cases whose answers are worked out in the comments: ties, a snippet used once only,
//! repeated candidate snippets, duplicate gold snippets; identical words, WordNet synonyms (the
//! workspace's WordNet 3.0 in `models/wordnet`) and word vectors.
use std::collections::HashMap;
use std::path::PathBuf;

use pgraphrag_metrics::wordnet::WordNet;
use pgraphrag_retrieval::Bm25Retriever;
use pgraphrag_stages::multistage::{
    ContextCut, ContextRanker, Idf, NoSynonyms, PastDoc, RankDocBM25, RetrieverSimilarity,
    SnippetSimilarity, WordFilter, WordMatcher, gold_snippets, summary_weak_label,
    synthesis_weak_label, words,
};

/// Jaccard similarity of the two texts' word sets: a real similarity whose values are easy to
/// work out by hand.
fn jaccard(a: &str, b: &str) -> f64 {
    let a: std::collections::HashSet<String> = words(a).into_iter().collect();
    let b: std::collections::HashSet<String> = words(b).into_iter().collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

#[test]
fn equally_similar_candidates_go_to_the_earliest() {
    // "red apple" vs "red car" = 1/3, vs "green apple" = 1/3: a tie; the earlier one wins.
    let l = summary_weak_label(&["red apple"], &["red car", "green apple"], &jaccard, " ").unwrap();
    assert_eq!(l.picks, [Some(0)]);
    // Reversed candidate order: still the earliest.
    let l = summary_weak_label(&["red apple"], &["green apple", "red car"], &jaccard, " ").unwrap();
    assert_eq!((l.picks, l.text.as_str()), (vec![Some(0)], "green apple"));
}

#[test]
fn a_snippet_is_used_once_and_the_next_best_is_taken() {
    // Both gold snippets like "red apple" best (2/3 and 2/3 vs 0 for "blue sky"): the first takes
    // it, the second falls back to the next highest score, "blue sky" (0).
    let l = summary_weak_label(
        &["red apple pie", "red apple tart"],
        &["red apple", "blue sky"],
        &jaccard,
        " ",
    )
    .unwrap();
    assert_eq!(l.picks, [Some(0), Some(1)]);
    assert_eq!(l.text, "red apple blue sky");
    // A third gold snippet finds every candidate used: it selects nothing.
    let l = summary_weak_label(&["a", "b", "c"], &["a", "b"], &jaccard, " ").unwrap();
    assert_eq!(l.picks, [Some(0), Some(1), None]);
    assert_eq!(l.text, "a b");
}

#[test]
fn a_repeated_candidate_text_enters_the_label_once() {
    // Candidates 0 and 2 are the same text (one sentence in two past documents). Gold 0 takes
    // candidate 0; for gold 1 candidate 2 (score 1/2) counts as already in the list, so the
    // next best, "blue sky" (0), is taken.
    let cands = ["red apple", "blue sky", "red apple"];
    let l = summary_weak_label(&["red apple", "red apple x"], &cands, &jaccard, "|").unwrap();
    assert_eq!(l.picks, [Some(0), Some(1)]);
    assert_eq!(l.text, "red apple|blue sky");
}

#[test]
fn duplicate_gold_snippets_take_different_candidates() {
    // "tea time" twice: the first takes the identical candidate (1), the second the next best,
    // "tea" (1/2), not "coffee" (0).
    let l = summary_weak_label(
        &["tea time", "tea time"],
        &["coffee", "tea time", "tea"],
        &jaccard,
        " ",
    )
    .unwrap();
    assert_eq!(l.picks, [Some(1), Some(2)]);
    assert_eq!(l.text, "tea time tea");
}

/// A gold document of two snippets, the first about delta/epsilon, the second about
/// alpha/beta: nine 28-character sentences span 260 characters (eight: 231), nine 27-character
/// ones 251 (eight: 223), so each group is one snippet of at least 250 characters. Three past
/// documents.
fn delta_alpha() -> (String, Vec<PastDoc>) {
    let gold = format!(
        "{}{}",
        "Delta epsilon zeta are here. ".repeat(9),
        "Alpha beta gamma are there. ".repeat(9)
    );
    let past = vec![
        PastDoc::new("a", 1, "Alpha beta gamma."),
        PastDoc::new("b", 2, "Delta epsilon zeta."),
        PastDoc::new("c", 3, "Omega psi chi."),
    ];
    (gold, past)
}

#[test]
fn the_label_follows_the_gold_snippets_order_with_bm25_similarity() {
    let (gold, past) = delta_alpha();
    let gold = gold_snippets(&gold);
    assert_eq!(gold.len(), 2, "{gold:?}");
    let ranked = RankDocBM25::bm25()
        .ranked_context("alpha", &past, &ContextCut::paper())
        .unwrap();
    // Ranked: the alpha document first (it matches the query), then the others newest first.
    assert_eq!(
        ranked.text,
        "Alpha beta gamma.\n\nOmega psi chi.\n\nDelta epsilon zeta."
    );
    let cands = ranked.snippets();
    let gold: Vec<&str> = gold.iter().map(String::as_str).collect();
    let cands: Vec<&str> = cands.iter().map(String::as_str).collect();
    let sim = RetrieverSimilarity(Bm25Retriever::pgraphrag());
    let l = summary_weak_label(&gold, &cands, &sim, " ").unwrap();
    assert_eq!(l.picks, [Some(2), Some(0)]);
    assert_eq!(l.text, "Delta epsilon zeta. Alpha beta gamma.");
}

#[cfg(feature = "dense")]
#[test]
fn the_label_with_the_dense_retrievers_embeddings() {
    use pgraphrag_retrieval::dense::DenseRetriever;
    use pgraphrag_stages::multistage::DenseSimilarity;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/all-MiniLM-L6-v2");
    if !dir.join("config.json").is_file() {
        let msg = format!(
            "MiniLM is missing at {} (scripts/fetch-minilm.sh)",
            dir.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("SKIPPED: {msg}");
        return;
    }
    let dense = DenseRetriever::load(&dir).unwrap();
    let (gold, past) = delta_alpha();
    let ranked = pgraphrag_stages::multistage::RankDocs::new(&dense)
        .ranked_context("alpha beta", &past, &ContextCut::paper())
        .unwrap();
    assert_eq!(ranked.entries[0].doc, 0, "{ranked:?}");
    let gold = gold_snippets(&gold);
    let cands = ranked.snippets();
    let gold: Vec<&str> = gold.iter().map(String::as_str).collect();
    let cands: Vec<&str> = cands.iter().map(String::as_str).collect();
    let l = summary_weak_label(&gold, &cands, &RetrieverSimilarity(&dense), " ").unwrap();
    assert_eq!(l.text, "Delta epsilon zeta. Alpha beta gamma.");
    // The fast path embeds each text once and gives the very same scores and label.
    let fast = DenseSimilarity(&dense);
    assert_eq!(
        fast.matrix(&gold, &cands).unwrap(),
        RetrieverSimilarity(&dense).matrix(&gold, &cands).unwrap()
    );
    assert_eq!(summary_weak_label(&gold, &cands, &fast, " ").unwrap(), l);
}

/// An IDF table over ten documents: `film`, `movie`, `popcorn`, `snack`, `night`, `tea` in one
/// each (IDF ln 10 ≈ 2.30), `cinema` in two (ln 5 ≈ 1.61), `long` in five (ln 2 ≈ 0.69 < 1.5).
fn idf() -> Idf {
    Idf::from_documents([
        "film long",
        "movie long",
        "popcorn long",
        "snack long",
        "night long",
        "cinema tea",
        "cinema",
        "x",
        "y",
        "z",
    ])
    .unwrap()
}

#[test]
fn synthesis_identical_words_counted_by_gold_occurrences() {
    let idf = idf();
    let filter = WordFilter::paper(&idf);
    // Gold: cinema ×1, night ×2, long ×1 (IDF 0.69: skipped), the/was/at: stopwords.
    let gold = "The night was long at the cinema, a long night.";
    let ranked = "Night at the cinema; long queue, cinema night.";
    let l = synthesis_weak_label(gold, ranked, &[], &filter, &WordMatcher::new(), None).unwrap();
    // night: 2 gold occurrences; cinema: 1. "long" is skipped on both sides; "queue" has no
    // counterpart. Repeats in `ranked` add nothing.
    assert_eq!(l.text, "night, cinema");
    assert_eq!(l.words[0].1, 2);
    assert_eq!(l.words[1].1, 1);
    assert!((l.words[1].2 - 5f64.ln()).abs() < 1e-12);
}

#[test]
fn synthesis_ties_on_count_go_to_the_higher_idf() {
    let idf = idf();
    // cinema (IDF 1.61) comes first in `ranked`, night (2.30) second; both matched once.
    let l = synthesis_weak_label(
        "cinema night",
        "cinema night",
        &[],
        &WordFilter::paper(&idf),
        &WordMatcher::new(),
        None,
    )
    .unwrap();
    assert_eq!(l.text, "night, cinema");
    // Equal counts and equal IDF: first occurrence in `ranked`.
    let l = synthesis_weak_label(
        "tea film",
        "film tea",
        &[],
        &WordFilter::paper(&idf),
        &WordMatcher::new(),
        Some(1),
    )
    .unwrap();
    assert_eq!(l.text, "film");
}

#[test]
fn synthesis_word_vectors_match_within_the_distance() {
    let idf = idf();
    let vectors: HashMap<String, Vec<f32>> = [
        ("snack".to_string(), vec![0.0, 0.0, 0.0]),
        ("popcorn".to_string(), vec![2.0, 2.0, 1.0]), // distance 3 from snack
        ("night".to_string(), vec![4.0, 0.0, 0.0]),   // distance 4 from snack: not < 4
    ]
    .into();
    let gold = "A snack.";
    let ranked = "Popcorn at night.";
    let filter = WordFilter::paper(&idf);
    let m = WordMatcher::new().vectors(&vectors, 4.0);
    let l = synthesis_weak_label(gold, ranked, &[], &filter, &m, None).unwrap();
    assert_eq!(l.text, "popcorn");
    // Without vectors (GloVe is not shipped) only identical words and synonyms match.
    let l = synthesis_weak_label(gold, ranked, &[], &filter, &WordMatcher::new(), None).unwrap();
    assert_eq!(l.text, "");
    // Vectors of different lengths are an error naming both words.
    let bad: HashMap<String, Vec<f32>> = [
        ("snack".to_string(), vec![0.0]),
        ("popcorn".to_string(), vec![0.0, 1.0]),
    ]
    .into();
    let e = synthesis_weak_label(
        gold,
        ranked,
        &[],
        &filter,
        &WordMatcher::new().vectors(&bad, 4.0),
        None,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("\"snack\"") && e.to_string().contains("\"popcorn\""),
        "{e}"
    );
}

fn wordnet() -> Option<&'static WordNet> {
    let dirs = pgraphrag_metrics::wordnet::search_paths(
        |k| std::env::var_os(k),
        &[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")],
    );
    match pgraphrag_metrics::wordnet::find(&dirs) {
        Ok(dir) => Some(WordNet::global_in(&dir).unwrap()),
        Err(e) => {
            // CI fetches WordNet (scripts/test.sh): there a missing WordNet is a failure.
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{e}");
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

#[test]
fn synthesis_wordnet_synonyms_match() {
    let Some(wn) = wordnet() else { return };
    let idf = idf();
    let filter = WordFilter::paper(&idf);
    // film and movie share WordNet's synset movie.n.01; gold says "film" twice.
    let gold = "The film, the whole film.";
    let ranked = "A movie with popcorn.";
    let with = WordMatcher::new().synonyms(wn);
    let l = synthesis_weak_label(gold, ranked, &[], &filter, &with, None).unwrap();
    assert_eq!(l.text, "movie");
    assert_eq!(l.words[0].1, 2);
    let without = WordMatcher::new().synonyms(&NoSynonyms);
    assert_eq!(
        synthesis_weak_label(gold, ranked, &[], &filter, &without, None)
            .unwrap()
            .text,
        ""
    );
    use pgraphrag_stages::multistage::Synonyms;
    assert!(wn.are_synonyms("movie", "film") && wn.are_synonyms("film", "movie"));
    assert!(
        wn.are_synonyms("novels", "novel"),
        "inflections of one lemma"
    );
    assert!(!wn.are_synonyms("film", "popcorn"));
}
