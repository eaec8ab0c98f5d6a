//! `aileron approve`: answer the asks of running launch sessions (or of
//! the dashboard server's queue) from another terminal, while the agent
//! owns its own. A full-screen program (ratatui) that lists what waits,
//! with its rule, reason and analysed commands, and answers with single
//! keys; `--once --json` prints the list, `--answer ID ANSWER` answers one.

use aileron_cli::Error;
use aileron_session::board::{PendingAsk, WireAnswer};
use aileron_session::registry::{self, Entry};
use aileron_session::{Control, ControlReply};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
/// `aileron approve`'s options.
#[derive(clap::Args)]
pub struct Cli {
    /// Only this launch session (its id, or the start of it). Default:
    /// every running session of this user (`$AILERON_SOCKET`'s inside one).
    #[arg(long)]
    session: Option<String>,
    /// The server's pending queue instead (`http://127.0.0.1:PORT`); the
    /// token is `$AILERON_TOKEN` or the data directory's admin token.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// Print what waits and exit.
    #[arg(long)]
    once: bool,
    /// With --once: one JSON object `{"asks": [...]}`.
    #[arg(long)]
    json: bool,
    /// Answer one ask and exit: ID and once, session, project, user,
    /// reject or feedback.
    #[arg(long, num_args = 2, value_names = ["ID", "ANSWER"])]
    answer: Vec<String>,
    /// With --answer session/project/user: the offered prefix instead of
    /// exactly the command.
    #[arg(long)]
    prefix: bool,
    /// With --answer feedback: what to tell the agent.
    #[arg(long, value_name = "TEXT")]
    feedback: Option<String>,
}

impl From<Cli> for Args {
    fn from(c: Cli) -> Args {
        Args {
            session: c.session,
            server: c.server,
            once: c.once,
            json: c.json,
            answer: c.answer,
            prefix: c.prefix,
            feedback: c.feedback,
        }
    }
}

pub struct Args {
    /// Only this session (its id, or the start of it).
    pub session: Option<String>,
    /// The dashboard server instead of the launch sessions.
    pub server: Option<String>,
    /// Print what waits and exit.
    pub once: bool,
    pub json: bool,
    /// `[ID, ANSWER]`: answer one ask and exit.
    pub answer: Vec<String>,
    /// With an "always" answer: the offered prefix instead of exactly the command.
    pub prefix: bool,
    /// The text of a `feedback` answer.
    pub feedback: Option<String>,
}

/// One ask, with where it waits.
#[derive(Clone, Debug)]
pub struct Item {
    /// The id `--answer` takes: `SESSION.N` for a launch session's ask,
    /// the server's id otherwise.
    pub id: String,
    pub ask: PendingAsk,
    /// The session id (a launch session), or the server's session field.
    pub session: String,
    where_: Where,
}

#[derive(Clone, Debug)]
enum Where {
    Session { socket: PathBuf, key: String },
    Server,
}

/// Where asks are read and answered.
enum Source {
    Sessions {
        data_dir: PathBuf,
        only: Option<String>,
        socket: Option<PathBuf>,
    },
    Server {
        url: String,
        token: String,
    },
}

/// How an answer is given, before it goes on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    Once,
    Always(&'static str, bool),
    Reject,
    Feedback(String),
}

