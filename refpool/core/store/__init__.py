"""The foundation under every stage: one data directory, its SQLite schema and its records.

Store                     the data directory: connections, one transaction helper, blobs
refpool.core.store.migrations  numbered schema migrations
refpool.core.store.photos      Photo load/list
refpool.core.store.photo_corrections  photo corrections and withdrawals (m015), near-dup hashes
refpool.core.store.candidates  Candidate load/save: the only module that queries `candidates`
refpool.core.store.releases    frozen releases: rows, files by sha256, how each was frozen
refpool.core.store.release_marks  what is said of a version later: content hash, withdrawal
"""

from refpool.core.store.db import HOME_ENV, Store, data_home, sha256_bytes

__all__ = ["HOME_ENV", "Store", "data_home", "sha256_bytes"]
