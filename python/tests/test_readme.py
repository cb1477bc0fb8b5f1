"""The README's Python example runs as written and prints what the README shows after it."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> tuple[str, str]:
    md = (ROOT / "README.md").read_text(encoding="utf-8")
    section = md.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    out = re.search(r"```python\n.*?```\s*```text\n(.*?)```", section, re.S)
    assert code and out, "README.md's Python section has a ```python block and its ```text output"
    return code.group(1), out.group(1)


def test_the_readme_python_example_prints_what_the_readme_says(tmp_path):
    code, want = readme_example()
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    buf = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
    assert buf.getvalue() == want
