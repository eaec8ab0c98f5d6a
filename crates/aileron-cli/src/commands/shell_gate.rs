//! `aileron gate -- LINE` (hidden): what the DEBUG trap of an interactive
//! bash under `aileron launch` runs before each line typed into it. The
//! launch session decides the line as it decides a shim's (asking on the
//! terminal when it has to); exit 0 runs it, 1 skips it.

use aileron_session::Request;

pub fn run(line: &str) -> u8 {
    let Some(socket) = std::env::var_os("AILERON_SOCKET").filter(|s| !s.is_empty()) else {
        eprintln!("aileron: denied: no launch session to ask (AILERON_SOCKET is not set)");
        return 1;
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d.to_string_lossy().into_owned(),
        Err(e) => {
            eprintln!("aileron: denied: no working directory: {e}");
            return 1;
        }
    };
    let req = Request {
        line: line.to_owned(),
        cwd,
        adapter: Some("interactive".into()),
        ..Request::default()
    };
    match aileron_session::server::request(std::path::Path::new(&socket), &req) {
        Ok(r) if r.allow => 0,
        Ok(r) => {
            eprintln!("{}", r.message.as_deref().unwrap_or("aileron: denied"));
            1
        }
        Err(e) => {
            eprintln!("aileron: denied: {e}");
            1
        }
    }
}
