//! K-RagRec examples from a small real slice: ML-1M rows 0..40 with the ML-100K KG
//! (`models/corpora/ml-100k`, `scripts/fetch-corpora.sh`; the ML-1M slice at
//! `$PGRAPHRAG_DATA/movielens-1m`, default `../shared/data/movielens-1m`) and SmolLM2's
//! tokenizer (`models/SmolLM2-135M-Instruct.Q4_1.gguf`). Missing files fail the test. The
//! index is built with a small deterministic text hash instead of a sentence encoder, so the
//! test takes seconds; retrieval, caching, features, prompt and letters are the real code.

use std::path::PathBuf;

use pgraphrag_core::{Embeddings, Encoder, NoProgress};
use pgraphrag_recsys::{
    EvalData, ExactIndex, HopVectors, IndexOptions, KgRetriever, LETTERS, Ml1m, Ml100k,
    PromptStyle, Retrieval, build_kg, instruction,
};
use pgraphrag_train::{GraphFeatures, KragrecPrompt, RetrievalCache, retrieve_row};

#[path = "../../llm/tests/support/model.rs"]
mod model;

const DIM: usize = 8;

/// A deterministic 8-value text hash, L2-normalised.
struct Hash;
impl Encoder for Hash {
    fn encode(&self, texts: &[&str]) -> pgraphrag_core::Result<Embeddings> {
        let mut out = Vec::with_capacity(texts.len() * DIM);
        for t in texts {
            let mut v = [0f32; DIM];
            for (i, b) in t.bytes().enumerate() {
                v[(b as usize + i) % DIM] += ((b as f32) * 0.37 + i as f32).sin();
            }
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
            out.extend(v.iter().map(|x| x / n));
        }
        Embeddings::new(DIM, out)
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn need(p: PathBuf, what: &str) -> PathBuf {
    assert!(p.exists(), "{what} is missing at {}", p.display());
    p
}

#[test]
fn examples_from_real_ml1m_rows() {
    let ml100k = need(
        std::env::var_os("PGRAPHRAG_CORPORA")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join("models/corpora"))
            .join("ml-100k"),
        "ML-100K (scripts/fetch-corpora.sh)",
    );
    let ml1m = need(
        std::env::var_os("PGRAPHRAG_DATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join("../shared/data"))
            .join("movielens-1m"),
        "the ML-1M slice (set PGRAPHRAG_DATA)",
    );
    let gguf = need(
        model::model_path(),
        "SmolLM2 (scripts/fetch-llms.sh --smollm-only)",
    );

    let ml = Ml100k::load(&ml100k).unwrap();
    let kg = build_kg(&ml).unwrap();
    let mut data = EvalData::ml1m(&Ml1m::load(&ml1m).unwrap(), &ml, &kg).unwrap();
    data.slice(0, 40);
    assert_eq!(data.rows.len(), 40);
    let vectors = HopVectors::build(
        &kg.graph,
        &Hash,
        "hash8",
        &IndexOptions::default(),
        &NoProgress,
    )
    .unwrap();
    let index = ExactIndex::new(&vectors);
    let retrieval = Retrieval::paper();
    let retriever =
        KgRetriever::new(&kg.graph, &vectors, &index, &Hash, retrieval.clone()).unwrap();

    // Retrieval into the cache, written and read back.
    let dir = tempfile::tempdir().unwrap();
    let cache_file = dir.path().join("retrieval.json");
    let mut cache = RetrievalCache::open(&cache_file, "hash8|paper").unwrap();
    let mut knowledge = Vec::new();
    for (i, row) in &data.rows {
        let k = retrieve_row(&retriever, &data.popularity, &data.titles, &row.history, 10).unwrap();
        // The same sub-graphs as the KG-Text method's retrieval, in the same order.
        let direct = retriever
            .retrieve(&row.history, &data.popularity, &data.titles)
            .unwrap();
        let centres: Vec<u32> = direct
            .subgraphs
            .iter()
            .map(|s| s.subgraph.centre.0)
            .collect();
        assert_eq!(k.centres, centres);
        assert!(k.centres.len() <= retrieval.top_n);
        assert!(k.triples.len() <= 10);
        assert_eq!(
            k.centres.is_empty(),
            k.triples.is_empty() && direct.selected.is_empty()
        );
        cache.insert(*i, k.clone());
        knowledge.push(k);
    }
    cache.save().unwrap();
    let reread = RetrievalCache::open(&cache_file, "hash8|paper").unwrap();
    assert_eq!(reread.len(), 40);
    for ((i, _), k) in data.rows.iter().zip(&knowledge) {
        assert_eq!(reread.get(*i), Some(k));
    }
    assert!(RetrievalCache::open(&cache_file, "other settings").is_err());
    let with = knowledge.iter().filter(|k| !k.centres.is_empty()).count();
    assert!(with > 0 && with < 40, "{with} of 40 rows with sub-graphs");

    // Features, prompt and answer letters.
    let feats = GraphFeatures::new(&kg.graph, &vectors, &Hash, retrieval.ego_hops).unwrap();
    let tok = pgraphrag_llm::LlmTokenizer::from_gguf(&gguf).unwrap();
    let prompt = KragrecPrompt::new(tok.clone(), PromptStyle::ReleasedTrain).unwrap();
    let letters = prompt.letter_ids(20).unwrap().to_vec();
    assert_eq!(
        letters
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        20,
        "20 distinct letter tokens"
    );
    let sampler = data.sampler(20, 2025).unwrap();
    for ((i, row), k) in data.rows.iter().zip(&knowledge) {
        let c = data.candidates(&sampler, *i, row).unwrap();
        let graphs = feats.subgraphs(&k.centres).unwrap();
        assert_eq!(graphs.len(), k.centres.len());
        for (g, &centre) in graphs.iter().zip(&k.centres) {
            let ego = kg.graph.ego(pgraphrag_graph::kg::EntityId(centre), 1);
            assert_eq!(g.nodes.len(), ego.nodes.len() * DIM);
            assert_eq!(g.edges.len(), ego.edges.len());
            assert_eq!(g.edge_features.len(), ego.edges.len() * DIM);
            // The centre comes first, with its hop-0 vector.
            let v0 = vectors
                .vector(0, pgraphrag_graph::kg::EntityId(centre))
                .unwrap();
            assert_eq!(&g.nodes[..DIM], v0);
        }
        let ex = prompt.example(row, &c, &data.titles, graphs).unwrap();
        assert_eq!(ex.answer, letters[c.target_index]);
        assert_eq!(
            tok.decode(&[ex.answer]).unwrap(),
            LETTERS[c.target_index].to_string()
        );
        // `<s>[INST]`: the model's BOS (when it has one), then `[INST]`.
        let inst = tok.encode("[INST]").unwrap();
        let bos: Vec<u32> = tok.bos().into_iter().collect();
        assert_eq!(ex.prefix, [bos, inst].concat());
        let history: Vec<&str> = row
            .history
            .iter()
            .map(|h| data.titles[h].as_str())
            .collect();
        let options: Vec<&str> = c.items.iter().map(|h| data.titles[h].as_str()).collect();
        let text = instruction(PromptStyle::ReleasedTrain, &history, &options).unwrap();
        assert_eq!(tok.decode(&ex.rest).unwrap(), format!("{text}[/INST]"));
        // The "-Encoding" ablation's prompt: the row's triples as KG-Text writes them, then
        // the same instruction; no triples gives the plain prompt.
        let graphs = feats.subgraphs(&k.centres).unwrap();
        let with = prompt
            .example_with_facts(row, &c, &data.titles, graphs, &k.triples)
            .unwrap();
        let facts: Vec<pgraphrag_graph::kg::TripleText<'_>> = k
            .triples
            .iter()
            .map(|[head, relation, tail]| pgraphrag_graph::kg::TripleText {
                head,
                relation,
                tail,
            })
            .collect();
        assert_eq!(
            tok.decode(&with.rest).unwrap(),
            format!("{}[/INST]", pgraphrag_recsys::with_facts(&facts, &text))
        );
        assert_eq!((with.prefix == ex.prefix, with.answer), (true, ex.answer));
        assert_eq!(with.rest == ex.rest, k.triples.is_empty());
    }
}
