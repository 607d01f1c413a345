"""Specialised closures for the shapes loops spend their time in: arithmetic
and comparisons on numbers and strings, augmented assignment to a local, and
constant folding.

Each one runs the checks its general counterpart (`_ops.binop`,
`_ops.compare`) makes for the types it takes the fast way (an int product is
sized before it is computed) and hands every other case to that general
function, so no check is skipped. Operands that are names of the scope's own
variables are read inline from its dict, falling back to the full name lookup
(builtins, errors) when the name is not there."""

from __future__ import annotations

import ast
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._names import ExprFn, StmtFn, loader, storer
from memagent.sandbox._policy import _MISSING, BINOPS, CMPOPS
from memagent.sandbox._scope import Ctx, Scope

# int/int and float operations the general `binop` runs unchecked
_NUM_OPS = frozenset(
    {
        ast.Add,
        ast.Sub,
        ast.Div,
        ast.FloorDiv,
        ast.Mod,
        ast.RShift,
        ast.BitAnd,
        ast.BitOr,
        ast.BitXor,
    }
)
_ORDER_OPS = frozenset({ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE})
# operand types the general `compare` hands straight to the operator
_CMP_PLAIN = frozenset({int, float, str, bool, bytes, type(None)})
_FOLD_BITS = 4096


def fold(node: ast.expr) -> Any:
    """The value of a constant numeric expression (`-1`, `2 ** 10`, `(1, 'a')`),
    or `_MISSING`. Only small numbers fold, so nothing the limits would refuse
    or charge is computed ahead of time."""
    t = type(node)
    if t is ast.Constant:
        return node.value  # type: ignore[attr-defined]
    if t is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):  # type: ignore[attr-defined]
        v = fold(node.operand)  # type: ignore[attr-defined]
        if type(v) in (int, float, complex) and (type(v) is not int or v.bit_length() < _FOLD_BITS):
            return -v if type(node.op) is ast.USub else +v  # type: ignore[attr-defined]
        return _MISSING
    if t is ast.BinOp:
        a = fold(node.left)  # type: ignore[attr-defined]
        b = fold(node.right)  # type: ignore[attr-defined]
        op = type(node.op)  # type: ignore[attr-defined]
        if type(a) not in (int, float) or type(b) not in (int, float):
            return _MISSING
        if op is ast.Pow and (abs(b) > 64 or (type(a) is int and abs(a) > 2**32)):
            return _MISSING
        if op is ast.LShift or op is ast.MatMult:
            return _MISSING
        try:
            value = BINOPS[op](a, b)
        except Exception:
            return _MISSING  # the error happens when the code runs, as it would
        if type(value) is int and value.bit_length() > _FOLD_BITS:
            return _MISSING
        return value
    if t is ast.Slice:
        parts = [
            None if p is None else fold(p)
            for p in (node.lower, node.upper, node.step)  # type: ignore[attr-defined]
        ]
        if all(p is None or (type(p) is int and abs(p) < 2**62) for p in parts):
            return slice(*parts)
        return _MISSING
    if t is ast.Tuple and type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
        items = [fold(e) for e in node.elts]  # type: ignore[attr-defined]
        if len(items) <= 64 and all(
            type(v) in (int, float, str, bool, type(None)) and (type(v) is not str or len(v) < 256)
            for v in items
        ):
            return tuple(items)
    return _MISSING


def _const(value: Any) -> ExprFn:
    return lambda s: value


