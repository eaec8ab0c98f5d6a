//! Masking of secrets before anything reaches the audit log (SPEC 11):
//! the values of scrubbed environment variables, and anything that looks
//! like a credential in a command, a URL or a header.
//!
//! Only the secret part of a match is replaced by `***`; flag names,
//! variable names, URL hosts and token prefixes stay, so that a human can
//! still read what ran: `curl -H 'Authorization: Bearer ***' https://api.x/y`.

use regex::bytes::Regex;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

/// What a masked value is replaced by.
pub const MASK: &str = "***";

/// Scrubbed values shorter than this are not masked: they would hit too
/// much that is not a secret.
pub const MIN_SECRET_LEN: usize = 4;

/// Masks secrets in strings.
///
/// Cheap to build: the credential patterns are shared by every `Masker` of
/// the process and each is compiled only the first time a string contains
/// its trigger words (most commands contain none), so the shell shim pays
/// for at most the few patterns its command could match. [`Masker::new`]
/// only sorts the scrubbed values, which are found by plain substring search.
#[derive(Clone)]
pub struct Masker {
    /// The scrubbed values, longest first.
    secrets: Vec<String>,
}

impl fmt::Debug for Masker {
    /// Never prints the secrets themselves.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Masker")
            .field("secret_values", &self.secrets.len())
            .finish_non_exhaustive()
    }
}

impl Default for Masker {
    fn default() -> Masker {
        Masker::new(Vec::new())
    }
}

/// One credential shape. Every capture group whose name starts with `v` is
/// a secret and becomes `***`; a group `name` is the variable, key or flag
/// name the value belongs to.
///
/// The table is static data: a process (the shim, a hook) that masks one
/// record must not first build thirty rules.
struct Rule {
    pattern: &'static str,
    check: Check,
    /// Match against the ASCII-lowercased text (the pattern is written in
    /// lower case); offsets are the same.
    lower: bool,
    /// The rule can only match if the lowercased text holds every string
    /// of one of these groups.
    triggers: &'static [Group],
    compiled: OnceLock<Compiled>,
}

struct Compiled {
    re: Regex,
    /// Indexes of the `v…` groups.
    values: Vec<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Every match is a secret.
    Always,
    /// Only when the `name` group names a secret ([`sensitive_name`]).
    Name,
    /// As `Name`, for headers other than `Authorization` and `Cookie`,
    /// whose rules keep the scheme or take the whole line.
    Header,
    /// Only when the `name` group is a credential query parameter.
    Query,
    /// Only when the value looks generated rather than a word.
    Random,
    /// Only when the value mixes upper case, lower case and digits.
    Mixed,
}

/// Strings that must all occur (as substrings of the lowercased text).
struct Group {
    all: &'static [&'static str],
    /// The ASCII bytes the strings hold ([`ascii_set`]): a text that lacks
    /// one cannot contain the group, which rules most rules out without a
    /// substring search.
    need: u128,
}

const fn group(all: &'static [&'static str]) -> Group {
    let mut need = 0;
    let mut i = 0;
    while i < all.len() {
        need |= ascii_set(all[i]);
        i += 1;
    }
    Group { all, need }
}

/// Trigger groups of one string each: `any!["ghp_", "gho_"]`.
macro_rules! any {
    [$($word:literal),* $(,)?] => { &[$(group(&[$word])),*] };
}

/// Trigger groups of each string together with `also`: `with!(":"; "token", "key")`.
macro_rules! with {
    ($also:literal; $($word:literal),* $(,)?) => { &[$(group(&[$word, $also])),*] };
}

/// Trigger groups of one string each, every string ending in `end`:
/// `suffixed!("="; "token", "key")` is `any!["token=", "key="]`.
macro_rules! suffixed {
    ($end:literal; $($word:literal),* $(,)?) => { &[$(group(&[concat!($word, $end)])),*] };
}

/// Lowercase strings one of which every name [`sensitive_name`] admits
/// contains (`Authorization` and `Cookie` headers have rules of their own).
macro_rules! secret_words {
    ($m:ident!($($also:tt)*)) => {
        $m!($($also)* "token", "secret", "passw", "passphrase", "key", "storepass")
    };
}

