"""Our trainer against Hugging Face's `transformers.Trainer` on the same causal-LM training: tokens/s and peak memory.

The same GPT-Neo (built by `clm.neo_config`, seeded alike), the same packed blocks of the clm-tiny corpus, the
same per-step batch, AdamW (lr, weight decay and betas of the clm-tiny preset), cosine schedule with warmup
and gradient clipping at 1.0, on both sides (HF's cosine decays to 0, ours to 10% of the peak: the same cost):

* ours - `trainer.Trainer` with `clm.clm_step` (what `train_clm` runs), no evaluation, one checkpoint at the end
* HF   - `transformers.Trainer` with the same model and blocks (`labels = input_ids`), the paper's path; no
         evaluation, no saving, no logging integrations

Throughput is measured between the end of step `--skip` and the end of the last step (callbacks on both
sides), so start-up (tokenizer, model build, first steps) is left out. Each (trainer, model) runs in its own
process, `--repeats` times in alternating order (the best run of each is kept, as the load of a shared
machine changes), so the peak resident memory (ru_maxrss; on a GPU the peak allocated CUDA memory) is its
own. On a GPU both run in bf16 where the preset says so (HF: `bf16=True`, fused AdamW) and the table adds MFU
(6 × parameters × tokens/s over `--peak-tflops`).

    .venv/bin/python benchmarks/train.py                        # 2x128 and 4x256, 40 steps, 1 thread
    .venv/bin/python benchmarks/train.py --models 2x128 --steps 15 --skip 5
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import pandas as pd
import torch


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _setup(model_name: str, batch_size: int, steps: int, threads: int):
    from transformers import GPTNeoForCausalLM

    from magicarp_nb.collapse.clm import neo_config
    from magicarp_nb.core.config import load_config
    from magicarp_nb.data.lm import prepare_text_blocks
    from magicarp_nb.core.runtime import seed_everything

    torch.set_num_threads(threads)
    depth, width = (int(x) for x in model_name.split("x"))
    over = f"model.n_layer={depth} model.width={width} train.batch_size={batch_size} train.max_steps={steps}"
    cfg = load_config("clm-tiny", over + " train.device=auto train.log_every=1000000")
    tok, train, _, _ = prepare_text_blocks(cfg.data)
    seed_everything(cfg.seed)
    model = GPTNeoForCausalLM(neo_config(cfg.model, len(tok), cfg.data.block_size, tok.eos_token_id))
    return cfg, model, train


def _ours(cfg, model, train, skip: int) -> list:
    from magicarp_nb.collapse.clm import clm_step
    from magicarp_nb.training.trainer import Trainer, TrainParts

    times = []

    class Clock:
        def on_step_end(self, tr):
            times.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as d:
        parts = TrainParts(model, clm_step(model), len(train), lambda i: train[i])
        tr = Trainer(parts, cfg.train, d, callbacks=[Clock()])
        tr.fit(resume=False)
    return times


def _hf(cfg, model, train, skip: int) -> list:
    from transformers import Trainer, TrainerCallback, TrainingArguments

    times, t = [], cfg.train

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            times.append(time.perf_counter())

    class Blocks(torch.utils.data.Dataset):
        def __len__(self):
            return len(train)

        def __getitem__(self, i):
            ids = train[i].long()
            return {"input_ids": ids, "labels": ids}

    gpu = torch.cuda.is_available()
    with tempfile.TemporaryDirectory() as d:
        args = TrainingArguments(
            output_dir=d,
            per_device_train_batch_size=t.batch_size,
            max_steps=t.max_steps,
            learning_rate=t.lr,
            weight_decay=t.weight_decay,
            adam_beta1=t.adam_betas[0],
            adam_beta2=t.adam_betas[1],
            lr_scheduler_type="cosine",
            warmup_steps=round(t.warmup_ratio * t.max_steps),
            max_grad_norm=t.grad_clip,
            logging_steps=10**6,
            save_strategy="no",
            eval_strategy="no",
            report_to=[],
            disable_tqdm=True,
            dataloader_num_workers=0,
            use_cpu=not gpu,
            bf16=gpu and t.bf16,
            optim="adamw_torch_fused" if gpu else "adamw_torch",
            seed=cfg.seed,
        )
        Trainer(model=model, args=args, train_dataset=Blocks(), callbacks=[Clock()]).train()
    return times


def one(trainer: str, model_name: str, batch_size: int, steps: int, skip: int, threads: int) -> dict:
    cfg, model, train = _setup(model_name, batch_size, steps, threads)
    times = (_ours if trainer == "ours" else _hf)(cfg, model, train, skip)
    if len(times) < steps:
        raise RuntimeError(f"{trainer} ran {len(times)} steps, expected {steps}")
    secs = times[steps - 1] - times[skip - 1]
    tokens = (steps - skip) * batch_size * cfg.data.block_size
    peak = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else _peak_mib()
    return {
        "trainer": trainer,
        "model": model_name,
        "params_M": sum(p.numel() for p in model.parameters()) / 1e6,
        "batch": batch_size,
        "block": cfg.data.block_size,
        "s/step": secs / (steps - skip),
        "tokens/s": tokens / secs,
        "peak_MiB": peak,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["2x128", "4x256"], help="depth x width")
    ap.add_argument("--batch-size", type=int, default=32, help="blocks per step (the clm-tiny preset's)")
    ap.add_argument("--steps", type=int, default=40, help="optimiser steps per run")
    ap.add_argument("--skip", type=int, default=10, help="steps left out of the timing (start-up)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per run")
    ap.add_argument("--repeats", type=int, default=2, help="runs per (trainer, model), in alternating order; best kept")
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="the GPU's dense bf16 peak, for MFU (H100/H200)")
    ap.add_argument("--one", nargs=2, metavar=("TRAINER", "MODEL"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print("RESULT " + json.dumps(one(*a.one, a.batch_size, a.steps, a.skip, a.threads)))
        return
    best = {}
    env = {**os.environ, "OMP_NUM_THREADS": str(a.threads), "TOKENIZERS_PARALLELISM": "false"}
    for model in a.models:
        for r in range(a.repeats):  # alternate the order, keep each side's fastest run
            for trainer in ("ours", "HF") if r % 2 == 0 else ("HF", "ours"):
                cmd = [sys.executable, __file__, "--one", trainer, model, "--batch-size", str(a.batch_size)]
                cmd += ["--steps", str(a.steps), "--skip", str(a.skip), "--threads", str(a.threads)]
                out = subprocess.run(cmd, capture_output=True, text=True, env=env)
                lines = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
                if out.returncode or not lines:
                    raise RuntimeError(f"{trainer} {model} failed:\n{out.stderr[-3000:]}")
                row = json.loads(lines[-1][7:])
                if (model, trainer) not in best or row["tokens/s"] > best[model, trainer]["tokens/s"]:
                    best[model, trainer] = row
    df = pd.DataFrame([best[m, t] for m in a.models for t in ("ours", "HF")])
    df["vs_HF"] = df["tokens/s"] / df.groupby("model")["tokens/s"].transform(lambda s: s.iloc[-1])
    if torch.cuda.is_available():  # model FLOPs utilisation by the 6 × parameters × tokens rule (attention left out)
        df["MFU"] = 6 * df["params_M"] * 1e6 * df["tokens/s"] / (a.peak_tflops * 1e12)
    dev = torch.cuda.get_device_name() if torch.cuda.is_available() else f"CPU, {a.threads} thread(s)"
    print(f"causal-LM training, {dev}, {a.steps} steps ({a.skip} left out of the timing), best of {a.repeats}")
    print(df.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
