//! Compose your own retriever: any type with one `scores` method plugs into PGraphRAG's profile
//! ranking. Here BM25 and a length prior are fused with reciprocal-rank fusion, and the result
//! ranks each user's neighbours on a real split.
//!
//! ```sh
//! cargo run -p pgraphrag-examples --example compose_your_own -- ../shared/data/pgraphrag/hotel_dev.json
//! ```
use anyhow::Context;
use pgraphrag_core::{Result, Retriever};
use pgraphrag_data::{IdPolicy, load_split};
use pgraphrag_graph::GraphOptions;
use pgraphrag_retrieval::dense::Rrf;
use pgraphrag_retrieval::profile::{ProfileOptions, ProfileRanker, Task, WithRetriever};
use pgraphrag_retrieval::sparse::Bm25Retriever;

/// Prefers longer reviews: a toy prior, five lines of code (ranking, ties in input order,
/// comes with the trait).
struct Longer;
impl Retriever for Longer {
    fn scores(&self, _query: &str, docs: &[&str]) -> Result<Vec<f64>> {
        Ok(docs.iter().map(|d| d.len() as f64).collect())
    }
}

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .context("usage: compose_your_own SPLIT.json")?;
    let split = load_split(path.as_ref())?;
    let graph = split.to_graph(GraphOptions::default(), IdPolicy::Normalize);
    let fused = Rrf::new(Bm25Retriever::pgraphrag(), Longer);
    let mut ranker = ProfileRanker::new(WithRetriever(fused), ProfileOptions::default());
    for user in split.users.iter().take(3) {
        let t = user.target().context("a user without reviews")?;
        let query = Task::Text.query(t.title.as_deref(), t.text.as_deref());
        let p = ranker.rank(&graph, &user.id, &IdPolicy::Normalize.apply(&t.pid), &query)?;
        println!("{} ({query}):", user.id);
        for h in &p.neighbors {
            let e = &h.entry;
            println!(
                "  {:.4}  {}",
                h.score.unwrap_or(f64::NAN),
                e.title.as_deref().unwrap_or("")
            );
        }
    }
    Ok(())
}
