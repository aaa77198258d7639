//! The immediate context (FirstKCharacters, Li et al. 2023 l.67–68) on multi-byte text, and the
//! ranking stage with its 2,500-character cut (l.78–90, 200) over real BM25.
use pgraphrag_stages::multistage::{
    ContextCut, ContextRanker, FirstKCharacters, ImmediateContext, LastEntry, PAPER_MAX_CHARS,
    PastDoc, RankDocBM25, RecentDoc,
};

#[test]
fn first_k_characters_counts_unicode_scalar_values() {
    let f = FirstKCharacters::paper();
    // 149 three-byte characters in the title, the joiner, then the body: exactly 150 characters.
    let title = "語".repeat(149);
    let x = f.context(Some(&title), "本文");
    assert_eq!(x.chars().count(), 150);
    assert_eq!(x, format!("{title}\n"));
    // A decomposed é is two scalar values (e + U+0301) and may be cut between them, as Python's
    // text[:k] does; an emoji with a skin-tone modifier is two as well.
    let body = format!("{}e\u{301}", "a".repeat(149));
    assert_eq!(f.context(None, &body), format!("{}e", "a".repeat(149)));
    let body = format!("{}👍🏽", "a".repeat(149));
    assert_eq!(f.context(None, &body), format!("{}👍", "a".repeat(149)));
    // Four-byte characters throughout: 150 of them, 600 bytes, never split.
    let body = "𝄞".repeat(400);
    let x = f.context(None, &body);
    assert_eq!((x.chars().count(), x.len()), (150, 600));
    // Short documents are kept whole; a title-only document is its title.
    assert_eq!(f.context(Some("Re: lunch "), "Sure."), "Re: lunch\nSure.");
    assert_eq!(f.context(Some("Re: lunch"), ""), "Re: lunch\n");
    assert_eq!(f.context(Some(" \t"), "Body."), "Body.");
    assert_eq!(f.contexts(&[(None, "a"), (Some("t"), "b")]), ["a", "t\nb"]);
}

fn long_docs() -> Vec<PastDoc> {
    // Four documents of 1,000 characters each (two-byte characters in the third), oldest first.
    vec![
        PastDoc::new("d0", 100, "a".repeat(1000)),
        PastDoc::new("d1", 200, "b".repeat(1000)),
        PastDoc::new("d2", 300, "é".repeat(1000)),
        PastDoc::new("d3", 400, "d".repeat(1000)),
    ]
}

#[test]
fn the_cut_is_2500_characters_joiners_included() {
    let past = long_docs();
    let r = RecentDoc
        .ranked_context("", &past, &ContextCut::paper())
        .unwrap();
    // d3 (1,000) + "\n\n" + d2 (1,000) + "\n\n" + 496 characters of d1 = 2,500.
    assert_eq!(r.text.chars().count(), PAPER_MAX_CHARS);
    assert_eq!(r.entries.len(), 3);
    assert_eq!(r.entries[2].text, "b".repeat(496));
    assert!(r.truncated);
    assert_eq!(r.dropped, 1);
    assert_eq!(
        r.text,
        format!(
            "{}\n\n{}\n\n{}",
            "d".repeat(1000),
            "é".repeat(1000),
            "b".repeat(496)
        )
    );
    // Whole entries only: d3 and d2.
    let whole = RecentDoc
        .ranked_context("", &past, &ContextCut::paper().last_entry(LastEntry::Drop))
        .unwrap();
    assert_eq!(whole.text.chars().count(), 2002);
    assert_eq!(
        (whole.entries.len(), whole.truncated, whole.dropped),
        (2, false, 2)
    );
    // Another joiner counts too: 1,000 + 5 + 1,000 + 5 + 490.
    let r = RecentDoc
        .ranked_context("", &past, &ContextCut::paper().joiner("\n---\n"))
        .unwrap();
    assert_eq!(r.entries[2].text.chars().count(), 490);
    assert_eq!(r.text.chars().count(), 2500);
}

