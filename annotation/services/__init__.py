"""Annotation's services, one sub-package per noun, layered bottom to top (import-linter enforces it):

    corpora      documents, imports, uploads, sets of documents (bitmaps, the pair's regions)
    classifiers  classifiers of every kind, their builds, routers (a topic set's classifier), pairs
    crowd        HITs, assignments, judgments, labels, workers, gold, crowd platforms
    sampling     draws of documents into HITs, the dependence check's sizing
    topics       topics and topic sets: create, settings, launch

A module imports only from its own sub-package or the ones below it.
"""
