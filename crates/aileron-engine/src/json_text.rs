//! Free-form JSON inside a compiled policy (rule values, test actions): as
//! itself in JSON; in a compact binary format, which cannot read a value
//! without knowing its shape in advance, as a tagged [`Json`] tree (values)
//! or as JSON text (the rare test actions).

use serde::de::{DeserializeOwned, Error as _};
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

pub(crate) fn serialize<T: Serialize, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        value.serialize(s)
    } else {
        s.serialize_str(&serde_json::to_string(value).map_err(S::Error::custom)?)
    }
}

pub(crate) fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(
    d: D,
) -> Result<T, D::Error> {
    if d.is_human_readable() {
        T::deserialize(d)
    } else {
        serde_json::from_str(&String::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// A JSON value with its kind written out, for formats that need it.
#[derive(Serialize, Deserialize)]
enum Json {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl From<&Value> for Json {
    fn from(v: &Value) -> Json {
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => Json::U64(u),
                (_, Some(i)) => Json::I64(i),
                _ => Json::F64(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Json::String(s.clone()),
            Value::Array(items) => Json::Array(items.iter().map(Json::from).collect()),
            Value::Object(map) => {
                Json::Object(map.iter().map(|(k, v)| (k.clone(), v.into())).collect())
            }
        }
    }
}

impl From<Json> for Value {
    fn from(j: Json) -> Value {
        match j {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(b),
            Json::U64(u) => Value::Number(u.into()),
            Json::I64(i) => Value::Number(i.into()),
            Json::F64(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
            Json::String(s) => Value::String(s),
            Json::Array(items) => Value::Array(items.into_iter().map(Value::from).collect()),
            Json::Object(entries) => {
                Value::Object(entries.into_iter().map(|(k, v)| (k, v.into())).collect())
            }
        }
    }
}

/// `#[serde(with = "crate::json_text::value")]`
pub(crate) mod value {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            v.serialize(s)
        } else {
            Json::from(v).serialize(s)
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        if d.is_human_readable() {
            Value::deserialize(d)
        } else {
            Json::deserialize(d).map(Value::from)
        }
    }
}

/// `#[serde(with = "crate::json_text::values")]`
pub(crate) mod values {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(vs: &[Value], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            vs.serialize(s)
        } else {
            s.collect_seq(vs.iter().map(Json::from))
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
        if d.is_human_readable() {
            Vec::<Value>::deserialize(d)
        } else {
            let items = Vec::<Json>::deserialize(d)?;
            Ok(items.into_iter().map(Value::from).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Json;
    use serde_json::{Value, json};

    #[test]
    fn values_survive_the_binary_form() {
        let v = json!({"a": [1, -2, 2.5, "x", null, true], "b": {"c": u64::MAX}});
        assert_eq!(Value::from(Json::from(&v)), v);
    }
}
