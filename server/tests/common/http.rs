//! A small blocking HTTP/1.1 client over `std::net::TcpStream`, for tests and tools that
//! talk to a real `server` process (no extra dependencies): keep-alive connections,
//! `Content-Length` and chunked bodies, JSON in and out, and the session cookie.
//! Included by path (`#[path = …] mod http;`) from tests and `examples/load.rs`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A reply: status, headers (names lowercased) and body text.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    /// The first header with this (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// One keep-alive connection to `addr` (`127.0.0.1:3000`). Reconnects once when the
/// server closed an idle connection.
pub struct Client {
    addr: String,
    conn: Option<BufReader<TcpStream>>,
    /// Sent as `Authorization: Bearer …` when set.
    pub bearer: Option<String>,
    /// Sent as `Cookie: …` when set.
    pub cookie: Option<String>,
    pub timeout: Duration,
}

impl Client {
    pub fn new(addr: &str) -> Client {
        Client {
            addr: addr.to_owned(),
            conn: None,
            bearer: None,
            cookie: None,
            timeout: Duration::from_secs(60),
        }
    }

    fn connect(&mut self) -> std::io::Result<&mut BufReader<TcpStream>> {
        if self.conn.is_none() {
            let s = TcpStream::connect(&self.addr)?;
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(self.timeout))?;
            s.set_write_timeout(Some(self.timeout))?;
            self.conn = Some(BufReader::new(s));
        }
        Ok(self.conn.as_mut().expect("connected above"))
    }

    /// Sends one request; `body` with its content type.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        body: Option<(&str, &str)>,
    ) -> std::io::Result<Response> {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n",
            self.addr
        );
        if let Some(t) = &self.bearer {
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        if let Some(c) = &self.cookie {
            head.push_str(&format!("Cookie: {c}\r\n"));
        }
        let (content_type, text) = body.unwrap_or(("", ""));
        if body.is_some() {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", text.len()));
        let mut request = head.into_bytes();
        request.extend_from_slice(text.as_bytes());
        // A kept-alive connection the server has closed fails on first use: retry once
        // on a fresh one (only then; a request that was read is never sent twice).
        let reused = self.conn.is_some();
        match self.exchange(&request) {
            Ok(r) => Ok(r),
            Err(_) if reused => {
                self.conn = None;
                self.exchange(&request)
            }
            Err(e) => Err(e),
        }
    }

    fn exchange(&mut self, request: &[u8]) -> std::io::Result<Response> {
        let result = (|| {
            let conn = self.connect()?;
            conn.get_mut().write_all(request)?;
            read_response(conn)
        })();
        match &result {
            Ok(r)
                if r.header("connection")
                    .is_some_and(|v| v.eq_ignore_ascii_case("close")) =>
            {
                self.conn = None
            }
            Ok(_) => {}
            Err(_) => self.conn = None,
        }
        result
    }

    /// `GET path`.
    pub fn get(&mut self, path: &str) -> std::io::Result<Response> {
        self.send("GET", path, None)
    }

    /// A JSON request.
    pub fn json(&mut self, method: &str, path: &str, body: &serde_json::Value) -> std::io::Result<Response> {
        self.send(method, path, Some(("application/json", &body.to_string())))
    }

    /// Signs in through the real form post (`POST /login`) and keeps the session
    /// cookie for the following requests. Returns the sign-in response (303 on success).
    pub fn login(&mut self, username: &str, password: &str) -> std::io::Result<Response> {
        let form = format!(
            "username={}&password={}",
            form_encode(username),
            form_encode(password)
        );
        let r = self.send(
            "POST",
            "/login",
            Some(("application/x-www-form-urlencoded", &form)),
        )?;
        if let Some(set) = r.header("set-cookie") {
            self.cookie = set.split(';').next().map(str::to_owned);
        }
        Ok(r)
    }
}

/// Reads one HTTP/1.1 response (Content-Length, chunked, or up to the close).
fn read_response(conn: &mut BufReader<TcpStream>) -> std::io::Result<Response> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_owned());
    let mut line = String::new();
    if conn.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed",
        ));
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("bad status line"))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        conn.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let get = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            line.clear();
            conn.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| bad("bad chunk size"))?;
            if size == 0 {
                // trailers, then the empty line
                loop {
                    line.clear();
                    conn.read_line(&mut line)?;
                    if line.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let mut chunk = vec![0; size + 2];
            conn.read_exact(&mut chunk)?;
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        conn.read_exact(&mut body)?;
    } else if status >= 200 && status != 204 && status != 304 {
        conn.read_to_end(&mut body)?;
    }
    Ok(Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// `application/x-www-form-urlencoded` encoding of one value.
pub fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A free port on the loopback address.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Waits until `GET /healthz` answers 200 on `addr`, or panics after `limit`.
pub fn wait_healthy(addr: &str, limit: Duration) {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Ok(r) = Client::new(addr).get("/healthz")
            && r.status == 200
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{addr} did not become healthy"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
