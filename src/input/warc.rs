//! A WARC reader (ISO 28500, WARC/1.0 and 1.1), self-contained: the records of a decompressed
//! stream and the text of the two kinds that hold a document, with no dependency beyond the standard library.
//!
//! A record is a version line (`WARC/1.0`), named fields up to an empty line, a block of exactly
//! `Content-Length` bytes, and two CRLFs. A `.warc.gz` is one gzip member per record: the caller
//! decompresses the members in a row (a multi-member gzip reader) and hands this module the bytes.
//!
//! The document of a record ([`Record::document`]):
//! - `response` (a crawler's WARC): the HTTP payload after the response head; an HTML payload is
//!   reduced to its text ([`html_text`]), a `text/plain` one is taken as it is, any other media type
//!   (images, PDF, ...) has no document;
//! - `conversion` (a WET file): the block, the page's extracted text;
//! - every other type (`warcinfo`, `request`, `metadata`, `revisit`, ...) has no document.
//!
//! A payload is decoded by its HTTP `charset` when that is ISO-8859-1 or windows-1252 (each byte
//! one character, the C1 range as windows-1252's punctuation is not mapped); otherwise it must be
//! UTF-8.

use std::fmt;
use std::io::{self, BufRead, Read};

/// Why a WARC stream cannot be read further, or one record's document not made.
#[derive(Debug)]
#[non_exhaustive]
pub enum WarcError {
    /// Reading the stream failed.
    Io(io::Error),
    /// The stream is not WARC where a record should start or continue: `offset` is the byte of the
    /// decompressed stream where the problem is. The rest of the stream cannot be read (the next
    /// record's start is unknown).
    Malformed { offset: u64, message: String },
    /// A record's block is longer than the reader holds; it was skipped.
    TooLarge { offset: u64, length: u64, max: u64 },
    /// A record's payload is not valid UTF-8 (nor in a charset this reader decodes).
    NotText { offset: u64, at: usize },
}

impl fmt::Display for WarcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarcError::Io(e) => write!(f, "cannot read the WARC stream: {e}"),
            WarcError::Malformed { offset, message } => {
                write!(f, "not a WARC record at byte {offset} of the decompressed stream: {message}")
            }
            WarcError::TooLarge { offset, length, max } => write!(
                f,
                "the record at byte {offset} has a {length}-byte block, over the {max} bytes read per record; it was skipped"
            ),
            WarcError::NotText { offset, at } => write!(
                f,
                "the record at byte {offset}: its payload is not UTF-8 (invalid at byte {at} of the payload) and names no \
                 charset read here (ISO-8859-1, windows-1252)"
            ),
        }
    }
}

impl std::error::Error for WarcError {}

/// One WARC record: its named fields, in order, and its block.
#[derive(Debug, Clone)]
pub struct Record {
    /// Byte offset of the record's version line in the (decompressed) stream.
    pub offset: u64,
    /// The named fields as written (names compared without regard to case by [`Record::field`]).
    pub fields: Vec<(String, String)>,
    pub block: Vec<u8>,
}

impl Record {
    /// The value of field `name` (case-insensitive), the first if repeated.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `WARC-Type`, lower-cased (`response`, `conversion`, `warcinfo`, ...; `unknown` if absent).
    pub fn kind(&self) -> String {
        self.field("WARC-Type").unwrap_or("unknown").to_ascii_lowercase()
    }

    /// The text of the document this record holds: `Ok(None)` when it holds none (a record type
    /// other than `response` or `conversion`, or a response whose payload is not text); the reason
    /// is [`Record::skip_reason`].
    pub fn document(&self) -> Result<Option<String>, WarcError> {
        match self.kind().as_str() {
            "conversion" => decode(&self.block, None, self.offset).map(Some),
            "response" => {
                let Some((head, body)) = split_http(&self.block) else {
                    return Ok(None);
                };
                let ctype = header(head, "content-type").unwrap_or_default().to_ascii_lowercase();
                let media = ctype.split(';').next().unwrap_or("").trim();
                let charset = ctype
                    .split(';')
                    .filter_map(|p| p.trim().strip_prefix("charset="))
                    .map(|c| c.trim_matches('"').to_string())
                    .next();
                match media {
                    "text/html" | "application/xhtml+xml" | "" => {
                        decode(body, charset.as_deref(), self.offset).map(|t| Some(html_text(&t)))
                    }
                    "text/plain" => decode(body, charset.as_deref(), self.offset).map(Some),
                    _ => Ok(None),
                }
            }
            _ => Ok(None),
        }
    }

