-- Aileron server schema, SQLite.
CREATE TABLE tokens (
    hash       TEXT PRIMARY KEY,   -- SHA-256 of the token, hex
    role       TEXT NOT NULL,      -- admin | approver | agent
    name       TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE approval_rules (
    id                   TEXT PRIMARY KEY,
    position             INTEGER NOT NULL,  -- order within layer 7 (later wins among equals)
    label                TEXT,
    scope_plugin_id      TEXT,
    scope_profile_id     TEXT,
    scope_integration_id TEXT,
    priority             INTEGER NOT NULL,
    enabled              INTEGER NOT NULL DEFAULT 1,
    decision             TEXT NOT NULL,     -- allow | ask | judge | deny
    reason               TEXT,              -- the rule's description
    source               TEXT NOT NULL,     -- the API form of the rule, JSON
    created_by           TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
CREATE INDEX rules_scope_idx ON approval_rules(scope_plugin_id, scope_profile_id, priority);
CREATE INDEX rules_position_idx ON approval_rules(position);

CREATE TABLE actions (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    action_id    TEXT NOT NULL,
    time         TEXT NOT NULL,     -- RFC 3339
    ts_us        INTEGER NOT NULL,  -- the same, microseconds since the epoch
    session      TEXT,
    agent        TEXT,
    adapter      TEXT NOT NULL,
    type         TEXT NOT NULL,
    summary      TEXT NOT NULL,
    decision     TEXT NOT NULL,     -- the policy's verdict: allow | deny | ask | judge
    outcome      TEXT,              -- what the human (or the timeout) made of an ask
    source       TEXT NOT NULL,
    rule         TEXT,
    reason       TEXT NOT NULL,
    approver     TEXT,
    latency_us   INTEGER NOT NULL,
    submitted_by TEXT,              -- hash prefix of the token that sent it
    record       TEXT NOT NULL,     -- the audit record, JSON (masked)
    action       TEXT               -- the whole Action, JSON (masked), for previews
);
CREATE INDEX actions_ts_idx ON actions(ts_us);
CREATE INDEX actions_session_idx ON actions(session, seq);
CREATE INDEX actions_decision_idx ON actions(decision, seq);
CREATE INDEX actions_type_idx ON actions(type, seq);

-- Counters: `rules_version` is bumped by every change of approval_rules, so
-- that servers sharing the database (and `aileron rules import`) are seen.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('rules_version', 0);
