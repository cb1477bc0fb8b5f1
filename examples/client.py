#!/usr/bin/env python3
"""A client of `fpdb serve` using only the Python standard library.

    python3 examples/client.py http://127.0.0.1:7878 [--token-file PATH]

Stores two near-duplicate abstracts and one record that shares only the DOI, checks a new text for
duplicates (text matches unioned with DOI / title + year matches), reads a group, and ingests an
NDJSON batch, printing what the server answers. Errors come back as JSON with a stable `code`;
429 and 503 carry Retry-After, which `FpdbClient` honours.
"""
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


class FpdbError(Exception):
    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class FpdbClient:
    def __init__(self, base_url, token=None, retries=5):
        self.base = base_url.rstrip("/")
        self.token = token
        self.retries = retries

    def _call(self, method, path, body=None, content_type="application/json", raw=False):
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(self.base + path, data=data, method=method)
            if data is not None:
                req.add_header("Content-Type", content_type)
            if self.token:
                req.add_header("Authorization", "Bearer " + self.token)
            try:
                with urllib.request.urlopen(req, timeout=60) as resp:
                    payload = resp.read()
                    return payload if raw else json.loads(payload)
            except urllib.error.HTTPError as e:
                err = json.loads(e.read() or b"{}").get("error", {})
                if e.code in (429, 503) and attempt < self.retries:
                    time.sleep(float(e.headers.get("Retry-After", "1")))
                    continue
                raise FpdbError(e.code, err.get("code"), err.get("message")) from None

    @staticmethod
    def _key(key):
        return urllib.parse.quote(key, safe="")

    def put(self, key, text, title=None, year=None, doi=None, meta=None, dedup="link"):
        doc = {"text": text}
        for name, value in (("title", title), ("year", year), ("doi", doi), ("meta", meta)):
            if value is not None:
                doc[name] = value
        return self._call("PUT", f"/v1/documents/{self._key(key)}?dedup={dedup}", doc)

    def duplicates(self, text, **fields):
        return self._call("POST", "/v1/duplicates", {"text": text, **fields})

    def get(self, key):
        return self._call("GET", f"/v1/documents/{self._key(key)}")

    def delete(self, key):
        return self._call("DELETE", f"/v1/documents/{self._key(key)}")

    def group(self, gid):
        return self._call("GET", f"/v1/groups/{gid}")

    def stats(self):
        return self._call("GET", "/v1/stats")

    def ingest(self, docs, dedup="link"):
        """POST an NDJSON batch; returns one result per input line (sent once durable)."""
        body = "".join(json.dumps(d) + "\n" for d in docs).encode()
        out = self._call("POST", f"/v1/documents?dedup={dedup}", body, "application/x-ndjson", raw=True)
        return [json.loads(line) for line in out.splitlines() if line.strip()]


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:7878"
    token = None
    if "--token-file" in sys.argv:
        with open(sys.argv[sys.argv.index("--token-file") + 1]) as f:
            token = f.read().strip()
    c = FpdbClient(base, token)
    abstract = ("We present a method for the deduplication of scholarly documents aggregated from many "
                "research repositories. It combines locality sensitive hashing of the abstract with exact "
                "matching of the metadata that the repositories supply, such as the DOI, the title and the "
                "year of publication. We build a ground truth dataset of one hundred thousand records and "
                "show that the hybrid method finds near duplicates that exact title matching misses.")
    r = c.put("core/1", abstract, title="Deduplication of Scholarly Documents", year=2020,
              doi="10.1000/example.1", meta={"repository": "arXiv"})
    print("put core/1:", r["stored"], "group", r["group"])
    r = c.put("core/2", abstract.replace("one hundred thousand", "100 thousand"))
    print("put core/2 duplicates:", [(h["key"], h["match"], round(h["jaccard"], 3)) for h in r["duplicates"]])
    r = c.put("core/3", "An unrelated erratum that only shares the DOI of the paper.", doi="https://doi.org/10.1000/EXAMPLE.1")
    print("put core/3 duplicates:", [(h["key"], h["match"]) for h in r["duplicates"]])
    r = c.duplicates(abstract, title="deduplication of scholarly documents", year=2020)
    print("check:", [(h["key"], h["match"]) for h in r["hits"]], f"{r['took_us']} us")
    gid = c.get("core/1")["group"]["id"]
    print("group:", [m["key"] for m in c.group(gid)["members"]])
    lines = c.ingest([{"key": "core/4", "text": abstract + " Revised."}, {"key": "core/5", "text": ""}])
    for line in lines:
        print("ndjson line", line["line"], "->", line.get("error", {}).get("code") or line["duplicates"][0]["key"])
    try:
        c.get("core/404")
    except FpdbError as e:
        print("error:", e.status, e.code)
    print("documents:", c.stats()["docs"])


if __name__ == "__main__":
    main()
