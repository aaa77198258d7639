//! Dense retrieval in one screen: rank one user's own profile reviews of a real PGraphRAG split
//! against the review they are about to write (its text is the query, as for the title task),
//! with all-MiniLM-L6-v2 mean pooling and cosine similarity, and print the top 3 with scores.
//!
//! ```sh
//! scripts/fetch-minilm.sh   # models/all-MiniLM-L6-v2
//! cargo run --release -p pgraphrag-examples --example dense_retrieval -- \
//!     [--split ../shared/data/pgraphrag/amazon_dev.json] [--model models/all-MiniLM-L6-v2] [--user N]
//! ```
//! The split defaults to `$PGRAPHRAG_DATA/pgraphrag/amazon_dev.json` (`PGRAPHRAG_DATA` defaults
//! to `../shared/data`); the user to the first one with at least four reviews.
use std::path::PathBuf;

use anyhow::{Context, bail};
use pgraphrag_core::{Retriever, Task};
use pgraphrag_data::{load_split, pgraphrag_split_path};
use pgraphrag_retrieval::dense::DenseRetriever;

fn main() -> anyhow::Result<()> {
    let data = std::env::var_os("PGRAPHRAG_DATA").map_or("../shared/data".into(), PathBuf::from);
    let mut split_path = pgraphrag_split_path(&data, "amazon", "dev");
    let mut model_dir = PathBuf::from("models/all-MiniLM-L6-v2");
    let mut user: Option<usize> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().with_context(|| format!("{a} needs a value"))?;
        match a.as_str() {
            "--split" => split_path = v.into(),
            "--model" => model_dir = v.into(),
            "--user" => user = Some(v.parse()?),
            _ => bail!("usage: dense_retrieval [--split SPLIT.json] [--model DIR] [--user N]"),
        }
    }
    let split = load_split(&split_path)?;
    let retriever = DenseRetriever::load(&model_dir)
        .with_context(|| format!("loading {} (scripts/fetch-minilm.sh)", model_dir.display()))?;

    let i = match user {
        Some(i) => i,
        None => (split.users.iter().position(|u| u.profile.len() >= 4))
            .context("no user with four reviews")?,
    };
    let u = split.users.get(i).context("no such user")?;
    let (target, profile) = u.profile.split_first().context("a user without reviews")?;
    let query = Task::Title.query(target.title.as_deref(), target.text.as_deref());
    let docs: Vec<String> = (profile.iter())
        .map(|r| {
            format!(
                "{} {}",
                r.title.as_deref().unwrap_or(""),
                r.text.as_deref().unwrap_or("")
            )
        })
        .collect();
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let top = retriever.rank(&query, &refs, Some(3))?;

    let short: String = (query.chars().take(60))
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    println!(
        "user {} ({} profile reviews), query: {short}...",
        u.id,
        docs.len()
    );
    for (rank, hit) in top.iter().enumerate() {
        let title = profile[hit.item].title.as_deref().unwrap_or("");
        println!("{}. {:.4}  {title}", rank + 1, hit.score);
    }
    Ok(())
}
