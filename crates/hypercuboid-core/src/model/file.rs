//! Model files: a cost model fitted on a machine, as `hypercuboid bench pingpong`,
//! `hypercuboid bench multicast` and `hypercuboid calibrate` write them
//! (`python/hypercuboid/modelfile.py`): a JSON object whose `model` key holds a model spec
//! string. Optional keys: `node` (a node spec, [`super::parse_node`]), `models` (further model
//! specs by name), `library` (the MPI library measured), `nranks` and `ranks_per_node` (whole
//! numbers ≥ 1) and `fits` (free-form JSON); [`read_model_file_full`] reads them all into a
//! [`ModelFile`]. The other keys (`source`, `fitted`, `machine`, `date`) describe the
//! measurement and are not read here. The one reader of model files: Python
//! (`modelfile.load`, `modelfile.load_file`, `simulate --model-file`, `tune`) and the C API
//! read them here.

use super::error::ModelError;
use super::node_spec::{parse_node, NodeSpec};
use super::spec::{parse_model, ModelSpec};
use serde_json::{Map, Value};
use std::path::Path;

/// Everything a model file says that a simulation reads: [`read_model_file_full`].
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFile {
    /// The `model` spec string as written (blanks around it removed).
    pub model: String,
    /// What it names.
    pub model_spec: ModelSpec,
    /// The `node` spec string as written (trimmed), if the file has one.
    pub node: Option<String>,
    /// What it names.
    pub node_spec: Option<NodeSpec>,
    /// The `models` map: further model specs by name (trimmed, each checked), in name order.
    pub models: Vec<(String, String)>,
    /// The MPI library it was measured with.
    pub library: Option<String>,
    /// The job's rank count.
    pub nranks: Option<u32>,
    /// Ranks per node of the job.
    pub ranks_per_node: Option<u32>,
    /// The `fits` value as compact JSON text, if any.
    pub fits: Option<String>,
}

/// Reads the text of a model file with every key [`ModelFile`] holds; the errors of
/// [`parse_model_file`], and for a new key of the wrong kind or a bad spec an error naming the
/// key, the value and what is accepted.
pub fn parse_model_file_full(text: &str) -> Result<ModelFile, ModelError> {
    let not = |reason: String| ModelError::File { reason };
    let map = model_file_object(text)?;
    let (model, model_spec) = model_of(&map)?;
    let string = |key: &str| -> Result<Option<String>, ModelError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(v) => Err(not(format!(
                "its '{key}' must be a string, not {}",
                json_kind(v)
            ))),
        }
    };
    let count = |key: &str| -> Result<Option<u32>, ModelError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|&n| n >= 1)
                .map(Some)
                .ok_or_else(|| {
                    not(format!(
                        "its '{key}' must be a whole number from 1 to {}, not {v}",
                        u32::MAX
                    ))
                }),
        }
    };
    let node = string("node")?;
    let node_spec = match &node {
        None => None,
        Some(n) => Some(parse_node(n).map_err(|e| not(format!("its 'node': {e}")))?),
    };
    let mut models = Vec::new();
    match map.get("models") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (name, v) in m {
                let Value::String(spec) = v else {
                    return Err(not(format!(
                        "its 'models' entry '{name}' must be a model spec string, not {}",
                        json_kind(v)
                    )));
                };
                let spec = spec.trim();
                parse_model(spec).map_err(|e| not(format!("its 'models' entry '{name}': {e}")))?;
                models.push((name.clone(), spec.to_string()));
            }
            models.sort();
        }
        Some(v) => {
            return Err(not(format!(
                "its 'models' must be an object of model spec strings by name, not {}",
                json_kind(v)
            )))
        }
    }
    Ok(ModelFile {
        model,
        model_spec,
        node,
        node_spec,
        models,
        library: string("library")?,
        nranks: count("nranks")?,
        ranks_per_node: count("ranks_per_node")?,
        fits: map
            .get("fits")
            .filter(|v| !v.is_null())
            .map(Value::to_string),
    })
}

/// Reads the model file at `path` with every key [`ModelFile`] holds. Every error starts with
/// the path, as [`read_model_file`]'s do.
pub fn read_model_file_full(path: &Path) -> Result<ModelFile, ModelError> {
    let at = |reason: String| ModelError::File {
        reason: format!("{}: {reason}", path.display()),
    };
    let text = file_text(path)?;
    parse_model_file_full(&text).map_err(|e| at(e.to_string()))
}

