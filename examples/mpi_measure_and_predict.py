"""Measure a machine, then predict schedules on it: fit the postal model (pingpong) and the
pipelined postal model (multicast) over MPI, write model files, and let the simulator rank
allreduce algorithms for larger rank counts with each model.

    mpiexec -n 2 python examples/mpi_measure_and_predict.py [--out DIR]   (default out/)

The same from the command line:

    mpiexec -n 2 hypercuboid bench pingpong --model-file postal.json
    mpiexec -n 2 hypercuboid bench multicast --model-file pipelined.json
    hypercuboid simulate --model-file postal.json allreduce -a ring -n 64 -c 1
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hypercuboid import modelfile
from hypercuboid.mpi import bench
from mpi4py import MPI

comm = MPI.COMM_WORLD
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--out", default="out", help="directory for the model files (default out/)")
out = Path(ap.parse_args().out)
if comm.rank == 0:
    out.mkdir(parents=True, exist_ok=True)
lib = MPI.Get_library_version().replace("\x00", "").splitlines()[0]

pp = bench.pingpong(comm, bench.parse_sizes("1:1M"))
mc = bench.multicast(comm, 8, nbytes=8, iterations=1000, warmup=100, mode="issue")

if comm.rank == 0:
    postal = bench.fit_postal(pp, "median_us")
    pipe = bench.fit_pipelined(mc, "median_us")
    gamma_ns, delta_ns = bench.measure_reduction()
    beta = modelfile.fmt_time(max(postal["beta_ns_per_byte"], 0) * 1e-9)
    gamma = modelfile.fmt_time(gamma_ns * 1e-9) + ",delta=" + modelfile.fmt_time(delta_ns * 1e-9)
    specs = {
        "postal": f"postal:alpha={modelfile.fmt_time(max(postal['alpha_us'], 0) * 1e-6)},"
        f"beta={beta},gamma={gamma}",
        "pipelined": f"pipelined:alpha_p={modelfile.fmt_time(max(pipe['alpha_p_us'], 0) * 1e-6)},"
        f"alpha_r={modelfile.fmt_time(max(pipe['alpha_r_us'], 0) * 1e-6)},beta={beta},"
        f"gamma={gamma}",
    }
    machine = modelfile.machine_info(lib, comm.size)
    for name, spec in specs.items():
        path = modelfile.write(
            out / f"{name}.json", spec, "examples/mpi_measure_and_predict", {}, machine
        )
        print(f"{path}: {spec}")

    import hypercuboid.schedule as hs

    for nranks in (16, 64, 256):
        for name, spec in specs.items():
            times = {
                alg: hs.allreduce(alg, nranks, 1, dtype="int64").simulate(spec).completion_time_ns
                for alg in hs.allreduce_algorithms()
            }
            best = min(times, key=times.get)
            print(f"{nranks:>4} ranks, {name:<9}: best {best} ({times[best] / 1e3:.2f} us)")
