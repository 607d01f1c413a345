"""The sandbox compiles code once into closures: Python's scoping and control
flow hold, and the specialised closures for common shapes make every check the
general path makes (sizes, memory budget, operations, the attribute policy)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from memagent.sandbox import Limits, Session


def result_of(code: str, **limits: Any) -> Any:
    r = Session(limits=Limits(**limits)).run(textwrap.dedent(code))
    assert r.error is None, r.error
    return r.result


def error_of(code: str, **limits: Any) -> str:
    r = Session(limits=Limits(**limits)).run(textwrap.dedent(code))
    assert r.error is not None, r
    return r.error


# ------------------------------------------------------------------ scoping


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # a closure sees the enclosing function's variable at call time
        ("def f():\n    x = 1\n    def g():\n        return x\n    x = 2\n    return g()\nf()", 2),
        (
            "def counter():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n"
            "        return n\n    inc()\n    return inc()\ncounter()",
            2,
        ),
        ("g = 1\ndef f():\n    global g\n    g += 1\nf()\nf()\ng", 3),
        # a method does not see its class body's names; a class body does
        (
            "x = 'module'\nclass A:\n    x = 'class'\n    y = x\n    def m(self):\n"
            "        return x\n(A.y, A().m())",
            ("class", "module"),
        ),
        # a comprehension's variable stays inside; its first iterable is outside
        ("x = [1, 2]\nys = [x for x in x]\n(x, ys)", ([1, 2], [1, 2])),
        ("[(i, j) for i in range(3) if i for j in range(i)]", [(1, 0), (2, 0), (2, 1)]),
        ("def f():\n    return [y := v * 2 for v in range(3)], y\nf()", ([0, 2, 4], 4)),
        ("len = 5\nlen", 5),  # a global shadows a builtin
        ("def f(str):\n    return str(3)\nf(repr)", "3"),
        ("s = 0\nfor i in range(5):\n    s += i\nelse:\n    s += 100\ns", 110),
        (
            "total = 0\nfor a, (b, c) in [(1, (2, 3)), (4, (5, 6))]:\n"
            "    total += a * b * c\ntotal",
            126,
        ),
        ("a, *rest, z = range(5)\n(a, rest, z)", (0, [1, 2, 3], 4)),
        ("d = {}\nd['k'] = d.get('k', 0) + 1\nd['k'] += 2\nd", {"k": 3}),
        ("f = lambda n: 1 if n < 2 else n * f(n - 1)\nf(10)", 3628800),
        (
            "def gen(n):\n    for i in range(n):\n        if i == 3:\n            return\n"
            "        yield i\nlist(gen(10))",
            [0, 1, 2],
        ),
    ],
)
def test_python_semantics_hold(code: str, expected: Any) -> None:
    assert result_of(code) == expected


def test_unbound_local_and_free_names_fail_like_python() -> None:
    assert "UnboundLocalError" in error_of("x = 1\ndef f():\n    y = x\n    x = 2\nf()")
    assert "NameError: name 'nope' is not defined (line 2)" in error_of("x = 1\nnope")
    assert "SecurityError" in error_of("__import__")


# ------------------------------------------------------------------ control flow


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "out = []\nfor i in range(10):\n    if i % 2:\n        continue\n    if i > 6:\n"
            "        break\n    out.append(i)\nout",
            [0, 2, 4, 6],
        ),
        ("i = 0\nwhile True:\n    i += 1\n    if i == 5:\n        break\nelse:\n    i = -1\ni", 5),
        ("def f():\n    for i in range(10):\n        if i == 4:\n            return i\nf()", 4),
        # `finally` runs on return and its own return wins
        (
            "log = []\ndef f():\n    try:\n        return 1\n    finally:\n"
            "        log.append('f')\n(f(), log)",
            (1, ["f"]),
        ),
        ("def f():\n    try:\n        return 1\n    finally:\n        return 2\nf()", 2),
        (
            "def f():\n    for i in range(3):\n        try:\n            continue\n"
            "        finally:\n            pass\n    return i\nf()",
            2,
        ),
        (
            "def f():\n    try:\n        raise ValueError('x')\n    except ValueError:\n"
            "        return 'caught'\n"
            "    finally:\n        pass\nf()",
            "caught",
        ),
        # leaving a `with` by return still calls __exit__
        (
            "log = []\nclass C:\n    def __enter__(self):\n        return self\n"
            "    def __exit__(self, *a):\n        log.append('exit')\n"
            "def f():\n    with C():\n        return 1\n(f(), log)",
            (1, ["exit"]),
        ),
    ],
)
def test_control_flow(code: str, expected: Any) -> None:
    assert result_of(code) == expected


@pytest.mark.parametrize(
    ("code", "word"),
    [("return 5", "return"), ("break", "break"), ("def f():\n    continue\nf()", "continue")],
)
def test_flow_outside_its_place_is_a_syntax_error(code: str, word: str) -> None:
    assert error_of(code).startswith(f"SyntaxError: '{word}' outside function or loop")


def test_error_lines_come_from_the_innermost_statement() -> None:
    code = "def f(x):\n    y = x + 1\n    return y / 0\nfor i in range(3):\n    f(i)"
    assert error_of(code) == "ZeroDivisionError: division by zero (line 3)"
    assert error_of("x = 0\nfor i in range(3):\n    x += 1\n    x += None").endswith("(line 4)")


# ------------------------------------------------------------------ checks kept


@pytest.mark.parametrize(
    "code",
    [
        "x = 3\nfor _ in range(40):\n    x *= x",  # augmented assignment to a local
        "x = 3\nfor _ in range(40):\n    x = x * x",  # a product of two names
        "def f(x):\n    return x * x\nx = 3\nfor _ in range(40):\n    x = f(x)",
        "x = 2\nx ** 10_000_000",
        "x = 1\nx << 10_000_000",
    ],
)
def test_fast_int_paths_still_size_the_result(code: str) -> None:
    assert "LimitExceeded: int of" in error_of(code)


@pytest.mark.parametrize(
    "code",
    [
        "s = 'ab'\nfor _ in range(40):\n    s = s + s",
        "s = 'ab'\nfor _ in range(40):\n    s += s",
        "s = 'ab'\nfor _ in range(40):\n    t = s\n    s += t",
        "parts = ['x' * 1000]\nfor _ in range(40):\n    parts = parts + parts",
    ],
)
def test_fast_string_paths_still_size_the_result(code: str) -> None:
    assert error_of(code).startswith("LimitExceeded")


def test_small_allocations_in_fast_paths_count_toward_the_memory_budget() -> None:
    # each path allocates little per step; together they pass the run's budget
    bodies = (
        "out.append(str(i))",
        "out.append(s + str(i))",
        "out.append(d.get(i, s))",
        "t += 'ab'",
        "out.append(d.get(i, '" + "x" * 500 + "'))",  # a constant default, returned each time
    )
    for body in bodies:
        code = f"s = 'x' * 500\nd = {{}}\nout = []\nt = ''\nfor i in range(100000):\n    {body}"
        err = error_of(code, max_total_alloc=2_000_000, max_operations=10**8)
        assert "memory budget" in err, (body, err)


def test_operation_limit_and_count_are_exact_across_prepaid_iterations() -> None:
    s = Session(limits=Limits(max_operations=10**7))
    ops = [s.run(f"for i in range({n}):\n    x = i").operations for n in (10, 1000, 1001)]
    assert (ops[1] - ops[0]) == 990 * (ops[2] - ops[1])  # the same charge every iteration
    assert "operation limit of 5000" in error_of(
        "for i in range(10**9):\n    x = i", max_operations=5000
    )
    # a body of several statements: the same per-iteration charge and check
    loop = "for i in range({}):\n    x = i\n    y = x"
    ops = [s.run(loop.format(n)).operations for n in (10, 1000, 1001)]
    assert (ops[1] - ops[0]) == 990 * (ops[2] - ops[1])
    assert "operation limit of 5000" in error_of(loop.format(10**9), max_operations=5000)
    # a loop that stops early is charged only for what ran
    early = Session().run("for i in range(10**9):\n    if i == 3:\n        break")
    assert early.error is None and early.operations < 50


def test_method_fast_path_keeps_the_attribute_policy() -> None:
    assert "SecurityError" in error_of("x = []\nx.__class__")
    assert "SecurityError" in error_of("x = 'a'\nx.__len__()")
    assert "LimitExceeded" in error_of("s = 'ab'\ns.ljust(10**9)")  # a risky method stays checked
    assert "LimitExceeded" in error_of("'-'.join(['x' * 100000] * 200)")


def test_compiled_code_is_cached_per_session_and_tools_stay_protected() -> None:
    s = Session(tools={"a": lambda: 1})
    code = "b = 2\nb + a()"
    assert s.run(code).result == 3
    assert s.run(code).result == 3  # the compiled form is reused
    assert s.run("c = 1\ndel c").error is None
    s.add_tools({"c": lambda: 0})
    # the cached code that bound `c` may not rebind it now that it is a tool
    assert "cannot be rebound" in (s.run("c = 1\ndel c").error or "")
    s2 = Session()
    assert s2.run(code).error is not None  # a cache never crosses sessions


def test_iterators_nested_in_arguments_are_metered_at_any_depth_up_to_the_bound() -> None:
    from memagent.sandbox._calls import WRAP_DEPTH
    from memagent.sandbox._objects import Metered

    it = Session()._interp
    arg: Any = iter([1])
    for _ in range(WRAP_DEPTH - 1):
        arg = [arg]
    wrapped = it._wrap_nested(arg)
    for _ in range(WRAP_DEPTH - 1):
        wrapped = wrapped[0]
    assert isinstance(wrapped, Metered)
    plain = [[1, "a"], {"k": (2.5, None)}]
    assert it._wrap_nested(plain) is plain  # nothing to wrap: the same object
    # host functions that change the code's own list still do
    assert result_of("import heapq\nh = []\nheapq.heappush(h, (2, 'b'))\nh") == [(2, "b")]
    code = "import itertools\nlist(itertools.chain.from_iterable([(x for x in [1, 2]), [3]]))"
    assert result_of(code) == [1, 2, 3]


def test_a_call_site_seen_with_several_types_calls_each_ones_method() -> None:
    code = (
        "def size(o, depth):\n"
        "    return o.count(o[0] if depth else size('aab', 1))\n"
        "(size([1, 1, 2], 0), size('xyz', 1), [x.count(1) for x in ([1], (1, 1), [2])])"
    )
    assert result_of(code) == (1, 1, [1, 2, 0])
    code = (
        "def g(d, k):\n    return d.get(k, g({'a': 7}, 'a') if k != 'a' else 0)\ng({'b': 1}, 'b')"
    )
    assert result_of(code) == 1


def test_the_compile_cache_is_bounded() -> None:
    s = Session()
    for i in range(80):
        assert s.run(f"x{i} = {i}").error is None
    big = "y = 0\n" + "y += 1\n" * 6000
    assert s.run(big).result is None and s.run("y").result == 6000
    cache = s._interp._compiled
    assert len(cache) <= 64 and big not in cache


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # a global or builtin read inside a function is looked up when it runs
        ("def f(x):\n    return str(x)\na = f(1)\nstr = len\n(a, f('abc'))", ("1", 3)),
        ("def f():\n    return g(2)\ndef g(x):\n    return x + 1\nf()", 3),
        ("def f():\n    return len(k)\nk = [1, 2]\nf()", 2),
        # an enclosing function's own name wins over the global of that name
        (
            "len = 5\ndef f():\n    len = str\n    def g():\n        return len(7)\n"
            "    return g()\nf()",
            "7",
        ),
        ("def f():\n    x = 'local'\n    return [len(x) for _ in range(2)]\nx = 'no'\nf()", [5, 5]),
        # a class body's names are seen by its comprehension's first iterable only
        ("class C:\n    n = 3\n    v = [str(i) for i in range(n)]\nC.v", ["0", "1", "2"]),
        ("def f():\n    global h\n    h = 4\n    return str(h)\nf()", "4"),
    ],
)
def test_globals_and_builtins_read_from_functions(code: str, expected: Any) -> None:
    assert result_of(code) == expected


def test_len_fast_path_keeps_instances_errors_and_the_memory_budget() -> None:
    code = (
        "class A:\n    def __len__(self):\n        return 4\ndef f(o):\n    return len(o)\n"
        "(len(A()), f(A()), f('ab'), len({1: 2}))"
    )
    assert result_of(code) == (4, 4, 2, 1)
    assert "has no len()" in error_of("def f(x):\n    return len(x)\nf(3)")
    assert "NameError" in error_of("def f():\n    return nothere(1)\nf()")
    err = error_of("s = 'ab'\nfor i in range(100000):\n    n = len(s)", max_total_alloc=1_000_000)
    assert "memory budget" in err


def test_one_argument_calls_of_return_expression_functions_keep_every_check() -> None:
    # the same operations charged as the general call path (a keyword argument)
    base = "def g(x):\n    return x + 1\nfor i in range(50):\n    y = g({})"
    assert (
        Session().run(base.format("i")).operations == Session().run(base.format("x=i")).operations
    )
    assert "recursion depth" in error_of("def f(n):\n    return f(n + 1)\nf(0)")
    assert "operation limit" in error_of(
        "def f(n):\n    return n * 2\nfor i in range(10**6):\n    f(i)", max_operations=5000
    )
    err = error_of("def f(s):\n    return s + s\nx = 'ab'\nfor i in range(60):\n    x = f(x)")
    assert err.startswith("LimitExceeded")
    assert error_of("def f(x):\n    return 1 // x\nf(0)").endswith("(line 2)")
    # a method, a generator and a global-declaring function take the general path
    code = (
        "class A:\n    def m(self):\n        return self\n"
        "def gen(n):\n    yield n\n"
        "def h(v):\n    global k\n    k = v\n    return k\n"
        "a = A()\n(a.m() is a, list(gen(3)), h(4), k, A.m(a) is a)"
    )
    assert result_of(code) == (True, [3], 4, 4, True)


def test_str_call_fast_path_keeps_every_check() -> None:
    code = (
        "class A:\n    def __str__(self):\n        return 'a!'\n"
        "out = [str(A()), str(1.5), str(True), str([1, 'x'])]\n"
        "def f(v):\n    return str(v)\nout.append(f(A()))\n"
        "str = lambda v: 'mine'\nout.append(str(1))\nout.append(f(2))\nout"
    )
    assert result_of(code) == ["a!", "1.5", "True", "[1, 'x']", "a!", "mine", "mine"]
    assert error_of("x = 2 ** 60000\nstr(x)").startswith("LimitExceeded: an integer of more")
    assert error_of("x = ['y' * 5000] * 5000\nstr(x)").startswith("LimitExceeded")
    err = error_of("for i in range(100000):\n    s = str(i)", max_total_alloc=1_000_000)
    assert "memory budget" in err


def test_get_with_a_constant_default_follows_the_type_at_the_call_site() -> None:
    code = (
        "class D:\n    def get(self, k, d):\n        return ('mine', k, d)\n"
        "def look(o, k):\n    return o.get(k, 0)\n"
        "k = 'a'\nout = []\nfor o in [{'a': 1}, D(), {}, 'str has no get']:\n"
        "    out.append(o.get(k, 0) if type(o) is not str else look({}, k))\n"
        "(out, look(D(), 'z'))"
    )
    assert result_of(code) == ([1, ("mine", "a", 0), 0, 0], ("mine", "z", 0))
    assert "AttributeError" in error_of("d = 5\nk = 1\nd.get(k, 0)")
    assert "SecurityError" in error_of("d = {}\nk = 1\nd.__class__(k, 0)")


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("[x for x in range(4)]", [0, 1, 2, 3]),
        ("[x for x in 'abc' if x != 'b']", ["a", "c"]),
        ("[x * 2 for x in (1, 2) if x if x > 1]", [4]),
        ("d = {'a': 1}\n[k for k in d]", ["a"]),
        ("x = 'outer'\n[x for x in [1]]\nx", "outer"),
        ("[y for x in [1, 2, 3] if (y := x * 10) > 10]", [20, 30]),
        (
            "class It:\n    def __iter__(self):\n        return iter([5, 6])\n[v for v in It()]",
            [5, 6],
        ),
    ],
)
def test_list_comprehensions_over_a_name(code: str, expected: Any) -> None:
    assert result_of(code) == expected


def test_list_comprehension_fast_path_keeps_its_limits() -> None:
    assert "collection of more than" in error_of(
        "[x for x in range(10**6)]", max_collection_len=1000
    )
    assert "operation limit" in error_of("[x for x in range(10**6)]", max_operations=5000)
    err = error_of("for i in range(10**5):\n    y = [x for x in 'ab']", max_total_alloc=1_000_000)
    assert "memory budget" in err
    assert "SecurityError" in error_of("[__class__ for __class__ in [1]]")


def test_method_call_of_an_expression_argument_follows_the_type_at_the_call_site() -> None:
    code = (
        "class Box:\n    def __init__(self):\n        self.got = []\n"
        "    def append(self, v):\n        self.got.append(v)\n"
        "b = Box()\nout = []\n"
        "for o in [out, b, out, set()]:\n"
        "    if type(o) is set:\n        o.add(len(out))\n"
        "    else:\n        o.append(len(out) + 1)\n"
        "(out, b.got)"
    )
    assert result_of(code) == ([1, 2], [2])
    err = error_of(
        "out = []\nfor i in range(10**5):\n    out.append(str(i) * 50)", max_total_alloc=10**6
    )
    assert "memory budget" in err


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("def g(a, b):\n    return a - b\ng(5, 2)", 3),
        ("def g(a, b, c):\n    t = a * b\n    return t + c\ng(2, 3, 4)", 10),
        ("def g(a, b):\n    a += b\ng(1, 2)", None),
        ("def g(a, b=10):\n    return a + b\n(g(1, 2), g(1))", (3, 11)),
        ("def g(*a):\n    return a\ng(1, 2)", (1, 2)),
        ("def g(a, b):\n    global k\n    k = a + b\n    return k\n(g(1, 2), k)", (3, 3)),
        ("def g(a, b):\n    yield a\n    yield b\nlist(g(1, 2))", [1, 2]),
        (
            "def f(a, b):\n    def h(c, d):\n        return a + b + c + d\n"
            "    return h(3, 4)\nf(1, 2)",
            10,
        ),
        (
            "class P:\n    def m(self, a, b):\n        return self.k + a + b\np = P()\np.k = 1\n"
            "(p.m(2, 3), P.m(p, 2, 3))",
            (6, 6),
        ),
        (
            "def g(a, b):\n    for i in range(a):\n        if i == b:\n"
            "            return i\ng(10, 3)",
            3,
        ),
    ],
)
def test_positional_calls_of_the_codes_functions(code: str, expected: Any) -> None:
    assert result_of(code) == expected


def test_positional_call_fast_path_keeps_every_check() -> None:
    base = "def g(a, b):\n    t = a + b\n    return t\nfor i in range(50):\n    y = g({})"
    fast, general = (Session().run(base.format(args)) for args in ("i, 1", "a=i, b=1"))
    assert fast.result is None and fast.operations == general.operations
    assert "recursion depth" in error_of("def f(a, b):\n    return f(b, a)\nf(0, 1)")
    assert "TypeError" in error_of("def f(a, b):\n    return a\nf(1, 2, 3)")
    assert error_of("def f(a, b):\n    x = 1\n    return a // b\nf(1, 0)").endswith("(line 3)")
    assert "operation limit" in error_of(
        "def f(a, b):\n    while True:\n        a += b\nf(0, 1)", max_operations=5000
    )


def test_one_argument_methods_of_the_codes_classes() -> None:
    code = (
        "class A:\n    def m(self, v):\n        return ('A', v)\n"
        "    @staticmethod\n    def st(v):\n        return ('st', v)\n"
        "    @classmethod\n    def cm(cls, v):\n        return ('cm', v)\n"
        "class B(A):\n    def m(self, v):\n        return ('B', super().m(v))\n"
        "a, b = A(), B()\nc = A()\nc.m = len\n"
        "out = []\nfor o in [a, b, c]:\n    out.append(o.m('xy'))\n"
        "(out, a.st(1), a.cm(2), b.m(3))"
    )
    expected = ([("A", "xy"), ("B", ("A", "xy")), 2], ("st", 1), ("cm", 2), ("B", ("A", 3)))
    assert result_of(code) == expected
    assert "AttributeError" in error_of("class A:\n    pass\na = A()\nx = 1\na.nope(x)")
    assert "TypeError" in error_of("class A:\n    def m(self):\n        return 1\nA().m(1)")
    assert "recursion depth" in error_of(
        "class A:\n    def m(self, n):\n        return self.m(n)\nA().m(1)"
    )


def test_instance_attributes_read_and_written_directly_keep_the_policy() -> None:
    code = (
        "class P:\n    k = 'class'\n    def m(self):\n        return 1\n"
        "p = P()\nout = [p.k]\np.k = 'own'\nout.append(p.k)\n"
        "for i in range(3):\n    p.n = i\nout.append(p.n)\nP.k = 'set'\n"
        "(out, P().k, p.m())"
    )
    assert result_of(code) == (["class", "own", 2], "set", 1)
    assert "SecurityError" in error_of("class P:\n    pass\np = P()\np.__class__ = int")
    assert "SecurityError" in error_of("class P:\n    pass\np = P()\np.__dict__")
    assert "SecurityError" in error_of("x = [1]\nx.k = 2")
    assert "AttributeError" in error_of("class P:\n    pass\nP().missing")


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("i = 0\nwhile i < 5:\n    i += 1\ni", 5),
        ("x = 'b'\n(x == 'b', x < 'a', x != None, x >= 'b')", (True, False, True, True)),
        ("x = [1]\n(x == 1, x != 'a')", (False, True)),
        ("class V:\n    def __lt__(self, o):\n        return 'lt'\nv = V()\nv < 3", "lt"),
        (
            "class V:\n    def __eq__(self, o):\n        return o == 4\nv = V()\n(v == 4, v == 5)",
            (True, False),
        ),
        ("t = 0\ni = 0\nwhile i < 3:\n    t += i\n    i += 1\nelse:\n    t = -t\nt", -3),
        (
            "def f():\n    i = 0\n    while True:\n        i += 1\n"
            "        if i > 3:\n            return i\nf()",
            4,
        ),
    ],
)
def test_comparisons_with_a_constant_and_while_bodies(code: str, expected: Any) -> None:
    assert result_of(code) == expected


def test_while_body_errors_name_their_line_and_limits_hold() -> None:
    assert error_of("i = 0\nwhile i < 9:\n    i += 1\n    j = 1 // (5 - i)").endswith("(line 4)")
    assert error_of("x = 'a'\nwhile x < 1:\n    pass").startswith("TypeError")
    assert "operation limit" in error_of(
        "i = 0\nwhile i < 10**9:\n    i += 1\n    j = i", max_operations=5000
    )