/// Reads the text of a model file: the model its `model` key names. The error says what is
/// wrong with the file (not JSON, not an object, no `model` key, a `model` that is not a
/// string, or the spec's own error).
pub fn parse_model_file(text: &str) -> Result<ModelSpec, ModelError> {
    model_file_spec(text).map(|(_, model)| model)
}

/// Reads the model file at `path`: its model spec string as written (blanks around it
/// removed), checked by [`parse_model`]. Every error starts with the path, then says what is
/// wrong: the file cannot be read, is not UTF-8 text, or is not a model file
/// ([`parse_model_file`]'s errors).
pub fn read_model_file(path: &Path) -> Result<String, ModelError> {
    let at = |reason: String| ModelError::File {
        reason: format!("{}: {reason}", path.display()),
    };
    let text = file_text(path)?;
    model_file_spec(&text)
        .map(|(spec, _)| spec)
        .map_err(|e| at(e.to_string()))
}

/// The text of the file at `path`; the error starts with the path.
fn file_text(path: &Path) -> Result<String, ModelError> {
    let at = |reason: String| ModelError::File {
        reason: format!("{}: {reason}", path.display()),
    };
    let bytes = std::fs::read(path).map_err(|e| at(format!("cannot read it: {e}")))?;
    String::from_utf8(bytes).map_err(|_| at("not a model file (not UTF-8 text)".into()))
}

/// The spec string of a model file's text (trimmed) and the model it names.
fn model_file_spec(text: &str) -> Result<(String, ModelSpec), ModelError> {
    model_of(&model_file_object(text)?)
}

/// A model file's text as a JSON object.
fn model_file_object(text: &str) -> Result<Map<String, Value>, ModelError> {
    let not = |reason: String| ModelError::File { reason };
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        not(format!(
            "not a model file (invalid JSON at line {}, column {}: {})",
            e.line(),
            e.column(),
            e
        ))
    })?;
    let Value::Object(map) = doc else {
        return Err(not(format!(
            "not a model file (expected a JSON object, got {})",
            json_kind(&doc)
        )));
    };
    Ok(map)
}