/// Query parameters that carry credentials.
macro_rules! query_names {
    ($m:ident!($($also:tt)*)) => {
        $m!($($also)*
            "access_token", "refresh_token", "id_token", "auth_token", "private_token",
            "token", "api_key", "api-key", "apikey", "key", "client_secret", "secret",
            "password", "passwd", "pwd", "sig", "signature", "x-amz-signature",
            "x-amz-security-token", "x-amz-credential", "x-goog-signature",
            "x-goog-credential", "auth", "code")
    };
}

macro_rules! list {
    ($($word:literal),* $(,)?) => { &[$($word),*] };
}

const QUERY_NAMES: &[&str] = query_names!(list!());

/// A quoted or bare shell word, as three value groups.
macro_rules! value {
    () => {
        r#"(?:'(?P<v1>[^']*)'|"(?P<v2>[^"]*)"|(?P<v3>[^\s'"]+))"#
    };
}

/// Where a command name may start in a line.
macro_rules! cmd_start {
    () => {
        r"(?:^|[\s/;&|(`])"
    };
}

const fn rule(
    pattern: &'static str,
    check: Check,
    lower: bool,
    triggers: &'static [Group],
) -> Rule {
    Rule {
        pattern,
        check,
        lower,
        triggers,
        compiled: OnceLock::new(),
    }
}

/// A vendor token: every match is a secret, matched as written.
const fn token(triggers: &'static [Group], pattern: &'static str) -> Rule {
    rule(pattern, Check::Always, false, triggers)
}

