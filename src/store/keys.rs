//! Every RocksDB key of the store: the column families, and for each key its one encoder and one
//! decoder, beside its byte layout. (Values: [`super::doc_record`]; segment files: [`super::segment`].)
//!
//! | CF      | key                                   | value                                             |
//! |---------|---------------------------------------|---------------------------------------------------|
//! | `meta`  | `format`                              | u32 LE store format version (1)                   |
//! | `meta`  | `spec`                                | fingerprint spec record (see `fingerprint::spec`) |
//! | `meta`  | `config`                              | version byte 1, 2 or 3 ‖ bincode `DbConfig`       |
//! | `meta`  | `next_doc`                            | u64 LE: the next doc id to allocate               |
//! | `meta`  | `seg` ‖ id u32 BE ([`seg_key`])       | u64 LE: committed length of that segment file     |
//! | `docs`  | doc id u64 BE ([`doc_key`])           | version byte 2 (1 still read) ‖ bincode `DocRecord` |
//! | `keys`  | external key (UTF-8 bytes)            | doc id u64 BE ([`key_value`])                     |
//! | `edges` | id u64 BE ‖ id u64 BE ([`edge_key`])  | empty (a verified near-duplicate link, both ways) |
//! | `t{i}`  | perm_i(simhash) u64 BE ‖ id u64 BE ([`table_key`]) | empty                                |
//! | `contain` | kind u8 ‖ shingle u32 BE ‖ id u64 BE ([`contain_key`]) | LEB128 u32: the doc's number of keys ([`contain_value`]) |
//!
//! `contain` (containment index, `fingerprint::containment`): kind 0 = a sampled shingle of a
//! document, kind 1 = any shingle of a short document (one without samples). One posting list =
//! one 5-byte prefix `kind ‖ shingle`, its doc ids in ascending order. The value repeats the
//! document's number of keys on every entry, so a search knows it without reading the document
//! (the count filter of `db::side::contain`).
//!
//! | `meta_idx` | kind u8 ‖ value ‖ 0x00 ‖ id u64 BE ([`meta_idx_key`]) | empty (metadata matches, `db::side::metadata`) |
//!
//! `meta_idx` (metadata matches): one entry per (document, indexed value). Byte 0: kind,
//! [`META_KIND_DOI`] (`0x01`) or [`META_KIND_TITLE_YEAR`] (`0x02`); then the normalised value,
//! UTF-8 (DOI: the normalised DOI; title + year: the year in decimal ASCII, `-` for negative years,
//! one space `0x20`, the normalised title); then `0x00` (no normalised value contains a NUL byte);
//! then the doc id, u64 BE. All documents with one value form one contiguous key range
//! ([`meta_idx_prefix`]), in doc-id order. Example: DOI `https://doi.org/10.1145/ABC` of doc 7 is the
//! key `01 "10.1145/abc" 00 00 00 00 00 00 00 00 07`. A database without this column family gets
//! it (empty) when opened for writing; a read-only handle treats it as empty.
//!
//! Big-endian ids in keys make RocksDB's byte order the numeric order.

use crate::fingerprint::containment::KeyKind;

/// The permutation of a table's fingerprints (`index::Layout` implements it): the table keys
/// below are encoded from it, so that the store needs nothing from the index.
pub trait TablePermutation {
    /// The fingerprint `fp` as table `i` orders it.
    fn permute(&self, i: usize, fp: u64) -> u64;
    /// The inverse of [`TablePermutation::permute`].
    fn unpermute(&self, i: usize, p: u64) -> u64;
    /// The width in bits of table `i`'s block (the leading bits of its permuted fingerprints).
    fn block_width(&self, i: usize) -> u32;
}

/// Column family of database-wide values (format, spec, config, counters, segment lengths).
pub const CF_META: &str = "meta";
/// Doc records.
pub const CF_DOCS: &str = "docs";
/// External key → doc id.
pub const CF_KEYS: &str = "keys";
/// Near-duplicate links.
pub const CF_EDGES: &str = "edges";

/// The containment index (present only in databases created with containment on).
pub const CF_CONTAIN: &str = "contain";

