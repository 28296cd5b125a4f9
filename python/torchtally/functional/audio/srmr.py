"""``speech_reverberation_modulation_energy_ratio`` (torchmetrics.functional.audio.srmr's names)
and ``srmr_scores``: SRMR, the non-intrusive speech-to-reverberation modulation energy ratio
(Falk et al.; the SRMRpy formulation), one score per utterance.

Per utterance: a 23-band gammatone ERB filterbank (the `gammatone` package's coefficients,
filtered here with scipy as four second-order sections per band), the Hilbert envelope of each
band (or, with ``fast``, the package's FFT gammatonegram at 400 Hz), an 8-band modulation
filterbank (second-order band-passes, Q = 2, log-spaced centres from ``min_cf`` to ``max_cf``)
on every envelope, Hamming-windowed frame energies (256 ms frames, 64 ms hop), and the ratio of
the energy in the 4 lowest modulation bands to the energy in bands 5 up to the band that the
90%-energy acoustic bandwidth reaches. All in float64 numpy/scipy, on the CPU.
"""

import math
from types import ModuleType
from typing import Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from .package_scores import require

__all__ = ["speech_reverberation_modulation_energy_ratio", "srmr_scores", "check_srmr_args"]

_FRAME_S = 0.256
_HOP_S = 0.064
_FAST_ENVELOPE_FS = 400.0  # the gammatonegram's hop of 2.5 ms
_N_MODULATION = 8
_MODULATION_Q = 2.0


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_srmr_args(
    fs: object, n_cochlear_filters: object, low_freq: object, min_cf: object, max_cf: object, norm: object, fast: object
) -> float:
    """ValueError naming the first bad argument (torchmetrics' words); the resolved ``max_cf``."""
    if isinstance(fs, bool) or not isinstance(fs, int) or fs <= 0:
        raise ValueError(f"Expected argument `fs` to be an int larger than 0, but got {fs!r}")
    if isinstance(n_cochlear_filters, bool) or not isinstance(n_cochlear_filters, int) or n_cochlear_filters <= 0:
        raise ValueError(
            f"Expected argument `n_cochlear_filters` to be an int larger than 0, but got {n_cochlear_filters!r}"
        )
    if not _is_real(low_freq) or low_freq <= 0:  # type: ignore[operator]
        raise ValueError(f"Expected argument `low_freq` to be a float larger than 0, but got {low_freq!r}")
    if low_freq >= fs / 2:  # type: ignore[operator]
        raise ValueError(f"Expected argument `low_freq` to be below fs / 2 = {fs / 2}, but got {low_freq!r}")
    if not _is_real(min_cf) or min_cf <= 0:  # type: ignore[operator]
        raise ValueError(f"Expected argument `min_cf` to be a float larger than 0, but got {min_cf!r}")
    if max_cf is not None and (not _is_real(max_cf) or max_cf <= 0):  # type: ignore[operator]
        raise ValueError(f"Expected argument `max_cf` to be a float larger than 0, but got {max_cf!r}")
    if not isinstance(norm, bool):
        raise ValueError("Expected argument `norm` to be a bool value")
    if not isinstance(fast, bool):
        raise ValueError("Expected argument `fast` to be a bool value")
    resolved = float(max_cf if max_cf is not None else (30 if norm else 128))  # type: ignore[arg-type]
    # a modulation band-pass at or above the envelope's Nyquist frequency has no meaning
    envelope_nyquist = (_FAST_ENVELOPE_FS if fast else fs) / 2
    if resolved >= envelope_nyquist or min_cf >= envelope_nyquist:  # type: ignore[operator]
        raise ValueError(
            f"Expected arguments `min_cf` and `max_cf` below the envelope's Nyquist frequency "
            f"{envelope_nyquist}, but got {min_cf!r} and {resolved!r}"
        )
    return resolved


