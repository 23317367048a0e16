//! What several test files need: the binary under test, a spawned `turnout serve` that is
//! killed when dropped, and one plain HTTP/1.1 exchange over a fresh connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test (`TURNOUT_BIN` runs the black-box tests against another build).
pub fn bin() -> PathBuf {
    std::env::var_os("TURNOUT_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_turnout")),
        PathBuf::from,
    )
}

/// A copy of directory `from` (and its subfolders) at `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

/// The turnout under test as `turnout` in folder `dir/bin`, and a `PATH` that finds it first
/// (where a script runs `turnout` as an installed release would be run).
pub fn turnout_on_path(dir: &Path) -> (PathBuf, String) {
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).expect("mkdir");
    std::os::unix::fs::symlink(bin(), bin_dir.join("turnout")).expect("symlink");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (bin_dir, path)
}

/// Every request of the example corpus (`examples/corpus/requests.jsonl`), as JSON text.
pub fn corpus_requests() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/corpus/requests.jsonl");
    let corpus = std::fs::read_to_string(&path).expect("the example corpus");
    corpus
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("corpus line");
            v["request"].to_string()
        })
        .collect()
}

/// The first diagnostic of `loaded` with `code`; the test fails, listing them all, without one.
pub fn diagnostic<'a>(loaded: &'a turnout::compile::Loaded, code: &str) -> &'a turnout::Diagnostic {
    loaded
        .diagnostics
        .iter()
        .find(|d| d.code == code)
        .unwrap_or_else(|| panic!("no {code} among {:?}", loaded.diagnostics))
}

/// A child process killed (and reaped) when dropped.
pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `turnout serve` on a free loopback port with `rules` and `extra` arguments.
pub struct Served {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    _child: Kill,
}

impl Served {
    pub fn start(rules: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--rules"])
            .arg(rules)
            .args(extra)
            .env_remove("TURNOUT_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("turnout serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("first line");
        let addr = line
            .trim()
            .strip_prefix("turnout listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Self {
            addr,
            _child: Kill(child),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// One request; (status, body).
    pub fn http(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        http(
            &self.addr,
            method,
            path,
            &[("content-type", "application/json")],
            body.as_bytes(),
        )
    }

    /// One request whose answer is JSON; (status, JSON or null).
    pub fn json(
        &self,
        method: &str,
        path: &str,
        body: &serde_json::Value,
    ) -> (u16, serde_json::Value) {
        let (status, text) = self.http(method, path, &body.to_string());
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }
}

/// One HTTP/1.1 request on a fresh connection; (status, body).
pub fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("write");
    // The server may answer (413, 401, 415) and close before it has read the body: the
    // answer is what counts.
    let _ = s.write_all(body);
    let (status, _, body) = read_answer(&mut s);
    (status, body)
}

/// Reads an HTTP/1.1 answer to the end of the connection: (status, head, body); status 0 when
/// nothing came.
pub fn read_answer(s: &mut std::net::TcpStream) -> (u16, String, String) {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_owned(), body.to_owned())
}

/// Where pip puts the programs it installs (not on PATH everywhere).
fn python_scripts() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let out = Command::new("python3")
            .args([
                "-c",
                "import sysconfig; print(sysconfig.get_path('scripts'))",
            ])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let dir = String::from_utf8(out.stdout).ok()?;
        Some(PathBuf::from(dir.trim()))
    })
    .clone()
}

/// A program on PATH, in the sbin folders (where Debian puts nginx), or where pip installs.
pub fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .chain(python_scripts())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The outside tool `name`, which `.ci/run` installs (`install` says how). Missing, it fails
/// the test when `CI` is set (a test that cannot run must not pass there); elsewhere the part
/// of the test that needs it is skipped, loudly, and `None` returned.
pub fn tool_or_skip(name: &str, what: &str, install: &str) -> Option<PathBuf> {
    if let Some(p) = find(name) {
        return Some(p);
    }
    cannot_run(what, &format!("no {name} on PATH ({install})"));
    None
}

/// `what` cannot run, for `why`: under `CI` that fails the test (a test that could not run
/// must not pass there); elsewhere it is said loudly and the caller skips that part.
pub fn cannot_run(what: &str, why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set and {what} cannot run: {why}"
    );
    eprintln!("\n*** SKIPPED {what}: {why}. ***\n");
}

/// The repository's root: the shipped rules, examples and docs are read from here.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A port nobody listens on now (the OS picks it; the listener is closed at once).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Polls `check` every 20 ms until it gives a value; the test fails, saying `what`, when
/// `limit` passes first. What a test waits for, instead of sleeping a time that is too long on
/// an idle machine and too short on a busy one.
pub fn eventually<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            started.elapsed() < limit,
            "{what}: not seen within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`eventually`] for async tests: polls `check` every 20 ms without blocking the runtime.
pub async fn eventually_async<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            started.elapsed() < limit,
            "{what}: not seen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
