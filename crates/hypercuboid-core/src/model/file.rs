//! Model files: a cost model fitted on a machine, as `hypercuboid bench pingpong` and
//! `hypercuboid bench multicast` write them (`python/hypercuboid/modelfile.py`): a JSON object
//! whose `model` key holds a model spec string; its other keys (`source`, `fitted`, `machine`,
//! `date`) describe the measurement and are not read here. The one reader of model files:
//! Python (`modelfile.load`, `simulate --model-file`, `tune`) and the C API read them here.

use super::error::ModelError;
use super::spec::{parse_model, ModelSpec};
use serde_json::Value;
use std::path::Path;

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
    let bytes = std::fs::read(path).map_err(|e| at(format!("cannot read it: {e}")))?;
    let text =
        String::from_utf8(bytes).map_err(|_| at("not a model file (not UTF-8 text)".into()))?;
    model_file_spec(&text)
        .map(|(spec, _)| spec)
        .map_err(|e| at(e.to_string()))
}

/// The spec string of a model file's text (trimmed) and the model it names.
fn model_file_spec(text: &str) -> Result<(String, ModelSpec), ModelError> {
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
}
