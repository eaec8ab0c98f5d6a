//! Pointing a client's environment at running gateways (`aileron launch`).

use crate::Upstream;

/// What an agent's tree gets for the running `gateways` (upstream,
/// address): `PGHOST` and `PGPORT` naming the first (`PGHOSTADDR`, which
/// libpq prefers to `PGHOST`, taken out: `None`), and `DATABASE_URL`,
/// when the agent's names a gateway's server, rewritten to that gateway
/// (its user, database and options kept).
pub fn env(
    gateways: &[(&str, &str)],
    agent_env: &[(String, String)],
) -> Vec<(String, Option<String>)> {
    let Some((_, first)) = gateways.first() else {
        return Vec::new();
    };
    let (host, port) = split_address(first);
    let mut out = vec![
        ("PGHOST".to_owned(), Some(host.to_owned())),
        ("PGPORT".to_owned(), Some(port.to_owned())),
        ("PGHOSTADDR".to_owned(), None),
    ];
    let url = agent_env
        .iter()
        .find(|(k, _)| k == "DATABASE_URL")
        .map(|(_, v)| v.as_str());
    if let Some(url) = url
        && let Some((_, address)) = gateways.iter().find(|(up, _)| same_server(up, url))
        && let Some(rewritten) = with_authority(url, address)
    {
        out.push(("DATABASE_URL".to_owned(), Some(rewritten)));
    }
    out
}

/// `IP` and `PORT` of `IP:PORT` (an IPv6 address in brackets or not).
fn split_address(address: &str) -> (&str, &str) {
    let (host, port) = address.rsplit_once(':').unwrap_or((address, ""));
    (host.trim_start_matches('[').trim_end_matches(']'), port)
}

/// Whether two postgres:// URLs name one server (`localhost` is loopback).
fn same_server(a: &str, b: &str) -> bool {
    let loopback = |u: Upstream| match u {
        Upstream::Tcp { host, port } if host == "localhost" || host == "::1" => Upstream::Tcp {
            host: "127.0.0.1".into(),
            port,
        },
        other => other,
    };
    match (Upstream::parse(a), Upstream::parse(b)) {
        (Ok(a), Ok(b)) => loopback(a) == loopback(b),
        _ => false,
    }
}

/// `url` with its host and port replaced by `address` (user and password,
/// database and parameters kept).
fn with_authority(url: &str, address: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let userinfo = authority.rsplit_once('@').map(|(u, _)| u);
    Some(match userinfo {
        Some(u) => format!("{scheme}://{u}@{address}{tail}"),
        None => format!("{scheme}://{address}{tail}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_pointed_at_the_first_gateway() {
        let gws = [
            ("postgres://127.0.0.1:5432", "127.0.0.1:40001"),
            ("postgres://db.internal:5432", "127.0.0.1:40002"),
        ];
        let first = env(
            &gws,
            &[(
                "DATABASE_URL".into(),
                "postgres://app:s3cret@localhost/app?sslmode=disable".into(),
            )],
        );
        assert_eq!(
            first,
            [
                ("PGHOST".to_owned(), Some("127.0.0.1".to_owned())),
                ("PGPORT".to_owned(), Some("40001".to_owned())),
                ("PGHOSTADDR".to_owned(), None),
                (
                    "DATABASE_URL".to_owned(),
                    Some("postgres://app:s3cret@127.0.0.1:40001/app?sslmode=disable".to_owned())
                ),
            ]
        );
        // A URL to the second gateway's server is rewritten to that
        // gateway; one to another server is left alone.
        let second = env(
            &gws,
            &[(
                "DATABASE_URL".into(),
                "postgresql://u@db.internal:5432/x".into(),
            )],
        );
        assert_eq!(
            second[3].1.as_deref(),
            Some("postgresql://u@127.0.0.1:40002/x")
        );
        let other = env(
            &gws,
            &[("DATABASE_URL".into(), "postgres://other:5432/x".into())],
        );
        assert_eq!(other.len(), 3);
        assert!(env(&[], &[]).is_empty());
    }
}
