//! The processes of one simulated node — its mock execution client, beacon node and validator
//! client — started from the `arbor` binary with their output in log files, stopped by PID.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One running process of a node.
#[derive(Debug)]
pub struct Proc {
    /// What it is, for messages (`node-1 bn`).
    pub name: String,
    child: Child,
}

impl Proc {
    /// Starts `arbor <args>` with stdout and stderr appended to `log`.
    pub fn spawn(arbor: &Path, args: &[String], log: &Path, name: String) -> Result<Self, String> {
        let out = open_log(log)?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        // `SIMULATOR_ARBOR_LOG` (e.g. `info,router=debug`) gives the processes another filter.
        let level = std::env::var("SIMULATOR_ARBOR_LOG").unwrap_or_else(|_| "info".to_string());
        let child = Command::new(arbor)
            .args(args)
            .env("ARBOR_LOG", level)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{name}: cannot start {}: {e}", arbor.display()))?;
        Ok(Self { name, child })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it has exited (and how).
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(e.to_string()),
        }
    }

    /// SIGKILL, as a crash or an operator's `kill -9` would stop it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM (a graceful shutdown), then SIGKILL if it has not exited within `grace`.
    pub fn terminate(mut self, grace: Duration) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Resident memory in bytes (`VmRSS` of `/proc/<pid>/status`), when readable.
    pub fn rss_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // However the run ends, nothing it started outlives it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn open_log(path: &Path) -> Result<File, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A free TCP and UDP port on 127.0.0.1 (both free at the time of asking; a node binds it
/// moments later), never one handed out before in this process: the OS may give a port just
/// released to the next asker, and two of a run's servers then collided (a node's Beacon API
/// on its execution client's port).
pub fn free_port() -> Result<u16, String> {
    static HANDED_OUT: std::sync::Mutex<BTreeSet<u16>> = std::sync::Mutex::new(BTreeSet::new());
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..256 {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = tcp.local_addr().map_err(|e| e.to_string())?.port();
        // QUIC takes the next port: it must be free too, and below 65535.
        // Neither it nor its QUIC neighbour may be one handed out already (either one's).
        if port >= 65000 || (port - 1..=port + 1).any(|p| handed_out.contains(&p)) {
            continue;
        }
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok()
            && std::net::UdpSocket::bind(("127.0.0.1", port + 1)).is_ok()
        {
            handed_out.insert(port);
            handed_out.insert(port + 1);
            return Ok(port);
        }
    }
    Err("no free port pair on 127.0.0.1".into())
}

/// Where a node's files go.
#[derive(Debug, Clone)]
pub struct NodeDirs {
    /// `<dir>/node-<i>`.
    pub root: PathBuf,
}

impl NodeDirs {
    /// The log of one of its processes.
    pub fn log(&self, what: &str) -> PathBuf {
        self.root.join(format!("{what}.log"))
    }
}

#[cfg(test)]
mod port_tests {
    use super::free_port;

    /// No port (nor its QUIC neighbour) is handed out twice, even when the OS hands the same
    /// released port back.
    #[test]
    fn free_ports_are_never_handed_out_twice() {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let port = free_port().expect("a free port");
            assert!(seen.insert(port), "port {port} handed out twice");
            assert!(seen.insert(port + 1), "port {} handed out twice", port + 1);
        }
    }
}
