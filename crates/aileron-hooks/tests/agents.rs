use aileron_hooks::{Agent, Environment};
use std::path::PathBuf;

#[test]
fn probe() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proj");
    let home = root.join("home");
    let data = root.join("data");
    for d in [&proj, &home, &data] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(
        proj.join("aileron.yaml"),
        std::env::var("POLICY").unwrap_or("version: 1\ndefault: allow\n".into()),
    )
    .unwrap();
    let env = Environment {
        load: aileron_config::LoadOptions {
            cwd: proj.clone(),
            policy_path: None,
            home: home.clone(),
            data_dir: data.clone(),
            user_settings: false,
            auto_profiles: false,
            run_tests: false,
        },
        socket: None,
        tty: root.join("no-tty").to_string_lossy().into_owned(),
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for agent in Agent::ALL {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(agent.name()))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f)
                .unwrap()
                .replace("/home/user/project", proj.to_str().unwrap())
                .replace("/home/user", home.to_str().unwrap());
            let r = aileron_hooks::run(agent, text.as_bytes(), &env);
            println!(
                "== {} {} exit={} stdout={} stderr={}",
                agent.name(),
                f.file_name().unwrap().to_string_lossy(),
                r.exit,
                r.stdout.trim(),
                r.stderr.trim()
            );
        }
    }
    let audit = std::fs::read_to_string(proj.join(".aileron/audit.jsonl")).unwrap_or_default();
    for l in audit.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        println!(
            "AUDIT {} {} {} {} {}",
            v["action"]["type"],
            v["action"]["summary"],
            v["decision"],
            v["rule"],
            serde_json::to_string(&v["action"]["facets"])
                .unwrap()
                .chars()
                .take(300)
                .collect::<String>()
        );
    }
}
