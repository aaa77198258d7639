//! Dense retrieval: a BERT mean-pooling encoder (Contriever recipe) on candle, an embedding cache, snippet ranking and fusion.
