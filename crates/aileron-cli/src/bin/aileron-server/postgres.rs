//! `aileron proxy postgres`: the database gateway, on its own or for a
//! launch session.

use crate::gateway;
use aileron_cli::Error;
use aileron_postgres::{Config, Gateway, Origin, Upstream};
use std::io::Write;
use std::process::ExitCode;

pub struct Args {
    pub listen: String,
    pub options: gateway::Options,
    /// `postgres://HOST:PORT` of the real server.
    pub upstream: String,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let upstream = Upstream::parse(&args.upstream).map_err(|why| Error::BadUpstream { why })?;
    let started = match gateway::start(
        &args.listen,
        &args.options,
        aileron_postgres::ADAPTER,
        "the gateway",
    )? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let bound = started.bound;
    let gw = Gateway::new(Config {
        decide: started.decide,
        origin: Origin {
            cwd: started.cwd.to_string_lossy().into_owned(),
            session: started.session,
            agent: args.options.agent.clone(),
        },
        upstream: upstream.clone(),
    });
    // The first line says where: `aileron launch` reads it.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "aileron proxy postgres: listening on postgres://{bound} for {upstream}"
    );
    if args.options.session_socket.is_none() {
        let _ = writeln!(
            out,
            "  export PGHOST={} PGPORT={}",
            bound.ip(),
            bound.port()
        );
    }
    let _ = out.flush();
    drop(out);
    started
        .listening
        .serve(move |listener| std::sync::Arc::clone(&gw).serve(listener))?;
    Ok(ExitCode::SUCCESS)
}
