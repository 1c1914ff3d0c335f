#!/usr/bin/env python3
"""targets.py - every performance target of bench/RESULTS.md's first
table, measured in one run: each case through `specl bench --csv` (the
emitted NAME.c through its public API, verified against float64 before
it is timed) and, where the target names a peer, PyTorch on the same
shape in the same process (bench/peers.py); then one Markdown table: the
figure, the target, and met or missed by how much.

Areas (--area, repeatable; default all):
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

The copy is `specl bench`'s plain copy of the same bytes timed in the
same run (the CSV's copy_us); TFLOP/s are the bench's flops over its
time. A case that fails its check against float64, or does not run,
is reported as such and meets nothing.

usage: python3 bench/targets.py [--area AREA]... [--match TEXT]
                                [--specl PATH] [--reps N] [--no-peers]
                                [--out FILE]
(SPECL_COMMIT names the build where the tree has no git.)
"""
import argparse
import csv
import io
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def spec(path):
    return os.path.join(ROOT, path)


HALF = "bench/specs/half.yaml"
SMALL = "bench/specs/half_small.yaml"
TRAIN_HALF = "bench/specs/train_half.yaml"
TRAIN = "specs/llama2-7b-train.yaml"
SEEDS = "specs/seeds.yaml"
VOCAB = "bench/specs/vocab.yaml"
XENT = "bench/specs/xent.yaml"
LAYER = "bench/specs/layer.yaml"
ATTN = "bench/specs/attention.yaml"
ATTN_BWD = "bench/specs/attention_backward.yaml"


def case(area, label, path, kernel, rows, checks, sizes=(), peer=None):
    """A target row: `specl bench PATH --kernel KERNEL --rows ROWS
    --size S...`, then each check of CHECKS on its figures:
      ("max_us", X)      at most X microseconds
      ("min_copy", F)    at least F of a copy of its bytes
      ("min_tflops", X)  at least X TFLOP/s
      ("peer", )         faster than PEER's time
      ("not_slower", L)  no slower than the row labelled L
    PEER: (peers.py function name, its arguments but reps)."""
    return {"area": area, "label": label, "spec": path, "kernel": kernel,
            "rows": rows, "sizes": list(sizes), "checks": checks,
            "peer": peer}


def lora_targets():
    bf, f32 = "torch.bfloat16", "torch.float32"
    t = [
        case("lora", "lora_forward llama-q bf16", HALF, "bf16_q", 4096,
             [("max_us", 260)], peer=("lora_forward_case",
                                     ("bf16_q", 4096, 4096, 16, 4096))),
        case("lora", "lora_forward llama-up bf16", HALF, "bf16_up", 4096,
             [("max_us", 690)], peer=("lora_forward_case",
                                     ("bf16_up", 4096, 11008, 16, 4096))),
        case("lora", "lora_forward llama-down bf16", HALF, "bf16_down", 4096,
             [("max_us", 570)], peer=("lora_forward_case",
                                     ("bf16_down", 11008, 4096, 16, 4096))),
        case("lora", "lora_forward seeds 512 f32", SMALL, "s512_f32", 128,
             []),
        case("lora", "lora_forward seeds 512 bf16", SMALL, "s512_bf16", 128,
             [("max_us", 12), ("not_slower", "lora_forward seeds 512 f32")]),
        case("lora", "lora_forward seeds 2048 bf16", SMALL, "s2048_bf16",
             128, [("max_us", 19)]),
        case("lora", "lora_backward llama-q every gradient bf16", TRAIN_HALF,
             "bf16_q_grad", 4096, [("max_us", 330), ("peer",)],
             peer=("lora_case", ("bf16_q_grad", bf, 4096, 4096, 16, True,
                                 4096))),
        case("lora", "lora_backward llama-q adapter only bf16", TRAIN_HALF,
             "bf16_q_adapter", 4096, [("max_us", 70), ("peer",)],
             peer=("lora_case", ("bf16_q_adapter", bf, 4096, 4096, 16,
                                 False, 4096))),
        case("lora", "lora_backward llama-q adapter only f32", TRAIN,
             "llama_q_proj_adapter", 4096, [("max_us", 90), ("peer",)],
             peer=("lora_case", ("llama_q_proj_adapter", f32, 4096, 4096,
                                 16, False, 4096))),
        case("lora", "lora_backward llama-up every gradient bf16",
             TRAIN_HALF, "bf16_up_grad", 4096, [("max_us", 640), ("peer",)],
             peer=("lora_case", ("bf16_up_grad", bf, 4096, 11008, 16, True,
                                 4096))),
        case("lora", "lora_backward llama-up every gradient f32", TRAIN,
             "llama_up_proj_grad", 4096, [("max_us", 7500), ("peer",)],
             peer=("lora_case", ("llama_up_proj_grad", f32, 4096, 11008, 16,
                                 True, 4096))),
        case("lora", "lora_backward seeds 512 every gradient bf16",
             TRAIN_HALF, "bf16_seed_grad", 128, [("max_us", 20)]),
        case("lora", "lora_backward seeds 512 every gradient f32", SEEDS,
             "seed_lora_backward_512", 128, [("max_us", 25)]),
    ]
    return t


