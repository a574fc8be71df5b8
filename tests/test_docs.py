"""The README says what the code does: its op list is exactly the catalog (names, parameters with
their defaults, aliases), so adding or changing an op without the README fails here; and the app
(trueno_web/app/) sits apart from the library, which never imports it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trueno_web import ops

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
OPS_PARAGRAPH = re.compile(r"^Ops \(each one row of the catalog[^\n]*:\n(.*?)\n\n", re.M | re.S)
# one entry: name, its parameters glued to it, then an optional note in parentheses after a space
ENTRY = re.compile(r"(?P<name>\w+)(?:\((?P<params>[^()]*)\))?(?: \((?P<note>.*)\))?")


def split_top_level(text: str, sep: str) -> list[str]:
    """`text` split at `sep` where it is outside parentheses and backquotes."""
    out, depth, quoted, start, i = [], 0, False, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        elif not quoted and depth == 0 and text.startswith(sep, i):
            out.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    out.append(text[start:])
    return [part.strip() for part in out]


def signature(op: ops.Op) -> str:
    """How the README writes an op: `name`, or `name(p, q=default)` (a parameter without a default
    is required)."""
    if not op.params:
        return op.name
    return f"{op.name}({', '.join(p.name if p.default is None else f'{p.name}={p.default!r}' for p in op.params)})"


def readme_ops() -> dict[str, tuple[str, tuple[str, ...]]]:
    """{name: (signature as written, aliases named in its note)} of the README's op list."""
    if not README.is_file():
        pytest.skip("no README.md here")
    m = OPS_PARAGRAPH.search(README.read_text())
    assert m, "README.md has no paragraph starting 'Ops (each one row of the catalog ...):'"
    body = " ".join(m.group(1).split()).rstrip(".")
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for item in split_top_level(body, ", "):
        for entry in split_top_level(item, " and "):
            e = ENTRY.fullmatch(entry)
            assert e, f"README op list: cannot read {entry!r} (write `name`, `name(p=default)`, `name (note)`)"
            assert e["name"] not in found, f"README op list names {e['name']} twice"
            written = e["name"] + (f"({e['params']})" if e["params"] is not None else "")
            alias = re.search(r"\baliase?s? ([\w, ]+)", e["note"] or "")
            aliases = tuple(a.strip() for a in alias[1].split(",")) if alias else ()
            found[e["name"]] = (written, aliases)
    return found


def test_readme_lists_exactly_the_catalog_ops():
    listed = readme_ops()
    catalog = [op.name for op in ops.CATALOG]
    assert sorted(listed) == sorted(catalog), (
        f"README op list vs catalog: missing {sorted(set(catalog) - set(listed))}, "
        f"not in the catalog {sorted(set(listed) - set(catalog))}"
    )


@pytest.mark.parametrize("op", ops.CATALOG, ids=lambda op: op.name)
def test_readme_op_parameters_and_aliases(op):
    written, aliases = readme_ops().get(op.name, (None, ()))
    assert written == signature(op), f"README writes {written!r}, the catalog says {signature(op)!r}"
    assert sorted(aliases) == sorted(op.aliases), f"README: {op.name} aliases {aliases}, catalog {op.aliases}"


def test_the_library_never_imports_the_app():
    package = ROOT / "trueno_web"
    if not package.is_dir():
        pytest.skip("no checkout here")
    app_import = re.compile(
        r"^\s*(?:from\s+(?:trueno_web)?\.+app\b|from\s+trueno_web\s+import\s+app\b"
        r"|from\s+\.+\s+import\s+app\b|import\s+trueno_web\.app\b)",
        re.M,
    )
    offenders = [
        str(p.relative_to(ROOT))
        for p in package.rglob("*.py")
        if "app" not in p.relative_to(package).parts[:-1]
        and p.name != "__main__.py"
        and app_import.search(p.read_text())
    ]
    assert offenders == [], f"the library imports trueno_web.app: {offenders}"
