//! Every table of spec forms against the one grammar: an unknown name lists exactly the
//! table's names, an unknown key exactly the entry's keys, a repeated key is refused the same
//! way, aliases answer, and every example parses. (Models, noise and topologies have the same
//! checks next to their tables.)

use hypercuboid_core::network::routing::ROUTINGS;
use hypercuboid_core::network::traffic::{EXCHANGES, TRAFFICS};
use hypercuboid_core::network::{ExchangeSpec, NetworkError, RoutingSpec, TrafficSpec};
use hypercuboid_core::spec::{Form, SpecError};

fn spec_err<T: std::fmt::Debug>(r: Result<T, NetworkError>) -> SpecError {
    match r.unwrap_err() {
        NetworkError::Spec(e) => e,
        e => panic!("not a spec error: {e}"),
    }
}

/// The checks every table passes. `what` is its kind, `parse` its parser.
fn check<T: std::fmt::Debug>(
    what: &str,
    forms: &[&Form],
    names: &str,
    parse: impl Fn(&str) -> Result<T, NetworkError>,
) {
    let e = spec_err(parse("zzz"));
    assert_eq!(e.accepted().join(", "), names);
    assert_eq!(
        e.to_string(),
        format!("unknown {what} 'zzz'; accepted: {names}")
    );
    for f in forms {
        let name = f.name;
        let e = spec_err(parse(&format!("{name}:zeta=1")));
        assert_eq!(e.accepted(), f.key_names(), "{name}");
        let keys = if f.keys.is_empty() {
            "none".to_string()
        } else {
            f.key_names().join(", ")
        };
        assert_eq!(
            e.to_string(),
            format!(
                "invalid {what} spec '{name}:zeta=1': unknown key 'zeta' for {name}; accepted: \
                 {keys}"
            )
        );
        if let Some(k) = f.keys.first() {
            let k = k.name;
            assert_eq!(
                spec_err(parse(&format!("{name}:{k}=1,{k}=1"))).to_string(),
                format!("invalid {what} spec '{name}:{k}=1,{k}=1': key '{k}' given twice")
            );
        }
        parse(f.example).unwrap();
        for a in f.aliases {
            assert_eq!(
                format!("{:?}", parse(a).unwrap()),
                format!("{:?}", parse(name).unwrap()),
                "{a}"
            );
        }
    }
}

#[test]
fn routings() {
    let forms: Vec<&Form> = ROUTINGS.entries.iter().map(|r| &r.form).collect();
    check(
        "routing",
        &forms,
        "min, inr, ugal, ugal-th",
        RoutingSpec::parse,
    );
    for r in ROUTINGS.entries {
        assert_eq!(r.algorithm.name(), r.form.name);
        let s = RoutingSpec::parse(r.form.example).unwrap();
        assert_eq!(s.algorithm, r.algorithm);
        assert_eq!(s.to_string(), r.form.example, "examples are canonical");
    }
    for (spec, reason) in [
        ("ugal:c=-1", "c=-1: the penalty must be >= 0"),
        ("ugal:c=x", "c=x: not a number"),
        ("min:choice=best", "choice=best: accepted: random, lowest"),
        (
            "ugal:cost=cheap",
            "cost=cheap: accepted: auto, ratio, const",
        ),
    ] {
        assert_eq!(
            spec_err(RoutingSpec::parse(spec)).to_string(),
            format!("invalid routing spec '{spec}': {reason}")
        );
    }
    // Aliases of values print as the canonical value.
    assert_eq!(
        RoutingSpec::parse("UGAL-L:choice=cost,vcs=single,cost=constant")
            .unwrap()
            .to_string(),
        "ugal:choice=lowest,vcs=none,cost=const"
    );
}

#[test]
fn traffics() {
    // shift needs its K, so its keys and alias-free name are checked below.
    let forms: Vec<&Form> = TRAFFICS
        .iter()
        .map(|t| &t.form)
        .filter(|f| f.name != "shift")
        .collect();
    check(
        "traffic",
        &forms,
        "uniform, worst, permutation, shift:K",
        TrafficSpec::parse,
    );
    for t in TRAFFICS {
        assert_eq!(
            TrafficSpec::parse(t.form.example).unwrap().to_string(),
            t.form.example,
            "examples are canonical"
        );
    }
    assert_eq!(
        TrafficSpec::parse("shift:-3").unwrap(),
        TrafficSpec::Shift(-3)
    );
    assert_eq!(
        TrafficSpec::parse(" shift : k = 5 ").unwrap(),
        TrafficSpec::Shift(5)
    );
    assert_eq!(
        spec_err(TrafficSpec::parse("shift:3,k=3")).to_string(),
        "invalid traffic spec 'shift:3,k=3': '3' is a second K after k=3; shift takes one, e.g. \
         shift:12"
    );
    assert_eq!(
        spec_err(TrafficSpec::parse("shift:z=3")).to_string(),
        "invalid traffic spec 'shift:z=3': unknown key 'z' for shift; accepted: k"
    );
}

#[test]
fn exchanges() {
    let forms: Vec<&Form> = EXCHANGES.iter().map(|x| &x.form).collect();
    check("exchange", &forms, "a2a, nn", ExchangeSpec::parse);
    for x in EXCHANGES {
        assert_eq!(
            ExchangeSpec::parse(x.form.example).unwrap().name(),
            x.form.name
        );
    }
    assert_eq!(
        spec_err(ExchangeSpec::parse("a2a:8")).to_string(),
        "invalid exchange spec 'a2a:8': '8' is not key=value; a2a takes no parameters"
    );
}
