#!/usr/bin/env python3
"""peers.py - PyTorch eager on the shapes of bench/specs/layer.yaml, in the
same session as `specl bench`: the composition a user would write without
specl. Prints one line per case: its time (median of CUDA events over
repeated runs after warm-up) and the bandwidth of the bytes specl's floor
counts (every buffer once).

cross_entropy's cases (bench/specs/xent.yaml) run at rows of their own
(XENT_CASES), F.cross_entropy forward and backward as a training step runs
them, and print the peak memory the step allocates beside the logits.

lora_backward's cases (bench/specs/train_half.yaml, and two float32 ones
of specs/llama2-7b-train.yaml; --lora) compute dX, dA and dB of Y = X*W +
scale*(X*A)*B with W frozen from the weights as PyTorch keeps them (W
[out][in], A [r][in], B [out][r]), five matmuls on cuBLAS as a
hand-written backward (or autograd) runs them.

attention's cases (bench/specs/attention.yaml, --attention) run
F.scaled_dot_product_attention on its flash and cuDNN backends, forward
and forward + backward, with q, k and v laid out as specl's
[batch][seq][heads][head_dim] (SDPA's [batch][heads][seq][head_dim] as
transposed views); TFLOP/s counts 4 * batch * heads * seq_q * seq_kv *
head_dim, halved when causal at seq_q = seq_kv, 3.5 times that forward
and backward.

Each case also returns its figures (microseconds; SDPA's per backend),
which bench/targets.py puts beside specl's.

usage: python3 bench/peers.py [--rows N] [--reps N] [--xent-only] [--lora]
                              [--attention [--match STR]]
"""
import argparse

import torch
import torch.nn.functional as F

ACT = {
    "silu": F.silu,
    "gelu_tanh": lambda g: F.gelu(g, approximate="tanh"),
    "gelu": F.gelu,
}

CASES = [
    # name, op, dtype, features, activation
    ("swiglu_4096", "swiglu", torch.float32, 4096, "silu"),
    ("swiglu_11008", "swiglu", torch.float32, 11008, "silu"),
    ("bf16_swiglu_4096", "swiglu", torch.bfloat16, 4096, "silu"),
    ("bf16_swiglu_11008", "swiglu", torch.bfloat16, 11008, "silu"),
    ("bf16_gelu_tanh_11008", "swiglu", torch.bfloat16, 11008, "gelu_tanh"),
    ("swiglu_back_4096", "swiglu_backward", torch.float32, 4096, "silu"),
    ("bf16_swiglu_back_4096", "swiglu_backward", torch.bfloat16, 4096, "silu"),
    ("bf16_swiglu_back_11008", "swiglu_backward", torch.bfloat16, 11008,
     "silu"),
    ("add_rmsnorm_4096", "add_rmsnorm", torch.float32, 4096, None),
    ("bf16_add_rmsnorm_4096", "add_rmsnorm", torch.bfloat16, 4096, None),
    ("rmsnorm_back_4096", "rmsnorm_backward", torch.float32, 4096, None),
    ("bf16_rmsnorm_back_4096", "rmsnorm_backward", torch.bfloat16, 4096,
     None),
    ("layernorm_back_4096", "layernorm_backward", torch.float32, 4096, None),
    ("bf16_layernorm_back_4096", "layernorm_backward", torch.bfloat16, 4096,
     None),
]

LLAMA3 = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position": 8192}

ROPE_CASES = [
    # name, dtype, heads, head_dim, theta, scaling
    ("rope_4096", torch.float32, 32, 128, 10000.0, None),
    ("bf16_rope_llama3_4096", torch.bfloat16, 32, 128, 500000.0, LLAMA3),
]


