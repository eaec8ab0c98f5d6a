//! Agent hooks: `aileron hook AGENT` reads one tool-call event on stdin,
//! has it decided like any other action, and answers in the agent's own
//! format (SPEC 2, 3, 10).
//!
//! event ([`event::parse`]) → shell line or Actions ([`lower::lower`]) →
//! the launch session over its socket, or a [`Decider`] of its own with
//! the agent session's state from [`store`] → [`answer::render`].
//!
//! Nothing here fails open: an event that cannot be read, a policy that
//! does not load, a session that cannot be reached all answer deny.

pub mod agent;
pub mod answer;
mod error;
pub mod event;
pub mod import;
pub mod install;
pub mod jsonedit;
pub mod lower;
pub mod store;

pub use agent::Agent;
pub use answer::{Outcome, Reply};
pub use error::Error;

use aileron_config::LoadOptions;
use aileron_session::{Config, Decider, Request, Response, TtyPrompter};
use std::path::{Path, PathBuf};

/// Where the hook looks for things; [`Environment::from_env`] in real use.
#[derive(Clone, Debug)]
pub struct Environment {
    pub load: LoadOptions,
    /// The launch session's socket (`AILERON_SOCKET`), if under `aileron launch`.
    pub socket: Option<PathBuf>,
    /// Where to ask a human (`/dev/tty`).
    pub tty: String,
}

impl Environment {
    pub fn from_env() -> Environment {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Environment {
            load: LoadOptions::from_env(cwd),
            socket: std::env::var_os("AILERON_SOCKET")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            tty: "/dev/tty".to_owned(),
        }
    }
}

/// Decides one event of `agent`. Never panics on input; every failure is a deny.
pub fn run(agent: Agent, input: &[u8], env: &Environment) -> Reply {
    let waiting_since = unix_nanos();
    if input.len() > event::MAX_EVENT_BYTES {
        let reason = format!(
            "the hook event is larger than {} MiB",
            event::MAX_EVENT_BYTES >> 20
        );
        return refuse_unread(agent, env, &reason);
    }
    let ev = match event::parse(agent, input) {
        Ok(ev) => ev,
        Err(e) => return refuse_unread(agent, env, &e.to_string()),
    };
    let home = env.load.home.to_string_lossy().into_owned();
    let lowered = match lower::lower(&ev, &home) {
        Ok(l) => l,
        Err(e) => {
            let outcome = Outcome::Deny {
                reason: format!("aileron: denied: {e}"),
            };
            return answer::render(agent, &ev.hook_event, &outcome);
        }
    };
    let mut actions = lowered.actions;
    also_through_symlinks(&mut actions);
    let req = Request {
        line: lowered.line,
        cwd: lowered.cwd,
        shell_cwd: lowered.shell_cwd,
        argv: Vec::new(),
        actions,
        session: ev.session.clone(),
        agent: Some(agent.name().to_owned()),
        adapter: Some(format!("hook:{}", agent.name())),
        agent_asks: answer::agent_can_ask(agent, &ev.hook_event),
        waiting_since: Some(waiting_since),
        // Claude Code's permission request follows its pre-tool event for
        // the same call: not a second call.
        repeat: ev.hook_event == "PermissionRequest",
        prompt_budget: Some(agent.prompt_budget().as_secs()),
        ..Request::default()
    };
    let response = match &env.socket {
        Some(socket) => aileron_session::server::request(socket, &req)
            .unwrap_or_else(|e| Response::refused(format!("aileron: denied: {e}"), "")),
        None => standalone(agent, &req, env),
    };
    answer::render(agent, &ev.hook_event, &outcome_of(&response))
}