#[test]
fn bm25_ranks_by_the_immediate_context() {
    let past = vec![
        PastDoc::new("m1", 1, "The quarterly budget review is on Monday."),
        PastDoc::new("m2", 2, "Lunch on Friday at the new place downtown."),
        PastDoc::new("m3", 3, "Budget numbers attached and the budget is tight."),
        PastDoc::new("m4", 4, "Happy birthday Sam!"),
        PastDoc::new("m5", 5, "Gym at noon."),
        PastDoc::new("m6", 6, "Coffee later?"),
    ];
    let x = FirstKCharacters::paper().context(Some("Budget"), "the budget for next year");
    assert_eq!(x, "Budget\nthe budget for next year");
    let ranked = RankDocBM25::bm25().rank(&x, &past).unwrap();
    let ids: Vec<&str> = ranked.iter().map(|e| past[e.doc].doc_id.as_str()).collect();
    // rank_bm25 idf: budget is in 2 of 6 mails, ln(4.5 / 2.5) > 0; "the" in 3 of 6,
    // ln(3.5 / 3.5) = 0; the other query words in none. m3 says budget twice, m1 once; the rest
    // score 0 and follow by recency.
    assert_eq!(ids, ["m3", "m1", "m6", "m5", "m4", "m2"]);
    assert!(ranked[0].score > ranked[1].score && ranked[2].score == Some(0.0));
    assert!(ranked.iter().all(|e| e.snippet.is_none()));
    let cut = RankDocBM25::bm25()
        .ranked_context(&x, &past, &ContextCut::new(60))
        .unwrap();
    // 48 characters, the blank line, then 10 of m1.
    assert_eq!(
        cut.text,
        "Budget numbers attached and the budget is tight.\n\nThe quarte"
    );
    assert_eq!(
        (cut.entries.len(), cut.truncated, cut.dropped),
        (2, true, 4)
    );
}

#[cfg(feature = "dense")]
#[test]
fn snippet_rankers_over_bm25() {
    use pgraphrag_retrieval::{Bm25Builder, Bm25Retriever};
    use pgraphrag_stages::multistage::{RankDocBySnpt, RankSnippet};
    // Each document: two snippets (a 260-character filler group, then one topical sentence).
    let filler = "Nothing much happened here. ".repeat(9); // 9 × 28 − 1 = 251 characters
    let past = vec![
        PastDoc::new("a", 1, format!("{filler}We hiked to the glacier lake.")),
        PastDoc::new("b", 2, format!("{filler}The bakery sells rye bread.")),
        PastDoc::new(
            "c",
            3,
            "Glacier lake, glacier ice: a glacier trip.".to_string(),
        ),
    ];
    let bm25 = || Bm25Retriever::pgraphrag().with_tie_order(pgraphrag_core::TieOrder::InputOrder);
    let snippets = RankSnippet::new(bm25())
        .rank("glacier lake", &past)
        .unwrap();
    // c's only snippet says glacier three times, then a's second snippet.
    assert_eq!(
        snippets
            .iter()
            .take(2)
            .map(|e| (e.doc, e.snippet))
            .collect::<Vec<_>>(),
        [(2, Some(0)), (0, Some(1))]
    );
    assert_eq!(snippets.len(), 5);
    let docs = RankDocBySnpt::by_snippets(bm25())
        .rank("glacier lake", &past)
        .unwrap();
    assert_eq!(docs.iter().map(|e| e.doc).collect::<Vec<_>>(), [2, 0, 1]);
    assert!(docs.iter().all(|e| e.snippet.is_none()));
    // The snippet entries through the cut, then back into snippets for the weak label.
    let ctx = RankSnippet::new(bm25())
        .ranked_context("glacier lake", &past, &ContextCut::paper())
        .unwrap();
    assert_eq!(ctx.snippets().len(), 5);
    assert_eq!(ctx.snippets()[1], "We hiked to the glacier lake.");
}
