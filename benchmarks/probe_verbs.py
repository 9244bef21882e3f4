"""The cases of ``benchmarks/probe.py`` for the verbs of the second stop: ``calibrate``,
``predict`` (``--emit-table``), ``validate``, ``tune -a all`` and ``tune alltoall``, ``trace``
(``run``, ``convert``, ``show``, ``whatif``, ``export``), ``schedule library``, ``schedule
import-otf2``, SimGrid platforms (``topo export --format simgrid``, ``simgrid:FILE``, ``*.xml``),
the node model (``--node``, a model file's ``node`` key), model files with ``models`` and
``fits``, and the Python APIs behind them. ``cases`` adds them through the probe's own ``cli``
and ``api``; ``mpi`` cases run under ``mpiexec -n NP`` (Open MPI's wheel next to the Python
that runs the probe)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

NUMBERS = ["-1", "0", "nan", "inf", "", "abc", "1e999", "99999999999999999999999", "1.5"]
SIZES = ["-1B", "0", "nan", "inf", "1ZiB", "", "12XB", "8:4", "1:1:1", "8,,16", "3"]
MODEL = "loggops:L=3000,o=1500,g=1000,G=6"
MPIEXEC = str(Path(sys.executable).parent / "mpiexec")
#: What Open MPI needs to run here (as root, on shared memory).
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,sm",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}
NODES = [
    "node:ranks=0,bw=1GB/s",
    "node:ranks=-1,bw=1GB/s",
    "node:bw=1GB/s",
    "node:ranks=4",
    "node:ranks=4,bw=0",
    "node:ranks=4,bw=nan",
    "node:ranks=4,bw=-1GB/s",
    "node:ranks=4,bw=inf",
    "node:ranks=99999999999999999999,bw=1GB/s",
    "node:ranks=4,bw=1GB/s,map=nosuch",
    "node:ranks=4,bw=1GB/s,nic=0",
    "node:ranks=4,ranks=8,bw=1GB/s",
    "node:ranks=4,bw=1GB/s,zz=1",
    "nosuch:ranks=4,bw=1GB/s",
    "",
    "node",
    "node:",
    "NODE:ranks=4,bw=1GB/s",
    "node:ranks=4,bw=1GB/s,map=BLOCK",
    "node:ranks=abc,bw=1GB/s",
]
#: Model files (name -> JSON text) with every key wrong in turn.
MODEL_FILES = {
    "mf-model-int.json": '{"model": 5}',
    "mf-model-empty.json": '{"model": ""}',
    "mf-no-model.json": '{"node": "node:ranks=4,bw=1GB/s"}',
    "mf-list.json": "[1, 2]",
    "mf-null.json": "null",
    "mf-node-bad.json": json.dumps({"model": MODEL, "node": "node:ranks=0,bw=1GB/s"}),
    "mf-node-int.json": json.dumps({"model": MODEL, "node": 5}),
    "mf-node-postal.json": json.dumps(
        {"model": "postal:alpha=1us", "node": "node:ranks=2,bw=1GB/s"}
    ),
    "mf-models-list.json": json.dumps({"model": MODEL, "models": ["postal:alpha=1us"]}),
    "mf-models-bad.json": json.dumps({"model": MODEL, "models": {"postal": "postal:zz=1"}}),
    "mf-models-int.json": json.dumps({"model": MODEL, "models": {"postal": 5}}),
    "mf-nranks-neg.json": json.dumps({"model": MODEL, "nranks": -1}),
    "mf-nranks-str.json": json.dumps({"model": MODEL, "nranks": "4"}),
    "mf-nranks-huge.json": json.dumps({"model": MODEL, "nranks": 10**30}),
    "mf-nranks-float.json": json.dumps({"model": MODEL, "nranks": 2.5}),
    "mf-rpn-zero.json": json.dumps({"model": MODEL, "ranks_per_node": 0}),
    "mf-library-int.json": json.dumps({"model": MODEL, "library": 7}),
    "mf-fits-nan.json": f'{{"model": "{MODEL}", "fits": NaN}}',
    "mf-dup.json": f'{{"model": "{MODEL}", "model": "postal:zz=1"}}',
    "mf-deep.json": f'{{"model": "{MODEL}", "fits": {"[" * 100_000 + "]" * 100_000}}}',
    "mf-ok-node.json": json.dumps(
        {
            "model": MODEL,
            "node": "node:ranks=2,bw=10GB/s",
            "models": {"postal": "postal:alpha=1us,beta=0.1ns"},
            "fits": {"r2": 0.99},
            "nranks": 4,
            "ranks_per_node": 2,
            "library": "Open MPI v5.0.8",
        }
    ),
}
#: SimGrid platforms (name -> text): a valid one and broken ones.
XML_HEAD = '<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Floyd">\n'
XML_OK = (
    XML_HEAD
    + '<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><router id="r"/>\n'
    + '<link id="la" bandwidth="1Gbps" latency="1us"/>'
    + '<link id="lb" bandwidth="1Gbps" latency="1us"/>\n'
    + '<route src="a" dst="r"><link_ctn id="la"/></route>'
    + '<route src="b" dst="r"><link_ctn id="lb"/></route>\n</zone>\n</platform>\n'
)
XMLS = {
    "ok.xml": XML_OK,
    "trunc.xml": XML_OK[: len(XML_OK) // 2],
    "v3.xml": XML_OK.replace('version="4.1"', 'version="3"'),
    "negbw.xml": XML_OK.replace(
        'bandwidth="1Gbps" latency="1us"/><link id="lb"',
        'bandwidth="-1Gbps" latency="1us"/><link id="lb"',
    ),
    "nanbw.xml": XML_OK.replace("1Gbps", "nanGbps"),
    "zerobw.xml": XML_OK.replace("1Gbps", "0Gbps"),
    "badlat.xml": XML_OK.replace("1us", "1parsec"),
    "hugebw.xml": XML_OK.replace("1Gbps", "1e999Gbps"),
    "unknownlink.xml": XML_OK.replace('<link_ctn id="lb"/>', '<link_ctn id="nosuch"/>'),
    "unknownhost.xml": XML_OK.replace('src="b"', 'src="nosuch"'),
    "duphost.xml": XML_OK.replace('<host id="b"', '<host id="a"'),
    "nohosts.xml": XML_HEAD + "</zone>\n</platform>\n",
    "notplatform.xml": "<html><body>hello</body></html>\n",
    "noroute.xml": XML_OK.split("<route")[0] + "</zone>\n</platform>\n",
    "unconnected.xml": XML_OK.replace('<route src="b" dst="r"><link_ctn id="lb"/></route>', ""),
    "routing-nosuch.xml": XML_OK.replace('routing="Floyd"', 'routing="Nosuch"'),
    "laughs.xml": (
        '<?xml version="1.0"?>\n<!DOCTYPE platform [\n<!ENTITY a "aaaaaaaaaa">\n'
        + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n' for i in range(9))
        + ']>\n<platform version="4.1"><zone id="&j;" routing="Floyd"></zone></platform>\n'
    ),
    "bigcluster.xml": (
        XML_HEAD.replace('<zone id="z" routing="Floyd">\n', "")
        + '<cluster id="c" prefix="h" suffix="" radical="0-99999999" speed="1Gf" '
        + 'bw="1Gbps" lat="1us"/>\n</platform>\n'
    ),
}


def cases(d: Path, f: dict, cli, api, mpi) -> None:
    """Adds the cases (``cli(name, *argv, keep=)``, ``api(name, code, keep=)``, ``mpi(name, np,
    *argv, keep=)``); ``f``: the probe's common files by kind."""
    hct = str(d / "ok.hct")
    xml = str(d / "ok.xml")
    kj, kc, kp, kt = (str(d / n) for n in ("keep.json", "keep.csv", "keep.png", "keep.txt"))
    bad_traces = [
        "missing",
        "empty",
        "dir",
        "zero",
        "garbage",
        "trunc.hct",
        "head.hct",
        "corrupt.hct",
        "manyranks.hct",
        "rankfile.hct",
    ]
    tf = {**f, **{k: str(d / k) for k in bad_traces if k.endswith(".hct")}}

    # predict: numbers, sizes, algorithms, models, node specs, outputs.
    P = ["predict", "-m", MODEL, "--sizes", "8,1K"]
    for v in NUMBERS + ["1", "4294967295", "1000000"]:
        cli(f"predict -n {v!r}", *P, "-n", v)
        cli(f"predict -c {v!r}", "predict", "-m", MODEL, "-n", "4", "-c", v)
    for v in NUMBERS:
        cli(f"predict --threads {v!r}", *P, "-n", "4", "--threads", v)
    for v in SIZES:
        cli(f"predict --sizes {v!r}", "predict", "-m", MODEL, "-n", "4", "--sizes", v)
        cli(f"schedule library --sizes {v!r}", "schedule", "library", "-n", "4", "--sizes", v)
    for a in ["nosuch", "", "ring,ring", "RING", "Ring,recursive_doubling", ";", "ring;;rd", "all"]:
        cli(f"predict -a {a!r}", *P, "-n", "4", "-a", a)
        cli(f"tune alltoall -a {a!r}", "tune", "alltoall", "-n", "4", "-m", MODEL, "-a", a)
    for c in ["nosuch", "ALLREDUCE", "", "bcast"]:
        cli(f"predict --collective {c!r}", *P, "-n", "4", "--collective", c)
    for dt in ["float128", "", "FLOAT64", "int7"]:
        cli(f"predict --dtype {dt!r}", *P, "-n", "4", "--dtype", dt)
        cli(f"schedule library --dtype {dt!r}", "schedule", "library", "-n", "4", "--dtype", dt)
    for m in ["postal:zz=1", "", "nosuch:a=1", "loggops:o=nan", "loggops:S=-1"]:
        cli(f"predict -m {m!r}", "predict", "-n", "4", "--sizes", "8", "-m", m)
        cli(f"tune alltoall -m {m!r}", "tune", "alltoall", "-n", "4", "-m", m)
    ring4 = ["allreduce", "-a", "ring", "-n", "4"]
    node2 = ["--node", "node:ranks=2,bw=1GB/s"]
    for node in NODES:
        cli(f"predict --node {node!r}", *P, "-n", "4", "--node", node)
        cli(f"simulate --node {node!r}", "simulate", "-m", MODEL, "--node", node, *ring4, "-c", "8")
    cli("simulate --node on postal", "simulate", "-m", "postal:alpha=1us", *node2, *ring4)
    cli("simulate --node with --topo", "simulate", "-m", MODEL, "-t", "tree:fig5b", *node2, *ring4)
    cli("simulate --node huge -n", "simulate", "-m", MODEL, *node2, *ring4[:4], "4294967294")
    cli("simulate --node ranks>n", "simulate", "-m", MODEL, "--node", "node:ranks=64,bw=1", *ring4)
    cli("simulate --node goal", "simulate", "-m", MODEL, *node2, "--goal", f["garbage"])
    cli("predict no model", "predict", "-n", "4")
    cli(
        "predict --emit-table alltoall",
        *P,
        "-n",
        "4",
        "--collective",
        "alltoall",
        "--emit-table",
        str(d / "t-a2a.txt"),
    )
    for name in ("dir", "missing", "empty"):
        cli(
            f"predict --emit-table {name}",
            *P,
            "-n",
            "4",
            "--emit-table",
            f[name] if name != "missing" else str(d / "nodir" / "t.txt"),
        )
    cli("predict --emit-table ''", *P, "-n", "4", "--emit-table", "")
    cli("predict --emit-table /dev/full", *P, "-n", "4", "--emit-table", "/dev/full", "--force")
    cli("predict --plot out.xyz", *P, "-n", "4", "--plot", str(d / "p.xyz"))
    for name, argv, k in [
        ("predict --emit-table existing", [*P, "-n", "4", "--emit-table", kt], kt),
        ("predict --json existing", [*P, "-n", "4", "--json", kj], kj),
        ("predict --csv existing", [*P, "-n", "4", "--csv", kc], kc),
        ("predict --plot existing", [*P, "-n", "4", "--plot", kp], kp),
        ("schedule library --json existing", ["schedule", "library", "-n", "4", "--json", kj], kj),
        (
            "tune alltoall --json existing",
            ["tune", "alltoall", "-n", "4", "-m", MODEL, "--json", kj],
            kj,
        ),
        (
            "tune allreduce -a all --json existing",
            [
                "tune",
                "allreduce",
                "-n",
                "8",
                "--alpha-p",
                "1us",
                "--alpha-r",
                "0.3us",
                "-a",
                "all",
                "--json",
                kj,
            ],
            kj,
        ),
        (
            "topo export simgrid existing",
            ["topo", "export", "tree:fig5b", "--format", "simgrid", "-o", kt],
            kt,
        ),
        ("trace convert -o existing", ["trace", "convert", hct, "-o", kt], kt),
        ("trace export -o existing", ["trace", "export", hct, "-o", kj], kj),
        ("trace show --json existing", ["trace", "show", hct, "--json", kj], kj),
        ("trace show --plot existing", ["trace", "show", hct, "--plot", kp], kp),
        ("trace whatif --json existing", ["trace", "whatif", hct, "-m", MODEL, "--json", kj], kj),
        ("import-otf2 -o existing", ["schedule", "import-otf2", f["garbage"], "-o", kt], kt),
        ("trace run -o existing", ["trace", "run", "-o", kt, "--", "true"], kt),
    ]:
        cli(name, *argv, keep=k)

    # Model files: every key wrong in turn, for each reader.
    for name in list(MODEL_FILES) + ["missing", "empty", "dir", "zero", "garbage", "trunc.json"]:
        path = str(d / name) if name in MODEL_FILES else f[name]
        cli(
            f"predict --model-file {name}",
            "predict",
            "-n",
            "4",
            "--sizes",
            "8",
            "--model-file",
            path,
        )
        cli(
            f"simulate --model-file {name}",
            "simulate",
            "--model-file",
            path,
            "allreduce",
            "-a",
            "ring",
            "-n",
            "4",
        )
        if name in MODEL_FILES:
            cli(
                f"tune alltoall --model-file {name}",
                "tune",
                "alltoall",
                "-n",
                "4",
                "--model-file",
                path,
            )
            api(
                f"api modelfile.load_file {name}",
                f"mf.load_file({path!r})",
            )
    cli(
        "tune allreduce --model-file node",
        "tune",
        "allreduce",
        "-n",
        "8",
        "--model-file",
        str(d / "mf-ok-node.json"),
    )
    cli(
        "trace whatif --model-file bad",
        "trace",
        "whatif",
        hct,
        "--model-file",
        str(d / "mf-models-bad.json"),
    )

    # tune: -a all and friends.
    T = ["tune", "allreduce", "--alpha-p", "1us", "--alpha-r", "0.3us"]
    for v in NUMBERS + ["1", "4294967295"]:
        cli(f"tune allreduce -a all -n {v!r}", *T, "-n", v, "-a", "all")
        cli(f"tune alltoall -n {v!r}", "tune", "alltoall", "-m", MODEL, "-n", v)
        cli(f"tune alltoall -c {v!r}", "tune", "alltoall", "-m", MODEL, "-n", "4", "-c", v)
    for a in ["all,ring", "ALL", "nosuch", "", "ring,ring", "recursive_multiplying:zz"]:
        cli(f"tune allreduce -a {a!r}", *T, "-n", "8", "-a", a)
    cli("tune alltoall no model", "tune", "alltoall", "-n", "4")
    cli(
        "tune alltoall -m and --model-file",
        "tune",
        "alltoall",
        "-n",
        "4",
        "-m",
        MODEL,
        "--model-file",
        str(d / "mf-ok-node.json"),
    )

    # schedule library.
    for v in NUMBERS + ["1", "4294967295", "4294967294"]:
        cli(f"schedule library -n {v!r}", "schedule", "library", "-n", v)
    for lib in ["nosuch", "OPENMPI", "", "openmpi,mpich"]:
        cli(
            f"schedule library --library {lib!r}",
            "schedule",
            "library",
            "-n",
            "4",
            "--library",
            lib,
        )
    cli(
        "schedule library --collective bcast",
        "schedule",
        "library",
        "-n",
        "4",
        "--collective",
        "bcast",
    )

    # schedule import-otf2.
    for k in ("missing", "empty", "dir", "zero", "garbage"):
        cli(f"import-otf2 {k}", "schedule", "import-otf2", f[k])
    for opt, v in [
        ("--allreduce", "nosuch"),
        ("--alltoall", ""),
        ("--library", "nosuch"),
        ("--compute-scale", "-1"),
        ("--compute-scale", "nan"),
        ("--compute-scale", "inf"),
        ("--compute-scale", "abc"),
    ]:
        cli(f"import-otf2 {opt} {v!r}", "schedule", "import-otf2", f["garbage"], opt, v)
    cli("import-otf2 -o dir", "schedule", "import-otf2", f["garbage"], "-o", f["dir"])

    # trace convert / show / whatif / export on broken traces.
    for k in bad_traces:
        cli(f"trace convert {k}", "trace", "convert", tf[k])
        cli(f"trace show {k}", "trace", "show", tf[k])
        cli(f"trace whatif {k}", "trace", "whatif", tf[k], "-m", MODEL)
        cli(
            f"trace export {k}", "trace", "export", tf[k], "-o", str(d / f"exp-{k}.json"), "--force"
        )
        api(
            f"api AppTrace.load {k}",
            f"AppTrace.load({tf[k]!r}).convert()",
        )
    for v in ["-1", "nan", "inf", "abc", "", "1e308", "0"]:
        cli(f"trace convert --compute-scale {v!r}", "trace", "convert", hct, "--compute-scale", v)
        cli(
            f"trace convert --reduce-ns-per-byte {v!r}",
            "trace",
            "convert",
            hct,
            "--reduce-ns-per-byte",
            v,
        )
        cli(
            f"trace whatif --compute-scale {v!r}",
            "trace",
            "whatif",
            hct,
            "-m",
            MODEL,
            "--compute-scale",
            v,
        )
    for opt, v in [
        ("--allreduce", "nosuch"),
        ("--allreduce", ""),
        ("--allreduce", "RING"),
        ("--alltoall", "nosuch"),
        ("--alltoall", "ring"),
        ("--format", "xml"),
        ("--collectives", "nosuch"),
        ("--allreduce", "recursive_multiplying:zz"),
    ]:
        cli(f"trace convert {opt} {v!r}", "trace", "convert", hct, opt, v)
    for opt, v in [
        ("--allreduce", "ring,,rd"),
        ("--allreduce", "ring,ring"),
        ("--alltoall", "nosuch"),
        ("-t", "nosuch:q=1"),
        ("-t", "slimfly:q=5"),
        ("-t", xml),
        ("-m", "postal:zz=1"),
        ("--collectives", "library"),
    ]:
        cli(f"trace whatif {opt} {v!r}", "trace", "whatif", hct, "-m", MODEL, opt, v)
    cli("trace whatif no model", "trace", "whatif", hct)
    cli(
        "trace whatif -m and -t",
        "trace",
        "whatif",
        hct,
        "-m",
        MODEL,
        "-t",
        "tree:fig5b",
        "--allreduce",
        "ring",
    )
    cli(
        "trace export --format perfetto",
        "trace",
        "export",
        hct,
        "--format",
        "perfetto",
        "-o",
        str(d / "e.json"),
    )
    cli("trace export -o dir", "trace", "export", hct, "-o", f["dir"])
    cli("trace export -o ''", "trace", "export", hct, "-o", "")
    cli("trace export -o /dev/full", "trace", "export", hct, "-o", "/dev/full", "--force")
    cli("trace show --plot out.xyz", "trace", "show", hct, "--plot", str(d / "m.xyz"))
    cli(
        "trace whatif --plot out.xyz",
        "trace",
        "whatif",
        hct,
        "-m",
        MODEL,
        "--plot",
        str(d / "w.xyz"),
    )
    cli("trace convert -o dir", "trace", "convert", hct, "-o", f["dir"])
    cli("trace convert partial of complete", "trace", "convert", hct, "--partial")
    cli("trace convert library collectives", "trace", "convert", hct, "--collectives", "library")

    # trace run: no command, a missing recorder, a command that is not MPI.
    rec = ["trace", "run", "-o", str(d / "run.hct"), "--force"]
    cli("trace run no command", *rec)
    cli("trace run no output", "trace", "run", "--", "true")
    cli("trace run missing command", *rec, "--", "no-such-command-xyz")
    cli("trace run non-MPI command", *rec, "--recorder", f["garbage"], "--", "true")
    for k in ("missing", "dir", "empty"):
        cli(f"trace run --recorder {k}", *rec, "--recorder", f[k], "--", "true")
    for v in ["-1", "0", "nan", "1ZiB", "abc", ""]:
        cli(f"trace run --flush-bytes {v!r}", *rec, "--flush-bytes", v, "--", "true")
    cli("trace run -o dir", "trace", "run", "-o", f["dir"], "--", "true")

    # SimGrid platforms: export, then read back broken ones everywhere a topology goes.
    for fmt in ["SIMGRID", "simgrid:x", "xml"]:
        cli(f"topo export --format {fmt!r}", "topo", "export", "tree:fig5b", "--format", fmt)
    for spec in ["torus:dims=1000x1000", "slimfly:q=1000003"]:
        cli(f"topo export simgrid {spec}", "topo", "export", spec, "--format", "simgrid")
    cli("topo export -o x.XML", "topo", "export", "tree:fig5b", "-o", str(d / "x.XML"))
    host = ["-m", "loggops:o=1us,g=1us"]
    for name in list(XMLS) + ["missing.xml", "dir.xml", "zero"]:
        path = {"zero": "/dev/zero", "dir.xml": str(d / "dir.xml")}.get(name, str(d / name))
        cli(f"topo show simgrid:{name}", "topo", "show", f"simgrid:{path}")
        if name != "zero":
            cli(f"topo show {name}", "topo", "show", path)
        cli(f"simulate -t {name}", "simulate", "-t", f"simgrid:{path}", *host, *ring4[:4], "2")
        api(f"api topology.generate simgrid:{name}", f"topology.generate('simgrid:' + {path!r})")
    net = f"netsim run -t {xml} --load 0.1 -j 1 --time 2us -x 1us"
    cli("netsim run -t simgrid", *net.split())
    cli("alltoall phases -t simgrid", "alltoall", "phases", "-t", xml)
    cli("simulate -t simgrid -n 3", "simulate", "-t", xml, *host, *ring4[:4], "3")
    cli("topo show simgrid:", "topo", "show", "simgrid:")
    cli("topo show SIMGRID:ok.xml", "topo", "show", f"SIMGRID:{xml}")

    # MPI verbs under mpiexec: np=1 where 2 are needed, bad options at np=2.
    out = str(d / "cal.json")
    mpi("calibrate -n 1", 1, "calibrate", "-o", out, "--force")
    mpi("validate -n 1 no model", 1, "validate")
    for opt, v in [
        ("--sizes", "nan"),
        ("--sizes", "8"),
        ("--sizes", "0:8"),
        ("-i", "-1"),
        ("-i", "0"),
        ("-x", "-1"),
        ("--dtype", "float128"),
        ("--op", "avg"),
        ("--timeout", "nan"),
        ("--timeout", "-1"),
        ("--plot", str(d / "c.xyz")),
    ]:
        mpi(f"calibrate {opt} {v!r}", 2, "calibrate", "-o", out, "--force", opt, v)
    mpi("calibrate -o dir", 2, "calibrate", "-o", f["dir"])
    mpi("calibrate -o missing dir", 2, "calibrate", "-o", str(d / "nodir" / "c.json"))
    mpi("calibrate -o existing", 2, "calibrate", "-o", kj, keep=kj)
    V = ["validate", "-m", "postal:alpha=1us"]
    for opt, v in [
        ("-a", "nosuch"),
        ("-a", "RING"),
        ("--sizes", "nan"),
        ("--sizes", "3"),
        ("--model-file", f["missing"]),
        ("--model-file", str(d / "mf-node-bad.json")),
        ("--node", "node:ranks=0,bw=1GB/s"),
        ("--runner", "nosuch"),
        ("-i", "-1"),
        ("--timeout", "nan"),
        ("--collective", "bcast"),
        ("--dtype", "float128"),
        ("--plot", str(d / "v.xyz")),
    ]:
        mpi(f"validate {opt} {v!r}", 2, *V, opt, v)
    mpi(
        "validate --json existing",
        2,
        *V,
        "-a",
        "ring",
        "--sizes",
        "8",
        "-i",
        "1",
        "-x",
        "0",
        "--json",
        kj,
        keep=kj,
    )

    # The Python APIs behind the new verbs.
    for name, code in [
        ("predict nranks='4'", "hp.predict('allreduce', [8], ['4'], P)"),
        (
            "predict sizes=[nan]",
            "hp.predict('allreduce', [math.nan], [4], P)",
        ),
        ("predict sizes=[-8]", "hp.predict('allreduce', [-8], [4], P)"),
        ("predict sizes=[]", "hp.predict('allreduce', [], [4], P)"),
        (
            "predict ranks=[2**70]",
            "hp.predict('allreduce', [8], [2**70], P)",
        ),
        ("predict collective=None", "hp.predict(None, [8], [4], P)"),
        ("predict model=None", "hp.predict('allreduce', [8], [4], None)"),
        (
            "predict threads=-1",
            "hp.predict('allreduce', [8], [4], P, threads=-1)",
        ),
        ("predict node=5", "hp.predict('allreduce', [8], [4], P, node=5)"),
        (
            "predict algorithms='ring'",
            "hp.predict('allreduce', [8], [4], P, algorithms='ring')",
        ),
        (
            "predict tuning=bad",
            f"hp.predict('allreduce', [8], [4], {MODEL!r}, tuning='postal:zz=1')",
        ),
        (
            "write_table to dir",
            f"hp.write_table(hp.predict('allreduce', [8], [4], P), {f['dir']!r})",
        ),
        ("library.choice bad lib", "hc.library.choice('nosuch', 'allreduce', 4, 8)"),
        ("library.choice nranks=0", "hc.library.choice('openmpi', 'allreduce', 0, 8)"),
        ("library.choice nbytes=-1", "hc.library.choice('openmpi', 'allreduce', 4, -1)"),
        ("library.choice dtype=bad", "hc.library.choice('openmpi', 'allreduce', 4, 8, dtype='x')"),
        ("library.choice nbytes=1.5", "hc.library.choice('openmpi', 'allreduce', 4, 1.5)"),
        (
            "modelfile.write bad spec",
            f"mf.write({str(d / 'w.json')!r}, 'postal:zz=1', 's', {{}}, {{}})",
        ),
        (
            "modelfile.write nranks=0",
            f"mf.write({str(d / 'w.json')!r}, P, 's', {{}}, {{}}, nranks=0)",
        ),
        (
            "modelfile.write fits=nan",
            f"mf.write({str(d / 'w.json')!r}, P, 's', {{}}, {{}}, fits=math.nan)",
        ),
        (
            "modelfile.write to dir",
            f"mf.write({f['dir']!r}, P, 's', {{}}, {{}})",
        ),
        (
            "modelfile.check_node bad",
            "mf.check_node('node:ranks=0')",
        ),
        (
            "modelfile.check_node None",
            "mf.check_node(None)",
        ),
        ("AppTrace.load None", "AppTrace.load(None)"),
        (
            "convert compute_scale=nan",
            f"AppTrace.load({hct!r}).convert(compute_scale=math.nan)",
        ),
        (
            "convert compute_scale='a'",
            f"AppTrace.load({hct!r}).convert(compute_scale='a')",
        ),
        (
            "convert allreduce=5",
            f"AppTrace.load({hct!r}).convert(allreduce=5)",
        ),
        (
            "AppTrace.calls(99)",
            f"AppTrace.load({hct!r}).calls(99)",
        ),
        (
            "AppTrace.calls(-1)",
            f"AppTrace.load({hct!r}).calls(-1)",
        ),
        (
            "export_chrome to dir",
            f"AppTrace.load({hct!r}).export_chrome({f['dir']!r})",
        ),
        (
            "synthetic(-1)",
            f"synthetic(-1, 2, {str(d / 's.hct')!r})",
        ),
        (
            "synthetic(0)",
            f"synthetic(0, 2, {str(d / 's.hct')!r})",
        ),
        (
            "record([])",
            f"record([], {str(d / 'r.hct')!r})",
        ),
        (
            "library_path nosuch",
            "library_path('nosuch')",
        ),
        (
            "otf2_to_goal missing",
            f"otf2_to_goal({f['missing']!r})",
        ),
        (
            "otf2_to_goal scale=nan",
            f"otf2_to_goal({f['garbage']!r}, compute_scale=math.nan)",
        ),
        (
            "otf2_to_goal scale='a'",
            f"otf2_to_goal({f['garbage']!r}, compute_scale='a')",
        ),
        ("read_simgrid zero", "topology.read_simgrid('/dev/zero')"),
        ("topology.load zero", "topology.load('/dev/zero')"),
        ("topology.load dir.xml", f"topology.load({str(d / 'dir.xml')!r})"),
        ("to_simgrid None", "topology.to_simgrid(None)"),
        ("export simgrid huge", "topology.export('torus:dims=1000x1000', 'simgrid')"),
        ("parse_node bad", "hc._core.parse_node('node:ranks=0')"),
        (
            "simulate node=bad",
            f"schedules.allreduce('ring', 4).simulate(model={MODEL!r}, node='node:ranks=0')",
        ),
        ("tune.optimal_schedule 0", "hc.tune.optimal_schedule(0, 1e-6, 3e-7)"),
    ]:
        api(f"api {name}", code)
    api(
        "api modelfile.write existing",
        f"mf.write({kj!r}, P, 's', {{}}, {{}})",
        keep=kj,
    )
    api(
        "api write_table existing",
        f"hp.write_table(hp.predict('allreduce', [8], [4], P), {kt!r})",
        keep=kt,
    )
    api(
        "api export_chrome existing",
        f"AppTrace.load({hct!r}).export_chrome({kj!r})",
        keep=kj,
    )
    api(
        "api topology.export simgrid existing",
        f"topology.export('tree:fig5b', 'simgrid', {kt!r})",
        keep=kt,
    )


