"""report.html (optimize) and results.html (bench/run): built from recorded results in the
repository (bench/results/), checked as text, and loaded in headless Chromium where one is
installed: no console error, and a screenshot that is not blank."""

import copy
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

import pytest

from tritonforge_worker import html_report

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KERNELS = os.path.join(ROOT, "bench", "results", "kernels")


def load_result(name):
    with open(os.path.join(KERNELS, name, "result.json")) as f:
        result = json.load(f)
    with open(os.path.join(KERNELS, name, "changes.diff")) as f:
        diff = f.read()
    return result, diff


def has_matplotlib():
    return html_report.Figures().plt is not None


def assert_self_contained(text):
    low = text.lower()
    assert "<script" not in low
    assert 'rel="stylesheet"' not in low
    for attr in ("src=", "href="):
        for scheme in ("http:", "https:", "//"):
            assert f'{attr}"{scheme}' not in low, f"{attr}{scheme} fetches from the network"


# ---------------------------------------------------------------------------------------
# The page as text


def test_optimize_page_has_every_section():
    result, diff = load_result("matmul_fp16")
    text = html_report.optimize_html(result, diff)
    assert_self_contained(text)
    assert "<h1>tritonforge: matmul_fp16</h1>" in text
    for section in ("Search progress", "Per case", "Roofline", "Changes", "Decisions"):
        assert f"<h2>{section}</h2>" in text
    assert "Speed-up: 2.16x" in text
    # The per-case table: as written 0.9148 ms, best 0.4240 ms.
    assert "<td class=num>0.9148</td><td class=num>0.4240</td>" in text
    # The diff, coloured per line; the decisions of the trace.
    assert '<span class="add">' in text and '<span class="del">' in text
    assert "finding <b>F1</b> (latency-bound, diagnosis)" in text
    assert "stop after 4 rounds: no gain in 3 rounds" in text
    # % of roofline, from the harness's work and the ceilings of the trace: 0.3649 ms of a
    # roofline against 0.9148 ms as written is 39.9%.
    assert "39.9%" in text
    if has_matplotlib():
        assert text.count('src="data:image/png;base64,') == 3   # progress, cases, roofline
        assert "No figures" not in text


def test_a_per_shape_dispatch_gets_its_table():
    result, diff = load_result("matmul_fp16")
    assert "Per-shape dispatch" not in html_report.optimize_html(result, diff)
    result = copy.deepcopy(result)
    result["dispatch"] = {
        "built": True, "handed_back": True, "feature": "a.shape[0]", "status": "ok",
        "buckets": [
            {"lo": 8, "hi": 256, "candidate": 12, "runs": "#12 (BLOCK_M=16)", "cases": ["M=16"],
             "extra_shapes": [{"case": {"M": 32}, "status": "verified"}, {"case": {"M": 8}, "status": "verified"}]},
            {"lo": 257, "hi": 8192, "candidate": None, "runs": "as written", "cases": ["M=4096"]},
        ]}
    text = html_report.optimize_html(result, diff)
    assert "<h2>Per-shape dispatch</h2><p>Handed back: the launcher picks by <code>a.shape[0]</code>" in text
    assert "<td class=num>8..256</td><td>#12 (BLOCK_M=16)</td><td>M=16</td><td class=num>2</td>" in text
    assert "<td class=num>257..8192</td><td>as written</td><td>M=4096</td><td class=num>-</td>" in text


def test_a_gluon_route_gets_its_column():
    result, diff = load_result("matmul_fp16")
    assert "<th>route</th>" not in html_report.optimize_html(result, diff)
    result = copy.deepcopy(result)
    result["best"]["per_case"][0]["route"] = "gluon"
    text = html_report.optimize_html(result, diff)
    assert "<th>speed-up</th><th>route</th>" in text
    assert "x</td><td>Gluon</td></tr>" in text


def test_progress_points_and_best_so_far():
    result, _ = load_result("matmul_fp16")
    pts = html_report.progress_points(result)
    assert len(pts) == 67
    steps = html_report.best_so_far(pts)
    # The best only rises, and only at accepted candidates.
    assert [b for _, b in steps] == sorted(b for _, b in steps)
    assert steps[-1][1] == pytest.approx(max(sp for _, sp, _, acc in pts if acc))
    # A candidate slower on a case is never the best however fast it is overall.
    fast_but_regressed = copy.deepcopy(result)
    fast_but_regressed["trace"].append({"kind": "candidate", "t": 50.0, "data": {
        "status": "ok", "objective": 0.1, "regressed_cases": ["x (0.5x)"]}})
    assert html_report.best_so_far(html_report.progress_points(fast_but_regressed))[-1] == steps[-1]


def test_without_matplotlib_the_page_says_why(monkeypatch):
    result, diff = load_result("softmax")

    def no_matplotlib(self):
        self.plt = None
        self.why = "matplotlib could not be imported (test)"

    monkeypatch.setattr(html_report.Figures, "__init__", no_matplotlib)
    text = html_report.optimize_html(result, diff)
    assert "No figures: matplotlib could not be imported (test)." in text
    assert "data:image/png" not in text
    assert "<h2>Decisions</h2>" in text and "<h2>Per case</h2>" in text


