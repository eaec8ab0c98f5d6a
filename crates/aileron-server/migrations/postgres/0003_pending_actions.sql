-- The approval queue, shared by every server on the database: one row per
-- ask, from the moment it waits until long after it was decided. Deciding
-- is one conditional UPDATE (`WHERE id = $1 AND state = 'pending'`):
-- exactly one answer wins, whichever server it reached. An ask outlives
-- the server that made it: another server (or the same, restarted) can
-- decide it, and the adapter asking again under the same id gets the answer.
CREATE TABLE pending_actions (
    id          TEXT PRIMARY KEY,  -- the Action's id
    session     TEXT,
    origin      TEXT NOT NULL,     -- evaluate | adapter
    fingerprint TEXT NOT NULL,     -- SHA-256 (hex) of the origin and the action without id and time
    view        TEXT NOT NULL,     -- what the dashboard shows, JSON (the action masked)
    owner       TEXT NOT NULL,     -- the server that made it (its replica id)
    created_at  TEXT NOT NULL,     -- RFC 3339
    deadline_us BIGINT NOT NULL,   -- when `on_timeout` decides (microseconds since the epoch)
    state       TEXT NOT NULL,     -- pending | decided
    answer      TEXT,              -- once | always | reject | feedback | timeout
    reason      TEXT,              -- the reviewer's words (the feedback)
    reviewer    TEXT,
    channel     TEXT,              -- dashboard | webhook:ID | cascade | clock
    decided_by  TEXT,              -- the server that stored the decision
    decided_us  BIGINT,            -- when (microseconds since the epoch)
    grants      TEXT,              -- after an "always": the session's always answers, JSON
    delivered_us BIGINT            -- when an answer first reached a caller: the id is spent (asking again under it is refused, never a second allow)
);
CREATE INDEX pending_actions_state_idx ON pending_actions(state, deadline_us);
CREATE INDEX pending_actions_session_idx ON pending_actions(session, state);
CREATE INDEX pending_actions_decided_idx ON pending_actions(decided_us);

-- Every server LISTENs: a new, decided or changed ask is announced on
-- `aileron_pending` ({e: new | decided | changed, id, owner, by}), a change
-- of the rules on `aileron_rules` (the new rules_version), by the database
-- itself when the change commits, whoever wrote it (`aileron rules import`
-- too).
CREATE FUNCTION aileron_pending_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('aileron_pending', json_build_object(
        'e', CASE WHEN TG_OP = 'INSERT' THEN 'new'
                  WHEN OLD.state <> NEW.state THEN 'decided'
                  ELSE 'changed' END,
        'id', NEW.id, 'owner', NEW.owner, 'by', NEW.decided_by)::text);
    RETURN NULL;
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER pending_actions_notify AFTER INSERT OR UPDATE ON pending_actions
    FOR EACH ROW EXECUTE FUNCTION aileron_pending_notify();

CREATE FUNCTION aileron_rules_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('aileron_rules', NEW.value::text);
    RETURN NULL;
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER meta_rules_notify AFTER UPDATE ON meta
    FOR EACH ROW WHEN (NEW.key = 'rules_version') EXECUTE FUNCTION aileron_rules_notify();
