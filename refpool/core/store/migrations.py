"""Numbered schema migrations, applied in order inside a transaction and recorded by name.

Never edit a migration that has shipped: add a new one at the end of MIGRATIONS.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable

from refpool.core.seeds import derive_seed
from refpool.core.store.calibration import m007_calibration
from refpool.core.store.judge_repeats import m017_judge_repeats
from refpool.core.store.photo_corrections import m015_photo_corrections
from refpool.core.store.release_marks import m016_release_marks
from refpool.core.store.releases import m010_frozen_releases

Migration = Callable[[sqlite3.Connection], None]


def m001_initial(db: sqlite3.Connection) -> None:
    _run_script(
        db,
        """
        CREATE TABLE photos (
            id INTEGER PRIMARY KEY,
            sha256 TEXT NOT NULL UNIQUE,
            file_name TEXT NOT NULL,
            path TEXT NOT NULL,              -- relative to the data dir
            licence TEXT NOT NULL,           -- normalised: CC0, CC-BY, CC-BY-SA, PD (+ version in licence_version)
            licence_version TEXT NOT NULL DEFAULT '',
            author TEXT NOT NULL,
            source_url TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            phash TEXT NOT NULL,
            subject TEXT NOT NULL DEFAULT '',
            notes TEXT NOT NULL DEFAULT '',
            extra TEXT NOT NULL DEFAULT '{}', -- JSON: observed_on, place, photo id ...
            imported_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE TABLE programs (
            sha256 TEXT PRIMARY KEY,
            path TEXT NOT NULL,              -- content-addressed file, relative to the data dir
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE TABLE renders (
            id INTEGER PRIMARY KEY,
            cache_key TEXT NOT NULL,
            program_sha TEXT NOT NULL,
            seed INTEGER NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            profile TEXT NOT NULL,
            lib_versions TEXT NOT NULL,      -- JSON
            accepted INTEGER NOT NULL,
            coverage REAL,
            violations TEXT NOT NULL,        -- JSON list of {code, message, line}
            console TEXT NOT NULL DEFAULT '[]',
            png_sha TEXT,
            render_ms REAL NOT NULL,
            infra_error TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX renders_cache_key ON renders(cache_key);
        CREATE TABLE model_calls (
            id INTEGER PRIMARY KEY,
            model TEXT NOT NULL,
            base_url TEXT NOT NULL,
            purpose TEXT NOT NULL,
            messages TEXT NOT NULL,          -- JSON; images replaced by their sha256
            params TEXT NOT NULL,            -- JSON
            outcome TEXT NOT NULL,
            response TEXT,
            reasoning TEXT,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            latency_ms REAL NOT NULL,
            cost_usd REAL,
            error TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            config TEXT NOT NULL,            -- JSON
            started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            finished_at TEXT
        );
        CREATE TABLE candidates (
            id INTEGER PRIMARY KEY,
            job_key TEXT NOT NULL UNIQUE,    -- photo/generator/slot/round: a rerun skips finished work
            run_id INTEGER REFERENCES runs(id),
            photo_id INTEGER NOT NULL REFERENCES photos(id),
            generator TEXT NOT NULL,
            round INTEGER NOT NULL,
            seed INTEGER NOT NULL,
            parent_id INTEGER REFERENCES candidates(id),
            program_sha TEXT,
            render_id INTEGER REFERENCES renders(id),
            accepted INTEGER NOT NULL DEFAULT 0,
            coverage REAL,
            png_sha TEXT,
            violations TEXT NOT NULL DEFAULT '[]',
            critique TEXT,                   -- JSON Critique
            coder_call_id INTEGER REFERENCES model_calls(id),
            critic_call_id INTEGER REFERENCES model_calls(id),
            outcome TEXT NOT NULL DEFAULT 'ok',
            infra_error TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX candidates_photo ON candidates(photo_id);
        CREATE TABLE ratings (
            id INTEGER PRIMARY KEY,          -- append-only log; the latest live row per (candidate, curator) wins
            candidate_id INTEGER NOT NULL,
            curator TEXT NOT NULL,
            tier TEXT NOT NULL CHECK (tier IN ('love', 'okay', 'reject', 'skip')),
            note TEXT NOT NULL DEFAULT '',
            undone INTEGER NOT NULL DEFAULT 0,
            source TEXT NOT NULL DEFAULT 'studio',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX ratings_candidate ON ratings(candidate_id, curator);
        CREATE TABLE curators (
            name TEXT PRIMARY KEY,
            password_hash TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE TABLE pool_versions (
            version TEXT PRIMARY KEY,
            manifest TEXT NOT NULL,          -- JSON PoolVersion
            notes TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        """,
    )


def m002_generation(db: sqlite3.Connection) -> None:
    """Generation: tag each model call with its job, so a resumed run reuses a paid-for reply."""
    _run_script(
        db,
        """
        ALTER TABLE model_calls ADD COLUMN job_key TEXT;
        CREATE INDEX model_calls_job_key ON model_calls(job_key);
        """,
    )


def m003_curation_sessions(db: sqlite3.Connection) -> None:
    """Curation: where each curator is (so a reload resumes from the store) and free notes."""
    _run_script(
        db,
        """
        CREATE TABLE curation_sessions (
            curator TEXT PRIMARY KEY,
            candidate_id INTEGER,            -- the candidate on screen; may point at a deleted row
            filters TEXT NOT NULL DEFAULT '{}',  -- JSON curation.queue.Filters
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX ratings_curator ON ratings(curator, id);
        """,
    )


def m004_pool(db: sqlite3.Connection) -> None:
    """Pool: cached per-image features, saved drafts, version params, publications."""
    _run_script(
        db,
        """
        CREATE TABLE image_features (
            png_sha TEXT PRIMARY KEY,        -- features depend only on the pixels
            version INTEGER NOT NULL,        -- pool.similarity.features.FEATURE_VERSION; stale rows are recomputed
            phash TEXT NOT NULL,             -- 64-bit perceptual hash, hex
            hue_hist BLOB NOT NULL,          -- float32[36]: share of all pixels, saturated, per 10 deg of hue
            colour_hist BLOB NOT NULL,       -- float32[513]: share of paint pixels per RGB bin (+1: no paint)
            palette TEXT NOT NULL,           -- JSON list of [hex, share]
            thumb BLOB NOT NULL,             -- small JPEG for reports
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE TABLE pool_drafts (
            id INTEGER PRIMARY KEY,
            params TEXT NOT NULL,            -- JSON: target, caps, love fraction, threshold
            draft TEXT NOT NULL,             -- JSON pool.selection.draft.PoolDraft
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        ALTER TABLE pool_versions ADD COLUMN params TEXT NOT NULL DEFAULT '{}';
        CREATE TABLE pool_publications (
            id INTEGER PRIMARY KEY,
            version TEXT NOT NULL REFERENCES pool_versions(version),
            repo_id TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            commit_oid TEXT NOT NULL,
            tag TEXT NOT NULL,
            url TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        """,
    )


def m005_generation_finish_reason(db: sqlite3.Connection) -> None:
    """Generation: keep a reply's finish reason and refusal, so a reused reply is classified
    as it was when paid for (a length-cut reply stays `truncated`)."""
    _run_script(
        db,
        """
        ALTER TABLE model_calls ADD COLUMN finish_reason TEXT;
        ALTER TABLE model_calls ADD COLUMN refusal TEXT;
        """,
    )


_OLD_JOB_KEY = re.compile(r"^photo([0-9a-f]{16})/(.+)/slot(\d+)/seed(\d+)/(round\d+.*)$")


def m006_job_keys_from_derive_seed(db: sqlite3.Connection) -> None:
    """Generation: chain seeds now come from `derive_seed(base, photo sha256, slot)`, and a job
    key names its chain seed. Rewrite the keys of rounds (and their paid model calls) written
    under the old arithmetic seed, so a rerun of an old batch still resumes instead of paying
    for its model calls again. The rows keep the seed they were rendered with."""
    photos = {row[0][:16]: (row[1], row[0]) for row in db.execute("SELECT sha256, id FROM photos")}
    inverse = pow(1_000_003, -1, 2**31)  # the old formula: (base * 1_000_003 + ...) % 2**31
    for table in ("candidates", "model_calls"):
        rows = db.execute(f"SELECT id, job_key FROM {table} WHERE job_key LIKE 'photo%'")
        for row_id, key in rows.fetchall():
            match = _OLD_JOB_KEY.match(key)
            if not match or match.group(1) not in photos:
                continue
            photo_id, sha = photos[match.group(1)]
            slot, old = int(match.group(3)), int(match.group(4))
            base = ((old - photo_id * 7919 - slot * 104_729) * inverse) % 2**31
            new = derive_seed(base, sha, slot)
            head = f"photo{match.group(1)}/{match.group(2)}/slot{slot}"
            db.execute(
                f"UPDATE {table} SET job_key = ? WHERE id = ?",
                (f"{head}/seed{new}/{match.group(5)}", row_id),
            )


def m008_model_call_http_status(db: sqlite3.Connection) -> None:
    """Generation: each model call keeps the server's HTTP status, so a permanent refusal
    (say a critic's 400 "image input not supported") is not paid for again on a rerun."""
    _run_script(db, "ALTER TABLE model_calls ADD COLUMN http_status INTEGER;\n")


def _run_script(db: sqlite3.Connection, sql: str) -> None:
    # executescript() would COMMIT first and break the migration's transaction.
    for statement in sql.split(";\n"):
        if statement.strip():
            db.execute(statement)


def m009_image_similarity_signature(db: sqlite3.Connection) -> None:
    """Pool: each image's near-duplicate signature (pool/similarity/distance.py: colour, layout,
    texture) beside its cached features; rows without one are recomputed when next read."""
    db.execute("ALTER TABLE image_features ADD COLUMN signature BLOB")


def m011_model_call_served_model(db: sqlite3.Connection) -> None:
    """Generation: each model call keeps the model the server said it served (its body's
    `model`), beside the one requested: a router's fallback shows there."""
    db.execute("ALTER TABLE model_calls ADD COLUMN served_model TEXT")


def m012_model_call_failure(db: sqlite3.Connection) -> None:
    """Generation: each failed model call keeps what its failure meant and who caused it
    (`means/kind/row`: generators/vendor.py), so a rerun decides what to ask again from the
    evidence read when the call was made, never from repetition."""
    db.execute("ALTER TABLE model_calls ADD COLUMN failure TEXT")


def m013_curator_leads_and_blind_key(db: sqlite3.Connection) -> None:
    """Studio: a curator may be a lead (sees agreement and progress in a blind studio), and the
    store keeps one random key that shuffles each curator's blind queue and ids."""
    _run_script(
        db,
        "ALTER TABLE curators ADD COLUMN lead INTEGER NOT NULL DEFAULT 0;\n"
        "CREATE TABLE studio_keys (name TEXT PRIMARY KEY, value BLOB NOT NULL);\n",
    )


def m014_rating_commands(db: sqlite3.Connection) -> None:
    """Studio: a rating keeps the id of the key's command (made by the browser), so a command
    sent again (a retry, a replay after a reload or a restart) is applied once. The view
    tokens' key lives in studio_keys (curation/commands.py), made on first use."""
    _run_script(
        db,
        "ALTER TABLE ratings ADD COLUMN command_id TEXT;\n"
        "CREATE UNIQUE INDEX ratings_command_id ON ratings(command_id);\n"
        "CREATE TABLE IF NOT EXISTS studio_keys (name TEXT PRIMARY KEY, value BLOB NOT NULL);\n",
    )


# Append new migrations here; their names are recorded in the _migrations table.
MIGRATIONS: list[Migration] = [
    m001_initial,
    m002_generation,
    m003_curation_sessions,
    m004_pool,
    m005_generation_finish_reason,
    m006_job_keys_from_derive_seed,
    m007_calibration,  # its SQL lives in refpool/core/store/calibration.py
    m008_model_call_http_status,
    m009_image_similarity_signature,
    m010_frozen_releases,  # its SQL lives in refpool/core/store/releases.py
    m011_model_call_served_model,
    m012_model_call_failure,
    m013_curator_leads_and_blind_key,
    m014_rating_commands,
    m015_photo_corrections,  # its SQL lives in refpool/core/store/photo_corrections.py
    m016_release_marks,  # its SQL lives in refpool/core/store/release_marks.py
    m017_judge_repeats,  # its SQL lives in refpool/core/store/judge_repeats.py
]


def apply(db: sqlite3.Connection) -> list[str]:
    """Apply every pending migration; return the names applied."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY,"
        " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))"
    )
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    applied = []
    for migration in MIGRATIONS:
        if migration.__name__ in done:
            continue
        db.execute("BEGIN IMMEDIATE")  # one transaction per migration
        try:
            migration(db)
            db.execute("INSERT INTO _migrations (name) VALUES (?)", (migration.__name__,))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        applied.append(migration.__name__)
    return applied
