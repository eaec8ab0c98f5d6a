//! Masking, pattern by pattern: what must be masked, what must stay.

use aileron_audit::{AuditAction, AuditRecord, Masker};
use serde_json::json;

const GHP: &str = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5";

fn m(s: &str) -> String {
    Masker::new(vec![]).mask(s)
}

#[test]
fn credentials_in_commands_and_urls_are_masked() {
    let cases: &[(&str, &str)] = &[
        // URL userinfo
        (
            "git clone https://user:hunter2@github.com/o/r.git",
            "git clone https://user:***@github.com/o/r.git",
        ),
        (
            "psql postgres://app:s3cr%2Ft@db.internal:5432/prod",
            "psql postgres://app:***@db.internal:5432/prod",
        ),
        (
            "mongosh 'mongodb+srv://admin:pw123456@cluster0.x.net/db'",
            "mongosh 'mongodb+srv://admin:***@cluster0.x.net/db'",
        ),
        ("https://:onlypass@host/x", "https://:***@host/x"),
        // query parameters
        (
            "curl 'https://api.x/v1?token=abc123&page=2'",
            "curl 'https://api.x/v1?token=***&page=2'",
        ),
        (
            "curl https://api.x/v1?page=2&access_token=ya29.a0Af",
            "curl https://api.x/v1?page=2&access_token=***",
        ),
        ("https://h/p?key=AbC&x=1", "https://h/p?key=***&x=1"),
        ("https://h/p?api_key=zzz", "https://h/p?api_key=***"),
        ("https://h/p?apikey=zzz", "https://h/p?apikey=***"),
        ("https://h/p?secret=zzz#frag", "https://h/p?secret=***#frag"),
        ("https://h/p?password=zzz", "https://h/p?password=***"),
        ("https://h/p?passwd=zzz", "https://h/p?passwd=***"),
        // a query string on its own (the trigger anchored at the start)
        ("sig=0a1b2c&x=1", "sig=***&x=1"),
        (
            "https://b.s3.amazonaws.com/o?X-Amz-Signature=0a1b2c&X-Amz-Expires=60",
            "https://b.s3.amazonaws.com/o?X-Amz-Signature=***&X-Amz-Expires=60",
        ),
        (
            "https://acct.blob.core.windows.net/c/b?sv=2021&sig=Zm9vYmFy%3D",
            "https://acct.blob.core.windows.net/c/b?sv=2021&sig=***",
        ),
        ("https://h/p?signature=abc", "https://h/p?signature=***"),
        (
            "https://h/cb?auth=abc&state=1",
            "https://h/cb?auth=***&state=1",
        ),
        (
            "https://h/cb?code=4%2F0Ad&state=xyz",
            "https://h/cb?code=***&state=xyz",
        ),
        // Authorization headers
        (
            "curl -H 'Authorization: Bearer abc.def.ghi' https://api.x/y",
            "curl -H 'Authorization: Bearer ***' https://api.x/y",
        ),
        (
            "curl -H \"Authorization: Basic dXNlcjpwYXNz\" https://api.x/y",
            "curl -H \"Authorization: Basic ***\" https://api.x/y",
        ),
        (
            "curl -H 'authorization:token 0123456789abcdef' https://api.github.com",
            "curl -H 'authorization:token ***' https://api.github.com",
        ),
        (
            "curl -H 'Authorization: 0123456789abcdef' https://x",
            "curl -H 'Authorization: ***' https://x",
        ),
        (
            "curl --proxy-header 'Proxy-Authorization: Basic Zm9vOmJhcg==' https://x",
            "curl --proxy-header 'Proxy-Authorization: Basic ***' https://x",
        ),
        (
            r#"http POST api.x/y '{"headers": {"auth": "Bearer Zm9vYmFyYmF6"}}'"#,
            r#"http POST api.x/y '{"headers": {"auth": "Bearer ***"}}'"#,
        ),
        // other secret headers
        (
            "curl -H 'X-Api-Key: k3y-v4lue' https://x",
            "curl -H 'X-Api-Key: ***' https://x",
        ),
        (
            "curl --header 'PRIVATE-TOKEN: abcdef' https://gitlab.x/api",
            "curl --header 'PRIVATE-TOKEN: ***' https://gitlab.x/api",
        ),
        (
            "curl -H 'Cookie: session=abc; csrf=def' https://x",
            "curl -H 'Cookie: ***' https://x",
        ),
        // flags
        (
            "mytool --password hunter2 --verbose",
            "mytool --password *** --verbose",
        ),
        ("mytool --password=hunter2", "mytool --password=***"),
        ("mytool --password 'hunter 2'", "mytool --password '***'"),
        ("gh auth login --token abcdef", "gh auth login --token ***"),
        ("tool --api-key=abcdef run", "tool --api-key=*** run"),
        ("tool --api-key abcdef run", "tool --api-key *** run"),
        (
            "vault write x --secret \"s3 cr3t\"",
            "vault write x --secret \"***\"",
        ),
        (
            "wget --http-password=pw https://x",
            "wget --http-password=*** https://x",
        ),
        (
            "docker login -u me --password-stdin",
            "docker login -u me --password-stdin",
        ),
        (
            "npm publish --auth-token tok123",
            "npm publish --auth-token ***",
        ),
        // mysql -p
        (
            "mysql -u root -p'secret' mydb",
            "mysql -u root -p'***' mydb",
        ),
        ("mysql -uroot -psecret mydb", "mysql -uroot -p*** mydb"),
        (
            "mysqldump -h db -P 3306 -u u -p\"pw\" db",
            "mysqldump -h db -P 3306 -u u -p\"***\" db",
        ),
        ("mysql -u root -p mydb", "mysql -u root -p mydb"),
        // other programs
        ("sshpass -p 'hunter2' ssh host", "sshpass -p '***' ssh host"),
        (
            "curl -u alice:wonderland https://x",
            "curl -u alice:*** https://x",
        ),
        (
            "curl --user 'bob:b0b' https://x",
            "curl --user 'bob:***' https://x",
        ),
        (
            "openssl enc -aes256 -pass pass:hunter2 -in f",
            "openssl enc -aes256 -pass pass:*** -in f",
        ),
        // assignments
        (
            "GITHUB_TOKEN=abc123 gh pr list",
            "GITHUB_TOKEN=*** gh pr list",
        ),
        ("export API_KEY=\"abc 123\"", "export API_KEY=\"***\""),
        ("export OPENAI_APIKEY='k'", "export OPENAI_APIKEY='***'"),
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG aws s3 ls",
            "AWS_SECRET_ACCESS_KEY=*** aws s3 ls",
        ),
        (
            "AWS_ACCESS_KEY=foo aws s3 ls",
            "AWS_ACCESS_KEY=*** aws s3 ls",
        ),
        ("PGPASSWORD=pw psql -h db", "PGPASSWORD=*** psql -h db"),
        ("MYSQL_PASSWD=pw mysql", "MYSQL_PASSWD=*** mysql"),
        (
            "SSH_PRIVATE_KEY=abc ./deploy",
            "SSH_PRIVATE_KEY=*** ./deploy",
        ),
        (
            "DJANGO_SECRET_KEY=x python manage.py",
            "DJANGO_SECRET_KEY=*** python manage.py",
        ),
        (
            "docker run -e DB_PASSWORD=pw -e MODE=prod app",
            "docker run -e DB_PASSWORD=*** -e MODE=prod app",
        ),
        ("A_TOKEN=x B_SECRET=y cmd", "A_TOKEN=*** B_SECRET=*** cmd"),
        ("password = 'hunter2'", "password = '***'"),
        (
            "kubectl create secret generic db --from-literal=password=hunter2",
            "kubectl create secret generic db --from-literal=password=***",
        ),
        (
            "keytool -list -storepass changeit",
            "keytool -list -storepass ***",
        ),
        ("STOREPASS=changeit ./sign", "STOREPASS=*** ./sign"),
        ("note: fix: token: abc123", "note: fix: token: ***"),
        (
            "ssh-keygen -t ed25519 -N 'pass phrase' -f k",
            "ssh-keygen -t ed25519 -N '***' -f k",
        ),
        (
            "docker login -u user -p hunter2 registry.x",
            "docker login -u user -p *** registry.x",
        ),
        (
            "az login --service-principal -u app -p Sup3r --tenant t",
            "az login --service-principal -u app -p *** --tenant t",
        ),
        (
            "redis-cli -h r -a hunter2 ping",
            "redis-cli -h r -a *** ping",
        ),
        (
            "gh secret set MY_SECRET --body \"value123\"",
            "gh secret set MY_SECRET --body \"***\"",
        ),
        (
            "npm config set //registry.npmjs.org/:_authToken=abcdef",
            "npm config set //registry.npmjs.org/:_authToken=***",
        ),
        (
            "curl -d 'user=a&password=b' https://x",
            "curl -d 'user=a&password=***' https://x",
        ),
        // JSON members
        (
            r#"curl -d '{"user": "a", "password": "hunter2"}' https://x"#,
            r#"curl -d '{"user": "a", "password": "***"}' https://x"#,
        ),
        (
            r#"{"client_secret":"abc\"def","id":1}"#,
            r#"{"client_secret":"***","id":1}"#,
        ),
        // token shapes
        (&*format!("echo {GHP}"), "echo ghp_***"),
        ("gho_0123456789abcdefghijABCDEFGHIJ012345", "gho_***"),
        (
            "x ghs_0123456789abcdefghijABCDEFGHIJ012345 y",
            "x ghs_*** y",
        ),
        ("ghu_0123456789abcdefghijABCDEFGHIJ012345", "ghu_***"),
        ("ghr_0123456789abcdefghijABCDEFGHIJ012345", "ghr_***"),
        (
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS",
            "github_pat_***",
        ),
        ("key sk-AbCdEf0123456789GhIjKlMn", "key sk-***"),
        ("sk-proj-AbC_dEf-0123456789GhIjKlMnOpQr", "sk-***"),
        ("sk-ant-api03-AbCdEf0123456789-_xyz", "sk-ant-***"),
        ("xoxb-1234567890-abcdefghij", "xoxb-***"),
        ("xoxp-1234567890-abcdefghij", "xoxp-***"),
        (
            "aws configure set id AKIAIOSFODNN7EXAMPLE",
            "aws configure set id AKIA***",
        ),
        (
            "curl api.x -d t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "curl api.x -d t=***",
        ),
        ("glpat-abcdefghij0123456789", "glpat-***"),
        ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_***"),
        ("sk_live_abcdefghij0123456789", "sk_live_***"),
        ("AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIza***"),
        ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_***"),
        (
            "curl https://hooks.slack.com/services/T000/B000/XXXX",
            "curl https://hooks.slack.com/services/***",
        ),
        // PEM
        (
            "printf '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\n' > k",
            "printf '-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----\n' > k",
        ),
        (
            "cat <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
            "cat <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----***",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
            "-----BEGIN PRIVATE KEY-----***-----END PRIVATE KEY-----",
        ),
        // several at once
        (
            "GITHUB_TOKEN=abc curl -H 'Authorization: Bearer xyz123' 'https://u:p@h/x?token=t'",
            "GITHUB_TOKEN=*** curl -H 'Authorization: Bearer ***' 'https://u:***@h/x?token=***'",
        ),
    ];
    let masker = Masker::new(vec![]);
    let mut failures = Vec::new();
    for (input, want) in cases {
        let got = masker.mask(input);
        if got != *want {
            failures.push(format!("  {input:?}\n    got  {got:?}\n    want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}

#[test]
fn ordinary_commands_are_unchanged() {
    for s in [
        "git status",
        "cargo test --all",
        "ls -la /tmp",
        "git push --force origin main",
        "curl https://api.github.com/repos/o/r/pulls?state=open&per_page=100",
        "curl -X POST https://example.com:8443/path/to/x?q=rust#top",
        "git clone git@github.com:o/r.git",
        "ssh -p 2222 user@host",
        "mkdir -p /tmp/a/b && cp -pR src dst",
        "docker run -u 1000:1000 -p 8080:80 nginx",
        "sort -u -k 2 file.txt",
        "mysql -u root -p",
        "psql --no-password -h localhost db",
        "python train.py --max-tokens 4096 MAX_TOKENS=100",
        "export PATH=/usr/bin:$PATH HOME=/home/u",
        "GITHUB_TOKEN=$GH_TOKEN gh pr list",
        "curl -H \"Authorization: Bearer $TOKEN\" https://api.x/y",
        "curl -H 'Accept: application/json' https://api.x/y",
        "echo 'Basic authentication uses a bearer token'",
        "git checkout -b sk-feature-branch-for-the-new-login",
        "git commit -m 'fix: token refresh'",
        "cat ~/.config/token.json",
        "TOKEN_FILE=/run/secrets/t ./app",
        "export TOKEN_TTL=3600 AWS_ACCESS_KEY_ID=$ID SECRET_NAME=prod/db",
        "ssh-keygen -t ed25519 -f ~/.ssh/id -N ''",
        "docker run -p 8080:80 nginx; docker login registry.x",
        "openssl req -new -key server.key -out server.csr",
        "echo $PW | docker login --password-stdin registry.example.com",
        "ssh-add -t 3600 ~/.ssh/key; gpg --passphrase-file pf -d x.gpg",
        "python -c 'd = {\"key\": 1}; print(d[\"key\"])'",
        "jq '.items[] | {name: .name, key: .key}' data.json",
        "npm install --save-dev typescript",
        "grep -rn 'password' src/",
        "kubectl get secret my-secret -o yaml",
        "rm -rf target/",
        "",
    ] {
        assert_eq!(m(s), s, "changed: {s:?}");
    }
}

#[test]
fn scrubbed_values_are_masked_everywhere() {
    let masker = Masker::new(vec![
        "s3cr3t-value".into(),
        "abc".into(), // too short to mask
        "s3cr3t-value-longer".into(),
        String::new(),
    ]);
    assert_eq!(
        masker.mask("echo s3cr3t-value | tee x; echo s3cr3t-value-longer; echo abc"),
        "echo *** | tee x; echo ***; echo abc"
    );
    assert_eq!(masker.mask("prefixs3cr3t-valuesuffix"), "prefix***suffix");
    // Regex metacharacters in a value are literal.
    let masker = Masker::new(vec!["a.b*c+d".into()]);
    assert_eq!(masker.mask("x a.b*c+d aXbbcd"), "x *** aXbbcd");
    // Debug output does not reveal the values.
    assert!(!format!("{masker:?}").contains("a.b*c+d"));
}

#[test]
fn records_are_masked_in_summary_reason_and_facets() {
    let masker = Masker::new(vec!["hunter2-pw".into(), "424242".into()]);
    let rec = AuditRecord {
        time: "2026-11-22T10:00:00Z".into(),
        session: Some("s-1".into()),
        agent: None,
        adapter: "shim".into(),
        cwd: Some("/home/u/hunter2-pw".into()),
        action: AuditAction {
            id: "a1".into(),
            kind: "shell.exec".into(),
            summary: "curl -u me:hunter2-pw https://x".into(),
            facets: json!({
                "shell": {
                    "command": "curl -u me:hunter2-pw https://x",
                    "argv": ["curl", "--token", "plain-tok", "-u", "me:pass", "--password=pw", "-X", "GET", "https://x"],
                    "env_changes": {"GITHUB_TOKEN": "abc", "MODE": "fast", "MAX_TOKENS": "100"},
                },
                "http": {
                    "url": "https://u:p@h/x?sig=1",
                    "headers": {"Authorization": "Bearer tok123", "X-Api-Key": "k", "Accept": "json"},
                    "port": 424242,
                },
                "mcp": {"arguments": {"nested": [{"password": "pw"}, "ok", {"list": ["GITHUB_TOKEN=x"]}], "count": 3}},
                "sshpass": ["sshpass", "-p", "pw", "ssh", "h"],
                "argvs": [
                    ["/usr/bin/mysql", "-uroot", "-psecret", "db"],
                    ["mysql", "-u", "root", "-p", "db"],
                    ["docker", "login", "-u", "me", "-p", "pw", "reg"],
                    ["docker", "run", "-p", "80:80", "img"],
                    ["curl", "-uuser:pw", "x"],
                    ["ssh-keygen", "-t", "ed25519", "-N", "phrase"],
                    ["gh", "secret", "set", "X", "--body", "val"],
                    ["tool", "--no-password", "-v", "--api-key", "$KEY"],
                ],
            })
            .as_object()
            .unwrap()
            .clone(),
        },
        decision: "allow".into(),
        outcome: None,
        source: "static".into(),
        rule: Some("r".into()),
        reason: "allowed with hunter2-pw".into(),
        approver: None,
        latency_us: 1,
        judge: None,
    };
    let got = rec.masked(&masker);
    assert_eq!(got.action.summary, "curl -u me:*** https://x");
    assert_eq!(got.reason, "allowed with ***");
    assert_eq!(got.cwd.as_deref(), Some("/home/u/***"));
    let want = json!({
        "shell": {
            "command": "curl -u me:*** https://x",
            "argv": ["curl", "--token", "***", "-u", "me:***", "--password=***", "-X", "GET", "https://x"],
            "env_changes": {"GITHUB_TOKEN": "***", "MODE": "fast", "MAX_TOKENS": "100"},
        },
        "http": {
            "url": "https://u:***@h/x?sig=***",
            "headers": {"Authorization": "Bearer ***", "X-Api-Key": "***", "Accept": "json"},
            "port": "***",
        },
        "mcp": {"arguments": {"nested": [{"password": "***"}, "ok", {"list": ["GITHUB_TOKEN=***"]}], "count": 3}},
        "sshpass": ["sshpass", "-p", "***", "ssh", "h"],
        "argvs": [
            ["/usr/bin/mysql", "-uroot", "-p***", "db"],
            ["mysql", "-u", "root", "-p", "db"],
            ["docker", "login", "-u", "me", "-p", "***", "reg"],
            ["docker", "run", "-p", "80:80", "img"],
            ["curl", "-uuser:***", "x"],
            ["ssh-keygen", "-t", "ed25519", "-N", "***"],
            ["gh", "secret", "set", "X", "--body", "***"],
            ["tool", "--no-password", "-v", "--api-key", "$KEY"],
        ],
    });
    assert_eq!(serde_json::Value::Object(got.action.facets), want);
    // Everything else is untouched, and the original is not modified.
    assert_eq!(got.session, rec.session);
    assert_eq!(rec.action.summary, "curl -u me:hunter2-pw https://x");
    let line = serde_json::to_string(&rec.masked(&masker)).unwrap();
    assert!(!line.contains("hunter2-pw") && !line.contains("tok123"));
}

#[test]
fn masking_is_idempotent() {
    let masker = Masker::new(vec!["s3cr3t-value".into()]);
    for s in [
        "GITHUB_TOKEN=abc curl -H 'Authorization: Bearer xyz123' 'https://u:p@h/x?token=t'",
        "mysql -u root -p'secret' mydb && echo s3cr3t-value",
        "export API_KEY=\"abc 123\"; sk-AbCdEf0123456789GhIjKlMn",
    ] {
        let once = masker.mask(s);
        assert_eq!(masker.mask(&once), once);
    }
}

#[test]
fn crafted_and_large_input_is_masked_in_reasonable_time() {
    let masker = Masker::new(vec!["s3cr3t-value".into()]);
    let start = std::time::Instant::now();
    for s in [
        "key=".repeat(20_000),
        "token: ".repeat(20_000),
        format!("x {}", "-a --password ".repeat(10_000)),
        format!("mysql {}", "-u x ".repeat(10_000)),
        format!("{} s3cr3t-value", "Authorization: Bearer ".repeat(5_000)),
        format!("-----BEGIN PRIVATE KEY-----{}", "A".repeat(200_000)),
    ] {
        let masked = masker.mask(&s);
        assert!(!masked.contains("s3cr3t-value"));
    }
    // Generous: this is about not going quadratic, not about speed.
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn non_ascii_text_is_kept_intact() {
    let masker = Masker::new(vec!["pässwörd".into()]);
    assert_eq!(
        masker.mask("echo 'héllo wörld' && TOKEN=ünïcode✓ ./run --password=pässwörd 日本 🔑=x"),
        "echo 'héllo wörld' && TOKEN=*** ./run --password=*** 日本 🔑=x"
    );
}
