#!/usr/bin/env python3
"""targets.py - every performance target of bench/RESULTS.md's first
table, measured in one run: each case through `specl bench --csv` (the
emitted NAME.c through its public API, verified against float64 before
it is timed) and, where the target names a peer, PyTorch on the same
shape in the same process (bench/peers.py); then one Markdown table: the
figure, the target, and met or missed by how much.

Areas (--area, repeatable; default lora, vocab, layer and attention):
  lora       lora_forward and lora_backward in bf16 and f32 at 4096 rows,
             the seeds' shapes at 128 rows (PyTorch eager beside them)
  vocab      softmax over 151936 columns at 1, 8 and 64 rows (against a
             copy of its bytes); cross_entropy forward and backward at
             4096 rows of 32000, 128256 and 256000 (and F.cross_entropy)
  layer      the layer ops at 4096 x 4096 (rope: 32 heads of 128) against
             a copy of their bytes and PyTorch eager
  attention  attention and attention_backward on the design's shapes
             against SDPA's flash (FlashAttention-2) and cuDNN backends;
             the decode step. Its float64 checks take minutes: run it in
             a call of its own, or a few cases at a time (--match).
  ladder     a ladder tune of llama-q, f32 and bf16, over 1 to 4096 rows
             (specl tune --rows), then each row count, and the first and
             last rows of each rows range gen --db makes of them, benched
             with the defaults and with the tuned database in turn, the
             median of --ladder-rounds benches each: none slower, one
             row count faster (minutes: --ladder-budget seconds a row
             count)
  cpu        on a CPU (PoCL; no PyTorch: --no-peers): the layer ops
             against their naive kernels (each at most as fast as its
             copy of the bytes allows: the naive kernel's time in copies
             is shown), and the float attention at S 1024
  cpu-ladder a ladder tune of the seeds' 512 x 512 kernel over 1, 8 and
             32 rows on a CPU, the tuned kernel against CLBlast at 32

The copy is `specl bench`'s plain copy of the same bytes timed in the
same run (the CSV's copy_us); TFLOP/s are the bench's flops over its
time. A case that fails its check against float64, or does not run,
is reported as such and meets nothing.

usage: python3 bench/targets.py [--area AREA]... [--match TEXT]
                                [--specl PATH] [--reps N] [--no-peers]
                                [--out FILE]
(SPECL_COMMIT names the build where the tree has no git.) Exit status 1
when a case did not run or failed its check against float64; a missed
target is a result, not a failure.
"""
import argparse
import ast
import csv
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def spec(path):
    return os.path.join(ROOT, path)


HALF = "bench/specs/half.yaml"
LORA = "bench/specs/lora.yaml"
SMALL = "bench/specs/half_small.yaml"
TRAIN_HALF = "bench/specs/train_half.yaml"
TRAIN = "specs/llama2-7b-train.yaml"
SEEDS = "specs/seeds.yaml"
VOCAB = "bench/specs/vocab.yaml"
XENT = "bench/specs/xent.yaml"
LAYER = "bench/specs/layer.yaml"
ATTN = "bench/specs/attention.yaml"
ATTN_BWD = "bench/specs/attention_backward.yaml"


def case(area, label, path, kernel, rows, checks, sizes=(), peer=None,
         naive=False):
    """A target row: `specl bench PATH --kernel KERNEL --rows ROWS
    --size S...`, then each check of CHECKS on its figures:
      ("max_us", X)      at most X microseconds
      ("min_copy", F)    at least F of a copy of its bytes
      ("min_tflops", X)  at least X TFLOP/s
      ("peer", )         faster than PEER's time
      ("not_slower", L)  no slower than the row labelled L
      ("min_vs_naive", X) at least X times faster than its naive kernel
    PEER: (KIND, NAME), bench/peers.py's case NAME of PEER_KINDS[KIND]
    (at ROWS where its list leaves rows to the caller); NAIVE: time the
    naive kernel too."""
    return {"area": area, "label": label, "spec": path, "kernel": kernel,
            "rows": rows, "sizes": list(sizes), "checks": checks,
            "peer": peer, "naive": naive}


