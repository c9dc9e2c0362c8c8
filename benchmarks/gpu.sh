#!/usr/bin/env bash
# The GPU checks of magicarp_nb, in one script, for a machine with CUDA GPUs:
#   1. the main job (clm-tiny, seed 12) trained on CUDA with bfloat16 autocast;
#   2. `magicarp check-distributed` with NCCL over every visible GPU (and once under torchrun);
#   3. the trainer benchmark (benchmarks/train.py), where the checkout has it;
#   4. a few CARP steps under DeepSpeed ZeRO-2 (NCCL) over every visible GPU, where deepspeed is installed;
#   5. the cached contrastive step in float32 and under bf16 autocast (benchmarks/step_bf16.py), where supported;
#   6. CARP over two or more GPUs four ways (benchmarks/scale_carp.py): DDP, towers in parallel, FSDP2, FSDP2 + LoRA.
# It refuses to run without a GPU: on CPU the same checks are `make train` and
# `magicarp check-distributed --nproc 2` (gloo).
#
#   bash benchmarks/gpu.sh                 # from the repository root, after `make setup` with a CUDA torch
#   RUNS=/scratch/runs bash benchmarks/gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
RUNS=${RUNS:-runs-gpu}
SEED=${SEED:-12}

NGPU=$("$BIN/python" -c "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)")
if [ "$NGPU" -eq 0 ]; then
    echo "benchmarks/gpu.sh: no CUDA device visible to torch ($("$BIN/python" -c 'import torch; print(torch.__version__)')):" \
         "install a CUDA build of torch on a GPU machine; nothing was run" >&2
    exit 2
fi
BF16=$("$BIN/python" -c "import torch; print(int(torch.cuda.is_bf16_supported()))")
echo "## $NGPU GPU(s): $("$BIN/python" -c 'import torch; print(torch.cuda.get_device_name(0))'), bf16 supported: $BF16"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv || true

echo "## 1. the main job on CUDA (bf16 autocast where supported)"
RUN="$RUNS/clm-tiny/02x0128_s$SEED"
mkdir -p "$RUN"
bf16=$([ "$BF16" -eq 1 ] && echo true || echo false)
/usr/bin/time -v "$BIN/papermill" nbs/run_train.ipynb "$RUN/run_train.ipynb" -p seed "$SEED" -p run_dir "$RUN" \
    -p overrides "train.device=cuda train.bf16=$bf16" 2> "$RUN/time.txt"
grep -E "Elapsed|Maximum resident" "$RUN/time.txt"
cat "$RUN/eval_results.json"

echo "## 2. check-distributed with NCCL over $NGPU GPU(s)"
"$BIN/magicarp" check-distributed --nproc "$NGPU" --backend nccl
"$BIN/magicarp" check-distributed --nproc "$NGPU" --backend nccl --objectives infonce,cloob,siglip --negatives
if [ "$NGPU" -gt 1 ]; then
    "$BIN/python" -m torch.distributed.run --standalone --nproc_per_node "$NGPU" -m magicarp_nb.cli check-distributed
fi

echo "## 3. the trainer against transformers.Trainer"
if [ -f benchmarks/train.py ]; then
    "$BIN/python" benchmarks/train.py --threads 4
else
    echo "benchmarks/train.py is not in this checkout: skipped"
fi

echo "## 4. CARP under DeepSpeed ZeRO-2 over $NGPU GPU(s)"
if "$BIN/python" -c "import deepspeed" 2>/dev/null; then
    "$BIN/python" -m torch.distributed.run --standalone --nproc_per_node "$NGPU" -m magicarp_nb.cli train carp-tiny \
        train.deepspeed=zero2 train.device=cuda train.max_steps=20 train.log_every=5 --run-dir "$RUNS/carp-zero2"
    cat "$RUNS/carp-zero2/log.csv"
else
    echo "deepspeed is not installed (pip install deepspeed): skipped"
fi

echo "## 5. the cached contrastive step under bf16 autocast"
if [ "$BF16" -eq 1 ] && [ -f benchmarks/step_bf16.py ]; then
    "$BIN/python" benchmarks/step_bf16.py --device cuda --batch 256 --microbatch 32
else
    echo "bf16 is not supported on this GPU (or benchmarks/step_bf16.py is not in this checkout): skipped"
fi

echo "## 6. CARP past one replica: data parallel, towers in parallel, FSDP2, FSDP2 with LoRA"
if [ "$NGPU" -ge 2 ] && [ -f benchmarks/scale_carp.py ]; then
    "$BIN/python" benchmarks/scale_carp.py --device cuda --nproc $(( NGPU / 2 * 2 )) --threads 4
else
    echo "towers in parallel need an even number of GPUs (2 or more; here $NGPU): skipped"
fi
