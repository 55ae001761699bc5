"""A missing tool, pass, extension or installed package fails a test under
``CI=true`` and is a skip, saying so, on a developer machine."""

from __future__ import annotations

import pytest

import graph_tools
from graph_tools import missing, require_module, require_passes, tool


@pytest.mark.parametrize("value", ["true", "1", "TRUE", "yes"])
def test_missing_fails_under_ci(monkeypatch: pytest.MonkeyPatch,
                                value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception) as e:
        missing("joint-x is not built")
    assert str(e.value) == ("joint-x is not built; CI=true: a missing tool, "
                            "pass or package is a failure, not a skip")


@pytest.mark.parametrize("value", [None, "", "0", "false", "no"])
def test_missing_skips_on_a_developer_machine(monkeypatch: pytest.MonkeyPatch,
                                              value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception) as e:
        missing("joint-x is not built")
    assert str(e.value) == ("joint-x is not built (skipped on a developer "
                            "machine only; this fails under CI=true)")


def test_unbuilt_tool_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"^joint-no-such-tool is "
                       r"not built at .*/bin/joint-no-such-tool \(run "
                       r"scripts/build, or set JOINT_BUILD_DIR\); CI=true"):
        tool("joint-no-such-tool")


def test_unknown_pass_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    tool("joint-opt")
    monkeypatch.setenv("CI", "true")
    require_passes(["--joint-remat", "--joint-cpu-offload=min-bytes=1"])
    with pytest.raises(pytest.fail.Exception,
                       match=r"^joint-opt has no pass --joint-no-such-pass; "):
        require_passes(["--joint-remat", "--joint-no-such-pass=mode=full"])


def test_uninstalled_package_fails_under_ci(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_module("json").__name__ == "json"
    with pytest.raises(pytest.fail.Exception,
                       match=r"^joint_no_such_package cannot be imported"):
        require_module("joint_no_such_package")


def test_cmake_option(tmp_path) -> None:
    (tmp_path / "CMakeCache.txt").write_text(
        "JOINT_ENABLE_PYTHON:BOOL=OFF\nJOINT_ENABLE_CUDA:BOOL=ON\n")
    assert graph_tools.cmake_option(tmp_path, "JOINT_ENABLE_PYTHON") is False
    assert graph_tools.cmake_option(tmp_path, "JOINT_ENABLE_CUDA") is True
    assert graph_tools.cmake_option(tmp_path, "JOINT_ENABLE_FUZZER") is None


def test_a_renamed_pass_is_not_its_prefix(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass renamed to a longer name (``--joint-x`` -> ``--joint-x-v2``)
    no longer counts as ``--joint-x``."""
    tool("joint-opt")
    monkeypatch.setattr(graph_tools, "_opt_help", lambda _: (
        "  --joint-activation-checkpoint-renamed  - ...\n"
        "  --joint-remat                          - ...\n"))
    assert graph_tools.has_pass("--joint-remat")
    assert not graph_tools.has_pass("--joint-activation-checkpoint=mode=full")
