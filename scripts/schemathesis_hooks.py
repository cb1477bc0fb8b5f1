"""Schemathesis hooks for `fpdb serve`: an NDJSON serializer, so that POST /v1/documents (whose
request body is one JSON document per line) is exercised too. Used by docs/serve.md's command:

    SCHEMATHESIS_HOOKS=scripts.schemathesis_hooks st run ...
"""
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    docs = value if isinstance(value, list) else [value]
    return "".join(json.dumps(d) + "\n" for d in docs).encode()
