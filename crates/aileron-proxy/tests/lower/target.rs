//! Request targets: what the proxy connects to is what the policy sees,
//! whatever spelling the client used, and what parsers could read two
//! ways is refused.

use super::target;
use aileron_proxy::lower::{
    BadTarget, Scheme, Target, host_header_agrees, origin_target, parse_target,
};
use http::Method;

fn get(t: &str) -> Target {
    target(&Method::GET, t)
}

fn connect(t: &str) -> Target {
    target(&Method::CONNECT, t)
}

#[track_caller]
fn refused(method: &Method, t: &str) -> BadTarget {
    match parse_target(method, t) {
        Ok(ok) => panic!("{t:?} is accepted: {ok:?}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains(['\n', '\r']), "one line: {msg:?}");
            e
        }
    }
}

/// Each of `targets` is refused, for the reason `is` names.
#[track_caller]
fn refused_all(method: &Method, targets: &[&str], is: impl Fn(&BadTarget) -> bool) {
    for t in targets {
        let e = refused(method, t);
        assert!(is(&e), "{t:?}: {e:?}");
    }
}

/// (host, port) of a GET's target.
fn host_port(t: &str) -> (String, u16) {
    let t = get(t);
    (t.host, t.port)
}

#[test]
fn absolute_form_gives_scheme_host_port_and_path() {
    let t = get("https://API.GitHub.com/repos/x?per_page=5");
    assert_eq!(
        t,
        Target {
            scheme: Scheme::Https,
            host: "api.github.com".into(),
            port: 443,
            path_and_query: "/repos/x?per_page=5".into(),
            userinfo: false,
        }
    );
    assert_eq!(t.url(), "https://api.github.com/repos/x?per_page=5");
    assert_eq!(t.path(), "/repos/x");
    assert_eq!(t.query(), Some("per_page=5"));
    assert_eq!(t.authority(), "api.github.com:443");
    assert_eq!(t.host_header(), "api.github.com");
    // No path is `/`; a query alone gets one.
    assert_eq!(get("http://example.com").path_and_query, "/");
    assert_eq!(get("http://example.com?a=b").path_and_query, "/?a=b");
    assert_eq!(get("http://example.com/").query(), None);
}

#[test]
fn default_ports_per_scheme_and_explicit_ones() {
    for (url, scheme, port, canonical) in [
        ("http://x.test/", Scheme::Http, 80, "http://x.test/"),
        ("https://x.test/", Scheme::Https, 443, "https://x.test/"),
        ("ws://x.test/", Scheme::Ws, 80, "ws://x.test/"),
        ("wss://x.test/", Scheme::Wss, 443, "wss://x.test/"),
        ("HTTP://x.test:80/", Scheme::Http, 80, "http://x.test/"),
        ("https://x.test:443/", Scheme::Https, 443, "https://x.test/"),
        (
            "http://x.test:443/",
            Scheme::Http,
            443,
            "http://x.test:443/",
        ),
        (
            "https://x.test:8443/",
            Scheme::Https,
            8443,
            "https://x.test:8443/",
        ),
        ("http://x.test:0080/", Scheme::Http, 80, "http://x.test/"),
        (
            "http://x.test:65535/",
            Scheme::Http,
            65535,
            "http://x.test:65535/",
        ),
    ] {
        let t = get(url);
        assert_eq!((t.scheme, t.port), (scheme, port), "{url}");
        assert_eq!(t.url(), canonical, "{url}");
    }
}

#[test]
fn userinfo_is_dropped_from_the_target_and_reported() {
    // The classic: the host is what follows the last `@`.
    let t = get("http://a@b/");
    assert_eq!((t.host.as_str(), t.userinfo), ("b", true));
    assert_eq!(t.url(), "http://b/");
    let t = get("https://user:p%40ss@api.example.com:8443/x");
    assert_eq!(t.host, "api.example.com");
    assert_eq!(t.port, 8443);
    assert!(t.userinfo);
    assert_eq!(t.url(), "https://api.example.com:8443/x");
    // What looks like a host and port before the `@` is the user.
    assert_eq!(
        host_port("http://github.com:443@evil.test/"),
        ("evil.test".into(), 80)
    );
    assert!(!get("http://b/").userinfo);
    // An `@` in the path is not userinfo.
    let t = get("http://b/x@y");
    assert_eq!((t.host.as_str(), t.userinfo), ("b", false));
    // Two `@`: parsers take the first or the last; neither is guessed.
    assert!(matches!(
        refused(&Method::GET, "http://a@b@c/"),
        BadTarget::AmbiguousUserinfo(_)
    ));
}

