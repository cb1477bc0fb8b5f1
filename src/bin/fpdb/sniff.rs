//! What an input's first bytes say it is, before it is read as text.
//!
//! - gzip (`1f 8b`, e.g. `papers.jsonl.gz`, a crawler's usual dump) is decompressed on the fly,
//!   every member of a multi-member file included;
//! - a UTF-8 byte-order mark (`ef bb bf`, written by Windows tools) at the very start is dropped, so
//!   the first JSONL line parses;
//! - formats fpdb does not read (UTF-16 or UTF-32 text, zstd, xz, bzip2, zip and the Office/EPUB
//!   documents inside zip, OLE2 Office files, PDF, PNG and JPEG images) are refused with one error
//!   that names the format and a command that converts it. Read line by line they would each give
//!   one rejection per "line" of binary, and nothing stored.
//!
//! Anything else is read as it is: invalid UTF-8 is still reported where it is (by line or file).

use std::io::{self, Cursor, Read};
use std::path::PathBuf;

use fpdb::Error;

/// What the first bytes of an input say.
#[derive(Debug, PartialEq)]
enum Kind {
    /// Text: read as it is, after `skip` bytes (a UTF-8 byte-order mark).
    Text { skip: usize },
    /// gzip: decompressed, then looked at again.
    Gzip,
    /// A format fpdb does not read: what it is, and a command that converts it to UTF-8 text.
    Refused { what: &'static str, fix: &'static str },
}

/// Bytes looked at: the longest signature below (bzip2's, with its block magic).
const HEAD: usize = 10;

/// Signatures of the formats refused, in the order tried (UTF-32 LE before UTF-16 LE, whose mark
/// is its prefix). Each starts with a byte sequence that is not valid UTF-8 or that no JSONL line
/// and hardly any text starts with; bzip2 is matched with its block magic for that reason.
const REFUSED: &[(&[u8], &str, &str)] = &[
    (b"\xFF\xFE\x00\x00", "UTF-32 text", "iconv -f UTF-32 -t UTF-8 FILE"),
    (b"\x00\x00\xFE\xFF", "UTF-32 text", "iconv -f UTF-32 -t UTF-8 FILE"),
    (b"\xFF\xFE", "UTF-16 text", "iconv -f UTF-16 -t UTF-8 FILE"),
    (b"\xFE\xFF", "UTF-16 text", "iconv -f UTF-16 -t UTF-8 FILE"),
    (b"\x28\xB5\x2F\xFD", "zstd-compressed data", "zstd -dc FILE"),
    (b"\xFD7zXZ\x00", "xz-compressed data", "xz -dc FILE"),
    (
        b"PK\x03\x04",
        "a zip archive (.zip, or an Office or EPUB document)",
        "pandoc -t plain FILE",
    ),
    (
        b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1",
        "an OLE2 file (.doc, .xls, .ppt)",
        "catdoc FILE",
    ),
    (b"%PDF-", "a PDF file", "pdftotext FILE -"),
    (b"\x89PNG\r\n\x1A\n", "a PNG image (its text needs OCR)", "tesseract FILE -"),
    (b"\xFF\xD8\xFF", "a JPEG image (its text needs OCR)", "tesseract FILE -"),
];

fn sniff(head: &[u8]) -> Kind {
    if head.starts_with(b"\x1F\x8B") {
        return Kind::Gzip;
    }
    if let Some(&(_, what, fix)) = REFUSED.iter().find(|(sig, _, _)| head.starts_with(sig)) {
        return Kind::Refused { what, fix };
    }
    let bzip2 = head.len() >= HEAD && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) && &head[4..HEAD] == b"1AY&SY";
    if bzip2 {
        return Kind::Refused {
            what: "bzip2-compressed data",
            fix: "bzip2 -dc FILE",
        };
    }
    Kind::Text {
        skip: if head.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 },
    }
}