static RULES: [Rule; 31] = [
    // PEM private keys: keep the armour lines, drop the body. A block
    // cut short (no END line) is masked to the end of the text.
    rule(
        r"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?P<v>.*?)(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\z)",
        Check::Always,
        false,
        any!["private key-----"],
    ),
    // Well-known token shapes, anywhere; the vendor prefix stays.
    token(
        any!["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"\bgh[pousr]_(?P<v>[A-Za-z0-9]{36,})\b",
    ),
    token(
        any!["github_pat_"],
        r"\bgithub_pat_(?P<v>[A-Za-z0-9_]{22,})",
    ),
    token(any!["sk-ant-"], r"\bsk-ant-(?P<v>[A-Za-z0-9_-]{20,})"),
    rule(
        r"\bsk-(?P<v>[A-Za-z0-9_-]{20,})",
        Check::Mixed,
        false,
        any!["sk-"],
    ),
    token(
        any!["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        r"\b[sr]k_(?:live|test)_(?P<v>[A-Za-z0-9]{16,})",
    ),
    token(
        any!["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"],
        r"\bxox[abprs]-(?P<v>[A-Za-z0-9-]{10,})",
    ),
    token(
        any!["akia", "asia"],
        r"\b(?:AKIA|ASIA)(?P<v>[0-9A-Z]{16})\b",
    ),
    token(any!["aiza"], r"\bAIza(?P<v>[0-9A-Za-z_-]{35})"),
    token(
        any!["eyj"],
        r"\b(?P<v>eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)",
    ),
    token(any!["glpat-"], r"\bglpat-(?P<v>[A-Za-z0-9_-]{20,})"),
    token(any!["npm_"], r"\bnpm_(?P<v>[A-Za-z0-9]{36,})"),
    token(any!["hf_"], r"\bhf_(?P<v>[A-Za-z0-9]{34,})"),
    token(
        any!["hooks.slack.com/services/"],
        r"hooks\.slack\.com/services/(?P<v>[A-Za-z0-9_/]+)",
    ),
    // URL userinfo: scheme://user:password@host.
    rule(
        r#"[a-z][a-z0-9+.-]*://[^\s/?#@:'"]*:(?P<v>[^\s/?#@'"]+)@"#,
        Check::Always,
        true,
        &[group(&["://", "@"])],
    ),
    // Query parameters that carry credentials (QUERY_NAMES).
    rule(
        r#"(?:^|[?&])(?P<name>[a-z0-9_-]+)=(?P<v>[^&#\s'"]+)"#,
        Check::Query,
        true,
        query_names!(suffixed!("=";)),
    ),
    // Authorization headers: the scheme stays.
    rule(
        r#"\b(?:proxy-)?authorization[ \t]*:[ \t]*(?:[a-z][a-z0-9_-]*[ \t]+)?(?P<v>[^\s'"]+)"#,
        Check::Always,
        true,
        any!["authorization"],
    ),
    // A bare `Bearer X` / `Basic X` elsewhere (JSON, config text).
    rule(
        r"\b(?:bearer|basic)[ \t]+(?P<v>[a-z0-9._~+/=-]{8,})",
        Check::Random,
        true,
        any!["bearer", "basic"],
    ),
    // Cookies: the whole header value.
    rule(
        r#"(?:^|[\s'"])(?:set-)?cookie[ \t]*:[ \t]*(?P<v>[^'"\r\n]+)"#,
        Check::Always,
        true,
        any!["cookie"],
    ),
    // Other secret-named headers and `key: value` lines. (The patterns
    // that follow match any name and leave the choice to
    // `sensitive_name`: that compiles several times faster than
    // spelling the secret words out in the pattern.)
    rule(
        r#"(?:^|[\s'"{(,;])(?P<name>[a-z0-9_-]+)[ \t]*:[ \t]*(?P<v>[^\s'"]+)"#,
        Check::Header,
        true,
        secret_words!(with!(":";)),
    ),
    // JSON members: "password": "x".
    rule(
        r#""(?P<name>[a-z0-9_.-]+)"\s*:\s*"(?P<v>(?:[^"\\]|\\.)*)""#,
        Check::Name,
        true,
        with!("\""; "token", "secret", "passw", "passphrase", "key", "authorization", "cookie"),
    ),
    // openssl's -pass pass:X.
    rule(
        r#"(?:^|\s)-(?:pass|passin|passout|password)\s+pass:(?P<v>[^\s'"]+)"#,
        Check::Always,
        false,
        any!["pass:"],
    ),
    // Flags: --password X, --password=X, --token X, --api-key X, ...
    // After a space the value may not start with `-`: that is the next
    // flag (`--no-password -h host`), which must stay matchable.
    rule(
        r#"(?:^|\s)--?(?P<name>[a-z0-9][a-z0-9-]*)(?:=(?:'(?P<v1>[^']*)'|"(?P<v2>[^"]*)"|(?P<v3>[^\s'"]+))|\s+(?:'(?P<v4>[^']*)'|"(?P<v5>[^"]*)"|(?P<v6>[^\s'"-][^\s'"]*)))"#,
        Check::Name,
        true,
        any![
            "-passw",
            "-passphrase",
            "-token",
            "-secret",
            "-key",
            "-apikey",
            "-cookie",
            "-storepass",
            "-keypass",
        ],
    ),
    // mysql -p'secret' / -psecret (no space: with a space, -p prompts).
    token(
        with!("-p"; "mysql", "mariadb"),
        concat!(
            cmd_start!(),
            r#"(?:mysql[a-z]*|mariadb[a-z-]*)(?:\s+[^\s;&|]+)*?\s+-p"#,
            value!()
        ),
    ),
    // sshpass -p secret.
    token(
        any!["sshpass"],
        concat!(cmd_start!(), r#"sshpass\s+-p\s*"#, value!()),
    ),
    // ssh-keygen -N/-P passphrase.
    token(
        any!["ssh-keygen"],
        concat!(
            cmd_start!(),
            r#"ssh-keygen(?:\s+[^\s;&|]+)*?\s+-[NP]\s*"#,
            value!()
        ),
    ),
    // docker/podman/helm/az/oc ... login -p secret.
    token(
        with!("-p"; "login"),
        concat!(
            cmd_start!(),
            r#"(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|az|oc)(?:\s+[^\s;&|]+)*?\s+login(?:\s+[^\s;&|]+)*?\s+-p\s+"#,
            value!()
        ),
    ),
    // redis-cli -a secret.
    token(
        any!["redis-cli"],
        concat!(
            cmd_start!(),
            r#"redis-cli(?:\s+[^\s;&|]+)*?\s+-a\s+"#,
            value!()
        ),
    ),
    // gh secret set NAME --body secret.
    token(
        any!["secret set"],
        concat!(
            cmd_start!(),
            r#"gh\s+secret\s+set(?:\s+[^\s;&|]+)*?\s+(?:-b\s*|--body(?:=|\s+))"#,
            value!()
        ),
    ),
    // curl -u user:password.
    token(
        &[group(&["curl", "-u"]), group(&["curl", "--user"])],
        concat!(
            cmd_start!(),
            r#"curl(?:\s+[^\s;&|]+)*?\s+(?:-u\s*|--user(?:=|\s+))['"]?[^\s:'"]*:(?P<v>[^\s'"]+)"#
        ),
    ),
    // Assignments: NAME=value, export NAME="value", name = 'value'.
    rule(
        r#"(?P<name>[a-z0-9_.-]+)[ \t]*=[ \t]*(?:'(?P<v1>[^']*)'|"(?P<v2>[^"]*)"|(?P<v3>[^\s'"&;|)=][^\s'"&;|)]*))"#,
        Check::Name,
        true,
        secret_words!(with!("=";)),
    ),
];

impl Rule {
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            // ASCII classes and boundaries: smaller automata, and every
            // span still starts and ends at an ASCII byte of valid UTF-8.
            let re = Regex::new(&format!("(?-u){}", self.pattern))
                .expect("the masking patterns compile");
            let values = re
                .capture_names()
                .enumerate()
                .filter(|(_, n)| n.is_some_and(|n| n.starts_with('v')))
                .map(|(i, _)| i)
                .collect();
            Compiled { re, values }
        })
    }

    /// `present` is `ascii_set(lower)`.
    fn triggered(&self, lower: &str, present: u128) -> bool {
        self.triggers
            .iter()
            .any(|g| g.need & !present == 0 && g.all.iter().all(|t| lower.contains(t)))
    }

    /// `s` with this rule's secrets masked, or `None` when nothing changed.
    fn apply(&self, s: &str) -> Option<String> {
        let Compiled { re, values } = self.compiled();
        let lowered;
        let hay = if self.lower {
            lowered = s.to_ascii_lowercase();
            lowered.as_bytes()
        } else {
            s.as_bytes()
        };
        let mut out = String::new();
        let mut last = 0;
        let mut at = 0;
        // Searching again inside a match costs a rescan of its rest; a
        // budget keeps crafted input (`key=key=key=...`) from going quadratic.
        let mut rescans = 64;
        while let Some(caps) = re.captures_at(hay, at) {
            let whole = caps.get(0).expect("group 0 always takes part");
            at = whole.end().max(at + 1);
            let name = caps
                .name("name")
                .and_then(|n| std::str::from_utf8(n.as_bytes()).ok());
            let admitted = match self.check {
                Check::Name => name.is_some_and(sensitive_name),
                Check::Header => name.is_some_and(|n| {
                    sensitive_name(n) && !n.ends_with("authorization") && !n.ends_with("cookie")
                }),
                Check::Query => name.is_some_and(|n| QUERY_NAMES.contains(&n)),
                _ => true,
            };
            if !admitted {
                // Search again just after the name: what this match took
                // as a value may hold a name of its own
                // (`--from-literal=password=x`, `fix: token: x`).
                if let Some(n) = caps.name("name")
                    && rescans > 0
                {
                    rescans -= 1;
                    at = n.end().max(whole.start() + 1);
                }
                continue;
            }
            for &i in values {
                let Some(m) = caps.get(i) else { continue };
                let (start, end) = char_span(s, m.start(), m.end());
                let v = &s[start..end];
                let skip = v.is_empty()
                    // A variable reference is not the secret itself.
                    || v.starts_with('$')
                    || v.contains(MASK)
                    || (self.check == Check::Random && !looks_random(v))
                    || (self.check == Check::Mixed && !looks_mixed(v));
                if skip || start < last {
                    continue;
                }
                out.push_str(&s[last..start]);
                out.push_str(MASK);
                last = end;
            }
        }
        if last == 0 {
            return None;
        }
        out.push_str(&s[last..]);
        Some(out)
    }
}

