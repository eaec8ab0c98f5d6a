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
