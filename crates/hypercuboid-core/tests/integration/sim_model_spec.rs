//! Model and noise spec strings: parsing, defaults, printing back, every error message.

use hypercuboid_core::model::{
    parse_model, parse_noise, LogGopsModel, ModelError, ModelSpec, NoiseSpec, PostalModel, TieOrder,
};
use hypercuboid_core::spec::SpecError;
use hypercuboid_core::units::{ns, us};

fn err(spec: &str) -> String {
    parse_model(spec).unwrap_err().to_string()
}

fn noise_err(spec: &str) -> String {
    parse_noise(spec).unwrap_err().to_string()
}

/// LogGOPSim's defaults (simulator.ggo): L=2500 o=1500 g=1000 G=6 O=0 S=65535.
const LOGGOPSIM_DEFAULTS: LogGopsModel = LogGopsModel {
    latency: ns(2500),
    overhead: ns(1500),
    gap: ns(1000),
    gap_per_byte: 6000.0,
    overhead_per_byte: 0.0,
    eager_limit: 65535,
    rendezvous: 0,
    switch2: u64::MAX,
    switch2_latency: 0,
    crossing: 0,
    gamma: 0.0,
    delta: 0,
    copy: 0.0,
    order: TieOrder::Stable,
};

#[test]
fn parses_the_cli_examples() {
    assert_eq!(
        parse_model("postal:alpha=1us,beta=0.4ns,gamma=0").unwrap(),
        ModelSpec::Postal(PostalModel {
            alpha_p: 0,
            alpha_r: us(1),
            beta: 400.0,
            gamma: 0.0,
            delta: 0,
        })
    );
    assert_eq!(
        parse_model("pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0").unwrap(),
        ModelSpec::Pipelined(PostalModel {
            alpha_p: ns(500),
            alpha_r: ns(100),
            beta: 400.0,
            gamma: 0.0,
            delta: 0,
        })
    );
    assert_eq!(
        parse_model("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535").unwrap(),
        // LogGOPSim's defaults (checked in `defaults`) but L.
        ModelSpec::LogGops(LogGopsModel {
            latency: ns(3000),
            ..LOGGOPSIM_DEFAULTS
        })
    );
    // Spaces around items, units, and delta (the paper's "compute 10 ns" per reduction).
    assert_eq!(
        parse_model(" postal: alpha = 2.5us , delta=10ns ").unwrap(),
        ModelSpec::Postal(PostalModel::postal(ns(2500), 0.0, 0.0, ns(10)))
    );
    // S is a size.
    for (s, bytes) in [
        ("65535", 65535),
        ("64KiB", 65536),
        ("64k", 65536),
        ("1M", 1 << 20),
    ] {
        let ModelSpec::LogGops(m) = parse_model(&format!("loggops:S={s}")).unwrap() else {
            panic!("loggops")
        };
        assert_eq!(m.eager_limit, bytes, "S={s}");
    }
}

#[test]
fn defaults() {
    assert_eq!(
        parse_model("postal").unwrap(),
        ModelSpec::Postal(PostalModel::postal(0, 0.0, 0.0, 0))
    );
    // LogGOPSim's defaults (simulator.ggo): L=2500 o=1500 g=1000 G=6 O=0 S=65535.
    assert_eq!(
        parse_model("loggops").unwrap(),
        ModelSpec::loggops_default()
    );
    assert_eq!(
        ModelSpec::loggops_default(),
        ModelSpec::LogGops(LOGGOPSIM_DEFAULTS)
    );
    assert_eq!(
        parse_model("loggops:L=1us").unwrap().to_string(),
        "loggops:L=1us,o=1500ns,g=1us,G=6ns,O=0,S=65535,gamma=0,delta=0"
    );
    // copy: per copied byte (copies, halo packs and unpacks), written only when not 0
    let m = parse_model("loggops:L=1us,copy=0.25ns").unwrap();
    assert_eq!(
        m.to_string(),
        "loggops:L=1us,o=1500ns,g=1us,G=6ns,O=0,S=65535,gamma=0,delta=0,copy=250ps"
    );
    assert_eq!(parse_model(&m.to_string()).unwrap(), m);
}

#[test]
fn display_round_trips() {
    for spec in [
        "postal:alpha=1us,beta=0.4ns,gamma=0",
        "postal:alpha=1234ps,beta=0.0003ns,gamma=1.5ps,delta=7ns",
        "pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0.25ns,delta=10ns",
        "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535",
        "loggops:L=2.5us,o=0.2us,g=1ms,G=0.1234ns,O=1ps,S=0,gamma=3ns,delta=1s",
        "loggops:L=3000,order=gcc",
        "loggops:order=program",
    ] {
        let m = parse_model(spec).unwrap();
        let text = m.to_string();
        assert_eq!(parse_model(&text).unwrap(), m, "{spec} -> {text}");
    }
    assert_eq!(
        parse_model("postal:alpha=1us,beta=0.4ns")
            .unwrap()
            .to_string(),
        "postal:alpha=1us,beta=400ps,gamma=0,delta=0"
    );
    assert_eq!(
        parse_model("pipelined:alpha_p=500ns,alpha_r=100ns,beta=1.5ps")
            .unwrap()
            .to_string(),
        "pipelined:alpha_p=500ns,alpha_r=100ns,beta=1.5ps,gamma=0,delta=0"
    );
    assert_eq!(parse_model("pipelined").unwrap().name(), "pipelined");
}

