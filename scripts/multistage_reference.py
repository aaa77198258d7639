#!/usr/bin/env python3
"""The multistage writing pipeline's stages other than generation, in Python: the speed and parity
reference for `pgraphrag multistage export` (crates/stages/src/multistage, docs/multistage_stages.md).

Per example of an examples.jsonl (`pgraphrag multistage build`), in the order of the file, for the
split chosen with --split:

  ranking    (each ranker timed with its cut, as ours)
             RankDocBM25    rank_bm25 0.2.2 BM25Okapi (defaults k1 1.5, b 0.75, epsilon 0.25) over
                            nltk 3.9.1 word_tokenize(text.lower()), fitted on the example's context
                            documents, the immediate context as the query
             RankDocDense   sentence-transformers (all-MiniLM-L6-v2 from a local folder): mean
                            pooling, L2-normalised, cosine of query and document vectors
             RankDocBySnpt  a document's score = its best snippet's cosine (snippets: Punkt
                            sentences appended until >= 250 characters)
             RankSnippet    every snippet ranked by its cosine
             RecentDoc      time descending
             Every ranker sees the documents most recent first (time descending, equal times in
             file order) and keeps that order among equal scores (a stable sort).
  cut        entries joined with a blank line, cut at 2,500 characters (the last entry cut; never
             ending in the joiner; empty entries skipped)
  keywords   SynCtxInd: lowercased word_tokenize tokens whose first character is alphanumeric as
             Rust's char::is_alphanumeric says, over all context documents; NLTK's 179 English stopwords + the Treebank pieces;
             frequency >= 2; IDF ln(N / df) >= 1.5 over the IDF table; order frequency desc, IDF
             desc, first occurrence; at most 20
  summary    the summary weak label: each gold snippet (of the target) takes the most similar
  label      (dense cosine) candidate snippet of the label ranker's cut not yet used (texts
             compared), ties to the earliest; joined with one space
  synthesis  the synthesis weak label: each gold word occurrence selects every distinct word of the
  label      label ranker's cut that is identical or a WordNet synonym (nltk synsets over every
             part of speech, lemma names without "_", either direction); stopwords and IDF < 1.5
             skipped on both sides; order count desc, IDF desc, first occurrence; joined ", "

The IDF table: every distinct document of the train split, as ours (`train_documents` in
crates/eval/src/multistage/prepare.rs): the train examples' context documents in first-appearance
order, then the targets that are no context document (doc id = the example's id; a document that is
both keeps its context text, title and body), built once, timed on its own (`idf_s`).

Encoding as ours (`warm_dense`): every immediate context, context document, its snippets and the
targets' snippets, distinct, encoded once up front (batches of 32); anything else on demand, once.

Output: one JSON line per example (`rec` below) with the ranked doc ids per ranker (`doc#j` for a
snippet) and their scores, the cut string and its entries' lengths, the keywords and both weak
labels; a last line `{"summary": ...}`. A `stats {...}` line goes to stderr, its seconds under the
keys of ours' `stats` line (encoder, wordnet, idf, ranking.<ranker>, keywords, summary_label,
synthesis_label).

Environment: the venv that scripts/bench_multistage.sh makes (.cache/ms-ref-venv: torch 2.15.0,
sentence-transformers 6.2.0, rank-bm25 0.2.2, nltk 3.9.1, pinned there). NLTK's data (Punkt and
WordNet 3.0) is laid out by this script under --nltk-dir from the workspace's files: nothing is
downloaded.

  .cache/ms-ref-venv/bin/python scripts/multistage_reference.py --examples DIR/examples.jsonl \\
      --out ref.jsonl [--split train] [--limit N] [--threads 2] [--label-ranker RankDocBM25]
"""
import argparse
import json
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("PGRAPHRAG_DATA", os.path.join(ROOT, "..", "shared", "data"))

SNIPPET_MIN_CHARS = 250
MAX_CHARS = 2500
JOINER = "\n\n"
MIN_IDF = 1.5
MIN_FREQ = 2
MAX_KEYWORDS = 20
RANKERS = ["RecentDoc", "RankDocBM25", "RankDocDense", "RankSnippet", "RankDocBySnpt"]

