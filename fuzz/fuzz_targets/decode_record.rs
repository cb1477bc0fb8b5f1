//! The shingle-record codec of `segment.rs`.
//!
//! * `decode_shingle_record` on arbitrary bytes with an arbitrary expected (doc id, count) never panics, and
//!   what it accepts is `count` strictly increasing shingles.
//! * Roundtrip: `encode_shingle_record` of a sorted unique set decodes to the same set, at any alignment of
//!   the buffer (borrowed and owned paths), and the record is `record_len(count)` bytes, a multiple of 8.
//! * Any single-byte change inside the header or the payload makes `decode_shingle_record` fail; a change in
//!   the padding does not matter; a wrong expected doc id or count fails; every truncation fails.
#![no_main]

use arbitrary::Arbitrary;
use fpdb::internals::segment::{decode_shingle_record, encode_shingle_record, payload_end, record_len, FORMAT_VERSION, RECORD_HEADER};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    doc_id: u64,
    count: u32,
    bytes: Vec<u8>,
    shingles: Vec<u32>,
    flip_at: u32,
    flip_xor: u8,
    shift: u8,
}

fuzz_target!(|input: Input| {
    // 1. Arbitrary bytes never panic; an accepted record is well-formed.
    let count = if input.count as usize > input.bytes.len() { input.count % 64 } else { input.count };
    for c in [count, input.count] {
        if let Ok(set) = decode_shingle_record(FORMAT_VERSION, &input.bytes, input.doc_id, c) {
            assert_eq!(set.len(), c as usize);
            assert!(set.windows(2).all(|w| w[0] < w[1]), "accepted an unsorted payload");
        }
    }

    // 2. Roundtrip.
    let mut set = input.shingles.clone();
    set.sort_unstable();
    set.dedup();
    let n = set.len() as u32;
    let mut rec = Vec::new();
    encode_shingle_record(FORMAT_VERSION, input.doc_id, &set, &mut rec);
    assert_eq!(rec.len() as u64, record_len(FORMAT_VERSION, n));
    assert_eq!(rec.len() % 8, 0);
    assert_eq!(&*decode_shingle_record(FORMAT_VERSION, &rec, input.doc_id, n).expect("roundtrip"), &set[..]);
    // Encoding appends: a prefix already in the buffer is kept.
    let mut appended = vec![0xAAu8; 8];
    encode_shingle_record(FORMAT_VERSION, input.doc_id, &set, &mut appended);
    assert_eq!(&appended[8..], &rec[..]);
    // Misaligned buffer (owned path) and trailing bytes.
    let shift = (input.shift % 8) as usize;
    let mut shifted = vec![0u8; shift];
    shifted.extend_from_slice(&rec);
    shifted.extend_from_slice(&input.bytes[..input.bytes.len().min(16)]);
    assert_eq!(&*decode_shingle_record(FORMAT_VERSION, &shifted[shift..], input.doc_id, n).expect("shifted roundtrip"), &set[..]);

    // 3. Wrong expectations and truncations fail.
    assert!(decode_shingle_record(FORMAT_VERSION, &rec, input.doc_id.wrapping_add(1), n).is_err());
    assert!(decode_shingle_record(FORMAT_VERSION, &rec, input.doc_id, n.wrapping_add(1)).is_err());
    if n > 0 {
        assert!(decode_shingle_record(FORMAT_VERSION, &rec, input.doc_id, n - 1).is_err());
    }
    let covered = payload_end(FORMAT_VERSION, n) as usize;
    for cut in [0, 1, RECORD_HEADER - 1, RECORD_HEADER, covered.saturating_sub(1)] {
        if cut < covered {
            assert!(decode_shingle_record(FORMAT_VERSION, &rec[..cut], input.doc_id, n).is_err(), "truncated to {cut} bytes accepted");
        }
    }

    // 4. One flipped byte.
    let xor = if input.flip_xor == 0 { 1 } else { input.flip_xor };
    let at = input.flip_at as usize % rec.len();
    let mut bad = rec.clone();
    bad[at] ^= xor;
    let got = decode_shingle_record(FORMAT_VERSION, &bad, input.doc_id, n);
    if at < covered {
        assert!(got.is_err(), "flip of byte {at} (^{xor:#x}) not detected: {got:?}");
    } else {
        assert_eq!(&*got.expect("flip in padding"), &set[..]);
    }
});
