#!/usr/bin/env python3
"""Python reference for `pgraphrag rank`: the PGraphRAG notebook's BM25 ranking, re-implemented.

A faithful re-implementation of the ranking in PGraphRAG's `notebook/ranking.ipynb` (commit
722a71e): `create_user_product_matrix` (a dict keyed by (user_id, product_id), so repeated pairs
overwrite), `get_user_all_ratings`, `pgraph_rag_neighbors_ratings_only`, `bm25_retriever`
(nltk.word_tokenize(text.lower()) + rank_bm25.BM25Okapi fitted on each candidate list, empty
documents dropped with the notebook's index misalignment, `np.argsort(scores)[::-1][:k]`,
`combined_documents.index(doc)`), and the random review (`random.seed(42)` once,
`random.choice` of another user, then of that user's reviews ranked against the empty query).

Two deliberate differences, both needed to compare outputs at all:
  * product ids are read from `pid` when `productAsin` is absent (the released splits use `pid`);
  * users are listed in first-appearance order (`dict.fromkeys`) instead of the notebook's
    `set`, whose iteration order changes with PYTHONHASHSEED (so its random reviews are not
    reproducible even in Python).
Each ranked entry also gets a `score` (the BM25 score at that rank), as `pgraphrag rank` writes.

Usage:
  NLTK_DATA=$PGRAPHRAG_DATA/nltk python3 scripts/bench_rank.py --data $PGRAPHRAG_DATA \
      [--datasets amazon,b2w,gap,hotel] [--tasks text,title,rating] [--limit N] [--out DIR]
Prints one line per file and a final `TOTAL_SECONDS <s>` line (time spent ranking, after loading).
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np
from nltk.tokenize import word_tokenize
from rank_bm25 import BM25Okapi

TASKS = {"text": "reviewText", "title": "reviewTitle", "rating": "reviewRating"}


def pid_of(review):
    return review["productAsin"] if "productAsin" in review else review["pid"]


def create_user_product_matrix(data):
    user_ids = {}
    matrix = {}
    doc_id = 0
    for user in data:
        user_id = user["id"]
        for review in user["profile"]:
            product_id = pid_of(review)
            user_ids.setdefault(user_id, None)
            review_title = review.get("title", "None") or "None"
            review_text = review.get("text", "None") or "None"
            review_rating = review.get("rating", "None")
            if isinstance(review_rating, float):
                review_rating = int(review_rating)
            matrix[(user_id, product_id)] = {
                "reviewTitle": review_title,
                "reviewText": review_text,
                "doc_id": doc_id,
                "reviewRating": review_rating,
            }
            doc_id += 1
    return matrix, list(user_ids)


def tokenize_for_bm25(text):
    return word_tokenize(text.lower())


def bm25_retriever(query, documents, k=1):
    """The notebook's bm25_retriever, returning (document, score) pairs."""
    if not documents:
        return []
    tokenized_documents = [tokenize_for_bm25(doc) for doc in documents]
    tokenized_documents = [tokens for tokens in tokenized_documents if tokens]
    if not tokenized_documents:
        return []
    bm25 = BM25Okapi(tokenized_documents)
    doc_scores = bm25.get_scores(tokenize_for_bm25(query))
    top_k_indices = np.argsort(doc_scores)[::-1][:k]
    return [(documents[i], float(doc_scores[i])) for i in top_k_indices]


def by_user(matrix):
    """(user -> [product ids]) and (product -> [user ids]) in dict order: the notebook scans all
    keys per call; grouping once gives the same lists and keeps the reference from being
    quadratic in the split size."""
    users, products = {}, {}
    for (uid, pid) in matrix.keys():
        users.setdefault(uid, []).append(pid)
        products.setdefault(pid, []).append(uid)
    return users, products


def rank(query, entries, limit):
    combined = [f"{e['reviewTitle']} {e['reviewText']}" for e in entries]
    top = bm25_retriever(query, combined, k=limit if limit else len(combined))
    out = []
    for doc, score in top:
        e = dict(entries[combined.index(doc)])
        e["score"] = score
        out.append(e)
    return out