def vocab_targets():
    t = []
    for rows in (1, 8, 64):
        for kernel, dtype in (("vocab", "f32"), ("bf16_vocab", "bf16")):
            t.append(case("vocab", f"softmax 151936 {dtype} x {rows} rows",
                          VOCAB, kernel, rows, [("min_copy", 0.80)]))
    for kernel, vocab in (("bf16_xent_llama2", 32000),
                          ("bf16_xent_llama3", 128256),
                          ("bf16_xent_256k", 256000)):
        t.append(case("vocab", f"cross_entropy 4096 x {vocab} bf16", XENT,
                      kernel, 4096, [("min_copy", 0.85), ("peer",)],
                      peer=("xent_case", (kernel, "torch.bfloat16", vocab,
                                          0.0, 4096))))
    return t


LAYER_CASES = [
    # kernel of bench/specs/layer.yaml, peers.py's case (None: rope's)
    ("swiglu_4096", ("swiglu", "torch.float32", 4096, "silu")),
    ("swiglu_11008", ("swiglu", "torch.float32", 11008, "silu")),
    ("bf16_swiglu_4096", ("swiglu", "torch.bfloat16", 4096, "silu")),
    ("bf16_swiglu_11008", ("swiglu", "torch.bfloat16", 11008, "silu")),
    ("bf16_gelu_tanh_11008", ("swiglu", "torch.bfloat16", 11008,
                              "gelu_tanh")),
    ("swiglu_back_4096", ("swiglu_backward", "torch.float32", 4096, "silu")),
    ("bf16_swiglu_back_4096", ("swiglu_backward", "torch.bfloat16", 4096,
                               "silu")),
    ("bf16_swiglu_back_11008", ("swiglu_backward", "torch.bfloat16", 11008,
                                "silu")),
    ("add_rmsnorm_4096", ("add_rmsnorm", "torch.float32", 4096, None)),
    ("bf16_add_rmsnorm_4096", ("add_rmsnorm", "torch.bfloat16", 4096,
                               None)),
    ("rmsnorm_back_4096", ("rmsnorm_backward", "torch.float32", 4096,
                           None)),
    ("bf16_rmsnorm_back_4096", ("rmsnorm_backward", "torch.bfloat16", 4096,
                                None)),
    ("layernorm_back_4096", ("layernorm_backward", "torch.float32", 4096,
                             None)),
    ("bf16_layernorm_back_4096", ("layernorm_backward", "torch.bfloat16",
                                  4096, None)),
    ("rope_4096", None),
    ("bf16_rope_llama3_4096", None),
]


def layer_targets():
    t = []
    for kernel, args in LAYER_CASES:
        if args is None:
            peer = ("rope_case_named", (kernel, 4096))
        else:
            op, dtype, features, act = args
            peer = ("case", (kernel, op, dtype, features, act, 4096))
        t.append(case("layer", kernel, LAYER, kernel, 4096,
                      [("min_copy", 0.90), ("peer",)], peer=peer))
    return t


