"""refpool's shared core: the typed records, the store under every stage, photo intake and the CLI.

Layers, lowest first (tests/test_layout.py enforces them):
    refpool.core.contracts    typed records shared by every part
    refpool.core.store        SQLite + content-addressed files, migrations, record load/save
    renderer/            the shared Chromium renderer and gate (imports only refpool.core.contracts)
    refpool.intake       stage 1: licensed photos in (folders, iNaturalist)
    generators/          stage 2: photos -> programs -> renders -> critiques, over rounds
    curation/            stage 3: curators rate candidates
    pool/                stage 4: selection, diversity, export, versions, publishing
    refpool.cli, app.py  shells over all of the above
"""

__version__ = "0.1.0"