def lora_targets():
    return [
        case("lora", "lora_forward llama-q bf16", HALF, "bf16_q", 4096,
             [("max_us", 260)], peer=("lora_forward", "bf16_q")),
        case("lora", "lora_forward llama-up bf16", HALF, "bf16_up", 4096,
             [("max_us", 690)], peer=("lora_forward", "bf16_up")),
        case("lora", "lora_forward llama-down bf16", HALF, "bf16_down", 4096,
             [("max_us", 570)], peer=("lora_forward", "bf16_down")),
        case("lora", "lora_forward llama-q f32", LORA, "llama_q", 4096,
             [("max_us", 2800), ("peer",)], peer=("lora_forward", "f32_q")),
        case("lora", "lora_forward seeds 512 f32", SMALL, "s512_f32", 128,
             []),
        case("lora", "lora_forward seeds 512 bf16", SMALL, "s512_bf16", 128,
             [("max_us", 12), ("not_slower", "lora_forward seeds 512 f32")]),
        case("lora", "lora_forward seeds 2048 bf16", SMALL, "s2048_bf16",
             128, [("max_us", 19)]),
        case("lora", "lora_backward llama-q every gradient bf16", TRAIN_HALF,
             "bf16_q_grad", 4096, [("max_us", 330), ("peer",)],
             peer=("lora", "bf16_q_grad")),
        case("lora", "lora_backward llama-q adapter only bf16", TRAIN_HALF,
             "bf16_q_adapter", 4096, [("max_us", 70), ("peer",)],
             peer=("lora", "bf16_q_adapter")),
        case("lora", "lora_backward llama-q adapter only f32", TRAIN,
             "llama_q_proj_adapter", 4096, [("max_us", 90), ("peer",)],
             peer=("lora", "llama_q_proj_adapter")),
        case("lora", "lora_backward llama-up every gradient bf16",
             TRAIN_HALF, "bf16_up_grad", 4096, [("max_us", 640), ("peer",)],
             peer=("lora", "bf16_up_grad")),
        case("lora", "lora_backward llama-up every gradient f32", TRAIN,
             "llama_up_proj_grad", 4096, [("max_us", 7500), ("peer",)],
             peer=("lora", "llama_up_proj_grad")),
        case("lora", "lora_backward seeds 512 every gradient bf16",
             TRAIN_HALF, "bf16_seed_grad", 128, [("max_us", 20)]),
        case("lora", "lora_backward seeds 512 every gradient f32", SEEDS,
             "seed_lora_backward_512", 128, [("max_us", 25)]),
    ]


def vocab_targets():
    t = []
    for rows in (1, 8, 64):
        for kernel, dtype in (("vocab", "f32"), ("bf16_vocab", "bf16")):
            t.append(case("vocab", f"softmax 151936 {dtype} x {rows} rows",
                          VOCAB, kernel, rows, [("min_copy", 0.80)]))
    for kernel, vocab in (("bf16_xent_llama2", 32000),
                          ("bf16_xent_llama3", 128256),
                          ("bf16_xent_256k", 256000)):
        row = case("vocab", f"cross_entropy 4096 x {vocab} bf16", XENT,
                   kernel, 4096, [("min_copy", 0.85), ("peer",)],
                   peer=("xent", kernel))
        # the memory a step adds beside the logits: dlogits (bf16), or
        # nothing where they are written over the logits
        row["dlogits_mib"] = 4096 * vocab * 2 / 2**20
        t.append(row)
    return t


# bench/specs/layer.yaml's kernels, each named as its peers.py case.
LAYER_KERNELS = [
    "swiglu_4096", "swiglu_11008", "bf16_swiglu_4096", "bf16_swiglu_11008",
    "bf16_gelu_tanh_11008", "swiglu_back_4096", "bf16_swiglu_back_4096",
    "bf16_swiglu_back_11008", "add_rmsnorm_4096", "bf16_add_rmsnorm_4096",
    "rmsnorm_back_4096", "bf16_rmsnorm_back_4096", "layernorm_back_4096",
    "bf16_layernorm_back_4096", "rope_4096", "bf16_rope_llama3_4096",
]


def layer_targets():
    return [case("layer", kernel, LAYER, kernel, 4096,
                 [("min_copy", 0.90), ("peer",)],
                 peer=("rope" if "rope" in kernel else "layer", kernel))
            for kernel in LAYER_KERNELS]


ATTN_SHAPES = [
    # label, forward kernel, backward kernel, batch, seq (the design's
    # table: batch x seq = 16k tokens, hidden 2048), peers.py's case, the
    # forward's and the step's TFLOP/s targets (None: flash's alone); the
    # design's main row first, the longest float64 checks last
    ("S=4096 d=128 causal", "bf16_attn_16h", "bf16_attn_bwd_16h", 4, 4096,
     "bf16_attn_16h S=4096", 420, 300),
    ("S=4096 d=128 full", "bf16_attn_16h_full", "bf16_attn_bwd_16h_full", 4,
     4096, "bf16_attn_16h S=4096 full", None, None),
    ("S=4096 d=64 causal", "bf16_attn_32h_d64", "bf16_attn_bwd_32h_d64", 4,
     4096, "bf16_attn_32h d64 S=4096", None, None),
    ("S=1024 d=128 causal", "bf16_attn_16h", "bf16_attn_bwd_16h", 16, 1024,
     "bf16_attn_16h S=1024", None, None),
    ("S=16384 d=128 causal", "bf16_attn_16h", "bf16_attn_bwd_16h", 1, 16384,
     "bf16_attn_16h S=16384", None, None),
]


