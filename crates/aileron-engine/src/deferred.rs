//! Parts of a compiled policy that a binary encoding keeps encoded until
//! first use.
//!
//! The shim and the hooks read the compiled policy from the on-disk cache
//! once per agent action, and one decision reaches a handful of its hundred
//! or so rules through the index. Decoding every rule up front was half of
//! their work; a [`Deferred`] rule is decoded when the evaluator reaches it.
//!
//! In a human-readable format (JSON) a `Deferred<T>` is written as `T`
//! itself. In a binary format it is a byte string holding `T` in postcard.

use serde::de::{DeserializeOwned, SeqAccess, Visitor};
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::OnceLock;

/// A value, or its encoding until it is first read.
pub struct Deferred<T> {
    /// Empty when the value was built rather than read.
    encoded: Box<[u8]>,
    value: OnceLock<Box<T>>,
}

/// What a deferred value becomes when its encoding cannot be read: the
/// cache entry passed its checksum, so this is a bug, and the fallback must
/// fail closed.
pub(crate) trait Unreadable {
    fn unreadable(error: &str) -> Self;
}

impl<T> Deferred<T> {
    pub fn new(value: T) -> Deferred<T> {
        Deferred {
            encoded: Box::default(),
            value: OnceLock::from(Box::new(value)),
        }
    }
}

impl<T: DeserializeOwned + Unreadable> Deferred<T> {
    pub fn get(&self) -> &T {
        self.value.get_or_init(|| {
            Box::new(
                postcard::from_bytes(&self.encoded)
                    .unwrap_or_else(|e| T::unreadable(&e.to_string())),
            )
        })
    }
}

impl<T: Clone> Clone for Deferred<T> {
    fn clone(&self) -> Self {
        Deferred {
            encoded: self.encoded.clone(),
            value: self.value.clone(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Deferred<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value.get() {
            Some(v) => v.fmt(f),
            None => write!(f, "<{} bytes not yet decoded>", self.encoded.len()),
        }
    }
}

impl<T: Serialize + DeserializeOwned + Unreadable> Serialize for Deferred<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return self.get().serialize(s);
        }
        match self.value.get() {
            Some(v) => s.serialize_bytes(&postcard::to_stdvec(v).map_err(S::Error::custom)?),
            None => s.serialize_bytes(&self.encoded),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Deferred<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            return T::deserialize(d).map(Deferred::new);
        }
        let encoded = d.deserialize_byte_buf(BytesVisitor)?;
        Ok(Deferred {
            encoded,
            value: OnceLock::new(),
        })
    }
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Box<[u8]>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an encoded value as a byte string")
    }

    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
        Ok(v.into_boxed_slice())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(b) = seq.next_element()? {
            out.push(b);
        }
        Ok(out.into_boxed_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Thing {
        name: String,
        n: u32,
    }

    impl Unreadable for Thing {
        fn unreadable(error: &str) -> Thing {
            Thing {
                name: format!("unreadable: {error}"),
                n: 0,
            }
        }
    }

    #[test]
    fn binary_round_trip_decodes_on_first_use() {
        let items = vec![
            Deferred::new(Thing {
                name: "a".into(),
                n: 1,
            }),
            Deferred::new(Thing {
                name: "b".into(),
                n: 2,
            }),
        ];
        let bytes = postcard::to_stdvec(&items).unwrap();
        let back: Vec<Deferred<Thing>> = postcard::from_bytes(&bytes).unwrap();
        assert!(back.iter().all(|d| d.value.get().is_none()));
        assert_eq!(back[1].get().name, "b");
        assert!(
            back[0].value.get().is_none(),
            "only what was read is decoded"
        );
        // Written again without having been decoded: the same bytes.
        assert_eq!(postcard::to_stdvec(&back).unwrap(), bytes);
        assert_eq!(back[0].clone().get().n, 1);
    }

    #[test]
    fn json_shows_the_value_itself() {
        let d = Deferred::new(Thing {
            name: "a".into(),
            n: 1,
        });
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(text, r#"{"name":"a","n":1}"#);
        let back: Deferred<Thing> = serde_json::from_str(&text).unwrap();
        assert_eq!(back.get(), d.get());
    }

    #[test]
    fn damaged_encoding_gives_the_fallback() {
        let d: Deferred<Thing> =
            postcard::from_bytes(&postcard::to_stdvec(&[0xffu8; 3][..]).unwrap()).unwrap();
        assert!(d.get().name.starts_with("unreadable: "), "{:?}", d.get());
    }

    #[test]
    fn an_unreadable_rule_denies_whatever_reaches_it_and_says_why() {
        let bytes = postcard::to_stdvec(&[0xffu8; 3][..]).unwrap();
        let d: Deferred<crate::Rule> = postcard::from_bytes(&bytes).unwrap();
        let rule = d.get();
        assert_eq!(rule.decision, crate::Decision::Deny);
        let action = crate::Action {
            kind: "shell.exec".into(),
            ..Default::default()
        };
        assert!(
            rule.matcher
                .is_match(&action, crate::pattern::History::default())
        );
        let why = rule.description.as_deref().unwrap_or_default();
        assert!(
            why.contains("cached compiled policy could not be read"),
            "{why}"
        );
    }
}