    /// Why [`Record::document`] is `None`: the record's type, or `response (MEDIA)` for a response
    /// that is not text.
    pub fn skip_reason(&self) -> String {
        let kind = self.kind();
        if kind != "response" {
            return kind;
        }
        let media = split_http(&self.block)
            .and_then(|(head, _)| header(head, "content-type"))
            .map(|c| c.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
            .unwrap_or_else(|| "no HTTP head".into());
        format!("response ({media})")
    }
}

/// The records of a decompressed WARC stream, in order. After a [`WarcError::Malformed`] or
/// [`WarcError::Io`] the iterator ends; after [`WarcError::TooLarge`] it goes on with the next
/// record.
pub struct Reader<R> {
    r: R,
    offset: u64,
    max_block: u64,
    done: bool,
}

impl<R: BufRead> Reader<R> {
    /// Reads records whose blocks are at most `max_block` bytes (longer ones are skipped without
    /// being held, [`WarcError::TooLarge`]).
    pub fn new(r: R, max_block: u64) -> Self {
        Reader {
            r,
            offset: 0,
            max_block,
            done: false,
        }
    }

    /// One line, its CRLF or LF removed; `None` at the end of the stream.
    fn line(&mut self) -> Result<Option<String>, WarcError> {
        let mut buf = Vec::new();
        let n = (&mut self.r).take(64 << 10).read_until(b'\n', &mut buf).map_err(WarcError::Io)?;
        if n == 0 {
            return Ok(None);
        }
        let at = self.offset;
        self.offset += n as u64;
        if buf.last() != Some(&b'\n') && n >= 64 << 10 {
            return Err(self.malformed(at, "a header line over 64 KiB"));
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        String::from_utf8(buf)
            .map(Some)
            .map_err(|_| self.malformed(at, "a header line that is not UTF-8"))
    }

    fn malformed(&mut self, offset: u64, message: &str) -> WarcError {
        self.done = true;
        WarcError::Malformed {
            offset,
            message: message.to_string(),
        }
    }

    fn record(&mut self) -> Result<Option<Record>, WarcError> {
        // Blank lines between records (a missing or doubled trailer) are tolerated.
        let (start, version) = loop {
            let start = self.offset;
            match self.line()? {
                None => return Ok(None),
                Some(l) if l.is_empty() => continue,
                Some(l) => break (start, l),
            }
        };
        if !version.starts_with("WARC/") {
            let shown: String = version.chars().take(40).collect();
            return Err(self.malformed(start, &format!("expected a version line `WARC/1.0`, found {shown:?}")));
        }
        let mut fields = Vec::new();
        loop {
            let at = self.offset;
            let Some(line) = self.line()? else {
                return Err(self.malformed(at, "the stream ends inside a record's fields"));
            };
            if line.is_empty() {
                break;
            }
            if line.starts_with([' ', '\t']) {
                // A continuation of the previous field's value.
                if let Some((_, v)) = fields.last_mut() {
                    let v: &mut String = v;
                    v.push(' ');
                    v.push_str(line.trim());
                    continue;
                }
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err(self.malformed(at, &format!("a field line without a colon: {line:?}")));
            };
            fields.push((name.trim().to_string(), value.trim().to_string()));
        }
        let length = fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
            .and_then(|(_, v)| v.parse::<u64>().ok());
        let Some(length) = length else {
            return Err(self.malformed(start, "no valid Content-Length field"));
        };
        if length > self.max_block {
            let skipped = io::copy(&mut (&mut self.r).take(length), &mut io::sink()).map_err(WarcError::Io)?;
            self.offset += skipped;
            if skipped < length {
                return Err(self.malformed(self.offset, "the stream ends inside a record's block"));
            }
            return Err(WarcError::TooLarge {
                offset: start,
                length,
                max: self.max_block,
            });
        }
        let mut block = Vec::with_capacity(length as usize);
        let read = (&mut self.r).take(length).read_to_end(&mut block).map_err(WarcError::Io)?;
        self.offset += read as u64;
        if (read as u64) < length {
            return Err(self.malformed(self.offset, "the stream ends inside a record's block"));
        }
        Ok(Some(Record {
            offset: start,
            fields,
            block,
        }))
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Record, WarcError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                if matches!(e, WarcError::Io(_)) {
                    self.done = true;
                }
                Some(Err(e))
            }
        }
    }
}

