//! Model and noise spec strings: parsing, defaults, printing back, every error message.

use hypercuboid_core::model::{parse_model, parse_noise, ModelError, ModelSpec, NoiseSpec};
use hypercuboid_core::units::{ns, us};

fn err(spec: &str) -> String {
    parse_model(spec).unwrap_err().to_string()
}

fn noise_err(spec: &str) -> String {
    parse_noise(spec).unwrap_err().to_string()
}

#[test]
fn parses_the_cli_examples() {
    assert_eq!(
        parse_model("postal:alpha=1us,beta=0.4ns,gamma=0").unwrap(),
        ModelSpec::Postal {
            alpha: us(1),
            beta: 400.0,
            gamma: 0.0,
            delta: 0
        }
    );
    assert_eq!(
        parse_model("pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0").unwrap(),
        ModelSpec::Pipelined {
            alpha_p: ns(500),
            alpha_r: ns(100),
            beta: 400.0,
            gamma: 0.0,
            delta: 0
        }
    );
    assert_eq!(
        parse_model("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535").unwrap(),
        ModelSpec::LogGops {
            latency: ns(3000),
            overhead: ns(1500),
            gap: ns(1000),
            gap_per_byte: 6000.0,
            overhead_per_byte: 0.0,
            eager_limit: 65535,
            gamma: 0.0,
            delta: 0
        }
    );
    // Spaces around items, units, and delta (the paper's "compute 10 ns" per reduction).
    assert_eq!(
        parse_model(" postal: alpha = 2.5us , delta=10ns ").unwrap(),
        ModelSpec::Postal {
            alpha: ns(2500),
            beta: 0.0,
            gamma: 0.0,
            delta: ns(10)
        }
    );
}

#[test]
fn defaults() {
    assert_eq!(
        parse_model("postal").unwrap(),
        ModelSpec::Postal {
            alpha: 0,
            beta: 0.0,
            gamma: 0.0,
            delta: 0
        }
    );
    // LogGOPSim's defaults (simulator.ggo): L=2500 o=1500 g=1000 G=6 O=0 S=65535.
    assert_eq!(
        parse_model("loggops").unwrap(),
        ModelSpec::loggops_default()
    );
    assert_eq!(
        parse_model("loggops:L=1us").unwrap().to_string(),
        "loggops:L=1us,o=1500ns,g=1us,G=6ns,O=0,S=65535,gamma=0,delta=0"
    );
}

#[test]
fn display_round_trips() {
    for spec in [
        "postal:alpha=1us,beta=0.4ns,gamma=0",
        "postal:alpha=1234ps,beta=0.0003ns,gamma=1.5ps,delta=7ns",
        "pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0.25ns,delta=10ns",
        "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535",
        "loggops:L=2.5us,o=0.2us,g=1ms,G=0.1234ns,O=1ps,S=0,gamma=3ns,delta=1s",
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
    assert_eq!(
        err("foo"),
        "unknown model 'foo'; accepted: postal, pipelined, loggops"
    );
    assert_eq!(
        err("foo:alpha=1"),
        "unknown model 'foo'; accepted: postal, pipelined, loggops"
    );
    assert_eq!(
        err("pipelined:x=1"),
        "unknown parameter 'x' for pipelined; accepted: alpha_p, alpha_r, beta, gamma, delta"
    );
    assert_eq!(
        err("postal:alpha_p=1"),
        "unknown parameter 'alpha_p' for postal; accepted: alpha, beta, gamma, delta"
    );
    assert_eq!(
        err("loggops:l=1"),
        "unknown parameter 'l' for loggops; accepted: L, o, g, G, O, S, gamma, delta"
    );
    assert_eq!(
        err("postal:alpha=-1us"),
        "invalid value '-1us' for alpha in postal: negative; times must be >= 0"
    );
    assert_eq!(
        err("postal:beta=-0.1ns"),
        "invalid value '-0.1ns' for beta in postal: negative; times must be >= 0"
    );
    assert_eq!(
        err("pipelined:alpha_r=3 parsecs"),
        "invalid value '3 parsecs' for alpha_r in pipelined: unknown unit 'parsecs'; \
         accepted units are ps, ns, us, ms, s (a bare number is ns)"
    );
    assert_eq!(
        err("postal:alpha=fast"),
        "invalid value 'fast' for alpha in postal: unknown unit 'fast'; \
         accepted units are ps, ns, us, ms, s (a bare number is ns)"
    );
    assert_eq!(
        err("postal:alpha=1.2.3us"),
        "invalid value '1.2.3us' for alpha in postal: not a number; expected e.g. 500ns, 1.5us or 3000"
    );
    assert_eq!(
        err("postal:alpha="),
        "invalid value '' for alpha in postal: empty; expected a number with an optional unit \
         (ps, ns, us, ms, s)"
    );
    assert_eq!(
        err("postal:alpha=0.0001ns"),
        "invalid value '0.0001ns' for alpha in postal: finer than one picosecond, the \
         simulator's resolution"
    );
    assert_eq!(
        err("loggops:S=64k"),
        "invalid value '64k' for S in loggops: expected a whole number of bytes (e.g. 65535)"
    );
    assert_eq!(
        err("postal:alpha=1us,alpha=2us"),
        "parameter 'alpha' given twice for postal"
    );
    assert_eq!(
        err("postal:alpha"),
        "invalid specification 'postal:alpha': 'alpha' is not key=value; expected \
         NAME:key=value,key=value"
    );
    assert_eq!(
        err("postal:"),
        "invalid specification 'postal:': nothing after ':'; expected key=value,key=value"
    );
    assert_eq!(
        err(""),
        "invalid specification '': empty name; expected NAME or NAME:key=value,key=value"
    );
    assert_eq!(
        err("postal:=1"),
        "invalid specification 'postal:=1': '=1' has no key"
    );
    assert!(matches!(
        parse_model("loggops:G=x").unwrap_err(),
        ModelError::BadValue {
            model: "loggops",
            ..
        }
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
        "unknown noise distribution 'gauss'; accepted: none, exp, uniform, normal"
    );
    assert_eq!(
        noise_err("exp:sd=1"),
        "unknown parameter 'sd' for exp; accepted: mean"
    );
    assert_eq!(noise_err("exp"), "missing parameter 'mean' for exp");
    assert_eq!(
        noise_err("normal:mean=1us"),
        "missing parameter 'sd' for normal"
    );
    assert_eq!(
        noise_err("uniform:min=2us,max=1us"),
        "invalid value '2us' for min in uniform: min must not exceed max"
    );
    assert_eq!(
        noise_err("normal:mean=1us,sd=-1ns"),
        "invalid value '-1ns' for sd in normal: negative; times must be >= 0"
    );
    assert_eq!(
        noise_err("none:x=1"),
        "unknown parameter 'x' for none; accepted: (none)"
    );
}
