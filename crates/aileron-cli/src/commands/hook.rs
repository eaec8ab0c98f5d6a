//! `aileron hook AGENT`: one tool-call event on stdin, the agent's answer on
//! stdout, its exit code. Runs before every tool call of the agent, so it is
//! dispatched before the argument parser and does nothing it can skip.

use aileron_hooks::{Agent, Environment, Reply, answer};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Whoever answers first (the decision or the alarm) answers alone.
static ANSWERED: AtomicBool = AtomicBool::new(false);
/// The deny the alarm prints, prepared before it is armed.
static ALARM_REPLY: AtomicPtr<Reply> = AtomicPtr::new(std::ptr::null_mut());

pub fn run(agent_name: &str) -> u8 {
    let Some(agent) = Agent::parse(agent_name) else {
        let unknown = aileron_cli::Error::UnknownAgent {
            name: agent_name.to_owned(),
        };
        eprintln!("aileron: {unknown}");
        // Unknown to us, so we cannot speak its format: exit 2 blocks in most.
        return 2;
    };
    arm_alarm(agent);
    let mut input = Vec::new();
    let limit = aileron_hooks::event::MAX_EVENT_BYTES as u64 + 1;
    let reply = match std::io::stdin().lock().take(limit).read_to_end(&mut input) {
        Ok(_) => aileron_hooks::run(agent, &input, &Environment::from_env()),
        Err(e) => answer::failure(
            agent,
            &format!("aileron: denied: cannot read the hook event: {e}"),
        ),
    };
    if ANSWERED.swap(true, Ordering::SeqCst) {
        // The alarm answered and is ending the process.
        loop {
            std::thread::park();
        }
    }
    let _ = std::io::stdout().write_all(reply.stdout.as_bytes());
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
    reply.exit
}

/// Answers deny shortly before the agent would give up on the hook (and
/// let the call through), whatever the decision is still doing: a
/// SIGALRM, so that no thread has to be started on every call.
fn arm_alarm(agent: Agent) {
    let limit = agent.hook_timeout().as_secs().saturating_sub(2).max(1);
    let reply = answer::failure(
        agent,
        &format!(
            "aileron: denied: no decision within {limit}s (the agent stops waiting at {}s)",
            agent.hook_timeout().as_secs()
        ),
    );
    ALARM_REPLY.store(Box::into_raw(Box::new(reply)), Ordering::SeqCst);
    // SAFETY: the handler only reads the reply stored above, writes and exits.
    unsafe {
        libc::signal(libc::SIGALRM, on_alarm as *const () as libc::sighandler_t);
        libc::alarm(limit as libc::c_uint);
    }
}

extern "C" fn on_alarm(_: libc::c_int) {
    if ANSWERED.swap(true, Ordering::SeqCst) {
        return;
    }
    // SAFETY: set before the alarm was armed and never freed; write(2)
    // and _exit(2) are async-signal-safe.
    unsafe {
        let reply = &*ALARM_REPLY.load(Ordering::SeqCst);
        let out = reply.stdout.as_bytes();
        let err = reply.stderr.as_bytes();
        libc::write(1, out.as_ptr().cast(), out.len());
        libc::write(2, err.as_ptr().cast(), err.len());
        libc::_exit(i32::from(reply.exit));
    }
}