def attention_targets():
    t = [case("attention", "attention decode B=8 32/8 heads ctx 4096", ATTN,
              "bf16_attn_llama", 8, [("max_us", 50)],
              ["seq_q=1", "seq_kv=4096"],
              ("attention", "bf16_attn_llama decode"))]
    for label, fwd, bwd, batch, seq, name, fwd_tf, step_tf in ATTN_SHAPES:
        sizes = [f"seq_q={seq}", f"seq_kv={seq}"]
        peer = ("attention", name)
        checks = [("min_tflops", fwd_tf)] if fwd_tf else []
        t.append(case("attention", f"attention {label} forward", ATTN, fwd,
                      batch, checks + [("flash_fwd",)], sizes, peer))
        checks = [("min_step_tflops", step_tf)] if step_tf else []
        row = case("attention", f"attention {label} forward + backward",
                   ATTN_BWD, bwd, batch, checks + [("flash_step",)], sizes,
                   peer)
        row["forward"] = f"attention {label} forward"
        t.append(row)
    return t


def cpu_targets():
    """The targets on CPUs (PoCL): the layer ops at 256 rows of 4096 at
    least 3x their naive kernels, the float attention at S 1024, 8 heads
    of 64, at least 5x."""
    t = []
    for op in ("rope", "swiglu", "swiglu_back", "add_rmsnorm",
               "rmsnorm_back", "layernorm_back"):
        for dtype in ("f32", "f16", "bf16"):
            kernel = f"{op}_{dtype}"
            t.append(case("cpu", kernel, "bench/specs/layer_dtypes.yaml",
                          kernel, 256, [("min_vs_naive", 3)], naive=True))
    for kernel, what in (("attn_8h_d64", "causal"),
                         ("attn_8h_d64_full", "no mask")):
        t.append(case("cpu", f"attention f32 S=1024 d=64 {what}", ATTN,
                      kernel, 1, [("min_vs_naive", 5)],
                      ["seq_q=1024", "seq_kv=1024"], naive=True))
    return t


def ladder(area, label, path, kernel, rows, clblast_rows=None):
    """A ladder tune: `specl tune PATH --kernel KERNEL --rows ROWS` into
    a database of its own, then at each row count, and at the first and
    last rows of each rows range `gen --db` makes (where a config runs
    rows it was not tuned at), `specl bench` with the defaults and with
    the database (as `gen --db` emits it): none slower than the defaults
    (beyond LADDER_SPREAD; one that runs the defaults' code, its row
    counts' tunes having kept them, is not), at least one row count
    faster (by more than it); at CLBLAST_ROWS the tuned kernel faster
    than CLBlast's SGEMM path."""
    return {"area": area, "label": label, "spec": path, "kernel": kernel,
            "ladder": list(rows), "clblast_rows": clblast_rows,
            "sizes": [], "checks": [], "peer": None, "naive": False}


# Back-to-back medians of one build move by up to this share between
# runs (bench/RESULTS.md, "A ladder tune on the H200"): a difference
# within it is neither slower nor faster.
LADDER_SPREAD = 0.03


def ladder_targets():
    rows = (1, 8, 32, 128, 256, 512, 4096)
    return [ladder("ladder", "ladder tune llama-q f32", "specs/llama2-7b.yaml",
                   "llama_q_proj", rows),
            ladder("ladder", "ladder tune llama-q bf16", HALF, "bf16_q",
                   rows)]


def cpu_ladder_targets():
    return [ladder("cpu-ladder", "ladder tune seeds 512 f32", SEEDS,
                   "seed_lora_512", (1, 8, 32), clblast_rows=32)]


AREAS = {"lora": lora_targets, "vocab": vocab_targets,
         "layer": layer_targets, "attention": attention_targets,
         "ladder": ladder_targets, "cpu": cpu_targets,
         "cpu-ladder": cpu_ladder_targets}
GPU_AREAS = ("lora", "vocab", "layer", "attention")