/// Up to [`HEAD`] bytes of `r` (fewer only where the input ends).
fn head(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HEAD);
    r.by_ref().take(HEAD as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// The input `r` (named `origin` in errors) as a stream of text bytes: decompressed when it is
/// gzip, without a leading UTF-8 byte-order mark. Refused (`Error::InvalidInput`, naming the format
/// and how to convert it) when it is one of the formats fpdb does not read; an error reading its
/// first bytes is `Error::Io`.
pub fn text_stream(r: impl Read + Send + 'static, origin: &str) -> Result<Box<dyn Read + Send>, Error> {
    open(Box::new(r), origin, false)
}

fn open(mut r: Box<dyn Read + Send>, origin: &str, in_gzip: bool) -> Result<Box<dyn Read + Send>, Error> {
    let head = head(&mut r).map_err(|e| Error::Io {
        op: if in_gzip { "decompress input (gzip)" } else { "read input" },
        path: PathBuf::from(origin),
        source: e,
    })?;
    let refused = |what: &str, fix: &str| Error::InvalidInput {
        key: None,
        message: format!(
            "{origin}: {}{what}; fpdb reads UTF-8 text, plain or gzip-compressed: convert it first, \
             e.g. `{fix}`",
            if in_gzip { "gzip-compressed " } else { "" }
        ),
    };
    match sniff(&head) {
        Kind::Text { skip } => {
            let mut head = Cursor::new(head);
            head.set_position(skip as u64);
            Ok(Box::new(head.chain(r)))
        }
        Kind::Gzip if in_gzip => Err(refused("gzip inside gzip", "gzip -dc FILE | gzip -dc")),
        Kind::Gzip => open(
            Box::new(flate2::read::MultiGzDecoder::new(Cursor::new(head).chain(r))),
            origin,
            true,
        ),
        Kind::Refused { what, fix } => Err(refused(what, fix)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(bytes: Vec<u8>) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        text_stream(Cursor::new(bytes), "input")?
            .read_to_end(&mut out)
            .map_err(|e| Error::Io {
                op: "read",
                path: "input".into(),
                source: e,
            })?;
        Ok(out)
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn refusal(bytes: Vec<u8>) -> String {
        match read_all(bytes) {
            Err(Error::InvalidInput { message, .. }) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn text_passes_unchanged_and_a_utf8_bom_is_dropped() {
        for text in [&b""[..], b"{", b"{\"key\": 1}\n", b"BZh91AY&S", b"plain text, longer than the head"] {
            assert_eq!(read_all(text.to_vec()).unwrap(), text);
            let mut bom = b"\xEF\xBB\xBF".to_vec();
            bom.extend_from_slice(text);
            assert_eq!(read_all(bom).unwrap(), text);
        }
        // Only a mark at the very start is dropped.
        assert_eq!(read_all(b"a\xEF\xBB\xBF".to_vec()).unwrap(), b"a\xEF\xBB\xBF");
    }

    #[test]
    fn gzip_is_decompressed_member_by_member_and_its_bom_dropped() {
        let text = b"{\"key\": \"a\", \"text\": \"one two three\"}\n".repeat(1000);
        assert_eq!(read_all(gzip(&text)).unwrap(), text);
        let mut two = gzip(b"\xEF\xBB\xBFfirst member\n");
        two.extend(gzip(b"second member\n"));
        assert_eq!(read_all(two).unwrap(), b"first member\nsecond member\n");
        assert_eq!(read_all(gzip(b"")).unwrap(), b"");
    }

    #[test]
    fn unreadable_formats_are_refused_with_the_command_that_converts_them() {
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("{\"key\":1}".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let m = refusal(utf16);
        assert!(
            m.starts_with("input: UTF-16 text;") && m.contains("iconv -f UTF-16 -t UTF-8"),
            "{m}"
        );
        let m = refusal(b"\xFF\xFE\x00\x00{\x00\x00\x00".to_vec());
        assert!(m.contains("UTF-32 text"), "{m}");
        for (bytes, what, fix) in [
            (&b"\x28\xB5\x2F\xFD\x00\x00"[..], "zstd-compressed data", "zstd -dc FILE"),
            (b"\xFD7zXZ\x00\x00", "xz-compressed data", "xz -dc FILE"),
            (b"BZh91AY&SY\x00", "bzip2-compressed data", "bzip2 -dc FILE"),
            (b"PK\x03\x04\x14\x00", "a zip archive", "pandoc -t plain FILE"),
            (b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\x00", "an OLE2 file", "catdoc FILE"),
            (b"%PDF-1.7\n", "a PDF file", "pdftotext FILE -"),
            (b"\x89PNG\r\n\x1A\n\x00", "a PNG image", "tesseract FILE -"),
            (b"\xFF\xD8\xFF\xE0", "a JPEG image", "tesseract FILE -"),
        ] {
            let m = refusal(bytes.to_vec());
            assert!(m.contains(what) && m.contains(fix), "{m}");
            let m = refusal(gzip(bytes));
            assert!(m.contains(&format!("gzip-compressed {what}")), "{m}");
        }
        let m = refusal(gzip(&gzip(b"text")));
        assert!(m.contains("gzip inside gzip"), "{m}");
    }

    #[test]
    fn a_truncated_gzip_stream_is_a_read_error() {
        let text = b"some text that compresses\n".repeat(10_000);
        let mut gz = gzip(&text);
        gz.truncate(gz.len() / 2);
        let mut out = Vec::new();
        let err = text_stream(Cursor::new(gz), "input").unwrap().read_to_end(&mut out);
        assert!(err.is_err(), "read {} bytes without an error", out.len());
        assert!(out.len() < text.len());
    }
}
