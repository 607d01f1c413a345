"""Loops, compiled: `for` and `while`.

A loop charges its iteration (the target, the test, the body's statements)
in one step, and pays up to `PREPAY` iterations ahead while no limit check
falls within them, refunding what it did not run; `break`/`continue`/`return`
come back from the body as `Flow` values."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._names import StmtFn, block, check_at, has_jump, mark
from memagent.sandbox._policy import BREAK, CONTINUE, Flow
from memagent.sandbox._scope import Ctx, Scope
from memagent.sandbox._targets import compile_target

PREPAY = 32
"""Iterations a loop charges ahead when no limit check is due within them
(refunded when the loop ends early): one counter update per 33 iterations."""


def s_for(it: Compiler, node: ast.For, ctx: Ctx) -> StmtFn:
    iterable = it.compile_expr(node.iter, ctx)
    target = node.target
    saved = ctx.weight
    ctx.weight = 1
    name = target.id if isinstance(target, ast.Name) and ctx.direct(target.id) else None
    store = None if name is not None else compile_target(it, target, ctx)
    fns, lines, body_weight = it.compile_body(node.body, ctx)
    weight = ctx.weight + body_weight  # charged once per iteration
    ctx.weight = saved
    orelse = it.compile_block(node.orelse, ctx) if node.orelse else None
    jumps = has_jump(node.body)
    iterate = it.iterate
    check_bind = it.check_bind
    ahead = PREPAY * weight
    direct = store is None
    run = tuple(fns)
    line_of = dict(zip(fns, lines, strict=True))
    first_line = lines[0] if lines else node.lineno
    # with a `break`/`continue` the body runs as a block, whose flow the loop reads
    body = block(it, fns, lines, 0) if jumps else None
    if len(fns) == 1 and not jumps:
        return _for_1(it, iterable, name, store, fns[0], lines[0], weight, orelse)
    if direct and body is None:
        return _for_run(it, iterable, name, run, line_of, first_line, weight, orelse)  # type: ignore[arg-type]

    def for_(s: Scope) -> Any:
        items = iterate(iterable(s))
        if name is not None:
            check_bind(name)
        variables = s.vars
        prepaid = 0
        f = None
        try:
            for item in items:
                if prepaid:
                    prepaid -= 1
                else:
                    # charge this iteration and, while no check is due within
                    # them, the next PREPAY (refunded if the loop ends first)
                    ops = it.ops + weight
                    if ops + ahead < it.next_check:
                        it.ops = ops + ahead
                        prepaid = PREPAY
                    else:
                        it.ops = ops
                        if ops >= it.next_check:
                            check_at(it, first_line)
                if direct:
                    variables[name] = item  # type: ignore[index]
                else:
                    store(s, item)  # type: ignore[misc]
                if body is None:
                    for f in run:
                        r = f(s)
                        if r is not None and type(r) is Flow:
                            return r  # a `return`: this body has no break/continue
                else:
                    r = body(s)
                    if r is not None and type(r) is Flow:
                        if r is BREAK:
                            return None
                        if r is not CONTINUE:
                            return r
        except BaseException as exc:
            mark(it, exc, line_of.get(f, first_line))  # type: ignore[arg-type]
            raise
        finally:
            if prepaid:
                it.ops -= prepaid * weight
        if orelse is not None:
            return orelse(s)
        return None

    return for_


def _for_1(
    it: Compiler,
    iterable: Callable[[Scope], Any],
    name: str | None,
    store: Callable[[Scope, Any], None] | None,
    f: StmtFn,
    line: int,
    weight: int,
    orelse: StmtFn | None,
) -> StmtFn:
    """The commonest loop: one statement, no break/continue (`s_for` without
    the inner statement loop)."""
    iterate, check_bind = it.iterate, it.check_bind
    ahead = PREPAY * weight

    def for_1(s: Scope) -> Any:
        items = iterate(iterable(s))
        if name is not None:
            check_bind(name)
        variables = s.vars
        prepaid = 0
        try:
            for item in items:
                if prepaid:
                    prepaid -= 1
                else:
                    ops = it.ops + weight
                    if ops + ahead < it.next_check:
                        it.ops = ops + ahead
                        prepaid = PREPAY
                    else:
                        it.ops = ops
                        if ops >= it.next_check:
                            it.check_limits()
                if store is None:
                    variables[name] = item  # type: ignore[index]
                else:
                    store(s, item)
                r = f(s)
                if r is not None and type(r) is Flow:
                    return r  # a `return` (the body has no break/continue)
        except BaseException as exc:
            mark(it, exc, line)
            raise
        finally:
            if prepaid:
                it.ops -= prepaid * weight
        if orelse is not None:
            return orelse(s)
        return None

    if store is not None:
        return for_1
    target: str = name  # type: ignore[assignment]

    def for_1_name(s: Scope) -> Any:
        # `for i in ...:` with one statement: the loop variable stored inline
        items = iterate(iterable(s))
        check_bind(target)
        variables = s.vars
        prepaid = 0
        try:
            for item in items:
                if prepaid:
                    prepaid -= 1
                else:
                    ops = it.ops + weight
                    if ops + ahead < it.next_check:
                        it.ops = ops + ahead
                        prepaid = PREPAY
                    else:
                        it.ops = ops
                        if ops >= it.next_check:
                            it.check_limits()
                variables[target] = item
                r = f(s)
                if r is not None and type(r) is Flow:
                    return r  # a `return` (the body has no break/continue)
        except BaseException as exc:
            mark(it, exc, line)
            raise
        finally:
            if prepaid:
                it.ops -= prepaid * weight
        if orelse is not None:
            return orelse(s)
        return None

    return for_1_name


def _for_run(
    it: Compiler,
    iterable: Callable[[Scope], Any],
    target: str,
    run: tuple[StmtFn, ...],
    line_of: dict[StmtFn, int],
    first_line: int,
    weight: int,
    orelse: StmtFn | None,
) -> StmtFn:
    """`for name in ...:` over several statements, no break/continue: `s_for`
    without the per-iteration choices."""
    iterate, check_bind = it.iterate, it.check_bind
    ahead = PREPAY * weight

    def for_run(s: Scope) -> Any:
        items = iterate(iterable(s))
        check_bind(target)
        variables = s.vars
        prepaid = 0
        f = None
        try:
            for item in items:
                if prepaid:
                    prepaid -= 1
                else:
                    ops = it.ops + weight
                    if ops + ahead < it.next_check:
                        it.ops = ops + ahead
                        prepaid = PREPAY
                    else:
                        it.ops = ops
                        if ops >= it.next_check:
                            check_at(it, first_line)
                variables[target] = item
                for f in run:
                    r = f(s)
                    if r is not None and type(r) is Flow:
                        return r  # a `return`: this body has no break/continue
        except BaseException as exc:
            mark(it, exc, line_of.get(f, first_line))  # type: ignore[arg-type]
            raise
        finally:
            if prepaid:
                it.ops -= prepaid * weight
        if orelse is not None:
            return orelse(s)
        return None

    return for_run


def s_while(it: Compiler, node: ast.While, ctx: Ctx) -> StmtFn:
    saved = ctx.weight
    ctx.weight = 1
    test = it.compile_expr(node.test, ctx)
    fns, lines, body_weight = it.compile_body(node.body, ctx)
    weight = ctx.weight + body_weight
    ctx.weight = saved
    body = block(it, fns, lines, 0)
    orelse = it.compile_block(node.orelse, ctx) if node.orelse else None
    truth = it.truth
    first_line = lines[0] if lines else node.lineno
    ahead = PREPAY * weight
    if fns and not has_jump(node.body):
        return _while_run(it, test, fns, lines, first_line, weight, orelse)

    def while_(s: Scope) -> Any:
        prepaid = 0
        try:
            while True:
                if prepaid:
                    prepaid -= 1
                else:
                    ops = it.ops + weight
                    if ops + ahead < it.next_check:
                        it.ops = ops + ahead
                        prepaid = PREPAY
                    else:
                        it.ops = ops
                        if ops >= it.next_check:
                            check_at(it, first_line)
                t = test(s)
                if not (t is True or (t is not False and truth(t))):
                    break
                r = body(s)
                if r is not None and type(r) is Flow:
                    if r is BREAK:
                        return None
                    if r is not CONTINUE:
                        return r
        finally:
            if prepaid:
                it.ops -= prepaid * weight
        if orelse is not None:
            return orelse(s)
        return None

    return while_


def _while_run(
    it: Compiler,
    test: Callable[[Scope], Any],
    fns: list[StmtFn],
    lines: list[int],
    first_line: int,
    weight: int,
    orelse: StmtFn | None,
) -> StmtFn:
    """`while test:` over statements without break/continue: `s_while` with
    the body's statements run in place of a block (each error still names
    its statement's line; an error of the test is left to the enclosing
    statement, as there)."""
    truth = it.truth
    ahead = PREPAY * weight
    run = tuple(fns)
    line_of = dict(zip(fns, lines, strict=True))

    def while_run(s: Scope) -> Any:
        prepaid = 0
        f = None
        try:
            while True:
                if prepaid:
                    prepaid -= 1
                else:
                    ops = it.ops + weight
                    if ops + ahead < it.next_check:
                        it.ops = ops + ahead
                        prepaid = PREPAY
                    else:
                        it.ops = ops
                        if ops >= it.next_check:
                            check_at(it, first_line)
                f = None
                t = test(s)
                if not (t is True or (t is not False and truth(t))):
                    break
                for f in run:
                    r = f(s)
                    if r is not None and type(r) is Flow:
                        return r  # a `return`: this body has no break/continue
        except BaseException as exc:
            if f is not None:
                mark(it, exc, line_of[f])
            raise
        finally:
            if prepaid:
                it.ops -= prepaid * weight
        if orelse is not None:
            return orelse(s)
        return None

    return while_run
