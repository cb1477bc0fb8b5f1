//! One shingle record of a segment file (`super::segment`): its bytes, its ONE encoder and its ONE
//! decoder. All integers are little-endian.
//!
//! ```text
//! record (at an 8-byte aligned offset; 24-byte header + payload + zero padding to 8 bytes)
//!   0  4  magic  "FPSR"
//!   4  4  count  number of shingles
//!   8  8  doc id
//!  16  8  checksum  xxh3_64(payload bytes, seed 0)
//!  24  ..  payload
//!      version 1: 4·count bytes, the sorted unique u32 shingles, then 0 or 4 zero bytes of padding
//!      version 2: the Elias–Fano code of the sorted unique shingles over 2^32 (`super::ef`, which
//!                 documents it byte by byte): whole u64 words, so no padding
//! ```
//!
//! In both versions a record's length is a function of its count ([`record_len`] of the
//! segment's version).

use std::borrow::Cow;

use xxhash_rust::xxh3::xxh3_64;

/// Record magic.
pub const RECORD_MAGIC: &[u8; 4] = b"FPSR";
/// Size of a record header.
pub const RECORD_HEADER: usize = 24;

/// Bytes a record of `count` shingles occupies in a segment of format `version`, padding included
/// (version 1: u32s padded to 8 bytes; version 2 and any other: Elias–Fano words).
pub fn record_len(version: u32, count: u32) -> u64 {
    match version {
        1 => RECORD_HEADER as u64 + (4 * count as u64).div_ceil(8) * 8,
        _ => payload_end(version, count),
    }
}

/// Bytes from a record's start to the end of its payload (header + payload, no padding), computed
/// in u64 so that no count overflows it.
pub fn payload_end(version: u32, count: u32) -> u64 {
    match version {
        1 => RECORD_HEADER as u64 + 4 * u64::from(count),
        _ => RECORD_HEADER as u64 + super::ef::payload_len(count),
    }
}

/// Appends the encoded record for `doc_id` to `out`, in segment format `version` (1 or 2; the
/// writer always uses `FORMAT_VERSION`, version 1 is kept for tests of old segments).
pub fn encode_shingle_record(version: u32, doc_id: u64, shingles: &[u32], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(RECORD_MAGIC);
    out.extend_from_slice(&(shingles.len() as u32).to_le_bytes());
    out.extend_from_slice(&doc_id.to_le_bytes());
    out.extend_from_slice(&[0u8; 8]);
    let payload = out.len();
    if version == 1 {
        for s in shingles {
            out.extend_from_slice(&s.to_le_bytes());
        }
    } else {
        super::ef::encode(shingles, out);
    }
    let sum = xxh3_64(&out[payload..]);
    out[start + 16..start + 24].copy_from_slice(&sum.to_le_bytes());
    out.resize(start + record_len(version, shingles.len() as u32) as usize, 0);
}

/// Why a record failed to decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShingleRecordFault(pub String);

/// Decodes and verifies the record at the start of `bytes`, in segment format `version`: magic,
/// doc id, count and checksum must match. Returns the shingles; a version-1 payload is borrowed
/// when suitably aligned on a little-endian host, a version-2 one is decoded into a new set.
pub fn decode_shingle_record(
    version: u32,
    bytes: &[u8],
    doc_id: u64,
    count: u32,
) -> std::result::Result<Cow<'_, [u32]>, ShingleRecordFault> {
    // Bound the claimed length by the bytes at hand before anything is sized from it.
    let need = payload_end(version, count);
    if (bytes.len() as u64) < need {
        return Err(ShingleRecordFault(format!(
            "record truncated: {count} shingles need {need} bytes, file has {}",
            bytes.len()
        )));
    }
    // `need <= bytes.len()`, so it fits in usize.
    let need = need as usize;
    if &bytes[..4] != RECORD_MAGIC {
        return Err(ShingleRecordFault(format!(
            "bad record magic: expected {RECORD_MAGIC:?}, found {:?}",
            &bytes[..4]
        )));
    }
    let found_count = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    let found_id = u64::from_le_bytes(bytes[8..16].try_into().map_err(|_| ShingleRecordFault("short header".into()))?);
    let sum = u64::from_le_bytes(bytes[16..24].try_into().map_err(|_| ShingleRecordFault("short header".into()))?);
    if found_id != doc_id || found_count != count {
        return Err(ShingleRecordFault(format!(
            "record header mismatch: expected doc {doc_id} with {count} shingles, found doc {found_id} with {found_count}"
        )));
    }
    let payload = &bytes[RECORD_HEADER..need];
    let actual = xxh3_64(payload);
    if actual != sum {
        return Err(ShingleRecordFault(format!(
            "checksum mismatch: expected {sum:#018x}, computed {actual:#018x}"
        )));
    }
    let shingles: Cow<'_, [u32]> = if version == 1 {
        match bytemuck::try_cast_slice::<u8, u32>(payload) {
            Ok(s) if cfg!(target_endian = "little") => Cow::Borrowed(s),
            _ => Cow::Owned(
                payload
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
        }
    } else {
        let mut set = Vec::new();
        super::ef::decode(payload, count, &mut set).map_err(|e| ShingleRecordFault(format!("bad Elias-Fano payload: {e}")))?;
        Cow::Owned(set)
    };
    if shingles.windows(2).any(|w| w[0] >= w[1]) {
        return Err(ShingleRecordFault("payload is not sorted and unique".into()));
    }
    Ok(shingles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_roundtrip_and_every_fault_detected() {
        for version in [1, 2] {
            let mut buf = Vec::new();
            encode_shingle_record(version, 42, &[1, 5, 9], &mut buf);
            assert_eq!(buf.len() as u64, record_len(version, 3));
            assert_eq!(buf.len() % 8, 0);
            let dec = |b: &[u8], id, n| decode_shingle_record(version, b, id, n).map(|c| c.into_owned());
            assert_eq!(dec(&buf, 42, 3).unwrap(), vec![1, 5, 9]);
            assert!(dec(&buf, 43, 3).unwrap_err().0.contains("expected doc 43"));
            assert!(dec(&buf[..20], 42, 3).unwrap_err().0.contains("truncated"));
            let mut flipped = buf.clone();
            flipped[RECORD_HEADER + 1] ^= 0x10;
            assert!(dec(&flipped, 42, 3).unwrap_err().0.contains("checksum"));
            let mut magic = buf.clone();
            magic[0] = b'X';
            assert!(dec(&magic, 42, 3).unwrap_err().0.contains("magic"));
        }
        // A version-2 record read as version 1 (or the reverse) fails; it is never misread.
        let mut v2 = Vec::new();
        encode_shingle_record(2, 42, &[1, 5, 9], &mut v2);
        assert!(decode_shingle_record(1, &v2, 42, 3).is_err());
    }
}
