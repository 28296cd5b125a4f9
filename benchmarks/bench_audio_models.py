"""Audio (package- and model-based) benchmark: PESQ and STOI (through the pesq and pystoi
packages), SRMR (gammatone's filters; torchmetrics' needs torchaudio too), DNSMOS and NISQA
(small stand-in models, tests/support/audio_models.py) against torchmetrics given the same
packages and models, side by side in one run, one torch thread. Where torchmetrics cannot run a
metric (SRMR without torchaudio) its columns say so and torchtally's own figures stand alone.

Data: 24 utterances of 1 s at 8000 Hz (PESQ nb, STOI, SRMR) and 16000 Hz (DNSMOS, NISQA), voiced
bursts with noise, fed in batches of 4. Measured:
  update   every batch, once (the package or model dominates both libraries' time);
  compute  ``compute()`` once;
  state    the bytes the state tensors hold after the updates;
  sync     at world size 2 (gloo), the collectives one ``compute()`` makes.
Both libraries' results are checked to agree (1e-5 relative) before anything is timed. Results
go to the "Audio (package- and model-based)" section of benchmarks/RESULTS.md.

Run: `.venv/bin/python benchmarks/bench_audio_models.py [--quick] [--only NAME ...]` (``--only``
runs some of the metrics and, like ``--quick``, leaves RESULTS.md alone).
"""

import argparse
import importlib.util
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from _common import describe_collectives, machine_line, markdown_table, replace_section  # noqa: E402

SECTION = "Audio (package- and model-based)"
UTTERANCES = 24
BATCH = 4
NAMES = ("PESQ", "STOI", "SRMR", "DNSMOS", "NISQA")


def patch_torchmetrics() -> None:
    """torchmetrics' DNSMOS and NISQA given the stand-in models (it would download its own)."""
    import librosa
    import torchmetrics.functional.audio.dnsmos as tm_dnsmos
    import torchmetrics.functional.audio.nisqa as tm_nisqa
    from support.audio_models import NISQA_ARGS, TinyNisqa, p808, p835

    class Session:
        def __init__(self, fn: Any) -> None:
            self.fn = fn

        def run(self, _names: Any, feeds: Dict[str, Any]) -> List[Any]:
            return [self.fn(feeds["input_1"])]

    import torchmetrics.audio.dnsmos as tm_dnsmos_class

    tm_dnsmos._ONNXRUNTIME_AVAILABLE = True
    tm_dnsmos_class._ONNXRUNTIME_AVAILABLE = True
    tm_dnsmos.librosa = librosa
    tm_dnsmos._cached_load_session = lambda path, *a: Session(p808 if "model_v8" in path else p835)
    net = TinyNisqa()
    tm_nisqa._load_nisqa_model = lambda: (net, NISQA_ARGS)


def make(library: str, name: str) -> Any:
    from support import audio_models

    if library == "torchmetrics":
        import torchmetrics.audio.dnsmos as d
        import torchmetrics.audio.nisqa as n
        import torchmetrics.audio.pesq as p
        import torchmetrics.audio.srmr as r
        import torchmetrics.audio.stoi as s

        return {
            "PESQ": lambda: p.PerceptualEvaluationSpeechQuality(8000, "nb"),
            "STOI": lambda: s.ShortTimeObjectiveIntelligibility(8000),
            "SRMR": lambda: r.SpeechReverberationModulationEnergyRatio(8000),
            "DNSMOS": lambda: d.DeepNoiseSuppressionMeanOpinionScore(16000, False),
            "NISQA": lambda: n.NonIntrusiveSpeechQualityAssessment(16000),
        }[name]()
    from torchtally.audio import (
        PerceptualEvaluationSpeechQuality,
        ShortTimeObjectiveIntelligibility,
        SpeechReverberationModulationEnergyRatio,
    )

    return {
        "PESQ": lambda: PerceptualEvaluationSpeechQuality(8000, "nb"),
        "STOI": lambda: ShortTimeObjectiveIntelligibility(8000),
        "SRMR": lambda: SpeechReverberationModulationEnergyRatio(8000),
        "DNSMOS": audio_models.dnsmos_metric,
        "NISQA": audio_models.nisqa_metric,
    }[name]()


