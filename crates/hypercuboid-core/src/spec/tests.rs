//! Tests of the spec grammar and the choice tables.

use super::*;

const KEYS: &[Key] = &[Key::new("q", "a prime power"), Key::new("p", "endpoints")];
const FORMS: &[Form] = &[
    Form {
        name: "slimfly",
        aliases: &["sf"],
        summary: "Slim Fly",
        keys: KEYS,
        positional: Positional::None,
        example: "slimfly:q=5",
    },
    Form {
        name: "tree",
        aliases: &[],
        summary: "a tree",
        keys: &[],
        positional: Positional::One("preset or file"),
        example: "tree:fig1",
    },
    Form {
        name: "rm",
        aliases: &[],
        summary: "a schedule",
        keys: &[Key::new("k", "radix")],
        positional: Positional::List("schedule"),
        example: "rm:a2,a2",
    },
    Form {
        name: "shift",
        aliases: &[],
        summary: "shift",
        keys: &[],
        positional: Positional::Optional("K"),
        example: "shift:1",
    },
];

fn p(text: &str) -> Result<Spec, SpecError> {
    parse("topology", FORMS, |f| f, text).map(|(_, s)| s)
}

fn e(text: &str) -> String {
    p(text).unwrap_err().to_string()
}

#[test]
fn reads_names_keys_and_positionals() {
    let s = p(" SF : q = 5 , p=3 ").unwrap();
    assert_eq!(s.name, "slimfly");
    assert_eq!(
        s.params,
        vec![("q", "5".to_string()), ("p", "3".to_string())]
    );
    assert_eq!(s.get("p"), Some("3"));
    assert_eq!(s.positional, None);
    assert_eq!(p("tree:fig1").unwrap().positional.as_deref(), Some("fig1"));
    let rm = p("rm:a8,a3,k=2,a4").unwrap();
    assert_eq!(rm.positional.as_deref(), Some("a8,a3,a4"));
    assert_eq!(rm.get("k"), Some("2"));
    assert_eq!(p("shift").unwrap().positional, None);
    assert_eq!(p("rm:").unwrap().positional.as_deref(), Some(""));
    assert_eq!(p("slimfly").unwrap().params, vec![]);
}

#[test]
fn reports_every_problem_the_same_way() {
    assert_eq!(
        e("fly"),
        "unknown topology 'fly'; accepted: slimfly, tree:preset or file, rm:schedule, \
         shift[:K]"
    );
    assert_eq!(
        e("slimfly:q=5,z=1"),
        "invalid topology spec 'slimfly:q=5,z=1': unknown key 'z' for slimfly; accepted: q, p"
    );
    assert_eq!(
        e("slimfly:q=5,q=7"),
        "invalid topology spec 'slimfly:q=5,q=7': key 'q' given twice"
    );
    assert_eq!(
        e("slimfly:q=5,,p=1"),
        "invalid topology spec 'slimfly:q=5,,p=1': empty item between commas"
    );
    assert_eq!(
        e("slimfly:"),
        "invalid topology spec 'slimfly:': nothing after ':'; expected key=value,..."
    );
    assert_eq!(
        e("slimfly:q="),
        "invalid topology spec 'slimfly:q=': key 'q' has no value"
    );
    assert_eq!(
        e("slimfly:q=5, =3"),
        "invalid topology spec 'slimfly:q=5, =3': '=3' has no key"
    );
    assert_eq!(
        e("slimfly:13"),
        "invalid topology spec 'slimfly:13': '13' is not key=value; slimfly takes keys q, p"
    );
    assert_eq!(
        e("tree:a,b"),
        "invalid topology spec 'tree:a,b': 'b' is a second preset or file; tree takes one, \
         e.g. tree:fig1"
    );
    assert_eq!(
        e("tree"),
        "invalid topology spec 'tree': tree needs a preset or file, e.g. tree:fig1"
    );
    assert_eq!(
        e(":q=1"),
        "invalid topology spec ':q=1': empty name; expected NAME or NAME:key=value,...; \
         accepted: slimfly, tree:preset or file, rm:schedule, shift[:K]"
    );
    let s = p("slimfly:q=x").unwrap();
    assert_eq!(
        s.required("q", whole::<u32>).unwrap_err().to_string(),
        "invalid topology spec 'slimfly:q=x': q=x: not a whole number in range"
    );
    assert_eq!(
        s.required("p", whole::<u32>).unwrap_err().to_string(),
        "invalid topology spec 'slimfly:q=x': slimfly needs p, e.g. slimfly:q=5"
    );
    assert_eq!(s.value("p", whole::<u32>).unwrap(), None);
    assert_eq!(number("inf").unwrap_err(), "not a number");
}