def run_ladder(a, t):
    """Tunes T over its row counts, then benches each with and without
    the database; the table's rows."""
    db = os.path.join(a.workdir, f"ladder-{t['kernel']}.yaml")
    if os.path.exists(db):
        os.remove(db)
    rows = ",".join(str(r) for r in t["ladder"])
    p = subprocess.run([a.specl, "tune", spec(t["spec"]), "--kernel",
                        t["kernel"], "--rows", rows, "--budget",
                        str(a.ladder_budget), "--db", db],
                       capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        return None, [f"| {t['area']} | {t['label']} | specl tune "
                      f"{failure(p)} | not run |"]
    lines, faster, device = [], 0, None
    kept = kept_defaults(db)
    ranges = rows_ranges(a, t, db)
    ends = {end: same for end, same in range_ends(ranges, kept).items()
            if end not in t["ladder"]}
    for r in sorted(set(t["ladder"]) | set(ends)):
        base, tuned = ladder_rounds(a, t, r, db)
        device = device or base.get("device")
        label = (f"{t['label']} at {r} rows" +
                 (" (a rows range's end)" if r in ends else ""))
        if "error" in base or "error" in tuned:
            err = base.get("error") or tuned.get("error")
            lines.append(f"| {t['area']} | {label} | {err} | not run |")
            continue
        ratio = tuned["us"] / base["us"]
        faster += r in t["ladder"] and r not in kept and \
            ratio < 1 - LADDER_SPREAD
        shown = (f"defaults {base['us']:.1f} µs, tuned {tuned['us']:.1f} "
                 f"µs ({base['us'] / tuned['us']:.2f}x; the median of "
                 f"{a.ladder_rounds} alternating benches each)")
        if r in kept or ends.get(r):
            verdicts = ["no slower than the defaults: met (the tune kept "
                        "the defaults: the same code both ways, so the "
                        "difference is the device's spread)"]
        else:
            verdicts = ["no slower than the defaults: " +
                        ("met" if ratio <= 1 + LADDER_SPREAD else
                         f"missed by {ratio:.2f}x")]
        if r == t["clblast_rows"]:
            cl = tuned.get("clblast_us")
            if cl is None:
                verdicts.append("CLBlast not timed")
            else:
                shown += f"; CLBlast {cl:.1f} µs"
                verdicts.append("faster than CLBlast: " +
                                ("met" if tuned["us"] < cl else
                                 f"missed by {tuned['us'] / cl:.2f}x"))
        lines.append(f"| {t['area']} | {label} | {shown} | "
                     f"{'; '.join(verdicts)} |")
    lines.append(f"| {t['area']} | {t['label']}: a row count faster | "
                 f"{faster} of {len(t['ladder'])} faster by more than "
                 f"{100 * LADDER_SPREAD:.0f}% | at least one: "
                 f"{'met' if faster else 'missed'} |")
    return device, lines


RANGE_NOTE = re.compile(r"^specl: note: (\S+): .*: rows (\d+) (?:to (\d+)|"
                        r"and more): variant \d+, tuned at rows ([\d, ]+)$",
                        re.M)


def parse_ranges(kernel, notes):
    """The rows ranges `specl gen --db` notes for KERNEL in NOTES: (first,
    last or None for every row above, the row counts tuned for it)."""
    return [(int(m[2]), int(m[3]) if m[3] else None,
             [int(r) for r in m[4].split(",")])
            for m in RANGE_NOTE.finditer(notes) if m[1] == kernel]


def rows_ranges(a, t, db):
    """T's rows ranges as `specl gen --db DB` makes them (parse_ranges)."""
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([a.specl, "gen", spec(t["spec"]), "--db", db,
                            "-o", out], capture_output=True, text=True,
                           cwd=ROOT)
    return parse_ranges(t["kernel"], p.stderr)


def range_ends(ranges, kept):
    """The first and last rows of each range where another begins or
    ends, each with whether it runs the defaults' code (every row count
    tuned for its range kept the defaults: KEPT)."""
    ends = {}
    for first, last, tuned in ranges:
        same = all(r in kept for r in tuned)
        if first > 1:
            ends[first] = same
        if last is not None:
            ends[last] = same
    return ends


def kept_defaults(db):
    """The row counts of DB's entries whose best is the defaults: the
    tune re-timed them back to back and kept them (the best's time is
    the defaults' own median, `time_us` equal to `default_us`)."""
    kept = set()
    try:
        with open(db, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return kept
    for entry in text.split("\n- ")[1:]:
        field = dict(re.findall(r"^ *(rows|time_us|default_us|retimed_reps):"
                                r" *([0-9.]+)$", entry, re.M))
        if (int(field.get("retimed_reps", 0)) > 0 and "rows" in field and
                field.get("time_us") == field.get("default_us")):
            kept.add(int(field["rows"]))
    return kept


def ladder_rounds(a, t, rows, db):
    """T at ROWS benched with the defaults and with DB in turn,
    --ladder-rounds times each (each bench its own process, whose times
    move between processes more than the gains looked for on a busy
    CPU): each side's bench whose time is the median of its rounds, or
    the first error."""
    sides = ([], [])
    for _ in range(a.ladder_rounds):
        for side, extra in zip(sides, ([], ["--db", db])):
            got = bench_csv(a.specl, t["spec"], t["kernel"], rows, a.reps,
                            extra=extra)
            if "error" in got:
                return got, got
            side.append(got)
    return tuple(sorted(side, key=lambda b: b["us"])[len(side) // 2]
                 for side in sides)


def failure(p):
    """The line of a failed run's stderr that says why."""
    lines = p.stderr.strip().splitlines() or ["no output"]
    said = [line for line in lines if "error" in line] or lines[-1:]
    return f"exit {p.returncode}: {said[0][:160]}"


def bench_csv(specl, path, kernel, rows, reps, sizes=(), naive=False,
              extra=()):
    """One `specl bench --csv`: specl's time (and its copy's, flops,
    device, path), the naive kernel's and CLBlast's where they ran; or
    an error."""
    cmd = [specl, "bench", spec(path), "--kernel", kernel, "--rows",
           str(rows), "--csv", "--reps", str(reps)]
    if not naive:
        cmd.append("--no-naive")
    for size in sizes:
        cmd += ["--size", size]
    p = subprocess.run(cmd + list(extra), capture_output=True, text=True,
                       cwd=ROOT)
    ran = {r["variant"]: r for r in csv.DictReader(io.StringIO(p.stdout))
           if r["ok"] in ("1", "true") and r["us"]}
    every = {r["variant"]: r for r in csv.DictReader(io.StringIO(p.stdout))}
    r = every.get("specl")
    if p.returncode != 0 or r is None:
        return {"error": f"specl bench {failure(p)}"}
    if "specl" not in ran:
        return {"error": f"not verified ({r['error']} against float64)"}

    def num(row, key):
        return float(row[key]) if row is not None and row.get(key) else None

    return {"us": num(r, "us"), "copy_us": num(r, "copy_us"),
            "gflops": num(r, "gflops"), "device": r["device"],
            "path": r.get("path", ""),
            "naive_us": num(ran.get("naive"), "us"),
            "clblast_us": num(ran.get("clblast"), "us")}


def run_specl(specl, t, reps):
    return bench_csv(specl, t["spec"], t["kernel"], t["rows"], reps,
                     t["sizes"], t["naive"])


# bench/peers.py's lists of cases, by the kind a target's peer names:
# (its list, the function that runs one, whether the rows are the
# caller's). A case is (name, ...) as the list holds it.
PEER_KINDS = {
    "lora": ("LORA_CASES", "lora_case", False),
    "lora_forward": ("LORA_FORWARD_CASES", "lora_forward_case", False),
    "xent": ("XENT_CASES", "xent_case", False),
    "layer": ("CASES", "case", True),
    "rope": ("ROPE_CASES", "rope_case", True),
    "attention": ("ATTN_CASES", "attn_case", False),
}


class Peers:
    """bench/peers.py's cases, run once each, their figures kept."""

    def __init__(self, reps):
        sys.path.insert(0, HERE)
        import peers  # noqa: E402  (torch only where peers are wanted)
        import torch
        self.peers, self.reps = peers, reps
        self.done = {}
        self.device = f"{torch.cuda.get_device_name()}, torch " \
                      f"{torch.__version__}"

    def run(self, peer, rows):
        key = (peer, rows)
        if key not in self.done:
            kind, name = peer
            cases, function, rows_apart = PEER_KINDS[kind]
            c = next(c for c in getattr(self.peers, cases) if c[0] == name)
            args = c + ((rows,) if rows_apart else ())
            self.done[key] = getattr(self.peers, function)(*args, self.reps)
        return self.done[key]


def peer_names():
    """The case names of each of peers.py's lists, read from its text
    (importing it needs torch and a GPU)."""
    tree = ast.parse(open(os.path.join(HERE, "peers.py")).read())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            names[node.targets[0].id] = {
                e.elts[0].value for e in node.value.elts
                if isinstance(e, ast.Tuple) and
                isinstance(e.elts[0], ast.Constant)}
    return names


def judge(t, fig, peer, rows_by_label):
    """The figures shown and, per check, 'met' or how far it missed."""
    if "error" in fig:
        return fig["error"], ["not run"]
    us = fig["us"]
    shown = [f"{us:.1f} µs"]
    verdicts = []

    def verdict(ok, factor, what):
        digits = 3 if factor < 1.01 else 2
        verdicts.append(f"{what}: met" if ok else
                        f"{what}: missed by {factor:.{digits}f}x")

    if fig.get("copy_us"):
        shown.append(f"{100 * fig['copy_us'] / us:.1f}% of a copy "
                     f"({fig['copy_us']:.1f} µs)")
    if fig.get("naive_us"):
        shown.append(f"naive {fig['naive_us']:.1f} µs" +
                     (f", {fig['naive_us'] / fig['copy_us']:.2f} copies"
                      if fig.get("copy_us") else ""))
    if fig.get("gflops") and t["area"] == "attention" and "forward" not in t:
        shown.append(f"{fig['gflops'] / 1e3:.1f} TFLOP/s")
    step_us = step_tflops = None
    if "forward" in t:
        fwd = rows_by_label.get(t["forward"])
        if fwd and "error" not in fwd:
            step_us = fwd["us"] + us
            step_tflops = 3.5 * fwd["gflops"] * fwd["us"] / step_us / 1e3
            shown = [f"{step_us:.1f} µs (backward {us:.1f})",
                     f"{step_tflops:.1f} TFLOP/s"]
    def at_most(value, goal, what, missing):
        if value is None:
            verdicts.append(missing)
        else:
            verdict(value <= goal, value / goal, what)

    def at_least(value, goal, what, missing):
        if value is None:
            verdicts.append(missing)
        else:
            verdict(value >= goal, goal / value, what)

    tflops = fig["gflops"] / 1e3 if fig.get("gflops") else None
    copy = fig["copy_us"] / us if fig.get("copy_us") else None
    naive = fig["naive_us"] / us if fig.get("naive_us") else None
    flash = (peer or {}).get("flash")
    for c in t["checks"]:
        kind = c[0]
        if kind == "max_us":
            at_most(us, c[1], f"≤ {c[1]} µs", None)
        elif kind == "min_copy":
            at_least(copy, c[1], f"≥ {100 * c[1]:.0f}% of a copy",
                     "no copy timed")
        elif kind == "min_tflops":
            at_least(tflops, c[1], f"≥ {c[1]} TFLOP/s", "no flops counted")
        elif kind == "min_step_tflops":
            at_least(step_tflops, c[1], f"≥ {c[1]} TFLOP/s",
                     "no forward timed")
        elif kind == "min_vs_naive":
            at_least(naive, c[1], f"≥ {c[1]}x the naive kernel "
                     f"({naive or 0:.2f}x)", "naive kernel not timed")
        elif kind == "not_slower":
            ref = rows_by_label.get(c[1])
            if not ref or "error" in ref:
                verdicts.append(f"{c[1]} not timed")
            else:
                at_most(us, ref["us"],
                        f"no slower than {c[1]} ({ref['us']:.1f} µs)", None)
        elif kind == "peer":
            if peer is None:
                verdicts.append("no peer run")
            else:
                verdict(us < peer["us"], us / peer["us"],
                        f"faster than PyTorch ({peer['us']:.1f} µs)")
        elif kind in ("flash_fwd", "flash_step"):
            key = "tflops" if kind == "flash_fwd" else "step_tflops"
            mine = tflops if kind == "flash_fwd" else step_tflops
            if flash is None or mine is None:
                verdicts.append("no flash or no forward timed")
            else:
                at_least(mine, flash[key],
                         f"≥ flash ({flash[key]:.1f} TFLOP/s)", None)
    if peer is not None and "us" in peer and not any(
            c[0] == "peer" for c in t["checks"]):
        shown.append(f"PyTorch {peer['us']:.1f} µs")
    if peer is not None and "peak_mib" in peer:
        shown.append(f"the step's memory beside the logits: PyTorch "
                     f"{peer['peak_mib']:.0f} MiB, specl "
                     f"{t['dlogits_mib']:.0f} (dlogits; 0 in place)")
    if peer is not None and "decode" in t["label"]:
        shown += [f"SDPA {b} {peer[b]['us']:.1f} µs" for b in peer]
    elif peer is not None and "cudnn" in peer:
        key = "step_tflops" if "forward" in t else "tflops"
        shown.append(f"cuDNN {peer['cudnn'][key]:.1f} TFLOP/s")
    return "; ".join(shown), verdicts or ["(reference row)"]


def self_test():
    """judge() on fixed figures (those of an H200 run), for the checks a
    CPU cannot run: peers, TFLOP/s, attention's forward + backward."""
    sdpa = {"flash": {"us": 932.0, "step_us": 3635.8, "tflops": 294.9,
                      "step_tflops": 264.6},
            "cudnn": {"us": 514.3, "step_us": 2163.4, "tflops": 534.4,
                      "step_tflops": 444.7}}
    att = attention_targets()
    fwd, step = att[1], att[2]
    rows = {fwd["label"]: {"us": 645.3, "gflops": 426100.0}}
    xent = next(t for t in vocab_targets() if "128256" in t["label"])
    lora = next(t for t in lora_targets() if "adapter only f32" in t["label"])
    seeds = next(t for t in lora_targets() if "seeds 512 bf16" in t["label"])
    rows["lora_forward seeds 512 f32"] = {"us": 12.4}
    cpu = next(t for t in cpu_targets() if t["label"] == "swiglu_f32")
    cases = [
        (fwd, rows[fwd["label"]], sdpa,
         ["≥ 420 TFLOP/s: met", "≥ flash (294.9 TFLOP/s): met"]),
        (step, {"us": 2126.5, "gflops": 1.0}, sdpa,
         ["≥ 300 TFLOP/s: met", "≥ flash (264.6 TFLOP/s): met"]),
        (step, {"us": 9000.0, "gflops": 1.0}, sdpa,
         ["≥ 300 TFLOP/s: missed by 3.01x",
          "≥ flash (264.6 TFLOP/s): missed by 2.65x"]),
        (xent, {"us": 670.1, "copy_us": 494.0}, {"us": 2381.2,
                                                  "peak_mib": 3006.0},
         ["≥ 85% of a copy: missed by 1.15x",
          "faster than PyTorch (2381.2 µs): met"]),
        (lora, {"us": 117.5}, {"us": 203.1},
         ["≤ 90 µs: missed by 1.31x",
          "faster than PyTorch (203.1 µs): met"]),
        (lora, {"error": "not verified"}, None, ["not run"]),
        (seeds, {"us": 11.3, "copy_us": 6.3}, None,
         ["≤ 12 µs: met",
          "no slower than lora_forward seeds 512 f32 (12.4 µs): met"]),
        (seeds, {"us": 12.5}, None,
         ["≤ 12 µs: missed by 1.04x",
          "no slower than lora_forward seeds 512 f32 (12.4 µs): missed "
          "by 1.008x"]),
        (cpu, {"us": 336.3, "copy_us": 331.9, "naive_us": 870.6}, None,
         ["≥ 3x the naive kernel (2.59x): missed by 1.16x"]),
        (cpu, {"us": 336.3}, None, ["naive kernel not timed"]),
    ]
    names = peer_names()
    for t in [t for area in AREAS.values() for t in area()]:
        if t["peer"] is not None and t["peer"][1] not in \
                names[PEER_KINDS[t["peer"][0]][0]]:
            print(f"targets.py self-test: {t['label']}: no case "
                  f"'{t['peer'][1]}' in peers.py", file=sys.stderr)
            return 1
    for t, fig, peer, want in cases:
        got = judge(t, fig, peer, rows)[1]
        if got != want:
            print(f"targets.py self-test: {t['label']}: {got}, want {want}",
                  file=sys.stderr)
            return 1
    if not kept_defaults_test() or not ranges_test():
        return 1
    print("targets.py self-test: ok")
    return 0


def ranges_test():
    """parse_ranges() and range_ends() on notes of an H200 ladder: a
    range of the defaults between tuned row counts, and the note of a
    measured crossover, are not tuned configs' ranges."""
    notes = ("specl: note: bf16_q: NVIDIA H200: rows 1 to 64: variant 3, "
             "tuned at rows 1, 8, 32\n"
             "specl: note: bf16_q: NVIDIA H200: rows 65 to 181: variant 4, "
             "tuned at rows 128\n"
             "specl: note: bf16_q: NVIDIA H200: rows 128 to 1024: measured: "
             "the first best fastest up to 181 rows, the second from 215, "
             "the defaults between\n"
             "specl: note: bf16_q: NVIDIA H200: rows 182 to 214: variant 3, "
             "the defaults, between tuned row counts\n"
             "specl: note: other: NVIDIA H200: rows 1 to 9: variant 2, "
             "tuned at rows 1\n"
             "specl: note: bf16_q: NVIDIA H200: rows 215 and more: variant "
             "3, tuned at rows 1024, 4096\n")
    got = parse_ranges("bf16_q", notes)
    want = [(1, 64, [1, 8, 32]), (65, 181, [128]), (215, None, [1024, 4096])]
    ends = range_ends(got, {1, 8, 32, 1024, 4096})
    want_ends = {64: True, 65: False, 181: False, 215: True}
    if got != want or ends != want_ends:
        print(f"targets.py self-test: ranges {got}, ends {ends}; want "
              f"{want}, {want_ends}", file=sys.stderr)
        return False
    return True


def kept_defaults_test():
    """kept_defaults() on a database of three entries: one whose best is
    the defaults (kept), one faster than them, one never re-timed."""
    entry = ("- device: \"d\"\n  rows: {}\n  best: \"m=32\"\n"
             "  time_us: {}\n  default_us: {}\n  retimed_reps: {}\n")
    text = ("entries:\n" + entry.format(8, "550.21", "550.21", 20) +
            entry.format(1, "183.51", "216.26", 20) +
            entry.format(32, "451.82", "451.82", 0))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "db.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        got = kept_defaults(path)
    if got != {8} or kept_defaults(os.path.join(ROOT, "no-such.yaml")):
        print(f"targets.py self-test: kept_defaults: {sorted(got)}, want "
              "[8]", file=sys.stderr)
        return False
    return True


def reps_arg(text):
    n = int(text)
    if not 1 <= n <= 1000:
        raise argparse.ArgumentTypeError(f"1 to 1000 (got {n})")
    return n


def rounds_arg(text):
    n = int(text)
    if not 1 <= n <= 9 or n % 2 == 0:
        raise argparse.ArgumentTypeError(f"odd, 1 to 9 (got {n})")
    return n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--area", action="append", choices=sorted(AREAS),
                   help="the targets of one area (repeatable; default "
                   "lora, vocab, layer and attention)")
    p.add_argument("--match", default="",
                   help="only the cases whose label holds TEXT")
    p.add_argument("--specl", default=os.path.join(ROOT, "build", "specl"),
                   help="the specl binary (default build/specl)")
    p.add_argument("--reps", type=reps_arg, default=50, metavar="N",
                   help="timed runs a case, specl's and PyTorch's (1-1000)")
    p.add_argument("--no-peers", action="store_true",
                   help="leave PyTorch out (its checks say so)")
    p.add_argument("--out", help="also write the table to FILE")
    p.add_argument("--ladder-budget", type=int, default=25,
                   help="ladder areas: seconds of search a row count")
    p.add_argument("--ladder-rounds", type=rounds_arg, default=3,
                   metavar="N",
                   help="ladder areas: benches of each side a row count, "
                   "alternating (1-9; odd, so that one is the median)")
    p.add_argument("--workdir", default=os.path.join(ROOT, "build"),
                   help="ladder areas: where their databases go")
    p.add_argument("--self-test", action="store_true",
                   help="check the verdicts on fixed figures, run nothing")
    p.add_argument("--list", action="store_true",
                   help="print the chosen cases and their targets, run "
                   "nothing")
    a = p.parse_args()
    if a.self_test:
        return self_test()
    # PoCL's worker threads pinned to the cores, as bench/run.sh cpu
    # does: unpinned, one kernel's time moved by 2x from run to run.
    os.environ.setdefault("POCL_AFFINITY", "1")
    targets = [t for area in (a.area or GPU_AREAS)
               for t in AREAS[area]() if a.match in t["label"]]
    if not targets:
        p.error(f"no target's label holds '{a.match}'")
    if a.list:
        for t in targets:
            where = (f"{t['spec']} {t['kernel']} rows "
                     f"{','.join(map(str, t['ladder']))} (ladder tune)"
                     if "ladder" in t else
                     f"{t['spec']} {t['kernel']} rows {t['rows']}" +
                     "".join(f" --size {size}" for size in t["sizes"]))
            checks = ", ".join(" ".join(map(str, c)) for c in t["checks"])
            print(f"{t['area']}: {t['label']}: {where}"
                  f"{': ' + checks if checks else ''}")
        return 0
    if not os.access(a.specl, os.X_OK):
        p.error(f"no specl binary at {a.specl} (make build/specl, or "
                "--specl PATH)")
    wanted = not a.no_peers and any(t["peer"] for t in targets)
    peers = Peers(a.reps) if wanted else None
    commit = os.environ.get("SPECL_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True,
        text=True, cwd=ROOT).stdout.strip() or "unknown"
    head = ["| area | case | specl (and its peers) | target |",
            "|---|---|---|---|"]
    print("\n".join(head), flush=True)
    lines = []
    rows_by_label = {}
    device = None
    for t in targets:
        print(f"targets: {t['label']} ...", file=sys.stderr, flush=True)
        if "ladder" in t:
            found, rows = run_ladder(a, t)
            device = device or found
            lines += rows
            print("\n".join(rows), flush=True)
            continue
        fig = run_specl(a.specl, t, a.reps)
        rows_by_label[t["label"]] = fig
        device = device or fig.get("device")
        peer = peers.run(t["peer"], t.get("rows")) if peers and t["peer"] \
            else None
        shown, verdicts = judge(t, fig, peer, rows_by_label)
        lines.append(f"| {t['area']} | {t['label']} | {shown} | "
                     f"{'; '.join(verdicts)} |")
        print(lines[-1], flush=True)
    where = (f"device: {device or 'none ran'} (OpenCL); "
             f"{peers.device if peers else 'no PyTorch'}; specl {commit}; "
             f"`{shlex.join(['python3', 'bench/targets.py'] + sys.argv[1:])}`")
    print("\n" + where)
    if a.out:
        with open(a.out, "w") as f:
            f.write(where + "\n\n" + "\n".join(head + lines) + "\n")
    # A target missed is a result; a case that did not run is a failure.
    return 1 if any(line.endswith("| not run |") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
