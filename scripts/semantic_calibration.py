#!/usr/bin/env python3
"""The semantic channel's calibration set: reworded copies (positives) beside HARD negatives — texts
on the same subject written independently — from real text in Debian packages.

Sources (apt-get install -y python3-doc perl-doc manpages-dev wordnet sword-text-kjv sword-text-web
diatheke; the package descriptions need Translation-en, fetched into a private lists directory so
the system's apt state is left alone — see --apt-lists):

  hard negatives (dup = false, hard = true)
    cross-manual   one function documented independently by two projects: Python's library
                   reference (python3-doc, the reST sources) vs perlfunc (perl-doc) vs the Linux
                   man-pages (manpages-dev, sections 2 and 3), matched by a hand-written name table
    neighbour      two neighbouring entries of one manual (the Python library reference groups its
                   functions by subject: os.chmod beside os.chown); two neighbouring passages of one
                   chapter of the World English Bible (sword-text-web)
    alternative    the Debian descriptions of two packages from different sources that provide the
                   same virtual package (mail-transport-agent: exim4 vs postfix, ...)
  positives (dup = true)
    wordnet        an entry with 25% of its content words replaced by a WordNet synonym (first
                   sense) and its sentences reordered (scripts/semantic_corpus.py's rewrite)
    wordnet-heavy  the same at 40%
    revision       an editor's revision: one sentence dropped, two swapped, 10% synonyms
    translation    one Bible passage in two independent translations (KJV vs WEB): a rewording by
                   people, not by this script
  easy negatives (dup = false, hard = false)
    unrelated      two entries of different sources on different subjects

Every pair has a "group" (its subject: the function, the virtual package, the chapter) and a
"split": "cal" (75%) or "held" (25%), drawn by a hash of the group, so a subject's pairs are all on
one side: the β chosen on "cal" is checked on "held" (`fpdb eval --semantic` reports both).

Deterministic for a given --seed. Usage:
  python3 scripts/semantic_calibration.py [--out data/semantic_calibration.jsonl] [--seed 1] [--apt-lists DIR]
  # the sample shipped with the tests, from the set and its `fpdb eval --semantic` report (JSON):
  python3 scripts/semantic_calibration.py --sample tests/data/semantic_hard_negatives.jsonl \
         --from data/semantic_calibration.jsonl --report DIR/NAME-semantic.json
"""
import argparse
import glob
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from semantic_corpus import load_wordnet, rewrite  # noqa: E402

PY = "/usr/share/doc/python3.11/html/_sources/library"
PERLFUNC = sorted(glob.glob("/usr/share/perl/5.*/pod/perlfunc.pod"))
MAN = "/usr/share/man"
MAX_WORDS = 180
MIN_WORDS = 25