#[test]
fn a_keyed_positional_is_given_either_way() {
    const SHIFT: &[Form] = &[Form {
        name: "shift",
        aliases: &[],
        summary: "shift",
        keys: &[Key::new("k", "the offset")],
        positional: Positional::OneOrKey("K", "k"),
        example: "shift:12",
    }];
    let p = |t: &str| parse("traffic", SHIFT, |f| f, t).map(|(_, s)| s);
    let e = |t: &str| p(t).unwrap_err().to_string();
    assert_eq!(p("shift:3").unwrap().positional.as_deref(), Some("3"));
    let keyed = p("shift: k = -4").unwrap();
    assert_eq!(keyed.positional.as_deref(), Some("-4"));
    assert_eq!(keyed.params, vec![]);
    assert_eq!(accepted(SHIFT, |f| f), vec!["shift:K"]);
    assert_eq!(
        e("shift"),
        "invalid traffic spec 'shift': shift needs K (or k=K), e.g. shift:12"
    );
    assert_eq!(
        e("shift:3,k=4"),
        "invalid traffic spec 'shift:3,k=4': '3' is a second K after k=4; shift takes one, \
         e.g. shift:12"
    );
    assert_eq!(
        e("shift:3,4"),
        "invalid traffic spec 'shift:3,4': '4' is a second K; shift takes one, e.g. shift:12"
    );
    assert_eq!(
        e("shift:k=1,k=2"),
        "invalid traffic spec 'shift:k=1,k=2': key 'k' given twice"
    );
}

#[test]
fn values_with_units() {
    let s = parse("model", FORMS, |f| f, "slimfly:q=1.5us,p=64KiB")
        .unwrap()
        .1;
    assert_eq!(s.required("q", time).unwrap(), 1_500_000);
    assert_eq!(s.required("q", time_f64).unwrap(), 1.5e6);
    assert_eq!(s.required("p", size).unwrap(), 65_536);
    assert_eq!(
        s.required("p", bandwidth).unwrap_err().to_string(),
        "invalid model spec 'slimfly:q=1.5us,p=64KiB': p=64KiB: unknown unit 'KiB'; \
         accepted units are bps, Kbps, Mbps, Gbps, Tbps, Gb/s, B/s, KB/s, MB/s, GB/s, TB/s \
         (decimal: 1 Gbps = 10^9 bit/s; a bare number is Gb/s)"
    );
    assert_eq!(
        s.required("q", size).unwrap_err().to_string(),
        "invalid model spec 'slimfly:q=1.5us,p=64KiB': q=1.5us: unknown unit 'us'; accepted \
         units are B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (binary: 1 KB = 1024 B; a bare \
         number is bytes)"
    );
}