pub fn run(args: Args) -> Result<u8, Error> {
    let source = match source(&args) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("aileron approve: {why}");
            return Ok(2);
        }
    };
    if let [id, word] = args.answer.as_slice() {
        let choice = match word.as_str() {
            "once" | "o" => Choice::Once,
            "session" | "s" => Choice::Always("session", args.prefix),
            "project" | "p" => Choice::Always("project", args.prefix),
            "user" | "me" | "u" => Choice::Always("user", args.prefix),
            "reject" | "r" => Choice::Reject,
            "feedback" | "f" => match &args.feedback {
                Some(t) if !t.trim().is_empty() => Choice::Feedback(t.clone()),
                _ => {
                    eprintln!("aileron approve: a feedback answer needs --feedback TEXT");
                    return Ok(2);
                }
            },
            other => {
                eprintln!(
                    "aileron approve: unknown answer `{other}`: once, session, project, user, reject or feedback"
                );
                return Ok(2);
            }
        };
        let items = match list(&source) {
            Ok(i) => i,
            Err(why) => {
                eprintln!("aileron approve: {why}");
                return Ok(1);
            }
        };
        let Some(item) = items.iter().find(|i| &i.id == id) else {
            eprintln!("aileron approve: no ask {id} is waiting (answered, or timed out)");
            return Ok(1);
        };
        return Ok(match answer(&source, item, &choice) {
            Ok(()) => 0,
            Err(why) => {
                eprintln!("aileron approve: {why}");
                1
            }
        });
    } else if !args.answer.is_empty() {
        eprintln!("aileron approve: --answer takes an id and an answer");
        return Ok(2);
    }
    if args.once {
        let items = match list(&source) {
            Ok(i) => i,
            Err(why) => {
                eprintln!("aileron approve: {why}");
                return Ok(1);
            }
        };
        if args.json {
            let asks: Vec<Value> = items.iter().map(item_json).collect();
            println!("{}", json!({ "asks": asks }));
        } else if items.is_empty() {
            println!("nothing waits");
        } else {
            for i in &items {
                println!(
                    "{}  {}  [{}] {}",
                    i.id,
                    i.ask.command,
                    i.ask.rule.as_deref().unwrap_or("default"),
                    i.ask.reason
                );
            }
        }
        return Ok(0);
    }
    tui::run(&source)
}

fn item_json(i: &Item) -> Value {
    let mut v = serde_json::to_value(&i.ask).unwrap_or(Value::Null);
    v["id"] = json!(i.id);
    v["session"] = json!(i.session);
    v
}

fn source(args: &Args) -> Result<Source, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let data_dir = aileron_config::LoadOptions::from_env(cwd).data_dir;
    if let Some(url) = &args.server {
        let token = std::env::var("AILERON_TOKEN")
            .ok()
            .filter(|t| !t.trim().is_empty())
            .or_else(|| std::fs::read_to_string(data_dir.join("admin.token")).ok())
            .map(|t| t.trim().to_owned())
            .ok_or_else(|| {
                format!(
                    "no approver token: set AILERON_TOKEN (or keep {})",
                    data_dir.join("admin.token").display()
                )
            })?;
        return Ok(Source::Server {
            url: url.trim_end_matches('/').to_owned(),
            token,
        });
    }
    let socket = std::env::var_os("AILERON_SOCKET")
        .filter(|s| !s.is_empty() && args.session.is_none())
        .map(PathBuf::from);
    Ok(Source::Sessions {
        data_dir,
        only: args.session.clone(),
        socket,
    })
}

/// The launch sessions to read, with their approver keys.
fn sessions(data_dir: &Path, only: Option<&str>, socket: Option<&Path>) -> Vec<(Entry, String)> {
    registry::list(data_dir)
        .into_iter()
        .filter(|e| only.is_none_or(|o| e.id.starts_with(o)))
        .filter(|e| socket.is_none_or(|s| e.socket == s))
        .filter_map(|e| registry::key(data_dir, &e.id).map(|k| (e, k)))
        .collect()
}

/// Everything that waits now.
fn list(source: &Source) -> Result<Vec<Item>, String> {
    Ok(list_with_sessions(source)?.0)
}

/// Everything that waits now, and what is attached (for the title).
fn list_with_sessions(source: &Source) -> Result<(Vec<Item>, String), String> {
    match source {
        Source::Sessions {
            data_dir,
            only,
            socket,
        } => {
            let found = sessions(data_dir, only.as_deref(), socket.as_deref());
            let mut items = Vec::new();
            let mut queued = 0;
            let mut errors = Vec::new();
            for (entry, key) in &found {
                let reply = aileron_session::server::control(
                    &entry.socket,
                    &Control::ListAsks { key: key.clone() },
                );
                match reply {
                    Ok(ControlReply {
                        ok: true,
                        asks,
                        queued: q,
                        ..
                    }) => {
                        queued += q;
                        for ask in asks {
                            items.push(Item {
                                id: format!("{}.{}", short(&entry.id), ask.id),
                                session: entry.id.clone(),
                                where_: Where::Session {
                                    socket: entry.socket.clone(),
                                    key: key.clone(),
                                },
                                ask,
                            });
                        }
                    }
                    Ok(r) => errors.push(r.error.unwrap_or_default()),
                    Err(e) => errors.push(e.to_string()),
                }
            }
            if found.is_empty() {
                return Err(format!(
                    "no running `aileron launch` session found (under {})",
                    registry::dir(data_dir).display()
                ));
            }
            if items.is_empty()
                && let Some(e) = errors.first()
                && errors.len() == found.len()
            {
                return Err(e.clone());
            }
            let agents: Vec<String> = found
                .iter()
                .map(|(e, _)| {
                    format!(
                        "{} ({})",
                        short(&e.id),
                        e.agent.as_deref().unwrap_or("program")
                    )
                })
                .collect();
            let mut title = format!("sessions: {}", agents.join(", "));
            if queued > 0 {
                title.push_str(&format!("; {queued} more waiting their turn"));
            }
            Ok((items, title))
        }
        Source::Server { url, token } => {
            let v = http(url, token, "/api/pending-actions", None)?;
            let items = v["pending"]
                .as_array()
                .map(|a| a.iter().map(server_item).collect())
                .unwrap_or_default();
            Ok((items, format!("server: {url}")))
        }
    }
}