/// The ASCII bytes of `s` as a bit set.
const fn ascii_set(s: &str) -> u128 {
    let bytes = s.as_bytes();
    let mut set = 0;
    let mut i = 0;
    while i < bytes.len() {
        set |= ascii_set_of(bytes[i]);
        i += 1;
    }
    set
}

const fn ascii_set_of(b: u8) -> u128 {
    if b.is_ascii() { 1u128 << b } else { 0 }
}

/// Widens a byte span to character boundaries (the patterns only split at
/// ASCII bytes, so this is a safeguard).
fn char_span(s: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    while !s.is_char_boundary(start) {
        start -= 1;
    }
    while !s.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

impl Masker {
    /// `secret_values` are the values of the scrubbed environment variables;
    /// every occurrence of one (of at least [`MIN_SECRET_LEN`] bytes) is masked.
    pub fn new(secret_values: Vec<String>) -> Masker {
        let mut values: Vec<String> = secret_values
            .into_iter()
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, so that a value containing another is masked whole.
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Masker { secrets: values }
    }

    /// `s` with every secret replaced by `***`.
    pub fn mask(&self, s: &str) -> String {
        self.mask_cow(s).into_owned()
    }

    fn mask_cow<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(s);
        // A handful of values and short strings: plain substring search
        // beats compiling an automaton for them in every process.
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), MASK));
            }
        }
        let lower = out.to_ascii_lowercase();
        let present = ascii_set(&lower);
        for rule in RULES.iter() {
            if rule.triggered(&lower, present)
                && let Some(masked) = rule.apply(&out)
            {
                out = Cow::Owned(masked);
            }
        }
        out
    }

    /// Masks every string inside `value`, recursively. Besides [`Masker::mask`],
    /// the whole value of a member whose key names a secret (`password`,
    /// `Authorization`, `X-Api-Key`, `GITHUB_TOKEN`, ...) is masked, and in
    /// an array of arguments the word after a secret flag (`--password`,
    /// `--token`, ...) is masked.
    pub fn mask_value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(m) = self.mask_cow(s) {
                    *s = m;
                }
            }
            Value::Number(n) => {
                let text = n.to_string();
                if self.secrets.iter().any(|v| text.contains(v.as_str())) {
                    *value = Value::from(MASK);
                }
            }
            Value::Array(items) => self.mask_array(items),
            Value::Object(map) => self.mask_map(map),
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// [`Masker::mask_value`] for each member of `map`.
    pub fn mask_map(&self, map: &mut Map<String, Value>) {
        for (key, value) in map.iter_mut() {
            if sensitive_name(key) {
                mask_whole(key, value);
            } else {
                self.mask_value(value);
            }
        }
    }

    fn mask_array(&self, items: &mut [Value]) {
        let words: Vec<Option<String>> = items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect();
        let argv = Argv::new(&words);
        // A word that held a secret itself (`-psecret`) is no flag for the next.
        let mut previous: Option<&str> = None;
        for (item, word) in items.iter_mut().zip(&words) {
            let masked = match &*item {
                Value::String(w) => argv.mask_word(previous, w),
                _ => None,
            };
            match masked {
                Some(m) => *item = Value::String(m),
                None => self.mask_value(item),
            }
            previous = word.as_deref().filter(|w| item.as_str() == Some(*w));
        }
    }
}

