"""Run a sync tool in a child process that can be killed on timeout or cancel.

A thread cannot be stopped from outside; a process can. Each call starts a fresh
child (forkserver where available, else spawn: never plain fork from a threaded
event loop), so the tool and its arguments must pickle (a module-level function).
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import traceback
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any


class ToolProcessError(RuntimeError):
    """The tool raised in its child process, or the child died; carries the traceback."""


def _context() -> Any:
    methods = mp.get_all_start_methods()
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def _child(conn: Connection, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    try:
        msg: tuple[Any, ...] = ("ok", fn(**kwargs))
    except BaseException as exc:
        msg = ("err", exc, traceback.format_exc())
    try:
        conn.send(msg)
    except Exception as exc:  # unpicklable result or exception
        detail = f"{type(exc).__name__}: {exc}"
        if msg[0] == "err":
            text = f"{type(msg[1]).__name__}: {msg[1]}"
            conn.send(("err", ToolProcessError(text), msg[2]))
        else:
            conn.send(("err", ToolProcessError(f"result could not be sent back: {detail}"), ""))
    finally:
        conn.close()


async def call_in_process(
    fn: Callable[..., Any], kwargs: Mapping[str, Any], timeout: float | None
) -> Any:
    """Call `fn(**kwargs)` in a child; on timeout or cancellation terminate it."""
    ctx = _context()
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(sender, fn, dict(kwargs)), daemon=True)
    loop = asyncio.get_running_loop()
    try:
        proc.start()
    except Exception as exc:
        receiver.close()
        sender.close()
        raise ToolProcessError(f"could not start the tool process: {exc}") from exc
    sender.close()
    readable: asyncio.Future[None] = loop.create_future()

    def on_readable() -> None:
        if not readable.done():
            readable.set_result(None)

    fd = receiver.fileno()
    loop.add_reader(fd, on_readable)
    try:
        async with asyncio.timeout(timeout):
            await readable
        try:
            msg = receiver.recv()
        except EOFError:
            proc.join(1.0)
            raise ToolProcessError(
                f"the tool process died without a result (exit code {proc.exitcode})"
            ) from None
    finally:
        loop.remove_reader(fd)
        receiver.close()
        if proc.is_alive():
            proc.terminate()
            proc.join(0.5)
            if proc.is_alive():
                proc.kill()
                proc.join(0.5)
        else:
            proc.join(0.1)
    if msg[0] == "ok":
        return msg[1]
    error = msg[1]
    if isinstance(error, Exception):
        error.add_note(f"in the tool process:\n{msg[2]}".rstrip())
        raise error
    raise ToolProcessError(f"{type(error).__name__}: {error}")
