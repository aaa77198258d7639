//! Sparse (lexical) retrieval: BM25Okapi identical to rank_bm25 0.2.2, Lucene BM25, random, none.
