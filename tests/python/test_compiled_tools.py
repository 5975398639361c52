"""The compile op's tool lookup: TRITONFORGE_HIDE_TOOLS makes a tool count as missing, and a
missing cuobjdump is reported instead of failing (the C++ side then reads PTX)."""

from tritonforge_worker import compiled


def test_hidden_tool_counts_as_missing(monkeypatch):
    monkeypatch.setenv("TRITONFORGE_HIDE_TOOLS", "cuobjdump, nvdisasm")
    tools = compiled.tool_paths()
    assert tools["cuobjdump"] is None
    assert tools["nvdisasm"] is None
    assert "ptxas" in tools


def test_cubin_facts_without_cuobjdump(monkeypatch):
    monkeypatch.setenv("TRITONFORGE_HIDE_TOOLS", "cuobjdump")
    facts = compiled.cubin_facts(b"\x7fELF not really a cubin", want_sass=True)
    assert facts == {"tool": None, "tool_missing": "cuobjdump"}


def test_parse_resource_usage():
    text = """
Resource usage:
 Common:
  GLOBAL:0
 Function mm:
  REG:255 STACK:360 SHARED:1024 LOCAL:0 CONSTANT[0]:584 TEXTURE:0 SURFACE:0 SAMPLER:0
"""
    usage = compiled.parse_resource_usage(text)
    assert usage["mm"]["REG"] == 255
    assert usage["mm"]["STACK"] == 360