fn short(id: &str) -> &str {
    &id[..id.len().min(8)]
}

fn server_item(p: &Value) -> Item {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let action = &p["action"];
    let summary = s(&action["summary"]);
    Item {
        id: s(&p["id"]),
        session: s(&p["session"]),
        where_: Where::Server,
        ask: PendingAsk {
            id: s(&p["id"]),
            command: summary.clone(),
            line: summary,
            commands: Vec::new(),
            kind: s(&action["type"]),
            rule: p["rule"].as_str().map(str::to_owned),
            reason: s(&p["reason"]),
            suggestion: String::new(),
            agent: action["session"]["agent"].as_str().map(str::to_owned),
            cwd: action["session"]["cwd"].as_str().map(str::to_owned),
            since: s(&p["created_at"]),
            timeout_secs: p["timeout_secs"].as_u64().unwrap_or(0),
            on_timeout: s(&p["on_timeout"]),
        },
    }
}

/// Sends `choice` for `item`.
fn answer(source: &Source, item: &Item, choice: &Choice) -> Result<(), String> {
    match (&item.where_, source) {
        (Where::Session { socket, key }, _) => {
            let pattern = |prefix: bool| {
                if prefix {
                    item.ask.suggestion.clone()
                } else {
                    String::new()
                }
            };
            let answer = match choice {
                Choice::Once => WireAnswer::Once,
                Choice::Always("session", p) => WireAnswer::Session {
                    pattern: pattern(*p),
                },
                Choice::Always("project", p) => WireAnswer::Project {
                    pattern: pattern(*p),
                },
                Choice::Always(_, p) => WireAnswer::User {
                    pattern: pattern(*p),
                },
                Choice::Reject => WireAnswer::Reject,
                Choice::Feedback(t) => WireAnswer::Feedback { text: t.clone() },
            };
            let reply = aileron_session::server::control(
                socket,
                &Control::AnswerAsk {
                    key: key.clone(),
                    id: item.ask.id.clone(),
                    answer,
                },
            )
            .map_err(|e| e.to_string())?;
            if reply.ok {
                Ok(())
            } else {
                Err(reply.error.unwrap_or_else(|| "refused".into()))
            }
        }
        (Where::Server, Source::Server { url, token }) => {
            let body = match choice {
                Choice::Once => json!({"decision": "once"}),
                Choice::Always(..) => json!({"decision": "always"}),
                Choice::Reject => json!({"decision": "reject"}),
                Choice::Feedback(t) => json!({"decision": "feedback", "feedback": t}),
            };
            let path = format!("/api/pending-actions/{}/decision", item.id);
            http(url, token, &path, Some(&body)).map(|_| ())
        }
        (Where::Server, _) => Err("not attached to a server".into()),
    }
}

fn http(url: &str, token: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
    let full = format!("{url}{path}");
    let auth = format!("Bearer {token}");
    let result = match body {
        None => ureq::get(&full).header("Authorization", &auth).call(),
        Some(b) => ureq::post(&full)
            .header("Authorization", &auth)
            .header("Content-Type", "application/json")
            .send(b.to_string()),
    };
    let mut resp = result.map_err(|e| format!("{full}: {e}"))?;
    let text = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("{full}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{full}: not JSON: {e}"))
}

mod tui {
    //! The full-screen view: the list, the selected ask's details, and
    //! one key per answer. After s, p or u the scope's pattern is a step
    //! of its own (e exactly, x prefix, Esc back); no other key answers it.

