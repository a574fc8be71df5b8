"""scripts/jupyterlite_snapshot.py's guard: the site's kernel worker must skip installing what the snapshot
holds, or the build stops (a new jupyterlite-pyodide-kernel would otherwise install everything again)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def snap():
    spec = importlib.util.spec_from_file_location("jupyterlite_snapshot", ROOT / "scripts" / "jupyterlite_snapshot.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _site(tmp_path: Path, snap, text: str) -> Path:
    ext = tmp_path / snap.EXTENSION
    ext.mkdir(parents=True)
    (ext / "comlink.worker.0123abcd.js").write_text(text)
    return tmp_path


def test_a_worker_that_skips_the_snapshots_packages_passes(tmp_path, snap):
    snap.check_worker(_site(tmp_path, snap, "x;" + ";".join(snap.WORKER_SKIPS) + ";y"))


def test_a_worker_without_one_skip_stops_the_build(tmp_path, snap):
    for dropped, skip in enumerate(snap.WORKER_SKIPS):
        kept = [s for i, s in enumerate(snap.WORKER_SKIPS) if i != dropped]
        with pytest.raises(SystemExit, match="pinned jupyterlite-pyodide-kernel changed") as err:
            snap.check_worker(_site(tmp_path / str(dropped), snap, ";".join(kept)))
        assert skip in str(err.value)


def test_the_checked_loop_installs_what_the_snapshot_holds(snap):
    """The worker's loop that the build checks installs exactly the kernel packages the snapshot holds."""
    loop = snap.WORKER_SKIPS[2]
    assert loop.startswith("for(let e of[") and loop[len("for(let e of[") :].split("]")[0] == ",".join(
        f'"{name}"' for name in snap.KERNEL_PACKAGES
    )
