//! The one grammar of the spec strings users type: cost models, noise, topologies, routings,
//! traffic patterns, exchanges and collective algorithms.
//!
//! ```text
//! spec  := NAME [ ':' item ( ',' item )* ]
//! item  := KEY '=' VALUE          a parameter
//!        | VALUE                  a positional argument (only where the entry takes one)
//! ```
//!
//! `postal:alpha=1us,beta=0.4ns`, `slimfly:q=13,p=9`, `ugal-th:t=10`, `tree:fig1`, `shift:3`,
//! `edgelist:links.txt,p=2`, `recursive_multiplying:a8,a3,a4`. Blanks around names, keys, values
//! and items are ignored. Names and aliases match without regard to case; keys match exactly
//! (LogGOPS has both `g` and `G`).
//!
//! Every kind of spec is a table of [`Form`]s (one per model, family, routing, algorithm, ...)
//! that [`parse`] looks the name up in. It reports every problem the same way for every kind
//! ([`SpecError`]): an unknown name with the accepted ones, an unknown key with the keys the
//! entry has, a key given twice, a key without a value, a positional argument where none is
//! taken or missing where one is needed, an empty item. What a value means is the entry's
//! business: it reads values with [`Spec::get`], [`Spec::value`] and [`Spec::required`], which
//! name the key and the spec in their errors ([`SpecError::BadValue`], [`SpecError::MissingKey`]).
//!
//! An enumerated option (a sync, a level, a NIC order, a key's value such as `vcs=hop`) is a
//! [`Choices`] table of [`Choice`]s: a name, its aliases, its value and one line of help,
//! declared once. [`Choices::parse`] reads a name, its [`ChoiceError`] names the accepted values,
//! and the [`Table`] trait lists it (the binding's `_core.choices(what)`, the CLI's choices). A
//! table of spec [`Form`]s is a [`FormTable`] and lists the same way. One case rule serves every
//! name users type ([`answers_to`]). [`parse_dims`] is the one reader of `XxYxZ` sizes.

use crate::units::{self, bounded, Time};
use std::fmt;

/// A parameter an entry accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The key as typed.
    pub name: &'static str,
    /// What it means, with its default.
    pub help: &'static str,
}

impl Key {
    /// A key and its help text.
    pub const fn new(name: &'static str, help: &'static str) -> Key {
        Key { name, help }
    }
}

/// Whether an entry takes a positional argument (an item without `=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Positional {
    /// None: every item is `key=value`.
    None,
    /// Exactly one item without `=` (a file, a preset, a number): what it is.
    One(&'static str),
    /// One or more items without `=`, joined back with commas (a recursive-multiplying schedule
    /// `a8,a3,a4`): what they are.
    List(&'static str),
    /// As [`Positional::One`], but it may be left out.
    Optional(&'static str),
    /// As [`Positional::One`], or given as `key=value` with the entry's key named second (which
    /// must be one of its keys): `shift:3` or `shift:k=3`. Either way it is
    /// [`Spec::positional`].
    OneOrKey(&'static str, &'static str),
}

/// What one entry of a table accepts: its names, keys, positional argument and an example.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Form {
    /// The canonical name.
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// One line of description.
    pub summary: &'static str,
    /// Accepted keys.
    pub keys: &'static [Key],
    /// The positional argument, if any.
    pub positional: Positional,
    /// An example spec.
    pub example: &'static str,
}

impl Form {
    /// The form of an entry that takes no parameters: its name and one line of summary, no
    /// aliases, keys or positional argument; its example is its name.
    pub const fn named(name: &'static str, summary: &'static str) -> Form {
        Form {
            name,
            aliases: &[],
            summary,
            keys: &[],
            positional: Positional::None,
            example: name,
        }
    }

    /// This form with other names accepted for it.
    pub const fn with_aliases(self, aliases: &'static [&'static str]) -> Form {
        Form { aliases, ..self }
    }

    /// This form with its accepted keys.
    pub const fn with_keys(self, keys: &'static [Key]) -> Form {
        Form { keys, ..self }
    }

    /// This form with a positional argument.
    pub const fn with_positional(self, positional: Positional) -> Form {
        Form { positional, ..self }
    }

    /// This form with an example other than its name.
    pub const fn with_example(self, example: &'static str) -> Form {
        Form { example, ..self }
    }

    /// Whether `name` names this entry (its name or an alias, by [`answers_to`]'s rule).
    pub fn answers_to(&self, name: &str) -> bool {
        answers_to(self.name, self.aliases, name)
    }

    /// Its name, aliases and summary as a [`Choice`] (for listings).
    pub const fn choice(&self) -> Choice<()> {
        Choice {
            name: self.name,
            aliases: self.aliases,
            value: (),
            help: self.summary,
        }
    }

    /// The names of the keys, in order.
    pub fn key_names(&self) -> Vec<&'static str> {
        self.keys.iter().map(|k| k.name).collect()
    }

    /// What the positional argument is, if the entry takes one.
    pub fn positional_name(&self) -> Option<&'static str> {
        match self.positional {
            Positional::None => None,
            Positional::One(w)
            | Positional::List(w)
            | Positional::Optional(w)
            | Positional::OneOrKey(w, _) => Some(w),
        }
    }

    /// The name as users type it with its positional argument, e.g. `tree:PRESET|FILE`.
    pub fn usage(&self) -> String {
        match self.positional {
            Positional::None => self.name.to_string(),
            Positional::One(w) | Positional::List(w) | Positional::OneOrKey(w, _) => {
                format!("{}:{w}", self.name)
            }
            Positional::Optional(w) => format!("{}[:{w}]", self.name),
        }
    }
}