ATTN_SHAPES = [
    # label, forward kernel, backward kernel, batch, seq, heads, head_dim,
    # causal (the design's table: batch x seq = 16k tokens, hidden 2048),
    # the design's main row first, the longest float64 checks last
    ("S=4096 d=128 causal", "bf16_attn_16h", "bf16_attn_bwd_16h", 4, 4096,
     16, 128, True),
    ("S=4096 d=128 full", "bf16_attn_16h_full", "bf16_attn_bwd_16h_full", 4,
     4096, 16, 128, False),
    ("S=4096 d=64 causal", "bf16_attn_32h_d64", "bf16_attn_bwd_32h_d64", 4,
     4096, 32, 64, True),
    ("S=1024 d=128 causal", "bf16_attn_16h", "bf16_attn_bwd_16h", 16, 1024,
     16, 128, True),
    ("S=16384 d=128 causal", "bf16_attn_16h", "bf16_attn_bwd_16h", 1, 16384,
     16, 128, True),
]


def attention_targets():
    t = [case("attention", "attention decode B=8 32/8 heads ctx 4096", ATTN,
              "bf16_attn_llama", 8, [("max_us", 50)],
              ["seq_q=1", "seq_kv=4096"],
              ("attn_case", ("bf16 decode", 8, 1, 4096, 32, 8, 128, True)))]
    for label, fwd, bwd, batch, seq, heads, d, causal in ATTN_SHAPES:
        sizes = [f"seq_q={seq}", f"seq_kv={seq}"]
        peer = ("attn_case", (f"bf16 {label}", batch, seq, seq, heads, heads,
                              d, causal))
        checks = [("flash_fwd",)]
        if label == "S=4096 d=128 causal":
            checks.insert(0, ("min_tflops", 420))
        t.append(case("attention", f"attention {label} forward", ATTN, fwd,
                      batch, checks, sizes, peer))
        checks = [("flash_step",)]
        if label == "S=4096 d=128 causal":
            checks.insert(0, ("min_step_tflops", 300))
        row = case("attention", f"attention {label} forward + backward",
                   ATTN_BWD, bwd, batch, checks, sizes, peer)
        row["forward"] = f"attention {label} forward"
        t.append(row)
    return t


AREAS = {"lora": lora_targets, "vocab": vocab_targets,
         "layer": layer_targets, "attention": attention_targets}


def run_specl(specl, t, reps):
    cmd = [specl, "bench", spec(t["spec"]), "--kernel", t["kernel"],
           "--rows", str(t["rows"]), "--no-naive", "--csv", "--reps",
           str(reps)]
    for s in t["sizes"]:
        cmd += ["--size", s]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    rows = [r for r in csv.DictReader(io.StringIO(p.stdout))
            if r.get("variant") == "specl"]
    if p.returncode != 0 or not rows:
        err = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"specl bench exit {p.returncode}: {err[:120]}"}
    r = rows[0]
    if r["ok"] not in ("1", "true") or not r["us"]:
        return {"error": f"not verified ({r['error']} against float64)"}

    def num(key):
        return float(r[key]) if r.get(key) else None

    return {"us": num("us"), "copy_us": num("copy_us"),
            "gflops": num("gflops"), "device": r["device"],
            "path": r.get("path", "")}


