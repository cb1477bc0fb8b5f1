//! Views: a result type's shape less some of its fields ([`View`], [`Omit`]), and the views the
//! HTTP service writes. The machinery (a serializer that drops the omitted fields of a struct, and
//! the OpenAPI schema of a view) is here; the shapes themselves are in the parent module.

use std::marker::PhantomData;

use serde::ser::{Error as _, Impossible, SerializeStruct, Serializer};
use serde::Serialize;

use crate::db::{Hit, QueryAnswer, Stats};

/// What a [`View`] leaves out of a type's shape (its top-level fields, by JSON name), and the
/// view's schema name.
pub trait Omit {
    /// The type viewed.
    type Of: Serialize;
    /// JSON names of the fields left out.
    const FIELDS: &'static [&'static str];
    /// The name of the view's OpenAPI schema.
    const NAME: &'static str;
    /// Its description there.
    const DESCRIPTION: &'static str;
}

/// A type's shape less the fields of `O` (every other field, in its order). A field added to the
/// type appears in the view too.
pub struct View<'a, O: Omit>(pub &'a O::Of, PhantomData<O>);

impl<'a, O: Omit> View<'a, O> {
    /// The view of `v`.
    pub fn of(v: &'a O::Of) -> Self {
        View(v, PhantomData)
    }
}

impl<'a, O: Omit> From<&'a O::Of> for View<'a, O> {
    fn from(v: &'a O::Of) -> Self {
        View::of(v)
    }
}

impl<O: Omit> Serialize for View<'_, O> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Without { inner: s, omit: O::FIELDS })
    }
}

/// The HTTP service's hit (docs/serve.md: `{"key","id","hamming","jaccard","shared","match","channels","cosine"}`):
/// a [`Hit`] without the containment values and the method's score.
pub struct HttpHitFields;

impl Omit for HttpHitFields {
    type Of = Hit;
    const FIELDS: &'static [&'static str] = &["containment", "reverse_containment", "score"];
    const NAME: &'static str = "HitOut";
    const DESCRIPTION: &'static str = "A near-duplicate (or metadata match).";
}

/// A hit as the HTTP service writes it.
pub type HttpHit<'a> = View<'a, HttpHitFields>;

/// A duplicate check's bounds: a [`QueryAnswer`] without its hits (the HTTP service writes its
/// own form of them beside).
pub struct AnswerBoundsFields;

impl Omit for AnswerBoundsFields {
    type Of = QueryAnswer;
    const FIELDS: &'static [&'static str] = &["hits"];
    const NAME: &'static str = "AnswerBounds";
    const DESCRIPTION: &'static str = "How far a duplicate check went: whether candidates were left unverified (past \
        `--max-candidates` or the deadline `--query-deadline-ms`: the text hits may be incomplete, and a narrower \
        check, with a smaller `max_distance` or a higher `min_jaccard`, finishes) and how many were verified.";
}

/// A query answer's bounds (`truncated`, `candidates`, ...).
pub type AnswerBounds<'a> = View<'a, AnswerBoundsFields>;

/// The counters as the HTTP service writes them (`GET /v1/stats`): [`Stats`] without
/// `best_tables` (a re-layout is the CLI's and the library's business).
pub struct HttpStatsFields;

impl Omit for HttpStatsFields {
    type Of = Stats;
    const FIELDS: &'static [&'static str] = &["best_tables"];
    const NAME: &'static str = "Counters";
    const DESCRIPTION: &'static str = "Database counters: documents, groups, segments, tables, the default k and t, the spec.";
}

/// The counters as the HTTP service writes them.
pub type HttpStats<'a> = View<'a, HttpStatsFields>;

/// A serializer that writes a struct less some of its fields; anything but a struct is an error
/// (a [`View`] is only declared over structs).
struct Without<S> {
    inner: S,
    omit: &'static [&'static str],
}