    use super::{Choice, Item, Source, answer, list_with_sessions};
    use aileron_cli::Error;
    use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
    use ratatui::Frame;
    use ratatui::layout::{Constraint, Layout};
    use ratatui::style::{Modifier, Style};
    use ratatui::text::{Line, Span};
    use ratatui::widgets::{Block, Borders, List, ListItem, ListState, Paragraph, Wrap};
    use std::time::{Duration, Instant};

    enum Mode {
        Browse,
        /// After s, p or u: exactly or the prefix.
        Scope(&'static str),
        /// Typing the feedback.
        Feedback(String),
    }

    struct App {
        items: Vec<Item>,
        title: String,
        selected: usize,
        mode: Mode,
        status: String,
    }

    pub fn run(source: &Source) -> Result<u8, Error> {
        let mut terminal = ratatui::try_init().map_err(Error::Process)?;
        let result = event_loop(&mut terminal, source);
        ratatui::restore();
        result.map_err(Error::Process)
    }

    fn event_loop(terminal: &mut ratatui::DefaultTerminal, source: &Source) -> std::io::Result<u8> {
        let mut app = App {
            items: Vec::new(),
            title: String::new(),
            selected: 0,
            mode: Mode::Browse,
            status: String::new(),
        };
        let mut refreshed: Option<Instant> = None;
        loop {
            if refreshed.is_none_or(|t| t.elapsed() >= Duration::from_millis(500)) {
                refresh(&mut app, source);
                refreshed = Some(Instant::now());
            }
            terminal.draw(|f| draw(f, &app))?;
            if !event::poll(Duration::from_millis(200))? {
                continue;
            }
            let Event::Key(key) = event::read()? else {
                continue;
            };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
                return Ok(0);
            }
            let current = app.items.get(app.selected).cloned();
            let mut send = |app: &mut App, choice: Choice| {
                if let Some(item) = &current {
                    app.status = match answer(source, item, &choice) {
                        Ok(()) => format!("answered {}: {}", item.ask.command, said(&choice)),
                        Err(why) => format!("not answered: {why}"),
                    };
                }
                app.mode = Mode::Browse;
                refreshed = None;
            };
            match std::mem::replace(&mut app.mode, Mode::Browse) {
                Mode::Browse => match key.code {
                    KeyCode::Char('q') | KeyCode::Esc => return Ok(0),
                    KeyCode::Up | KeyCode::Char('k') => {
                        app.selected = app.selected.saturating_sub(1)
                    }
                    KeyCode::Down | KeyCode::Char('j') => {
                        app.selected = (app.selected + 1).min(app.items.len().saturating_sub(1))
                    }
                    _ if current.is_none() => {}
                    KeyCode::Char('o') => send(&mut app, Choice::Once),
                    KeyCode::Char('r') => send(&mut app, Choice::Reject),
                    KeyCode::Char('f') => app.mode = Mode::Feedback(String::new()),
                    KeyCode::Char(c @ ('s' | 'p' | 'u')) => {
                        let scope = match c {
                            's' => "session",
                            'p' => "project",
                            _ => "user",
                        };
                        let offers_prefix = current
                            .as_ref()
                            .is_some_and(|i| !i.ask.suggestion.is_empty());
                        if offers_prefix {
                            app.mode = Mode::Scope(scope);
                        } else {
                            // Not a shell command: "always" covers exactly this action.
                            send(&mut app, Choice::Always(scope, false));
                        }
                    }
                    _ => {}
                },
                Mode::Scope(scope) => match key.code {
                    KeyCode::Char('e') => send(&mut app, Choice::Always(scope, false)),
                    KeyCode::Char('x') => send(&mut app, Choice::Always(scope, true)),
                    KeyCode::Esc | KeyCode::Char('b') => {}
                    _ => {
                        app.status = "press e (exactly), x (prefix) or Esc (back)".into();
                        app.mode = Mode::Scope(scope);
                    }
                },
                Mode::Feedback(mut text) => match key.code {
                    KeyCode::Esc => {}
                    KeyCode::Enter if !text.trim().is_empty() => {
                        send(&mut app, Choice::Feedback(text))
                    }
                    KeyCode::Enter => app.mode = Mode::Feedback(text),
                    KeyCode::Backspace => {
                        text.pop();
                        app.mode = Mode::Feedback(text);
                    }
                    KeyCode::Char(c) => {
                        text.push(c);
                        app.mode = Mode::Feedback(text);
                    }
                    _ => app.mode = Mode::Feedback(text),
                },
            }
        }
    }

