"""The CARP objectives side by side: each trains the same tower on the same stdlib pairs with the same budget.

all-MiniLM-L6-v2 (one shared tower, mean pooling, texts cut at --max-length tokens) is fine-tuned from the same
weights, on the same (function source, docstring) pairs in the same order, for the same number of AdamW steps
(constant learning rate after a linear warm-up, gradient clip 1) with each objective of `objectives.OBJECTIVES`
built by `make_objective` from its defaults, then scored on the same held-out pairs: R@1 passage→review and
review→passage and the mean MRR over the whole held-out split (identical texts never count as misses), and
training steps per second. The row `zero-shot` is the untrained tower. VICReg objectives train on unnormalised
embeddings (`encoder.normalize=false`, as VICReg intends) and are scored by cosine like the others; FILIP trains
on token features (`encoder.tokens=true`) and is scored by its late-interaction similarity. `matryoshka` is
InfoNCE over the prefixes 384 and 64; every non-token row is also scored on its first 64 dimensions. `infonce+k
mined` is InfoNCE with k hard negatives per passage mined by the untrained tower among the training reviews
(`mining.mine_negatives`: the most similar below (1 − --relative-margin) × the positive's score, among the
--range-max most similar if given, --sampling top or a seeded random draw); a passage with fewer eligible
candidates is left out of that row's pairs.

    nice -n 10 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/objectives.py            # the quoted table
    .venv/bin/python benchmarks/objectives.py --steps 2 --pairs 64 --val-pairs 32         # a quick look
"""

import argparse
import os
import time

import datasets
import torch
import torch.nn.functional as F

from magicarp_nb.carp.train import build_carp, carp_step
from magicarp_nb.carp.gradcache import StepSettings
from magicarp_nb.core.config import load_config
from magicarp_nb.data.pairs import TokenizedPairs, load_pairs
from magicarp_nb.carp.mining import MiningSettings, SourceSettings, mine_negatives
from magicarp_nb.carp.objectives import late_interaction_logits, token_mask
from magicarp_nb.carp.retrieval import encode_ids
from magicarp_nb.core.runtime import seed_everything

OBJECTIVES = ["infonce", "cloob", "vicreg", "infonce+vicreg", "filip", "momentum", "siglip", "matryoshka"]
OBJECTIVES += ["infonce+1 mined", "infonce+3 mined"]
SHORT = 64  # the prefix at which every row is also scored (Matryoshka trains on 384 and 64)


def ranks(scores: torch.Tensor, same: torch.Tensor) -> torch.Tensor:
    "Rank of the diagonal entry in each row of `scores`; entries marked `same` (identical texts) never compete."
    target = scores.diagonal()
    return 1 + ((scores > target[:, None]) & ~same).sum(1)


@torch.no_grad()
def encode_tokens(encoder, ids: list, pad_id: int, batch_size: int = 64):
    "Token features of every text, padded to the longest: (N, L, d)."
    width = max(len(x) for x in ids)
    padded = [x + [pad_id] * (width - len(x)) for x in ids]
    out = []
    for s in range(0, len(ids), batch_size):
        input_ids = torch.tensor(padded[s : s + batch_size])
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids[s : s + batch_size]])
        out.append(encoder.encode_tokens({"input_ids": input_ids, "attention_mask": mask})[0])
    return torch.cat(out)


@torch.no_grad()
def scores_of(model, val: TokenizedPairs, tokens: bool, dims: int | None = None) -> tuple:
    "(passage→review, review→passage) (N, N) scores of the held-out pairs (on the first `dims` dimensions)."
    model.eval()
    if tokens:
        P = encode_tokens(model.passage_encoder, val.passage_ids, val.pad_id)
        R = encode_tokens(model.review_encoder, val.review_ids, val.pad_id)
        return late_interaction_logits(P, token_mask(P), R, token_mask(R))
    P = encode_ids(model.passage_encoder, val.passage_ids, val.pad_id)[:, :dims]
    R = encode_ids(model.review_encoder, val.review_ids, val.pad_id)[:, :dims]
    P, R = F.normalize(P, dim=-1), F.normalize(R, dim=-1)
    return P @ R.T, R @ P.T


def scores_to_row(p2r: torch.Tensor, r2p: torch.Tensor, val: TokenizedPairs) -> dict:
    pk, rk = val.passage_keys, val.review_keys
    same = (pk[:, None] == pk[None, :]) | (rk[:, None] == rk[None, :])
    rp, rr = ranks(p2r, same).float(), ranks(r2p, same).float()
    return {
        "p2r R@1": float((rp == 1).float().mean()),
        "r2p R@1": float((rr == 1).float().mean()),
        "MRR": float(((1 / rp).mean() + (1 / rr).mean()) / 2),
    }


