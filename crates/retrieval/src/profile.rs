//! Graph-scoped profile retrieval: PGraphRAG's user / neighbour / both profiles, task queries and the ranking-file semantics of the released notebook.
