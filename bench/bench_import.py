"""Corpus import speed and memory: `python bench/bench_import.py --documents 1000000 [--keep]`.

Targets: >= 25,000 documents/s (1,000,000 documents of ~600 characters); peak memory flat
in the number of documents (compare the peak RSS of a 100,000 and a 1,000,000 run).
Then re-imports the same file (must create nothing). With --keep the corpus stays for
bench_classifier.py / bench_regions.py; otherwise it is dropped.
"""
from __future__ import annotations

import argparse
import os
import time

from common import corpus_drop, corpus_file, corpus_name, django_setup, peak_rss_mib, timed, verdict


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    path = corpus_file(args.documents)
    vendor = django_setup()
    import logging

    from annotation.services.corpora.corpus_import import corpus_import

    logging.getLogger("annotation.services.corpora.corpus_import").setLevel(logging.DEBUG)

    name = corpus_name(args.documents)
    corpus_drop(name)
    rss_before = peak_rss_mib()
    cpu = time.process_time()
    summary, seconds = timed(corpus_import, path=path, corpus_name=name)
    cpu = time.process_time() - cpu
    rss_after = peak_rss_mib()
    rate = summary.created / seconds
    print(f"[{vendor}] import {summary.created:,} documents ({path.stat().st_size / 2**20:.0f} MiB gzipped): "
          f"{seconds:.1f} s = {rate:,.0f} docs/s; {verdict(rate, 25_000, lower_is_better=False)}; "
          f"this process's CPU {cpu:.1f} s (load average {os.getloadavg()[0]:.1f} on 2 cores)")
    print(f"[{vendor}] peak RSS {rss_after:.0f} MiB (before the import {rss_before:.0f} MiB, growth {rss_after - rss_before:.0f} MiB)")
    again, seconds_again = timed(corpus_import, path=path, corpus_name=name)
    print(f"[{vendor}] re-import: created {again.created}, unchanged {again.unchanged:,}, conflicts {again.conflicts} "
          f"in {seconds_again:.1f} s ({again.read / seconds_again:,.0f} docs/s)")
    assert again.created == 0 and again.unchanged == summary.created
    if not args.keep:
        corpus_drop(name)


if __name__ == "__main__":
    main()