# perl function -> (python entry "file:name", man page "section/name"); None where a manual lacks it
NAMES = """
chdir os:chdir 2/chdir
chmod os:chmod 2/chmod
chown os:chown 2/chown
chroot os:chroot 2/chroot
fork os:fork 2/fork
getppid os:getppid 2/getppid
getpgrp os:getpgrp 2/getpgrp
getpriority os:getpriority 2/getpriority
kill os:kill 2/kill
link os:link 2/link
lstat os:lstat 2/lstat
mkdir os:mkdir 2/mkdir
readlink os:readlink 2/readlink
rename os:rename 2/rename
rmdir os:rmdir 2/rmdir
stat os:stat 2/stat
symlink os:symlink 2/symlink
umask os:umask 2/umask
unlink os:unlink 2/unlink
utime os:utime 2/utime
wait os:wait 2/wait
waitpid os:waitpid 2/waitpid
pipe os:pipe 2/pipe
truncate os:truncate 2/truncate
system os:system 3/system
times os:times 2/times
getlogin os:getlogin 3/getlogin
sysopen os:open 2/open
sysread os:read 2/read
syswrite os:write 2/write
sysseek os:lseek 2/lseek
exec os:execv 3/exec
exit sys:exit 3/exit
sleep time:sleep 3/sleep
time time:time 2/time
localtime time:localtime 3/localtime
gmtime time:gmtime 3/gmtime
alarm signal:alarm 2/alarm
sqrt math:sqrt 3/sqrt
exp math:exp 3/exp
log math:log 3/log
sin math:sin 3/sin
cos math:cos 3/cos
atan2 math:atan2 3/atan2
abs functions:abs 3/abs
hex functions:hex -
oct functions:oct -
ord functions:ord -
chr functions:chr -
int functions:int -
sort functions:sorted 3/qsort
reverse functions:reversed -
length functions:len 3/strlen
open functions:open 3/fopen
eval functions:eval -
print functions:print 3/printf
map functions:map -
grep functions:filter -
join stdtypes:str.join -
split stdtypes:str.split 3/strtok
lc stdtypes:str.lower 3/tolower
uc stdtypes:str.upper 3/toupper
ucfirst stdtypes:str.capitalize -
index stdtypes:str.find 3/strstr
rindex stdtypes:str.rfind 3/strrchr
keys stdtypes:dict.keys -
values stdtypes:dict.values -
each stdtypes:dict.items -
push stdtypes:list.append -
pop stdtypes:list.pop -
crypt crypt:crypt 3/crypt
rand random:random 3/rand
srand random:seed 3/srand
select select:select 2/select
socket socket:socket 2/socket
bind socket:socket.bind 2/bind
listen socket:socket.listen 2/listen
accept socket:socket.accept 2/accept
connect socket:socket.connect 2/connect
send socket:socket.send 2/send
recv socket:socket.recv 2/recv
shutdown socket:socket.shutdown 2/shutdown
getsockopt socket:socket.getsockopt 2/getsockopt
gethostbyname socket:gethostbyname 3/gethostbyname
getpwnam pwd:getpwnam 3/getpwnam
getgrnam grp:getgrnam 3/getgrnam
flock fcntl:flock 2/flock
fcntl fcntl:fcntl 2/fcntl
ioctl fcntl:ioctl 2/ioctl
pack struct:pack -
unpack struct:unpack -
quotemeta re:escape -
glob glob:glob 3/glob
warn warnings:warn -
sprintf stdtypes:str.format 3/sprintf
opendir os:scandir 3/opendir
chomp stdtypes:str.rstrip -
lcfirst stdtypes:str.casefold -
"""


def words(s):
    return s.split()


def clip(text, n=MAX_WORDS):
    w = words(text)
    return " ".join(w[:n])


def clean_rst(lines):
    out, skip_block = [], False
    for line in lines:
        s = line.strip()
        if s.startswith(".. "):
            # directives: keep the prose of notes/warnings, drop version notes, audit events, code
            skip_block = not re.match(r"\.\. (note|warning|seealso)::", s)
            rest = re.sub(r"^\.\. [\w-]+::\s*", "", s)
            if not skip_block and rest:
                out.append(rest)
            continue
        if skip_block and s and not line.startswith("      "):
            skip_block = False
        if skip_block or s.startswith(">>>") or s.startswith("..."):
            continue
        out.append(s)
    t = " ".join(out)
    t = re.sub(r":[\w:]+:`~?([^`<]*?)(\s*<[^>]*>)?`", r"\1", t)  # :func:`x`, :ref:`text <target>`
    t = re.sub(r"``([^`]*)``", r"\1", t)
    t = re.sub(r"`([^`]*)`_?", r"\1", t)
    t = re.sub(r"\*\*?([^*]+)\*\*?", r"\1", t)
    t = re.sub(r"::", ":", t)
    return re.sub(r"\s+", " ", t).strip()


