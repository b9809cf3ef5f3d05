"""The report's model-judge block (issue 28): recall with the judge's answers, corrected by the human labels.

From the topic's gathered inputs (the human labels of each pair region's sample: A12, B1, B2 and N) and the
latest finished judge run's answers (``annotation.services.crowd.model_judge.model_judge_answers``), it builds
one ``estimation.stats.ppi.JudgedStratum`` per region — the judge's P(relevant) on the human-labelled documents,
and on the documents it read alone — and calls ``ppi_pair_recall`` (stratified PPI++, design-based
r = T_own/N).  A document the judge failed on gets the fixed prediction ½ (a fixed rule applied to every
document alike keeps the estimator unbiased: PPI holds for any predictor).  A region N drawn by score strata
keeps its strata, each human-only (the judge's extra documents carry no stratum yet).

What a manager reads: the judge's agreement with the human majority per region (a 2×2 table, Cohen's κ), r1
and r2 with and without the judge from the same human labels, the human-judged documents human-only sampling
would need for the judge's width (and the judgments, three per document), and what the interval assumes.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from annotation.models import Topic
from annotation.services.crowd.model_judge import JudgeAnswers, model_judge_answers
from estimation.services.inputs import TopicInputs, topic_inputs_gather
from estimation.stats.ppi import JudgedStratum, judge_concordance, ppi_pair_recall

# Judgments per human-judged document (three workers, seed 000 §4.1), for "judgments saved".
JUDGMENTS_PER_DOCUMENT = 3
FAILED_PREDICTION = 0.5

ASSUMPTIONS = (
    "The interval with the judge assumes what the human-only interval assumes, and nothing about the judge: in "
    "each region the documents the judge read are a simple random sample of the region, and the documents people "
    "judged a simple random sample of those; the human majority is the truth. The judge's answers only move the "
    "estimate through the difference between them and the human labels, measured on the documents both judged, "
    "so a wrong or biased judge widens the interval back to the human-only one — it cannot bias it. Regions with "
    "fewer than 30 human labels, or where the judge would save under 10% of the variance, use the human labels "
    "alone.")


def _region_key(region: str) -> str:
    return "U" if region == "N" else region


def judge_block(*, inputs: TopicInputs, answers: JudgeAnswers | None) -> dict[str, Any] | None:
    """The block for the report builder (pure): None without a finished run's answers.

    The snapshot's inputs carry the answers once ``TopicInputs`` gathers them (``inputs.model_judge``, from
    ``model_judge_answers``); until then the report builder passes None and ``topic_judge_report`` computes the
    block live for the judge's page and the API."""
    if answers is None:
        return None
    return judge_block_from(inputs=inputs, answers=answers)


def topic_judge_report(*, topic: Topic) -> dict[str, Any] | None:
    """The block computed now from the database (the topic's current labels and its latest finished run)."""
    answers = model_judge_answers(topic_id=topic.pk)
    if answers is None:
        return None
    inputs = topic_inputs_gather(topic=topic, parameters={"draws": 20_000, "seed": 0}, code_version="live")
    return judge_block_from(inputs=inputs, answers=answers)


def judge_block_from(*, inputs: TopicInputs, answers: JudgeAnswers) -> dict[str, Any]:
    """The block from inputs and answers (pure)."""
    base: dict[str, Any] = {"run": answers.summary, "assumptions": ASSUMPTIONS, "available": False, "reason": ""}
    missing = [h for h in ("A12", "B1", "B2", "N") if inputs.sample(h) is None]
    if inputs.c1 is None or missing:
        base["reason"] = ("Recall with the judge needs human labels in every region of the pair, the dependence "
                          f"check's region N included; missing: {', '.join(missing) or 'the pair'}.")
        return base
    strata: list[JudgedStratum] = []
    concordance = []
    for region in ("A12", "B1", "B2", "N"):
        sample = inputs.sample(region)
        assert sample is not None
        judged = answers.by_region.get(region, {})
        human_ids = set(sample.document_ids)
        labels = dict(zip(sample.document_ids, sample.labels, strict=True))
        both = [d for d in sample.document_ids if judged.get(d) is not None]
        concordance.append(judge_concordance(region=region, human=np.array([labels[d] for d in both]),
                                             judge=np.array([judged[d] for d in both])).as_dict())

        def prediction(doc: int, judged: dict[int, float | None] = judged) -> float:
            p = judged.get(doc)
            return FAILED_PREDICTION if p is None else float(p)

        own_strata = inputs.strata.get(region) if region == "N" else None
        if own_strata:
            for s in own_strata:
                ids = list(s.document_ids)
                strata.append(JudgedStratum(
                    region="U", size=s.size, key=s.key, human=np.array([labels[d] for d in ids], dtype=float),
                    judge_on_human=np.array([prediction(d) for d in ids], dtype=float), judge_only=np.zeros(0)))
            continue
        ids = list(sample.document_ids)
        only = [d for d in judged if d not in human_ids]
        strata.append(JudgedStratum(
            region=_region_key(region), size=sample.size, human=np.array([labels[d] for d in ids], dtype=float),
            judge_on_human=np.array([prediction(d) for d in ids], dtype=float),
            judge_only=np.array([prediction(d) for d in only], dtype=float)))
    result = ppi_pair_recall(strata, confidence=inputs.confidence,
                             draws=int(inputs.parameters.get("draws", 20_000)),
                             seed=int(inputs.parameters.get("seed", 0)))
    saved_documents = result.human_labels_saved
    data = result.as_dict()
    for name in ("r1", "r2", "r1_human", "r2_human"):
        data[name]["estimate"] = data[name]["point"]  # the key reports/_interval.html reads
    for s in data["strata"]:
        s["region"] = "N" if s["region"] == "U" else s["region"]
    base.update({
        "available": True,
        "concordance": concordance,
        "r1": data["r1"], "r2": data["r2"], "r1_human": data["r1_human"], "r2_human": data["r2_human"],
        "strata": data["strata"],
        "human_documents": result.human_labels,
        "human_documents_equivalent": round(result.human_labels_equivalent, 1),
        "human_documents_saved": round(saved_documents, 1),
        "human_judgments_saved": round(saved_documents * JUDGMENTS_PER_DOCUMENT, 1),
        "judge_documents": result.judge_documents,
        "confidence": result.confidence,
    })
    return base
