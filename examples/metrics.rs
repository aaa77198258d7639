//! Scoring generations in one screen: ROUGE-1/L (rouge-score parity), METEOR (NLTK parity over
//! WordNet 3.0) and sentence BLEU (sacreBLEU parity) for a few prediction/reference pairs, then
//! corpus BLEU over all of them.
//!
//! ```sh
//! cargo run -p pgraphrag-examples --example metrics
//! ```
//! METEOR reads WordNet from the first folder that exists of `$WORDNET_DIR`, `models/wordnet`
//! (`scripts/fetch-wordnet.sh`) and `/usr/share/wordnet` (Debian's `wordnet-base`); without
//! one, the other metrics are printed with a line saying how to get it.
use std::path::PathBuf;

use pgraphrag_metrics::meteor::MeteorParams;
use pgraphrag_metrics::wordnet::WordNet;
use pgraphrag_metrics::{Meteor, Rouge, corpus_bleu, sentence_bleu};

const PAIRS: [(&str, &str); 3] = [
    (
        "The quick brown dog jumps on the log.",
        "The quick brown fox jumps over the lazy dog",
    ),
    ("Great soap, smells nice", "Smells great, nice soap"),
    ("Does the job", "Works as described"),
];

fn main() -> anyhow::Result<()> {
    let env = std::env::var_os("WORDNET_DIR").map(PathBuf::from);
    let mut dirs = env
        .into_iter()
        .chain(["models/wordnet", "/usr/share/wordnet"].map(PathBuf::from));
    let meteor = match dirs.find(|d| d.join("index.noun").exists()) {
        // Meteor holds a `&'static WordNet`: load it once for the whole program.
        Some(dir) => Some(Meteor::with_wordnet(
            Box::leak(Box::new(WordNet::load(&dir)?)),
            MeteorParams::default(),
        )),
        None => None,
    };
    let rouge = Rouge::default();

    println!("| prediction | reference | ROUGE-1 | ROUGE-L | METEOR | BLEU |");
    println!("|---|---|---:|---:|---:|---:|");
    for (p, r) in PAIRS {
        let s = rouge.score(p, r);
        let m = meteor.map_or("-".into(), |m| format!("{:.4}", m.score_str(p, r)));
        let b = sentence_bleu(p, &[r]).score;
        let (r1, rl) = (s.rouge1.fmeasure, s.rouge_l.fmeasure);
        println!("| {p} | {r} | {r1:.4} | {rl:.4} | {m} | {b:.2} |");
    }
    let (preds, refs): (Vec<&str>, Vec<&str>) = PAIRS.into_iter().unzip();
    println!("corpus BLEU: {:.2}", corpus_bleu(&preds, &refs)?.score);
    if meteor.is_none() {
        println!(
            "METEOR skipped: no WordNet; run scripts/fetch-wordnet.sh or apt-get install wordnet-base, or set WORDNET_DIR"
        );
    }
    Ok(())
}
