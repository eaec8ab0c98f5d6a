//! The database gateway against the same PostgreSQL reached directly, in
//! one run (issue 19): the latency a simple query gains through the
//! gateway (goal ≤ 0.3 ms at the median).
//!
//! The server is Debian's PostgreSQL, started for the bench on loopback
//! (as for the tests). The gateway runs on a runtime of its own with a
//! `Decider` as `aileron proxy postgres` builds it, under a policy with
//! rules about SQL;
//! each query is decided and written to the audit log, as in use. The
//! client (tokio-postgres on a current-thread runtime) keeps one
//! connection each way, so what differs between the two is the gateway.
//! The two take turns, query by query, and each one's median is printed
//! (the machine's load moves both alike); criterion then measures each.

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};

const POLICY: &str = "version: 1
default: allow
deny:
  - id: no-drop
    when: {type: sql.query, sql.verb: {in: [DROP, TRUNCATE]}}
ask:
  - id: users-writes
    when: {type: sql.query, sql.tables: {in: [users]}, sensitivity: {in: [write, mutate, destructive]}}
";

const QUERY: &str = "SELECT 1";

struct Bench {
    _env: support::Env,
    _gateway: tokio::runtime::Runtime,
    rt: tokio::runtime::Runtime,
    direct: tokio_postgres::Client,
    through: tokio_postgres::Client,
}

fn setup() -> Option<Bench> {
    let gateway = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let env = gateway.block_on(support::Env::start(POLICY))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let direct = rt.block_on(support::connect_to(env.port, &env.db));
    let through = rt.block_on(support::connect_to(env.addr.port(), &env.db));
    Some(Bench {
        _env: env,
        _gateway: gateway,
        rt,
        direct,
        through,
    })
}

impl Bench {
    fn query(&self, c: &tokio_postgres::Client) {
        self.rt.block_on(c.simple_query(QUERY)).unwrap();
    }
}

fn latency(c: &mut Criterion) {
    let Some(b) = setup() else {
        return;
    };
    // Warm both paths (the policy compiled and cached, connections hot).
    for _ in 0..200 {
        b.query(&b.direct);
        b.query(&b.through);
    }
    let runs = 3000;
    let (mut direct, mut through) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let t = Instant::now();
        b.query(&b.direct);
        direct.push(t.elapsed());
        let t = Instant::now();
        b.query(&b.through);
        through.push(t.elapsed());
    }
    let pct = |v: &mut Vec<Duration>, p: f64| {
        v.sort();
        v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let (d50, t50) = (pct(&mut direct, 0.5), pct(&mut through, 0.5));
    let (d90, t90) = (pct(&mut direct, 0.9), pct(&mut through, 0.9));
    println!("{QUERY:?}, {runs} interleaved queries each way:");
    println!(
        "  direct           p50 {:>7.1} µs   p90 {:>7.1} µs",
        us(d50),
        us(d90)
    );
    println!(
        "  through gateway  p50 {:>7.1} µs   p90 {:>7.1} µs",
        us(t50),
        us(t90)
    );
    println!(
        "  added            p50 {:>7.1} µs   (goal ≤ 300 µs)",
        us(t50) - us(d50)
    );
    let mut g = c.benchmark_group("simple query");
    g.bench_function("direct", |i| i.iter(|| b.query(&b.direct)));
    g.bench_function("through the gateway", |i| i.iter(|| b.query(&b.through)));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(50)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    targets = latency
}
criterion_main!(benches);