/// What an array of strings tells about its words when it is an argument
/// vector: which program runs, and in what mode.
struct Argv<'a> {
    program: &'a str,
    /// `docker login`, `az login`, ...
    login: bool,
    /// `gh secret set`
    secret_set: bool,
}

impl<'a> Argv<'a> {
    fn new(words: &'a [Option<String>]) -> Argv<'a> {
        let word = |i: usize| words.get(i).and_then(Option::as_deref).unwrap_or("");
        let program = word(0).rsplit('/').next().unwrap_or("");
        Argv {
            program,
            login: words.iter().any(|w| w.as_deref() == Some("login")),
            secret_set: program == "gh" && word(1) == "secret" && word(2) == "set",
        }
    }

    /// The masked form of `word` when its place in the vector says it is a
    /// secret (the word after `--password`, `sshpass -p`, ...); `None` to
    /// mask it as any other string.
    fn mask_word(&self, previous: Option<&str>, word: &str) -> Option<String> {
        if word.is_empty() || word.starts_with('$') || word.contains(MASK) {
            return None;
        }
        let p = self.program;
        let mysql = p.starts_with("mysql") || p.starts_with("mariadb");
        // A value attached to its flag: -psecret, -uuser:pass.
        if let Some(v) = word.strip_prefix("-p")
            && !v.is_empty()
            && (mysql || p == "sshpass")
        {
            return Some(format!("-p{MASK}"));
        }
        if let Some((user, _)) = word.strip_prefix("-u").and_then(|v| v.split_once(':'))
            && p == "curl"
        {
            return Some(format!("-u{user}:{MASK}"));
        }
        let flag = previous?;
        if word.starts_with('-') {
            return None;
        }
        let whole = match (p, flag) {
            ("sshpass", "-p") | ("ssh-keygen", "-N" | "-P") | ("redis-cli", "-a") => true,
            (
                "docker" | "podman" | "nerdctl" | "buildah" | "skopeo" | "helm" | "oras" | "az"
                | "oc",
                "-p",
            ) => self.login,
            ("gh", "-b" | "--body") => self.secret_set,
            ("curl", "-u" | "--user") => {
                return word
                    .split_once(':')
                    .filter(|(_, pass)| !pass.is_empty())
                    .map(|(user, _)| format!("{user}:{MASK}"));
            }
            _ => flag.starts_with('-') && !flag.contains('=') && sensitive_name(flag),
        };
        whole.then(|| MASK.to_owned())
    }
}

/// Masks a value whose key names a secret: strings become `***` (an
/// `Authorization` value keeps its scheme), numbers too, and containers
/// are masked throughout.
fn mask_whole(key: &str, value: &mut Value) {
    match value {
        Value::String(s) => {
            if s.is_empty() || s == MASK {
                return;
            }
            let keep_scheme = key.to_ascii_lowercase().ends_with("authorization");
            *s = match s.split_once(' ') {
                Some((scheme, rest))
                    if keep_scheme
                        && !rest.trim().is_empty()
                        && scheme.chars().all(|c| c.is_ascii_alphanumeric()) =>
                {
                    format!("{scheme} {MASK}")
                }
                _ => MASK.to_owned(),
            };
        }
        Value::Number(_) => *value = Value::from(MASK),
        Value::Array(items) => items.iter_mut().for_each(|v| mask_whole(key, v)),
        Value::Object(map) => map.iter_mut().for_each(|(k, v)| mask_whole(k, v)),
        Value::Null | Value::Bool(_) => {}
    }
}

/// Words that make a name secret, wherever they occur in it (separators
/// removed); `TOKEN` is handled apart.
const SECRET_WORDS: &[&str] = &[
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "APIKEY",
    "ACCESSKEY",
    "PRIVATEKEY",
    "AUTHKEY",
    "MASTERKEY",
    "SIGNINGKEY",
    "ENCRYPTIONKEY",
    "AUTHORIZATION",
    "COOKIE",
    "STOREPASS",
    "KEYPASS",
];

/// The bytes each of [`SECRET_WORDS`] and `TOKEN` holds: a name that lacks
/// one of a word's letters cannot contain it, which settles most names
/// (`time`, `command`, `argv`) without building anything.
const SECRET_WORD_BYTES: [u128; SECRET_WORDS.len() + 1] = {
    let mut sets = [ascii_set("TOKEN"); SECRET_WORDS.len() + 1];
    let mut i = 0;
    while i < SECRET_WORDS.len() {
        sets[i] = ascii_set(SECRET_WORDS[i]);
        i += 1;
    }
    sets
};

/// Whether a variable, key, header or flag name says its value is a secret:
/// it contains TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, API_KEY,
/// ACCESS_KEY, PRIVATE_KEY, ... (in any case, with `_`, `-` or `.`), but is
/// not a count (`MAX_TOKENS`), a negation (`--no-password`), where the
/// secret comes from (`TOKEN_FILE`, `SECRET_PATH`, `--password-stdin`) or
/// something else about it (`TOKEN_TTL`, `SECRET_NAME`, `ACCESS_KEY_ID`).
pub fn sensitive_name(name: &str) -> bool {
    let present = name
        .bytes()
        .fold(0u128, |set, b| set | ascii_set_of(b.to_ascii_uppercase()));
    if !SECRET_WORD_BYTES.iter().any(|word| word & !present == 0) {
        return false;
    }
    let upper: String = name
        .trim_start_matches('-')
        .chars()
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    // Where the secret comes from, or something about it.
    const NOT_THE_SECRET: &[&str] = &[
        "_FILE",
        "_FILES",
        "_PATH",
        "_DIR",
        "_STDIN",
        "_CMD",
        "_COMMAND",
        "_PROMPT",
        "_TTL",
        "_TIMEOUT",
        "_EXPIRY",
        "_EXPIRES",
        "_LIFETIME",
        "_TYPE",
        "_URL",
        "_URI",
        "_ENDPOINT",
        "_HOST",
        "_PORT",
        "_LENGTH",
        "_SIZE",
        "_COUNT",
        "_LIMIT",
        "_HEADER",
        "_NAME",
        "_ID",
    ];
    if upper.starts_with("NO_")
        || upper.starts_with("ASK_")
        || NOT_THE_SECRET.iter().any(|s| upper.ends_with(s))
    {
        return false;
    }
    let squashed: String = upper.chars().filter(|&c| c != '_').collect();
    if SECRET_WORDS.iter().any(|w| squashed.contains(w)) {
        return true;
    }
    // TOKEN, but not TOKENS or TOKENIZER.
    upper.match_indices("TOKEN").any(|(i, _)| {
        !upper[i + 5..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
    })
}

/// A token rather than a word: it has a digit or a symbol, or mixes cases
/// after its first letter (`dXNlcjpwYXNz`, not `authentication`).
fn looks_random(v: &str) -> bool {
    let rest = v.get(1..).unwrap_or("");
    v.bytes()
        .any(|b| b.is_ascii_digit() || b"+/=_-.~".contains(&b))
        || (rest.bytes().any(|b| b.is_ascii_uppercase())
            && rest.bytes().any(|b| b.is_ascii_lowercase()))
}

/// Upper case, lower case and digits, as in generated keys.
fn looks_mixed(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_uppercase())
        && v.bytes().any(|b| b.is_ascii_lowercase())
        && v.bytes().any(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for n in [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "--api-key",
            "x-api-key",
            "Authorization",
            "apikey",
            "client_secret",
            "MYSQL_PWD_PASSWD",
            // Words split by separators, and in any case.
            "pass_word",
            "Cook-Ie",
            "x.auth.key",
            "keystore.STORE_PASS",
            "token",
        ] {
            assert!(sensitive_name(n), "{n}");
        }
        for n in [
            "MAX_TOKENS",
            "tokenizer",
            "--no-password",
            "TOKEN_FILE",
            "SECRET_PATH",
            "TOKEN_TTL",
            "AWS_ACCESS_KEY_ID",
            "SECRET_NAME",
            "PATH",
            "HOME",
            "key",
            "PWD",
        ] {
            assert!(!sensitive_name(n), "{n}");
        }
    }

    #[test]
    fn random_checks() {
        assert!(looks_random("dXNlcjpwYXNz"));
        assert!(looks_random("abc123def"));
        assert!(!looks_random("authentication"));
        assert!(!looks_random("Authentication"));
        assert!(looks_mixed("AbCdEf0123456789xyzXYZ"));
        assert!(!looks_mixed("feature-branch-2024-long-name"));
    }
}
