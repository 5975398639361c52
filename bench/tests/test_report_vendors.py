"""The report when the vendor was timed on several backends (measure.py's "vendors"): the
vendor column names the fastest verified one, a line under the table gives the others' times,
and a kernel without them reads as before (made-up measurements, no GPU)."""

import pytest

from benchlib import report

CEIL = {"dram_bytes_per_s": 4.0e12, "matmul_flops_per_s": {"fp16": 600e12}}


def _rec(ms, passed=True):
    return {"status": "ok", "ms": ms, "verify": {"passed": passed}}


def _entry(vendors=None, chosen=None):
    case = {"case": {"B": 4, "H": 32}, "flops": 1.2e12, "bytes": 4e9, "baseline": _rec(8.0),
            "tritonforge": _rec(2.0), "autotune": _rec(2.2)}
    if vendors:
        case["vendors"] = vendors
        case["vendor"] = dict(vendors[chosen], name=chosen)
    else:
        case["vendor"] = _rec(2.05)
    return {"name": "attention", "status": "done", "peak": "fp16",
            "vendor_name": "torch SDPA (F.scaled_dot_product_attention)",
            "tritonforge": {"status": "improved", "wall_s": 30.0, "evaluated": 12}, "cases": [case]}


def _doc(entry):
    kernels = {"attention": report.derive(entry, CEIL)}
    return {"environment": {}, "ceilings": CEIL, "kernels": kernels, "summary": report.summary(kernels),
            "runs": [], "args": {}}


VENDORS = {"SDPA cuDNN attention": _rec(1.6), "SDPA FlashAttention-2": _rec(1.9),
           "SDPA memory-efficient": {"status": "error", "message": "RuntimeError: No available kernel."}}


def test_the_vendor_column_names_the_fastest_backend_and_the_others_are_listed():
    md = report.markdown(_doc(_entry(VENDORS, "SDPA cuDNN attention")))
    row = next(line for line in md.splitlines() if line.startswith("| attention | B=4,H=32 "))
    assert "| SDPA cuDNN attention | 1.600 | 0.80 |" in row
    assert "torch SDPA" not in row
    assert ("- attention (B=4,H=32): SDPA cuDNN attention in the table; also SDPA FlashAttention-2 1.900 ms, "
            "SDPA memory-efficient error") in md.splitlines()
    # the targets compare tritonforge with the fastest backend
    assert "attention 0.80" in md


def test_each_backend_gets_its_figures():
    entry = report.derive(_entry(VENDORS, "SDPA cuDNN attention"), CEIL)
    c = entry["cases"][0]
    assert c["vendors"]["SDPA FlashAttention-2"]["speedup"] == pytest.approx(8.0 / 1.9)
    assert c["vendors"]["SDPA cuDNN attention"]["roofline_pct"] == pytest.approx(100 * 2.0 / 1.6)
    assert "speedup" not in c["vendors"]["SDPA memory-efficient"]
    assert entry["speedup"]["vendor"] == pytest.approx(8.0 / 1.6)


def test_a_backend_outside_the_tolerance_is_marked():
    vendors = dict(VENDORS, **{"SDPA FlashAttention-2": _rec(1.2, passed=False)})
    md = report.markdown(_doc(_entry(vendors, "SDPA cuDNN attention")))
    assert "SDPA FlashAttention-2 1.200 ms (!)" in md


def test_without_backends_the_table_reads_as_before():
    md = report.markdown(_doc(_entry()))
    row = next(line for line in md.splitlines() if line.startswith("| attention | B=4,H=32 "))
    assert "| torch SDPA (F.scaled_dot_product_attention) | 2.050 |" in row
    assert "Vendor backends" not in md
    # one backend alone (the interpreter's default call): nothing more to list
    one = {"torch SDPA (F.scaled_dot_product_attention)": _rec(2.05)}
    md = report.markdown(_doc(_entry(one, "torch SDPA (F.scaled_dot_product_attention)")))
    assert "Vendor backends" not in md
    assert "| torch SDPA (F.scaled_dot_product_attention) | 2.050 |" in md