/// The `model` spec string of a model file's object (trimmed) and the model it names.
fn model_of(map: &Map<String, Value>) -> Result<(String, ModelSpec), ModelError> {
    let not = |reason: String| ModelError::File { reason };
    let Some(model) = map.get("model") else {
        let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
        keys.sort_unstable();
        let keys = if keys.is_empty() {
            "none".to_string()
        } else {
            keys.join(", ")
        };
        return Err(not(format!(
            "not a model file (no 'model' key; keys: {keys})"
        )));
    };
    let Value::String(spec) = model else {
        return Err(not(format!(
            "its 'model' must be a model spec string such as \
             'pipelined:alpha_p=1.34us,alpha_r=0.34us', not {}",
            json_kind(model)
        )));
    };
    let spec = spec.trim();
    Ok((spec.to_string(), parse_model(spec)?))
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_modelfile_py_writes() {
        let text = r#"{"model": "pipelined:alpha_p=1.34us,alpha_r=0.34us",
                       "source": "bench multicast", "fitted": {"alpha_p_us": 1.34},
                       "machine": {"host": "x"}, "date": "2025-01-01T12:00:00+00:00"}"#;
        let m = parse_model_file(text).unwrap();
        assert_eq!(
            m,
            parse_model("pipelined:alpha_p=1.34us,alpha_r=0.34us").unwrap()
        );
    }

    #[test]
    fn says_what_is_wrong_with_the_file() {
        let err = |t: &str| parse_model_file(t).unwrap_err().to_string();
        assert_eq!(
            err("{\"model\": "),
            "not a model file (invalid JSON at line 1, column 10: EOF while parsing a value \
             at line 1 column 10)"
        );
        assert_eq!(
            err("[1]"),
            "not a model file (expected a JSON object, got a list)"
        );
        assert_eq!(
            err("{\"source\": 1, \"date\": 2}"),
            "not a model file (no 'model' key; keys: date, source)"
        );
        assert_eq!(err("{}"), "not a model file (no 'model' key; keys: none)");
        assert!(err("{\"model\": 3}").starts_with("its 'model' must be a model spec string"));
        assert!(err("{\"model\": \"postal:alpha=fast\"}").contains("alpha"));
    }

    #[test]
    fn a_file_is_read_with_its_path_in_every_error() {
        let dir = std::env::temp_dir().join(format!("hc-model-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("m.json");
        std::fs::write(&good, r#"{"model": " postal:alpha=1us ", "source": "x"}"#).unwrap();
        assert_eq!(read_model_file(&good).unwrap(), "postal:alpha=1us");
        let bin = dir.join("bin.json");
        std::fs::write(&bin, b"\xff\xfe\x00").unwrap();
        assert_eq!(
            read_model_file(&bin).unwrap_err().to_string(),
            format!("{}: not a model file (not UTF-8 text)", bin.display())
        );
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"notmodel": 1}"#).unwrap();
        assert_eq!(
            read_model_file(&bad).unwrap_err().to_string(),
            format!(
                "{}: not a model file (no 'model' key; keys: notmodel)",
                bad.display()
            )
        );
        let missing = dir.join("missing.json");
        assert!(read_model_file(&missing)
            .unwrap_err()
            .to_string()
            .starts_with(&format!("{}: cannot read it: ", missing.display())));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_full_reader_returns_every_key_and_old_files_still_read() {
        let old = parse_model_file_full(r#"{"model": "postal:alpha=1us", "source": "x"}"#).unwrap();
        assert_eq!(old.model, "postal:alpha=1us");
        assert_eq!(old.node, None);
        assert_eq!(old.node_spec, None);
        assert!(old.models.is_empty());
        assert_eq!(
            (old.library, old.nranks, old.ranks_per_node, old.fits),
            (None, None, None, None)
        );
        let text = r#"{"model": "loggops:o=1us", "node": " node:ranks=16,bw=12GB/s ",
                       "models": {"postal": "postal:alpha=2us", "loggops": "loggops:L=1us"},
                       "library": "Open MPI v5.0.8", "nranks": 16, "ranks_per_node": 16,
                       "fits": {"postal": {"r2": 0.99}}, "date": "2026-01-01"}"#;
        let f = parse_model_file_full(text).unwrap();
        assert_eq!(f.model_spec, parse_model("loggops:o=1us").unwrap());
        assert_eq!(f.node.as_deref(), Some("node:ranks=16,bw=12GB/s"));
        assert_eq!(f.node_spec.unwrap().ranks, 16);
        assert_eq!(f.node_spec.unwrap().bw, Some(96.0));
        assert_eq!(
            f.models,
            [
                ("loggops".to_string(), "loggops:L=1us".to_string()),
                ("postal".to_string(), "postal:alpha=2us".to_string())
            ]
        );
        assert_eq!(f.library.as_deref(), Some("Open MPI v5.0.8"));
        assert_eq!((f.nranks, f.ranks_per_node), (Some(16), Some(16)));
        assert_eq!(f.fits.as_deref(), Some(r#"{"postal":{"r2":0.99}}"#));
        // The old reader reads the same file as before.
        assert_eq!(parse_model_file(text).unwrap(), f.model_spec);
    }

    #[test]
    fn the_full_reader_names_a_bad_new_key() {
        let err = |extra: &str| {
            parse_model_file_full(&format!(r#"{{"model": "loggops", {extra}}}"#))
                .unwrap_err()
                .to_string()
        };
        for (extra, message) in [
            (
                r#""node": "node:ranks=0,bw=1GB/s""#,
                "its 'node': invalid node spec 'node:ranks=0,bw=1GB/s': ranks=0: accepted: a \
                 whole number of ranks per node, 1 or more",
            ),
            (r#""node": 16"#, "its 'node' must be a string, not a number"),
            (
                r#""library": ["x"]"#,
                "its 'library' must be a string, not a list",
            ),
            (
                r#""nranks": 0"#,
                "its 'nranks' must be a whole number from 1 to 4294967295, not 0",
            ),
            (
                r#""ranks_per_node": 2.5"#,
                "its 'ranks_per_node' must be a whole number from 1 to 4294967295, not 2.5",
            ),
            (
                r#""models": ["postal"]"#,
                "its 'models' must be an object of model spec strings by name, not a list",
            ),
            (
                r#""models": {"p": 1}"#,
                "its 'models' entry 'p' must be a model spec string, not a number",
            ),
            (
                r#""models": {"p": "hockney"}"#,
                "its 'models' entry 'p': unknown model 'hockney'; accepted: postal, pipelined, \
                 loggops",
            ),
        ] {
            assert_eq!(err(extra), message, "{extra}");
        }
        let dir = std::env::temp_dir().join(format!("hc-model-full-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("m.json");
        std::fs::write(&p, r#"{"model": "loggops", "nranks": -1}"#).unwrap();
        assert_eq!(
            read_model_file_full(&p).unwrap_err().to_string(),
            format!(
                "{}: its 'nranks' must be a whole number from 1 to 4294967295, not -1",
                p.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
