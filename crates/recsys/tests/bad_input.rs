//! Bad input: typed errors naming the file and line (or a documented, counted skip), never a panic.
use std::path::Path;

use pgraphrag_recsys::{
    CandidateSampler, Error, Ml1m, Ml100k, Popularity, PopularityGate, RecboleError, Take,
    leave_one_out,
};

const ITEM: &str = "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n\
                    1\tToy Story\t1995\tAnimation\n2\tHeat\t1995\tAction\n";
const INTER: &str =
    "user_id:token\titem_id:token\trating:float\ttimestamp:float\n7\t1\t4\t10\n7\t2\t3\t11\n";
const KG: &str = "head_id:token\trelation_id:token\ttail_id:token\nm.1\tfilm.film.genre\tm.2\n";
const LINK: &str = "item_id:token\tentity_id:token\n1\tm.1\n";

fn ml100k(dir: &Path, item: &str, inter: &str, kg: &str, link: &str) -> Result<Ml100k, Error> {
    for (n, s) in [("item", item), ("inter", inter), ("kg", kg), ("link", link)] {
        std::fs::write(dir.join(format!("ml-100k.{n}")), s).unwrap();
    }
    Ml100k::load(dir)
}

const MOVIES: &[u8] = b"1::Toy Story (1995)::Animation\n2::Heat (1995)::Action\n3::Mis\xe9rables, Les (1995)::Drama\n";
const HEADER: &str = "user_id,history_movie_id,history_rating,movie_id,rating,timestamp\n";

fn ml1m(dir: &Path, movies: &[u8], rows: &[u8]) -> Result<Ml1m, Error> {
    std::fs::write(dir.join("movies.dat"), movies).unwrap();
    std::fs::write(dir.join("test_filtered.csv"), rows).unwrap();
    std::fs::write(dir.join("movies_id_name.txt"), "1\tToy Story\n").unwrap();
    Ml1m::load(dir)
}

fn rows(body: &str) -> Vec<u8> {
    format!("{HEADER}{body}").into_bytes()
}

#[test]
fn good_fixtures_load() {
    let d = tempfile::tempdir().unwrap();
    let ml = ml100k(d.path(), ITEM, INTER, KG, LINK).unwrap();
    assert_eq!((ml.interactions.len(), ml.triples.len()), (2, 1));
    let m = ml1m(
        d.path(),
        MOVIES,
        &rows("5,\"['1', '2']\",\"[1, 0]\",3,1,9\n"),
    )
    .unwrap();
    assert_eq!(m.movies[&3].title, "Misérables, Les");
}

#[test]
fn kg_line_with_wrong_field_count() {
    let d = tempfile::tempdir().unwrap();
    let kg = format!("{KG}m.1\tfilm.film.genre\n");
    let e = ml100k(d.path(), ITEM, INTER, &kg, LINK).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Recbole(RecboleError::Fields {
                line: 3,
                expected: 3,
                found: 2,
                ..
            })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("ml-100k.kg:3"), "{e}");
    let kg = format!("{KG}m.1\t\tm.3\n");
    let e = ml100k(d.path(), ITEM, INTER, &kg, LINK).unwrap_err();
    assert!(matches!(e, Error::Value { line: 3, .. }), "{e}");
}

#[test]
fn link_to_unknown_item_and_repeated_link() {
    let d = tempfile::tempdir().unwrap();
    let e = ml100k(d.path(), ITEM, INTER, KG, &format!("{LINK}99\tm.9\n")).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnknownItem {
                line: 3,
                item: 99,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("ml-100k.link:3") && e.to_string().contains("ml-100k.item"),
        "{e}"
    );
    let e = ml100k(d.path(), ITEM, INTER, KG, &format!("{LINK}1\tm.7\n")).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Duplicate {
                line: 3,
                first: 2,
                ..
            }
        ),
        "{e}"
    );
    let e = ml100k(d.path(), ITEM, INTER, KG, &format!("{LINK}x\tm.7\n")).unwrap_err();
    assert!(matches!(e, Error::Value { line: 3, .. }), "{e}");
}

#[test]
fn link_to_entity_outside_the_kg_is_a_counted_skip() {
    let d = tempfile::tempdir().unwrap();
    let ml = ml100k(d.path(), ITEM, INTER, KG, &format!("{LINK}2\tm.nowhere\n")).unwrap();
    let kg = pgraphrag_recsys::build_kg(&ml).unwrap();
    assert_eq!((kg.report.linked_items, kg.report.links_not_in_kg), (1, 1));
}

#[test]
fn interaction_with_unknown_item_or_bad_value() {
    let d = tempfile::tempdir().unwrap();
    let e = ml100k(d.path(), ITEM, &format!("{INTER}7\t5\t4\t12\n"), KG, LINK).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnknownItem {
                line: 4,
                item: 5,
                ..
            }
        ),
        "{e}"
    );
    let e = ml100k(
        d.path(),
        ITEM,
        &format!("{INTER}7\t1\tfive\t12\n"),
        KG,
        LINK,
    )
    .unwrap_err();
    assert!(matches!(e, Error::Value { line: 4, .. }), "{e}");
    let e = ml100k(d.path(), ITEM, "user_id:token\titem_id:token\n", KG, LINK).unwrap_err();
    assert!(
        matches!(e, Error::Recbole(RecboleError::MissingColumn { .. })),
        "{e}"
    );
}