#[test]
fn error_messages() {
    let cases: &[(&str, &str)] = &[
        (
            "foo",
            "unknown model 'foo'; accepted: postal, pipelined, loggops",
        ),
        (
            "foo:alpha=1",
            "unknown model 'foo'; accepted: postal, pipelined, loggops",
        ),
        (
            "pipelined:x=1",
            "invalid model spec 'pipelined:x=1': unknown key 'x' for pipelined; accepted: \
             alpha_p, alpha_r, beta, gamma, delta",
        ),
        (
            "postal:alpha_p=1",
            "invalid model spec 'postal:alpha_p=1': unknown key 'alpha_p' for postal; accepted: \
             alpha, beta, gamma, delta",
        ),
        (
            "loggops:l=1",
            "invalid model spec 'loggops:l=1': unknown key 'l' for loggops; accepted: L, o, g, G, \
             O, S, gamma, delta, copy, R, S2, R2, X, order",
        ),
        (
            "postal:alpha=-1us",
            "invalid model spec 'postal:alpha=-1us': alpha=-1us: negative; times must be >= 0",
        ),
        (
            "postal:beta=-0.1ns",
            "invalid model spec 'postal:beta=-0.1ns': beta=-0.1ns: negative; times must be >= 0",
        ),
        (
            "pipelined:alpha_r=3 parsecs",
            "invalid model spec 'pipelined:alpha_r=3 parsecs': alpha_r=3 parsecs: unknown unit \
             'parsecs'; accepted units are ps, ns, us, ms, s (a bare number is ns)",
        ),
        (
            "postal:alpha=fast",
            "invalid model spec 'postal:alpha=fast': alpha=fast: unknown unit 'fast'; accepted \
             units are ps, ns, us, ms, s (a bare number is ns)",
        ),
        (
            "postal:alpha=1.2.3us",
            "invalid model spec 'postal:alpha=1.2.3us': alpha=1.2.3us: not a number; expected \
             e.g. 500ns, 1.5us or 3000",
        ),
        (
            "postal:alpha=",
            "invalid model spec 'postal:alpha=': key 'alpha' has no value",
        ),
        (
            "postal:alpha=0.0001ns",
            "invalid model spec 'postal:alpha=0.0001ns': alpha=0.0001ns: finer than one \
             picosecond, the simulator's resolution",
        ),
        (
            "loggops:S=1.5",
            "invalid model spec 'loggops:S=1.5': S=1.5: not a whole number of bytes",
        ),
        (
            "loggops:S=64 parsecs",
            "invalid model spec 'loggops:S=64 parsecs': S=64 parsecs: unknown unit 'parsecs'; \
             accepted units are B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (binary: 1 KB = 1024 B; \
             a bare number is bytes)",
        ),
        (
            "postal:alpha=1us,alpha=2us",
            "invalid model spec 'postal:alpha=1us,alpha=2us': key 'alpha' given twice",
        ),
        (
            "postal:alpha",
            "invalid model spec 'postal:alpha': 'alpha' is not key=value; postal takes keys \
             alpha, beta, gamma, delta",
        ),
        (
            "postal:",
            "invalid model spec 'postal:': nothing after ':'; expected key=value,...",
        ),
        (
            "",
            "invalid model spec '': empty name; expected NAME or NAME:key=value,...; accepted: \
             postal, pipelined, loggops",
        ),
        (
            "postal:=1",
            "invalid model spec 'postal:=1': '=1' has no key",
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(err(spec), *want, "spec: {spec}");
    }
    assert!(matches!(
        parse_model("loggops:G=x").unwrap_err(),
        ModelError::Spec(SpecError::BadValue {
            what: "model",
            ref key,
            ..
        }) if key == "G"
    ));
}

#[test]
fn noise_specs() {
    assert_eq!(parse_noise("none").unwrap(), NoiseSpec::None);
    assert_eq!(
        parse_noise("exp:mean=100ns").unwrap(),
        NoiseSpec::Exp { mean: 100_000.0 }
    );
    assert_eq!(
        parse_noise("uniform:min=0,max=1us").unwrap(),
        NoiseSpec::Uniform { min: 0.0, max: 1e6 }
    );
    assert_eq!(
        parse_noise("uniform:max=1us").unwrap(),
        NoiseSpec::Uniform { min: 0.0, max: 1e6 }
    );
    assert_eq!(
        parse_noise("normal:mean=1us,sd=200ns").unwrap(),
        NoiseSpec::Normal { mean: 1e6, sd: 2e5 }
    );
    for spec in [
        "none",
        "exp:mean=100ns",
        "uniform:min=3ps,max=1.5us",
        "normal:mean=0.25ns,sd=1ms",
    ] {
        let n = parse_noise(spec).unwrap();
        assert_eq!(parse_noise(&n.to_string()).unwrap(), n, "{spec}");
    }
    assert_eq!(
        noise_err("gauss:mean=1"),
        "unknown noise 'gauss'; accepted: none, exp, uniform, normal"
    );
    assert_eq!(
        noise_err("exp:sd=1"),
        "invalid noise spec 'exp:sd=1': unknown key 'sd' for exp; accepted: mean"
    );
    assert_eq!(
        noise_err("exp"),
        "invalid noise spec 'exp': exp needs mean, e.g. exp:mean=100ns"
    );
    assert_eq!(
        noise_err("normal:mean=1us"),
        "invalid noise spec 'normal:mean=1us': normal needs sd, e.g. normal:mean=200ns,sd=50ns"
    );
    assert_eq!(
        noise_err("uniform:min=2us,max=1us"),
        "invalid noise spec 'uniform:min=2us,max=1us': min=2us: min must not exceed max"
    );
    assert_eq!(
        noise_err("normal:mean=1us,sd=-1ns"),
        "invalid noise spec 'normal:mean=1us,sd=-1ns': sd=-1ns: negative; times must be >= 0"
    );
    assert_eq!(
        noise_err("none:x=1"),
        "invalid noise spec 'none:x=1': unknown key 'x' for none; accepted: none"
    );
}
