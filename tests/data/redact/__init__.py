"""Generated redaction corpora (issue 28): per-class secret samples and public look-alikes.

``make_corpus.py`` builds ``secrets.jsonl`` and ``benign.jsonl`` from the seeded generators in this package
(``gear``, ``hashes``, ``captures``, ``flags``, ``labels``, ``public``) and reports recall and benign
alteration per class; ``tests/shell/test_redact_gear.py`` checks the files are what the generators make.
"""
