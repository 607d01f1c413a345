"""Each denial named by the issue gives a clear SecurityError."""

from __future__ import annotations

import pytest

from memagent.sandbox import Session
from memagent.sandbox._modules import ALLOWED_MODULES

DENIED = [
    "().__class__",
    "getattr(1, '__class__')",
    "hasattr(1, '__dict__')",
    "setattr(print, '__doc__', 'x')",
    "'{0.__class__}'.format(1)",
    "'{x.__init__}'.format_map({'x': 1})",
    "'%(__name__)s' % {}",
    "f'{print.__self__}'",
    "(x for x in []).gi_frame",
    "import asyncio",
    "globals()",
    "locals()",
    "vars()",
    "dir(1)",
    "type('A', (), {})",
    "open('/etc/passwd')",
    "__import__('os')",
    "eval('1')",
    "exec('1')",
    "compile('1', '', 'eval')",
    "breakpoint()",
    "input()",
    "help(1)",
    "import re\nre.sys",
    "import random\nrandom._os",
    "import json\njson.codecs",
    "import math\nmath.__dict__",
    "class A:\n    def __del__(self): pass",
    "class A:\n    def __getattribute__(self, n): pass",
    "class A:\n    def __init_subclass__(cls): pass",
    "class A(metaclass=type): pass",
    "class A(int): pass",
]


@pytest.mark.parametrize("code", DENIED)
def test_denied(code: str) -> None:
    r = Session().run(code)
    assert r.error is not None and r.error.startswith("SecurityError"), r.error


@pytest.mark.parametrize(
    "module",
    [
        "os",
        "sys",
        "subprocess",
        "socket",
        "ctypes",
        "pickle",
        "marshal",
        "importlib",
        "builtins",
        "io",
        "shutil",
        "pathlib",
        "tempfile",
        "threading",
        "inspect",
        "gc",
    ],
)
def test_forbidden_modules(module: str) -> None:
    for code in (f"import {module}", f"from {module} import x"):
        r = Session().run(code)
        assert r.error is not None and r.error.startswith("SecurityError")


@pytest.mark.parametrize("module", ALLOWED_MODULES)
def test_allowed_modules_expose_no_modules_or_privates(module: str) -> None:
    s = Session()
    assert s.run(f"import {module}").error is None
    proxy = s.variables[module]
    import types

    for name, value in proxy._members.items():
        assert not name.startswith("_")
        assert not isinstance(value, types.ModuleType)


def test_denial_cannot_be_caught() -> None:
    r = Session().run("try:\n    ().__class__\nexcept Exception:\n    pass\n'escaped'")
    assert r.error is not None and r.error.startswith("SecurityError")
    assert r.result is None


def test_tools_cannot_be_rebound_in_any_way() -> None:
    s = Session(tools={"read_file": lambda p: p})
    for code in (
        "read_file = 1",
        "def read_file(): pass",
        "import json as read_file",
        "for read_file in [1]: pass",
        "del read_file",
        "class read_file: pass",
        "def f(read_file): pass",
        "FINAL = 1",
    ):
        r = s.run(code)
        assert r.error is not None and "cannot be rebound" in r.error, code
    assert s.run("read_file('x')").result == "x"


def test_objects_from_allowed_functions_keep_attribute_rules() -> None:
    r = Session().run("import re\nm = re.match('a', 'a')\nm.__class__")
    assert r.error is not None and r.error.startswith("SecurityError")
    r = Session().run("import datetime\ndatetime.date.today()._getstate")
    assert r.error is not None and r.error.startswith("SecurityError")
