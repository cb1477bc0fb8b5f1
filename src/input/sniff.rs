//! What an input's first bytes say it is, before it is read as text.
//!
//! - gzip (`1f 8b`, e.g. `papers.jsonl.gz`, a crawler's usual dump) is decompressed on the fly,
//!   every member of a multi-member file included (a `.warc.gz` is one member per record);
//! - zstd (`28 b5 2f fd`, e.g. `crawl.jsonl.zst`) likewise, every frame of a multi-frame file
//!   included and skippable frames skipped (pure Rust, `ruzstd`);
//! - a UTF-8 byte-order mark (`ef bb bf`, written by Windows tools) at the very start is dropped, so
//!   the first JSONL line parses;
//! - formats fpdb does not read (UTF-16 or UTF-32 text, xz, bzip2, zip and the Office/EPUB
//!   documents inside zip, OLE2 Office files, PDF, PNG and JPEG images) are refused with one error
//!   that names the format and a command that converts it. Read line by line they would each give
//!   one rejection per "line" of binary, and nothing stored.
//!
//! Anything else is read as it is: invalid UTF-8 is still reported where it is (by line or file).

use std::io::{self, Cursor, Read};
use std::path::PathBuf;

use crate::Error;

/// What the first bytes of an input say.
#[derive(Debug, PartialEq)]
enum Kind {
    /// Text: read as it is, after `skip` bytes (a UTF-8 byte-order mark).
    Text { skip: usize },
    /// gzip: decompressed, then looked at again.
    Gzip,
    /// zstd: decompressed, then looked at again.
    Zstd,
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
    if head.starts_with(ZSTD_MAGIC) {
        return Kind::Zstd;
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
    open(Box::new(r), origin, None)
}

/// `within`: the compression the stream `r` was decompressed from (`gzip`, `zstd`), if any.
fn open(mut r: Box<dyn Read + Send>, origin: &str, within: Option<&'static str>) -> Result<Box<dyn Read + Send>, Error> {
    let head = head(&mut r).map_err(|e| Error::Io {
        op: match within {
            Some("gzip") => "decompress input (gzip)",
            Some(_) => "decompress input (zstd)",
            None => "read input",
        },
        path: PathBuf::from(origin),
        source: e,
    })?;
    let refused = |what: &str, fix: &str| Error::InvalidInput {
        key: None,
        message: format!(
            "{origin}: {}{what}; fpdb reads UTF-8 text, plain or gzip- or zstd-compressed: convert it first, \
             e.g. `{fix}`",
            within.map(|c| format!("{c}-compressed ")).unwrap_or_default()
        ),
    };
    match sniff(&head) {
        Kind::Text { skip } => {
            let mut head = Cursor::new(head);
            head.set_position(skip as u64);
            Ok(Box::new(head.chain(r)))
        }
        Kind::Gzip | Kind::Zstd if within.is_some() => Err(refused("data compressed twice", "gzip -dc FILE | gzip -dc (or zstd -dc)")),
        Kind::Gzip => open(
            Box::new(flate2::read::MultiGzDecoder::new(Cursor::new(head).chain(r))),
            origin,
            Some("gzip"),
        ),
        Kind::Zstd => open(Box::new(ZstdFrames::new(Cursor::new(head).chain(r))), origin, Some("zstd")),
        Kind::Refused { what, fix } => Err(refused(what, fix)),
    }
}

/// The magic number that starts a zstd frame (RFC 8878, 3.1.1).
const ZSTD_MAGIC: &[u8] = b"\x28\xB5\x2F\xFD";

/// Every frame of a zstd stream, decompressed in a row: `ruzstd`'s decoder reads one frame, and
/// `zstd -T0` or a concatenation (`cat a.zst b.zst`) writes several. Skippable frames are skipped.
struct ZstdFrames<R: Read> {
    src: Peek<R>,
    dec: ruzstd::decoding::FrameDecoder,
    /// A frame is being decoded (its header read).
    in_frame: bool,
    done: bool,
}

/// A reader that can look at its next byte without losing it.
struct Peek<R> {
    inner: R,
    peeked: Option<u8>,
}

impl<R: Read> Read for Peek<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if let Some(b) = self.peeked.take() {
            buf[0] = b;
            return Ok(1);
        }
        self.inner.read(buf)
    }
}

impl<R: Read> Peek<R> {
    /// Whether the stream has another byte.
    fn more(&mut self) -> io::Result<bool> {
        if self.peeked.is_some() {
            return Ok(true);
        }
        let mut b = [0u8];
        loop {
            match self.inner.read(&mut b) {
                Ok(0) => return Ok(false),
                Ok(_) => {
                    self.peeked = Some(b[0]);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl<R: Read> ZstdFrames<R> {
    fn new(r: R) -> Self {
        ZstdFrames {
            src: Peek { inner: r, peeked: None },
            dec: ruzstd::decoding::FrameDecoder::new(),
            in_frame: false,
            done: false,
        }
    }
}

impl<R: Read> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
        use ruzstd::decoding::BlockDecodingStrategy;
        loop {
            if self.done || buf.is_empty() {
                return Ok(0);
            }
            if !self.in_frame {
                if !self.src.more()? {
                    self.done = true;
                    return Ok(0);
                }
                match self.dec.reset(&mut self.src) {
                    Ok(()) => self.in_frame = true,
                    Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame { length, .. })) => {
                        let skipped = io::copy(&mut (&mut self.src).take(u64::from(length)), &mut io::sink())?;
                        if skipped < u64::from(length) {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "zstd: the stream ends inside a skippable frame",
                            ));
                        }
                    }
                    Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, format!("zstd: {e}"))),
                }
                continue;
            }
            if self.dec.can_collect() > 0 {
                return self.dec.read(buf);
            }
            if self.dec.is_finished() {
                self.in_frame = false;
                continue;
            }
            self.dec
                .decode_blocks(&mut self.src, BlockDecodingStrategy::UptoBlocks(1))
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("zstd: {e}")))?;
        }
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
            (&b"\xFD7zXZ\x00\x00"[..], "xz-compressed data", "xz -dc FILE"),
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
        assert!(m.contains("compressed twice"), "{m}");
        let m = refusal(zstd(&gzip(b"text")));
        assert!(m.starts_with("input: zstd-compressed data compressed twice"), "{m}");
    }

    fn zstd(bytes: &[u8]) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
    }

    #[test]
    fn zstd_is_decompressed_frame_by_frame_skippable_frames_skipped() {
        let text = b"{\"key\": \"a\", \"text\": \"one two three\"}\n".repeat(1000);
        assert_eq!(read_all(zstd(&text)).unwrap(), text);
        let mut two = zstd(b"\xEF\xBB\xBFfirst frame\n");
        // A skippable frame (magic 0x184D2A50..5F, little-endian length, payload) between two.
        two.extend_from_slice(&[0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 1, 2, 3]);
        two.extend(zstd(b"second frame\n"));
        assert_eq!(read_all(two).unwrap(), b"first frame\nsecond frame\n");
        let mut cut = zstd(&text);
        cut.truncate(cut.len() / 2);
        let mut out = Vec::new();
        // The first block is read when the stream is opened: a cut there fails the open.
        let failed = match text_stream(Cursor::new(cut), "input") {
            Err(_) => true,
            Ok(mut r) => r.read_to_end(&mut out).is_err(),
        };
        assert!(failed, "a truncated zstd stream is an error");
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
