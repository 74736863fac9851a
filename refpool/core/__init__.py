"""The bottom of refpool: what every stage stands on and nothing above it may change.

contracts   the typed records every part shares (frozen dataclasses, strict from_dict)
store/      SQLite + content-addressed files, numbered migrations, record load/save
defaults    defaults that more than one part uses (pool size, rounds, gate profile, ...)
seeds       derive_seed(*parts): every derived seed in one place
"""