# NLTK's English stopword list as distributed for years (179 words), verbatim, and the pieces
# Treebank cuts contractions into that start with a letter (ours, as crates/stages).
NLTK_ENGLISH_STOPWORDS = (
    "i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself "
    "yourselves he him his himself she she's her hers herself it it's its itself they them their "
    "theirs themselves what which who whom this that that'll these those am is are was were be "
    "been being have has had having do does did doing a an the and but if or because as until "
    "while of at by for with about against between into through during before after above below "
    "to from up down in out on off over under again further then once here there when where why "
    "how all any both each few more most other some such no nor not only own same so than too "
    "very s t can will just don don't should should've now d ll m o re ve y ain aren aren't "
    "couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma "
    "mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren "
    "weren't won won't wouldn wouldn't"
).split()
TREEBANK_STOPWORDS = "n't ca wo sha ai gon na wan ta gim lem".split()
assert len(NLTK_ENGLISH_STOPWORDS) == 179 == len(set(NLTK_ENGLISH_STOPWORDS))
STOPWORDS = frozenset(NLTK_ENGLISH_STOPWORDS + TREEBANK_STOPWORDS)

LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()


def args_():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--examples", required=True, help="examples.jsonl of `pgraphrag multistage build`")
    p.add_argument("--out", required=True, help="one JSON line per example")
    p.add_argument("--split", default="train", help="train | dev | test | all (default train)")
    p.add_argument("--limit", type=int, default=None, help="the first N examples of the split")
    p.add_argument("--idf-split", default="train",
                   help="the split whose distinct documents make the IDF table (default train)")
    p.add_argument("--model", default=os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))
    p.add_argument("--wordnet", default=None,
                   help="WordNet 3.0 folder (index.*, data.*, *.exc); default $WORDNET_DIR, "
                        "models/wordnet, /usr/share/wordnet")
    p.add_argument("--nltk-dir", default=os.path.join(ROOT, ".cache", "ms-ref-nltk"),
                   help="where the NLTK_DATA folder is laid out (symlinks)")
    p.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "2")))
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-seq-length", type=int, default=512,
                   help="tokens (ours: the model's limit, 512; the hub config says 256)")
    p.add_argument("--label-ranker", default="RankDocBM25", choices=RANKERS,
                   help="whose cut both weak labels read (default RankDocBM25)")
    p.add_argument("--summary-ranker", default=None, choices=RANKERS,
                   help="whose cut's snippets the summary weak label reads (default --label-ranker)")
    p.add_argument("--synthesis-ranker", default=None, choices=RANKERS,
                   help="whose cut string the synthesis weak label reads (default --label-ranker)")
    p.add_argument("--rankers", default=",".join(RANKERS), help="comma-separated subset")
    p.add_argument("--no-dense", action="store_true",
                   help="skip everything that needs the encoder (dense rankers; summary label)")
    p.add_argument("--no-warm", action="store_true",
                   help="no up-front encoding of the examples' texts (each stage encodes on demand)")
    p.add_argument("--no-memo", action="store_true",
                   help="do not keep embeddings across examples (re-encode every text; implies --no-warm)")
    return p.parse_args()


def find_wordnet(explicit):
    cands = [explicit, os.environ.get("WORDNET_DIR"), os.path.join(ROOT, "models", "wordnet"),
             "/usr/share/wordnet"]
    for c in cands:
        if c and os.path.isfile(os.path.join(c, "index.noun")):
            return c
    sys.exit("no WordNet 3.0 found (tried --wordnet, $WORDNET_DIR, models/wordnet, "
             "/usr/share/wordnet): run scripts/fetch-wordnet.sh")


