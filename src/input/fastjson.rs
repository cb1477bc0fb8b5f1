//! The fast path of reading a JSONL line ([`super::parse_line`]): an object whose field
//! names hold no escape and whose values are all strings, read in one pass that finds each
//! string's end and unescapes it into its `String` at once (serde_json scans a string for its
//! escapes, copies the pieces into a scratch buffer, then copies that into the value: the long
//! texts of `query --jsonl` spent ~13% of the command's CPU there). Anything else — another kind
//! of value, an escape in a name, a `\u` surrogate, a control character, malformed JSON — gives
//! `None`, and the line takes serde_json's path, which reads it or says what is wrong with it. For
//! every line it reads, the result is serde_json's (tested).

use serde_json::{Map, Value};

/// One JSONL object read: the last `key_field` and `text_field` values and the other fields in
/// input order (later duplicates replace earlier ones), as [`super`]'s serde visitor keeps
/// them.
pub struct Fields {
    pub key: Option<Value>,
    pub text: Option<Value>,
    pub rest: Map<String, Value>,
}

/// Reads `s` as an object of string fields ([`Fields`]), or `None` (module docs).
pub fn fields(s: &str, key_field: &str, text_field: &str) -> Option<Fields> {
    let b = s.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    let mut out = Fields {
        key: None,
        text: None,
        rest: Map::new(),
    };
    if b.get(i) == Some(&b'}') {
        return (skip_ws(b, i + 1) == b.len()).then_some(out);
    }
    loop {
        // "name" : "value"
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let end = next_special(b, i + 1);
        if b.get(end) != Some(&b'"') {
            return None;
        }
        let name = &s[i + 1..end];
        i = skip_ws(b, end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let (value, next) = string(s, i)?;
        if name == key_field {
            out.key = Some(Value::String(value));
        } else if name == text_field {
            out.text = Some(Value::String(value));
        } else {
            out.rest.insert(name.to_owned(), Value::String(value));
        }
        i = skip_ws(b, next);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return (skip_ws(b, i + 1) == b.len()).then_some(out),
            _ => return None,
        }
    }
}

/// The first index from `i` on that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Whether a byte ends a run of plain string bytes: a quote, a backslash or a control character.
#[inline]
fn special(x: u8) -> bool {
    (x == b'"') | (x == b'\\') | (x < 0x20)
}

/// The index of the first special byte ([`special`]) from `i` on, or `b.len()`. Eight bytes at a
/// time as one word ([`special_bytes`]): one branch per 8 bytes of plain text.
fn next_special(b: &[u8], mut i: usize) -> usize {
    while let Some(Ok(word)) = b.get(i..i + 8).map(<[u8; 8]>::try_from) {
        let m = special_bytes(u64::from_le_bytes(word));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    b[i..].iter().position(|&x| special(x)).map_or(b.len(), |p| i + p)
}

/// The high bit of each byte of `w` (little-endian) that is special ([`special`]), exact up to the
/// lowest one (a borrow may mark bytes above it, never below): the zero-byte test of `w ^ '"'`,
/// `w ^ '\\'` and the less-than-0x20 test of `w`.
#[inline]
fn special_bytes(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let q = w ^ (ONES * u64::from(b'"'));
    let bs = w ^ (ONES * u64::from(b'\\'));
    ((q.wrapping_sub(ONES) & !q) | (bs.wrapping_sub(ONES) & !bs) | (w.wrapping_sub(ONES * 0x20) & !w)) & HIGH
}

/// The JSON string that starts with the quote at `i`, unescaped, and the index after its closing
/// quote; `None` for anything serde_json's path should read or reject (module docs).
fn string(s: &str, mut i: usize) -> Option<(String, usize)> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    let mut out = String::new();
    loop {
        let end = next_special(b, i);
        if out.capacity() == 0 {
            // Sized once: exactly for a string without escapes, else the rest of the line (an
            // unescaped string is never longer than its JSON form).
            out.reserve(if b.get(end) == Some(&b'"') { end - i } else { b.len() - i });
        }
        // `i` and `end` are at ASCII bytes (or the end): character boundaries of `s`.
        out.push_str(s.get(i..end)?);
        match b.get(end)? {
            b'"' => return Some((out, end + 1)),
            b'\\' => {
                let (c, len) = escape(b, end + 1)?;
                out.push(c);
                i = end + 1 + len;
            }
            _ => return None, // a control character: serde_json's path says so
        }
    }
}

/// The character of the escape whose letter is at `i` (after the backslash) and the escape's
/// length from `i`; `None` for an unknown escape or a `\u` surrogate (pairs included: serde_json's
/// path joins or rejects them).
fn escape(b: &[u8], i: usize) -> Option<(char, usize)> {
    let c = match b.get(i)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hex = std::str::from_utf8(b.get(i + 1..i + 5)?).ok()?;
            if !hex.bytes().all(|x| x.is_ascii_hexdigit()) {
                return None;
            }
            let code = u32::from_str_radix(hex, 16).ok()?;
            return char::from_u32(code).map(|c| (c, 5));
        }
        _ => return None,
    };
    Some((c, 1))
}

