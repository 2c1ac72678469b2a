//! A real browser for the dashboard tests: headless Chromium driven through chromedriver
//! (Debian's `chromium` and `chromium-driver`; `scripts/browser` installs them). A missing
//! browser fails the test with what to install: a dashboard test never skips.

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where the browser and its driver are looked for (`CHROMIUM`, `CHROMEDRIVER` override).
fn binary(var: &str, default: &str) -> PathBuf {
    let path = PathBuf::from(std::env::var(var).unwrap_or_else(|_| default.to_owned()));
    assert!(
        path.exists(),
        "{} not found: install Debian's chromium and chromium-driver (./scripts/browser), or set {var}",
        path.display()
    );
    path
}

/// How long a page may take to show what a test waits for (a deadline, not a measurement).
const WAIT: Duration = Duration::from_secs(30);

pub struct Browser {
    pub client: Client,
    driver: std::process::Child,
    profile: PathBuf,
}

impl Browser {
    /// A fresh browser (own profile, no cookies) of `width` x `height` CSS pixels.
    pub async fn start_sized(width: u32, height: u32) -> Self {
        let chromium = binary("CHROMIUM", "/usr/bin/chromium");
        let chromedriver = binary("CHROMEDRIVER", "/usr/bin/chromedriver");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let profile =
            std::env::temp_dir().join(format!("browser-{}", uuid::Uuid::new_v4().simple()));
        use std::os::unix::process::CommandExt as _;
        let driver = std::process::Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // Its own process group, so the browser it starts goes down with it.
            .process_group(0)
            .spawn()
            .expect("chromedriver starts");
        let deadline = Instant::now() + WAIT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".to_owned(),
            serde_json::json!({
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--no-first-run", "--disable-extensions", "--hide-scrollbars",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.display()),
                ],
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a browser session starts");
        Self {
            client,
            driver,
            profile,
        }
    }

    pub async fn start() -> Self {
        Self::start_sized(1280, 1000).await
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.expect("page loads");
    }

    pub async fn find(&self, css: &str) -> Element {
        match self
            .client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(css))
            .await
        {
            Ok(e) => e,
            Err(e) => panic!("{css} not found: {e}; page: {}", self.body_text_now().await),
        }
    }

    pub async fn fill(&self, css: &str, value: &str) {
        let e = self.find(css).await;
        e.clear().await.expect("field clears");
        e.send_keys(value).await.expect("typing works");
    }

    pub async fn select(&self, css: &str, value: &str) {
        self.find(css)
            .await
            .select_by_value(value)
            .await
            .expect("option is chosen");
    }

    pub async fn click(&self, css: &str) {
        self.find(css).await.click().await.expect("click works");
    }

    /// The visible text of an element, table cells separated by one space.
    pub async fn text(&self, css: &str) -> String {
        let text = self.find(css).await.text().await.expect("text reads");
        text.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    }

    async fn body_text_now(&self) -> String {
        match self.client.find(Locator::Css("body")).await {
            Ok(b) => b.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Waits until the page (its visible text) contains `needle`; the text.
    pub async fn wait_text(&self, needle: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let text = self.body_text_now().await;
            if text.contains(needle) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {needle:?}; page: {text}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the current address's path is `path`.
    pub async fn wait_path(&self, path: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let url = self.client.current_url().await.expect("url");
            if url.path() == path {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {path}; at {url}; page: {}",
                self.body_text_now().await
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn path(&self) -> String {
        self.client
            .current_url()
            .await
            .expect("url")
            .path()
            .to_owned()
    }

    /// Runs a script in the page; its result.
    pub async fn script(&self, js: &str) -> serde_json::Value {
        self.client.execute(js, vec![]).await.expect("script runs")
    }

    pub async fn screenshot(&self, path: &std::path::Path) {
        let png = self.client.screenshot().await.expect("screenshot");
        std::fs::write(path, png).expect("screenshot is written");
    }

    /// Logs in through the login page.
    pub async fn login(&self, base: &str, email: &str, password: &str) {
        self.goto(&format!("{base}/login")).await;
        self.fill("input[name=email]", email).await;
        self.fill("input[name=password]", password).await;
        self.click("form[action='/login'] button[type=submit]")
            .await;
    }

    /// Closes the browser session.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let pgid = self.driver.id();
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .status();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