/// The metadata index (exact DOI / title + year matches).
pub const CF_META_IDX: &str = "meta_idx";
/// Kind byte of a DOI entry in `meta_idx`.
pub const META_KIND_DOI: u8 = 1;
/// Kind byte of a title + year entry in `meta_idx`.
pub const META_KIND_TITLE_YEAR: u8 = 2;

/// The `meta_idx` key prefix shared by every document indexed under `(kind, value)`: kind ‖ value ‖ 0x00.
pub fn meta_idx_prefix(kind: u8, value: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(value.len() + 10);
    k.push(kind);
    k.extend_from_slice(value);
    k.push(0);
    k
}

/// The `meta_idx` key of doc `id` under `(kind, value)`: kind ‖ value ‖ 0x00 ‖ id u64 BE.
pub fn meta_idx_key(kind: u8, value: &[u8], id: u64) -> Vec<u8> {
    let mut k = meta_idx_prefix(kind, value);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Decodes a [`meta_idx_key`] into `(kind, value, id)`; `None` when it is malformed.
pub fn decode_meta_idx_key(key: &[u8]) -> Option<(u8, &[u8], u64)> {
    let (&kind, rest) = key.split_first()?;
    let sep = rest.len().checked_sub(9)?;
    if rest[sep] != 0 || !matches!(kind, META_KIND_DOI | META_KIND_TITLE_YEAR) {
        return None;
    }
    Some((kind, &rest[..sep], be_u64(&rest[sep + 1..])?))
}

/// Meta key of the table generation: u32 LE, absent = 0. Each re-layout (`Db::reindex`) writes
/// its tables under the next generation's column-family names and switches `config` and this key
/// in one synced batch.
pub const META_TABLE_GEN: &[u8] = b"table_gen";

/// Meta key of the containment floor, a doc id (u64 LE, decoded by [`le_u64`], like `next_doc`):
/// documents with ids below it have their postings in `contain`, the others in the in-memory tail.
/// Absent in a database written before the tail existed: every posting is then in `contain`, and
/// the open writes the next doc id before anything else.
pub const META_CONTAIN_FLOOR: &[u8] = b"contain_floor";

/// Meta key of the table floor, a doc id (u64 LE, as [`META_CONTAIN_FLOOR`]): every live document
/// below it has its entries in every table of the generation in force; the others' may still be
/// in the table tail. Absent in a database written before the table tail existed: every entry is
/// then in RocksDB, and a writable open records the next doc id.
pub const META_TABLE_FLOOR: &[u8] = b"table_floor";

/// Name of table `i`'s column family in table generation `gen`: `t{i}` for generation 0 (every
/// database before its first re-layout), `t{i}.g{gen}` after.
pub fn table_cf(gen: u32, i: usize) -> String {
    if gen == 0 {
        format!("t{i}")
    } else {
        format!("t{i}.g{gen}")
    }
}

/// Inverse of [`table_cf`]: `(gen, i)`, or `None` for a name that is not a table's.
pub fn parse_table_cf(name: &str) -> Option<(u32, usize)> {
    let rest = name.strip_prefix('t')?;
    let (i, gen) = match rest.split_once(".g") {
        Some((i, g)) => (i, g.parse().ok().filter(|&g| g > 0)?),
        None => (rest, 0),
    };
    if i.is_empty() || !i.bytes().all(|b| b.is_ascii_digit()) || (i.len() > 1 && i.starts_with('0')) {
        return None;
    }
    let parsed = (gen, i.parse().ok()?);
    (table_cf(parsed.0, parsed.1) == name).then_some(parsed)
}

/// The core's column families of a database with `m` tables of generation `gen` (the side
/// indexes add theirs: `db::side`).
pub fn cf_names(m: u32, gen: u32) -> Vec<String> {
    let mut v: Vec<String> = [CF_META, CF_DOCS, CF_KEYS, CF_EDGES].iter().map(|s| s.to_string()).collect();
    v.extend((0..m as usize).map(|i| table_cf(gen, i)));
    v
}

/// Decodes a u64 stored big-endian (doc ids in keys and in `keys` values); `None` unless 8 bytes.
pub fn be_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

/// Decodes a u64 stored little-endian (meta values); `None` unless 8 bytes.
pub fn le_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// Key of a doc record: the id, big-endian.
pub fn doc_key(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// Key prefix of the segment lengths in `meta`.
pub const SEG_PREFIX: &[u8; 3] = b"seg";

/// Key of a segment's committed length in `meta`: `seg` ‖ id u32 BE (7 bytes).
pub fn seg_key(id: u32) -> [u8; 7] {
    let mut k = *b"seg\0\0\0\0";
    k[3..].copy_from_slice(&id.to_be_bytes());
    k
}

/// Decodes a [`seg_key`]; `None` unless `seg` ‖ 4 bytes.
pub fn decode_seg_key(key: &[u8]) -> Option<u32> {
    let id = key.strip_prefix(SEG_PREFIX)?;
    Some(u32::from_be_bytes(id.try_into().ok()?))
}

/// Key of an edge `a → b`: a u64 BE ‖ b u64 BE (16 bytes). Every link is stored both ways.
pub fn edge_key(a: u64, b: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&a.to_be_bytes());
    k[8..].copy_from_slice(&b.to_be_bytes());
    k
}

/// Decodes an [`edge_key`] into `(a, b)`; `None` unless 16 bytes.
pub fn decode_edge_key(key: &[u8]) -> Option<(u64, u64)> {
    if key.len() != 16 {
        return None;
    }
    Some((be_u64(&key[..8])?, be_u64(&key[8..])?))
}

/// Key of a table entry in table `i`: `perm_i(fp)` BE ‖ `doc_id` BE (16 bytes). Keys sort by
/// permuted fingerprint, so every block value is one contiguous key range (seek to
/// `value << (64 − width)`).
#[inline]
pub fn table_key(layout: &impl TablePermutation, i: usize, fp: u64, doc_id: u64) -> [u8; 16] {
    table_key_ord(layout, i, fp, doc_id).to_be_bytes()
}

/// A [`table_key`] as the integer whose big-endian bytes it is, so that sorting keys is sorting
/// integers (one compare, not a byte-wise `memcmp`): the writers of whole sorted files sort these.
#[inline]
pub fn table_key_ord(layout: &impl TablePermutation, i: usize, fp: u64, doc_id: u64) -> u128 {
    (u128::from(layout.permute(i, fp)) << 64) | u128::from(doc_id)
}

/// Decodes a [`table_key`] of table `i` into `(fp, doc_id)`; `None` unless 16 bytes.
#[inline]
pub fn decode_table_key(layout: &impl TablePermutation, i: usize, key: &[u8]) -> Option<(u64, u64)> {
    if key.len() != 16 {
        return None;
    }
    let p = be_u64(&key[..8])?;
    let id = be_u64(&key[8..])?;
    Some((layout.unpermute(i, p), id))
}

/// Where the entries of table `i` whose block equals `value` start: the first [`table_key`]
/// prefix of that block (`value << (64 − width)`, u64 BE). They run on while the key's block is
/// `value`.
#[inline]
pub fn table_seek(layout: &impl TablePermutation, i: usize, value: u64) -> [u8; 8] {
    (value << (64 - layout.block_width(i))).to_be_bytes()
}

/// Value of the `keys` column family: the doc id, u64 BE.
#[inline]
pub fn key_value(doc_id: u64) -> [u8; 8] {
    doc_id.to_be_bytes()
}

/// Decodes a [`key_value`]; `None` unless 8 bytes.
#[inline]
pub fn decode_key_value(v: &[u8]) -> Option<u64> {
    be_u64(v)
}

/// Key of a containment-index entry: kind u8 ‖ shingle u32 BE ‖ doc id u64 BE (13 bytes). All
/// documents under one key (a posting list) share the 5-byte [`contain_prefix`], in id order.
pub fn contain_key(kind: KeyKind, shingle: u32, doc_id: u64) -> [u8; 13] {
    let mut k = [0u8; 13];
    k[..5].copy_from_slice(&contain_prefix(kind, shingle));
    k[5..].copy_from_slice(&doc_id.to_be_bytes());
    k
}

/// Length of [`contain_prefix`] (the `contain` column family's prefix filter is on it).
pub const CONTAIN_PREFIX_LEN: usize = 5;

/// The posting-list prefix of a containment key: kind u8 ‖ shingle u32 BE.
pub fn contain_prefix(kind: KeyKind, shingle: u32) -> [u8; CONTAIN_PREFIX_LEN] {
    let mut k = [0u8; CONTAIN_PREFIX_LEN];
    k[0] = kind as u8;
    k[1..].copy_from_slice(&shingle.to_be_bytes());
    k
}

/// Decodes a [`contain_key`] into `(kind, shingle, doc_id)`; `None` unless 13 bytes of a known kind.
pub fn decode_contain_key(key: &[u8]) -> Option<(KeyKind, u32, u64)> {
    if key.len() != 13 {
        return None;
    }
    let kind = KeyKind::from_byte(key[0])?;
    Some((kind, u32::from_be_bytes(key[1..5].try_into().ok()?), be_u64(&key[5..])?))
}

/// Value of a containment-index entry: the document's number of keys, LEB128 (1–5 bytes).
pub fn contain_value(keys: u32) -> ([u8; 5], usize) {
    let (mut out, mut n, mut v) = ([0u8; 5], 0usize, keys);
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out[n] = b;
            return (out, n + 1);
        }
        out[n] = b | 0x80;
        n += 1;
    }
}