/// Whether a stream's first bytes are a WARC version line.
pub fn is_warc(head: &[u8]) -> bool {
    head.starts_with(b"WARC/1.")
}

/// An HTTP message's head and body (split at the first empty line).
fn split_http(block: &[u8]) -> Option<(&str, &[u8])> {
    if !block.starts_with(b"HTTP/") {
        return None;
    }
    let (end, skip) = match (find(block, b"\r\n\r\n"), find(block, b"\n\n")) {
        (Some(a), Some(b)) if b < a => (b, 2),
        (Some(a), _) => (a, 4),
        (None, Some(b)) => (b, 2),
        (None, None) => (block.len(), 0),
    };
    let head = std::str::from_utf8(&block[..end]).ok()?;
    Some((head, &block[(end + skip).min(block.len())..]))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The value of header `name` (lower case) in an HTTP head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Bytes to text: each byte one character for ISO-8859-1 and windows-1252, else UTF-8 or an error.
fn decode(bytes: &[u8], charset: Option<&str>, offset: u64) -> Result<String, WarcError> {
    let single_byte = charset.is_some_and(|c| {
        matches!(
            c.to_ascii_lowercase().as_str(),
            "iso-8859-1" | "latin1" | "latin-1" | "windows-1252" | "cp1252" | "us-ascii"
        )
    });
    if single_byte {
        return Ok(bytes.iter().map(|&b| char::from(b)).collect());
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8(bytes.to_vec()).map_err(|e| WarcError::NotText {
        offset,
        at: e.utf8_error().valid_up_to(),
    })
}

/// The text of an HTML page: tags dropped, `script`, `style`, `noscript` and comments with their
/// content, the common character references decoded, block elements and line breaks made line
/// breaks, runs of spaces made one. Enough to fingerprint a page; not a rendering.
pub fn html_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    let b = html.as_bytes();
    while i < b.len() {
        if b[i] == b'<' {
            if lower[i..].starts_with("<!--") {
                i = lower[i..].find("-->").map_or(b.len(), |e| i + e + 3);
                continue;
            }
            let name: String = lower[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '/')
                .collect();
            let end = lower[i..].find('>').map_or(b.len(), |e| i + e + 1);
            if matches!(name.as_str(), "script" | "style" | "noscript" | "template") {
                let close = format!("</{name}");
                i = lower[end..].find(&close).map_or(b.len(), |e| {
                    let c = end + e;
                    lower[c..].find('>').map_or(b.len(), |g| c + g + 1)
                });
                continue;
            }
            let bare = name.trim_start_matches('/');
            if matches!(
                bare,
                "p" | "br"
                    | "div"
                    | "li"
                    | "tr"
                    | "h1"
                    | "h2"
                    | "h3"
                    | "h4"
                    | "h5"
                    | "h6"
                    | "title"
                    | "section"
                    | "article"
                    | "blockquote"
                    | "pre"
                    | "table"
                    | "ul"
                    | "ol"
                    | "header"
                    | "footer"
            ) {
                out.push('\n');
            } else {
                out.push(' ');
            }
            i = end;
        } else if b[i] == b'&' {
            let semi = html[i..].char_indices().take(12).find(|&(_, c)| c == ';').map(|(j, _)| i + j);
            let decoded = semi.and_then(|s| entity(&html[i + 1..s]).map(|c| (c, s + 1)));
            match decoded {
                Some((c, next)) => {
                    out.push(c);
                    i = next;
                }
                None => {
                    out.push('&');
                    i += 1;
                }
            }
        } else {
            let c = html[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    collapse(&out)
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let n = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(n);
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "mdash" => '\u{2014}',
        "ndash" => '\u{2013}',
        "hellip" => '\u{2026}',
        "copy" => '\u{a9}',
        _ => return None,
    })
}

/// Runs of spaces made one, runs of blank lines one line break, lines trimmed.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&words.join(" "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    #[test]
    fn records_are_read_with_their_fields_and_blocks() {
        let mut s = record("warcinfo", "", b"software: test\r\n");
        s.extend(record(
            "response",
            "http://a.example/",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><title>T</title><script>x()</script><p>One &amp; two</p></html>",
        ));
        s.extend(record("conversion", "http://b.example/", "plain text \u{e9}".as_bytes()));
        s.extend(record(
            "response",
            "http://c.example/i.png",
            b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG",
        ));
        let recs: Vec<Record> = Reader::new(&s[..], 1 << 20).collect::<Result<_, _>>().unwrap();
        assert_eq!(recs.len(), 4);
        assert_eq!(recs[0].offset, 0);
        assert_eq!(recs[1].field("warc-target-uri"), Some("http://a.example/"));
        assert_eq!(recs[0].document().unwrap(), None);
        assert_eq!(recs[0].skip_reason(), "warcinfo");
        assert_eq!(recs[1].document().unwrap().as_deref(), Some("T\nOne & two"));
        assert_eq!(recs[2].document().unwrap().as_deref(), Some("plain text \u{e9}"));
        assert_eq!(recs[3].document().unwrap(), None);
        assert_eq!(recs[3].skip_reason(), "response (image/png)");
    }

    #[test]
    fn a_latin1_payload_is_decoded_by_its_charset_and_invalid_utf8_is_an_error() {
        let r = Record {
            offset: 7,
            fields: vec![("WARC-Type".into(), "response".into())],
            block: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=ISO-8859-1\r\n\r\ncaf\xe9".to_vec(),
        };
        assert_eq!(r.document().unwrap().as_deref(), Some("caf\u{e9}"));
        let r = Record {
            block: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\ncaf\xe9".to_vec(),
            ..r
        };
        assert!(matches!(r.document(), Err(WarcError::NotText { offset: 7, at: 3 })));
    }

    #[test]
    fn a_large_block_is_skipped_and_garbage_ends_the_stream() {
        let mut s = record("conversion", "u1", &[b'x'; 100]);
        s.extend(record("conversion", "u2", b"short"));
        s.extend_from_slice(b"not a record\r\n");
        s.extend(record("conversion", "u3", b"never read"));
        let items: Vec<_> = Reader::new(&s[..], 50).collect();
        assert_eq!(items.len(), 3);
        assert!(matches!(
            items[0],
            Err(WarcError::TooLarge {
                offset: 0,
                length: 100,
                max: 50
            })
        ));
        assert_eq!(items[1].as_ref().unwrap().field("WARC-Target-URI"), Some("u2"));
        let e = items[2].as_ref().unwrap_err().to_string();
        assert!(e.contains("expected a version line"), "{e}");
        // A truncated block.
        let mut t = record("conversion", "u", b"0123456789");
        t.truncate(t.len() - 8);
        let items: Vec<_> = Reader::new(&t[..], 50).collect();
        assert!(items[0].as_ref().unwrap_err().to_string().contains("ends inside a record's block"));
    }

    #[test]
    fn html_text_drops_markup_and_decodes_references() {
        assert_eq!(
            html_text("<!DOCTYPE html><head><style>p{}</style></head><body><!-- c --><h1>Title</h1>a&nbsp;b &#233;&#x41; &bogus; <b>bold</b><br>next</body>"),
            "Title\na b \u{e9}A &bogus; bold\nnext"
        );
    }
}
