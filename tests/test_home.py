from __future__ import annotations

from pathlib import Path

import pytest

from memagent.core import CorruptFile, MemoryHome, NotFound, load_config, resolve_home


def test_resolve_home_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMAGENT_HOME", str(tmp_path / "env"))
    assert resolve_home(tmp_path / "flag") == tmp_path / "flag"
    assert resolve_home(None) == tmp_path / "env"
    monkeypatch.delenv("MEMAGENT_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert resolve_home(None) == tmp_path / "user" / ".memagent"


def test_init_creates_layout_and_is_idempotent(tmp_path: Path) -> None:
    mh = MemoryHome.open(tmp_path / "h")
    created = mh.init()
    assert "vault/user.md" in created and "config.toml" in created
    for d in ("vault/entities", "profile", "chunks", "personalities", "sliders", "gauges", "log"):
        assert (mh.root / d).is_dir()
    (mh.root / "vault/user.md").write_text("my edits")
    assert mh.init() == []
    assert (mh.root / "vault/user.md").read_text() == "my edits"


def test_require_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="memagent init"):
        MemoryHome.open(tmp_path / "nothing").require()


def test_config_defaults_and_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    assert load_config(cfg).limits.max_file_bytes == 1024 * 1024
    cfg.write_text("[limits]\nmax_file_bytes = 2048\n")
    assert load_config(cfg).limits.max_file_bytes == 2048
    cfg.write_text("[limits\n")
    with pytest.raises(CorruptFile, match="line 1"):
        load_config(cfg)
    cfg.write_text('[limits]\nmax_file_bytes = "big"\n')
    with pytest.raises(CorruptFile, match=r"limits\.max_file_bytes"):
        load_config(cfg)
    cfg.write_text("[limits]\nmax_file_bytes = -1\n")
    with pytest.raises(CorruptFile):
        load_config(cfg)
