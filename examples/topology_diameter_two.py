"""Reproduce the diameter-two seed's cost and scale numbers (Kathareios et al., SC15).

Run: .venv/bin/python examples/topology_diameter_two.py
"""

from hypercuboid import topology

print(
    f"{'topology':22} {'N':>6} {'R':>4} {'r':>3} {'D':>2} {'ports/N':>8} {'links/N':>8} "
    f"{'bisection/N':>12}"
)
for spec in ["slimfly:q=13,p=9", "slimfly:q=13,p=10", "mlfm:h=15", "oft:k=12"]:
    info = topology.analyze(spec, bisection=True, seeds=4)
    print(
        f"{info['name']:22} {info['endpoints']:>6} {info['routers']:>4} "
        f"{info['router_radix']:>3} {info['diameter']:>2} {info['ports_per_endpoint']:>8.3f} "
        f"{info['links_per_endpoint']:>8.3f} {info['bisection']['per_endpoint']:>12.3f}"
    )

print("\nlargest instances with router radix <= 64:")
for row in topology.compare(64)[:4]:
    print(f"  {row['label']:20} {row['spec']:20} {row['endpoints']:>7,} endpoints")

print("\nthe 4-ML3B of the seed's Table 2:")
for i, row in enumerate(topology.ml3b(4)):
    print(f"  {i:2}: {row}")