#[test]
fn non_utf8_bytes() {
    let d = tempfile::tempdir().unwrap();
    // Latin-1 bytes in a RecBole file (UTF-8 by contract): a typed error naming the line.
    let mut bytes = ITEM.as_bytes().to_vec();
    bytes.extend_from_slice(b"3\tCaf\xe9\t1993\tComedy\n");
    for (n, s) in [("inter", INTER), ("kg", KG), ("link", LINK)] {
        std::fs::write(d.path().join(format!("ml-100k.{n}")), s).unwrap();
    }
    std::fs::write(d.path().join("ml-100k.item"), &bytes).unwrap();
    let e = Ml100k::load(d.path()).unwrap_err();
    assert!(
        matches!(e, Error::Recbole(RecboleError::NotUtf8 { line: 4, .. })),
        "{e}"
    );
    // movies.dat is decoded as latin-1 (checked in good_fixtures_load); the CSV is UTF-8.
    let mut csv = rows("5,\"['1', '2']\",\"[1, 0]\",3,1,9\n");
    csv.extend_from_slice(b"6,\"['1']\",\"[1]\",2,1,9\xff\n");
    let e = ml1m(d.path(), MOVIES, &csv).unwrap_err();
    assert!(
        matches!(e, Error::Recbole(RecboleError::NotUtf8 { line: 3, .. })),
        "{e}"
    );
}

/// Whether an error is the expected one.
type Check = fn(&Error) -> bool;

#[test]
fn ml1m_row_errors() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(&str, Check); 7] = [
        ("5,\"['1', '9']\",\"[1, 0]\",3,1,9\n", |e| {
            matches!(
                e,
                Error::UnknownItem {
                    line: 2,
                    item: 9,
                    ..
                }
            )
        }),
        ("5,\"['1', '2']\",\"[1, 0]\",9,1,9\n", |e| {
            matches!(
                e,
                Error::UnknownItem {
                    line: 2,
                    item: 9,
                    ..
                }
            )
        }),
        ("5,\"[]\",\"[]\",3,1,9\n", |e| {
            matches!(e, Error::EmptyHistory { line: 2, .. })
        }),
        ("5,\"['1', '3']\",\"[1, 0]\",3,1,9\n", |e| {
            matches!(
                e,
                Error::TargetInHistory {
                    line: 2,
                    item: 3,
                    ..
                }
            )
        }),
        ("5,\"['1', '2']\",\"[1]\",3,1,9\n", |e| {
            matches!(e, Error::Value { line: 2, .. })
        }),
        ("5,\"['1', '2']\",\"[1, 0]\",3,1\n", |e| {
            matches!(
                e,
                Error::Recbole(RecboleError::Fields {
                    line: 2,
                    expected: 6,
                    found: 5,
                    ..
                })
            )
        }),
        ("5,\"1, 2\",\"[1, 0]\",3,1,9\n", |e| {
            matches!(e, Error::Value { line: 2, .. })
        }),
    ];
    for (body, ok) in cases {
        let e = ml1m(d.path(), MOVIES, &rows(body)).unwrap_err();
        assert!(ok(&e), "{body}: {e}");
        assert!(e.to_string().contains("test_filtered.csv:2"), "{e}");
    }
    let e = ml1m(d.path(), b"1::No year::Drama\n", &rows("")).unwrap_err();
    assert!(matches!(e, Error::Value { line: 1, .. }), "{e}");
    let e = ml1m(d.path(), b"1::Heat (1995)\n", &rows("")).unwrap_err();
    assert!(
        matches!(e, Error::Recbole(RecboleError::Fields { line: 1, .. })),
        "{e}"
    );
    let e = Ml1m::load(&d.path().join("missing")).unwrap_err();
    assert!(matches!(e, Error::Recbole(RecboleError::Io { .. })), "{e}");
}

#[test]
fn in_memory_misuse_is_typed() {
    // An empty history and a history item outside the catalogue, given to the gate.
    let pop = Popularity::count(1..=3, [1, 2]).unwrap();
    assert!(
        PopularityGate::paper()
            .select(&pop, &[])
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        PopularityGate::paper().select(&pop, &[7]),
        Err(Error::NotInCatalogue { item: 7, .. })
    ));
    assert!(matches!(
        PopularityGate::BelowPercentile { p: 1.5 }.select(&pop, &[1]),
        Err(Error::Option { .. })
    ));
    assert!(matches!(
        PopularityGate::Ascending {
            take: Take::Ratio(f64::NAN)
        }
        .select(&pop, &[1]),
        Err(Error::Option { .. })
    ));
    // Too small a catalogue for M = 20.
    let s = CandidateSampler::new(1..=10, 20, 1).unwrap();
    assert!(matches!(
        s.sample(0, 1, 1, &Default::default()),
        Err(Error::TooFewCandidates { .. })
    ));
    // Users too short for a history are a counted skip.
    assert_eq!(leave_one_out(&[], 10).rows.len(), 0);
}

#[test]
fn a_damaged_score_cache_entry_is_an_error_not_a_rescore() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scores.sqlite");
    let cache = pgraphrag_recsys::ScoreCache::open(&path).unwrap();
    // Two scores stored under three letters: what a damaged or hand-edited file holds.
    cache.put("m", &['A', 'B', 'C'], "p", &[0.1, 0.2]).unwrap();
    match cache.get("m", &['A', 'B', 'C'], "p") {
        Err(Error::ScoreOutput { problem }) => {
            assert!(problem.contains("scores.sqlite"), "{problem}");
            assert!(
                problem.contains("2 scores for the 3 letters ABC"),
                "{problem}"
            );
        }
        other => panic!("expected a ScoreOutput error, got {other:?}"),
    }
    assert_eq!(
        cache.get("m", &['A', 'B'], "p").unwrap(),
        None,
        "another letter set is another key"
    );
}
