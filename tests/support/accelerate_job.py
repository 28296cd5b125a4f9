"""The script tests/adapters/test_accelerate_runs.py starts with ``accelerate launch``:
``accelerate_job.py N RESULT_JSON``. Every rank evaluates the shared collection over a
prepared DataLoader (Accelerate's defaults: even_batches=True) through AccelerateMetricHook;
rank 0 writes every rank's synced result to RESULT_JSON."""

import json
import sys

import torch
from accelerate import Accelerator
from launcher_eval import BATCH, evaluate, make_collection, make_dataset
from torch.utils.data import DataLoader

from torchtally.adapters.accelerate import AccelerateMetricHook


def main(n: int, result_file: str) -> None:
    accelerator = Accelerator(cpu=True)
    loader = accelerator.prepare(DataLoader(make_dataset(n), batch_size=BATCH))
    hook = AccelerateMetricHook(make_collection(), accelerator=accelerator)
    result = {k: v.tolist() for k, v in evaluate(hook, loader).items()}
    result["rows_seen"] = sum(len(target) for _, target in loader)
    gathered = [None] * accelerator.num_processes
    torch.distributed.all_gather_object(gathered, result)
    if accelerator.is_main_process:
        with open(result_file, "w") as f:
            json.dump(gathered, f)
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
