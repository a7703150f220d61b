"""HAN against two baselines on the shipped review split, measured in one script:
majority class and TF-IDF + logistic regression (scikit-learn; C chosen on dev).

    python benchmarks/han_baselines.py [--model reviews-han] [--split test]
"""

from __future__ import annotations

import argparse
import json
import time

from attnkit.classifier import Classifier
from attnkit.data.documents import read_documents
from attnkit.datasets import document_split
from attnkit.evaluation.classification import classification_report
from attnkit.pretrained import resolve


def texts(path: str) -> tuple[list[str], list[int]]:
    docs, _ = read_documents(path)
    return [" ".join(w for s in d.sentences for w in s) for d in docs], [d.label for d in docs]


def tfidf_baseline(train: tuple, dev: tuple, test: tuple) -> tuple[list[int], float]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    x_train = vectorizer.fit_transform(train[0])
    best = (-1.0, 1.0)
    for c in (0.5, 1.0, 2.0, 4.0, 8.0):
        model = LogisticRegression(C=c, max_iter=2000).fit(x_train, train[1])
        f1 = f1_score(dev[1], model.predict(vectorizer.transform(dev[0])), average="macro")
        best = max(best, (f1, c))
    model = LogisticRegression(C=best[1], max_iter=2000).fit(x_train, train[1])
    return model.predict(vectorizer.transform(test[0])).tolist(), best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None, help="HAN checkpoint (default: the shipped classifier)")
    parser.add_argument("--split", default="test", choices=["dev", "test"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    train, dev = texts(str(document_split("reviews", "train"))), texts(str(document_split("reviews", "dev")))
    test = texts(str(document_split("reviews", args.split)))
    majority = max(set(train[1]), key=train[1].count)
    rows = {"majority class": classification_report(test[1], [majority] * len(test[1]), 5)}
    start = time.perf_counter()
    preds, c = tfidf_baseline(train, dev, test)
    rows[f"TF-IDF 1-2gram + LR (C={c})"] = classification_report(test[1], preds, 5)
    print(f"TF-IDF + LR trained in {time.perf_counter() - start:.1f}s")
    classifier = Classifier.from_checkpoint(resolve(args.model, "classification"))
    docs, _ = read_documents(document_split("reviews", args.split), labels=classifier.labels)
    han = [classifier.labels.index(r.label) for r in classifier.classify_documents(docs)]
    rows["HAN (attnkit)"] = classification_report([d.label for d in docs], han, 5)
    if args.json:
        print(
            json.dumps(
                {k: {m: v[m] for m in ("accuracy", "macro_f1", "per_class_f1")} for k, v in rows.items()}
            )
        )
    print(f"\n{args.split} split, {len(test[1])} reviews")
    print(f"{'model':34s} {'accuracy':>9s} {'macro-F1':>9s}   per-class F1 (1..5 stars)")
    for name, r in rows.items():
        per = " ".join(f"{f:.2f}" for f in r["per_class_f1"])
        print(f"{name:34s} {r['accuracy']:9.4f} {r['macro_f1']:9.4f}   {per}")


if __name__ == "__main__":
    main()