def _modulation_filters(min_cf: float, max_cf: float, envelope_fs: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(b [8, 3], a [8, 3]) of the band-passes and their lower 3 dB cutoffs [8] in Hz."""
    centres = min_cf * (max_cf / min_cf) ** (np.arange(_N_MODULATION) / (_N_MODULATION - 1))
    half_tan = np.tan(np.pi * centres / envelope_fs)  # bilinear prewarp of each centre
    bw = half_tan / _MODULATION_Q
    b = np.stack([bw, np.zeros_like(bw), -bw], axis=1)
    a = np.stack([1 + bw + half_tan**2, 2 * half_tan**2 - 2, 1 - bw + half_tan**2], axis=1)
    lower_cutoffs = centres - bw * envelope_fs / (2 * np.pi)
    return b, a, lower_cutoffs


def _gammatone_envelopes(rows: np.ndarray, fs: int, centres: np.ndarray, filters: ModuleType) -> np.ndarray:
    """[B, bands, time] Hilbert envelopes of the ERB filterbank's outputs at ``centres`` (from
    high to low centre frequency, as the package orders them)."""
    from scipy import signal  # type: ignore[import-untyped]  # gammatone's own dependency

    coefs = filters.make_erb_filters(fs, centres)
    batch, time = rows.shape
    bands = np.empty((batch, len(centres), time))
    for k, c in enumerate(coefs):
        # the band is four biquads that share a denominator; the package's gain rescales at the end
        sos = np.array([[c[0], c[j], c[5], c[6], c[7], c[8]] for j in (1, 2, 3, 4)]) / c[6]
        bands[:, k] = signal.sosfilt(sos, rows, axis=-1) / c[9]
    # analytic signal through an FFT of a length rounded up to a multiple of 16 (as SRMRpy)
    n_fft = -(-time // 16) * 16
    spectrum = np.fft.fft(bands, n=n_fft, axis=-1)
    weights = np.zeros(n_fft)
    weights[0] = 1.0
    weights[1 : (n_fft + 1) // 2] = 2.0
    if n_fft % 2 == 0:
        weights[n_fft // 2] = 1.0
    return np.abs(np.fft.ifft(spectrum * weights, axis=-1)[..., :time])


def _frame_energies(envelopes: np.ndarray, b: np.ndarray, a: np.ndarray, frame: int, hop: int) -> np.ndarray:
    """[n_filters, 8, frames]: Hamming-windowed energy of each modulation band's output."""
    from scipy import signal  # gammatone's own dependency

    n_frames = 1 + (envelopes.shape[-1] - frame) // hop
    # torchmetrics' Hamming window: 0.54 - 0.46 cos(2 pi n / (frame + 1)), n < frame (SRMRpy's
    # periodic one divides by frame: the scores differ by about 1e-4 relative)
    window = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(frame) / (frame + 1))
    energy = np.empty((envelopes.shape[0], len(b), n_frames))
    for j in range(len(b)):
        out = signal.lfilter(b[j], a[j], envelopes, axis=-1)
        for f in range(n_frames):
            energy[:, j, f] = np.square(out[:, f * hop : f * hop + frame] * window).sum(axis=-1)
    return energy


def _ratio(energy: np.ndarray, erbs_ascending: np.ndarray, lower_cutoffs: np.ndarray, norm: bool) -> float:
    """SRMR of one utterance's energies [n_filters, 8, frames]; NaN when it holds no energy."""
    if norm:  # keep 30 dB below the peak of the band-averaged modulation spectrum
        peak = energy.mean(axis=0).max()
        energy = np.clip(energy, peak * 1e-3, peak)
    mean_energy = energy.mean(axis=-1)  # [n_filters, 8]
    total = mean_energy.sum()
    if not total > 0:
        return math.nan
    # the acoustic bandwidth holding 90% of the energy, counted from the lowest band up
    share = np.cumsum(mean_energy.sum(axis=1)[::-1] * 100 / total)
    bandwidth = erbs_ascending[int(np.argmax(share > 90))]
    last = None
    for k in range(4, _N_MODULATION):
        if lower_cutoffs[k] <= bandwidth and (k == _N_MODULATION - 1 or lower_cutoffs[k + 1] > bandwidth):
            last = k + 1
            break
    if last is None:
        raise ValueError(
            f"SRMR: the utterance's 90% bandwidth {bandwidth:.4g} Hz is below the 5th modulation band's lower "
            f"cutoff {lower_cutoffs[4]:.4g} Hz; lower `min_cf` or `max_cf`"
        )
    return float(mean_energy[:, :4].sum() / mean_energy[:, 4:last].sum())


def _waveforms(preds: object) -> Tuple[np.ndarray, Tuple[int, ...]]:
    """float64 rows [B, time], each scaled into [-1, 1] when its peak exceeds 1, and ``(...)``."""
    if not isinstance(preds, Tensor):
        raise TypeError(f"preds: expected a torch.Tensor of waveforms (..., time), got {type(preds).__name__}")
    if preds.is_complex() or preds.dtype == torch.bool:
        raise TypeError(f"preds: expected a real (float or integer) tensor, got {preds.dtype}")
    if preds.dim() < 1:
        raise ValueError(f"preds: expected a tensor of shape (..., time), got {tuple(preds.shape)}")
    rows = preds.detach().to("cpu", torch.float64).reshape(math.prod(preds.shape[:-1]), preds.shape[-1]).numpy()
    if not np.isfinite(rows).all():
        raise ValueError("preds: expected finite waveforms, got NaN or infinite samples")
    peak = np.abs(rows).max(axis=-1, keepdims=True, initial=0.0)
    return rows / np.maximum(peak, 1.0), tuple(preds.shape[:-1])


