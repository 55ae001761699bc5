"""joint_mlir._core and run_pipeline: in-process pipelines against the tools.

The document run_pipeline returns must be byte for byte what
``joint-opt <pipeline>`` followed by ``joint-translate --export-joint-json``
writes, and its report what ``--joint-memory-report=format=json`` writes.
Bad input raises PipelineError with the diagnostic (and the node when there
is one) and leaves the interpreter alive.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from graph_tools import EXAMPLES, REPO_ROOT, core as _core_module, tool
from joint_mlir import PipelineError, run_pipeline
from joint_mlir.pipeline import opt_flags

core = _core_module()

CKPT_FULL = "joint-tag-recompute-policy{mode=full},joint-remat"
# graph_trainer's order; the offload scope is self_attn (Llama examples).
CKPT_OFFLOAD = ("joint-tag-recompute-policy{mode=full layer-indices=1},"
                "joint-cpu-offload{min-bytes=1024},joint-remat")

CASES = [(e.name, CKPT_FULL) for e in EXAMPLES] + [
    (e.name, CKPT_OFFLOAD) for e in EXAMPLES if e.name.startswith("llama")]


@pytest.mark.parametrize("example,pipeline", CASES)
def test_same_document_and_report_as_tools(example: str, pipeline: str,
                                           tmp_path: Path) -> None:
    path = REPO_ROOT / "examples" / example
    report_file = tmp_path / "report.json"
    mlir = tmp_path / "out.mlir"
    subprocess.run(
        [str(tool("joint-opt")), str(path), *opt_flags(pipeline),
         f"--joint-memory-report=format=json output={report_file} label=L",
         "-o", str(mlir)],
        check=True, capture_output=True)
    expected = subprocess.run(
        [str(tool("joint-translate")), "--export-joint-json", str(mlir)],
        check=True, capture_output=True, text=True).stdout

    result = run_pipeline(path.read_bytes(), pipeline, label="L",
                          filename=str(path))
    assert result.text == expected
    assert result.document == json.loads(expected)
    assert result.report == json.loads(report_file.read_text())
    assert any("joint-remat:" in r for r in result.remarks)


def test_dict_in_and_anchored_pipeline() -> None:
    doc = json.loads((REPO_ROOT / "examples" / "mlp.json").read_text())
    plain = run_pipeline(doc, CKPT_FULL, report=False)
    anchored = run_pipeline(json.dumps(doc), f"builtin.module({CKPT_FULL})",
                            report=False)
    assert plain.report is None
    assert plain.text == anchored.text
    # The empty pipeline is import + export: the example round-trips.
    same = run_pipeline(doc, "", report=False)
    assert same.document["nodes"] == doc["nodes"]


def _error(document, pipeline: str) -> PipelineError:
    with pytest.raises(PipelineError) as info:
        run_pipeline(document, pipeline)
    return info.value


MLP = REPO_ROOT / "examples" / "mlp.json"


def test_unknown_pass() -> None:
    e = _error(MLP.read_text(), "joint-tag-recompute-policy,joint-bogus")
    assert "'joint-bogus' does not refer to a registered pass" in e.diagnostic
    assert e.node is None


def test_invalid_option_name() -> None:
    e = _error(MLP.read_text(), "joint-remat{bogus=1}")
    assert e.diagnostic == (
        "error: invalid pass pipeline 'joint-remat{bogus=1}': joint-remat: "
        "no such option 'bogus'; it takes no options")
    e = _error(MLP.read_text(), "joint-memory-report{bogus=1}")
    assert e.diagnostic == (
        "error: invalid pass pipeline 'joint-memory-report{bogus=1}': "
        "joint-memory-report: no such option 'bogus'; valid options: "
        "collective-gbps, format, hbm-gbps, label, link-gbps, output, "
        "peak-tflops (joint-opt --help "
        "describes them)")


def test_invalid_option_value() -> None:
    e = _error(MLP.read_text(), "joint-cpu-offload{budget-gib=-1}")
    assert e.diagnostic == (
        "error: joint-tag-cpu-offload: budget-gib must be a finite number of "
        "GiB >= 0 (0 means no limit), got -1")


def test_option_error_names_pass_without_location() -> None:
    # An option invalid on its own is about the call, not the document.
    e = _error(MLP.read_text(), "joint-tag-recompute-policy{layer-count=-2}")
    assert e.diagnostic == ("error: joint-tag-recompute-policy: layer-count "
                            "must be >= 0, got -2")
    e = _error(MLP.read_text(), "joint-plan-memory{budget-gb=1 link-gbps=0}")
    assert e.diagnostic == ("error: joint-plan-memory: link-gbps must be a "
                            "positive number, got 0")


def test_path_document_is_read() -> None:
    # A pathlib.Path is read (JSON or gzip) and names the file in errors.
    assert (run_pipeline(MLP, CKPT_FULL).text
            == run_pipeline(MLP.read_text(), CKPT_FULL).text)
    e = _error(MLP, "joint-cpu-offload{min-bytes=1}")
    assert e.diagnostic.startswith(f"{MLP}:1:1: error: joint-tag-cpu-offload "
                                   "scope=attention: graph @mlp has no "
                                   "attention module")


def test_str_path_is_refused_naming_the_path() -> None:
    e = _error(str(MLP), CKPT_FULL)
    assert e.diagnostic == (
        f"error: the document '{MLP}' is a file path, not JSON text: pass "
        "the text (Path(p).read_text()) or the path as a pathlib.Path "
        f"(run_pipeline(Path({str(MLP)!r}), ...))")
    assert e.node is None


def test_unreadable_path_is_a_pipeline_error(tmp_path: Path) -> None:
    # The package's own error naming the path, the OSError as its cause.
    missing = tmp_path / "no-such.json"
    e = _error(missing, CKPT_FULL)
    assert e.diagnostic == (f"error: cannot read the document '{missing}': "
                            "No such file or directory")
    assert isinstance(e.__cause__, FileNotFoundError)
    e = _error(tmp_path, CKPT_FULL)
    assert e.diagnostic == (f"error: cannot read the document '{tmp_path}': "
                            "Is a directory")
    assert isinstance(e.__cause__, IsADirectoryError)


def test_mlir_path_is_refused(tmp_path: Path) -> None:
    mlir = tmp_path / "g.mlir"
    mlir.write_text("joint.graph @g() -> () {\n  joint.output\n}\n")
    e = _error(mlir, "")
    assert e.diagnostic == (
        f"error: '{mlir}' is MLIR text: run_pipeline reads the JSON document "
        "(format v1, .json or .json.gz); export it first with "
        "joint-translate --export-joint-json")


def test_report_onto_the_input_path_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "g.json"
    doc.write_bytes(MLP.read_bytes())
    e = _error(doc, f"joint-memory-report{{output={tmp_path}/./g.json}}")
    assert e.diagnostic == (
        f"{doc}:1:1: error: joint-memory-report: cannot write "
        f"'{tmp_path}/./g.json': it is the same file as the input file "
        f"'{doc}'; write the report to another path")
    assert doc.read_bytes() == MLP.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["g.json"]


def test_report_file_written_only_when_the_call_succeeds(
        tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    report = f"joint-memory-report{{output={out} format=json}}"
    # The report pass succeeds, a later pass fails: no file, no temporary.
    _error(MLP, f"{report},joint-cpu-offload{{min-bytes=1}}")
    assert list(tmp_path.iterdir()) == []
    run_pipeline(MLP, f"{report},{CKPT_FULL}", report=False)
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
    assert json.loads(out.read_text())["graph"] == "mlp"


def test_malformed_json() -> None:
    e = _error('{"format": "joint-graph", ', CKPT_FULL)
    assert e.diagnostic.startswith("<document>:1:")
    assert "malformed JSON" in e.diagnostic
    assert e.node is None


def test_broken_reference_names_node() -> None:
    doc = json.loads(MLP.read_text())
    target = next(n for n in doc["nodes"] if n["kind"] == "call_function"
                  and n["args"] and n["args"][0].get("t") == "node")
    target["args"][0]["v"] = "no_such_node"
    e = _error(doc, CKPT_FULL)
    assert f"node '{target['name']}'" in e.diagnostic
    assert "refers to undefined node 'no_such_node'" in e.diagnostic
    assert e.node == target["name"]


def test_pass_failure_is_an_error() -> None:
    mlp = REPO_ROOT / "examples" / "mlp.json"
    e = _error(mlp.read_bytes(), "joint-cpu-offload{min-bytes=1}")
    assert "graph @mlp has no attention module" in e.diagnostic


def test_document_parsed_on_first_access_once() -> None:
    result = run_pipeline(MLP.read_bytes(), CKPT_FULL, report=False)
    assert "document" not in vars(result)  # only the text so far
    assert result.document == json.loads(result.text)
    assert result.document is result.document


def test_str_document_read_as_utf8() -> None:
    # A str is read through its UTF-8 form, non-ASCII text included.
    doc = json.loads(MLP.read_text())
    node = next(n for n in doc["nodes"] if n["kind"] == "call_function")
    node["stack_trace"] = 'File "m\u00e9\u4e2d.py", line 1 \U0001f600'
    text = json.dumps(doc, ensure_ascii=False)
    from_str = run_pipeline(text, "", report=False)
    assert from_str.text == run_pipeline(text.encode(), "", report=False).text
    exported = next(n for n in from_str.document["nodes"]
                    if n["name"] == node["name"])
    assert exported["stack_trace"] == node["stack_trace"]


def test_unencodable_str_document() -> None:
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        core.run_pipeline('{"name": "\ud800"}', "")


def test_wrong_document_type() -> None:
    with pytest.raises(TypeError, match="document must be str"):
        core.run_pipeline(42, "")
    # run_pipeline names every kind it accepts.
    with pytest.raises(TypeError) as info:
        run_pipeline(123, "")
    assert str(info.value) == (
        "run_pipeline: document must be a dict (format v1), str (JSON text), "
        "bytes (JSON or gzip-compressed JSON) or os.PathLike (a .json/.json.gz"
        " file), not int")


def test_interpreter_survives_errors() -> None:
    # Every kind of failure in one process, then a good run.
    for doc, pipe in [(MLP.read_text(), "joint-bogus"), ("{", ""),
                      (b"\x1f\x8b\x08", ""), (MLP.read_text(), "joint-remat{")]:
        with pytest.raises(PipelineError):
            run_pipeline(doc, pipe)
    assert run_pipeline(MLP.read_text(), CKPT_FULL).document["nodes"]


def _other_thread_ran_inside(call, tries: int) -> bool:
    """Whether the main thread ran Python while a worker was inside `call`.

    With a switch interval far longer than the test, a thread gives up the
    GIL only where it blocks or where C code releases it, so the main thread
    can see the worker between "calling" and "returned" only if `call`
    releases the GIL; no clock is read."""
    state = {"now": "idle", "seen": False}

    def work() -> None:
        for _ in range(tries):
            if state["seen"]:
                return
            state["now"] = "calling"
            call()
            state["now"] = "returned"

    old = sys.getswitchinterval()
    sys.setswitchinterval(3600.0)
    try:
        t = threading.Thread(target=work)
        t.start()
        while t.is_alive():
            if state["now"] == "calling":
                state["seen"] = True
                break
            time.sleep(0.0005)  # blocks: lets the worker take the GIL
        t.join()
    finally:
        sys.setswitchinterval(old)
    return state["seen"]


def test_gil_released_while_passes_run() -> None:
    text = (REPO_ROOT / "examples" / "llama-tiny-fp32.json").read_text()
    assert _other_thread_ran_inside(
        lambda: core.run_pipeline(text, CKPT_OFFLOAD), tries=20)
    # The harness can fail: a C call that keeps the GIL is never seen.
    assert not _other_thread_ran_inside(
        lambda: bytes(20_000_000).count(b"x"), tries=3)


def test_step_cache_key_covers_every_part(tmp_path: Path) -> None:
    """The one definition of the step cache's key (StepCache.h), which
    joint-compile stores under and mlir_cpu.compile_graph looks up: 32 hex
    digits, the same for the same inputs, another for any other part."""
    compiler = tmp_path / "joint-compile"
    compiler.write_bytes(b"x")
    base = dict(data=b"{}", pipeline="", lowering_options="", target="cpu",
                opt_level=2, compiler=str(compiler))
    key = core.step_cache_key(**base)
    assert len(key) == 32 and int(key, 16) >= 0
    assert core.step_cache_key(**base) == key
    for part, value in [("data", b"{ }"), ("pipeline", "joint-remat"),
                        ("lowering_options", "tile-matmuls=false"),
                        ("target", "cuda"), ("opt_level", 3)]:
        assert core.step_cache_key(**dict(base, **{part: value})) != key, part
    compiler.write_bytes(b"xy")  # a rebuilt compiler: another size
    assert core.step_cache_key(**base) != key
