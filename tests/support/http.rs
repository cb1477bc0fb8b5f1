//! A minimal blocking HTTP/1.1 client over `std::net::TcpStream` (keep-alive, Content-Length and
//! chunked bodies): enough for the `fpdb serve` tests and the load generator, without a dependency.
#![allow(dead_code)]

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One keep-alive connection.
pub struct Conn {
    addr: SocketAddr,
    r: BufReader<TcpStream>,
}

impl Conn {
    pub fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let s = TcpStream::connect(addr)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(120)))?;
        Ok(Conn {
            addr,
            r: BufReader::new(s),
        })
    }

    /// Sends the request head and body, without reading the answer.
    pub fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<()> {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let s = self.r.get_mut();
        let mut msg = head.into_bytes();
        msg.extend_from_slice(body);
        s.write_all(&msg)
    }

    /// True when an answer has started to arrive within `wait` (nothing is consumed).
    pub fn answered_within(&mut self, wait: Duration) -> io::Result<bool> {
        self.r.get_ref().set_read_timeout(Some(wait))?;
        let got = match self.r.fill_buf() {
            Ok(b) => !b.is_empty(),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => false,
            Err(e) => return Err(e),
        };
        self.r.get_ref().set_read_timeout(Some(Duration::from_secs(120)))?;
        Ok(got)
    }

    /// Writes raw bytes (e.g. the rest of a body sent in parts).
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.r.get_mut().write_all(bytes)
    }

    /// Reads the status line and headers of the next answer.
    pub fn read_head(&mut self) -> io::Result<(u16, Vec<(String, String)>)> {
        let mut line = String::new();
        if self.r.read_line(&mut line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed before the answer"));
        }
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("bad status line {line:?}")))?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.r.read_line(&mut line)?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        Ok((status, headers))
    }

    /// Reads one chunk of a chunked body (`None` at the end).
    pub fn read_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut line = String::new();
        self.r.read_line(&mut line)?;
        let n = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("bad chunk size {line:?}")))?;
        let mut buf = vec![0; n];
        self.r.read_exact(&mut buf)?;
        line.clear();
        self.r.read_line(&mut line)?;
        Ok((n > 0).then_some(buf))
    }

    /// Reads a whole answer.
    pub fn read_response(&mut self) -> io::Result<Resp> {
        let (status, headers) = self.read_head()?;
        let get = |n: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(n)).map(|(_, v)| v.clone());
        let mut body = Vec::new();
        if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
            while let Some(c) = self.read_chunk()? {
                body.extend(c);
            }
        } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
            body.resize(n, 0);
            self.r.read_exact(&mut body)?;
        } else {
            self.r.read_to_end(&mut body)?;
        }
        Ok(Resp { status, headers, body })
    }

    pub fn request(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Resp> {
        self.send(method, path, headers, body)?;
        self.read_response()
    }
}

/// One request on a fresh connection.
pub fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Resp> {
    Conn::connect(addr)?.request(method, path, headers, body)
}

/// Percent-encodes a key as one path segment (everything but unreserved characters).
pub fn encode_segment(key: &str) -> String {
    let mut out = String::new();
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
