//! The paper's four ablated variants of K-RagRec (appendix A.6, Figure 3) as settings: what
//! each changes in the retrieval and in how the knowledge reaches the LLM.

use pgraphrag_recsys::{Rerank, Retrieval};

/// K-RagRec or one of its ablated variants (the paper's appendix A.6).
///
/// ```
/// use pgraphrag_recsys::{Rerank, Retrieval};
/// use pgraphrag_train::Ablation;
/// assert_eq!(Ablation::Full.retrieval(), Retrieval::paper());
/// assert_eq!(Ablation::NoReranking.retrieval().rerank, Rerank::Off);
/// assert_eq!(Ablation::parse("-indexing")?.retrieval().ego_hops, 2);
/// assert!(Ablation::NoEncoding.facts_as_text());
/// assert_eq!(Ablation::NoPopularity.method(), "k-ragrec -popularity");
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ablation {
    /// K-RagRec itself: [`Retrieval::paper`], the sub-graphs encoded by the GNN.
    #[default]
    Full,
    /// "-Indexing": no GNN indexing; the PLM's vectors (hop 0) alone are searched, and each
    /// retrieved node is expanded to its second-order (2-hop) sub-graph.
    NoIndexing,
    /// "-Popularity": no popularity-selective retrieval; every history item is retrieved for
    /// ([`pgraphrag_recsys::PopularityGate::every_item`]).
    NoPopularity,
    /// "-Re-ranking": the retrieved sub-graphs go in directly, all of them ([`Rerank::Off`]).
    NoReranking,
    /// "-Encoding": no GNN encoding; a trainable soft prompt ([`crate::SoftPrompt`]) takes the
    /// graph tokens' place and the retrieved triples are added to the prompt as text.
    NoEncoding,
}

impl Ablation {
    /// Every variant, K-RagRec first.
    pub const ALL: [Ablation; 5] = [
        Ablation::Full,
        Ablation::NoIndexing,
        Ablation::NoPopularity,
        Ablation::NoReranking,
        Ablation::NoEncoding,
    ];

    /// The command-line name: `none`, `-indexing`, `-popularity`, `-re-ranking`,
    /// `-encoding` (the paper's labels, lower-case).
    pub fn name(self) -> &'static str {
        match self {
            Ablation::Full => "none",
            Ablation::NoIndexing => "-indexing",
            Ablation::NoPopularity => "-popularity",
            Ablation::NoReranking => "-re-ranking",
            Ablation::NoEncoding => "-encoding",
        }
    }

    /// The variant named `s` ([`Ablation::name`]; the leading `-` may be left out). Anything
    /// else is [`crate::TrainError::Config`], listing the names.
    pub fn parse(s: &str) -> crate::Result<Self> {
        let want = s.trim_start_matches('-');
        Ablation::ALL
            .into_iter()
            .find(|a| a.name().trim_start_matches('-') == want)
            .ok_or_else(|| {
                let names: Vec<&str> = Ablation::ALL.iter().map(|a| a.name()).collect();
                crate::TrainError::Config(format!(
                    "unknown ablation `{s}`; expected one of {}",
                    names.join(", ")
                ))
            })
    }

    /// The method name in rows files and result tables: `k-ragrec`, or `k-ragrec -popularity`
    /// and so on.
    pub fn method(self) -> String {
        match self {
            Ablation::Full => crate::KRAGREC_METHOD.to_string(),
            a => format!("{} {}", crate::KRAGREC_METHOD, a.name()),
        }
    }

    /// The retrieval settings: [`Retrieval::paper`] with the variant's change.
    pub fn retrieval(self) -> Retrieval {
        let paper = Retrieval::paper();
        match self {
            Ablation::Full | Ablation::NoEncoding => paper,
            Ablation::NoIndexing => Retrieval {
                hops: 0..=0,
                ego_hops: 2,
                ..paper
            },
            Ablation::NoPopularity => Retrieval {
                gate: pgraphrag_recsys::PopularityGate::every_item(),
                ..paper
            },
            Ablation::NoReranking => Retrieval {
                rerank: Rerank::Off,
                ..paper
            },
        }
    }

    /// Whether the retrieved triples go into the prompt as text ("-Encoding").
    pub fn facts_as_text(self) -> bool {
        self == Ablation::NoEncoding
    }

    /// The triples a row's prompt gets as text
    /// ([`crate::KragrecPrompt::example_with_facts`]): all of `triples` under "-Encoding",
    /// none otherwise.
    ///
    /// ```
    /// use pgraphrag_train::Ablation;
    /// let t = [["Heat".to_string(), "film genre".into(), "Crime".into()]];
    /// assert_eq!(Ablation::NoEncoding.prompt_facts(&t).len(), 1);
    /// assert!(Ablation::Full.prompt_facts(&t).is_empty());
    /// ```
    pub fn prompt_facts(self, triples: &[[String; 3]]) -> &[[String; 3]] {
        if self.facts_as_text() { triples } else { &[] }
    }
}