/// Decodes a [`contain_value`]; `None` unless a complete LEB128 u32 with nothing after it.
pub fn decode_contain_value(bytes: &[u8]) -> Option<u32> {
    let mut v: u64 = 0;
    for (i, &b) in bytes.iter().enumerate().take(5) {
        v |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            return (i + 1 == bytes.len()).then_some(u32::try_from(v).ok()?);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn table_cf_names_parse_back() {
        for (gen, i) in [(0, 0), (0, 31), (1, 0), (7, 12), (u32::MAX, 3)] {
            assert_eq!(parse_table_cf(&table_cf(gen, i)), Some((gen, i)));
        }
        for bad in [
            "t", "tx", "t01", "t1.g", "t1.g0", "t1.g01", "t-1", "meta", "docs", "t1.gx", "t1.g2.g3",
        ] {
            assert_eq!(parse_table_cf(bad), None, "{bad}");
        }
        assert_eq!(table_cf(0, 4), "t4");
        assert_eq!(table_cf(2, 4), "t4.g2");
    }

    proptest! {
        #[test]
        fn every_key_decodes_to_what_was_encoded(a in any::<u64>(), b in any::<u64>(), s in any::<u32>()) {
            prop_assert_eq!(decode_edge_key(&edge_key(a, b)), Some((a, b)));
            prop_assert_eq!(decode_seg_key(&seg_key(s)), Some(s));
            prop_assert_eq!(be_u64(&doc_key(a)), Some(a));
            let (v, len) = contain_value(s);
            prop_assert_eq!(decode_contain_value(&v[..len]), Some(s));
            for kind in [KeyKind::Sample, KeyKind::Short] {
                let k = contain_key(kind, s, a);
                prop_assert_eq!(decode_contain_key(&k), Some((kind, s, a)));
                prop_assert!(k.starts_with(&contain_prefix(kind, s)));
            }
        }
    }

    #[test]
    fn keys_of_the_wrong_length_do_not_decode() {
        assert_eq!(decode_edge_key(&[0; 15]), None);
        assert_eq!(decode_seg_key(b"seg\0\0\0"), None);
        assert_eq!(decode_seg_key(b"xeg\0\0\0\0"), None);
        assert_eq!(be_u64(&[0; 9]), None);
        assert_eq!(decode_contain_key(&[0; 12]), None);
        assert_eq!(decode_contain_key(&[2; 13]), None);
        assert_eq!(contain_value(127), ([127, 0, 0, 0, 0], 1));
        assert_eq!(contain_value(128), ([0x80, 1, 0, 0, 0], 2));
        assert_eq!(decode_contain_value(&[]), None);
        assert_eq!(decode_contain_value(&[0x80]), None);
        assert_eq!(decode_contain_value(&[1, 0]), None);
        assert_eq!(decode_contain_value(&[0xFF, 0xFF, 0xFF, 0xFF, 0x7F]), None);
    }
}

// The column families of the methods other than SimHash (fingerprint/method.rs).
//
// | CF       | key                                                  | value                               |
// |----------|------------------------------------------------------|-------------------------------------|
// | `sketch` | doc id u64 BE ([`doc_key`])                          | the sketch: its u64 words, each LE  |
// | `mindex` | table u16 BE ‖ value u64 BE ‖ id u64 BE ([`mindex_key`]) | empty (a bucket entry)          |
// | `meta`   | `idf`                                                | the IDF table (`fingerprint::weighted`) |

/// Sketches of the documents (methods with a sketch).
pub const CF_SKETCH: &str = "sketch";
/// The method index's buckets.
pub const CF_MINDEX: &str = "mindex";
/// Meta key of a weighted-simhash database's IDF table.
pub const META_IDF: &[u8] = b"idf";

/// The column families a method adds (none for simhash and weighted-simhash).
pub fn method_cf_names(method: &crate::fingerprint::method::Method) -> Vec<String> {
    if method.uses_simhash_tables() {
        Vec::new()
    } else {
        vec![CF_SKETCH.to_string(), CF_MINDEX.to_string()]
    }
}

/// Key of a bucket entry: table u16 BE ‖ value u64 BE ‖ doc id u64 BE (18 bytes). One bucket is one
/// contiguous key range ([`mindex_prefix`]).
#[inline]
pub fn mindex_key(table: u16, value: u64, id: u64) -> [u8; 18] {
    let mut k = [0u8; 18];
    k[..10].copy_from_slice(&mindex_prefix(table, value));
    k[10..].copy_from_slice(&id.to_be_bytes());
    k
}

/// The first 10 bytes of every key of bucket `(table, value)`.
#[inline]
pub fn mindex_prefix(table: u16, value: u64) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[..2].copy_from_slice(&table.to_be_bytes());
    k[2..].copy_from_slice(&value.to_be_bytes());
    k
}