XENT_CASES = [
    # name, dtype, vocab, softcap, rows (bench/specs/xent.yaml)
    ("bf16_xent_llama3", torch.bfloat16, 128256, 0.0, 4096),
    ("bf16_xent_llama2", torch.bfloat16, 32000, 0.0, 4096),
    ("xent_llama2", torch.float32, 32000, 0.0, 4096),
    ("bf16_xent_gemma", torch.bfloat16, 256000, 30.0, 1024),
    ("bf16_xent_256k", torch.bfloat16, 256000, 0.0, 4096),
    ("bf16_xent_qwen", torch.bfloat16, 151936, 0.0, 1),
    ("bf16_xent_qwen", torch.bfloat16, 151936, 0.0, 8),
    ("bf16_xent_qwen", torch.bfloat16, 151936, 0.0, 64),
]


LORA_CASES = [
    # name, dtype, in_features K, out_features N, rank, input_grad, rows
    # (bench/specs/train_half.yaml; the float32 ones specs/llama2-7b-train.yaml)
    ("bf16_q_grad", torch.bfloat16, 4096, 4096, 16, True, 4096),
    ("bf16_q_adapter", torch.bfloat16, 4096, 4096, 16, False, 4096),
    ("bf16_up_grad", torch.bfloat16, 4096, 11008, 16, True, 4096),
    ("bf16_down_grad", torch.bfloat16, 11008, 4096, 16, True, 4096),
    ("bf16_seed_grad", torch.bfloat16, 512, 512, 8, True, 128),
    ("llama_q_proj_adapter", torch.float32, 4096, 4096, 16, False, 4096),
    ("llama_up_proj_grad", torch.float32, 4096, 11008, 16, True, 4096),
]

LORA_FORWARD_CASES = [
    # name, dtype, in_features K, out_features N, rank, rows
    # (bench/specs/half.yaml; the float32 one bench/specs/lora.yaml)
    ("bf16_q", torch.bfloat16, 4096, 4096, 16, 4096),
    ("bf16_up", torch.bfloat16, 4096, 11008, 16, 4096),
    ("bf16_down", torch.bfloat16, 11008, 4096, 16, 4096),
    ("f32_q", torch.float32, 4096, 4096, 16, 4096),
]


ATTN_CASES = [
    # name, batch, seq_q, seq_kv, heads, kv_heads, head_dim, causal
    ("bf16_attn_16h B=1 S=1024", 1, 1024, 1024, 16, 16, 128, True),
    ("bf16_attn_16h B=1 S=2048", 1, 2048, 2048, 16, 16, 128, True),
    ("bf16_attn_16h B=1 S=4096", 1, 4096, 4096, 16, 16, 128, True),
    ("bf16_attn_16h S=1024", 16, 1024, 1024, 16, 16, 128, True),
    ("bf16_attn_16h S=4096", 4, 4096, 4096, 16, 16, 128, True),
    ("bf16_attn_16h S=4096 full", 4, 4096, 4096, 16, 16, 128, False),
    ("bf16_attn_16h S=16384", 1, 16384, 16384, 16, 16, 128, True),
    ("bf16_attn_32h d64 B=1 S=1024", 1, 1024, 1024, 32, 32, 64, True),
    ("bf16_attn_32h d64 S=4096", 4, 4096, 4096, 32, 32, 64, True),
    ("bf16_attn_16h d80 S=4096", 4, 4096, 4096, 16, 16, 80, True),
    ("bf16_attn_16h d96 S=4096", 4, 4096, 4096, 16, 16, 96, True),
    ("bf16_attn_8h d256 S=4096", 4, 4096, 4096, 8, 8, 256, True),
    ("bf16_attn_llama S=4096", 4, 4096, 4096, 32, 8, 128, True),
    ("bf16_attn_llama decode", 8, 1, 4096, 32, 8, 128, True),
]