def srmr_scores(
    preds: Tensor,
    fs: int,
    n_cochlear_filters: int = 23,
    low_freq: float = 125,
    min_cf: float = 4,
    max_cf: Optional[float] = None,
    norm: bool = False,
    fast: bool = False,
) -> np.ndarray:
    """float64 [B]: SRMR of each row of the flattened batch, NaN for a silent row."""
    filters = require("gammatone.filters", "gammatone", "speech_reverberation_modulation_energy_ratio")
    gtgram = require("gammatone.fftweight", "gammatone", "speech_reverberation_modulation_energy_ratio")
    max_cf = check_srmr_args(fs, n_cochlear_filters, low_freq, min_cf, max_cf, norm, fast)
    rows, _ = _waveforms(preds)
    envelope_fs = _FAST_ENVELOPE_FS if fast else float(fs)
    frame, hop = math.ceil(_FRAME_S * envelope_fs), math.ceil(_HOP_S * envelope_fs)
    b, a, lower_cutoffs = _modulation_filters(float(min_cf), max_cf, envelope_fs)
    centres = filters.centre_freqs(fs, n_cochlear_filters, low_freq)
    erbs_ascending = (centres / 9.26449 + 24.7)[::-1]  # Glasberg and Moore's ERB, low to high
    scores = np.empty(rows.shape[0])
    for i, row in enumerate(rows):
        if fast:
            envelopes = gtgram.fft_gtgram(row, fs, 0.010, 0.0025, n_cochlear_filters, low_freq)
        else:
            envelopes = _gammatone_envelopes(row[None], fs, centres, filters)[0]
        if envelopes.shape[-1] < frame:  # every row has the same length: the first one raises
            raise ValueError(
                f"preds: expected at least one {_FRAME_S * 1000:g} ms frame of envelope ({frame} samples at "
                f"{envelope_fs:g} Hz), got {envelopes.shape[-1]} from {rows.shape[-1]} samples at fs={fs}"
            )
        scores[i] = _ratio(_frame_energies(envelopes, b, a, frame, hop), erbs_ascending, lower_cutoffs, norm)
    return scores


def speech_reverberation_modulation_energy_ratio(
    preds: Tensor,
    fs: int,
    n_cochlear_filters: int = 23,
    low_freq: float = 125,
    min_cf: float = 4,
    max_cf: Optional[float] = None,
    norm: bool = False,
    fast: bool = False,
) -> Tensor:
    """SRMR of each utterance of ``preds`` ``(..., time)`` at ``fs`` Hz (non-intrusive: no
    reference), as float64 of shape ``(...)`` (``[1]`` for a 1-d input, as torchmetrics), on
    ``preds``' device. ``n_cochlear_filters`` gammatone bands from ``low_freq`` Hz; modulation
    bands from ``min_cf`` to ``max_cf`` Hz (None: 30 with ``norm``, else 128); ``norm`` limits
    the modulation energies to 30 dB below their peak; ``fast`` takes the envelopes from the
    FFT gammatonegram. Needs the `gammatone` package (``pip install gammatone``).

    Differences from torchmetrics (which needs torchaudio; this needs only gammatone and
    scipy): a silent utterance scores NaN (torchmetrics raises, or in a batch shifts the
    bandwidths of the utterances after it); an utterance shorter than one 256 ms frame raises
    ValueError naming ``preds`` (torchmetrics: an IndexError); with ``fast`` the frames are
    counted on the gammatonegram's length, as SRMRpy (torchmetrics counts them on the sample
    count and can add a zero-padded last frame); integer waveforms are accepted; ``low_freq``
    must be below ``fs / 2`` and ``min_cf``, ``max_cf`` below the envelope's Nyquist frequency.

        >>> import torch
        >>> from torchtally.functional.audio import speech_reverberation_modulation_energy_ratio
        >>> g = torch.Generator().manual_seed(1)
        >>> preds = torch.sin(torch.arange(8000) * 0.3) * (torch.arange(8000) % 2000 < 1200)
        >>> speech_reverberation_modulation_energy_ratio(preds + 0.01 * torch.randn(8000, generator=g), 8000)
        tensor([17.7540], dtype=torch.float64)
    """
    scores = srmr_scores(preds, fs, n_cochlear_filters, low_freq, min_cf, max_cf, norm, fast)
    shape = tuple(preds.shape[:-1]) if preds.dim() > 1 else (1,)
    return torch.from_numpy(scores).reshape(shape).to(preds.device)