/// Decodes a [`mindex_key`] into `(table, value, id)`; `None` unless 18 bytes.
#[inline]
pub fn decode_mindex_key(key: &[u8]) -> Option<(u16, u64, u64)> {
    if key.len() != 18 {
        return None;
    }
    Some((u16::from_be_bytes([key[0], key[1]]), be_u64(&key[2..10])?, be_u64(&key[10..])?))
}

/// The stored sketch: its words, little-endian.
pub fn encode_sketch(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Decodes a stored sketch of `words` words; `None` for any other length.
pub fn decode_sketch(bytes: &[u8], words: usize) -> Option<Vec<u64>> {
    if bytes.len() != 8 * words {
        return None;
    }
    bytes.chunks_exact(8).map(le_u64).collect()
}

#[cfg(test)]
mod method_key_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn method_keys_decode_to_what_was_encoded(t in any::<u16>(), v in any::<u64>(), id in any::<u64>(), w in proptest::collection::vec(any::<u64>(), 0..20)) {
            prop_assert_eq!(decode_mindex_key(&mindex_key(t, v, id)), Some((t, v, id)));
            prop_assert_eq!(decode_sketch(&encode_sketch(&w), w.len()), Some(w.clone()));
            prop_assert_eq!(decode_sketch(&encode_sketch(&w), w.len() + 1), None);
        }
    }

    #[test]
    fn a_bucket_is_one_key_range() {
        let (a, b, c) = (mindex_key(1, 5, u64::MAX), mindex_key(1, 6, 0), mindex_key(1, 5, 0));
        assert!(c < a && a < b);
        assert!(a.starts_with(&mindex_prefix(1, 5)) && !b.starts_with(&mindex_prefix(1, 5)));
    }
}