def mined(model, tok, max_length: int, splits, k: int, args) -> datasets.Dataset:
    "The training pairs with k hard negatives each, mined by the untrained tower (`mining.mine_negatives`)."
    knobs = dict(range_max=args.range_max, relative_margin=args.relative_margin, sampling_strategy=args.sampling)
    settings = MiningSettings(num_negatives=k, **knobs)
    reading = SourceSettings(tokenizer=tok, max_length=max_length)
    out = mine_negatives(model, splits, None, settings, reading, progress=False)
    return out.pairs["train"]


def run(name: str, args, splits) -> dict:
    tokens, k = name == "filip", int(name.split("+")[1].split()[0]) if "mined" in name else 0
    objective = "infonce" if name in ("zero-shot", "matryoshka") or k else name
    overrides = [
        f"objective.name={objective}",
        f"encoder.max_length={args.max_length}",
        f"encoder.normalize={'false' if 'vicreg' in name else 'true'}",
        f"encoder.tokens={'true' if tokens else 'false'}",
        "encoder.dropout=0.0",
        f"train.batch_size={args.batch_size}",
    ] + ([f"objective.matryoshka_dims=[384,{SHORT}]"] if name == "matryoshka" else [])
    cfg = load_config("carp-minilm", " ".join(overrides))
    seed_everything(cfg.seed)
    model, tok, max_length = build_carp(cfg)
    pairs = mined(model, tok, max_length, splits, k, args) if k else splits.train
    negatives = [[row[f"negative_{j + 1}"] for j in range(k)] for row in pairs] if k else None
    train = TokenizedPairs(pairs["passage"], pairs["review"], tok, max_length, negatives=negatives)
    val = TokenizedPairs(splits.validation["passage"], splits.validation["review"], tok, max_length)
    if name == "zero-shot":
        return {**scores_to_row(*scores_of(model, val, False), val), **short_row(model, val)}
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, args.steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))
    step = carp_step(model, StepSettings(args.microbatch))
    order = torch.randperm(len(train), generator=torch.Generator().manual_seed(0)).tolist()
    model.train()
    t0, losses = time.time(), []
    for s in range(args.steps):
        start = (s * args.batch_size) % max(1, len(order) - args.batch_size + 1)
        batch = train.collate(order[start : start + args.batch_size])
        optimizer.zero_grad()
        losses.append(float(step(batch, 1.0, torch.autograd.backward)["loss"]))
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        sched.step()
        if hasattr(model.objective, "clamp_"):
            model.objective.clamp_()
    elapsed = time.time() - t0
    row = scores_to_row(*scores_of(model, val, tokens), val)
    short = {} if tokens else short_row(model, val)
    return {**row, **short, "steps/s": args.steps / elapsed, "final loss": sum(losses[-5:]) / len(losses[-5:])}


def short_row(model, val: TokenizedPairs) -> dict:
    "R@1 both ways on the first SHORT dimensions of the embedding, re-normalised."
    row = scores_to_row(*scores_of(model, val, False, SHORT), val)
    return {f"p2r R@1 @{SHORT}": row["p2r R@1"], f"r2p R@1 @{SHORT}": row["r2p R@1"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20, help="optimizer steps per objective")
    ap.add_argument("--batch-size", type=int, default=16, help="pairs per step")
    ap.add_argument("--pairs", type=int, default=320, help="training pairs")
    ap.add_argument("--val-pairs", type=int, default=256, help="held-out pairs")
    ap.add_argument("--max-length", type=int, default=48, help="tokens per text")
    ap.add_argument("--lr", type=float, default=2e-5, help="peak learning rate")
    ap.add_argument("--microbatch", type=int, default=None, help="pairs per encoder forward (None: whole batch)")
    ap.add_argument("--objectives", default=",".join(OBJECTIVES), help="comma-separated objective names")
    ap.add_argument("--range-max", type=int, default=None, help="mining: only the most similar N candidates")
    ap.add_argument("--sampling", default="top", choices=("top", "random"), help="mining: the hardest or a draw")
    ap.add_argument("--relative-margin", type=float, default=0.05, help="mining: below (1 - m) × the positive")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    cfg = load_config("carp-minilm", f"data.max_pairs={args.pairs} data.max_val_pairs={args.val_pairs}")
    splits = load_pairs(cfg.data)
    print(
        f"MiniLM, {len(splits.train['passage'])} training pairs, {len(splits.validation['passage'])} held out, "
        f"{args.steps} steps of {args.batch_size} pairs, {args.max_length} tokens, lr {args.lr:g}, "
        f"{torch.get_num_threads()} torch thread(s)"
    )
    rows = {"zero-shot": run("zero-shot", args, splits)}
    for name in args.objectives.split(","):
        rows[name] = run(name, args, splits)
        print(name, {k: round(v, 4) for k, v in rows[name].items()}, flush=True)
    cols = ["p2r R@1", "r2p R@1", "MRR", f"p2r R@1 @{SHORT}", f"r2p R@1 @{SHORT}", "steps/s", "final loss"]
    print("\n| objective | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[c]:.3f}" if c in row else "—" for c in cols) + " |")


if __name__ == "__main__":
    main()