/// Whether `text` names an entry called `name` with `aliases`: the one case rule of every name
/// users type (spec names, choices): blanks around `text` are ignored and letters match without
/// regard to ASCII case (`Packet`, ` fifo `, `FARAJ-YUAN`).
pub fn answers_to(name: &str, aliases: &[&str], text: &str) -> bool {
    let t = text.trim();
    name.eq_ignore_ascii_case(t) || aliases.iter().any(|a| a.eq_ignore_ascii_case(t))
}

/// One value of an enumerated option (a sync, a level, a NIC order, a phase method, ...): its
/// name, the other names it answers to, its value and one line of help. A [`Choices`] table
/// holds every value of one option; its parser, its error's accepted values and its listing
/// all read the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice<T: 'static> {
    /// The canonical name (what listings and errors show, and what [`Choices::name`] gives).
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// The value it stands for.
    pub value: T,
    /// One line of what it means.
    pub help: &'static str,
}

impl<T> Choice<T> {
    /// A choice without aliases.
    pub const fn new(name: &'static str, value: T, help: &'static str) -> Choice<T> {
        Choice {
            name,
            aliases: &[],
            value,
            help,
        }
    }

    /// A choice with aliases.
    pub const fn aka(
        name: &'static str,
        aliases: &'static [&'static str],
        value: T,
        help: &'static str,
    ) -> Choice<T> {
        Choice {
            name,
            aliases,
            value,
            help,
        }
    }

    /// Whether `text` names it (its name or an alias, by [`answers_to`]'s rule).
    pub fn answers_to(&self, text: &str) -> bool {
        answers_to(self.name, self.aliases, text)
    }

    /// Its name, aliases and help without the value (for listings across tables).
    pub const fn listed(&self) -> Choice<()> {
        Choice {
            name: self.name,
            aliases: self.aliases,
            value: (),
            help: self.help,
        }
    }
}

/// Every value of one enumerated option, in the order listings and errors give them (the
/// default first where the option has one).
#[derive(Debug)]
pub struct Choices<T: 'static> {
    /// What is chosen, for errors and listings (`sync`, `level`, `nic`, ...).
    pub what: &'static str,
    /// The values.
    pub entries: &'static [Choice<T>],
}

/// A name that no entry of a [`Choices`] table answers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChoiceError {
    /// What is chosen (the table's [`Choices::what`]).
    pub what: &'static str,
    /// The name given.
    pub value: String,
    /// The table's canonical names, in order.
    pub accepted: Vec<&'static str>,
}

impl ChoiceError {
    /// `accepted: a, b, c` (the part of the message after the bad value).
    pub fn reason(&self) -> String {
        format!("accepted: {}", join(&self.accepted))
    }

    /// The accepted names as owned strings (for errors that carry them).
    pub fn accepted(&self) -> Vec<String> {
        self.accepted.iter().map(|s| s.to_string()).collect()
    }
}

impl fmt::Display for ChoiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} '{}'; {}",
            self.what,
            bounded(&self.value),
            self.reason()
        )
    }
}

impl std::error::Error for ChoiceError {}