def python_entries(fname):
    """[(name, text)] of a library reST file, in file order (module prefix stripped)."""
    path = os.path.join(PY, fname + ".rst.txt")
    if not os.path.exists(path):
        return []
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)\.\. (function|method|class|data|exception|attribute):: ([\w.]+)", lines[i])
        if not m:
            i += 1
            continue
        indent, name = len(m.group(1)), m.group(3)
        j = i + 1
        while j < len(lines) and re.match(r"^\s*\.\. (function|method|class):: ", lines[j]) and len(lines[j]) - len(lines[j].lstrip()) == indent:
            j += 1  # signature variants
        body = []
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
            if re.match(r"^\s*\.\. (function|method|class|data|exception|attribute):: ", lines[j]):
                break
            body.append(lines[j])
            j += 1
        text = clean_rst(body)
        if len(words(text)) >= MIN_WORDS:
            out.append((name, clip(text)))
        i = j
    return out


def clean_pod(t):
    for _ in range(3):
        t = re.sub(r"[CIBFSX]<<+\s(.*?)\s>>+", r"\1", t)
        t = re.sub(r"L<([^|>]*)\|[^>]*>", r"\1", t)
        t = re.sub(r"L<\"?([^>\"]*)\"?>", r"\1", t)
        t = re.sub(r"[CIBFS]<([^<>]*)>", r"\1", t)
    t = re.sub(r"X<[^>]*>", "", t)
    t = t.replace("E<gt>", ">").replace("E<lt>", "<").replace("E<verbar>", "|").replace("E<sol>", "/")
    return re.sub(r"\s+", " ", t).strip()


def perl_entries():
    """{name: text} of perlfunc's entries (the first entry of a name; verbatim code dropped)."""
    if not PERLFUNC:
        return {}
    text = open(PERLFUNC[-1], encoding="utf-8").read()
    start = text.find("=head2 Alphabetical Listing of Perl Functions")
    paras = text[start:].split("\n\n")
    out, name, body, depth = {}, None, [], 0
    for p in paras:
        if p.startswith("=over"):
            depth += 1
            continue
        if p.startswith("=back"):
            depth -= 1
            continue
        if p.startswith("=item") and depth == 1:
            m = re.match(r"=item (\w+)", p)
            new = m.group(1) if m else None
            if new != name:
                if name and name not in out:
                    out[name] = clean_pod(" ".join(body))
                name, body = new, []
            continue
        if p.startswith("=") or p.startswith(" ") or p.startswith("\t") or name is None:
            continue
        body.append(p)
    if name and name not in out:
        out[name] = clean_pod(" ".join(body))
    return {k: clip(v) for k, v in out.items() if len(words(v)) >= MIN_WORDS}


def man_entry(ref):
    """The DESCRIPTION section of a man page (rendered by man-db), or None."""
    sec, name = ref.split("/")
    path = os.path.join(MAN, f"man{sec}", f"{name}.{sec}.gz")
    if not os.path.exists(path):
        return None
    env = dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="0")
    try:
        txt = subprocess.run(["man", "-l", path], capture_output=True, text=True, env=env, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    txt = re.sub(r".\x08", "", txt)
    m = re.search(r"\nDESCRIPTION\n(.*?)\n[A-Z][A-Z ]+\n", txt, re.S)
    if not m:
        return None
    t = re.sub(r"\s+", " ", m.group(1)).strip()
    return clip(t) if len(words(t)) >= MIN_WORDS else None


def bible(module, book, chapter):
    """[(verse, text)] of one chapter."""
    try:
        out = subprocess.run(["diatheke", "-b", module, "-f", "plain", "-k", f"{book} {chapter}"],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    verses = []
    for line in out.split("\n"):
        m = re.match(r"^[\w ]+ \d+:(\d+): (.*)$", line)
        if m:
            verses.append((int(m.group(1)), m.group(2).strip()))
    return verses


CHAPTERS = [("Genesis", c) for c in (1, 3, 6, 12, 22, 37, 41)] + [("Exodus", c) for c in (3, 14, 20)] + \
    [("Ruth", 1), ("1 Samuel", 17), ("Job", 38), ("Proverbs", 3), ("Isaiah", 40), ("Jonah", 1)] + \
    [("Matthew", c) for c in (5, 6, 13, 25)] + [("Mark", c) for c in (4, 5)] + [("Luke", c) for c in (10, 15)] + \
    [("John", c) for c in (3, 9, 11)] + [("Acts", c) for c in (2, 9, 27)] + [("Romans", 8), ("1 Corinthians", 13)]


def passages(verses, target=110):
    """Consecutive verse windows of about `target` words."""
    out, cur = [], []
    for v, t in verses:
        cur.append((v, t))
        if sum(len(words(x)) for _, x in cur) >= target:
            out.append(cur)
            cur = []
    return out


def apt_text(path):
    return subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], capture_output=True, text=True, check=True).stdout


