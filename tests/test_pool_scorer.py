"""Preference scores: `refpool score` against a loopback HPSv3 endpoint speaking real HTTP,
resumable, and never faked when the scorer cannot answer."""

from __future__ import annotations

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from factories import add_photo
from judge_fakes import painting

from pool.reward.scorer import HPSv3PackageScorer, ScorerError, make_scorer
from refpool import cli
from refpool.core.store import candidates
from refpool.core.store.calibration import preferences
from renderer.gate import measure_coverage


class LoopbackHPSv3:
    """POST /score {png_base64, prompt} -> {mu, sigma}: mu grows with paint coverage."""

    def __init__(self, available: bool = True) -> None:
        self.available = available
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                outer.requests.append(body)
                png = base64.b64decode(body["png_base64"])
                if not outer.available:
                    reply = {"score": 0.0, "available": False, "error": "CUDA out of memory"}
                else:
                    mu = round(measure_coverage(png) * 20 - 3, 4)
                    reply = {"mu": mu, "sigma": 0.5, "available": True}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/score"

    def __enter__(self) -> LoopbackHPSv3:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def models_file(tmp_path, url: str) -> str:
    path = tmp_path / "models.json"
    scorer = {"kind": "http", "url": url, "prompt": "a watercolour painting of a $subject"}
    path.write_text(json.dumps({"models": {}, "scorers": {"hpsv3": scorer}}))
    return str(path)


def add(store, cov: float) -> int:
    photo = add_photo(store, f"hibiscus{cov}.jpg", url=f"https://example.org/{cov}")
    return candidates.save(
        store,
        {
            "job_key": f"score/{cov}",
            "photo_id": photo,
            "generator": "procedural",
            "round": 0,
            "seed": 0,
            "accepted": 1,
            "coverage": cov,
            "png_sha": store.put_png(painting(cov)),
        },
    )


def run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_score_fills_mu_and_sigma_from_an_http_endpoint_and_resumes(store, capsys, tmp_path):
    low, high = add(store, 0.1), add(store, 0.4)
    with LoopbackHPSv3() as server:
        models = models_file(tmp_path, server.url)
        code, out, err = run(capsys, "score", "--scorer", "hpsv3", "--models-file", models)
        assert code == 0, err
        assert "2 candidates scored" in out
        assert len(server.requests) == 2
        assert server.requests[0]["prompt"] == "a watercolour painting of a hibiscus0"
        scores = preferences(store)
        assert (scores[low].hpsv3_mu, scores[low].hpsv3_sigma) == (-1.0, 0.5)
        assert (scores[high].hpsv3_mu, scores[high].hpsv3_sigma) == (5.0, 0.5)
        assert scores[high].scorer == "hpsv3"
        from pool.reward.view import preference_figures

        figures = preference_figures(store, [low, high])
        assert (figures.scored, figures.mu_median, figures.mu_min) == (2, 2.0, -1.0)
        assert figures.note == "hpsv3_mu and hpsv3_sigma from hpsv3"
        code, out, _ = run(capsys, "score", "--scorer", "hpsv3", "--models-file", models)
        assert code == 0 and "0 candidates scored, 2 already scored" in out
        assert len(server.requests) == 2  # nothing asked twice


def test_a_scorer_without_a_score_is_an_error_and_nothing_is_faked(store, capsys, tmp_path):
    add(store, 0.2)
    with LoopbackHPSv3(available=False) as server:
        models = models_file(tmp_path, server.url)
        code, _, err = run(capsys, "score", "--scorer", "hpsv3", "--models-file", models)
    assert code == 1 and "CUDA out of memory" in err and "rerun" in err
    assert preferences(store) == {}


def test_an_unreachable_or_unnamed_scorer_is_explained(store, capsys, tmp_path):
    add(store, 0.2)
    models = models_file(tmp_path, "http://127.0.0.1:9/score")
    code, _, err = run(capsys, "score", "--scorer", "hpsv3", "--models-file", models)
    assert code == 1 and "could not be reached" in err
    code, _, err = run(capsys, "score", "--models-file", models)
    assert code == 1 and "--scorer (hpsv3)" in err and "null" in err
    code, _, err = run(capsys, "score", "--scorer", "nope", "--models-file", models)
    assert code == 1 and "no scorer 'nope'" in err
    assert preferences(store) == {}


def test_the_hpsv3_package_scorer_says_what_to_install():
    scorer = make_scorer("hpsv3-local", {"kind": "hpsv3", "device": "cuda"})
    assert isinstance(scorer, HPSv3PackageScorer)
    buf = io.BytesIO(painting(0.2))
    with pytest.raises(ScorerError, match="pip install hpsv3|CUDA GPU"):
        scorer.score(buf.getvalue(), "a watercolour painting of a flower")
    with pytest.raises(ScorerError, match="unknown kind"):
        make_scorer("x", {"kind": "clip"})


def test_the_shipped_models_file_configures_both_hpsv3_forms():
    from pool.reward.judge_config import models_data
    from pool.reward.scorer import scorer_configs

    configs = scorer_configs(models_data())
    assert configs["hpsv3"]["kind"] == "http" and configs["hpsv3-local"]["kind"] == "hpsv3"
