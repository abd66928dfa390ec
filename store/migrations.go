package store

// migrations are the schema versions in order: migrations[i] takes the
// database from version i to i+1. Append new versions; never edit one that
// has shipped. Times are fixed-width UTC text (see timeLayout), NULL when unset.
var migrations = []string{
	// v1: the document registry the sync engine diffs sources against.
	`CREATE TABLE documents (
		id           TEXT PRIMARY KEY,
		source       TEXT NOT NULL,
		path         TEXT NOT NULL DEFAULT '',
		url          TEXT NOT NULL DEFAULT '',
		title        TEXT NOT NULL DEFAULT '',
		space        TEXT NOT NULL DEFAULT '',
		labels       TEXT NOT NULL DEFAULT '[]',
		owner        TEXT NOT NULL DEFAULT '',
		author       TEXT NOT NULL DEFAULT '',
		content_hash TEXT NOT NULL DEFAULT '',
		updated_at   TEXT,
		first_seen   TEXT NOT NULL,
		last_seen    TEXT NOT NULL,
		deleted_at   TEXT,
		chunk_count  INTEGER NOT NULL DEFAULT 0,
		chunk_ids    TEXT NOT NULL DEFAULT '[]'
	);
	CREATE INDEX documents_source ON documents (source, deleted_at);
	CREATE INDEX documents_updated_at ON documents (updated_at);`,

	// v2: turns, the retrieval log of every question and answer.
	`CREATE TABLE turns (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		question    TEXT NOT NULL,
		platform    TEXT NOT NULL DEFAULT '',
		channel     TEXT NOT NULL DEFAULT '',
		thread      TEXT NOT NULL DEFAULT '',
		user        TEXT NOT NULL DEFAULT '',
		filter      TEXT NOT NULL DEFAULT '{}',
		status      TEXT NOT NULL,
		answer      TEXT NOT NULL DEFAULT '',
		citations   TEXT NOT NULL DEFAULT '[]',
		trace       TEXT NOT NULL DEFAULT '{}',
		latency_ms  REAL NOT NULL DEFAULT 0,
		stages_ms   TEXT NOT NULL DEFAULT '{}',
		created_at  TEXT NOT NULL
	);
	CREATE INDEX turns_created_at ON turns (created_at);
	CREATE INDEX turns_status ON turns (status, created_at);`,

	// v3: sync run records and per-source cursors.
	`CREATE TABLE sync_runs (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		source      TEXT NOT NULL,
		started_at  TEXT NOT NULL,
		finished_at TEXT,
		status      TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ok', 'failed')),
		added       INTEGER NOT NULL DEFAULT 0,
		updated     INTEGER NOT NULL DEFAULT 0,
		unchanged   INTEGER NOT NULL DEFAULT 0,
		deleted     INTEGER NOT NULL DEFAULT 0,
		failed      INTEGER NOT NULL DEFAULT 0,
		errors      TEXT NOT NULL DEFAULT '[]',
		error       TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX sync_runs_source ON sync_runs (source, id);
	CREATE TABLE source_state (
		source     TEXT PRIMARY KEY,
		cursor     TEXT NOT NULL DEFAULT '',
		updated_at TEXT NOT NULL
	);`,

	// v4: the error of a failed turn (secrets masked), and feedback on
	// answers.
	`ALTER TABLE turns ADD COLUMN error TEXT NOT NULL DEFAULT '';
	CREATE TABLE feedback (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		turn_id    INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
		rating     TEXT NOT NULL CHECK (rating IN ('helpful', 'not_helpful')),
		reason     TEXT NOT NULL DEFAULT '',
		platform   TEXT NOT NULL DEFAULT '',
		user       TEXT NOT NULL DEFAULT '',
		created_at TEXT NOT NULL
	);
	CREATE INDEX feedback_turn ON feedback (turn_id);
	CREATE INDEX feedback_created_at ON feedback (created_at);`,

	// v5: the chat bot's state: delivered events (dedupe across restarts),
	// handoffs of threads to people, and knowledge candidates.
	`CREATE TABLE bot_events (
		platform    TEXT NOT NULL,
		event_id    TEXT NOT NULL,
		received_at TEXT NOT NULL,
		PRIMARY KEY (platform, event_id)
	) WITHOUT ROWID;
	CREATE INDEX bot_events_received ON bot_events (received_at);
	CREATE TABLE handoffs (
		id             INTEGER PRIMARY KEY AUTOINCREMENT,
		turn_id        INTEGER NOT NULL DEFAULT 0,
		platform       TEXT NOT NULL,
		channel        TEXT NOT NULL,
		thread         TEXT NOT NULL,
		question       TEXT NOT NULL DEFAULT '',
		state          TEXT NOT NULL CHECK (state IN ('requested', 'claimed', 'resolved')),
		requested_by   TEXT NOT NULL DEFAULT '',
		claimed_by     TEXT NOT NULL DEFAULT '',
		resolved_by    TEXT NOT NULL DEFAULT '',
		requested_at   TEXT NOT NULL,
		claimed_at     TEXT,
		resolved_at    TEXT,
		escalation_ref TEXT NOT NULL DEFAULT '',
		last_reply_by  TEXT NOT NULL DEFAULT '',
		last_reply     TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX handoffs_thread ON handoffs (platform, channel, thread, id);
	CREATE INDEX handoffs_state ON handoffs (state, requested_at);
	CREATE TABLE knowledge_candidates (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		handoff_id INTEGER NOT NULL REFERENCES handoffs (id) ON DELETE CASCADE,
		turn_id    INTEGER NOT NULL DEFAULT 0,
		question   TEXT NOT NULL DEFAULT '',
		answer     TEXT NOT NULL,
		author     TEXT NOT NULL DEFAULT '',
		created_at TEXT NOT NULL
	);
	CREATE INDEX turns_thread ON turns (platform, channel, thread, created_at);`,

	// v6: how many documents each run's listing named.
	`ALTER TABLE sync_runs ADD COLUMN seen INTEGER NOT NULL DEFAULT 0;`,

	// v7: compact traces. A new turn's trace is stored deflated in
	// trace_z (the trace column keeps its default), with the candidates'
	// chunks moved to trace_chunks, stored once per distinct chunk however
	// many turns retrieved it. last_used is the latest created_at of a
	// turn that refers to the chunk; pruning drops chunks no turn left
	// can refer to.
	`ALTER TABLE turns ADD COLUMN trace_z BLOB;
	CREATE TABLE trace_chunks (
		hash      TEXT PRIMARY KEY,
		chunk     TEXT NOT NULL,
		last_used TEXT NOT NULL
	);
	CREATE INDEX trace_chunks_last_used ON trace_chunks (last_used);`,

	// v8: what a run cost a remote API: requests, retries, waits the
	// server asked for, and the time spent waiting.
	`ALTER TABLE sync_runs ADD COLUMN requests INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sync_runs ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sync_runs ADD COLUMN rate_limited INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sync_runs ADD COLUMN waited_ms INTEGER NOT NULL DEFAULT 0;`,

	// v9: the admin console's state: API tokens (hashed), the review and
	// assignment of missed turns, acknowledged stale documents, the golden
	// set, and golden runs with the configuration they ran under and one
	// row per question.
	`CREATE TABLE api_tokens (
		id              INTEGER PRIMARY KEY AUTOINCREMENT,
		name            TEXT NOT NULL,
		hash            TEXT NOT NULL UNIQUE,
		prefix          TEXT NOT NULL,
		rate_per_minute INTEGER NOT NULL DEFAULT 0,
		created_by      TEXT NOT NULL DEFAULT '',
		created_at      TEXT NOT NULL,
		last_used_at    TEXT,
		revoked_at      TEXT
	);
	CREATE TABLE miss_reviews (
		turn_id     INTEGER PRIMARY KEY REFERENCES turns (id) ON DELETE CASCADE,
		reviewed_at TEXT,
		reviewed_by TEXT NOT NULL DEFAULT '',
		assignee    TEXT NOT NULL DEFAULT '',
		assigned_at TEXT,
		assigned_by TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE stale_acks (
		doc_id   TEXT PRIMARY KEY,
		until    TEXT NOT NULL,
		acked_by TEXT NOT NULL DEFAULT '',
		acked_at TEXT NOT NULL,
		note     TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE golden_questions (
		id         TEXT PRIMARY KEY,
		position   INTEGER NOT NULL,
		question   TEXT NOT NULL,
		kind       TEXT NOT NULL,
		expect     TEXT NOT NULL DEFAULT '[]',
		facts      TEXT NOT NULL DEFAULT '[]',
		covered    TEXT NOT NULL DEFAULT '',
		uncovered  TEXT NOT NULL DEFAULT '',
		source     TEXT NOT NULL DEFAULT '',
		from_turn  INTEGER NOT NULL DEFAULT 0,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL
	);
	CREATE TABLE golden_runs (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		status      TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ok', 'failed')),
		started_at  TEXT NOT NULL,
		finished_at TEXT,
		started_by  TEXT NOT NULL DEFAULT '',
		config      TEXT NOT NULL DEFAULT '',
		questions   INTEGER NOT NULL DEFAULT 0,
		report      TEXT NOT NULL DEFAULT '{}',
		error       TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE golden_run_rows (
		run_id      INTEGER NOT NULL REFERENCES golden_runs (id) ON DELETE CASCADE,
		position    INTEGER NOT NULL,
		question_id TEXT NOT NULL,
		question    TEXT NOT NULL DEFAULT '',
		kind        TEXT NOT NULL DEFAULT '',
		status      TEXT NOT NULL DEFAULT '',
		pass        INTEGER NOT NULL DEFAULT 0,
		first_rank  INTEGER NOT NULL DEFAULT 0,
		ranked      TEXT NOT NULL DEFAULT '[]',
		row         TEXT NOT NULL DEFAULT '{}',
		PRIMARY KEY (run_id, position)
	);`,

	// v10: the failed handoff state, for an escalation the platform
	// refused (it was stored as resolved, with no one resolving it). SQLite
	// cannot change a CHECK constraint, so handoffs is rebuilt, ids kept;
	// knowledge_candidates, whose rows cascade from it, is set aside and
	// put back around the rebuild.
	`CREATE TABLE handoffs_v9 AS SELECT * FROM handoffs;
	CREATE TABLE knowledge_candidates_v9 AS SELECT * FROM knowledge_candidates;
	DROP TABLE knowledge_candidates;
	DROP TABLE handoffs;
	CREATE TABLE handoffs (
		id             INTEGER PRIMARY KEY AUTOINCREMENT,
		turn_id        INTEGER NOT NULL DEFAULT 0,
		platform       TEXT NOT NULL,
		channel        TEXT NOT NULL,
		thread         TEXT NOT NULL,
		question       TEXT NOT NULL DEFAULT '',
		state          TEXT NOT NULL CHECK (state IN ('requested', 'claimed', 'resolved', 'failed')),
		requested_by   TEXT NOT NULL DEFAULT '',
		claimed_by     TEXT NOT NULL DEFAULT '',
		resolved_by    TEXT NOT NULL DEFAULT '',
		requested_at   TEXT NOT NULL,
		claimed_at     TEXT,
		resolved_at    TEXT,
		escalation_ref TEXT NOT NULL DEFAULT '',
		last_reply_by  TEXT NOT NULL DEFAULT '',
		last_reply     TEXT NOT NULL DEFAULT ''
	);
	INSERT INTO handoffs SELECT * FROM handoffs_v9;
	CREATE INDEX handoffs_thread ON handoffs (platform, channel, thread, id);
	CREATE INDEX handoffs_state ON handoffs (state, requested_at);
	CREATE TABLE knowledge_candidates (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		handoff_id INTEGER NOT NULL REFERENCES handoffs (id) ON DELETE CASCADE,
		turn_id    INTEGER NOT NULL DEFAULT 0,
		question   TEXT NOT NULL DEFAULT '',
		answer     TEXT NOT NULL,
		author     TEXT NOT NULL DEFAULT '',
		created_at TEXT NOT NULL
	);
	INSERT INTO knowledge_candidates SELECT * FROM knowledge_candidates_v9;
	DROP TABLE knowledge_candidates_v9;
	DROP TABLE handoffs_v9;
	UPDATE handoffs SET state = 'failed', resolved_at = NULL
		WHERE state = 'resolved' AND resolved_by = '' AND escalation_ref = '';`,
	// v11: what tunes the offline answerer from the console: a golden
	// run's calibration (the fitted passage model and decision rule), the
	// synonyms added from misses, and settings applied at runtime.
	`ALTER TABLE golden_runs ADD COLUMN calibration TEXT NOT NULL DEFAULT '';
	CREATE TABLE synonyms (
		id       INTEGER PRIMARY KEY AUTOINCREMENT,
		entry    TEXT NOT NULL,
		added_by TEXT NOT NULL DEFAULT '',
		added_at TEXT NOT NULL
	);
	CREATE TABLE settings (
		key        TEXT PRIMARY KEY,
		value      TEXT NOT NULL,
		updated_by TEXT NOT NULL DEFAULT '',
		updated_at TEXT NOT NULL
	);`,

	// v12: an API token's scope (the sources and labels it may read, JSON
	// lists, empty for all), and documents found by URL (MCP's
	// get_document takes a cited link).
	`ALTER TABLE api_tokens ADD COLUMN scope_sources TEXT NOT NULL DEFAULT '[]';
	ALTER TABLE api_tokens ADD COLUMN scope_labels TEXT NOT NULL DEFAULT '[]';
	CREATE INDEX documents_url ON documents (url);`,
	// v13: a table that only the write probe uses: readiness, once writes
	// have failed, checks that the database can take a write again.
	`CREATE TABLE write_probe (
		id   INTEGER PRIMARY KEY,
		data BLOB NOT NULL
	);`,

	// v14: what a run's documents held (store.FinishRun): markup dropped,
	// documents without chunks, oversized documents, fragments and the
	// documents indexed with a warning, as JSON.
	`ALTER TABLE sync_runs ADD COLUMN content TEXT NOT NULL DEFAULT '{}';`,
	// v15: chat delivery in the turn (posted, or failed with the
	// platform's error); the returned handoff state (the asker brought the
	// bot back) and the question the asker put to the bot while handed
	// off. handoffs is rebuilt for its CHECK constraint, as in v10.
	`ALTER TABLE turns ADD COLUMN delivery TEXT NOT NULL DEFAULT '';
	ALTER TABLE turns ADD COLUMN delivery_error TEXT NOT NULL DEFAULT '';
	CREATE TABLE handoffs_v14 AS SELECT * FROM handoffs;
	CREATE TABLE knowledge_candidates_v14 AS SELECT * FROM knowledge_candidates;
	DROP TABLE knowledge_candidates;
	DROP TABLE handoffs;
	CREATE TABLE handoffs (
		id             INTEGER PRIMARY KEY AUTOINCREMENT,
		turn_id        INTEGER NOT NULL DEFAULT 0,
		platform       TEXT NOT NULL,
		channel        TEXT NOT NULL,
		thread         TEXT NOT NULL,
		question       TEXT NOT NULL DEFAULT '',
		state          TEXT NOT NULL CHECK (state IN ('requested', 'claimed', 'resolved', 'failed', 'returned')),
		requested_by   TEXT NOT NULL DEFAULT '',
		claimed_by     TEXT NOT NULL DEFAULT '',
		resolved_by    TEXT NOT NULL DEFAULT '',
		requested_at   TEXT NOT NULL,
		claimed_at     TEXT,
		resolved_at    TEXT,
		escalation_ref TEXT NOT NULL DEFAULT '',
		last_reply_by  TEXT NOT NULL DEFAULT '',
		last_reply     TEXT NOT NULL DEFAULT '',
		asked_again    TEXT NOT NULL DEFAULT ''
	);
	INSERT INTO handoffs SELECT *, '' FROM handoffs_v14;
	CREATE INDEX handoffs_thread ON handoffs (platform, channel, thread, id);
	CREATE INDEX handoffs_state ON handoffs (state, requested_at);
	CREATE TABLE knowledge_candidates (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		handoff_id INTEGER NOT NULL REFERENCES handoffs (id) ON DELETE CASCADE,
		turn_id    INTEGER NOT NULL DEFAULT 0,
		question   TEXT NOT NULL DEFAULT '',
		answer     TEXT NOT NULL,
		author     TEXT NOT NULL DEFAULT '',
		created_at TEXT NOT NULL
	);
	INSERT INTO knowledge_candidates SELECT * FROM knowledge_candidates_v14;
	DROP TABLE knowledge_candidates_v14;
	DROP TABLE handoffs_v14;`,

	// v16: a golden run row's expected documents (as the question stood
	// when it ran) and the turn that stores its answer's trace, so that a
	// run can be drilled from a row to the question's trace.
	`ALTER TABLE golden_run_rows ADD COLUMN expect TEXT NOT NULL DEFAULT '[]';
	ALTER TABLE golden_run_rows ADD COLUMN turn_id INTEGER NOT NULL DEFAULT 0;`,

	// v17: how each forum post was solved (the asker's ✅ or "solved", a
	// staff ✅, the handoff resolved), once per post; the console shows
	// them per forum.
	`CREATE TABLE forum_resolutions (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		platform    TEXT NOT NULL,
		forum       TEXT NOT NULL,
		forum_name  TEXT NOT NULL DEFAULT '',
		thread      TEXT NOT NULL,
		turn_id     INTEGER NOT NULL DEFAULT 0,
		how         TEXT NOT NULL,
		resolved_by TEXT NOT NULL DEFAULT '',
		resolved_at TEXT NOT NULL,
		UNIQUE (platform, thread)
	);
	CREATE INDEX forum_resolutions_forum ON forum_resolutions (platform, forum, resolved_at);`,

	// v18 (document_stale): the state a sync derives for each document
	// (package stale), stored with its record as JSON: when it turns
	// older than its source's policy, and its conflict and
	// gone-while-expected findings ('' before the first derivation).
	`ALTER TABLE documents ADD COLUMN stale TEXT NOT NULL DEFAULT '';`,
}