def debian_alternatives(lists, rng, per_group=6):
    """[(virtual, pkg_a, desc_a, pkg_b, desc_b)]: packages of different sources providing one virtual package."""
    pk = sorted(glob.glob(os.path.join(lists, "*_bookworm_main_binary-amd64_Packages*")))
    tr = sorted(glob.glob(os.path.join(lists, "*_bookworm_main_i18n_Translation-en*")))
    if not pk or not tr:
        print(f"semantic_calibration: no Packages/Translation-en in {lists}; fetch them with\n"
              f"  mkdir -p {lists}/partial && apt-get update -o Dir::State::Lists={lists} -o Acquire::Languages=en",
              file=sys.stderr)
        return []
    desc = {}
    for rec in apt_text(tr[0]).split("\n\n"):
        m = re.search(r"^Description-md5: (\w+)\nDescription-en: (.*)", rec, re.S | re.M)
        if m:
            long = " ".join(line.strip() for line in m.group(2).split("\n")[1:] if line.strip() != ".")
            desc[m.group(1)] = long
    provides = {}
    for rec in apt_text(pk[0]).split("\n\n"):
        f = dict(re.findall(r"^([\w-]+): (.*)$", rec, re.M))
        if "Provides" not in f or "Package" not in f:
            continue
        d = desc.get(f.get("Description-md5", ""), "")
        if len(words(d)) < MIN_WORDS or "transitional" in d.lower() or "metapackage" in d.lower():
            continue
        src = f.get("Source", f["Package"]).split()[0]
        for v in f["Provides"].split(","):
            v = v.strip().split()[0]
            provides.setdefault(v, {}).setdefault(src, (f["Package"], clip(d)))
    out = []
    for v in sorted(provides):
        srcs = sorted(provides[v].items())
        if len(srcs) < 2 or len(srcs) > 40:  # > 40: library ABIs and the like, not alternatives
            continue
        cand = [(i, j) for i in range(len(srcs)) for j in range(i + 1, len(srcs))]
        rng.shuffle(cand)
        for i, j in cand[:per_group]:
            (_, (pa, da)), (_, (pb, db)) = srcs[i], srcs[j]
            if da != db:
                out.append((v, pa, da, pb, db))
    return out


def sentences(text):
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", text) if s]


def revise(text, syn, rng):
    s = sentences(text)
    if len(s) >= 4:
        del s[rng.randrange(1, len(s))]
    if len(s) >= 3:
        i = rng.randrange(len(s) - 1)
        s[i], s[i + 1] = s[i + 1], s[i]
    b, _, _ = rewrite(s, syn, 0.10, rng)
    return b


def split_of(group):
    return "held" if int(hashlib.sha256(group.encode()).hexdigest(), 16) % 4 == 0 else "cal"


# sources whose licence lets the tests ship their text: the PSF licence (python3-doc), Perl's
# Artistic licence / GPL (perl-doc), the public domain (the World English Bible, the KJV)
SHIPPABLE = {"perlfunc vs python3-doc", "python3-doc", "sword-text-web", "sword-text-kjv vs sword-text-web"}