class Peers:
    """bench/peers.py's cases, run once each, their figures kept."""

    def __init__(self, reps):
        sys.path.insert(0, HERE)
        import peers  # noqa: E402  (torch only where peers are wanted)
        import torch
        self.peers, self.torch, self.reps = peers, torch, reps
        self.done = {}
        self.device = f"{torch.cuda.get_device_name()}, torch " \
                      f"{torch.__version__}"

    def dtype(self, v):
        return getattr(self.torch, v[6:]) if isinstance(v, str) and \
            v.startswith("torch.") else v

    def run(self, peer):
        key = repr(peer)
        if key not in self.done:
            name, args = peer
            args = tuple(self.dtype(a) for a in args)
            if name == "rope_case_named":
                kernel, rows = args
                c = next(c for c in self.peers.ROPE_CASES if c[0] == kernel)
                fig = self.peers.rope_case(*c, rows, self.reps)
            elif name == "case":
                kernel, op, dtype, features, act, rows = args
                fig = self.peers.case(kernel, op, dtype, features, act, rows,
                                      self.reps)
            else:
                fig = getattr(self.peers, name)(*args, self.reps)
            self.done[key] = fig
        return self.done[key]


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
    for c in t["checks"]:
        kind = c[0]
        if kind == "max_us":
            verdict(us <= c[1], us / c[1], f"≤ {c[1]} µs")
        elif kind == "min_copy":
            if not fig.get("copy_us"):
                verdicts.append("no copy timed")
                continue
            frac = fig["copy_us"] / us
            verdict(frac >= c[1], c[1] / frac,
                    f"≥ {100 * c[1]:.0f}% of a copy")
        elif kind == "min_tflops":
            tf = fig["gflops"] / 1e3
            verdict(tf >= c[1], c[1] / tf, f"≥ {c[1]} TFLOP/s")
        elif kind == "min_step_tflops":
            if step_tflops is None:
                verdicts.append("no forward timed")
                continue
            verdict(step_tflops >= c[1], c[1] / step_tflops,
                    f"≥ {c[1]} TFLOP/s")
        elif kind == "not_slower":
            other = rows_by_label.get(c[1])
            if not other or "error" in other:
                verdicts.append(f"{c[1]} not timed")
                continue
            verdict(us <= other["us"], us / other["us"],
                    f"no slower than {c[1]} ({other['us']:.1f} µs)")
        elif kind == "peer":
            if peer is None:
                verdicts.append("no peer run")
                continue
            verdict(us < peer["us"], us / peer["us"],
                    f"faster than PyTorch ({peer['us']:.1f} µs)")
        elif kind in ("flash_fwd", "flash_step"):
            flash = (peer or {}).get("flash")
            if flash is None:
                verdicts.append("no flash timed")
                continue
            if kind == "flash_fwd":
                tf = fig["gflops"] / 1e3
                verdict(tf >= flash["tflops"], flash["tflops"] / tf,
                        f"≥ flash ({flash['tflops']:.1f} TFLOP/s)")
            elif step_tflops is None:
                verdicts.append("no forward timed")
            else:
                verdict(step_tflops >= flash["step_tflops"],
                        flash["step_tflops"] / step_tflops,
                        f"≥ flash ({flash['step_tflops']:.1f} TFLOP/s)")
    if peer is not None and "us" in peer and not any(
            c[0] == "peer" for c in t["checks"]):
        shown.append(f"PyTorch {peer['us']:.1f} µs")
    if peer is not None and "decode" in t["label"]:
        shown += [f"SDPA {b} {peer[b]['us']:.1f} µs" for b in peer]
    elif peer is not None and "cudnn" in peer:
        key = "step_tflops" if "forward" in t else "tflops"
        shown.append(f"cuDNN {peer['cudnn'][key]:.1f} TFLOP/s")
    return "; ".join(shown), verdicts or ["(reference row)"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--area", action="append", choices=sorted(AREAS),
                   help="the targets of one area (repeatable; default all)")
    p.add_argument("--match", default="",
                   help="only the cases whose label holds TEXT")
    p.add_argument("--specl", default=os.path.join(ROOT, "build", "specl"))
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--no-peers", action="store_true",
                   help="leave PyTorch out (its checks say so)")
    p.add_argument("--out", help="also write the table to FILE")
    a = p.parse_args()
    targets = [t for area in (a.area or list(AREAS))
               for t in AREAS[area]() if a.match in t["label"]]
    if not targets:
        p.error(f"no target's label holds '{a.match}'")
    peers = None if a.no_peers else Peers(a.reps)
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
        fig = run_specl(a.specl, t, a.reps)
        rows_by_label[t["label"]] = fig
        device = device or fig.get("device")
        peer = peers.run(t["peer"]) if peers and t["peer"] else None
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
