"""Recursive multiplying allreduce: pick a schedule for a machine, check it, simulate it, and
compare it with what MPICH ships.

    .venv/bin/python examples/recursive_multiplying.py [--ranks 96]
"""

from __future__ import annotations

import argparse

import hypercuboid as hc
import hypercuboid.tune as tune


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=96)
    ap.add_argument("--alpha-p", default="1.34us", help="the paper's Table 1 minimum fit")
    ap.add_argument("--alpha-r", default="0.34us")
    args = ap.parse_args()
    n = args.ranks
    model = tune.pipelined_model(args.alpha_p, args.alpha_r, beta="0.4ns", delta="10ns")

    res = tune.tune_allreduce(n, model, top=3, simulate=True)
    print(f"{n} ranks under {model}; b_opt = {res.b_opt:.2f} (eq. 5)")
    for row in res.rows:
        print(
            f"  {row.schedule:<24} predicted {row.predicted_ns:9.1f} ns, "
            f"simulated {row.simulated_ns:9.1f} ns"
        )

    best = res.best.schedule
    sched = hc.schedules.allreduce(f"recursive_multiplying:{best}", n, 1)
    report = sched.verify()
    print(f"verify {best}: sound={report.sound}, rank order={report.semantics['canonical_order']}")

    print("compared with (simulated on the same model):")
    for alg in [
        f"recursive_multiplying:{best}",
        "recursive_doubling",
        "mpich_recursive_multiplying:k=2",
        "mpich_recursive_multiplying:k=4",
        "rabenseifner",
        "elimination",
    ]:
        r = hc.schedules.allreduce(alg, n, 1).simulate(model)
        print(f"  {alg:<40} {r.completion_time_ns:9.1f} ns")


if __name__ == "__main__":
    main()