impl<T: Copy + PartialEq> Choices<T> {
    /// The table of `what`.
    pub const fn new(what: &'static str, entries: &'static [Choice<T>]) -> Choices<T> {
        Choices { what, entries }
    }

    /// The entry `text` names, if any.
    pub fn find(&self, text: &str) -> Option<&'static Choice<T>> {
        self.entries.iter().find(|e| e.answers_to(text))
    }

    /// The value `text` names (a name or an alias, by [`answers_to`]'s rule); the error names
    /// `text` (trimmed) and the accepted names.
    pub fn parse(&self, text: &str) -> Result<T, ChoiceError> {
        self.find(text).map(|e| e.value).ok_or_else(|| ChoiceError {
            what: self.what,
            value: text.trim().to_string(),
            accepted: self.names(),
        })
    }

    /// [`Choices::parse`] for [`Spec::value`]: the error is the reason (`accepted: a, b`).
    pub fn read(&self, text: &str) -> Result<T, String> {
        self.parse(text).map_err(|e| e.reason())
    }

    /// The canonical names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    /// The canonical name of `value`.
    ///
    /// # Panics
    /// If `value` has no entry (a table that misses a value of its type: a bug the table's
    /// tests catch).
    pub fn name(&self, value: T) -> &'static str {
        self.entries
            .iter()
            .find(|e| e.value == value)
            .map(|e| e.name)
            .unwrap_or_else(|| panic!("a {} without an entry in its table", self.what))
    }

    /// The first entry's value (the default of an option that has one).
    pub fn first(&self) -> T {
        self.entries[0].value
    }
}

/// A [`Choices`] table (or a table of spec [`Form`]s) seen without its value type: what the
/// binding and the CLI list.
pub trait Table: Sync {
    /// What is chosen.
    fn what(&self) -> &'static str;
    /// Name, aliases and help of every entry, in order.
    fn listed(&self) -> Vec<Choice<()>>;

    /// The canonical name of the entry `text` names (by [`answers_to`]'s rule); the error
    /// names `text` and the accepted names.
    fn canonical(&self, text: &str) -> Result<&'static str, ChoiceError> {
        let listed = self.listed();
        listed
            .iter()
            .find(|c| c.answers_to(text))
            .map(|c| c.name)
            .ok_or_else(|| ChoiceError {
                what: self.what(),
                value: text.trim().to_string(),
                accepted: listed.iter().map(|c| c.name).collect(),
            })
    }

    /// `name: help; name: help; ...` (for an option's help text).
    fn listing(&self) -> String {
        self.listed()
            .iter()
            .map(|c| format!("{}: {}", c.name, c.help))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl<T: Copy + PartialEq + Sync> Table for Choices<T> {
    fn what(&self) -> &'static str {
        self.what
    }

    fn listed(&self) -> Vec<Choice<()>> {
        self.entries.iter().map(Choice::listed).collect()
    }
}

/// A table of spec [`Form`]s (routings, models, ...) as a [`Table`]: `what` and its forms.
#[derive(Debug)]
pub struct FormTable<E: 'static> {
    /// What is chosen.
    pub what: &'static str,
    /// The entries.
    pub entries: &'static [E],
    /// The form of an entry.
    pub form: fn(&E) -> &Form,
}

impl<E> FormTable<E> {
    /// Looks the name of `text` up and reads the rest against the entry's form ([`parse`]).
    pub fn parse(&self, text: &str) -> Result<(&'static E, Spec), SpecError> {
        parse(self.what, self.entries, self.form, text)
    }
}

impl<E: Sync> Table for FormTable<E> {
    fn what(&self) -> &'static str {
        self.what
    }

    fn listed(&self) -> Vec<Choice<()>> {
        self.entries
            .iter()
            .map(|e| (self.form)(e).choice())
            .collect()
    }
}

/// A spec string read against a [`Form`]: its name, positional argument and parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The kind of spec (`model`, `topology`, `routing`, `allreduce algorithm`, ...), for errors.
    pub what: &'static str,
    /// The text as given.
    pub text: String,
    /// The entry's canonical name.
    pub name: &'static str,
    /// The positional argument (items without `=`, joined with commas), if any.
    pub positional: Option<String>,
    /// `key=value` pairs in the order given; every key is one of the entry's, given once.
    pub params: Vec<(&'static str, String)>,
    /// The entry's example, for errors.
    example: &'static str,
}

