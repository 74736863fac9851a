"""The studio's Pool tab (tab.py) and what blind mode shows of a pool (blind.py)."""
