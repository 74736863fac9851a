# The two commands in the README: `make demo` and `make test`. Each does its own setup.
.PHONY: setup setup-dev demo test lint fix bench docs

setup:
	bash scripts/setup.sh

setup-dev:
	bash scripts/setup.sh --dev

demo: setup
	.venv/bin/refpool demo

test: setup-dev
	.venv/bin/python -m pytest -q

lint: setup-dev
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet

# Regenerate the reference pages from the code, then build the site into site/.
docs: setup-dev
	.venv/bin/python -m refpool.docgen && NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

fix: setup-dev
	.venv/bin/ruff check --fix . && .venv/bin/ruff format .

bench: setup-dev
	.venv/bin/python bench/render.py