struct WithoutStruct<S> {
    inner: S,
    omit: &'static [&'static str],
}

impl<S: SerializeStruct> SerializeStruct for WithoutStruct<S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), S::Error> {
        if self.omit.contains(&key) {
            self.inner.skip_field(key)
        } else {
            self.inner.serialize_field(key, value)
        }
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
        self.inner.skip_field(key)
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.inner.end()
    }
}

/// The [`Serializer`] methods a [`View`] never reaches: each an error.
macro_rules! not_a_struct {
    ($($f:ident($($a:ty),*) -> $r:ty;)*) => {$(
        fn $f(self, $(_: $a),*) -> Result<$r, S::Error> {
            Err(S::Error::custom("a view is declared over a struct only"))
        }
    )*};
}

impl<S: Serializer> Serializer for Without<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Impossible<S::Ok, S::Error>;
    type SerializeStruct = WithoutStruct<S::SerializeStruct>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct, S::Error> {
        Ok(WithoutStruct {
            inner: self.inner.serialize_struct(name, len.saturating_sub(self.omit.len()))?,
            omit: self.omit,
        })
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom("a view is declared over a struct only"))
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, _: &T) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom("a view is declared over a struct only"))
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom("a view is declared over a struct only"))
    }

    not_a_struct! {
        serialize_bool(bool) -> S::Ok;
        serialize_i8(i8) -> S::Ok;
        serialize_i16(i16) -> S::Ok;
        serialize_i32(i32) -> S::Ok;
        serialize_i64(i64) -> S::Ok;
        serialize_u8(u8) -> S::Ok;
        serialize_u16(u16) -> S::Ok;
        serialize_u32(u32) -> S::Ok;
        serialize_u64(u64) -> S::Ok;
        serialize_f32(f32) -> S::Ok;
        serialize_f64(f64) -> S::Ok;
        serialize_char(char) -> S::Ok;
        serialize_str(&str) -> S::Ok;
        serialize_bytes(&[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(&'static str) -> S::Ok;
        serialize_unit_variant(&'static str, u32, &'static str) -> S::Ok;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

/// The OpenAPI schemas of the views: the viewed type's schema less the omitted properties.
#[cfg(feature = "openapi")]
mod schema {
    use std::borrow::Cow;

    use utoipa::openapi::schema::Schema;
    use utoipa::openapi::RefOr;
    use utoipa::{PartialSchema, ToSchema};

    use super::{Omit, View};

    impl<O: Omit> PartialSchema for View<'_, O>
    where
        O::Of: ToSchema,
    {
        fn schema() -> RefOr<Schema> {
            let mut s = <O::Of as PartialSchema>::schema();
            if let RefOr::T(Schema::Object(obj)) = &mut s {
                for f in O::FIELDS {
                    obj.properties.remove(*f);
                    obj.required.retain(|r| r != f);
                }
                obj.description = Some(O::DESCRIPTION.into());
            }
            s
        }
    }

    impl<O: Omit> ToSchema for View<'_, O>
    where
        O::Of: ToSchema,
    {
        fn name() -> Cow<'static, str> {
            Cow::Borrowed(O::NAME)
        }

        /// The schemas the view refers to: those of the viewed type that its remaining fields
        /// still name (directly or through each other).
        fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
            let mut all = Vec::new();
            <O::Of as ToSchema>::schemas(&mut all);
            let text = |s: &RefOr<Schema>| serde_json::to_string(s).unwrap_or_default();
            let mut named = text(&Self::schema());
            let mut kept = vec![false; all.len()];
            while let Some(i) = (0..all.len()).find(|&i| !kept[i] && named.contains(&format!("\"#/components/schemas/{}\"", all[i].0))) {
                kept[i] = true;
                named.push_str(&text(&all[i].1));
            }
            schemas.extend(all.into_iter().zip(kept).filter(|(_, k)| *k).map(|(s, _)| s));
        }
    }
}