#[test]
fn percent_encoded_hosts_are_decoded_as_browsers_do() {
    for (url, host) in [
        ("http://%65xample.com/", "example.com"),
        ("http://%45XAMPLE.%63om/", "example.com"),
        ("http://b%C3%BCcher.example/", "xn--bcher-kva.example"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1"),
    ] {
        assert_eq!(get(url).host, host, "{url}");
    }
    // Decoded into a character no host has: refused, not cut.
    refused_all(
        &Method::GET,
        &[
            "http://evil.test%2fgood.test/",
            "http://good.test%40evil.test/",
            "http://good.test%3a80/",
            "http://a%00b/",
            "http://a%20b/",
        ],
        |e| matches!(e, BadTarget::BadHost { .. }),
    );
}

#[test]
fn ipv6_literals_lose_their_brackets_and_are_compressed() {
    let t = get("http://[::1]:8080/");
    assert_eq!((t.host.as_str(), t.port), ("::1", 8080));
    assert_eq!(t.url(), "http://[::1]:8080/");
    assert_eq!(t.authority(), "[::1]:8080");
    assert_eq!(t.host_header(), "[::1]:8080");
    assert_eq!(host_port("http://[0:0:0:0:0:0:0:1]/").0, "::1");
    assert_eq!(host_port("http://[2001:DB8::0:1]/").0, "2001:db8::1");
    // An IPv4-mapped address is the IPv4 host, in either spelling.
    assert_eq!(host_port("http://[::ffff:127.0.0.1]/").0, "127.0.0.1");
    assert_eq!(host_port("http://[::ffff:7f00:1]/").0, "127.0.0.1");
    assert!(matches!(
        refused(&Method::GET, "http://::1/"),
        BadTarget::UnbracketedIpv6(_)
    ));
    refused_all(
        &Method::GET,
        &["http://[1::2::3]/", "http://[::1/", "http://[::1]x/"],
        |e| matches!(e, BadTarget::BadHost { .. }),
    );
}

#[test]
fn idna_hostnames_become_punycode() {
    for (url, host) in [
        ("http://bücher.example/", "xn--bcher-kva.example"),
        ("http://BÜCHER.example/", "xn--bcher-kva.example"),
        ("http://xn--bcher-kva.example/", "xn--bcher-kva.example"),
        // Full-width letters are the ASCII ones (UTS 46 mapping).
        ("http://ｅｘａｍｐｌｅ.com/", "example.com"),
        ("http://例え.テスト/", "xn--r8jz45g.xn--zckzah"),
    ] {
        assert_eq!(get(url).host, host, "{url}");
    }
    assert_eq!(connect("bücher.example:443").host, "xn--bcher-kva.example");
}

#[test]
fn ipv4_in_any_number_form_is_written_dotted() {
    for url in [
        "http://127.0.0.1/",
        "http://0x7f.1/",
        "http://0x7F.0.0.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://127.0.0.1./",
        "http://%30x7f.1/",
    ] {
        assert_eq!(host_port(url).0, "127.0.0.1", "{url}");
    }
    assert_eq!(connect("0x7f.1:22").host, "127.0.0.1");
    let bad = [
        "http://256.0.0.1/",
        "http://1.2.3.4.5/",
        "http://0x100000000/",
    ];
    refused_all(&Method::GET, &bad, |e| {
        matches!(e, BadTarget::BadHost { .. })
    });
}

#[test]
fn host_names_are_held_to_what_dns_names() {
    assert_eq!(host_port("http://Example.COM./").0, "example.com");
    assert_eq!(host_port("http://my_host.internal/").0, "my_host.internal");
    let bad = [
        "http://a..b/",
        "http://.a/",
        "http://exa*mple.com/",
        "http://a!b/",
    ];
    refused_all(&Method::GET, &bad, |e| {
        matches!(e, BadTarget::BadHost { .. })
    });
    let empty = ["http:///x", "http://./", "http://user@/", "http://:80/"];
    refused_all(&Method::GET, &empty, |e| {
        matches!(e, BadTarget::EmptyHost(_))
    });
}

#[test]
fn bad_ports_are_refused() {
    let bad = [
        "http://x.test:/",
        "http://x.test:0/",
        "http://x.test:65536/",
        "http://x.test:99999/",
        "http://x.test:123456/",
        "http://x.test:+80/",
        "http://x.test:8o/",
        "http://x.test:-1/",
        "http://x.test:%38%30/",
        "http://[::1]:/",
    ];
    refused_all(&Method::GET, &bad, |e| {
        matches!(e, BadTarget::BadPort { .. })
    });
    refused_all(
        &Method::CONNECT,
        &["x.test:0", "x.test:", "x.test:65536", "x.test:https"],
        |e| matches!(e, BadTarget::BadPort { .. }),
    );
    assert_eq!(
        refused(&Method::GET, "http://x.test:0/").to_string(),
        "bad port `0` in `http://x.test:0/`: a port is a number from 1 to 65535"
    );
}

#[test]
fn origin_form_is_a_request_to_the_proxy_itself() {
    for t in ["/", "/path?q=1", "*"] {
        assert_eq!(refused(&Method::GET, t), BadTarget::OriginForm, "{t}");
    }
    assert!(
        BadTarget::OriginForm
            .to_string()
            .starts_with("origin-form request target (`/path`): a request to the proxy itself")
    );
    // Authority-form is CONNECT's only; a bare word is no URL.
    let bad = ["example.com:80", "example.com", "http:/x", "http:x"];
    refused_all(&Method::GET, &bad, |e| {
        matches!(e, BadTarget::NotAbsolute(_))
    });
    assert_eq!(refused(&Method::GET, ""), BadTarget::Empty);
}

#[test]
fn unknown_schemes_are_refused() {
    for (t, scheme) in [
        ("ftp://x.test/", "`ftp`"),
        ("file://x.test/etc/passwd", "`file`"),
        ("gopher://x.test/", "`gopher`"),
        ("httpx://x.test/", "`httpx`"),
    ] {
        assert_eq!(
            refused(&Method::GET, t),
            BadTarget::UnknownScheme(scheme.into())
        );
    }
    assert_eq!(
        refused(&Method::GET, "ftp://x/").to_string(),
        "unsupported scheme `ftp`: http, https, ws and wss are forwarded"
    );
}

#[test]
fn spaces_controls_backslashes_and_fragments_are_refused() {
    for (t, what) in [
        ("http://x.test/a b", "a space"),
        ("http://x.test/a\tb", "a control character"),
        ("http://x.test/a\nb", "a control character"),
        ("http://x.test/a\rb", "a control character"),
        ("http://x.test/a\0b", "a control character"),
        ("http://x.test/a\u{7f}b", "a control character"),
        ("http://x.test/a\u{85}b", "a control character"),
        ("http://x.test/a\u{a0}b", "a space"),
        (" http://x.test/", "a space"),
        ("http://x.test/ ", "a space"),
        // A `/` to browsers, a character of the user's name to others.
        ("http://evil.test\\@good.test/", "a backslash"),
        ("http://x.test/p#frag", "a fragment (`#`)"),
        ("http://x.test#@evil.test/", "a fragment (`#`)"),
    ] {
        match refused(&Method::GET, t) {
            BadTarget::ForbiddenChar { what: w, .. } => assert_eq!(w, what, "{t:?}"),
            e => panic!("{t:?}: {e:?}"),
        }
    }
    assert_eq!(
        refused(&Method::GET, "http://x.test/a\nb").to_string(),
        "request target `http://x.test/a\\nb` has a control character at byte 15"
    );
    assert!(matches!(
        refused(&Method::CONNECT, "x.test:443 "),
        BadTarget::ForbiddenChar { .. }
    ));
}

#[test]
fn paths_are_normalised_as_servers_resolve_them() {
    for (url, pq) in [
        ("http://x/a/../b", "/b"),
        ("http://x/a/./b/", "/a/b/"),
        ("http://x/a/%2e%2e/b", "/b"),
        ("http://x/a/%2E./b", "/b"),
        ("http://x/../../etc/passwd", "/etc/passwd"),
        // Escaped unreserved characters are the characters; others keep
        // their escape, in upper case.
        ("http://x/%7euser/%72epos", "/~user/repos"),
        ("http://x/a%2fb%3a", "/a%2Fb%3A"),
        ("http://x/?q=%41%2b%2B", "/?q=A%2B%2B"),
        ("http://x/caf%C3%A9", "/caf%C3%A9"),
        ("http://x/café", "/caf%C3%A9"),
    ] {
        assert_eq!(get(url).path_and_query, pq, "{url}");
    }
}

#[test]
fn connect_takes_host_and_port_only() {
    let t = connect("Example.com:443");
    assert_eq!(
        t,
        Target {
            scheme: Scheme::Https,
            host: "example.com".into(),
            port: 443,
            path_and_query: String::new(),
            userinfo: false,
        }
    );
    assert_eq!(t.url(), "https://example.com");
    assert_eq!(t.path(), "");
    let t = connect("[::1]:8443");
    assert_eq!((t.host.as_str(), t.port), ("::1", 8443));
    assert_eq!(t.authority(), "[::1]:8443");
    assert_eq!(t.url(), "https://[::1]:8443");
    for (t, bad) in [
        ("example.com:443/x", "path"),
        ("example.com:443?x", "path"),
        ("/example.com:443", "path"),
        ("http://example.com:443", "url"),
        ("https://example.com", "url"),
        ("user@example.com:443", "user"),
        ("example.com", "port"),
        ("[::1]", "port"),
        ("::1:443", "ipv6"),
        ("", "empty"),
    ] {
        let e = refused(&Method::CONNECT, t);
        let ok = match bad {
            "path" => matches!(e, BadTarget::ConnectPath(_)),
            "url" => matches!(e, BadTarget::ConnectUrl(_)),
            "user" => matches!(e, BadTarget::ConnectUserinfo(_)),
            "port" => matches!(e, BadTarget::ConnectNoPort(_)),
            "ipv6" => matches!(e, BadTarget::UnbracketedIpv6(_)),
            _ => e == BadTarget::Empty,
        };
        assert!(ok, "{t}: {e:?}");
    }
    assert_eq!(
        refused(&Method::CONNECT, "example.com:443/x").to_string(),
        "CONNECT target `example.com:443/x` has a path; CONNECT takes host:port only"
    );
}

#[test]
fn host_headers_agree_after_normalisation() {
    let t = get("http://example.com/x");
    for h in [
        "example.com",
        "EXAMPLE.com",
        "example.com.",
        "example.com:80",
        "%65xample.com",
    ] {
        assert!(host_header_agrees(&t, h), "{h}");
    }
    for h in [
        "evil.test",
        "example.com:8080",
        "example.com:",
        "a@example.com",
        "example.com/x",
        "",
        "example.com x",
    ] {
        assert!(!host_header_agrees(&t, h), "{h}");
    }
    let t = get("http://[::1]:8080/");
    assert!(host_header_agrees(&t, "[::1]:8080"));
    assert!(host_header_agrees(&t, "[0::1]:8080"));
    assert!(!host_header_agrees(&t, "[::1]"));
    assert!(!host_header_agrees(&t, "::1:8080"));
    let t = get("http://0x7f.1/");
    assert!(host_header_agrees(&t, "127.0.0.1"));
    assert!(host_header_agrees(&t, "2130706433:80"));
}

#[test]
fn requests_in_a_tunnel_go_to_its_host_and_port() {
    let tunnel = connect("api.example.com:443");
    let t = origin_target(&tunnel, "/v1/x/../y?q=1", Some("api.example.com")).unwrap();
    assert_eq!(
        t,
        Target {
            scheme: Scheme::Https,
            host: "api.example.com".into(),
            port: 443,
            path_and_query: "/v1/y?q=1".into(),
            userinfo: false,
        }
    );
    // No Host (HTTP/2 gives :authority instead, or nothing), or the port
    // written out.
    assert_eq!(
        origin_target(&tunnel, "/", None).unwrap().path_and_query,
        "/"
    );
    assert!(origin_target(&tunnel, "/", Some("API.example.com:443")).is_ok());
    // Absolute-form, as HTTP/2 requests arrive, naming the tunnel's origin.
    let t = origin_target(&tunnel, "https://api.example.com/v1/z", None).unwrap();
    assert_eq!(t.url(), "https://api.example.com/v1/z");
    let t = origin_target(
        &tunnel,
        "https://api.example.com:443/v1/z",
        Some("api.example.com"),
    );
    assert_eq!(t.unwrap().path(), "/v1/z");
    // Another port: written in the Host header, and only that one.
    let other = connect("api.example.com:8443");
    assert!(origin_target(&other, "/", Some("api.example.com:8443")).is_ok());
    assert!(matches!(
        origin_target(&other, "/", Some("api.example.com")),
        Err(BadTarget::HostMismatch { .. })
    ));
}

#[test]
fn a_host_header_or_url_naming_another_host_in_a_tunnel_is_domain_fronting() {
    let tunnel = connect("allowed.example.com:443");
    for h in [
        "evil.test",
        "evil.test:443",
        "allowed.example.com:8443",
        "allowed.example.com.evil.test",
    ] {
        assert!(
            matches!(
                origin_target(&tunnel, "/", Some(h)),
                Err(BadTarget::HostMismatch { .. })
            ),
            "{h}"
        );
    }
    assert_eq!(
        origin_target(&tunnel, "/", Some("evil.test"))
            .unwrap_err()
            .to_string(),
        "the Host header names `evil.test`, but the request goes to allowed.example.com:443"
    );
    for bad in ["a@evil.test", "evil.test/x", "", "[::1"] {
        assert!(
            matches!(
                origin_target(&tunnel, "/", Some(bad)),
                Err(BadTarget::BadHostHeader(_))
            ),
            "{bad}"
        );
    }
    for url in [
        "https://evil.test/",
        "https://allowed.example.com:8443/",
        "http://allowed.example.com:443/",
    ] {
        assert!(
            matches!(
                origin_target(&tunnel, url, None),
                Err(BadTarget::TunnelMismatch { .. })
            ),
            "{url}"
        );
    }
    // The URL agrees, the Host does not.
    assert!(matches!(
        origin_target(&tunnel, "https://allowed.example.com/", Some("evil.test")),
        Err(BadTarget::HostMismatch { .. })
    ));
    // Neither a path nor a URL; characters refused as on the request line.
    assert!(matches!(
        origin_target(&tunnel, "*", None),
        Err(BadTarget::NotOriginForm(_))
    ));
    assert!(matches!(
        origin_target(&tunnel, "/a b", None),
        Err(BadTarget::ForbiddenChar { .. })
    ));
    assert!(matches!(
        origin_target(&tunnel, "/a\\..\\b", None),
        Err(BadTarget::ForbiddenChar { .. })
    ));
}

#[test]
fn messages_quote_the_request_escaped_and_short() {
    let long = format!("http://x.test/{}\n", "a".repeat(500));
    let msg = refused(&Method::GET, &long).to_string();
    assert!(msg.len() < 300, "{msg}");
    assert!(msg.contains('…'), "{msg}");
    let msg = refused(&Method::GET, "http://a@b@c/").to_string();
    assert_eq!(
        msg,
        "`http://a@b@c/` has more than one `@`: which part is the host is ambiguous"
    );
}