def lay_out_nltk_data(nltk_dir, wordnet_dir):
    """NLTK_DATA with corpora/wordnet (the WordNet files, a lexnames file, an empty index.sense,
    which nltk reads only for its OMW mapping) and tokenizers/punkt_tab (from the shared data)."""
    wn = os.path.join(nltk_dir, "corpora", "wordnet")
    os.makedirs(wn, exist_ok=True)
    for pos in ["adj", "adv", "noun", "verb"]:
        for f in [f"data.{pos}", f"index.{pos}", f"{pos}.exc"]:
            src, dst = os.path.join(wordnet_dir, f), os.path.join(wn, f)
            if not os.path.exists(src):
                sys.exit(f"missing {src}")
            if os.path.lexists(dst):
                os.remove(dst)
            os.symlink(os.path.abspath(src), dst)
    kind = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
    with open(os.path.join(wn, "lexnames"), "w") as f:
        for i, n in enumerate(LEXNAMES):
            f.write(f"{i:02d}\t{n}\t{kind[n.split('.')[0]]}\n")
    open(os.path.join(wn, "index.sense"), "w").close()
    tok = os.path.join(nltk_dir, "tokenizers")
    os.makedirs(tok, exist_ok=True)
    punkt = os.path.join(tok, "punkt_tab")
    if not os.path.exists(punkt):
        cands = [os.path.join(d, "tokenizers", "punkt_tab")
                 for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
        cands.append(os.path.join(DATA, "nltk", "tokenizers", "punkt_tab"))
        src = next((c for c in cands if os.path.isdir(c)), None)
        if src is None:
            sys.exit(f"no punkt_tab under $NLTK_DATA or {DATA}/nltk (set PGRAPHRAG_DATA)")
        os.symlink(os.path.abspath(src), punkt)
    os.environ["NLTK_DATA"] = nltk_dir


def read_examples(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Clock:
    """Seconds per stage, summed over examples."""

    def __init__(self):
        self.s = {}

    def add(self, key, t0):
        t = time.perf_counter()
        self.s[key] = self.s.get(key, 0.0) + (t - t0)
        return t


T_START = time.perf_counter()


def main():
    a = args_()
    threads = str(a.threads)
    for k in ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS"]:
        os.environ[k] = threads
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    lay_out_nltk_data(a.nltk_dir, find_wordnet(a.wordnet))
    setup = {}
    t0 = time.perf_counter()
    import numpy as np
    import regex
    import nltk
    from nltk.corpus import wordnet
    from nltk.tokenize import word_tokenize
    from nltk.tokenize.punkt import PunktTokenizer
    from rank_bm25 import BM25Okapi

    assert nltk.__version__ == "3.9.1", nltk.__version__
    import rank_bm25

    use_dense = not a.no_dense
    if use_dense:
        import torch
        from sentence_transformers import SentenceTransformer
        import sentence_transformers

        torch.set_num_threads(a.threads)
    setup["import_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    punkt = PunktTokenizer("english")
    wordnet.ensure_loaded()
    assert wordnet.get_version() == "3.0"
    setup["nltk_load_s"] = time.perf_counter() - t0
    st = None
    if use_dense:
        t0 = time.perf_counter()
        st = SentenceTransformer(a.model, device="cpu", local_files_only=True)
        st.max_seq_length = a.max_seq_length
        setup["model_load_s"] = time.perf_counter() - t0
        # One warm-up batch outside the timed loop (torch's first call sets up its kernels).
        t0 = time.perf_counter()
        st.encode(["warm-up text for the encoder"] * 4, batch_size=a.batch_size)
        setup["warmup_s"] = time.perf_counter() - t0

    versions = {"nltk": nltk.__version__, "rank_bm25": "0.2.2", "numpy": np.__version__,
                "regex": regex.__version__}
    if use_dense:
        versions.update(torch=torch.__version__, sentence_transformers=sentence_transformers.__version__)

    # ---- the stages' building blocks -------------------------------------------------------
    def tokens(text):
        return word_tokenize(text.lower())

    # A word starts with an alphanumeric character as Rust's char::is_alphanumeric says:
    # Unicode Alphabetic (letters, Nl, Other_Alphabetic) or a number (Nd, Nl, No). Python's
    # str.isalnum differs on Other_Alphabetic symbols (circled and squared letters such as
    # "ⓐ", "🄰"), which it does not count; the `regex` module has the property.
    alnum = regex.compile(r"[\p{Alphabetic}\p{Nd}\p{Nl}\p{No}]")

    def words(text):
        return [t for t in word_tokenize(text.lower()) if alnum.match(t)]

    def snippets(text):
        out, start, end = [], None, None
        for s, e in punkt.span_tokenize(text):
            if s >= e:
                continue
            if start is None:
                start = s
            end = e
            if len(text[start:end]) >= SNIPPET_MIN_CHARS:
                out.append(text[start:end])
                start = None
        if start is not None:
            out.append(text[start:end])
        return out

    def doc_snippets(text):
        # SnippetRanker: a document with no snippet (an empty text) is one snippet, itself.
        return snippets(text) or [text]

    def stable_desc(scores):
        return sorted(range(len(scores)), key=lambda i: -scores[i])

    def bm25_scores(query, docs):
        corpus = [tokens(d) for d in docs]
        if not corpus:
            return []
        if not any(corpus):
            return [0.0] * len(corpus)  # rank_bm25 divides by zero; ours scores zeros
        bm = BM25Okapi(corpus)
        return [float(x) for x in bm.get_scores(tokens(query))]

    memo = {}

    def embed(texts):
        """Normalised float32 vectors of `texts` (each distinct text encoded once; kept across
        examples unless --no-memo)."""
        todo = list(dict.fromkeys(t for t in texts if t not in memo))
        if todo:
            v = st.encode(todo, batch_size=a.batch_size, convert_to_numpy=True,
                          normalize_embeddings=True, show_progress_bar=False)
            for t, x in zip(todo, v):
                memo[t] = x
        return np.stack([memo[t] for t in texts]).astype(np.float64) if texts else np.zeros((0, 1))

    def cosine(q, m):
        """Cosine in f64 (as ours: dot / (|q| |d|), norms floored at 1e-8)."""
        if len(m) == 0:
            return np.zeros(0)
        nq = max(float(np.sqrt(q @ q)), 1e-8)
        nd = np.maximum(np.sqrt((m * m).sum(axis=1)), 1e-8)
        return (m @ q) / (nq * nd)

    def cut(entries):
        """entries: (text, is_snippet) best first -> (kept entries, text, truncated, dropped)."""
        total = sum(1 for t, _ in entries if t)
        room, kept, parts, truncated = MAX_CHARS, [], [], False
        for text, snip in entries:
            if not text:
                continue
            sep = len(JOINER) if kept else 0
            if room <= sep:
                break
            left = room - sep
            if len(text) > left:
                kept.append((text[:left], snip))
                parts.append(text[:left])
                truncated = True
                break
            kept.append((text, snip))
            parts.append(text)
            room = left - len(text)
        return kept, JOINER.join(parts), truncated, total - len(kept)

    def cut_snippets(kept):
        out = []
        for text, snip in kept:
            if snip:
                out.append(text)
            else:
                out.extend(snippets(text))
        return out

    def idf_of(table, n, w):
        return math.log(n / max(table.get(w, 0), 1))

    # ---- the IDF table ---------------------------------------------------------------------
    t0 = time.perf_counter()
    all_examples = read_examples(a.examples)
    setup["read_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    # As ours (train_documents): every context document of the split's examples, first
    # appearance kept, then the targets that are no context document (a document that is both
    # keeps its context text: title and body).
    docs = {}
    idf_examples = [ex for ex in all_examples if a.idf_split == "all" or ex.get("split") == a.idf_split]
    for ex in idf_examples:
        for d in ex["context"]:
            docs.setdefault(d["doc_id"], d["text"])
    for ex in idf_examples:
        docs.setdefault(ex["id"], ex["target"])
    if not docs:
        sys.exit(f"no documents in split {a.idf_split!r} for the IDF table")
    df = {}
    for text in docs.values():
        for w in set(words(text)):
            df[w] = df.get(w, 0) + 1
    n_idf = len(docs)
    setup["idf_s"] = time.perf_counter() - t0

    def keep(w):
        """The word filter: the IDF when kept, else None."""
        if w in STOPWORDS:
            return None
        idf = idf_of(df, n_idf, w)
        return idf if idf >= MIN_IDF else None

    syn_cache = {}

    def synonyms(w):
        s = syn_cache.get(w)
        if s is None:
            s = frozenset(l.name().lower() for ss in wordnet.synsets(w) for l in ss.lemmas()
                          if "_" not in l.name())
            syn_cache[w] = s
        return s

    def matches(x, y):
        return x == y or y in synonyms(x) or x in synonyms(y)

    # ---- per example -----------------------------------------------------------------------
    examples = [ex for ex in all_examples if a.split == "all" or ex.get("split") == a.split]
    if a.limit is not None:
        examples = examples[: a.limit]
    rankers = [r for r in a.rankers.split(",") if r]
    if not use_dense:
        rankers = [r for r in rankers if r in ("RankDocBM25", "RecentDoc")]
    sum_ranker = a.summary_ranker or a.label_ranker
    syn_ranker = a.synthesis_ranker or a.label_ranker
    for r in {sum_ranker, syn_ranker}:
        if r not in rankers:
            sys.exit(f"the weak labels read {r}, which is not among the rankers run ({rankers})")

    # The encoder's warm-up over the examples, as ours (`warm_dense` in
    # crates/cli/src/multistage_run.rs): every immediate context, context document, its snippets
    # and the targets' snippets, distinct, in one length-sorted batched pass; the stages then
    # read these vectors (anything else is encoded on demand).
    if use_dense and not (a.no_warm or a.no_memo):
        t0 = time.perf_counter()
        warm = {}
        for ex in examples:
            warm[ex["immediate_context"]] = None
            for c in ex["context"]:
                warm[c["text"]] = None
                for sn in snippets(c["text"]):
                    warm[sn] = None
            for sn in snippets(ex["target"]):
                warm[sn] = None
        embed(list(warm))
        setup["encoder_warm_s"] = time.perf_counter() - t0
        setup["warmed_texts"] = len(warm)

    clock = Clock()
    n_done = 0
    t_all = time.perf_counter()
    with open(a.out, "w", encoding="utf-8") as out:
        for ex in examples:
            if a.no_memo:
                memo.clear()
            query = ex["immediate_context"]
            past = ex["context"]
            order = sorted(range(len(past)), key=lambda i: -past[i]["time"])  # stable
            texts = [past[i]["text"] for i in order]
            ids = [past[i]["doc_id"] for i in order]
            ranked = {}  # ranker -> list of (doc index in `order`, snippet index or None, text)
            scores = {}
            cuts = {}
            hits = None
            for r in rankers:
                # Each ranker timed with its cut, as ours (ranking + ContextCut per ranker).
                t = time.perf_counter()
                if r == "RankDocBM25":
                    s = bm25_scores(query, texts)
                    o = stable_desc(s)
                    ranked[r] = [(i, None, texts[i]) for i in o]
                    scores[r] = [s[i] for i in o]
                elif r == "RankDocDense":
                    e = embed([query] + texts)
                    s = [float(x) for x in cosine(e[0], e[1:])]
                    o = stable_desc(s)
                    ranked[r] = [(i, None, texts[i]) for i in o]
                    scores[r] = [s[i] for i in o]
                elif r in ("RankSnippet", "RankDocBySnpt"):
                    # Split again for each ranker (ours does); the vectors come from the memo.
                    hits = [(d, j, sn) for d, text in enumerate(texts)
                            for j, sn in enumerate(doc_snippets(text))]
                    e = embed([query] + [h[2] for h in hits])
                    s = [float(x) for x in cosine(e[0], e[1:])]
                    if r == "RankSnippet":
                        o = stable_desc(s)
                        ranked[r] = [hits[k] for k in o]
                        scores[r] = [s[k] for k in o]
                    else:
                        best = [-math.inf] * len(texts)
                        for (d, _, _), x in zip(hits, s):
                            if x > best[d]:
                                best[d] = x
                        o = stable_desc(best)
                        ranked[r] = [(i, None, texts[i]) for i in o]
                        scores[r] = [best[i] for i in o]
                elif r == "RecentDoc":
                    ranked[r] = [(i, None, texts[i]) for i in range(len(texts))]
                else:
                    sys.exit(f"unknown ranker {r}")
                cuts[r] = cut([(text, snip is not None) for _, snip, text in ranked[r]])
                clock.add(r, t)

            t = time.perf_counter()
            # Keywords (SynCtxInd) over all context documents in the file's order.
            freq, first, pos = {}, {}, 0
            for d in past:
                for w in words(d["text"]):
                    if w in freq:
                        freq[w] += 1
                    else:
                        freq[w], first[w] = 1, pos
                    pos += 1
            kw = []
            for w, f in freq.items():
                if f >= MIN_FREQ:
                    idf = keep(w)
                    if idf is not None:
                        kw.append((w, f, idf, first[w]))
            kw.sort(key=lambda x: (-x[1], -x[2], x[3]))
            kw = kw[:MAX_KEYWORDS]
            t = clock.add("keywords", t)

            kept = cuts[sum_ranker][0]
            label_text = cuts[syn_ranker][1]
            summary = None
            if use_dense:
                gold = snippets(ex["target"])
                cands = cut_snippets(kept)
                picks = []
                if cands:
                    g = embed(gold)
                    c = embed(cands)
                    cn = np.maximum(np.sqrt((c * c).sum(axis=1)), 1e-8)
                    used = set()
                    for i in range(len(gold)):
                        row = (c @ g[i]) / (max(float(np.sqrt(g[i] @ g[i])), 1e-8) * cn)
                        best = None
                        for j in range(len(cands)):
                            if cands[j] in used:
                                continue
                            if best is None or row[j] > row[best]:
                                best = j
                        picks.append(best)
                        if best is not None:
                            used.add(cands[best])
                else:
                    picks = [None] * len(gold)
                summary = {"picks": picks,
                           "text": " ".join(cands[j] for j in picks if j is not None)}
                t = clock.add("summary_label", t)

            # Synthesis weak label over the label ranker's cut string.
            sources = {}
            for w in words(ex["target"]):
                if keep(w) is not None:
                    sources[w] = sources.get(w, 0) + 1
            targets, seen = [], set()
            for w in words(label_text):
                if w in seen:
                    continue
                idf = keep(w)
                if idf is not None:
                    seen.add(w)
                    targets.append((w, idf))
            counts = [0] * len(targets)
            for sw, n in sources.items():
                for j, (tw, _) in enumerate(targets):
                    if matches(sw, tw):
                        counts[j] += n
            picked = sorted((j for j in range(len(targets)) if counts[j] > 0),
                            key=lambda j: (-counts[j], -targets[j][1], j))
            synthesis = {"words": [[targets[j][0], counts[j], targets[j][1]] for j in picked],
                         "text": ", ".join(targets[j][0] for j in picked)}
            t = clock.add("synthesis_label", t)

            rec = {
                "id": ex["id"],
                "rankings": {r: [ids[d] if snip is None else f"{ids[d]}#{snip}"
                                 for d, snip, _ in ranked[r]] for r in rankers},
                "scores": {r: scores.get(r) for r in rankers if r in scores},
                "cut_chars": {r: len(cuts[r][1]) for r in rankers},
                "cut_text": {r: cuts[r][1] for r in rankers},
                "cut_entry_chars": {r: [len(t) for t, _ in cuts[r][0]] for r in rankers},
                "truncated": {r: cuts[r][2] for r in rankers},
                "keywords": [w for w, _, _, _ in kw],
                "summary_label": summary,
                "synthesis_label": synthesis,
            }
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n_done += 1
    wall = time.perf_counter() - t_all
    r6 = lambda v: round(v, 6)  # noqa: E731
    stages = {
        "ranking": {r: r6(clock.s.get(r, 0.0)) for r in rankers},
        "keywords": r6(clock.s.get("keywords", 0.0)),
        "summary_label": r6(clock.s.get("summary_label", 0.0)),
        "synthesis_label": r6(clock.s.get("synthesis_label", 0.0)),
    }
    # The same keys as ours' `stats` line (crates/cli/src/multistage_export.rs): load (reading
    # the examples), encoder (model load + warm-up encoding), wordnet, idf, then the stages.
    seconds = {
        "import": r6(setup["import_s"]),
        "load": r6(setup["read_s"]),
        "encoder": r6(setup.get("model_load_s", 0.0) + setup.get("warmup_s", 0.0)
                      + setup.get("encoder_warm_s", 0.0)),
        "wordnet": r6(setup["nltk_load_s"]),
        "idf": r6(setup["idf_s"]),
        **stages,
        "stages_total": r6(sum(clock.s.values())),
        "loop_wall": r6(wall),
        "total": r6(time.perf_counter() - T_START),
    }
    summary = {"train_examples" if a.split == "train" else "examples": n_done, "split": a.split,
               "threads": a.threads, "rankers": rankers, "summary_ranker": sum_ranker,
               "synthesis_ranker": syn_ranker, "idf_documents": n_idf, "memo": not a.no_memo,
               "warmed_texts": setup.get("warmed_texts", 0), "embedded_texts": len(memo),
               "setup": {k: (r6(v) if isinstance(v, float) else v) for k, v in setup.items()},
               "seconds": seconds, "versions": versions}
    with open(a.out, "a", encoding="utf-8") as out:
        out.write(json.dumps({"summary": summary}) + "\n")
    print("stats " + json.dumps(summary), file=sys.stderr)


if __name__ == "__main__":
    main()
