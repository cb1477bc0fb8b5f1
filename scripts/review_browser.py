"""The review page in a real browser: Debian's headless Chromium driven by Playwright for Python
(`executable_path`, never `playwright install`), against `fpdb serve` on a fresh database.

It stores two near-duplicate documents (one group), opens /review#a, picks the pair, types a
reason and clicks "distinct"; the group splits in GET /v1/groups/by-key/a. A document that
bridges the two is then stored over HTTP: it joins one side only, its outcome names the link the
decision held, and the two stay apart. "undo" on the page joins them again. Screenshots of each
step go to --shots (docs/review/ holds the committed ones). Run by scripts/review-browser.sh.

Usage: python scripts/review_browser.py --fpdb target/debug/fpdb [--shots DIR] [--chromium PATH]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from playwright.sync_api import expect, sync_playwright

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

WORDS = (
    "the library keeps one record per work and merges the versions a crawler finds preprints "
    "journal articles conference papers and theses each version differs in a few words its title "
    "page or its references curators decide which records are the same work and which only look alike"
).split()


def passage(seed, n=150):
    out, x = [], seed * 2654435761 % 2**32
    for _ in range(n):
        x = (x * 1103515245 + 12345) % 2**31
        out.append(WORDS[x % len(WORDS)] + str(x % 7))
    return out


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def group(base, key):
    status, v = call(base, "GET", "/v1/groups/by-key/" + key)
    assert status == 200, (status, v)
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fpdb", required=True)
    ap.add_argument("--shots", default=None)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    shots = args.shots or tempfile.mkdtemp(prefix="fpdb-review-shots-")
    os.makedirs(shots, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fpdb-review-")
    server = subprocess.Popen(
        [args.fpdb, "serve", os.path.join(work, "db"), "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=open(os.path.join(work, "serve.log"), "w"),
        text=True,
    )
    try:
        line = server.stdout.readline().strip()
        m = re.match(r"fpdb serve: listening on (http://\S+)", line)
        assert m, line
        base = m.group(1)
        text = passage(1)
        a = " ".join(text[:148])  # two editions: 146 words shared, two differ at either end
        b = " ".join(text[2:150])
        bridge = " ".join(text[1:149])  # closer to each than they are to each other
        for key, t, meta in [("a", a, {"title": "On shingles", "year": 2001}), ("b", b, {"title": "On shingles", "year": 2003})]:
            status, out = call(base, "PUT", "/v1/documents/" + key, {"text": t, "meta": meta})
            assert status == 200, (status, out)
        assert group(base, "a")["group"]["size"] == 2, group(base, "a")

        with sync_playwright() as p:
            # A fresh profile (--user-data-dir): Playwright takes it as the persistent context's dir.
            browser = p.chromium.launch_persistent_context(
                tempfile.mkdtemp(prefix="fpdb-chromium-"),
                executable_path=args.chromium,
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": 1280, "height": 860},
            )
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base + "/review#a")
            expect(page.locator("#group-title")).to_contain_text("2 member(s)")
            # Pick the pair from the group's edges.
            page.locator("tr.edge-row[data-a='a'][data-b='b']").click()
            expect(page.locator("#pair-title")).to_have_text("a ~ b")
            expect(page.locator("#left")).to_be_visible()
            page.screenshot(path=os.path.join(shots, "1-group.png"), full_page=True)

            page.fill("#reason", "different years: two editions")
            page.fill("#author", "ci")
            page.click("#btn-distinct")
            expect(page.locator("#status")).to_contain_text("distinct: a / b")
            expect(page.locator("#group-title")).to_contain_text("1 member(s)")
            expect(page.locator("#scores")).to_contain_text("decided distinct")
            v = group(base, "a")
            assert v["group"]["size"] == 1, v
            assert [e["channel"] for e in v["edges"]] == ["held"], v
            page.screenshot(path=os.path.join(shots, "2-distinct.png"), full_page=True)

            # A document that bridges them: it joins one side only; the other link is held.
            status, out = call(base, "PUT", "/v1/documents/c", {"text": bridge})
            assert status == 200, (status, out)
            assert len(out["duplicates"]) == 2, out
            assert len(out["not_linked"]) == 1 and out["not_linked"][0]["blocked_by"] == ["a", "b"], out
            ga, gb = group(base, "a"), group(base, "b")
            assert ga["group"]["id"] != gb["group"]["id"], (ga, gb)
            page.reload()
            expect(page.locator("tr.edge-row.held").first).to_be_visible()
            page.locator("tr.edge-row[data-a='a'][data-b='b']").click()
            expect(page.locator("#pair-title")).to_have_text("a ~ b")
            page.screenshot(path=os.path.join(shots, "3-bridge-held.png"), full_page=True)

            page.click("#btn-undo")
            expect(page.locator("#status")).to_contain_text("undone: distinct a / b")
            expect(page.locator("#group-title")).to_contain_text("3 member(s)")
            # the selected pair's line follows the decision at once (no stale "held ... decided")
            expect(page.locator("#scores")).to_contain_text("channel text")
            expect(page.locator("#scores")).not_to_contain_text("decided")
            v = group(base, "b")
            assert v["group"]["size"] == 3, v
            assert all(e["channel"] == "text" for e in v["edges"]), v
            page.screenshot(path=os.path.join(shots, "4-undo.png"), full_page=True)

            # The keyboard: `d` on the selected pair, then `u`.
            page.locator("body").press("d")
            expect(page.locator("#status")).to_contain_text("distinct: a / b")
            page.locator("body").press("u")
            expect(page.locator("#status")).to_contain_text("undone")
            assert not errors, errors
            browser.close()
        print(f"review page: distinct, bridge held, undo, keys: ok; screenshots in {shots}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    sys.exit(main())
