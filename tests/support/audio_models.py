"""Small stand-in models and waveforms for the model-based audio, video and image metrics'
tests: module-level (picklable, so the gloo ranks can build the same metric)."""

import functools

import numpy as np
import torch


def speech(seed: int, n: int, time: int, fs: int = 16000) -> torch.Tensor:
    """[n, time] voiced bursts (tones with pauses) and a little noise: PESQ finds utterances."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(time, dtype=torch.float64) / fs
    rows = []
    for _ in range(n):
        f0 = 100 + 200 * torch.rand((), generator=g, dtype=torch.float64)
        gate = ((t * (2 + 2 * torch.rand((), generator=g, dtype=torch.float64))) % 1.0 < 0.6).double()
        tone = torch.sin(2 * torch.pi * f0 * t) + 0.5 * torch.sin(2 * torch.pi * 3 * f0 * t)
        rows.append(gate * tone + 0.01 * torch.randn(time, generator=g, dtype=torch.float64))
    return torch.stack(rows).float()


def p808(mel: np.ndarray) -> np.ndarray:
    return mel.mean(axis=(1, 2))[:, None] + 3.0


def p835(wave: np.ndarray) -> np.ndarray:
    return np.stack([3 + wave.std(-1), 3 + wave.mean(-1), 3 + np.abs(wave).mean(-1)], -1)


NISQA_ARGS = dict(
    ms_n_fft=512, ms_hop_length=0.01, ms_win_length=0.02, ms_n_mels=16, ms_fmax=8000,
    ms_seg_length=15, ms_seg_hop_length=4, ms_max_segments=40,
)  # fmt: skip


class TinyNisqa(torch.nn.Module):
    """Segments [B, S, n_mels, L] and valid counts [B] -> [B, 5], masked by the counts."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.proj = torch.nn.Linear(15, 5)

    def forward(self, x: torch.Tensor, n_wins: torch.Tensor) -> torch.Tensor:
        mask = (torch.arange(x.shape[1])[None, :] < n_wins[:, None]).float()
        pooled = (x.mean(dim=2) * mask[..., None]).sum(dim=1) / n_wins[:, None]
        return self.proj(pooled / 50)


def vmaf_model(ref: torch.Tensor, dist: torch.Tensor) -> torch.Tensor:
    return 100 - (ref - dist).abs().mean(dim=(1, 2, 3))


class VmafTable:
    """vmaf-torch's interface: compute_vmaf_score and a table with the 12 columns and Frame."""

    def compute_vmaf_score(self, ref: torch.Tensor, dist: torch.Tensor) -> torch.Tensor:
        return vmaf_model(ref, dist)[:, None]

    def table(self, ref: torch.Tensor, dist: torch.Tensor) -> dict:
        from torchtally.functional.video.vmaf import FEATURES

        base = vmaf_model(ref, dist)
        out = {name: (base / (i + 1)).numpy() for i, name in enumerate(FEATURES)}
        out["Frame"] = np.arange(ref.shape[0])
        return out


def arniqa_parts() -> tuple:
    torch.manual_seed(5)
    encoder = torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    return encoder, torch.nn.Linear(12, 1)


def arniqa_metric(**kwargs: object) -> object:
    from torchtally.image.arniqa import ARNIQA

    encoder, regressor = arniqa_parts()
    return ARNIQA(encoder=encoder, regressor=regressor, **kwargs)


def dnsmos_metric(fs: int = 16000, personalized: bool = False) -> object:
    from torchtally.audio import DeepNoiseSuppressionMeanOpinionScore

    return DeepNoiseSuppressionMeanOpinionScore(fs, personalized, p808_model=p808, sig_bak_ovr_model=p835)


def nisqa_metric(fs: int = 16000) -> object:
    from torchtally.audio import NonIntrusiveSpeechQualityAssessment

    return NonIntrusiveSpeechQualityAssessment(fs, model=TinyNisqa(), args=NISQA_ARGS)


def vmaf_metric(features: bool = False) -> object:
    from torchtally.video import VideoMultiMethodAssessmentFusion

    return VideoMultiMethodAssessmentFusion(features, model=VmafTable())


dnsmos_personalized = functools.partial(dnsmos_metric, 8000, True)