def operand(it: Compiler, node: ast.expr, ctx: Ctx) -> tuple[str | None, Any, ExprFn]:
    """(name, _MISSING, loader) for a name of the scope's own variables,
    (None, value, fn) for a constant, (None, _MISSING, fn) for anything else."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and ctx.direct(node.id):
        ctx.weight += 1
        return node.id, _MISSING, loader(it, node.id, ctx)
    value = fold(node)
    if value is not _MISSING:
        ctx.weight += 1
        return None, value, _const(value)
    return None, _MISSING, it.compile_expr(node, ctx)


def compile_binop(it: Compiler, node: ast.BinOp, ctx: Ctx) -> ExprFn:
    value = fold(node)
    if value is not _MISSING:
        return _const(value)
    op = type(node.op)
    ln, _, lf = operand(it, node.left, ctx)
    rn, rc, rf = operand(it, node.right, ctx)
    binop = it.binop
    if op is ast.Mult:
        return _mult(it, ln, lf, rn, rf)
    if op not in _NUM_OPS:
        return lambda s: binop(op, lf(s), rf(s))
    fn = BINOPS[op]
    if ln is not None and rn is not None:
        n1, n2 = ln, rn

        def num_names(s: Scope) -> Any:
            v = s.vars
            try:
                a = v[n1]
            except KeyError:
                a = lf(s)
            try:
                b = v[n2]
            except KeyError:
                b = rf(s)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return fn(a, b)
            return binop(op, a, b)

        return num_names
    if rc is not _MISSING and type(rc) in (int, float):
        b = rc
        if ln is not None and op is ast.Mod:
            n1 = ln

            def mod_name_const(s: Scope) -> Any:
                try:
                    a = s.vars[n1]
                except KeyError:
                    a = lf(s)
                if type(a) is int:
                    return a % b
                return binop(op, a, b)

            return mod_name_const
        if ln is not None and op is ast.Add:
            n1 = ln

            def add_name_const(s: Scope) -> Any:
                try:
                    a = s.vars[n1]
                except KeyError:
                    a = lf(s)
                if type(a) is int:
                    return a + b
                return binop(op, a, b)

            return add_name_const
        if ln is not None:
            n1 = ln

            def num_name_const(s: Scope) -> Any:
                try:
                    a = s.vars[n1]
                except KeyError:
                    a = lf(s)
                ta = type(a)
                if ta is int or ta is float:
                    return fn(a, b)
                return binop(op, a, b)

            return num_name_const

        def num_const(s: Scope) -> Any:
            a = lf(s)
            ta = type(a)
            if ta is int or ta is float:
                return fn(a, b)
            return binop(op, a, b)

        if op is not ast.Add:
            return num_const

        def add_const(s: Scope) -> Any:
            a = lf(s)
            if type(a) is int:
                return a + b
            return binop(op, a, b)

        return add_const

    def num(s: Scope) -> Any:
        a = lf(s)
        b = rf(s)
        ta, tb = type(a), type(b)
        if (ta is int or ta is float) and (tb is int or tb is float):
            return fn(a, b)
        return binop(op, a, b)

    if op is not ast.Add:
        return num
    max_len = it.limits.max_str_len
    max_alloc = it.limits.max_total_alloc
    account = it.account

    def add(s: Scope) -> Any:
        a = lf(s)
        b = rf(s)
        ta, tb = type(a), type(b)
        if (ta is int or ta is float) and (tb is int or tb is float):
            return a + b
        if ta is str and tb is str:
            # what `binop` does for two strings: size, then charge the result
            n = len(a) + len(b)
            if n <= max_len:
                it.allocated += 49 + n
                if it.allocated > max_alloc:
                    account(0)
                return a + b
        return binop(op, a, b)

    return add


def _mult(it: Compiler, ln: str | None, lf: ExprFn, rn: str | None, rf: ExprFn) -> ExprFn:
    """`a * b`: an int product is sized (`need_bits`) before it is computed, as
    in `binop`; sequences repeated go to `binop`, which sizes them."""
    binop = it.binop
    maxbits = it.limits.max_int_bits
    mult = ast.Mult

    if ln is not None and rn is not None:
        n1, n2 = ln, rn

        def mult_names(s: Scope) -> Any:
            v = s.vars
            try:
                a = v[n1]
            except KeyError:
                a = lf(s)
            try:
                b = v[n2]
            except KeyError:
                b = rf(s)
            ta, tb = type(a), type(b)
            if ta is int and tb is int:
                if a.bit_length() + b.bit_length() <= maxbits:
                    return a * b
            elif ta is float and (tb is float or tb is int):
                return a * b
            return binop(mult, a, b)

        return mult_names
    if ln is not None:
        n1 = ln

        def mult_name(s: Scope) -> Any:
            try:
                a = s.vars[n1]
            except KeyError:
                a = lf(s)
            b = rf(s)
            ta, tb = type(a), type(b)
            if ta is int and tb is int:
                if a.bit_length() + b.bit_length() <= maxbits:
                    return a * b
            elif ta is float and (tb is float or tb is int):
                return a * b
            return binop(mult, a, b)

        return mult_name

    def mult_any(s: Scope) -> Any:
        a = lf(s)
        b = rf(s)
        ta, tb = type(a), type(b)
        if ta is int and tb is int:
            if a.bit_length() + b.bit_length() <= maxbits:
                return a * b
        elif ta is float and (tb is float or tb is int):
            return a * b
        return binop(mult, a, b)

    return mult_any


def augassign_name(
    it: Compiler, name: str, op: type[ast.operator], value_node: ast.expr, ctx: Ctx
) -> StmtFn:
    """`name op= value`: the current value, then the value, then the store, as
    Python orders them; numbers of a local take the fast way."""
    load = loader(it, name, ctx)
    store = storer(it, name, ctx)
    _, const, value = operand(it, value_node, ctx)
    binop = it.binop
    if not ctx.direct(name) or (op not in _NUM_OPS and op is not ast.Mult):
        return lambda s: store(s, binop(op, load(s), value(s), True))
    fn = BINOPS[op]
    is_mult = op is ast.Mult
    maxbits = it.limits.max_int_bits
    bindable = it.bindable
    check_bind = it.check_bind

    def aug_local(s: Scope) -> None:
        v = s.vars
        try:
            a = v[name]
        except KeyError:
            a = load(s)
        b = value(s)
        ta, tb = type(a), type(b)
        if is_mult:
            if (ta is int and tb is int and a.bit_length() + b.bit_length() <= maxbits) or (
                ta is float and (tb is float or tb is int)
            ):
                r = a * b
            else:
                r = binop(op, a, b, True)
        elif (ta is int or ta is float) and (tb is int or tb is float):
            r = fn(a, b)
        else:
            r = binop(op, a, b, True)
        if name not in bindable:
            check_bind(name)
        v[name] = r

    max_len = it.limits.max_str_len
    max_alloc = it.limits.max_total_alloc
    account = it.account

    def aug_local_add(s: Scope) -> None:
        # `total += x`, `text += piece`: what `binop` does for numbers and for
        # two strings (sized, then the result charged), inline
        v = s.vars
        try:
            a = v[name]
        except KeyError:
            a = load(s)
        b = value(s)
        ta, tb = type(a), type(b)
        if ta is int and tb is int:
            r = a + b
        elif ta is str and tb is str and len(a) + len(b) <= max_len:
            r = a + b
            it.allocated += 49 + len(r)
            if it.allocated > max_alloc:
                account(0)
        elif (ta is int or ta is float) and (tb is int or tb is float):
            r = a + b
        else:
            r = binop(op, a, b, True)
        if name not in bindable:
            check_bind(name)
        v[name] = r

    if const is _MISSING or is_mult or type(const) is not int:
        return aug_local_add if op is ast.Add else aug_local
    b_const = const

    def aug_local_int(s: Scope) -> None:
        v = s.vars
        try:
            a = v[name]
        except KeyError:
            a = load(s)
        ta = type(a)
        r = fn(a, b_const) if ta is int or ta is float else binop(op, a, b_const, True)
        if name not in bindable:
            check_bind(name)
        v[name] = r

    return aug_local_int


def compile_compare(it: Compiler, node: ast.Compare, ctx: Ctx) -> ExprFn:
    compare, truth = it.compare, it.truth
    if len(node.ops) > 1:
        left = it.compile_expr(node.left, ctx)
        pairs = [
            (type(o), it.compile_expr(c, ctx))
            for o, c in zip(node.ops, node.comparators, strict=True)
        ]

        def chain(s: Scope) -> Any:
            a = left(s)
            result: Any = True
            for op, comp in pairs:
                b = comp(s)
                result = compare(op, a, b)
                if not truth(result):
                    return result
                a = b
            return result

        return chain
    op = type(node.ops[0])
    ln, _, lf = operand(it, node.left, ctx)
    rn, rc, rf = operand(it, node.comparators[0], ctx)
    if op is ast.Is or op is ast.IsNot:
        fn = CMPOPS[op]
        return lambda s: fn(lf(s), rf(s))
    if op is ast.In or op is ast.NotIn:
        negate = op is ast.NotIn

        depths = it.tuples

        def contains(s: Scope) -> Any:
            a = lf(s)
            b = rf(s)
            tb = type(b)
            if type(a) is tuple and (tb is dict or tb is set or tb is frozenset):
                depths.depth(a)  # hashed in C: bounded nesting first
            if tb is dict or tb is set or tb is frozenset or (tb is str and type(a) is str):
                found = a in b
            else:
                return compare(op, a, b)
            return not found if negate else found

        return contains
    if op not in _ORDER_OPS:
        return lambda s: compare(op, lf(s), rf(s))
    fn = CMPOPS[op]
    plain = _CMP_PLAIN
    if ln is not None and rn is not None:
        n1, n2 = ln, rn

        def cmp_names(s: Scope) -> Any:
            v = s.vars
            try:
                a = v[n1]
            except KeyError:
                a = lf(s)
            try:
                b = v[n2]
            except KeyError:
                b = rf(s)
            if type(a) in plain and type(b) in plain:
                return fn(a, b)
            return compare(op, a, b)

        return cmp_names
    if ln is not None and type(rc) in plain:
        n1, b = ln, rc

        def cmp_name_const(s: Scope) -> Any:
            # `i < n_max`, `x == 'a'`: the constant is plain; so must the name be
            try:
                a = s.vars[n1]
            except KeyError:
                a = lf(s)
            if type(a) in plain:
                return fn(a, b)
            return compare(op, a, b)

        return cmp_name_const

    def cmp(s: Scope) -> Any:
        a = lf(s)
        b = rf(s)
        if type(a) in plain and type(b) in plain:
            return fn(a, b)
        return compare(op, a, b)

    return cmp


def assign_item(it: Compiler, value: ExprFn, target: ast.Subscript, ctx: Ctx) -> StmtFn:
    """`obj[key] = value`: the value, then the object, then the key (Python's
    order); a dict takes the item directly, as `setitem` would."""
    n, _, obj = operand(it, target.value, ctx)
    kn, _, key = operand(it, target.slice, ctx)
    setitem = it.setitem
    depths = it.tuples
    if n is not None:
        name = n

        def assign_item_name(s: Scope) -> None:
            v = value(s)
            variables = s.vars
            try:
                o = variables[name]
            except KeyError:
                o = obj(s)
            if kn is None:
                k = key(s)
            else:
                try:
                    k = variables[kn]
                except KeyError:
                    k = key(s)
            if type(k) is tuple:
                depths.depth(k)  # hashed in C: bounded nesting first
            if type(o) is dict:
                o[k] = v
            else:
                setitem(o, k, v)

        return assign_item_name

    def assign_item_any(s: Scope) -> None:
        v = value(s)
        o = obj(s)
        k = key(s)
        if type(k) is tuple:
            depths.depth(k)
        if type(o) is dict:
            o[k] = v
        else:
            setitem(o, k, v)

    return assign_item_any