def data(name: str, n: int) -> List[Tuple[torch.Tensor, ...]]:
    from support.audio_models import speech

    fs = 8000 if name in ("PESQ", "STOI", "SRMR") else 16000
    target = speech(0, n, fs, fs)
    preds = target + 0.2 * torch.randn(target.shape, generator=torch.Generator().manual_seed(1))
    if name in ("PESQ", "STOI"):
        return [(preds[i : i + BATCH], target[i : i + BATCH]) for i in range(0, n, BATCH)]
    return [(preds[i : i + BATCH],) for i in range(0, n, BATCH)]


def state_bytes(metric: Any) -> int:
    return sum(v.numel() * v.element_size() for v in metric.metric_state.values() if isinstance(v, torch.Tensor))


def run(library: str, name: str, batches: List[Tuple[torch.Tensor, ...]]) -> Tuple[float, float, int, torch.Tensor]:
    # one untimed update on a throwaway metric first: the packages' lazy imports (librosa's
    # feature module takes seconds) are paid there, not by whichever library runs first
    make(library, name).update(*batches[0])
    metric = make(library, name)
    start = time.perf_counter()
    for batch in batches:
        metric.update(*batch)
    update = time.perf_counter() - start
    start = time.perf_counter()
    result = metric.compute()
    return update, time.perf_counter() - start, state_bytes(metric), result


def sync_rank(rank: int, world_size: int, n: int, names: Tuple[str, ...]) -> Dict[str, Dict[str, int]]:
    from torchtally.testing import count_collectives

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    out = {}
    for name in names:
        metric = make("torchtally", name)
        for batch in data(name, n)[rank::world_size]:
            metric.update(*batch)
        with count_collectives() as counter:
            metric.compute()
        out[name] = dict(counter.by_name)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 utterances; do not write RESULTS.md")
    parser.add_argument("--only", nargs="+", choices=NAMES, help="these metrics only; do not write RESULTS.md")
    args = parser.parse_args()
    names = tuple(args.only or NAMES)
    from torchtally.testing import run_distributed

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    if {"DNSMOS", "NISQA"} & set(names):
        patch_torchmetrics()
    n = 8 if args.quick else UTTERANCES
    rows = []
    for name in names:
        batches = data(name, n)
        tt_update, tt_compute, tt_bytes, tt_result = run("torchtally", name, batches)
        try:
            tm_update, tm_compute, tm_bytes, tm_result = run("torchmetrics", name, batches)
        except ModuleNotFoundError as err:  # torchmetrics' SRMR needs torchaudio
            absent = err.name or ("torchaudio" if importlib.util.find_spec("torchaudio") is None else "a package")
            missing = f"not runnable ({absent} missing)"
            rows.append([name, f"{tt_update * 1e3:.1f}", missing, "-", f"{tt_compute * 1e6:.0f}", "-", tt_bytes, "-"])
            continue
        torch.testing.assert_close(tt_result.double(), tm_result.double(), rtol=1e-5, atol=1e-6)
        rows.append([name, f"{tt_update * 1e3:.1f}", f"{tm_update * 1e3:.1f}", f"{tt_update / tm_update:.2f}",
                     f"{tt_compute * 1e6:.0f}", f"{tm_compute * 1e6:.0f}", tt_bytes, tm_bytes])  # fmt: skip
    per_rank = run_distributed(sync_rank, 2, 8, names, timeout=600)
    for row in rows:
        row.append(describe_collectives([r[row[0]] for r in per_rank]))
    header = ["metric", "update ms (tt)", "update ms (tm)", "ratio", "compute us (tt)", "compute us (tm)"]
    header += ["state bytes (tt)", "state bytes (tm)", "sync collectives (tt, ws 2)"]
    body = (
        f"{machine_line()}\n\n{n} utterances of 1 s in batches of {BATCH}; DNSMOS and NISQA with small stand-in "
        "models (both libraries given the same ones). The packages and models dominate the update time; "
        "torchtally's state adds an int64 count of the utterances that could not be scored."
        + (
            ""
            if all(row[3] != "-" for row in rows)
            else " torchmetrics' SRMR needs torchaudio, which has no build for "
            "this torch: torchtally's figures stand alone there."
        )
        + "\n\n"
        + markdown_table(header, rows)
    )
    print(body)
    if not args.quick and not args.only:
        replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
