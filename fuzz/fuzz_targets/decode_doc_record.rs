//! The versioned record codecs of `store/doc_record.rs` (`DocRecord`, `DbConfig`).
//!
//! * `decode` on arbitrary bytes never panics (and never allocates what a length prefix claims
//!   before the bytes are there).
//! * What decodes re-encodes to the same bytes (the encoding is canonical): `encode(decode(b))` is a
//!   prefix of `b`.
//! * Roundtrip: `decode(encode(r)) == r` for an arbitrary `DocRecord`; every strict prefix of the
//!   encoding is refused; an unknown version byte is refused with `Error::Version`; a version-2 body
//!   relabelled as the older version 1 is refused (strict decoding of the older layout).
#![no_main]

use std::path::Path;

use arbitrary::Arbitrary;
use fpdb::internals::doc_record::{decode_config, decode_doc, encode_config, encode_doc, DocRecord};
use fpdb::Error;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct ArbDoc {
    key: String,
    simhash: u64,
    segment: u32,
    offset: u64,
    count: u32,
    group: u64,
    inserted_at_ms: u64,
    meta: Option<String>,
    title: Option<String>,
    year: Option<i32>,
    doi: Option<String>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    bytes: Vec<u8>,
    doc: ArbDoc,
    cut: u16,
    version: u8,
}

fuzz_target!(|input: Input| {
    let p = Path::new("x");
    // 1. Arbitrary bytes.
    if let Ok(r) = decode_doc(&input.bytes, p, None) {
        let again = encode_doc(&r).expect("encode");
        // Version 1 records decode into today's version 2: canonical only within version 2.
        if input.bytes[0] == again[0] {
            assert!(input.bytes.starts_with(&again), "non-canonical doc record encoding accepted");
        }
    }
    if let Ok(c) = decode_config(&input.bytes, p) {
        let again = encode_config(&c).expect("encode");
        // A version-2 config without containment re-encodes as version 1: canonical within a version.
        if input.bytes[0] == again[0] {
            assert!(input.bytes.starts_with(&again), "non-canonical config record encoding accepted");
        }
    }

    // 2. Roundtrip of an arbitrary record.
    let d = input.doc;
    let r = DocRecord {
        key: d.key,
        simhash: d.simhash,
        segment: d.segment,
        offset: d.offset,
        count: d.count,
        group: d.group,
        inserted_at_ms: d.inserted_at_ms,
        meta: d.meta,
        biblio: fpdb::Biblio {
            title: d.title,
            year: d.year,
            doi: d.doi,
        },
    };
    let bytes = encode_doc(&r).expect("encode");
    let back = decode_doc(&bytes, p, None).expect("roundtrip");
    assert_eq!(back, r);

    // 3. Truncation and version.
    let cut = input.cut as usize % bytes.len();
    assert!(decode_doc(&bytes[..cut], p, None).is_err(), "prefix of {cut} bytes accepted");
    assert!(decode_doc(&bytes[..bytes.len() - 1], p, None).is_err());
    if input.version != bytes[0] {
        let mut v = bytes.clone();
        v[0] = input.version;
        let r = decode_doc(&v, p, None);
        if input.version == 1 {
            // The older layout still decodes, strictly: a version-2 body has trailing bytes.
            assert!(r.is_err(), "a version-2 body was accepted as version 1");
        } else {
            assert!(matches!(r, Err(Error::Version { .. })));
        }
    }
});
