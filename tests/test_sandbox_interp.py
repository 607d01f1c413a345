# ruff: noqa: E501  (the table of cases keeps each program on one line)
"""Each construct the interpreter supports, run through `Session.run`."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from memagent.sandbox import Session

CASES: list[tuple[str, str, Any]] = [
    ("arith", "2 + 3 * 4 - 10 // 3 % 2 ** 2", 11),
    ("float-div", "7 / 2", 3.5),
    ("unpack", "a, (b, c) = 1, (2, 3)\na + b + c", 6),
    ("star-unpack", "a, *rest, z = range(5)\n(a, rest, z)", (0, [1, 2, 3], 4)),
    ("augassign", "x = [1]\nx += [2]\nd = {'k': 1}\nd['k'] += 5\n(x, d)", ([1, 2], {"k": 6})),
    ("subscript-assign", "m = [[0] * 2 for _ in range(2)]\nm[1][0] = 7\nm", [[0, 0], [7, 0]]),
    ("slices", "s = 'abcdef'\n(s[1:4], s[::-1], s[-2:])", ("bcd", "fedcba", "ef")),
    (
        "if-elif",
        "x = 5\nif x < 3:\n    r = 'a'\nelif x < 6:\n    r = 'b'\nelse:\n    r = 'c'\nr",
        "b",
    ),
    ("for-else", "for i in range(3):\n    pass\nelse:\n    i = 'done'\ni", "done"),
    (
        "break-continue",
        "out = []\nfor i in range(10):\n    if i % 2:\n        continue\n    if i > 6:\n        break\n    out.append(i)\nout",
        [0, 2, 4, 6],
    ),
    ("while-else", "n = 0\nwhile n < 3:\n    n += 1\nelse:\n    n *= 10\nn", 30),
    ("listcomp", "[x * y for x in range(3) for y in range(3) if x != y]", [0, 0, 0, 2, 0, 2]),
    ("dictcomp", "{k: len(k) for k in ['a', 'bb']}", {"a": 1, "bb": 2}),
    ("setcomp", "{x % 3 for x in range(10)}", {0, 1, 2}),
    ("genexp-lazy", "import itertools\nnext(x for x in itertools.count() if x > 5)", 6),
    ("genexp-sum", "sum(x * x for x in range(5))", 30),
    ("fstring", "name = 'Ada'\nf'{name!r:>8}|{3.14159:.2f}|{10:05d}'", "   'Ada'|3.14|00010"),
    (
        "def-defaults",
        "def f(a, b=2, *args, c=3, **kw):\n    return (a, b, args, c, kw)\nf(1, 5, 6, c=7, d=8)",
        (1, 5, (6,), 7, {"d": 8}),
    ),
    ("kwonly-required", "def f(*, x):\n    return x\nf(x=4)", 4),
    (
        "closure",
        "def mk():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n        return n\n    return inc\nc = mk()\nc(); c()",
        2,
    ),
    ("global", "g = 1\ndef f():\n    global g\n    g = 5\nf()\ng", 5),
    ("recursion", "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(15)", 610),
    ("lambda-sort", "sorted(['bb', 'a', 'ccc'], key=lambda s: -len(s))", ["ccc", "bb", "a"]),
    (
        "generator-func",
        "def g(n):\n    for i in range(n):\n        yield i * 2\nlist(g(4))",
        [0, 2, 4, 6],
    ),
    ("yield-from", "def g():\n    yield from [1, 2]\n    yield 3\nlist(g())", [1, 2, 3]),
    (
        "try-else-finally",
        "log = []\ntry:\n    log.append('t')\nexcept ValueError:\n    log.append('e')\nelse:\n    log.append('else')\nfinally:\n    log.append('f')\nlog",
        ["t", "else", "f"],
    ),
    (
        "try-except-as",
        "try:\n    {}['x']\nexcept (KeyError, IndexError) as e:\n    r = repr(e)\nr",
        "KeyError('x')",
    ),
    (
        "raise-reraise",
        "try:\n    try:\n        raise ValueError('v')\n    except ValueError:\n        raise\nexcept Exception as e:\n    r = str(e)\nr",
        "v",
    ),
    (
        "custom-exception",
        "class MyErr(ValueError):\n    def __init__(self, code):\n        super().__init__(f'code {code}')\n        self.code = code\ntry:\n    raise MyErr(7)\nexcept ValueError as e:\n    r = (e.code, str(e), isinstance(e, MyErr))\nr",
        (7, "code 7", True),
    ),
    (
        "class-basic",
        "class P:\n    kind = 'pt'\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n    def norm(self):\n        return abs(self.x) + abs(self.y)\np = P(3, -4)\n(p.norm(), p.kind, P.kind)",
        (7, "pt", "pt"),
    ),
    (
        "class-inherit",
        "class A:\n    def who(self):\n        return 'A'\n    def hi(self):\n        return 'hi ' + self.who()\nclass B(A):\n    def who(self):\n        return 'B'\nB().hi()",
        "hi B",
    ),
    (
        "class-dunders",
        "class V:\n    def __init__(self, v):\n        self.v = v\n    def __add__(self, o):\n        return V(self.v + o.v)\n    def __eq__(self, o):\n        return self.v == o.v\n    def __len__(self):\n        return self.v\n    def __repr__(self):\n        return f'V({self.v})'\n(repr(V(1) + V(2)), V(2) == V(2), len(V(4)), str([1]))",
        ("V(3)", True, 4, "[1]"),
    ),
    (
        "class-iter-getitem",
        "class R:\n    def __init__(self):\n        self.d = {}\n    def __getitem__(self, k):\n        return self.d.get(k, 0)\n    def __setitem__(self, k, v):\n        self.d[k] = v\n    def __iter__(self):\n        return iter(sorted(self.d))\nr = R()\nr['b'] = 2\nr['a'] = 1\n([k for k in r], r['a'], r['zz'])",
        (["a", "b"], 1, 0),
    ),
    (
        "staticmethod-classmethod-property",
        "class C:\n    n = 3\n    @staticmethod\n    def s(x):\n        return x * 2\n    @classmethod\n    def c(cls):\n        return cls.n\n    @property\n    def p(self):\n        return 'prop'\n(C.s(2), C.c(), C().p, C().s(1))",
        (4, 3, "prop", 2),
    ),
    (
        "with",
        "class Ctx:\n    def __enter__(self):\n        log.append('in')\n        return 5\n    def __exit__(self, *a):\n        log.append('out')\nlog = []\nwith Ctx() as v:\n    log.append(v)\nlog",
        ["in", 5, "out"],
    ),
    ("walrus", "data = [1, 5, 9]\n[y for x in data if (y := x * 2) > 4]", [10, 18]),
    ("json", "import json\njson.loads(json.dumps({'a': [1, 2.5, None]}))", {"a": [1, 2.5, None]}),
    ("re", "import re\nre.findall(r'\\d+', 'a1b22c333')", ["1", "22", "333"]),
    (
        "re-compiled",
        "import re\np = re.compile(r'(\\w+)@(\\w+)')\nm = p.search('x joe@host y')\n(m.group(1), m.group(2))",
        ("joe", "host"),
    ),
    ("math", "import math\n(math.floor(2.7), math.sqrt(16), math.factorial(5))", (2, 4.0, 120)),
    (
        "collections",
        "from collections import Counter, defaultdict\nc = Counter('abracadabra')\nd = defaultdict(list)\nd['x'].append(1)\n(c.most_common(1), dict(d))",
        ([("a", 5)], {"x": [1]}),
    ),
    (
        "itertools-functools",
        "import itertools, functools\n(list(itertools.islice(itertools.count(3), 3)), functools.reduce(lambda a, b: a * b, [1, 2, 3, 4]))",
        ([3, 4, 5], 24),
    ),
    (
        "datetime",
        "from datetime import date, timedelta\n(date(2024, 1, 31) + timedelta(days=1)).isoformat()",
        "2024-02-01",
    ),
    ("statistics", "import statistics\nstatistics.mean([1, 2, 3, 4])", 2.5),
    (
        "textwrap-string-difflib",
        "import textwrap, string, difflib\n(textwrap.shorten('hello big world', 12), string.capwords('a b'), difflib.get_close_matches('appel', ['apple', 'zzz']))",
        ("hello [...]", "A B", ["apple"]),
    ),
    ("str-format-ok", "'{0}-{name}-{0:>3}'.format(1, name='n')", "1-n-  1"),
    ("percent-format", "'%s=%05.1f' % ('x', 2.25)", "x=002.2"),
    (
        "isinstance",
        "class A: pass\n(isinstance(1, int), isinstance('s', (int, str)), isinstance(A(), A), type(A()) is A)",
        (True, True, True, True),
    ),
    (
        "builtins",
        "(len('abc'), min(3, 1), max([2, 9]), abs(-2), round(2.567, 2), sorted({3, 1}), list(zip('ab', [1, 2])), list(enumerate('x')), any([0, 1]), all([]), divmod(7, 2), hex(255), chr(65), ord('A'))",
        (
            3,
            1,
            9,
            2,
            2.57,
            [1, 3],
            [("a", 1), ("b", 2)],
            [(0, "x")],
            True,
            True,
            (3, 1),
            "0xff",
            "A",
            65,
        ),
    ),
    (
        "getattr-ok",
        "class A:\n    x = 1\n(getattr(A(), 'x'), getattr(A(), 'y', 'dflt'), hasattr(A(), 'x'))",
        (1, "dflt", True),
    ),
    (
        "str-methods",
        "(' a '.strip(), 'a,b'.split(','), '-'.join(['a', 'b']), 'ab'.upper(), 'x'.ljust(3, '.'))",
        ("a", ["a", "b"], "a-b", "AB", "x.."),
    ),
    ("assert-ok", "assert 1 == 1, 'fine'\n'ok'", "ok"),
    ("delete", "d = {'a': 1, 'b': 2}\ndel d['a']\nx = 1\ndel x\nd", {"b": 2}),
    (
        "random-seeded",
        "import random\nrandom.seed(4)\na = random.random()\nrandom.seed(4)\na == random.random()",
        True,
    ),
    ("chained-compare", "1 < 2 < 3 != 4", True),
    (
        "in-operators",
        "(2 in [1, 2], 'b' in 'abc', 3 not in {1: 2}, 5 in range(10**12))",
        (True, True, True, True),
    ),
    (
        "lambda-default-closure",
        "fs = [lambda x, i=i: x + i for i in range(3)]\n[f(10) for f in fs]",
        [10, 11, 12],
    ),
    (
        "namedtuple-api",
        "import collections\nP = collections.namedtuple('P', 'x y')\np = P(1, 2)\n(p._asdict(), p._replace(x=5).x, P._fields)",
        ({"x": 1, "y": 2}, 5, ("x", "y")),
    ),
    (
        "chain-from-iterable",
        "import itertools\nlist(itertools.chain.from_iterable([[1], [2, 3]]))",
        [1, 2, 3],
    ),
    ("big-pow-within-limit", "x = 10 ** 29000\nlen(str(x // 10 ** 28990))", 11),
    ("bool-ops", "(0 or 'x', 1 and 2, not [], None or None)", ("x", 2, True, None)),
]


@pytest.mark.parametrize(
    ("code", "expected"), [(c, e) for _, c, e in CASES], ids=[n for n, _, _ in CASES]
)
def test_construct(code: str, expected: Any) -> None:
    result = Session().run(code)
    assert result.error is None, result.error
    assert result.result == expected


def test_print_is_captured_with_sep_and_end() -> None:
    r = Session().run("print('a', 1, sep='-', end='!')\nprint([1, 2])")
    assert r.output == "a-1![1, 2]\n"
    assert r.result is None


def test_state_persists_between_runs() -> None:
    s = Session()
    assert (
        s.run("import math\nx = 10\ndef sq(v):\n    return v * v\nclass K:\n    pass").error is None
    )
    r = s.run("k = K()\nsq(x) + math.floor(0.5)")
    assert (r.error, r.result) == (None, 100)


def test_tools_are_plain_functions() -> None:
    calls: list[tuple[str, str, str]] = []

    def update_file(path: str, old: str, new: str) -> str:
        calls.append((path, old, new))
        return "ok"

    s = Session(tools={"update_file": update_file, "read_file": lambda p: "body of " + p})
    r = s.run("t = read_file('user.md')\nupdate_file('user.md', 'a', t)")
    assert r.result == "ok"
    assert calls == [("user.md", "a", "body of user.md")]


@pytest.mark.parametrize(
    ("code", "answer"),
    [
        ("final_answer(42)\nprint('never')", 42),
        ("FINAL('done')", "done"),
        ("total = 7\nFINAL_VAR('total')", 7),
        ("try:\n    final_answer(1)\nexcept BaseException:\n    x = 2\nx", 1),
        ("def f():\n    try:\n        FINAL(3)\n    finally:\n        return 9\nf()", 3),
    ],
)
def test_final_answer_ends_run_and_cannot_be_swallowed(code: str, answer: Any) -> None:
    r = Session().run(code)
    assert r.error is None
    assert r.final is True
    assert r.result == answer
    assert "never" not in r.output


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("x = 1\n\ny = undefined_name", "NameError: name 'undefined_name' is not defined (line 3)"),
        (
            "def f(a):\n    return a\nf(1, 2)",
            "TypeError: f() takes 1 positional arguments but 2 were given (line 3)",
        ),
        ("1 +", "SyntaxError: invalid syntax (line 1)"),
        ("[1][5]", "IndexError: list index out of range (line 1)"),
        ("raise ValueError('bad value')", "ValueError: bad value (line 1)"),
        ("def f():\n    x += 1\nf()", "UnboundLocalError"),
        ("a, b = [1, 2, 3]", "ValueError: too many values to unpack (expected 2) (line 1)"),
        ("assert 1 == 2, 'nope'", "AssertionError: nope (line 1)"),
        ("return 5", "SyntaxError"),
        ("match 1:\n    case 1:\n        pass", "not supported"),
    ],
)
def test_errors_look_like_python_with_line(code: str, error: str) -> None:
    r = Session().run(code)
    assert r.error is not None
    assert error in r.error


def test_error_does_not_lose_earlier_state() -> None:
    s = Session()
    r = s.run("a = 1\nprint('before')\n1 / 0\nb = 2")
    assert r.output == "before\n"
    assert r.error == "ZeroDivisionError: division by zero (line 3)"
    assert s.run("a").result == 1
    assert "b" not in s.variables


def test_definitions_are_recorded_latest_per_name() -> None:
    s = Session()
    s.run(
        textwrap.dedent("""
        import json
        def f():
            return 1
        def f():
            return 2
    """)
    )
    names = [k for k, _ in s.definitions]
    assert names == ["json", "f"]
    assert "return 2" in s.definitions[-1][1]


def test_add_tools_to_live_session() -> None:
    s = Session(tools={"a": lambda: 1})
    s.run("x = 5")
    s.add_tools({"b": lambda v: v * 2})
    assert s.run("b(x) + a()").result == 11
    assert s.tool_names == ["a", "b"]
    assert "cannot be rebound" in (s.run("b = 1").error or "")


@pytest.mark.parametrize(
    "tools", [{"x": len}, {"a": len}, {"_p": len}, {"no-id": len}, {"FINAL": len}, {"c": 5}]
)
def test_add_tools_refuses_bad_names(tools: dict[str, Any]) -> None:
    from memagent.core import InvalidInput

    s = Session(tools={"a": lambda: 1})
    s.run("x = 1")
    with pytest.raises(InvalidInput):
        s.add_tools(tools)


def test_sandbox_package_has_no_import_cycle_and_small_files() -> None:
    """Every import inside `memagent.sandbox` (type-only and lazy ones too) points
    one way: helpers depend on the `Compiler` Protocol, never on the interpreter."""
    import ast as _ast
    import graphlib
    from pathlib import Path

    import memagent.sandbox

    pkg = Path(memagent.sandbox.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in pkg.glob("*.py"):
        deps: set[str] = set()
        source = path.read_text()
        assert len(source.splitlines()) <= 650, f"{path.name} has grown past ~600 lines"
        for node in _ast.walk(_ast.parse(source)):
            if isinstance(node, _ast.ImportFrom) and node.module == "memagent.sandbox":
                deps.update(a.name for a in node.names)
            elif isinstance(node, _ast.ImportFrom) and (node.module or "").startswith(
                "memagent.sandbox."
            ):
                deps.add((node.module or "").rsplit(".", 1)[1])
        graph[path.stem] = deps - {path.stem}
    graph["__init__"] = set()  # the package's front door imports everything by design
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError on a cycle
