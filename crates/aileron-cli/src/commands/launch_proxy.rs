//! The egress proxy of a launch session: started before the agent, asking
//! the session (over its socket) about every request, and named to the
//! agent's tree through the proxy variables every HTTP client reads.

use aileron_cli::Error;
use std::io::{BufRead, BufReader};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long the proxy may take to say where it listens.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// A running session proxy; stopped when dropped.
pub struct SessionProxy {
    pub child: ServerChild,
    /// `127.0.0.1:PORT`.
    pub address: String,
    /// The CA bundle and certificate the agent's tools trust, when TLS is inspected.
    pub trust: Option<(PathBuf, PathBuf)>,
}

/// A gateway process of the session (`aileron-server`); stopped when dropped.
pub struct ServerChild {
    child: Child,
    /// Where the box's in-namespace listeners are handed to it
    /// (`--adopt-listeners`), when the box has a network of its own.
    adopt: Option<OwnedFd>,
}

impl ServerChild {
    /// Where to hand the gateway a listener made in the box's network
    /// namespace ([`adopt`]); None when it takes none.
    pub fn adopter(&self) -> Option<OwnedFd> {
        self.adopt.as_ref().and_then(|c| c.try_clone().ok())
    }
}

/// Hands `listener` to the gateway behind `adopter`, which accepts on it as
/// on its own listener.
#[cfg(target_os = "linux")]
pub fn adopt(adopter: &OwnedFd, listener: &OwnedFd) -> std::io::Result<()> {
    aileron_supervisor::fdpass::send_fd(adopter.as_raw_fd(), listener.as_raw_fd())
}

/// Elsewhere the box has no network of its own: nothing to hand over.
#[cfg(not(target_os = "linux"))]
pub fn adopt(_adopter: &OwnedFd, _listener: &OwnedFd) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Hands one of the box's DNS sockets to the proxy behind `adopter`,
/// which answers the names asked there (`aileron_proxy::dns`).
#[cfg(target_os = "linux")]
pub fn adopt_dns(adopter: &OwnedFd, socket: &OwnedFd) -> std::io::Result<()> {
    use aileron_supervisor::fdpass::{FOR_DNS, send_fd_for};
    send_fd_for(adopter.as_raw_fd(), socket.as_raw_fd(), FOR_DNS)
}

#[cfg(not(target_os = "linux"))]
pub fn adopt_dns(_adopter: &OwnedFd, _socket: &OwnedFd) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// A socket pair whose one end a gateway inherits to take listeners.
#[cfg(target_os = "linux")]
fn adopt_channel() -> Result<(OwnedFd, OwnedFd), aileron_supervisor::Error> {
    aileron_supervisor::fdpass::socket_pair()
}

#[cfg(not(target_os = "linux"))]
fn adopt_channel() -> Result<(OwnedFd, OwnedFd), aileron_supervisor::Error> {
    Err(aileron_supervisor::Error::NeedsLinux)
}

impl ServerChild {}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port of `IP:PORT`.
pub fn port_of(address: &str) -> Option<u16> {
    address.rsplit_once(':')?.1.parse().ok()
}

/// Who a gateway of the session decides for: `aileron-server` run with
/// the session's socket, id, agent and policy, in its directory.
pub struct ForSession<'a> {
    pub aileron: &'a Path,
    pub socket: &'a Path,
    pub session: &'a str,
    pub agent: Option<&'a str>,
    pub policy: Option<&'a Path>,
    pub cwd: &'a Path,
}

impl ForSession<'_> {
    /// `aileron-server ARGS --session-socket ... --session ...`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(self.aileron.with_file_name("aileron-server"));
        cmd.args(args)
            .arg("--session-socket")
            .arg(self.socket)
            .args(["--session", self.session]);
        if let Some(agent) = self.agent {
            cmd.args(["--agent", agent]);
        }
        if let Some(p) = self.policy {
            cmd.arg("--policy").arg(p);
        }
        cmd.current_dir(self.cwd);
        cmd
    }
}