/// Decides in this process, with the agent session's saved state.
fn standalone(agent: Agent, req: &Request, env: &Environment) -> Response {
    let key = req.session.clone().unwrap_or_default();
    let sessions = env.load.data_dir.join("sessions");
    let file = match store::SessionFile::lock(&sessions, agent.name(), &key) {
        Ok(f) => f,
        Err(e) => {
            return Response::refused(
                format!(
                    "aileron: denied: cannot keep the session's state under {}: {e}",
                    sessions.display()
                ),
                "",
            );
        }
    };
    let cfg = Config {
        cache_dir: Some(env.load.data_dir.join("cache")),
        session_id: None,
        agent: Some(agent.name().to_owned()),
        real_shell: String::new(),
        secrets: Vec::new(),
        adapter: format!("hook:{}", agent.name()),
        load: env.load.clone(),
    };
    let prompter = TtyPrompter {
        device: env.tty.clone(),
    };
    let decider = Decider::new(cfg, Box::new(prompter));
    decider.import_session(&key, file.load());
    let response = decider.decide(req);
    // Losing the saved state loses approvals and loop counts, not safety.
    let _ = file.save(&decider.export_session(&key));
    response
}

/// A deny for an event that could not be read, recorded in the data
/// directory's audit log (there is no project to put it beside).
fn refuse_unread(agent: Agent, env: &Environment, why: &str) -> Reply {
    let reason = format!("aileron: denied: {why}");
    let mut action = aileron_engine::Action {
        kind: "tool.call".into(),
        summary: format!("unreadable {} hook event", agent.name()),
        ..Default::default()
    };
    action.facets.insert(
        "tool".into(),
        serde_json::json!({"name": "(unreadable event)"}),
    );
    let record = aileron_audit::AuditRecord {
        time: aileron_audit::now_rfc3339(),
        session: None,
        agent: Some(agent.name().to_owned()),
        adapter: format!("hook:{}", agent.name()),
        cwd: None,
        action: aileron_audit::AuditAction::from_action(&action),
        decision: "deny".into(),
        outcome: None,
        source: "default".into(),
        rule: None,
        reason: why.to_owned(),
        approver: None,
        latency_us: 0,
        judge: None,
    };
    let log = aileron_audit::AuditLog::new(env.load.data_dir.join("audit.jsonl"));
    let _ = log.append(&record);
    answer::failure(agent, &reason)
}

/// A file reached through a symbolic link is also decided as the file the
/// link points to (a link named `notes.md` to `aileron.yaml`): the most
/// restrictive of both answers.
fn also_through_symlinks(actions: &mut Vec<aileron_engine::Action>) {
    let mut extra = Vec::new();
    for a in actions.iter() {
        let Some(path) = a.facet_str("fs", "path") else {
            continue;
        };
        if let Some(real) = resolve(Path::new(path))
            && real != path
        {
            let mut b = a.clone();
            b.summary.clear();
            b.facets["fs"]["path"] = serde_json::Value::from(real);
            b.normalize();
            extra.push(b);
        }
    }
    actions.extend(extra);
}

/// The path with every symbolic link in its existing part resolved.
fn resolve(path: &Path) -> Option<String> {
    let mut existing = path;
    let mut rest = Vec::new();
    while existing.symlink_metadata().is_err() {
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
    let mut real = match std::fs::canonicalize(existing) {
        Ok(r) => r,
        // A dangling link: where it points, from the link's directory.
        Err(_) => {
            let target = std::fs::read_link(existing).ok()?;
            let dir = std::fs::canonicalize(existing.parent()?).ok()?;
            let joined = dir.join(target);
            PathBuf::from(aileron_engine::paths::normalize(&joined.to_string_lossy()))
        }
    };
    for part in rest.iter().rev() {
        real.push(part);
    }
    Some(real.to_string_lossy().into_owned())
}

fn outcome_of(r: &Response) -> Outcome {
    let reason = r.message.clone().unwrap_or_else(|| match &r.rule {
        Some(rule) => format!("aileron: allowed (rule {rule})"),
        None => "aileron: allowed".to_owned(),
    });
    match (r.allow, r.decision.as_str()) {
        (true, _) => Outcome::Allow { reason },
        (false, "ask") => Outcome::Ask { reason },
        (false, _) => Outcome::Deny { reason },
    }
}

fn unix_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
}