def test_no_roofline_and_no_gpu_pages():
    result, _ = load_result("matmul_fp16")
    no_roof = copy.deepcopy(result)
    no_roof["trace"] = [e for e in no_roof["trace"] if e["kind"] != "roofline"]
    assert "No roofline: the run recorded no roofline" in html_report.optimize_html(no_roof, "")
    no_gpu = {"schema": "tritonforge.optimize/1", "status": "no-gpu", "task": {"name": "add", "cases": [{}]},
              "environment": {"gpu": None, "no_gpu_reason": "torch sees no CUDA GPU"},
              "search": {"effort": "quick"}, "trace": []}
    text = html_report.optimize_html(no_gpu, "")
    assert "Nothing was measured: torch sees no CUDA GPU." in text
    assert "effort <b>quick</b>" in text
    assert "The source is unchanged." in text


def test_bench_page():
    with open(os.path.join(ROOT, "bench", "results", "results.json")) as f:
        doc = json.load(f)
    text = html_report.bench_html(doc)
    assert_self_contained(text)
    assert "geomean speed-up over as written: tritonforge 2.16x, autotune 1.96x" in text
    for name in doc["kernels"]:
        assert f"<tr><td>{name}</td>" in text
    if has_matplotlib():
        assert text.count('src="data:image/png;base64,') == 2
    # A vendor chosen among several backends (bench/benchlib/measure.py) is named beside its time.
    name = next(n for n, k in doc["kernels"].items() if k.get("status") == "done")
    doc["kernels"][name]["cases"][0]["vendor"] = dict(doc["kernels"][name]["cases"][0]["vendor"],
                                                      name="SDPA cuDNN attention")
    assert "(SDPA cuDNN attention)" in html_report.bench_html(doc)


def test_command_line_writes_the_page(tmp_path):
    out = tmp_path / "report.html"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-m", "tritonforge_worker.html_report", "optimize",
                        os.path.join(KERNELS, "transpose", "result.json"), "-o", str(out)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "<h1>tritonforge: transpose</h1>" in text
    # changes.diff is found beside result.json when --diff is not given.
    assert '<pre class="diff">' in text


# ---------------------------------------------------------------------------------------
# In a browser


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def png_pixels(path):
    """(width, height, [(r, g, b)]) of an 8-bit RGB or RGBA PNG, decoded with zlib."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"unexpected PNG format: depth {depth}, colour type {ctype}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    pixels = []
    for y in range(height):
        row_start = y * (stride + 1)
        ftype = raw[row_start]
        row = bytearray(raw[row_start + 1:row_start + 1 + stride])
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                row[i] = (row[i] + a) & 0xFF
            elif ftype == 2:
                row[i] = (row[i] + b) & 0xFF
            elif ftype == 3:
                row[i] = (row[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[i] = (row[i] + pred) & 0xFF
        pixels.extend(tuple(row[i:i + 3]) for i in range(0, stride, bpp))
        prev = row
    return width, height, pixels


def render(html_path, png_path):
    """Loads the page in headless Chromium; returns the console messages it logged."""
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium or chrome binary on PATH (scripts/setup.sh --tests installs Debian's chromium)")
    r = subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                        f"--screenshot={png_path}", "--window-size=1200,900", "--enable-logging=stderr", "--v=0",
                        f"file://{html_path}"], capture_output=True, text=True, timeout=120)
    assert os.path.exists(png_path), f"no screenshot (exit {r.returncode}): {r.stderr[-2000:]}"
    return [line for line in r.stderr.splitlines() if ":CONSOLE" in line]


def assert_not_blank(png_path, min_colours):
    w, h, pixels = png_pixels(png_path)
    assert (w, h) == (1200, 900)
    non_white = sum(1 for p in pixels if p != (255, 255, 255))
    colours = len(set(pixels))
    assert non_white > 0.01 * w * h, f"only {non_white} non-white pixels"
    assert colours >= min_colours, f"only {colours} distinct colours"


def test_png_reader_on_a_known_image(tmp_path):
    # A 2x1 RGB image, red then white, written by hand (filter 0): the reader the browser
    # checks rely on must itself be right.
    raw = b"\x00" + bytes([255, 0, 0, 255, 255, 255])
    chunk = lambda kind, body: (struct.pack(">I", len(body)) + kind + body
                                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    path = tmp_path / "t.png"
    path.write_bytes(png)
    assert png_pixels(path) == (2, 1, [(255, 0, 0), (255, 255, 255)])


def test_report_html_in_chromium(tmp_path):
    result, diff = load_result("matmul_fp16")
    page = tmp_path / "report.html"
    page.write_text(html_report.optimize_html(result, diff))
    console = render(page, tmp_path / "shot.png")
    assert console == []
    # With the figures the top of the page holds the progress chart's colours; without
    # matplotlib it is text, headings and the note.
    assert_not_blank(tmp_path / "shot.png", 50 if has_matplotlib() else 5)


def test_results_html_in_chromium(tmp_path):
    with open(os.path.join(ROOT, "bench", "results", "results.json")) as f:
        doc = json.load(f)
    page = tmp_path / "results.html"
    page.write_text(html_report.bench_html(doc))
    console = render(page, tmp_path / "shot.png")
    assert console == []
    assert_not_blank(tmp_path / "shot.png", 50 if has_matplotlib() else 5)


def test_chromium_check_sees_a_console_error(tmp_path):
    # The console check is not vacuous: a page with a script error is caught.
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>")
    console = render(page, tmp_path / "shot.png")
    assert any("undefinedFunction" in line for line in console)
