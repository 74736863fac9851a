"""The pool: store (SQLite + files), photo library, selection, diversity report, export, versions, publishing."""