# Independently written texts share few word trigrams: on this set the cross-manual pairs' 90th
# percentile is 0.076 and unrelated texts' 0.000, while reworded copies share 0.25-0.96. A pair of
# "hard negatives" above this share copies its text from one template (os.getenv beside
# os.getenvb, two plugins of one family with one boilerplate description): near-copies a curator
# would call versions, which the text channel already weighs, not two works on one subject.
TEMPLATED = 0.1


def shared_trigrams(a, b):
    """The share of the shorter text's distinct word trigrams (lowercase ASCII words) in the other."""
    def tri(t):
        w = re.findall(r"[a-z0-9]+", t.lower())
        return {tuple(w[i:i + 3]) for i in range(len(w) - 2)}
    ta, tb = tri(a), tri(b)
    return len(ta & tb) / max(1, min(len(ta), len(tb)))


def mark_templated(pairs, limit):
    """Hard negatives above `limit` shared trigrams become KIND-templated, not hard."""
    for p in pairs:
        if p["hard"] and shared_trigrams(p["a"], p["b"]) > limit:
            p["hard"] = False
            p["kind"] += "-templated"


def write_sample(out, pairs_path, report_path, hard=6, positives=3, old_beta=0.76):
    """The tests' sample: the hardest shippable hard negatives that the calibrated β (the report's
    `cal_beta`: the rule on the calibration split) rejects by 0.005 or more and `old_beta` would
    accept (the first `hard` of them by cosine), and the `positives` translation pairs of lowest
    cosine that still clear the calibrated β by 0.02."""
    pairs = [json.loads(line) for line in open(pairs_path)]
    report = json.load(open(report_path))
    scores, beta = report["scores"], report["calibrated"]["cal_beta"]
    if len(scores) != len(pairs):
        sys.exit(f"semantic_calibration: {report_path} scores {len(scores)} pairs, {pairs_path} has {len(pairs)}")
    for p, s in zip(pairs, scores):
        p["cosine"] = s["cosine"]
    negs = sorted((p for p in pairs if p["hard"] and p["source"] in SHIPPABLE and old_beta <= p["cosine"] < beta - 0.005),
                  key=lambda p: -p["cosine"])
    pos = sorted((p for p in pairs if p["kind"] == "translation" and p["cosine"] >= beta + 0.02), key=lambda p: p["cosine"])
    picked = negs[:hard] + pos[:positives]
    with open(out, "w") as f:
        for p in picked:
            rec = {k: p[k] for k in ("a", "b", "dup", "hard", "kind", "source")}
            rec["cosine_measured"] = round(p["cosine"], 3)
            f.write(json.dumps(rec) + "\n")
    print(f"semantic_calibration: {len(picked)} pairs -> {out} ({os.path.getsize(out)} bytes), calibrated β {beta}; cosines "
          + ", ".join(f"{p['cosine']:.3f}" for p in picked), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", help="write the tests' sample instead (needs --from and --report)")
    ap.add_argument("--from", dest="from_", help="the calibration set the report scored")
    ap.add_argument("--report", help="`fpdb eval --semantic`'s JSON report of --from")
    ap.add_argument("--out", default="data/semantic_calibration.jsonl")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--apt-lists", default="/tmp/fpdb-apt-lists", help="a lists directory holding bookworm's Packages and Translation-en")
    ap.add_argument("--alternatives", type=int, default=160, help="alternative-package pairs kept (at most)")
    ap.add_argument("--max-shared-trigrams", type=float, default=TEMPLATED,
                    help="a hard negative sharing more than this share of its word trigrams (of the shorter text) is "
                         "templated, not independently written: kind KIND-templated, hard false")
    a = ap.parse_args()
    if a.sample:
        if not (a.from_ and a.report):
            sys.exit("semantic_calibration: --sample needs --from PAIRS.jsonl and --report REPORT.json")
        return write_sample(a.sample, a.from_, a.report)
    rng = random.Random(a.seed)
    syn = load_wordnet()
    pairs = []

    def add(kind, dup, hard, group, ta, tb, src):
        pairs.append({"a": ta, "b": tb, "dup": dup, "hard": hard, "kind": kind, "group": group, "split": split_of(group), "source": src})

    # 1. one function, three manuals
    perl = perl_entries()
    py_files = {}
    singles = []  # (group, text, source) for positives and unrelated negatives
    for line in NAMES.strip().split("\n"):
        pname, pyref, manref = line.split()
        f, name = pyref.split(":")
        if f not in py_files:
            py_files[f] = python_entries(f)
        py = next((t for n, t in py_files[f] if n == name or n.endswith("." + name) and "." not in name), None)
        man = man_entry(manref) if manref != "-" else None
        texts = [(s, t) for s, t in (("perlfunc", perl.get(pname)), ("python3-doc", py), ("manpages-dev", man)) if t]
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                add("cross-manual", False, True, "fn:" + pname, texts[i][1], texts[j][1], f"{texts[i][0]} vs {texts[j][0]}")
        for s, t in texts:
            singles.append(("fn:" + pname, t, s))
    # 2. neighbouring entries of the Python library reference (grouped by subject there)
    for f in ("os", "socket", "math", "time", "stdtypes", "functions", "shutil", "os.path", "string", "itertools", "random", "pathlib"):
        ents = py_files.get(f) or python_entries(f)
        for k in range(0, len(ents) - 1, 2):
            (na, ta), (nb, tb) = ents[k], ents[k + 1]
            if na != nb:
                add("neighbour", False, True, f"py:{f}:{na}", ta, tb, "python3-doc")
            singles.append((f"py:{f}:{na}", ta, "python3-doc"))
    # 3. Bible: one passage in two translations (positive), two neighbouring passages (hard negative)
    for book, ch in CHAPTERS:
        web = dict(bible("engWEB2015eb", book, ch))
        kjv = dict(bible("engKJV2006eb", book, ch))
        ps = passages(sorted(web.items()))
        group = f"bible:{book} {ch}"
        for k, p in enumerate(ps):
            vs = [v for v, _ in p]
            w = " ".join(t for _, t in p)
            kj = " ".join(kjv.get(v, "") for v in vs).strip()
            if len(words(kj)) >= MIN_WORDS:
                add("translation", True, False, group, kj, w, "sword-text-kjv vs sword-text-web")
            if k + 1 < len(ps) and k % 2 == 0:
                add("neighbour", False, True, group, w, " ".join(t for _, t in ps[k + 1]), "sword-text-web")
    # 4. Debian descriptions of alternatives
    alts = debian_alternatives(a.apt_lists, rng)
    rng.shuffle(alts)
    for v, pa, da, pb, db in alts[: a.alternatives]:
        add("alternative", False, True, "deb:" + v, da, db, f"Debian description: {pa} vs {pb}")
        singles.append(("deb:" + v, da, "Debian description"))
    # 5. positives by rewording, and unrelated negatives, from the same texts
    seen = set()
    uniq = [x for x in singles if not (x[1] in seen or seen.add(x[1]))]
    rng.shuffle(uniq)
    for n, (group, t, src) in enumerate(uniq):
        kind = ("wordnet", "wordnet-heavy", "revision")[n % 3]
        s = sentences(t)
        if kind == "revision":
            b = revise(t, syn, rng)
        else:
            b, _, _ = rewrite(s, syn, 0.25 if kind == "wordnet" else 0.40, rng)
        add(kind, True, False, group, t, b, src)
        if n % 2 == 0:
            other = uniq[(n + 1 + rng.randrange(len(uniq) - 1)) % len(uniq)]
            if other[0] != group:
                add("unrelated", False, False, group, t, other[1], f"{src} vs {other[2]}")
    mark_templated(pairs, a.max_shared_trigrams)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    count = {}
    for p in pairs:
        count[p["kind"]] = count.get(p["kind"], 0) + 1
    held = sum(p["split"] == "held" for p in pairs)
    print(f"semantic_calibration: {len(pairs)} pairs ({held} held out) -> {a.out}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(count.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