/// Why a spec string was refused. Every message names the spec, the bad part and what is
/// accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// Not of the form `NAME[:item,item,...]` (an empty name, an empty item, nothing after `:`).
    Malformed {
        /// The kind of spec.
        what: &'static str,
        /// The text as given.
        spec: String,
        /// What is wrong.
        reason: String,
    },
    /// A name that no entry answers to.
    UnknownName {
        /// The kind of spec.
        what: &'static str,
        /// The name given.
        name: String,
        /// The accepted names (with their positional argument, e.g. `shift:K`).
        accepted: Vec<String>,
    },
    /// A key the entry does not have.
    UnknownKey {
        /// The kind of spec.
        what: &'static str,
        /// The text as given.
        spec: String,
        /// The entry.
        name: &'static str,
        /// The key given.
        key: String,
        /// The entry's keys.
        accepted: Vec<&'static str>,
    },
    /// A key given twice.
    RepeatedKey {
        /// The kind of spec.
        what: &'static str,
        /// The text as given.
        spec: String,
        /// The key.
        key: String,
    },
    /// A key the entry needs but was not given (or a positional argument it needs).
    MissingKey {
        /// The kind of spec.
        what: &'static str,
        /// The text as given.
        spec: String,
        /// The entry.
        name: &'static str,
        /// The key (or what the positional argument is).
        key: String,
        /// An example spec of the entry.
        example: &'static str,
    },
    /// A positional argument where the entry takes none, or a second one.
    Positional {
        /// The kind of spec.
        what: &'static str,
        /// The text as given.
        spec: String,
        /// The item.
        item: String,
        /// What the entry takes instead.
        reason: String,
    },
    /// A value that could not be read or is out of range.
    BadValue {
        /// The kind of spec.
        what: &'static str,
        /// The text as given.
        spec: String,
        /// The key (or what the positional argument is).
        key: String,
        /// The value given.
        value: String,
        /// What is wrong and what is accepted.
        reason: String,
    },
}

impl SpecError {
    /// The accepted values the error names (names, keys), if it names any.
    pub fn accepted(&self) -> Vec<String> {
        match self {
            SpecError::UnknownName { accepted, .. } => accepted.clone(),
            SpecError::UnknownKey { accepted, .. } => {
                accepted.iter().map(|s| s.to_string()).collect()
            }
            _ => Vec::new(),
        }
    }
}

fn join<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return "none".into();
    }
    items
        .iter()
        .map(|s| s.as_ref())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for SpecError {
    /// Specs, names, keys and values are quoted through [`bounded`]: a 200 KB spec is not
    /// echoed whole.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Malformed { what, spec, reason } => {
                write!(f, "invalid {what} spec '{}': {reason}", bounded(spec))
            }
            SpecError::UnknownName {
                what,
                name,
                accepted,
            } => write!(
                f,
                "unknown {what} '{}'; accepted: {}",
                bounded(name),
                join(accepted)
            ),
            SpecError::UnknownKey {
                what,
                spec,
                name,
                key,
                accepted,
            } => write!(
                f,
                "invalid {what} spec '{}': unknown key '{}' for {name}; accepted: {}",
                bounded(spec),
                bounded(key),
                join(accepted)
            ),
            SpecError::RepeatedKey { what, spec, key } => write!(
                f,
                "invalid {what} spec '{}': key '{}' given twice",
                bounded(spec),
                bounded(key)
            ),
            SpecError::MissingKey {
                what,
                spec,
                name,
                key,
                example,
            } => write!(
                f,
                "invalid {what} spec '{}': {name} needs {key}, e.g. {example}",
                bounded(spec)
            ),
            SpecError::Positional {
                what,
                spec,
                item,
                reason,
            } => write!(
                f,
                "invalid {what} spec '{}': '{}' {reason}",
                bounded(spec),
                bounded(item)
            ),
            SpecError::BadValue {
                what,
                spec,
                key,
                value,
                reason,
            } => write!(
                f,
                "invalid {what} spec '{}': {}={}: {reason}",
                bounded(spec),
                bounded(key),
                bounded(value)
            ),
        }
    }
}

impl std::error::Error for SpecError {}

/// The name of a spec string (the part before `:`, trimmed), without checking anything else.
pub fn name_of(text: &str) -> &str {
    let t = text.trim();
    t.split_once(':').map_or(t, |(n, _)| n).trim()
}

