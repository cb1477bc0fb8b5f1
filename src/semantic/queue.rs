//! The value of a `semantic_queue` entry: what the indexer will embed, as the writer queued it
//! (docs/format.md, "Semantic vectors": the queue value). One encoder ([`encode`]), one decoder
//! ([`decode`]).
//!
//! | format | bytes |
//! |---|---|
//! | 0 (no format byte; written only for a text over [`MAX_TEXT`]) | the UTF-8 text itself (never starts with a byte ≥ 0xF5) |
//! | 1 | `0xF5` ([`FORMAT_LZ4`]), the text's length in bytes (u32 LE), the text as one LZ4 block |
//!
//! No UTF-8 text starts with a byte in 0xF5..=0xFF, so the first byte tells a format-1 value from
//! a format-0 one (both are read); 0xF6..=0xFF are reserved for other formats and refused.

/// The first byte of a format-1 value (LZ4 block): a byte no UTF-8 text starts with.
pub const FORMAT_LZ4: u8 = 0xF5;
/// The largest text a value may claim (a length above it is corruption, not an allocation).
pub const MAX_TEXT: usize = 64 << 20;

/// The queue value of `text`: format 1; a text over [`MAX_TEXT`] bytes (which format 1 does not
/// carry) as format 0. Compressed straight into the value (one allocation, no copy).
pub fn encode(text: &str) -> Vec<u8> {
    if text.len() > MAX_TEXT {
        return text.as_bytes().to_vec();
    }
    let mut out = vec![0u8; 5 + lz4_flex::block::get_maximum_output_size(text.len())];
    out[0] = FORMAT_LZ4;
    out[1..5].copy_from_slice(&(text.len() as u32).to_le_bytes());
    match lz4_flex::block::compress_into(text.as_bytes(), &mut out[5..]) {
        Ok(block) => out.truncate(5 + block),
        // not reached: the buffer holds the largest block LZ4 makes of this input
        Err(_) => {
            out.truncate(5);
            out.extend_from_slice(&lz4_flex::block::compress(text.as_bytes()));
        }
    }
    out
}

/// The text of a queue value of either format, or what is wrong with it (the caller names the
/// store and the document: `Error::Corruption`).
pub fn decode(value: &[u8]) -> std::result::Result<String, String> {
    let corrupt = |what: String| what;
    let bytes = match value.first() {
        Some(&FORMAT_LZ4) => {
            let len = value
                .get(1..5)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map(|b| u32::from_le_bytes(b) as usize)
                .ok_or_else(|| corrupt(format!("a queued text of {} bytes, shorter than its header", value.len())))?;
            if len > MAX_TEXT {
                return Err(corrupt(format!("a queued text claiming {len} bytes (at most {MAX_TEXT})")));
            }
            let text = lz4_flex::block::decompress(&value[5..], len)
                .map_err(|e| corrupt(format!("a queued text's LZ4 block does not decode: {e}")))?;
            if text.len() != len {
                return Err(corrupt(format!("a queued text of {} bytes, its header says {len}", text.len())));
            }
            text
        }
        Some(&b) if b > FORMAT_LZ4 => return Err(corrupt(format!("a queued text of format byte {b:#04x} (this build reads 0 and 1)"))),
        _ => value.to_vec(),
    };
    String::from_utf8(bytes).map_err(|e| corrupt(format!("a queued text is not UTF-8 (byte {})", e.utf8_error().valid_up_to())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_1_round_trips() {
        for t in ["", "a", "héllo wörld 日本 😀", &"the quick brown fox ".repeat(60)] {
            let v = encode(t);
            assert_eq!(v[0], FORMAT_LZ4);
            assert_eq!(decode(&v).unwrap(), t);
        }
        let huge = "x".repeat(MAX_TEXT + 1);
        let v = encode(&huge);
        assert_eq!(v.len(), huge.len(), "a text over MAX_TEXT is written as format 0");
        assert_eq!(decode(&v).unwrap(), huge);
        let long = "the quick brown fox jumps over the lazy dog ".repeat(30);
        assert!(encode(&long).len() < long.len() / 2, "repetitive text compresses");
    }

    #[test]
    fn format_0_is_still_read() {
        // format 0: the UTF-8 text itself, no format byte
        for t in ["a b c", "héllo", "\u{1F600} first"] {
            assert_eq!(decode(t.as_bytes()).unwrap(), t);
        }
    }

    #[test]
    fn damaged_values_are_errors_saying_what_is_wrong() {
        let v = encode("some text to embed, some text to embed");
        let err = |b: &[u8]| decode(b).unwrap_err();
        assert!(err(&v[..3]).contains("shorter than its header"), "{}", err(&v[..3]));
        assert!(err(&v[..v.len() - 2]).contains("does not decode"), "{}", err(&v[..v.len() - 2]));
        let mut long = v.clone();
        long[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(err(&long).contains("at most"));
        assert!(err(&[0xF6, 1, 2]).contains("format byte 0xf6"));
        assert!(err(&[0xC3, 0x28]).contains("not UTF-8"));
    }
}