def fixtures(d: Path, cli_argv: list[str]) -> None:
    """The files these cases read: model files, SimGrid platforms, a synthetic trace and broken
    copies of it."""
    for name, text in {**MODEL_FILES, **XMLS}.items():
        (d / name).write_text(text)
    (d / "dir.xml").mkdir()
    code = "import sys; from hypercuboid.apptrace import synthetic; synthetic(2, 3, sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(d / "ok.hct")], check=True)
    ok = (d / "ok.hct").read_bytes()
    (d / "trunc.hct").write_bytes(ok[: len(ok) // 2])
    (d / "head.hct").write_bytes(ok[:10])
    bad = bytearray(ok)
    for i in range(24, len(bad), 7):
        bad[i] ^= 0x5A
    (d / "corrupt.hct").write_bytes(bytes(bad))
    (d / "manyranks.hct").write_bytes(
        b"HCTPACK\0" + (1).to_bytes(4, "little") + (2**32 - 1).to_bytes(4, "little") + b"\0" * 64
    )
    (d / "rankfile.hct").write_bytes(
        b"HCTRACE\0"
        + (1).to_bytes(4, "little")
        + (0).to_bytes(4, "little")
        + (2**31).to_bytes(4, "little")
        + (4).to_bytes(4, "little")
        + b"junk"
        + b"\x07" * 100
    )


def mpi_case(np: int, argv: list[str], cli_argv: list[str]) -> tuple[list[str], dict]:
    """The command and extra environment of a case under ``mpiexec -n np``."""
    return [MPIEXEC, "-n", str(np), *cli_argv, *argv], dict(MPI_ENV)


#: A line of Open MPI's PMIx server (``[host:pid] PMIX ERROR: PMIX_ERR_UNREACH in file
#: .../pmix_server.c``), which it prints on a loaded machine when ranks leave with a failure.
_PMIX = re.compile(r"^\[[^\]]*\] PMIX ERROR: ")


def launcher_free(stderr: str) -> str:
    """``stderr`` without the launcher's own notices (Open MPI's boxes between lines of dashes,
    which say that a rank exited non-zero, and its PMIx server's lines): what the probe judges
    is what hypercuboid says."""
    out, box = [], False
    for line in stderr.splitlines():
        if line.startswith("-" * 20):
            box = not box
            continue
        if not box and not _PMIX.match(line):
            out.append(line)
    return "\n".join(out)


if __name__ == "__main__":
    print("run benchmarks/probe.py", file=sys.stderr)
    sys.exit(os.EX_USAGE)