/// The accepted names of a table, with their positional arguments (`shift:K`).
pub fn accepted<E>(entries: &[E], form: impl Fn(&E) -> &Form) -> Vec<String> {
    entries.iter().map(|e| form(e).usage()).collect()
}

/// Looks the name of `text` up in `entries` and reads the rest against the entry's form.
/// `what` names the kind of spec in errors (`model`, `topology`, ...).
pub fn parse<'e, E>(
    what: &'static str,
    entries: &'e [E],
    form: impl Fn(&E) -> &Form,
    text: &str,
) -> Result<(&'e E, Spec), SpecError> {
    let t = text.trim();
    let (name, rest) = match t.split_once(':') {
        Some((n, r)) => (n.trim(), Some(r)),
        None => (t, None),
    };
    let malformed = |reason: String| SpecError::Malformed {
        what,
        spec: text.to_string(),
        reason,
    };
    if name.is_empty() {
        return Err(malformed(format!(
            "empty name; expected NAME or NAME:key=value,...; accepted: {}",
            join(&accepted(entries, &form))
        )));
    }
    let entry = entries
        .iter()
        .find(|e| form(e).answers_to(name))
        .ok_or_else(|| SpecError::UnknownName {
            what,
            name: name.to_string(),
            accepted: accepted(entries, &form),
        })?;
    let f = form(entry);
    let mut spec = Spec {
        what,
        text: text.to_string(),
        name: f.name,
        positional: None,
        params: Vec::new(),
        example: f.example,
    };
    if let Some(rest) = rest {
        if rest.trim().is_empty() {
            if let Positional::List(_) = f.positional {
                // An empty list (the empty recursive-multiplying schedule of one rank).
                spec.positional = Some(String::new());
                return Ok((entry, spec));
            }
            return Err(malformed(
                "nothing after ':'; expected key=value,...".into(),
            ));
        }
        let mut pos: Vec<&str> = Vec::new();
        for item in rest.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(malformed("empty item between commas".into()));
            }
            match item.split_once('=') {
                Some((k, v)) => {
                    let (k, v) = (k.trim(), v.trim());
                    if k.is_empty() {
                        return Err(malformed(format!("'{item}' has no key")));
                    }
                    let Some(key) = f.keys.iter().find(|x| x.name == k) else {
                        return Err(SpecError::UnknownKey {
                            what,
                            spec: text.to_string(),
                            name: f.name,
                            key: k.to_string(),
                            accepted: f.key_names(),
                        });
                    };
                    if v.is_empty() {
                        return Err(malformed(format!("key '{k}' has no value")));
                    }
                    if spec.params.iter().any(|(x, _)| *x == key.name) {
                        return Err(SpecError::RepeatedKey {
                            what,
                            spec: text.to_string(),
                            key: k.to_string(),
                        });
                    }
                    spec.params.push((key.name, v.to_string()));
                }
                None => {
                    let takes = |reason: String| SpecError::Positional {
                        what,
                        spec: text.to_string(),
                        item: item.to_string(),
                        reason,
                    };
                    match f.positional {
                        Positional::None => {
                            return Err(takes(if f.keys.is_empty() {
                                format!("is not key=value; {} takes no parameters", f.name)
                            } else {
                                format!(
                                    "is not key=value; {} takes keys {}",
                                    f.name,
                                    join(&f.key_names())
                                )
                            }))
                        }
                        Positional::One(w)
                        | Positional::Optional(w)
                        | Positional::OneOrKey(w, _)
                            if !pos.is_empty() =>
                        {
                            return Err(takes(format!(
                                "is a second {w}; {} takes one, e.g. {}",
                                f.name, f.example
                            )))
                        }
                        _ => pos.push(item),
                    }
                }
            }
        }
        if !pos.is_empty() {
            spec.positional = Some(pos.join(","));
        }
    }
    if let Positional::OneOrKey(w, key) = f.positional {
        if let Some(i) = spec.params.iter().position(|(k, _)| *k == key) {
            let (_, v) = spec.params.remove(i);
            if let Some(p) = &spec.positional {
                return Err(SpecError::Positional {
                    what,
                    spec: text.to_string(),
                    item: p.clone(),
                    reason: format!(
                        "is a second {w} after {key}={v}; {} takes one, e.g. {}",
                        f.name, f.example
                    ),
                });
            }
            spec.positional = Some(v);
        }
    }
    match f.positional {
        Positional::OneOrKey(w, key) if spec.positional.is_none() => {
            return Err(SpecError::MissingKey {
                what,
                spec: text.to_string(),
                name: f.name,
                key: format!("{w} (or {key}={w})"),
                example: f.example,
            })
        }
        Positional::One(w) | Positional::List(w) if spec.positional.is_none() => {
            return Err(SpecError::MissingKey {
                what,
                spec: text.to_string(),
                name: f.name,
                key: format!("a {}", w.to_lowercase()),
                example: f.example,
            })
        }
        _ => {}
    }
    Ok((entry, spec))
}

