#![allow(dead_code)]

//! A throw-away PostgreSQL cluster on loopback (Debian's `postgresql`
//! package: `initdb` and `pg_ctl` under /usr/lib/postgresql/*/bin; as root
//! they run as the `postgres` user), stopped when dropped.

use std::path::PathBuf;
use std::process::Command;

pub struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    as_postgres: bool,
    pub port: u16,
    _tmp: tempfile::TempDir,
}

impl Cluster {
    /// A program of the server's, run as the cluster's owner.
    pub fn cmd(&self, prog: &str) -> Command {
        let path = self.bin.join(prog);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// The cluster and the URL of its `postgres` database as user
    /// `aileron` (trust authentication); `None` where PostgreSQL is not
    /// installed.
    pub fn start() -> Option<(Cluster, String)> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin"))
            .find(|b| b.join("initdb").is_file())?;
        let tmp = tempfile::tempdir().ok()?;
        let root = tmp.path().to_path_buf();
        let as_postgres =
            std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").ok()?) == 0;
        if as_postgres {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&root)
                .status()
                .ok()?
                .success();
            assert!(ok, "chown");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Cluster {
            bin,
            dir: root.join("pg"),
            as_postgres,
            port,
            _tmp: tmp,
        };
        let out = cluster
            .cmd("initdb")
            .args(["-D"])
            .arg(&cluster.dir)
            .args(["-U", "aileron", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .unwrap();
        assert!(out.status.success(), "initdb: {out:?}");
        let opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            root.display()
        );
        let out = cluster
            .cmd("pg_ctl")
            .args(["-D"])
            .arg(&cluster.dir)
            .args(["-o", &opts, "-l"])
            .arg(root.join("log"))
            .args(["-w", "-t", "30", "start"])
            .output()
            .unwrap();
        assert!(out.status.success(), "pg_ctl start: {out:?}");
        Some((
            cluster,
            format!("postgres://aileron@127.0.0.1:{port}/postgres"),
        ))
    }

    /// Stops the server.
    pub fn stop(&self) {
        let _ = self
            .cmd("pg_ctl")
            .args(["-D"])
            .arg(&self.dir)
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}
