"""One table names every ``GUANDAN_*`` setting (web/app/config.py); a bad value is refused with
its variable, what it should be and what it was; ``serve`` configures its workers without the
process's environment."""

import os
import re
from pathlib import Path

import pytest

from web.app.cli import build_parser
from web.app.config import BY_NAME, SETTINGS, from_env, read, table
from web.app.serve_cli import worker_config
from web.app.wsgi import create
from web.store import get_store

ROOT = Path(__file__).resolve().parents[2]
READERS = ("web", "referee", "recognizer", "hardware", "bench", "deploy")
NAME = re.compile(r"GUANDAN_([A-Z][A-Z_]*[A-Z])")


def names_in_the_tree() -> dict[str, str]:
    """Every GUANDAN_ name the code and deployment files hold -> one file holding it."""
    found = {}
    for folder in READERS:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".cfg", ".sh", ".toml"} and path.is_file():
                for name in NAME.findall(path.read_text(encoding="utf-8", errors="replace")):
                    found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def test_the_table_names_every_setting_the_tree_reads():
    missing = {f"GUANDAN_{n}": where for n, where in names_in_the_tree().items() if n not in BY_NAME}
    assert not missing, f"settings read but not in web/app/config.py SETTINGS: {missing}"


def test_each_setting_is_read_where_the_table_says():
    """The app's own settings through ``from_env`` (those with a config key) or ``read("NAME")``;
    the others by their variable in the file the table names."""
    by_read = set(re.findall(r'read\("([A-Z_]+)"\)', "".join(
        (ROOT / p).read_text(encoding="utf-8") for p in ("web/app/serve_cli.py", "web/app/gunicorn_server.py",
                                                         "deploy/gunicorn.conf.py"))))
    stale = [s.variable for s in SETTINGS
             if not (s.key or s.name in by_read if s.read_by == "web/app/config.py"
                     else s.variable in (ROOT / s.read_by).read_text(encoding="utf-8"))]
    assert not stale, f"not read where SETTINGS says: {stale}"
    assert len(BY_NAME) == len(SETTINGS)
    assert all(f"| `{s.variable}` |" in table() for s in SETTINGS)


def test_the_defaults_are_the_app_configuration_without_settings():
    assert from_env({}) == {"DATA_DIR": None, "STORE_URL": None, "GUANDAN_SECRET_KEY": None, "GUANDAN_KEY_FILE": None,
                            "REDIS_URL": None, "REDIS_NAMESPACE": "guandan", "BROADCAST_DELAY": 0.0,
                            "MAX_CONTENT_LENGTH": 1 << 20, "PROXIES": 0, "SECURE_COOKIES": False,
                            "SIGN_LINK_MINUTES": 30.0}
    assert from_env({"GUANDAN_SECURE_COOKIES": "1", "GUANDAN_PROXIES": "2", "GUANDAN_MAX_BODY": ""}) == {
        **from_env({}), "SECURE_COOKIES": True, "PROXIES": 2}
    assert (read("WORKERS", {}), read("CONNECTIONS", {}), read("BIND", {})) == (2, 1000, "127.0.0.1:5000")


@pytest.mark.parametrize("name, value, error", [
    ("MAX_BODY", "1e6", "GUANDAN_MAX_BODY: a whole number of bytes, not '1e6'"),
    ("BROADCAST_DELAY", "soon", "GUANDAN_BROADCAST_DELAY: a number of seconds, not 'soon'"),
    ("PROXIES", "-1", "GUANDAN_PROXIES: at least 0 (the number of proxies in front), not -1"),
    ("WORKERS", "0", "GUANDAN_WORKERS: at least 1 (a number of workers), not 0"),
    ("CONNECTIONS", "many", "GUANDAN_CONNECTIONS: a number of connections, not 'many'"),
])
def test_a_bad_value_is_named(name, value, error):
    with pytest.raises(ValueError) as caught:
        read(name, {f"GUANDAN_{name}": value})
    assert str(caught.value) == error


def test_a_bad_value_stops_the_app_before_it_opens_a_store(tmp_path, monkeypatch):
    monkeypatch.setenv("GUANDAN_MAX_BODY", "lots")
    with pytest.raises(ValueError, match="GUANDAN_MAX_BODY: a whole number of bytes, not 'lots'"):
        create({"DATA_DIR": str(tmp_path / "data")})
    assert not (tmp_path / "data").exists()


def test_serve_configures_its_workers_without_the_environment(tmp_path):
    before = dict(os.environ)
    args = build_parser().parse_args(["serve", "--data", str(tmp_path / "data"), "--secure-cookies"])
    config = worker_config(args)
    assert config == {"DATA_DIR": str(tmp_path / "data"), "SECURE_COOKIES": True}
    app = create(config).app  # what a worker builds (behind the proxy's health check)
    try:
        assert app.config["SECURE_COOKIES"] and app.config["SESSION_COOKIE_SECURE"]
        assert (tmp_path / "data").is_dir()
    finally:
        get_store(app).close()
    assert dict(os.environ) == before
