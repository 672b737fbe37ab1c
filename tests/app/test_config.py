"""One table names every ``GUANDAN_*`` setting (web/settings.py), and every reader goes through
it, when it needs the value, never at import time; a bad value is refused with its variable,
what it should be and what it was; ``serve`` configures its workers without the process's
environment."""

import ast
import os
import re
from pathlib import Path

import pytest

from recognizer.decks import data_folder, deck_folder
from web.app.cli import build_parser
from web.app.config import from_env
from web.app.serve_cli import worker_config
from web.app.wsgi import create
from web.settings import BY_NAME, SETTINGS, read, table
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
    assert not missing, f"settings read but not in web/settings.py SETTINGS: {missing}"


def test_each_setting_is_read_where_the_table_says():
    """The app's own settings through ``from_env`` (those with a config key); the others by
    ``read("NAME")`` in the file the table names, or by their variable where that file cannot
    import ``web.settings`` (the recognizer, haproxy's configuration)."""
    stale = []
    for s in SETTINGS:
        text = (ROOT / s.read_by).read_text(encoding="utf-8")
        through_the_table = s.read_by.startswith(("web/", "deploy/")) and s.read_by.endswith(".py")
        if not (s.key and s.read_by == "web/app/config.py" or
                (f'read("{s.name}")' if through_the_table else s.variable) in text):
            stale.append(s.variable)
    assert not stale, f"not read where SETTINGS says: {stale}"
    assert len(BY_NAME) == len(SETTINGS)
    assert all(f"| `{s.variable}` |" in table() for s in SETTINGS)


ENVIRON_READ = re.compile(r"\bos\.environ\b(?!\[[^]]+\]\s*=|\.setdefault)|\bgetenv\(")
READS_THE_ENVIRONMENT = {
    "web/settings.py": "the table",
    "recognizer/decks.py": "GUANDAN_DATA: the recognizer never imports web",
    "web/store/signing.py": "the store's key for the command line, and XDG_CONFIG_HOME for the per-user key",
}


def test_only_the_table_reads_the_environment():
    """Besides the listed exceptions, no module of the tree reads the process's environment
    (setting a variable for a library, as training does for ultralytics, is no read)."""
    readers = {str(path.relative_to(ROOT)) for folder in ("web", "referee", "recognizer", "hardware", "deploy")
               for path in (ROOT / folder).rglob("*.py") if ENVIRON_READ.search(path.read_text(encoding="utf-8"))}
    assert readers == set(READS_THE_ENVIRONMENT)


def _read_on_import(path: Path) -> list[int]:
    """Lines of ``path`` that read a setting or the environment when the module is imported
    (outside any function, and outside ``if __name__ == "__main__"``)."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "read" or \
                isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv"}:
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_nothing_is_read_at_import_time():
    """``deploy/gunicorn.conf.py`` alone reads its settings as it is loaded: gunicorn loads it
    once, at start, to take them."""
    at_import = {f"{path.relative_to(ROOT)}:{line}" for folder in ("web", "referee", "recognizer", "hardware")
                 for path in (ROOT / folder).rglob("*.py") for line in _read_on_import(path)}
    assert not at_import
    assert _read_on_import(ROOT / "deploy" / "gunicorn.conf.py")  # the check sees a read on import


def test_the_recognizer_data_folder_is_the_table_s_and_read_when_asked(monkeypatch, tmp_path):
    monkeypatch.delenv("GUANDAN_DATA", raising=False)
    assert data_folder() == Path(BY_NAME["DATA"].shown).expanduser()
    monkeypatch.setenv("GUANDAN_DATA", str(tmp_path))  # after the import: heard
    assert deck_folder(None, "club") == tmp_path / "enrolled" / "club"
    assert data_folder("elsewhere") == Path("elsewhere")


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
