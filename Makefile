# The two commands in the README: `make demo` and `make test`. Each does its own setup.
.PHONY: setup setup-dev demo test lint fix bench

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

fix: setup-dev
	.venv/bin/ruff check --fix . && .venv/bin/ruff format .

bench: setup-dev
	.venv/bin/python bench/render.py