def get_user_all_ratings(user_id, product_id, matrix, users, query, limit):
    user_ratings = [
        {
            "product_id": pid,
            "reviewRating": matrix[(user_id, pid)].get("reviewRating", "None"),
            "reviewTitle": matrix[(user_id, pid)].get("reviewTitle", "None"),
            "reviewText": matrix[(user_id, pid)].get("reviewText", "None"),
            "doc_id": matrix[(user_id, pid)]["doc_id"],
        }
        for pid in users.get(user_id, [])
    ]
    if not user_ratings:
        return []
    query_doc_id = None
    for review in user_ratings:
        if review["product_id"] == product_id:
            query_doc_id = review["doc_id"]
            break
    if query_doc_id is None:
        filtered = user_ratings
    else:
        filtered = [r for r in user_ratings if r["doc_id"] != query_doc_id]
    if not filtered:
        return []
    return rank(query, filtered, limit)


def neighbors(user_id, product_id, matrix, products, query, limit):
    filtered = [
        {
            "user_id": uid,
            "reviewRating": matrix[(uid, product_id)]["reviewRating"],
            "reviewTitle": matrix[(uid, product_id)]["reviewTitle"],
            "reviewText": matrix[(uid, product_id)]["reviewText"],
            "doc_id": matrix[(uid, product_id)]["doc_id"],
        }
        for uid in products.get(product_id, [])
        if uid != user_id
    ]
    if not filtered:
        return []
    if len(filtered) == 1:
        return filtered
    return rank(query, filtered, limit)


def process_item(item, matrix, user_list, users, products, limit, filter_field):
    user_id = item["id"]
    product_id = pid_of(item["profile"][0])
    field_mapping = {"reviewTitle": "text", "reviewText": "title"}
    if filter_field == "reviewRating":
        title = item["profile"][0].get("title", "").strip()
        text = item["profile"][0].get("text", "").strip()
        query = f"{title} {text}".strip()
    else:
        query = item["profile"][0].get(field_mapping[filter_field], "").strip()
    user_ratings = get_user_all_ratings(user_id, product_id, matrix, users, query, limit)
    neighbor_ratings = neighbors(user_id, product_id, matrix, products, query, limit)
    random_user_id = random.choice([uid for uid in user_list if uid != user_id])
    pool = get_user_all_ratings(random_user_id, None, matrix, users, "", None)
    random_review = random.choice(pool) if pool else None
    if random_review is not None:
        random_review = {k: v for k, v in random_review.items() if k != "score"}
    rating = item["profile"][0].get("rating", None)
    if isinstance(rating, float):
        rating = int(rating)
    return {
        "user_id": user_id,
        "product_id": product_id,
        "user_review_text": item["profile"][0].get("text", None),
        "user_review_title": item["profile"][0].get("title", None),
        "user_review_rating": rating,
        "user_ratings": user_ratings,
        "neighbor_ratings": neighbor_ratings,
        "random_review": random_review,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.environ.get("PGRAPHRAG_DATA", "../shared/data"))
    ap.add_argument("--datasets", default="amazon,b2w,gap,hotel")
    ap.add_argument("--tasks", default="text,title,rating")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--limit", type=int, default=None, help="rank only the first N users of each file")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--out", default=None, help="write RANKING-<ds>_<split>_<task>_bm25.json files here")
    args = ap.parse_args()
    total = 0.0
    for ds in args.datasets.split(","):
        path = os.path.join(args.data, "pgraphrag", f"{ds}_{args.split}.json")
        with open(path) as f:
            data = json.load(f)
        for task in args.tasks.split(","):
            random.seed(42)  # the notebook seeds once per kernel; once per file here, like `pgraphrag rank`
            t0 = time.perf_counter()
            matrix, user_list = create_user_product_matrix(data)
            users, products = by_user(matrix)
            items = data[: args.limit] if args.limit else data
            results = [process_item(it, matrix, user_list, users, products, args.top, TASKS[task]) for it in items]
            dt = time.perf_counter() - t0
            total += dt
            print(f"{ds} {task}: {len(results)} users in {dt:.2f}s", flush=True)
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                out = os.path.join(args.out, f"RANKING-{ds}_{args.split}_{TASKS[task]}_bm25.json")
                with open(out, "w") as f:
                    json.dump(results, f, indent=4)
    print(f"TOTAL_SECONDS {total:.3f}")


if __name__ == "__main__":
    sys.exit(main())
