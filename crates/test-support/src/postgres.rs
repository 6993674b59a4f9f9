//! A real PostgreSQL server for a test: `initdb` in a temporary directory, then
//! `pg_ctl start` on a free loopback port with trust authentication; stopped
//! (`-m immediate`) and removed on drop. As root (CI), the server runs as the
//! `postgres` user, since PostgreSQL refuses to run as root.
#![allow(clippy::disallowed_methods)] // starting the database server is the point

use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// A running server.
pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
    port: u16,
}

/// Where `initdb` and `pg_ctl` are: on `PATH`, else Debian's
/// `/usr/lib/postgresql/<version>/bin`.
pub fn pg_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    });
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|b| b.join("initdb").is_file())
            .collect();
        versions.sort();
        versions.pop()
    })
}

/// Whether a test can start a server here. Missing: a loud skip on a
/// developer's machine, a failure under `CI=true`.
pub fn available(test: &str) -> bool {
    if pg_bin().is_some() {
        return true;
    }
    let msg = format!(
        "{test}: PostgreSQL is not installed (apt-get install postgresql; scripts/test does)"
    );
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    #[allow(clippy::print_stderr)] // the loud skip is the point
    {
        eprintln!("\n!!! SKIPPED: {msg}\n");
    }
    false
}

impl PgServer {
    /// Starts a fresh server; panics with its log when it does not start.
    pub fn start() -> PgServer {
        let bin = pg_bin().expect("PostgreSQL's initdb and pg_ctl (see `available`)");
        let dir = tempfile::Builder::new().prefix("ironbees-pg-").tempdir().unwrap();
        // A new directory belongs to the effective user.
        let root =
            std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(dir.path()).unwrap()) == 0;
        if root {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown of {} to postgres failed", dir.path().display());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = PgServer { dir, bin, as_postgres: root, port };
        let data = server.data();
        server.run(
            "initdb",
            &[
                "-D",
                &data,
                "-A",
                "trust",
                "-U",
                "ironbees",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ],
        );
        let opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=200",
            server.dir.path().display()
        );
        let log = server.dir.path().join("log").display().to_string();
        server.run("pg_ctl", &["-D", &data, "-o", &opts, "-l", &log, "-w", "-t", "60", "start"]);
        server
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let exe = self.bin.join(tool);
        let mut c = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = c.args(args).current_dir(self.dir.path()).output().unwrap();
        if !out.status.success() {
            let log = std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
            panic!(
                "{tool} {args:?} failed:\n{}\n{}\n{log}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// `postgres://ironbees@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://ironbees@127.0.0.1:{}/postgres", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.data();
        let exe = self.bin.join("pg_ctl");
        let mut c = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let _ = c.args(["-D", &data, "-m", "immediate", "-w", "stop"]).output();
    }
}