/// Starts `cmd` and waits until it says where it listens: its first line,
/// `prefix` and the address (up to the next space). `what` names it in
/// errors. With `adopt`, it also takes listeners made in the box's network
/// namespace ([`ServerChild::adopt`]).
pub fn start_listening(
    mut cmd: Command,
    prefix: &str,
    what: &str,
    adopt: bool,
) -> Result<(ServerChild, String), Error> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let channel = if adopt {
        let (ours, theirs) = adopt_channel().map_err(|e| Error::GatewayDidNotStart {
            what: what.to_owned(),
            why: e.to_string(),
        })?;
        // The gateway inherits it under the same number.
        let fd = theirs.as_raw_fd();
        cmd.args(["--adopt-listeners", &fd.to_string()]);
        // SAFETY: fcntl in the forked child; `theirs` lives until spawn returns.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Some((ours, theirs))
    } else {
        None
    };
    // The gateway ends with the session, even when the session is killed.
    #[cfg(target_os = "linux")]
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|source| Error::Io {
        action: "start",
        path: PathBuf::from(cmd.get_program()),
        source,
    })?;
    // The gateway holds its end; ours alone hands listeners over.
    let adopt = channel.map(|(ours, _theirs)| ours);
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send(line);
        // Keep reading so that the gateway never blocks on a full pipe.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = rx.recv_timeout(START_TIMEOUT).unwrap_or_default();
    let address = line
        .trim()
        .strip_prefix(prefix)
        .and_then(|rest| rest.split(' ').next())
        .map(str::to_owned);
    match address {
        Some(address) => Ok((ServerChild { child, adopt }, address)),
        None => {
            let _ = child.kill();
            let status = child.wait().ok();
            Err(Error::GatewayDidNotStart {
                what: what.to_owned(),
                why: match status.and_then(|s| s.code()) {
                    Some(code) => format!("it exited with status {code}"),
                    None => "it did not say where it listens".to_owned(),
                },
            })
        }
    }
}

/// What the session's proxy is started with.
pub struct Start<'a> {
    pub session: &'a ForSession<'a>,
    pub runtime: &'a Path,
    /// The policy inspects some hosts' TLS.
    pub inspect: bool,
    /// The box has a network of its own: the proxy adopts its listener.
    pub boxed: bool,
    /// The agent's own model endpoints (`builtin:agent-model-api`).
    pub agent_apis: &'a [String],
}

/// Starts the proxy and waits until it listens.
pub fn start(s: &Start) -> Result<SessionProxy, Error> {
    let mut cmd = s.session.command(&["proxy", "--listen", "127.0.0.1:0"]);
    for api in s.agent_apis {
        cmd.args(["--agent-api", api]);
    }
    let trust = s.inspect.then(|| {
        (
            s.runtime.join("ca-bundle.pem"),
            s.runtime.join("proxy-ca.pem"),
        )
    });
    if trust.is_some() {
        cmd.arg("--trust-dir").arg(s.runtime);
    }
    let (child, address) = start_listening(
        cmd,
        "aileron proxy: listening on http://",
        "the egress proxy",
        s.boxed,
    )?;
    Ok(SessionProxy {
        child,
        address,
        trust,
    })
}

impl SessionProxy {
    /// The variables that send the agent's tree through the proxy (and,
    /// under TLS inspection, make its tools trust the proxy's CA).
    pub fn env(&self, no_proxy: &[String]) -> Vec<(String, String)> {
        let url = format!("http://{}", self.address);
        let mut env: Vec<(String, String)> = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ]
        .iter()
        .map(|k| ((*k).to_owned(), url.clone()))
        .collect();
        if !no_proxy.is_empty() {
            let list = no_proxy.join(",");
            env.push(("NO_PROXY".into(), list.clone()));
            env.push(("no_proxy".into(), list));
        }
        if let Some((bundle, ca)) = &self.trust {
            let bundle = bundle.to_string_lossy().into_owned();
            for k in [
                "SSL_CERT_FILE",
                "REQUESTS_CA_BUNDLE",
                "CURL_CA_BUNDLE",
                "GIT_SSL_CAINFO",
                "CARGO_HTTP_CAINFO",
                "PIP_CERT",
            ] {
                env.push((k.to_owned(), bundle.clone()));
            }
            env.push((
                "NODE_EXTRA_CA_CERTS".into(),
                ca.to_string_lossy().into_owned(),
            ));
        }
        env
    }
}
