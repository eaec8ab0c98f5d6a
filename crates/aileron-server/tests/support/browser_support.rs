//! Headless Chromium for the dashboard tests: Debian's `chromedriver` on a
//! free loopback port, a fresh profile, and small waiting helpers.
//!
//! Without `/usr/bin/chromedriver` the tests fail when `CI` is set (CI
//! installs it: see `.ci/run`) and are skipped with a notice otherwise.
//! `AILERON_CHROMEDRIVER` and `AILERON_CHROMIUM` name other binaries.

#![allow(dead_code)]

use serde_json::Value;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use thirtyfour::prelude::*;

pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub const CHROMIUM: &str = "/usr/bin/chromium";

fn chromedriver() -> String {
    std::env::var("AILERON_CHROMEDRIVER").unwrap_or_else(|_| CHROMEDRIVER.to_owned())
}

fn chromium() -> String {
    std::env::var("AILERON_CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_owned())
}

/// How long a step may take before the test fails.
pub const STEP: Duration = Duration::from_secs(15);

/// Whether the browser is here; panics under CI when it is not.
pub fn browser_available() -> bool {
    let missing: Vec<String> = [chromedriver(), chromium()]
        .into_iter()
        .filter(|p| !Path::new(p).exists())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!(
        "{} not found: the dashboard tests need Debian's chromium and chromium-driver \
         (apt-get install -y chromium chromium-driver; .ci/run installs them)",
        missing.join(" and ")
    );
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    false
}

/// A running chromedriver and the browser session it drives. Dropping it
/// (a failed test) kills chromedriver's process group, which holds the
/// browser's processes too, so nothing outlives the test.
pub struct Browser {
    pub driver: Option<WebDriver>,
    chromedriver: Child,
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Browser {
    pub fn driver(&self) -> &WebDriver {
        self.driver.as_ref().expect("the browser is running")
    }

    /// Ends the session and chromedriver.
    pub async fn quit(mut self) {
        if let Some(d) = self.driver.take() {
            let _ = d.quit().await;
        }
        self.kill_group();
    }

    fn kill_group(&mut self) {
        if let Ok(Some(_)) = self.chromedriver.try_wait() {
            // Reaped: its id may be reused, and the browser ended with its session.
            return;
        }
        // chromedriver leads its own process group (see `start_browser`).
        let group = -(self.chromedriver.id() as i32);
        // SAFETY: kill(2) with a negative pid signals that process group only.
        unsafe {
            libc::kill(group, libc::SIGKILL);
        }
        let _ = self.chromedriver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.kill_group();
    }
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Starts chromedriver and a headless Chromium with a fresh profile.
pub async fn start_browser(width: u32, height: u32) -> Browser {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("chromedriver.log");
    let port = free_port();
    let chromedriver = Command::new(chromedriver())
        .arg(format!("--port={port}"))
        .arg(format!("--log-path={}", log.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("chromedriver starts");
    let mut browser = Browser {
        driver: None,
        chromedriver,
        log,
        _dir: dir,
    };
    let deadline = Instant::now() + STEP;
    while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
        if let Ok(Some(status)) = browser.chromedriver.try_wait() {
            panic!("chromedriver exited at start: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "chromedriver did not listen on {port}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let profile = browser._dir.path().join("profile");
    let mut caps = DesiredCapabilities::chrome();
    caps.set_binary(&chromium()).expect("binary");
    for arg in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        &format!("--window-size={width},{height}"),
        &format!("--user-data-dir={}", profile.display()),
    ] {
        caps.add_arg(arg).expect("arg");
    }
    let driver = WebDriver::new(format!("http://127.0.0.1:{port}"), caps)
        .await
        .unwrap_or_else(|e| {
            let log = std::fs::read_to_string(&browser.log).unwrap_or_default();
            let tail: String = log
                .lines()
                .rev()
                .take(30)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            panic!("cannot start Chromium through chromedriver: {e}\n{tail}")
        });
    browser.driver = Some(driver);
    browser
}

/// A CSS selector for a `data-testid`.
pub fn tid(id: &str) -> By {
    By::Css(format!("[data-testid=\"{id}\"]"))
}

/// Runs `script` (a function body, `return ...`) until it returns something
/// truthy, and returns that. Panics after [`STEP`] with `what` and the last value.
pub async fn wait_js(driver: &WebDriver, what: &str, script: &str, args: Vec<Value>) -> Value {
    let deadline = Instant::now() + STEP;
    loop {
        let last = match driver.execute(script, args.clone()).await {
            Ok(ret) => {
                let v = ret.json().clone();
                let truthy = match &v {
                    Value::Null => false,
                    Value::Bool(b) => *b,
                    Value::Number(n) => n.as_f64() != Some(0.0),
                    Value::String(s) => !s.is_empty(),
                    _ => true,
                };
                if truthy {
                    return v;
                }
                v
            }
            Err(e) => Value::String(format!("error: {e}")),
        };
        if Instant::now() >= deadline {
            let page = driver
                .execute("return document.body.innerText", vec![])
                .await
                .map(|r| r.json().clone())
                .unwrap_or(Value::Null);
            panic!(
                "timed out waiting for {what} (last value: {last})\n--- page text ---\n{}",
                page.as_str().unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

/// Waits for an element with this `data-testid` to be displayed.
pub async fn wait_shown(driver: &WebDriver, testid: &str) -> WebElement {
    let q = format!(
        "const e = document.querySelector('[data-testid=\"{testid}\"]'); \
         return !!e && e.offsetParent !== null;"
    );
    wait_js(driver, &format!("{testid} to show"), &q, vec![]).await;
    driver.find(tid(testid)).await.expect("shown element")
}

/// Waits until the element's text contains `needle`; returns the text.
pub async fn wait_text(driver: &WebDriver, testid: &str, needle: &str) -> String {
    let q = "const e = document.querySelector(`[data-testid=\"${arguments[0]}\"]`); \
             const t = e ? e.innerText : ''; \
             return t.includes(arguments[1]) ? t : null;";
    let v = wait_js(
        driver,
        &format!("{testid} to contain {needle:?}"),
        q,
        vec![Value::from(testid), Value::from(needle)],
    )
    .await;
    v.as_str().unwrap_or_default().to_owned()
}

/// Sets a form field's value as a person typing would end up with it
/// (replacing what is there) and fires `input`.
pub async fn fill(driver: &WebDriver, testid: &str, text: &str) {
    let el = driver.find(tid(testid)).await.expect("field");
    el.clear().await.expect("clear");
    el.send_keys(text).await.expect("type");
}

/// A screenshot of the whole page from its top (the window grows to the
/// page's height, at least `min_height`), written to `path`.
pub async fn screenshot_page(driver: &WebDriver, width: u32, min_height: u32, path: &Path) {
    let before = driver.get_window_rect().await.ok();
    let measure = "window.scrollTo(0, 0); \
                   const h = Math.max(document.documentElement.scrollHeight, document.body.scrollHeight); \
                   return [Math.ceil(h), window.outerHeight - window.innerHeight];";
    let mut height = min_height;
    for _ in 0..3 {
        let _ = driver.set_window_rect(0, 0, width, height).await;
        let v = driver
            .execute(measure, vec![])
            .await
            .map(|r| r.json().clone())
            .unwrap_or(Value::Null);
        let page = v[0].as_u64().unwrap_or(0) as u32;
        let chrome = v[1].as_u64().unwrap_or(0) as u32;
        let want = (page + chrome).clamp(min_height, 4000);
        if want == height {
            break;
        }
        height = want;
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("screenshot dir");
    }
    driver.screenshot(path).await.expect("screenshot");
    if let Some(r) = before {
        let _ = driver
            .set_window_rect(r.x, r.y, r.width as u32, r.height as u32)
            .await;
    }
}

/// Accepts the page's `confirm()` dialog once it is open.
pub async fn accept_confirm(driver: &WebDriver) {
    let deadline = Instant::now() + STEP;
    loop {
        match driver.accept_alert().await {
            Ok(()) => return,
            Err(e) if Instant::now() >= deadline => panic!("no confirm dialog: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(40)).await,
        }
    }
}

/// `POST /api/evaluate` as an agent's adapter would; an ask waits here.
pub async fn evaluate(http: reqwest::Client, url: String, token: String, action: Value) -> Value {
    let res = http
        .post(format!("{url}/api/evaluate"))
        .bearer_auth(token)
        .json(&action)
        .send()
        .await
        .expect("evaluate");
    assert!(res.status().is_success(), "evaluate: {}", res.status());
    res.json().await.expect("JSON verdict")
}
