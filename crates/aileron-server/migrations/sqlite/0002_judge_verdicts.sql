-- Verdicts of the LLM judge, reused for identical actions within a rule's
-- `cache_ttl` (also after a restart). `key` is the SHA-256 (hex) of what
-- the judge saw and who judged; rows past `expires_at` (seconds since the
-- epoch) are never read and are pruned, and the table is bounded.
CREATE TABLE judge_verdicts (
    key        TEXT PRIMARY KEY,
    decision   TEXT NOT NULL,     -- allow | deny | ask
    reason     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX judge_verdicts_expiry_idx ON judge_verdicts(expires_at);
