//! `aileron hook AGENT`: one tool-call event on stdin, the agent's answer on
//! stdout, its exit code. Runs before every tool call of the agent, so it is
//! dispatched before the argument parser and does nothing it can skip.

use aileron_hooks::{Agent, Environment, Reply, answer};
use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

/// Whoever answers first (the decision or the watchdog) answers alone.
static ANSWERED: Mutex<bool> = Mutex::new(false);

pub fn run(agent_name: &str) -> ExitCode {
    let Some(agent) = Agent::parse(agent_name) else {
        let names: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
        eprintln!(
            "aileron: unknown agent `{agent_name}` (expected one of: {})",
            names.join(", ")
        );
        // Unknown to us, so we cannot speak its format: exit 2 blocks in most.
        return ExitCode::from(2);
    };
    watchdog(agent);
    let mut input = Vec::new();
    let limit = aileron_hooks::event::MAX_EVENT_BYTES as u64 + 1;
    let reply = match std::io::stdin().lock().take(limit).read_to_end(&mut input) {
        Ok(_) => aileron_hooks::run(agent, &input, &Environment::from_env()),
        Err(e) => answer::failure(
            agent,
            &format!("aileron: denied: cannot read the hook event: {e}"),
        ),
    };
    emit(&reply)
}

/// Answers deny shortly before the agent would give up on the hook (and
/// let the call through), whatever the decision is still doing.
fn watchdog(agent: Agent) {
    let limit = agent.hook_timeout().saturating_sub(Duration::from_secs(2));
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        let reply = answer::failure(
            agent,
            &format!(
                "aileron: denied: no decision within {}s (the agent stops waiting at {}s)",
                limit.as_secs(),
                agent.hook_timeout().as_secs()
            ),
        );
        emit(&reply);
        std::process::exit(i32::from(reply.exit));
    });
}

fn emit(reply: &Reply) -> ExitCode {
    let mut answered = ANSWERED.lock().unwrap_or_else(|p| p.into_inner());
    if *answered {
        // The watchdog answered and is ending the process.
        loop {
            std::thread::park();
        }
    }
    *answered = true;
    let _ = std::io::stdout().write_all(reply.stdout.as_bytes());
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
    ExitCode::from(reply.exit)
}