#[cfg(test)]
mod tests {
    use super::{fields, next_special, special};
    use proptest::prelude::*;

    /// serde_json's reading of the line field by field, kept as the slow path's visitor keeps
    /// them (the last key and text; the rest inserted in order), the rest written out.
    type Read = (Option<serde_json::Value>, Option<serde_json::Value>, String);

    fn serde(s: &str, key_field: &str, text_field: &str) -> Option<Read> {
        use serde::de::{Deserializer as _, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<(String, serde_json::Value)>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    out.push((k, m.next_value()?));
                }
                Ok(out)
            }
        }
        let mut de = serde_json::Deserializer::from_str(s);
        let pairs = (&mut de).deserialize_map(V).ok()?;
        de.end().ok()?;
        let (mut key, mut text) = (None, None);
        let mut rest = serde_json::Map::new();
        for (k, v) in pairs {
            if k == key_field {
                key = Some(v);
            } else if k == text_field {
                text = Some(v);
            } else {
                rest.insert(k, v);
            }
        }
        Some((key, text, serde_json::Value::Object(rest).to_string()))
    }

    fn check(line: &str) -> Result<(), TestCaseError> {
        if let Some(f) = fields(line, "key", "text") {
            let want = serde(line, "key", "text");
            prop_assert!(want.is_some(), "the fast path read a line serde_json rejects: {:?}", line);
            let (k, t, rest) = want.unwrap_or_default();
            prop_assert_eq!(f.key, k);
            prop_assert_eq!(f.text, t);
            prop_assert_eq!(serde_json::Value::Object(f.rest).to_string(), rest);
        }
        Ok(())
    }

    /// Any string, written by serde_json (escapes, `\u` forms of control characters) or raw.
    fn json_string() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>().prop_map(|s| serde_json::Value::String(s).to_string()),
            "\"[a-z \\n\\t\"\\\\é文\u{1F600}]{0,20}\"",
            "\"([a-z ]|\\\\[\"\\\\/bfnrtxu0]|\\\\u[0-9a-fA-FdD]{4}){0,12}\"",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Objects of string fields (names among key, text and others, duplicates included), with
        /// any whitespace: the fast path reads each as serde_json does.
        #[test]
        fn string_objects_read_as_serde_json_reads_them(
            fields_ in prop::collection::vec(("(key|text|label|k\\\\u0065y|tex)", json_string(), "[ \\t]{0,2}"), 0..5),
            ws in "[ \\t\\r\\n]{0,2}",
        ) {
            let body: Vec<String> = fields_.iter().map(|(n, v, w)| format!("{w}\"{n}\"{w}:{w}{v}{w}")).collect();
            let line = format!("{ws}{{{}}}{ws}", body.join(","));
            check(&line)?;
            // Every object of plain names and serde_json-written strings takes the fast path.
            if fields_.iter().all(|(n, v, _)| !n.contains('\\') && serde_json::from_str::<String>(v).is_ok_and(|s| serde_json::to_string(&s).is_ok_and(|w| w == *v)) && !v.contains("\\ud")) {
                prop_assert!(fields(&line, "key", "text").is_some(), "{:?}", line);
            }
        }

        /// Arbitrary and truncated JSON-like lines: whatever the fast path reads, it reads as
        /// serde_json does.
        #[test]
        fn any_line_read_fast_is_read_as_serde_json_reads_it(line in "[{}\":, a-z0-9\\\\\\[\\]ntu.\\-é]{0,40}") {
            check(&line)?;
        }

        /// The word-at-a-time search finds the first special byte, as a byte-by-byte one does.
        #[test]
        fn next_special_finds_the_first_special_byte(b in prop::collection::vec(prop_oneof![any::<u8>(), Just(b'"'), Just(b'\\'), 0x18u8..0x24, 0x5au8..0x5e], 0..40), i in 0usize..40) {
            let i = i.min(b.len());
            let want = b[i..].iter().position(|&x| special(x)).map_or(b.len(), |p| i + p);
            prop_assert_eq!(next_special(&b, i), want);
        }

        /// Truncations of a valid line are refused or read alike.
        #[test]
        fn truncated_lines(s in any::<String>(), cut in 0usize..60) {
            let line = serde_json::json!({"key": "k", "text": s, "label": "x"}).to_string();
            let mut cut = cut.min(line.len());
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            check(&line[..cut])?;
            check(&line)?;
            prop_assert!(fields(&line, "key", "text").is_some(), "{:?}", line);
        }
    }
}