#[test]
fn accepted_values_travel_with_the_error() {
    let err = p("slimfly:x=1").unwrap_err();
    assert_eq!(err.accepted(), vec!["q", "p"]);
    assert_eq!(name_of(" ugal : n=2"), "ugal");
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Colour {
    Red,
    Green,
    Blue,
}

const COLOURS: Choices<Colour> = Choices::new(
    "colour",
    &[
        Choice::new("red", Colour::Red, "the default"),
        Choice::aka("green", &["verde", "GRN"], Colour::Green, "grass"),
        Choice::new("blue", Colour::Blue, "sky"),
    ],
);

#[test]
fn a_choice_parses_by_name_and_alias_without_regard_to_case() {
    assert_eq!(COLOURS.parse("red"), Ok(Colour::Red));
    assert_eq!(COLOURS.parse(" Blue "), Ok(Colour::Blue));
    assert_eq!(COLOURS.parse("verde"), Ok(Colour::Green));
    assert_eq!(COLOURS.parse("grn"), Ok(Colour::Green));
    assert_eq!(COLOURS.parse("GREEN"), Ok(Colour::Green));
    assert_eq!(COLOURS.name(Colour::Green), "green");
    assert_eq!(COLOURS.first(), Colour::Red);
    assert_eq!(COLOURS.names(), vec!["red", "green", "blue"]);
    assert!(answers_to("fifo", &[], " FIFO"));
    assert!(!answers_to("fifo", &[], "fif o"));
}

#[test]
fn a_bad_choice_names_itself_and_what_is_accepted() {
    let err = COLOURS.parse(" mauve ").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown colour 'mauve'; accepted: red, green, blue"
    );
    assert_eq!(err.reason(), "accepted: red, green, blue");
    assert_eq!(err.accepted(), vec!["red", "green", "blue"]);
    assert_eq!(
        COLOURS.read("teal").unwrap_err(),
        "accepted: red, green, blue"
    );
    assert_eq!(
        COLOURS.parse("").unwrap_err().to_string(),
        "unknown colour ''; accepted: red, green, blue"
    );
}

#[test]
fn a_table_lists_its_choices() {
    let t: &dyn Table = &COLOURS;
    assert_eq!(t.what(), "colour");
    assert_eq!(
        t.listed(),
        vec![
            Choice::new("red", (), "the default"),
            Choice::aka("green", &["verde", "GRN"], (), "grass"),
            Choice::new("blue", (), "sky"),
        ]
    );
    assert_eq!(t.listing(), "red: the default; green: grass; blue: sky");
    assert_eq!(t.canonical(" VERDE"), Ok("green"));
    assert_eq!(
        t.canonical("mauve").unwrap_err().to_string(),
        "unknown colour 'mauve'; accepted: red, green, blue"
    );
    let forms = FormTable {
        what: "topology",
        entries: FORMS,
        form: |f| f,
    };
    assert_eq!(
        forms.listed()[0],
        Choice::aka("slimfly", &["sf"], (), "Slim Fly")
    );
    assert_eq!(forms.listed().len(), 4);
}

#[test]
fn dims_are_positive_sizes_joined_by_x() {
    assert_eq!(parse_dims("64x64x64", Some(3)), Ok(vec![64, 64, 64]));
    assert_eq!(parse_dims(" 4 X 3x 2 ", Some(3)), Ok(vec![4, 3, 2]));
    assert_eq!(parse_dims("8x8", None), Ok(vec![8, 8]));
    assert_eq!(parse_dims("7", None), Ok(vec![7]));
    assert_eq!(parse_dims("4294967295x1", None), Ok(vec![u32::MAX, 1]));
    let three = "accepted XxYxZ with three positive integers (64x64x64)";
    for bad in [
        "8x8", "8x8x8x8", "0x1x1", "1x-1x1", "1x+1x1", "axbxc", "", "1xx1", "1x1x1.5",
    ] {
        assert_eq!(parse_dims(bad, Some(3)).unwrap_err(), three, "{bad}");
    }
    assert_eq!(
        parse_dims("4294967296x1", None).unwrap_err(),
        "accepted positive integers joined by 'x' (8x8 or 4x4x4)"
    );
    assert_eq!(
        parse_dims("8", Some(2)).unwrap_err(),
        "accepted XxY with two positive integers (8x8)"
    );
    assert_eq!(
        parse_dims("1x2", Some(4)).unwrap_err(),
        "accepted 4 positive integers joined by 'x'"
    );
}
