"""Design-basis certification plans with and without a scorer (issue 23), and how long sizing one takes (issue 25).

For each world the plan is what the product makes (``certification_sizing.design_basis_certification_plan``):
A12, B1, B2 one stratum each at their precisions, N (U) at the conservative prior
(``design_based.complement_prior_prevalences``: N holding 0.1, 1/3, 1 times the pair's relevant documents),
the largest passable prior point sized by simulated power of the conservative bound (α 0.05, power 0.9).
With a scorer, U is cut into the product's 5 geometric score strata (``stratified.scored_pair_strata``, a
binormal scorer of the stated AUC) and the prior's relevant documents of U are spread over them as that
scorer spreads U's true ones (``spread_prevalence``); without one U is one stratum.

"before" is the previous sizing (``design_based_certification_size``: doubling and bisection at every
passable prior point), unstratified only.  Times are wall-clock on this machine with its load stated.

Run: cd /work/main && .venv/bin/python bench/bench_certification_stratified.py
(output of a run: bench/results/certification_stratified.txt)
"""
from __future__ import annotations

import datetime
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from estimation.stats.certification import CertificationImpossible
from estimation.stats.certification_sizing import design_based_certification_size, design_basis_certification_plan
from estimation.stats.design_based import complement_prior_prevalences, dependent_pair_corpus
from estimation.stats.stratified import scored_pair_strata

AUCS = (None, 0.9, 0.97)


def _worlds():
    """(name, pair {h: (size, precision)}, |U|, U's true relevant count, target)."""
    notes = {"A12": (5000, 0.9), "B1": (3000, 0.5), "B2": (20000, 0.1)}
    for tau in (0.6, 0.65):
        yield f"notes' worked example, τ {tau}", notes, 972_000, 667, tau
    for delta1 in (0.6, 1.3):
        c = dependent_pair_corpus(relevant=2000, recall1=0.7, recall2=0.5, delta1=delta1, corpus_size=20_000)
        pair = {h: (c.sizes[h], c.relevant[h] / c.sizes[h]) for h in ("A12", "B1", "B2")}
        yield f"synthetic 20,000 docs, 2,000 relevant, r1 0.7, r2 0.5, δ1 {delta1}, τ 0.5", pair, c.sizes["U"], \
            c.relevant["U"], 0.5


def _load() -> str:
    return pathlib.Path("/proc/loadavg").read_text().split()[0]


def _u_strata(pair, size_u, relevant_u, auc):
    if auc is None:
        return [("all", size_u)], None
    sizes = {h: s for h, (s, _) in pair.items()} | {"U": size_u}
    relevant = {h: round(s * p) for h, (s, p) in pair.items()} | {"U": relevant_u}
    strata = [s for s in scored_pair_strata(sizes=sizes, relevant=relevant, auc=auc, seed=1) if s.region == "U"]
    return [(s.key, s.size) for s in strata], [s.relevant_true / s.size for s in strata]


def main() -> None:
    print(f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, 2 cores shared; load before {_load()}")
    for name, pair, size_u, relevant_u, tau in _worlds():
        pair_relevant = sum(s * p for s, p in pair.values())
        prevalences = complement_prior_prevalences(pair_relevant=pair_relevant, size_u=size_u)
        print(f"\n## {name}; prior prevalences of N {', '.join(f'{p:.4%}' for p in prevalences)}")
        start = time.perf_counter()
        before = []
        for p in prevalences:
            sizes = {h: s for h, (s, _) in pair.items()} | {"U": size_u}
            try:
                r = design_based_certification_size(sizes=sizes, precisions={h: q for h, (_, q) in pair.items()} |
                                                    {"U": p}, target=tau, seed=1)
                before.append(sum(r[h] for h in sizes))
            except CertificationImpossible:
                pass
        took = time.perf_counter() - start
        print(f"before (no scorer, doubling + bisection at every passable prior point): "
              f"{max(before) if before else 'infeasible'} documents, {took:.1f} s (load {_load()})")
        for auc in AUCS:
            u_strata, weights = _u_strata(pair, size_u, relevant_u, auc)
            start = time.perf_counter()
            plan = design_basis_certification_plan(pair=pair, u_strata=u_strata, prevalences=prevalences, target=tau,
                                                   seed=1, u_weights=weights)
            took = time.perf_counter() - start
            label = "no scorer" if auc is None else f"scorer AUC {auc}"
            if plan.sized is None:
                print(f"{label:>16}: infeasible ({'; '.join(r for _, r in plan.refused)[:120]}) {took:.1f} s")
                continue
            s = plan.sized
            print(f"{label:>16}: {s.total:>7,} documents (A12 {s.regions['A12']:,}, B1 {s.regions['B1']:,}, "
                  f"B2 {s.regions['B2']:,}, N {s.regions['U']:,} in {len(u_strata)} strata), at N prevalence "
                  f"{plan.prevalence_u:.4%}, recall planned {s.truth:.3f}, power {s.power:.3f}; "
                  f"{s.evaluations} power simulations, {took:.1f} s (load {_load()})")

    print("\n## a noisy crowd (three votes per document, the verdict's label-error correction simulated)")
    c = dependent_pair_corpus(relevant=2000, recall1=0.7, recall2=0.5, delta1=1.3, corpus_size=20_000)
    pair = {h: (c.sizes[h], c.relevant[h] / c.sizes[h]) for h in ("A12", "B1", "B2")}
    prevalences = complement_prior_prevalences(pair_relevant=sum(s * p for s, p in pair.values()), size_u=c.sizes["U"])
    for accuracy in (None, 0.95, 0.85):
        start = time.perf_counter()
        plan = design_basis_certification_plan(pair=pair, u_strata=[("all", c.sizes["U"])], prevalences=prevalences,
                                               target=0.5, seed=1, accuracy=accuracy)
        took = time.perf_counter() - start
        label = "perfect labels" if accuracy is None else f"workers at {accuracy}"
        total = "infeasible" if plan.sized is None else f"{plan.sized.total:,} documents"
        print(f"synthetic δ1 1.3, τ 0.5, no scorer, {label}: {total}, {took:.1f} s (load {_load()})")


if __name__ == "__main__":
    main()