    fn said(choice: &Choice) -> String {
        match choice {
            Choice::Once => "once".into(),
            Choice::Always(scope, prefix) => format!(
                "always ({scope}, {})",
                if *prefix { "prefix" } else { "exactly" }
            ),
            Choice::Reject => "rejected".into(),
            Choice::Feedback(_) => "rejected with feedback".into(),
        }
    }

    fn refresh(app: &mut App, source: &Source) {
        match list_with_sessions(source) {
            Ok((items, title)) => {
                let keep = app.items.get(app.selected).map(|i| i.id.clone());
                app.items = items;
                app.title = title;
                app.selected = keep
                    .and_then(|id| app.items.iter().position(|i| i.id == id))
                    .unwrap_or(0)
                    .min(app.items.len().saturating_sub(1));
                if app.items.is_empty() && !matches!(app.mode, Mode::Browse) {
                    app.mode = Mode::Browse;
                }
            }
            Err(why) => {
                app.items.clear();
                app.title = why;
            }
        }
    }

    fn draw(f: &mut Frame, app: &App) {
        let [head, body, details, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(12),
            Constraint::Length(2),
        ])
        .areas(f.area());
        let bold = Style::default().add_modifier(Modifier::BOLD);
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled("aileron approve", bold),
                Span::raw(format!("  {} waiting  {}", app.items.len(), app.title)),
            ])),
            head,
        );
        let rows: Vec<ListItem> = app
            .items
            .iter()
            .map(|i| {
                ListItem::new(format!(
                    "{:>10}  {:<10}  {}s  {}",
                    i.id,
                    i.ask.agent.as_deref().unwrap_or("-"),
                    i.ask.timeout_secs,
                    i.ask.command
                ))
            })
            .collect();
        let mut state = ListState::default();
        if !app.items.is_empty() {
            state.select(Some(app.selected));
        }
        let empty = app.items.is_empty();
        let list = List::new(rows)
            .block(Block::default().borders(Borders::ALL).title(if empty {
                " nothing waits "
            } else {
                " waiting "
            }))
            .highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .highlight_symbol("> ");
        f.render_stateful_widget(list, body, &mut state);
        let mut lines: Vec<Line> = Vec::new();
        if let Some(i) = app.items.get(app.selected) {
            let a = &i.ask;
            lines.push(Line::from(vec![
                Span::styled("command  ", bold),
                Span::raw(&a.command),
            ]));
            if a.line != a.command {
                lines.push(Line::from(vec![
                    Span::styled("in line  ", bold),
                    Span::raw(&a.line),
                ]));
            }
            lines.push(Line::from(vec![
                Span::styled("rule     ", bold),
                Span::raw(a.rule.as_deref().unwrap_or("(none: the policy's default)")),
            ]));
            lines.push(Line::from(vec![
                Span::styled("reason   ", bold),
                Span::raw(&a.reason),
            ]));
            if !a.commands.is_empty() {
                lines.push(Line::from(vec![
                    Span::styled("analysed ", bold),
                    Span::raw(a.commands.join("  |  ")),
                ]));
            }
            let mut whence = format!("session {}", i.session);
            if let Some(cwd) = &a.cwd {
                whence.push_str(&format!(" in {cwd}"));
            }
            lines.push(Line::from(vec![
                Span::styled("from     ", bold),
                Span::raw(whence),
            ]));
            lines.push(Line::from(vec![
                Span::styled("timeout  ", bold),
                Span::raw(format!("{}s, then {}", a.timeout_secs, a.on_timeout)),
            ]));
        }
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(Block::default().borders(Borders::ALL).title(" details ")),
            details,
        );
        let keys = match &app.mode {
            Mode::Browse => "[o] once  [s] always this session  [p] always for this project  [u] always for me  [r] reject  [f] feedback  [q] quit".to_owned(),
            Mode::Scope(scope) => {
                let i = app.items.get(app.selected);
                format!(
                    "always ({scope}): [e] exactly `{}`  [x] prefix `{}`  [Esc] back",
                    i.map(|i| i.ask.command.as_str()).unwrap_or_default(),
                    i.map(|i| i.ask.suggestion.as_str()).unwrap_or_default()
                )
            }
            Mode::Feedback(text) => format!("feedback for the agent (Enter sends, Esc back): {text}"),
        };
        f.render_widget(
            Paragraph::new(vec![Line::from(keys), Line::from(app.status.as_str())]),
            foot,
        );
    }
}
