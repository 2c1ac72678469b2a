//! Servers and processes of a test's own, for the tests and the soak run that restart or kill
//! them: a private PostgreSQL cluster (initdb into a temporary directory, on a free loopback
//! port) and the real `api` and `worker` binaries as child processes with a given environment.
//!
//! PostgreSQL's programs refuse to run as root: as root, the cluster's directory belongs to the
//! `postgres` user and `initdb` and `pg_ctl` run through `runuser -u postgres`.

use anyhow::Context as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port (free when asked; the caller binds it soon after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The directory of `initdb` and `pg_ctl`: the newest /usr/lib/postgresql/N/bin (Debian and
/// Ubuntu), else whatever `PATH` finds.
fn pg_bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("pg_ctl").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A PostgreSQL cluster of its own: `postgres` superuser, trust auth, on 127.0.0.1 and a free
/// port, its socket in its own directory. Stopped (immediately) and deleted when dropped.
pub struct PrivatePostgres {
    pub port: u16,
    dir: PathBuf,
    bin: Option<PathBuf>,
    as_postgres: bool,
}

impl PrivatePostgres {
    /// Creates and starts the cluster.
    pub fn start() -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("pg-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir)?;
        let as_postgres = is_root();
        let me = Self {
            port: free_port(),
            dir,
            bin: pg_bin_dir(),
            as_postgres,
        };
        if as_postgres {
            let status = Command::new("chown")
                .args(["postgres:postgres", me.dir.to_str().context("temp path")?])
                .status()?;
            anyhow::ensure!(status.success(), "chown of the cluster directory failed");
        }
        let data = me.data_dir();
        me.run(
            "initdb",
            &[
                "-D",
                path_str(&data)?,
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        me.pg_ctl_start()?;
        Ok(me)
    }

    /// `postgres://postgres@127.0.0.1:PORT` (add `/dbname`).
    pub fn server_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}", self.port)
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn log_file(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// The server's log so far (for a failure message).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log_file()).unwrap_or_default()
    }

    fn run(&self, program: &str, args: &[&str]) -> anyhow::Result<()> {
        let program = match &self.bin {
            Some(bin) => bin.join(program),
            None => PathBuf::from(program),
        };
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let out = cmd
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("{} could not be run", program.display()))?;
        anyhow::ensure!(
            out.status.success(),
            "{} {args:?} failed: {}{}",
            program.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    }

    fn options(&self) -> String {
        // fsync off: the cluster lives as long as a test; restarts are clean or immediate, and
        // an immediate stop recovers from the write-ahead log, which needs no fsync either.
        format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.dir.display()
        )
    }

    fn pg_ctl_start(&self) -> anyhow::Result<()> {
        self.pg_ctl_running(&["start"])
    }

    /// `pg_ctl restart -m fast`: every session is ended (in-flight statements fail), the
    /// server is down for a moment, then accepts connections again.
    pub fn restart(&self) -> anyhow::Result<()> {
        self.pg_ctl_running(&["restart", "-m", "fast"])
    }

    /// `pg_ctl` with `action`, for the actions that leave the server running: waits up to 60 s
    /// for it and passes the cluster's log file and server options.
    fn pg_ctl_running(&self, action: &[&str]) -> anyhow::Result<()> {
        let (data, log, options) = (self.data_dir(), self.log_file(), self.options());
        let mut args = action.to_vec();
        args.extend([
            "-w",
            "-t",
            "60",
            "-D",
            path_str(&data)?,
            "-l",
            path_str(&log)?,
            "-o",
            &options,
        ]);
        self.run("pg_ctl", &args)
    }

    /// `pg_ctl stop -m fast`: the server is away until [`PrivatePostgres::start_again`].
    pub fn stop(&self) -> anyhow::Result<()> {
        let data = self.data_dir();
        self.run(
            "pg_ctl",
            &["stop", "-m", "fast", "-w", "-D", path_str(&data)?],
        )
    }

    /// Starts a stopped cluster again on the same port.
    pub fn start_again(&self) -> anyhow::Result<()> {
        self.pg_ctl_start()
    }

    fn stop_now(&self) {
        if let Ok(data) = path_str(&self.data_dir()) {
            let _ = self.run("pg_ctl", &["stop", "-m", "immediate", "-w", "-D", data]);
        }
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        self.stop_now();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn path_str(p: &Path) -> anyhow::Result<&str> {
    p.to_str().context("temp paths are UTF-8")
}

/// One run of a workspace binary (`api serve`, `worker`) with exactly the given environment,
/// its standard error in a log file. Killed when dropped.
pub struct Proc {
    pub name: String,
    child: Child,
    pub log: PathBuf,
    /// The peak resident set size seen (KiB), refreshed by [`Proc::sample_rss`].
    pub peak_rss_kib: u64,
}

impl Proc {
    pub fn spawn(
        name: &str,
        bin: &Path,
        args: &[&str],
        env: &BTreeMap<String, String>,
        log_dir: &Path,
    ) -> anyhow::Result<Self> {
        let log = log_dir.join(format!("{name}-{}.log", uuid::Uuid::new_v4().simple()));
        let file = std::fs::File::create(&log)?;
        let child = Command::new(bin)
            .args(args)
            .env_clear()
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .with_context(|| format!("{} could not be started", bin.display()))?;
        Ok(Self {
            name: name.to_owned(),
            child,
            log,
            peak_rss_kib: 0,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Reads the kernel's peak resident set size (`VmHWM`) of the running process.
    pub fn sample_rss(&mut self) {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", self.pid())) else {
            return;
        };
        if let Some(kib) = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            self.peak_rss_kib = self.peak_rss_kib.max(kib);
        }
    }

    /// SIGKILL, and reap.
    pub fn kill9(&mut self) {
        self.sample_rss();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits up to `limit` for the exit (SIGKILL after that); whether it exited
    /// by itself with success.
    pub async fn terminate(&mut self, limit: Duration) -> bool {
        self.sample_rss();
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.kill9();
        false
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// Waits until `GET {base}/readyz` answers 200 (at most `limit`).
pub async fn wait_ready(http: &reqwest::Client, base: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(r) = http.get(format!("{base}/readyz")).send().await {
            if r.status() == 200 {
                return true;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// Builds the service's configuration from an environment map, the way the binaries do.
pub fn config_of(env: &BTreeMap<String, String>) -> jobs::config::Config {
    jobs::config::Config::from_lookup(&|k| env.get(k).cloned()).expect("the configuration is valid")
}

/// Creates database `name` on a server and applies the migrations with `api migrate`.
pub async fn create_migrated_database(
    server_url: &str,
    name: &str,
    env: &BTreeMap<String, String>,
) -> anyhow::Result<()> {
    use sqlx::{Connection as _, Executor as _};
    let mut admin = sqlx::PgConnection::connect(&format!("{server_url}/postgres")).await?;
    admin
        .execute(format!("CREATE DATABASE {name}").as_str())
        .await?;
    admin.close().await?;
    let out = Command::new(crate::workspace_bin("api"))
        .arg("migrate")
        .env_clear()
        .envs(env)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "api migrate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}