def median_us(fn, reps):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    times.sort()
    return times[len(times) // 2]


def add_rmsnorm(x, residual, gamma):
    s = x + residual
    return s, F.rms_norm(s, (s.shape[-1],), gamma, 1e-5)


def norm_backward(op, x, dy):
    """dx, dgamma (and dbeta) by autograd of the forward, as a training
    step's backward runs them; the bytes specl's floor counts."""
    features = x.shape[-1]
    gamma = (torch.rand(features, device="cuda", dtype=x.dtype) + 0.5)
    params = [gamma.requires_grad_(True)]
    xg = x.clone().requires_grad_(True)
    if op == "rmsnorm_backward":
        y = F.rms_norm(xg, (features,), gamma, 1e-5)
    else:
        beta = torch.zeros(features, device="cuda", dtype=x.dtype)
        params.append(beta.requires_grad_(True))
        y = F.layer_norm(xg, (features,), gamma, beta, 1e-5)
    inputs = [xg] + params

    def fn():
        torch.autograd.grad(y, inputs, dy, retain_graph=True)

    # x, dy and dx; gamma read, dgamma (and dbeta) written as float32
    nbytes = (3 * x.numel() * x.element_size() +
              features * (x.element_size() + 4 * len(params)))
    return fn, nbytes


def case(name, op, dtype, features, activation, rows, reps):
    gate = torch.rand(rows, features, device="cuda", dtype=dtype) * 2 - 1
    up = torch.rand_like(gate) * 2 - 1
    nbytes = None
    if op in ("rmsnorm_backward", "layernorm_backward"):
        fn, nbytes = norm_backward(op, gate, up)
    elif op == "add_rmsnorm":
        # x, residual, sum and y (gamma is one row)
        buffers = 4
        gamma = torch.rand(features, device="cuda", dtype=dtype) + 0.5
        fn = lambda: add_rmsnorm(gate, up, gamma)
    elif op == "swiglu":
        act = ACT[activation]
        buffers = 3
        fn = lambda: act(gate) * up
    else:
        act = ACT[activation]
        buffers = 5
        dy = torch.rand_like(gate) * 2 - 1
        g = gate.clone().requires_grad_(True)
        u = up.clone().requires_grad_(True)
        y = act(g) * u  # the graph autograd keeps from the forward

        def fn():
            # dgate and dup alone, as a training step's backward runs them.
            torch.autograd.grad(y, (g, u), dy, retain_graph=True)

    us = median_us(fn, reps)
    if nbytes is None:
        nbytes = buffers * rows * features * gate.element_size()
    print(f"{name:24s} {op:16s} {str(dtype)[6:]:9s} {rows}x{features} "
          f"{activation or '':9s} torch eager {us:9.1f} us {nbytes / us / 1e3:7.1f} GB/s")
    return {"us": us}


def rope_inv_freq(head_dim, theta, scaling):
    """Hugging Face's default and llama3 inv_freq (float32, as it builds
    them: _compute_default_rope_parameters, _compute_llama3_parameters)."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device="cuda",
                                        dtype=torch.int64).float() / head_dim))
    if scaling is None:
        return inv
    factor, old = scaling["factor"], scaling["original_max_position"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    wavelen = 2 * torch.pi / inv
    scaled = torch.where(wavelen > old / low, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < old / high) * ~(wavelen > old / low)
    return torch.where(medium, smoothed, scaled)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rope_case(name, dtype, heads, head_dim, theta, scaling, rows, reps):
    x = torch.rand(rows, heads, head_dim, device="cuda", dtype=dtype) * 2 - 1
    positions = torch.randint(0, 65536, (rows,), device="cuda")
    inv_freq = rope_inv_freq(head_dim, theta, scaling)

    def fn():
        # LlamaRotaryEmbedding.forward (cos, sin in float32 from the
        # positions), then apply_rotary_pos_emb.
        freqs = positions[:, None].float() * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos().to(dtype)[:, None, :]
        sin = emb.sin().to(dtype)[:, None, :]
        return x * cos + rotate_half(x) * sin

    us = median_us(fn, reps)
    # x and y, and the int32 positions specl's floor counts
    nbytes = 2 * x.numel() * x.element_size() + 4 * rows
    print(f"{name:24s} {'rope':16s} {str(dtype)[6:]:9s} "
          f"{rows}x{heads}x{head_dim} {'':9s} torch eager {us:9.1f} us "
          f"{nbytes / us / 1e3:7.1f} GB/s")
    return {"us": us}


def xent_case(name, dtype, vocab, softcap, rows, reps):
    """F.cross_entropy (mean over rows whose label is not -100) and the
    gradient of the logits, as a training step's head runs them (Gemma 2's
    softcap as its modelling code applies it); the peak memory allocated
    during the step, the logits and labels already there."""
    logits = (torch.rand(rows, vocab, device="cuda", dtype=dtype) * 8 - 4)
    logits.requires_grad_(True)
    labels = torch.randint(0, vocab, (rows,), device="cuda")

    def fn():
        z = logits
        if softcap > 0:
            z = torch.tanh(z / softcap) * softcap
        loss = F.cross_entropy(z, labels, ignore_index=-100)
        return torch.autograd.grad(loss, logits)

    us = median_us(fn, reps)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    # logits read and dlogits written, the int32 labels and the loss
    # specl's floor counts
    nbytes = 2 * logits.numel() * logits.element_size() + 4 * rows + 4
    print(f"{name:24s} {'cross_entropy':16s} {str(dtype)[6:]:9s} "
          f"{rows}x{vocab} {'':9s} torch eager {us:9.1f} us "
          f"{nbytes / us / 1e3:7.1f} GB/s  step peak +{peak / 2**20:.0f} MiB "
          f"(logits {logits.numel() * logits.element_size() / 2**20:.0f} MiB)")
    return {"us": us, "peak_mib": peak / 2**20}


def lora_case(name, dt, K, N, r, input_grad, rows, reps):
    """dX = dY*W^T + G*A^T, dA = X^T*G, dB = scale*T^T*dY with G =
    scale*dY*B^T and T = X*A, in DT on cuBLAS (float32 in float32: no
    TF32, PyTorch's default for matmuls, set here all the same)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    scale = 2.0
    x = torch.randn(rows, K, device="cuda", dtype=dt)
    dy = torch.randn(rows, N, device="cuda", dtype=dt)
    w = torch.randn(N, K, device="cuda", dtype=dt) * 0.02
    a = torch.randn(r, K, device="cuda", dtype=dt) * 0.02
    b = torch.randn(N, r, device="cuda", dtype=dt) * 0.02

    def fn():
        t = x @ a.t()
        g = (dy @ b) * scale
        da = g.t() @ x
        db = (dy.t() @ t) * scale
        if input_grad:
            dx = dy @ w + g @ a
            return dx, da, db
        return da, db

    us = median_us(fn, reps)
    nbytes = x.element_size() * (
        x.numel() + dy.numel() + 2 * (a.numel() + b.numel()) +
        (x.numel() + w.numel() if input_grad else 0))
    flops = 4 * rows * r * (K + N) + (2 * rows * K * r + 2 * rows * N * K
                                      if input_grad else 0)
    dtype = "bfloat16" if dt == torch.bfloat16 else "float32"
    print(f"{name:24s} {'lora_backward':16s} {dtype:9s} "
          f"{rows}x{K}x{N} r{r} torch eager {us:9.1f} us "
          f"{nbytes / us / 1e3:7.1f} GB/s {flops / us / 1e6:7.1f} TFLOP/s")
    return {"us": us}


def lora_forward_case(name, dt, K, N, r, rows, reps):
    """Y = X*W^T + scale*(X*A^T)*B^T on cuBLAS (PyTorch's layouts; float32
    without TF32), and X*W^T alone."""
    torch.backends.cuda.matmul.allow_tf32 = False
    scale = 2.0
    x = torch.randn(rows, K, device="cuda", dtype=dt)
    w = torch.randn(N, K, device="cuda", dtype=dt) * 0.02
    a = torch.randn(r, K, device="cuda", dtype=dt) * 0.02
    b = torch.randn(N, r, device="cuda", dtype=dt) * 0.02

    def fn():
        return x @ w.t() + ((x @ a.t()) @ b.t()) * scale

    us = median_us(fn, reps)
    base = median_us(lambda: x @ w.t(), reps)
    flops = 2 * rows * K * N + 2 * rows * r * (K + N)
    print(f"{name:24s} {'lora_forward':16s} {str(dt)[6:]:9s} "
          f"{rows}x{K}x{N} r{r} torch eager {us:9.1f} us "
          f"{flops / us / 1e6:7.1f} TFLOP/s; X*W^T alone {base:9.1f} us "
          f"{2 * rows * K * N / base / 1e6:7.1f} TFLOP/s")
    return {"us": us, "base_us": base}


def attn_case(name, batch, sq, skv, heads, kv_heads, d, causal, reps):
    """SDPA forward, and forward + backward, on the flash and cuDNN
    backends (where they take the shape)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dt = torch.bfloat16
    q = torch.randn(batch, sq, heads, d, device="cuda", dtype=dt)
    k = torch.randn(batch, skv, kv_heads, d, device="cuda", dtype=dt)
    v = torch.randn(batch, skv, kv_heads, d, device="cuda", dtype=dt)
    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
    if kv_heads != heads:  # flash and cuDNN take equal heads: repeat
        kt = kt.repeat_interleave(heads // kv_heads, dim=1)
        vt = vt.repeat_interleave(heads // kv_heads, dim=1)
    # bottom-right causal at seq_q < seq_kv: decode's one query sees all
    is_causal = causal and sq == skv
    flops = 4.0 * batch * heads * sq * skv * d * (0.5 if is_causal else 1)
    nbytes = 2 * (2 * q.numel() + k.numel() + v.numel())
    figures = {}
    for label, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                           ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        qg, kg, vg = (t.detach().requires_grad_() for t in (qt, kt, vt))

        def fwd():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(qt, kt, vt,
                                                      is_causal=is_causal)

        def step():
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(qg, kg, vg,
                                                   is_causal=is_causal)
            o.backward(torch.ones_like(o))

        try:
            us = median_us(fwd, reps)
            us_step = median_us(step, reps) if sq > 1 else float("nan")
        except RuntimeError as e:
            print(f"{name:28s} sdpa {label}: not taken ({str(e)[:60]})")
            continue
        figures[label] = {"us": us, "step_us": us_step,
                          "tflops": flops / us / 1e6,
                          "step_tflops": 3.5 * flops / us_step / 1e6}
        print(f"{name:28s} sdpa {label:5s} fwd {us:9.1f} us "
              f"{flops / us / 1e6:6.1f} TFLOP/s {nbytes / us / 1e3:7.1f} GB/s"
              f" | fwd+bwd {us_step:9.1f} us "
              f"{3.5 * flops / us_step / 1e6:6.1f} TFLOP/s"
              f" | bwd (step - fwd) {us_step - us:9.1f} us "
              f"{2.5 * flops / (us_step - us) / 1e6:6.1f} TFLOP/s")
    return figures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--xent-only", action="store_true",
                   help="cross_entropy's cases alone")
    p.add_argument("--lora", action="store_true",
                   help="lora_forward's and lora_backward's cases alone")
    p.add_argument("--attention", action="store_true",
                   help="attention's cases alone (SDPA)")
    p.add_argument("--match", default="",
                   help="with --attention: the cases whose name holds it")
    a = p.parse_args()
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    if a.attention:
        for c in ATTN_CASES:
            if a.match in c[0]:
                attn_case(*c, a.reps)
        return
    if a.lora:
        for c in LORA_FORWARD_CASES:
            lora_forward_case(*c, a.reps)
        for c in LORA_CASES:
            lora_case(*c, a.reps)
        return
    for c in XENT_CASES:
        xent_case(*c, a.reps)
    if a.xent_only:
        return
    for c in CASES:
        case(*c, a.rows, a.reps)
    for c in ROPE_CASES:
        rope_case(*c, a.rows, a.reps)


if __name__ == "__main__":
    main()