impl Spec {
    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `key` was given.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// An error for `key` given as `value`: `reason` says what is accepted.
    pub fn bad(&self, key: &str, value: &str, reason: impl Into<String>) -> SpecError {
        SpecError::BadValue {
            what: self.what,
            spec: self.text.clone(),
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    /// An error for a missing `key` (or a missing combination, e.g. `one of a, p, h`).
    pub fn missing(&self, key: &str) -> SpecError {
        SpecError::MissingKey {
            what: self.what,
            spec: self.text.clone(),
            name: self.name,
            key: key.to_string(),
            example: self.example,
        }
    }

    /// The value of `key` read by `read` (whose error is the reason), if given.
    pub fn value<T>(
        &self,
        key: &str,
        read: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Option<T>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => read(v).map(Some).map_err(|reason| self.bad(key, v, reason)),
        }
    }

    /// The value of `key` read by `read`, which must be given.
    pub fn required<T>(
        &self,
        key: &str,
        read: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, SpecError> {
        self.value(key, read)?.ok_or_else(|| self.missing(key))
    }
}

/// Reads a whole number of type `T` (for [`Spec::value`]).
pub fn whole<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse::<T>()
        .map_err(|_| "not a whole number in range".to_string())
}

/// Reads a finite number (for [`Spec::value`]).
pub fn number(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| "not a number".to_string())
}

/// Reads sizes joined by `x` (`64x64x64`, `8x8`): whole numbers >= 1, `count` of them where
/// the caller needs a fixed number (three for a lattice or a decomposition), any number >= 1
/// otherwise. `X` is read as `x` and blanks around sizes are ignored. The one reader of "XxYxZ"
/// (topologies, halos, the LBM proxy, network exchanges); the error is the reason, which names
/// what is accepted (for [`Spec::value`], or prefixed with the option and the text).
pub fn parse_dims(text: &str, count: Option<usize>) -> Result<Vec<u32>, String> {
    let refuse = || match count {
        Some(3) => "accepted XxYxZ with three positive integers (64x64x64)".to_string(),
        Some(2) => "accepted XxY with two positive integers (8x8)".to_string(),
        Some(n) => format!("accepted {n} positive integers joined by 'x'"),
        None => "accepted positive integers joined by 'x' (8x8 or 4x4x4)".to_string(),
    };
    let sizes = text
        .split(['x', 'X'])
        .map(|s| {
            let s = s.trim();
            // Digits only: no sign, no blank inside, no underscore.
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse::<u32>().ok().filter(|&v| v >= 1)
        })
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(refuse)?;
    if count.is_some_and(|n| sizes.len() != n) {
        return Err(refuse());
    }
    Ok(sizes)
}

/// Reads a duration into whole picoseconds with [`units::parse_time`] (for [`Spec::value`]).
pub fn time(v: &str) -> Result<Time, String> {
    units::parse_time(v).map_err(|e| e.reason)
}

/// Reads a duration, or a time per byte, into picoseconds as `f64` with
/// [`units::parse_time_f64`] (for [`Spec::value`]).
pub fn time_f64(v: &str) -> Result<f64, String> {
    units::parse_time_f64(v).map_err(|e| e.reason)
}

/// Reads a size in bytes with [`units::parse_size`] (for [`Spec::value`]).
pub fn size(v: &str) -> Result<u64, String> {
    units::parse_size(v).map_err(|e| e.reason)
}

/// Reads a bandwidth in Gb/s with [`units::parse_bandwidth`] (for [`Spec::value`]).
pub fn bandwidth(v: &str) -> Result<f64, String> {
    units::parse_bandwidth(v).map_err(|e| e.reason)
}

#[cfg(test)]
mod tests;
